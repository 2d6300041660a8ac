"""`notegate import` of names macOS stores decomposed (Unicode NFD: ``José`` as ``Jose`` + U+0301): each file
and folder name lands in NFC, as the MCP door writes it, and the report lists it under ``renamed``; only two
source files that become one name are refused, naming both.  The git door still refuses an NFD path: a
pusher can rename, so that is not this file's business (tests/sync)."""

from __future__ import annotations

import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.cli import import_summary
from notegate.services.importer import ImportReport, _Lander, import_folder, importing_caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Environment, Runtime


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


@pytest.fixture
def env(rt: Runtime) -> Environment:
    return rt.environment(None)


def put(src: Path, rel: str, data: bytes = b"# note\n") -> None:
    path = src / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def run(rt: Runtime, env: Environment, src: Path, **kw) -> ImportReport:
    return import_folder(NotesService(rt), env, importing_caller("owner"), src, message="Import names", **kw)


def test_an_nfd_name_lands_in_nfc_and_is_reported_renamed(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    src = tmp_path / "src"
    source = nfd("Personnes Âgées/José Núñez.md")  # the folder and the file, both decomposed
    put(src, source, b"# Jos\xc3\xa9\n")
    put(src, "plain.md")
    report = run(rt, env, src)
    assert report.refused == []  # was path-not-normalised from the git door's content rules
    assert sorted(report.added) == ["Personnes Âgées/José Núñez.md", "plain.md"]
    assert report.renamed == [(source, "Personnes Âgées/José Núñez.md")]
    assert report.landed == []  # no other folder: the summary's folder lines stay for real moves
    assert env.store.read("Personnes Âgées/José Núñez.md")[0] == b"# Jos\xc3\xa9\n"
    assert source not in env.store.listing().notes


def test_an_nfd_folder_takes_the_vault_spelling_as_any_other(rt: Runtime, env: Environment, tmp_path: Path) -> None:
    """The folder's spelling is fixed by its NFC form: the decomposed ``Café/`` and the composed ``café/``
    of two files land in one folder, never in two that look alike."""
    src = tmp_path / "src"
    put(src, nfd("Café/a.md"))
    put(src, "café/b.md")
    report = run(rt, env, src, dry_run=True)
    assert report.refused == []
    assert sorted(report.added) == ["Café/a.md", "Café/b.md"]
    assert report.renamed == [(nfd("Café/a.md"), "Café/a.md")]
    assert report.landed == [("café/b.md", "Café/b.md")]


def test_two_source_files_one_name_in_nfc_are_refused_naming_both(
    rt: Runtime, env: Environment, tmp_path: Path
) -> None:
    src = tmp_path / "src"
    put(src, nfd("People/José.md"), b"decomposed\n")  # sorts first: 'e' + U+0301 < U+00E9
    put(src, "People/José.md", b"composed\n")
    put(src, nfd("People/josé.md"), b"lower\n")  # after case folding too (sorts last)
    report = run(rt, env, src, dry_run=True)
    assert report.added == ["People/José.md"]
    assert report.refused == [
        (
            "People/José.md",
            f"path-case-collision: it and {nfd('People/José.md')} in the source are one name in Unicode NFC,"
            " People/José.md — rename one of the two",
        ),
        (
            nfd("People/josé.md"),
            f"path-case-collision: it differs only in case from {nfd('People/José.md')} in the source"
            " — rename one of the two",
        ),
    ]


def test_the_summary_says_what_was_renamed() -> None:
    source = nfd("People/José.md")
    text = import_summary(ImportReport(added=["People/José.md"], renamed=[(source, "People/José.md")]))
    assert f"renamed  {source} -> People/José.md: the name was not in Unicode NFC (macOS stores it decomposed)" in text
    assert "landed" not in text


# Names with letters that have decompositions (precomposed Latin, Hangul syllables) and some that have none.
NAME = st.text(st.sampled_from("aeoAEOé èÅåñÑüÖçÇ한글ǅ-_"), min_size=1, max_size=10).map(str.strip).filter(bool)


@settings(max_examples=60, deadline=None)
@given(st.lists(NAME, min_size=1, max_size=3))
def test_landing_is_the_nfc_form_whatever_the_source_form(segments: list[str]) -> None:
    rel = "/".join(segments) + ".md"
    for form in ("NFC", "NFD"):
        assert _Lander({}).land(unicodedata.normalize(form, rel)) == nfc(rel)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(NAME, min_size=1, max_size=3))
def test_an_nfd_source_imports_as_its_nfc_form(rt: Runtime, env: Environment, segments: list[str]) -> None:
    """Whatever the name: the import accepts the decomposed file, adds the composed path, and lists it as
    renamed exactly when the two differ (a dry run: the vault stays as it is between examples)."""
    source = nfd("notes/" + "/".join(segments) + ".md")
    with tempfile.TemporaryDirectory() as tmp:
        put(Path(tmp), source)
        report = run(rt, env, Path(tmp), dry_run=True)
    assert report.refused == []
    assert report.added == [nfc(source)]
    assert report.renamed == ([(source, nfc(source))] if source != nfc(source) else [])


def test_persian_and_khmer_names_import_whole_and_a_spoofing_joiner_is_still_refused(
    rt: Runtime, env: Environment, tmp_path: Path
) -> None:
    """Obsidian's help vault spells Persian plurals with ZWNJ and breaks Khmer words with ZWSP: those notes and
    the links to them land; the same characters between Latin letters, or in an instruction file's name,
    are refused as before (tests/vault/test_paths_scripts.py holds the whole class)."""
    src = tmp_path / "src"
    persian = "fa/Bases/فرمول\u200cها.md"
    khmer = "km/\u1780\u17b6\u179a\u200b\u1780\u17c6\u178e\u178f\u17cb.md"
    put(src, persian, "# فرمول‌ها\n".encode())
    put(src, khmer, "# \u1780\u17b6\u179a\n".encode())
    put(src, "fa/index.md", "[[فرمول\u200cها]]\n".encode())
    put(src, "notes/spo\u200cof.md")
    put(src, "AGENT\u200cS.md")
    report = run(rt, env, src)
    assert sorted(report.added) == sorted(["fa/index.md", persian, khmer])
    assert sorted((source, why.split(":")[0]) for source, why, *_ in report.refused) == [
        ("AGENT\u200cS.md", "path-invisible-char"),
        ("notes/spo\u200cof.md", "path-invisible-char"),
    ]
    assert env.store.read(persian)[0] == "# فرمول‌ها\n".encode()
