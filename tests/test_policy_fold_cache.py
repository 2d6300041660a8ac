"""The policy's per-segment folds are remembered (bounded ``lru_cache``): the instruction-file verdict for any
path is the same with the caches cold, warm from other paths, or bypassed altogether."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.policy import Policy, instruction_file_named, is_hidden_segment
from notegate.policy import names as policy  # the folds are patched where they are looked up

_PIECES = st.sampled_from(["claude", "CLAUDE", "Ｃlaude", "agents", ".md", ".MD", "~1", ".", " ", "::$DATA", "a", "é"])
_SEGMENT = st.lists(_PIECES, min_size=1, max_size=4).map("".join)
_PATH = st.lists(_SEGMENT, min_size=1, max_size=4).map("/".join)


def _reference(files: tuple[str, ...], path: str) -> str | None:
    """instruction_file_named as it was: every entry compared at every segment, nothing remembered."""
    keys: dict[tuple[str, ...], str] = {}
    name_key = policy._name_key.__wrapped__
    for entry in files:
        keys.setdefault(tuple(name_key(seg) for seg in entry.split("/") if seg), entry)
    segments = [seg for seg in path.split("/") if seg]
    folded = [name_key(seg) for seg in segments]
    for i in range(len(folded)):
        for entry_keys, entry in keys.items():
            if tuple(folded[i : i + len(entry_keys)]) == entry_keys:
                return entry
        short = policy._short_name_of.__wrapped__(segments[i], files)
        if short is not None:
            return short
    return None


def _uncached(path: str, files: tuple[str, ...]) -> str | None:
    saved = policy._plain_fold, policy._name_key, policy._short_name_of
    policy._plain_fold = saved[0].__wrapped__
    policy._name_key = saved[1].__wrapped__
    policy._short_name_of = saved[2].__wrapped__
    try:
        return instruction_file_named(files, path)
    finally:
        policy._plain_fold, policy._name_key, policy._short_name_of = saved


@settings(max_examples=400, deadline=None)
@given(st.lists(_PATH, min_size=1, max_size=6), st.booleans())
def test_remembered_folds_change_no_verdict(paths: list[str], cold: bool) -> None:
    files = tuple(Policy().instruction_files)
    if cold:
        for fn in (policy._plain_fold, policy._name_key, policy._short_name_of):
            fn.cache_clear()
    for path in paths:
        assert instruction_file_named(files, path) == _uncached(path, files) == _reference(files, path), path
        several = (*files, ".junie/guidelines.md", "a/claude", "agents")  # runs of two segments, overlaps
        assert instruction_file_named(several, path) == _reference(several, path), path
        for seg in path.split("/"):
            assert is_hidden_segment(seg) == (
                policy._plain_fold.__wrapped__(seg).lstrip().startswith(".")
                or policy._short_name_aliases(policy._plain_fold.__wrapped__(seg).lstrip(), policy.HIDDEN_SHORT_NAMES)
            )


def test_an_instruction_name_is_still_refused_with_its_rule_when_its_folds_are_remembered() -> None:
    for _ in range(2):  # the second time every fold comes from the cache
        decision = policy.decide_name(Policy(), "notes/Ｃlaude.md")
        assert not decision.allowed
        assert decision.rule == "instruction-file-name"
