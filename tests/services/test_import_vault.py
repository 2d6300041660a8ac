"""`notegate import` of a real Obsidian vault: notes, attachments (real PNG and PDF bytes), a canvas, an
Excalidraw drawing, `Projects/` and `Inbox/` folders, a cp1252 note and a key.  After the import a fresh
`git clone` of the origin holds every note and attachment and its embeds resolve; what is refused is named
with its exact rule; a dry run commits nothing; `--into` and `--encoding` do what they say; and the real
CLI reports it all with the right exit status."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.policy import decide_canvas, decide_import_existing, decide_import_folder
from notegate.services.importer import ImportReport, guess_encoding, human_size
from notegate.services.runtime import Environment, Runtime
from notegate.vault.links import LinkTargets, links_in, resolves
from support import notegate, set_policy
from support.importing import AWS_KEY, CANVAS, CP1252, NOTES, obsidian_vault, pdf_bytes, png_bytes, rules, run
from support.timing import assert_catches_quadratic, assert_linear


@pytest.fixture
def env(rt: Runtime) -> Environment:
    return rt.environment(None)


def clone(origin: Path, into: Path) -> dict[str, bytes]:
    subprocess.run(["git", "clone", "-q", str(origin), str(into)], check=True, capture_output=True)
    return {
        p.relative_to(into).as_posix(): p.read_bytes()
        for p in into.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(into).parts
    }


EXPECTED_RULES = {
    "attachments/fake.png": "attachment-type-mismatch",
    "Inbox/idea.md": "import-policy-folder",
    "Latin.md": "content-not-utf8",
    "Keys.md": "credential-warning",
}


def test_a_vault_comes_in_whole(rt: Runtime, env: Environment, vault: Path, tmp_path: Path) -> None:
    src = obsidian_vault(tmp_path)
    report = run(rt, env, src)
    assert rules(report) == EXPECTED_RULES
    reasons = dict(report.refused)
    assert reasons["Latin.md"].startswith("content-not-utf8: not UTF-8; looks like cp1252: pass --encoding cp1252")
    # the key is named by kind and position, never its value
    assert "credential (aws-access-key-id) at line 3, col 7" in reasons["Keys.md"] and AWS_KEY not in reasons["Keys.md"]
    assert "--allow-secrets" in reasons["Keys.md"]
    assert sorted(report.added) == ["Drawings/Sketch.excalidraw.md", "Home.md", "projects/Alpha.md"]
    assert sorted(report.attachments) == ["attachments/diagram.png", "attachments/paper.pdf", "board.canvas"]
    assert report.landed == [("Projects/Alpha.md", "projects/Alpha.md")]  # the vault's projects/ spelling wins
    assert ("notes.txt", ".txt files: not a type the policy allows (attachment_types)") in report.skipped
    assert (".obsidian/", "hidden folder") in report.skipped
    assert report.missing_links == [("Home.md", "[[Ghost]]"), ("Home.md", "![[missing.png]]")]
    assert len(report.commits) == 1

    files = clone(vault.parent / "origin.git", tmp_path / "clone")
    assert files["attachments/diagram.png"] == png_bytes()
    assert files["attachments/paper.pdf"] == pdf_bytes()
    # the canvas's card follows its note to the vault's projects/ spelling (Obsidian opens a card by exact path)
    moved = json.loads(json.dumps(CANVAS).replace('"Projects/Alpha.md"', '"projects/Alpha.md"'))
    assert json.loads(files["board.canvas"]) == moved != CANVAS
    assert files["projects/Alpha.md"] == NOTES["Projects/Alpha.md"].encode()
    assert files["Drawings/Sketch.excalidraw.md"] == NOTES["Drawings/Sketch.excalidraw.md"].encode()
    for refused in ("attachments/fake.png", "Keys.md", "Latin.md", "inbox/idea.md", "Inbox/idea.md"):
        assert refused not in files
    # every embed and link of the imported notes resolves in the clone, but the two that were never there
    targets = LinkTargets(files)
    broken = [
        (path, link.as_written())
        for path in report.added
        for link in links_in(files[path].decode())
        if not resolves(link, path, targets)
    ]
    assert broken == report.missing_links


def test_a_dry_run_commits_nothing_and_reports_the_same(
    rt: Runtime, env: Environment, vault: Path, tmp_path: Path
) -> None:
    src = obsidian_vault(tmp_path)
    head = env.store.head()
    origin_head = subprocess.run(
        ["git", "--git-dir", str(vault.parent / "origin.git"), "rev-parse", "main"], capture_output=True, text=True
    ).stdout
    dry = run(rt, env, src, dry_run=True)
    assert dry.dry_run and dry.commits == [] and dry.commit is None
    assert env.store.head() == head
    assert (
        subprocess.run(
            ["git", "--git-dir", str(vault.parent / "origin.git"), "rev-parse", "main"], capture_output=True, text=True
        ).stdout
        == origin_head
    )
    real = run(rt, env, src)
    for name in (
        "added",
        "attachments",
        "unchanged",
        "skipped",
        "refused",
        "landed",
        "renamed",
        "converted",
        "missing_links",
    ):
        assert getattr(dry, name) == getattr(real, name), name


def test_into_puts_the_vault_under_one_folder(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = obsidian_vault(tmp_path)
    report = run(rt, env, src, into="Obsidian/MyVault", encoding="cp1252", allow_secrets=True)
    assert rules(report) == {"attachments/fake.png": "attachment-type-mismatch"}
    notes = env.store.listing().notes
    for rel in (*NOTES, "Inbox/idea.md", "Latin.md", "Keys.md"):  # Inbox/ is just a folder under Obsidian/
        assert f"Obsidian/MyVault/{rel}" in notes, rel
    assert env.store.blob_id("Obsidian/MyVault/attachments/diagram.png", env.store.head()) != "absent"
    assert report.missing_links == [
        ("Obsidian/MyVault/Home.md", "[[Ghost]]"),
        ("Obsidian/MyVault/Home.md", "![[missing.png]]"),
    ]


def test_encoding_converts_to_utf8(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = obsidian_vault(tmp_path)
    report = run(rt, env, src, encoding="cp1252")
    assert report.converted == [("Latin.md", "cp1252")]
    assert env.store.read("Latin.md")[0].decode("utf-8") == CP1252
    assert "Latin.md" not in rules(report)


def test_the_vaults_inbox_may_be_the_policys_when_the_owner_says_so(
    rt: Runtime, env: Environment, tmp_path: Path
) -> None:
    src = obsidian_vault(tmp_path)
    report = run(rt, env, src, allow_policy_folders=True)
    assert "Inbox/idea.md" not in rules(report)
    assert ("Inbox/idea.md", "inbox/idea.md") in report.landed
    assert "inbox/idea.md" in env.store.listing().notes


def test_an_attachment_over_the_limit_is_refused_before_it_is_read(vault: Path, tmp_path: Path) -> None:
    set_policy(vault, max_attachment_bytes=64)
    rt = Runtime(load_config(vault))
    try:
        src = obsidian_vault(tmp_path)
        report = run(rt, rt.environment(None), src)
        size = len(pdf_bytes())
        assert dict(report.refused)["attachments/paper.pdf"] == (
            f"attachment-too-large: {size:,} bytes: over `max_attachment_bytes` (64 bytes) — "
            "leave it out, or raise the limit"
        )
    finally:
        rt.close()


def test_a_canvas_that_is_not_json_is_refused(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = tmp_path / "v"
    src.mkdir()
    (src / "broken.canvas").write_bytes(b'{"nodes": [')  # passes the first-byte check, does not parse
    (src / "list.canvas").write_bytes(b"[]")
    report = run(rt, env, src)
    assert rules(report) == {"broken.canvas": "attachment-type-mismatch", "list.canvas": "attachment-type-mismatch"}


@pytest.mark.parametrize(
    ("data", "guess"),
    [
        ("caf\u00e9 \u201cq\u201d".encode("cp1252"), "cp1252"),
        (b"\x81\x8d\xe9", "latin-1"),  # bytes cp1252 leaves undefined
        ("h\u00e9".encode("utf-16"), "utf-16"),
    ],
)
def test_guess_encoding(data: bytes, guess: str) -> None:
    assert guess_encoding(data) == guess
    data.decode(guess)  # the guess always decodes what it was guessed from


def test_human_size() -> None:
    assert [human_size(n) for n in (12, 1536, 1 << 20, 20 << 20, 3 << 29)] == [
        "12 bytes",
        "1.5 KiB",
        "1 MiB",
        "20 MiB",
        "1.5 GiB",
    ]


def test_the_real_cli_imports_into_an_empty_vault(tmp_path: Path) -> None:
    """As a user meets it: `notegate init --empty`, then `notegate import --dry-run`, then the import."""
    created = notegate("init", "--empty", str(tmp_path / "v"), real=True)
    assert created.returncode == 0, created.stderr
    config = tmp_path / "v" / "notegate.toml"
    origin = tmp_path / "v" / "origin.git"
    src = obsidian_vault(tmp_path)

    dry = notegate("import", "--config", str(config), str(src), "--quiet", "--dry-run", real=True)
    assert dry.returncode == 1, dry.stderr
    assert "dry run: nothing was committed" in dry.stdout
    assert subprocess.run(["git", "--git-dir", str(origin), "rev-parse", "--verify", "-q", "main"]).returncode != 0

    done = notegate("import", "--config", str(config), str(src), "--quiet", real=True)
    assert done.returncode == 1, done.stderr  # four files refused
    out = done.stdout
    assert "refused  attachments/fake.png: attachment-type-mismatch: " in out
    assert "refused  Inbox/idea.md: import-policy-folder: " in out
    assert "refused  Latin.md: content-not-utf8: not UTF-8; looks like cp1252: pass --encoding cp1252" in out
    assert "refused  Keys.md: credential-warning: " in out and AWS_KEY not in out + done.stderr
    assert "2 link(s) point at nothing in the vault:\n  Home.md: [[Ghost]]\n  Home.md: ![[missing.png]]" in out
    table = "\n".join(
        [
            "notes (imported)             3",
            "attachments (imported)       3",
            "unchanged                    0",
            "skipped                      2",
            "refused                      4",
        ]
    )
    assert table in out
    files = clone(origin, tmp_path / "clone")
    assert "Projects/Alpha.md" in files and files["attachments/diagram.png"] == png_bytes()  # no projects/ here

    again = notegate(
        "import", "--config", str(config), str(src), "--quiet", "--json", "--encoding", "cp1252", real=True
    )
    report = json.loads(again.stdout)
    assert again.returncode == 1  # the fake PNG, the inbox and the key are still refused
    assert report["converted"] == [["Latin.md", "cp1252"]] and report["added"] == ["Latin.md"]
    assert len(report["unchanged"]) == 6

    bad = notegate("import", "--config", str(config), str(src), "--encoding", "no-such-codec", real=True)
    assert bad.returncode == 2 and "no such encoding" in bad.stderr


# -- the import's decisions in policy.py (pure), each with its exact rule

FOLDER_CASES = [
    # (path, allow_policy_folders, rule)
    ("inbox/idea.md", False, "import-policy-folder"),
    ("INBOX/captures/x.md", False, "import-policy-folder"),  # the policy's globs ignore case, so does this
    ("Rules/house.md", False, "import-policy-folder"),
    ("rules/digest.md", False, "import-policy-folder"),
    ("inbox/idea.md", True, "import-folder"),
    ("Projects/x.md", False, "import-folder"),  # session-loaded, but the floor guards it, not a refusal
    ("Obsidian/Inbox/idea.md", False, "import-folder"),  # under --into it is just a folder
    ("attachments/inbox.png", False, "import-folder"),
]


@pytest.mark.parametrize(("path", "allowed_folders", "rule"), FOLDER_CASES)
def test_decide_import_folder(rt: Runtime, path: str, allowed_folders: bool, rule: str) -> None:
    decision = decide_import_folder(rt.policy, path, allow_policy_folders=allowed_folders)
    assert (decision.allowed, decision.rule) == (rule == "import-folder", rule)


def test_decide_import_existing() -> None:
    blob = "a" * 40
    assert decide_import_existing("x.md", "absent", blob).rule == "import-new"
    assert decide_import_existing("x.md", blob, blob).rule == "import-unchanged"
    refused = decide_import_existing("x.md", blob, "b" * 40)
    assert (refused.allowed, refused.rule) == (False, "import-exists")


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=64)
    | st.recursive(st.none() | st.integers() | st.text(), st.lists, max_leaves=8).map(lambda v: json.dumps(v).encode())
)
def test_decide_canvas_only_answers(data: bytes) -> None:
    decision = decide_canvas(data)
    assert decision.rule in ("canvas-json", "attachment-type-mismatch")
    assert decision.allowed is (decision.rule == "canvas-json")


def test_decide_canvas_survives_deep_nesting() -> None:
    assert decide_canvas(b"[" * 100_000).rule == "attachment-type-mismatch"
    assert decide_canvas(b'\xef\xbb\xbf{"nodes": []}').rule == "canvas-json"


CANVAS_SHAPES = {
    "deep-open-arrays": lambda n: "[" * n,
    "many-nodes": lambda n: '{"nodes": [' + ",".join(['{"id": "a", "text": "x"}'] * (n // 26)) + "]}",
    "one-long-string": lambda n: '{"t": "' + "x" * n + '"}',
}


@pytest.mark.parametrize("shape", sorted(CANVAS_SHAPES))
def test_decide_canvas_is_linear(shape: str) -> None:
    assert_linear(lambda text: decide_canvas(text.encode()), CANVAS_SHAPES[shape])


def test_the_ratio_catches_a_quadratic_canvas_check() -> None:
    assert_catches_quadratic(CANVAS_SHAPES["many-nodes"])


def test_a_policy_folder_file_already_there_is_unchanged(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    """Re-importing a clone of the vault is no refusal: identical files in inbox/ and rules/ are unchanged."""
    src = tmp_path / "clone"
    for path in ("rules/digest.md", "inbox/README.md"):
        (src / path).parent.mkdir(parents=True, exist_ok=True)
        (src / path).write_bytes(env.store.read(path)[0])
    (src / "rules" / "new.md").write_text("# New rule\n")
    report = run(rt, env, src)
    assert sorted(report.unchanged) == ["inbox/README.md", "rules/digest.md"]
    assert rules(report) == {"rules/new.md": "import-policy-folder"}


def test_one_folder_spelt_two_ways_in_the_source_lands_as_one(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = tmp_path / "v"
    for rel in ("Ideas/a.md", "ideas/b.md", "IDEAS/sub/c.md"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(f"# {rel}\n")
    report = run(rt, env, src)
    assert report.refused == []
    assert sorted(report.added) == ["IDEAS/a.md", "IDEAS/b.md", "IDEAS/sub/c.md"]  # the first one walked wins


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--into", "../outside"), "--into: Refused [path-"),
        (("--into", ".hidden"), "--into: Refused [path-"),
        (("--encoding", "no-such-codec"), "no such encoding"),
    ],
)
def test_usage_errors_exit_2(vault: Path, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    src = tmp_path / "v"
    src.mkdir()
    done = notegate("import", "--config", str(vault), str(src), "--quiet", *args)
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_the_summary_stays_readable_for_a_big_vault() -> None:
    from notegate.cli import MISSING_LINKS_SHOWN, import_summary

    report = ImportReport(
        added=[f"projects/n{i}.md" for i in range(300)],
        landed=[(f"Projects/n{i}.md", f"projects/n{i}.md") for i in range(300)],
        missing_links=[(f"projects/n{i}.md", "[[Ghost]]") for i in range(300)],
        dry_run=True,
    )
    text = import_summary(report)
    assert "landed   Projects/ -> projects/ (300 files)" in text and text.count("landed") == 1
    assert text.count(": [[Ghost]]") == MISSING_LINKS_SHOWN
    assert f"… and {300 - MISSING_LINKS_SHOWN} more (--json lists them all)" in text
    assert "notes (would import)           300\n" in text and text.endswith("dry run: nothing was committed")


def test_a_canvas_showing_a_file_not_imported_is_listed(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = tmp_path / "v"
    (src / "Boards").mkdir(parents=True)
    (src / "here.md").write_text("# Here\n")
    nodes = [{"id": "a", "type": "file", "file": "here.md"}, {"id": "b", "type": "file", "file": "gone.pdf"}]
    (src / "Boards" / "plan.canvas").write_text(json.dumps({"nodes": nodes, "edges": []}))
    report = run(rt, env, src)
    assert report.attachments == ["Boards/plan.canvas"]
    assert report.missing_links == [("Boards/plan.canvas", "![…](/gone.pdf)")]


def test_the_same_import_again_changes_nothing(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = obsidian_vault(tmp_path)
    first = run(rt, env, src)
    head = env.store.head()
    again = run(rt, env, src)
    assert sorted(again.unchanged) == sorted(first.added + first.attachments)
    assert again.added == again.attachments == [] and again.commits == [] and env.store.head() == head
    assert rules(again) == EXPECTED_RULES


def test_a_leading_bom_imports_byte_for_byte_where_sessions_load(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    """Windows editors start a file with a BOM: an encoding mark, not a hidden character, under projects/ as
    anywhere else; a second one is still held by the floor."""
    src = tmp_path / "v"
    (src / "Projects").mkdir(parents=True)
    (src / "Projects" / "win.md").write_bytes(b"\xef\xbb\xbf# Windows\r\n")
    (src / "Projects" / "twice.md").write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf# Twice\n")
    report = run(rt, env, src)  # a vault's own Projects/ lands, through the floor
    assert report.added == ["projects/win.md"]
    assert rules(report) == {"Projects/twice.md": "protected-floor-hold"}
    assert (
        "invisible-char: U+FEFF ZERO WIDTH NO-BREAK SPACE at 1 (line 1, col 2)"
        in dict(report.refused)["Projects/twice.md"]
    )
    assert env.store.read("projects/win.md")[0] == b"\xef\xbb\xbf# Windows\r\n"
