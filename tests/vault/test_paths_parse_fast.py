"""``NotePath.parse`` and ``FolderPath.parse`` skip the full normalisation when the folder-remembered check
(``_accepted_as_is``) says the text is already a normal path: for any text, the same value or the same
refused rule as the full check (``_normalise``), with the folder cache warm or cold."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.errors import PathRejected
from notegate.vault import paths
from notegate.vault.paths import FolderPath, NotePath, _accepted_as_is, _normalise
from support.paths import PATH_TEXTS


def _full(raw: str, kind: str) -> tuple[str, str]:
    try:
        return "ok", _normalise(raw, kind)
    except PathRejected as exc:
        return "refused", exc.rule


def _parsed(parse, raw: str) -> tuple[str, str]:
    try:
        return "ok", parse(raw).value
    except PathRejected as exc:
        return "refused", exc.rule


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PATH_TEXTS, min_size=1, max_size=8), st.booleans())
def test_the_fast_parse_answers_as_the_full_check(raws: list[str], cold: bool) -> None:
    if cold:
        paths._folder_accepted.cache_clear()
    for raw in raws:
        assert _parsed(NotePath.parse, raw) == _full(raw, "note"), raw
        folder = raw[:-1] if raw.endswith("/") else raw
        if raw not in ("", "/", "."):
            assert _parsed(FolderPath.parse, raw) == _full(folder, "folder"), raw
        for kind in ("note", "folder"):
            if _accepted_as_is(raw, kind):  # never claims a text the full check changes or refuses
                assert _full(raw, kind) == ("ok", raw), (raw, kind)


def test_a_refused_path_still_names_its_rule() -> None:
    for raw, rule in [
        ("notes/CLAUDE\u200b.md", "path-invisible-char"),
        ("a/../b.md", "path-traversal"),
        ("/abs/x.md", "path-absolute"),
        ("a/b.MD", "path-not-markdown"),
        ("a/con/b.md", "path-reserved-name"),
    ]:
        try:
            NotePath.parse(raw)
        except PathRejected as exc:
            assert exc.rule == rule == _full(raw, "note")[1]
        else:  # pragma: no cover - a refusal is the point
            raise AssertionError(raw)
    assert NotePath.parse("plain/folder/note.md").value == "plain/folder/note.md"
    assert FolderPath.parse("plain/folder/").value == "plain/folder"
