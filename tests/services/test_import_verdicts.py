"""The importer decides each file's content once: the commit recipe reuses the verdicts the service itself
gave (``NotesService.decide_content(..., verdicts=)``), keyed by path and the exact bytes' blob id under one
policy.  The recipe stays authoritative: other bytes, another path or another policy are decided afresh and
refused with the git door's own rule, and nothing reaches the origin."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import notegate.policy.tally as planner  # the planner asks each file of its Tally
from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.services.importer import import_folder, importing_caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.store import Change
from support import set_policy
from support.callers import make_caller

TRUSTED = make_caller()
HELD = b"# Rules\n\nRead CLAUDE.md before anything.\n"  # floor-held where sessions load it
PLAIN = b"# Rules\n\nBe kind.\n"


def origin_main(vault: Path) -> str:
    return str(pygit2.Repository(str(vault.parent / "origin.git")).references["refs/heads/main"].target)


def counting(notes: NotesService, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every content decision the service makes (the real one runs: this only counts)."""
    seen: list[str] = []
    real = notes._decide_content
    real_file = planner.decide_file

    def spy(path: str, data: bytes):
        seen.append(path)
        return real(path, data)

    def spy_file(policy, path: str, facts):  # the planner's own per-file decision (the recipe's commit)
        seen.append(path)
        return real_file(policy, path, facts)

    monkeypatch.setattr(notes, "_decide_content", spy)
    monkeypatch.setattr(planner, "decide_file", spy_file)
    return seen


def test_an_import_decides_each_files_content_once(
    tmp_path: Path, runtime: Runtime, notes: NotesService, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = tmp_path / "src"
    (src / "a").mkdir(parents=True)
    for i in range(12):
        (src / "a" / f"n{i}.md").write_text(f"# n{i}\n\nbody {i}\n")
    seen = counting(notes, monkeypatch)
    report = import_folder(notes, runtime.environment(None), importing_caller("owner"), src, message="Import")
    assert len(report.added) == 12 and report.commit
    assert sorted(seen) == sorted(f"a/n{i}.md" for i in range(12))  # once each, not once more in the recipe


def test_a_kept_verdict_is_reused_for_the_same_bytes_only(vault: Path, notes: NotesService) -> None:
    env = notes.rt.environment(None)
    verdicts = notes.content_verdicts()
    assert notes.decide_content("rules/house.md", PLAIN, verdicts=verdicts).allowed
    assert len(verdicts) == 1
    before = origin_main(vault)
    with pytest.raises(NotegateError) as info:  # same path, other bytes: decided again, and refused
        notes.commit_as(
            TRUSTED, env, [Change("rules/house.md", HELD)], {"rules/house.md": "absent"}, "x", verdicts=verdicts
        )
    assert info.value.rule == "protected-floor-hold" and origin_main(vault) == before


def test_a_kept_verdict_does_not_follow_the_bytes_to_another_path(vault: Path, notes: NotesService) -> None:
    env = notes.rt.environment(None)
    verdicts = notes.content_verdicts()
    assert notes.decide_content("notes/about.md", HELD, verdicts=verdicts).allowed  # not session-loaded there
    before = origin_main(vault)
    with pytest.raises(NotegateError) as info:
        notes.commit_as(
            TRUSTED, env, [Change("rules/house.md", HELD)], {"rules/house.md": "absent"}, "x", verdicts=verdicts
        )
    assert info.value.rule == "protected-floor-hold" and origin_main(vault) == before


def test_a_refusal_is_never_kept(notes: NotesService) -> None:
    verdicts = notes.content_verdicts()
    assert notes.decide_content("rules/house.md", HELD, verdicts=verdicts).rule == "protected-floor-hold"
    assert notes.decide_content(".obsidian/x.md", PLAIN, verdicts=verdicts).rule == "incoming-hidden-path"
    assert len(verdicts) == 0


def test_verdicts_kept_under_one_policy_are_not_reused_under_another(vault: Path) -> None:
    first = Runtime(load_config(vault))
    try:
        verdicts = NotesService(first).content_verdicts()
        big = b"# Big\n\n" + b"x" * 4000 + b"\n"
        assert NotesService(first).decide_content("notes/big.md", big, verdicts=verdicts).allowed
    finally:
        first.close()
    set_policy(vault, max_note_bytes=1000)
    second = Runtime(load_config(vault))
    try:
        before = origin_main(vault)
        with pytest.raises(NotegateError) as info:
            NotesService(second).commit_as(
                TRUSTED,
                second.environment(None),
                [Change("notes/big.md", big)],
                {"notes/big.md": "absent"},
                "x",
                verdicts=verdicts,
            )
        assert info.value.rule == "note-too-large" and origin_main(vault) == before
    finally:
        second.close()


PATHS = ["rules/house.md", "notes/about.md", "handoffs/notegate.md", ".obsidian/x.md", "notes/x.png"]
TEXTS = [
    PLAIN,
    HELD,
    b"# a\x00b\n",
    "caf\u00e9\n".encode("cp1252"),
    "# zero\u200b width\n".encode(),
]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kept=st.lists(st.tuples(st.sampled_from(PATHS), st.sampled_from(TEXTS)), max_size=4),
    committed=st.tuples(st.sampled_from(PATHS), st.sampled_from(TEXTS)),
)
def test_the_recipe_refuses_exactly_what_it_would_refuse_without_verdicts(
    notes: NotesService, kept: list[tuple[str, bytes]], committed: tuple[str, bytes]
) -> None:
    """Whatever was decided before, ``check_commit`` with the verdicts refuses with the same rule as without."""
    env = notes.rt.environment(None)
    verdicts = notes.content_verdicts()
    for path, data in kept:
        notes.decide_content(path, data, verdicts=verdicts)
    change = [Change(*committed)]

    def outcome(**kw) -> str | None:
        try:
            notes.check_commit(env, change, **kw)
        except NotegateError as exc:
            return exc.rule
        return None

    assert outcome(verdicts=verdicts) == outcome()
