"""Issue 14's "Done when" for the lab: `make lab` passes, in CI on every push. The test runs the real
`make lab` (the user's entry point: make, the CLI, the server, Chromium, every stand-in as its own part) and
reads its named PASS/FAIL lines; the checks themselves live in the lab module (src/notegate/lab/scenario.py).

The lab needs Debian's Chromium: this test skips without it unless NOTEGATE_REQUIRE_BROWSER is set (CI sets it,
so there it fails instead of skipping). Its optional parts (the second person, the phone as an Obsidian device)
print a SKIP line when their tools are missing; NOTEGATE_REQUIRE_OIDC and NOTEGATE_REQUIRE_LIVESYNC make that a
failure here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent  # this suite's environment, already installed: nothing downloads

#: Every check the lab must print (one per promise of the seeds).
EXPECTED = {
    "phone-oauth-cimd-restricted",
    "other-environment-not-there",
    "restricted-cannot-write-rules-or-handoff",
    "restricted-inbox-writes-accepted",
    "handoff-absent-before-review",
    "appended-line-after-review-not-promoted",
    "handoff-promoted-only-by-trusted-reviewer-at-version-read",
    "floor-holds-hidden-characters-and-instruction-names",
    "verdicts-for-unknown-items-ignored",
    "verdicts-for-invented-items-void-the-answer",
    "promoted-handoff-fenced-as-data",
    "hostile-write-refused-mcp",
    "origin-down-no-acknowledged-write-lost",
    "origin-down-workstation-commit-kept-then-pushed",
    "hostile-push-refused-git-origin",
    "hostile-push-refused-sync-workstation",
    "elevation-needs-the-code-and-a-fresh-passkey",
    "elevation-grant-refused-from-another-connector",
}
#: The optional parts: their checks, and the variable that makes their skip a failure (.ci/run sets both).
OPTIONAL = {
    "second-person": (  # issue 35: oidc-provider-mock, the dev extra
        {
            "member-invited-from-console-with-step-up",
            "member-joins-through-the-provider",
            "member-connector-and-mcp-call",
            "member-removed-from-console-with-step-up",
            "removed-member-refused-at-next-call",
        },
        "NOTEGATE_REQUIRE_OIDC",
    ),
    "obsidian-phone": (  # issue 31: node and the npm fixtures of tests/livesync/npm (make livesync-npm)
        {
            "phone-edit-reaches-origin-and-mcp",
            "phone-instruction-file-refused-and-named-in-task",
            "mcp-write-reaches-phone",
            "stolen-phone-token-reaches-only-the-notes-database",
        },
        "NOTEGATE_REQUIRE_LIVESYNC",
    ),
}


def test_make_lab_passes_every_named_check(tmp_path: Path) -> None:
    if not Path("/usr/bin/chromium").exists():
        if os.environ.get("NOTEGATE_REQUIRE_BROWSER"):
            pytest.fail("NOTEGATE_REQUIRE_BROWSER is set but /usr/bin/chromium is missing (apt-get install chromium)")
        pytest.skip("/usr/bin/chromium is missing (apt-get install chromium)")
    result = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "lab",
            f"VENV={VENV}",
            "INSTALL=no",
            f"LAB_ARGS=--dir {tmp_path / 'lab'}",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = result.stdout + result.stderr
    seen = {name: verdict for verdict, name in re.findall(r"^(PASS|FAIL) ([a-z0-9-]+)", result.stdout, re.MULTILINE)}
    skipped = dict(re.findall(r"^SKIP ([a-z0-9-]+): (.+)$", result.stdout, re.MULTILINE))
    expected = set(EXPECTED)
    for part, (names, required) in OPTIONAL.items():
        if part in skipped:  # skipped with the reason printed, unless CI requires the part
            assert not os.environ.get(required), f"{required} is set but the lab skipped {part}: {skipped[part]}"
        else:
            expected |= names
    assert set(skipped) <= set(OPTIONAL), out[-4000:]
    assert set(seen) == expected, out[-4000:]
    assert all(verdict == "PASS" for verdict in seen.values()), out[-4000:]
    total = re.search(
        rf"^lab: {len(expected)} passed, 0 failed(, {len(skipped)} part\(s\) skipped)? in ([0-9.]+) s$",
        result.stdout,
        re.MULTILINE,
    )
    assert total is not None, out[-4000:]
    assert result.returncode == 0, out[-4000:]
    assert not re.search(r"ng[ati]_[A-Za-z0-9_-]{8,}", out)  # no bearer, OAuth or invitation token is printed
    assert not (tmp_path / "lab").exists()  # without --keep the lab removes what it made


def test_the_lab_refuses_a_directory_that_is_not_empty(tmp_path: Path) -> None:
    from support import notegate

    (tmp_path / "mine.md").write_text("someone's note\n")
    result = notegate("lab", "--dir", str(tmp_path), real=True)  # a fresh interpreter: the user's path
    assert result.returncode == 2
    assert "is not empty; give an empty or new directory" in result.stderr
    assert (tmp_path / "mine.md").read_text() == "someone's note\n"  # nothing of theirs is touched or removed


def test_an_optional_part_that_cannot_run_is_skipped_with_its_reason(tmp_path: Path, monkeypatch, capsys) -> None:
    """Without Node (or the npm fixtures) and without oidc-provider-mock the lab still runs its other checks: each
    part prints one SKIP line saying what is missing, and writes none of its config."""
    import builtins
    import contextlib

    from notegate.lab import obsidian, run
    from notegate.lab.stack import Checks, Lab, Shell

    real_import = builtins.__import__

    def no_provider(name: str, *args, **kwargs):
        if name.startswith("oidc_provider_mock"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_provider)
    monkeypatch.setattr(obsidian.shutil, "which", lambda _name: None)
    lab = Lab(tmp_path, Checks(), Shell.of({}))
    with contextlib.ExitStack() as optional:
        tables = run._optional_parts(lab, optional)
    assert tables == "" and lab.parts == {}
    out = capsys.readouterr().out
    assert "SKIP second-person: oidc-provider-mock is missing (the dev extra: pip install -e '.[dev]')" in out
    assert "SKIP obsidian-phone: node is missing (apt-get install -y nodejs)" in out

    monkeypatch.setattr(obsidian.shutil, "which", lambda _name: "/usr/bin/node")
    monkeypatch.setattr(obsidian, "POUCHDB_SERVER", tmp_path / "absent" / "pouchdb-server")
    assert obsidian.missing() == f"the npm fixtures are missing ({obsidian.NPM}: make livesync-npm)"


ID = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=4, max_size=12)


KINDS = st.sampled_from(["tokens", "oauth_families", "grants", "devices", "console_sessions"])


@settings(max_examples=50)
@given(kinds=st.dictionaries(KINDS, st.lists(ID, max_size=3)))
def test_a_removals_audit_row_is_shown_by_the_kinds_that_ended_never_their_ids(kinds: dict[str, list[str]]) -> None:
    """The lab prints the member-remove row as the kinds of credential that ended: the ids stay in the audit."""
    from notegate.lab.people import _summary

    row = "ok:sam:" + ";".join(f"{k}={','.join(ids) if ids else '-'}" for k, ids in sorted(kinds.items()))
    shown = _summary(row)
    assert shown.startswith("ok:sam:ended ")
    assert {k for k, ids in kinds.items() if ids} == (set(shown.split("ended ", 1)[1].split(", ")) - {"nothing"})
