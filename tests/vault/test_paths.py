"""Tests for notegate.vault.paths: hostile tables, legitimate names, and properties."""

from __future__ import annotations

import dataclasses
import itertools
import ntpath
import posixpath
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.errors import NotegateError, PathRejected
from notegate.safety import floor_chars, unicode_tables
from notegate.vault.paths import (
    MAX_PATH_BYTES,
    MAX_SEGMENT_BYTES,
    NOTE_SUFFIX,
    FolderPath,
    NotePath,
    is_hidden_tree_path,
)

PROPERTY_SETTINGS = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])

# Categories that must never appear in an accepted path, nor in a refusal message.
FORBIDDEN_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


# --------------------------------------------------------------------------------------------
# Hostile inputs: each row names the exact rule that must refuse it.
# --------------------------------------------------------------------------------------------

HOSTILE = [
    # --- not text ---
    (None, "path-not-text"),  # missing argument
    (42, "path-not-text"),  # a number
    (b"notes/a.md", "path-not-text"),  # bytes are not decoded on the caller's behalf
    (["a.md"], "path-not-text"),  # a list
    ("notes/\ud800.md", "path-not-text"),  # lone surrogate (surrogateescape leftovers): not valid Unicode
    # --- empty ---
    ("", "path-empty"),  # nothing
    ("   ", "path-empty"),  # only spaces
    ("/", "path-empty"),  # only a slash
    (" / / ", "path-empty"),  # only spaces and slashes
    # --- absolute ---
    ("/etc/passwd.md", "path-absolute"),  # POSIX absolute
    ("//server/share/x.md", "path-absolute"),  # UNC-style double slash
    ("\\\\server\\share\\x.md", "path-absolute"),  # Windows UNC with backslashes
    ("\\x.md", "path-absolute"),  # rooted on the current Windows drive
    ("C:/notes/x.md", "path-absolute"),  # drive letter
    ("c:x.md", "path-absolute"),  # drive-relative path (no slash after the colon)
    ("C:\\Windows\\x.md", "path-absolute"),  # drive + backslashes: absolute is more specific
    ("file:///etc/x.md", "path-absolute"),  # URL
    ("https://evil.example/x.md", "path-absolute"),  # URL
    # --- backslash ---
    ("notes\\x.md", "path-backslash"),  # Windows separator
    ("notes\\..\\..\\x.md", "path-backslash"),  # Windows-style traversal
    ("a/b\\c.md", "path-backslash"),  # backslash inside a name
    # --- traversal ---
    ("../x.md", "path-traversal"),  # parent
    ("a/../../x.md", "path-traversal"),  # climbs out after going in
    ("a/b/..", "path-traversal"),  # ends in parent
    ("./x.md", "path-traversal"),  # leading ./ is refused, not stripped (one spelling per note)
    ("a/./x.md", "path-traversal"),  # current-folder segment
    (".../x.md", "path-traversal"),  # dots only (old Windows: grandparent)
    ("..", "path-traversal"),  # bare parent
    ("a/../.git/config", "path-traversal"),  # traversal reported before hidden
    ("../a//b.md", "path-traversal"),  # traversal reported before the empty segment
    # --- percent-encoded (never decode, then trust) ---
    ("%2e%2e/x.md", "path-percent-encoded"),  # encoded ../
    ("..%2fx.md", "path-percent-encoded"),  # encoded slash after ..
    ("%2E%2E%2Fetc%2Fpasswd.md", "path-percent-encoded"),  # upper-case hex
    ("%252e%252e/x.md", "path-percent-encoded"),  # double-encoded dot
    ("notes/a%00.md", "path-percent-encoded"),  # encoded NUL
    ("a%5cb.md", "path-percent-encoded"),  # encoded backslash
    ("%c0%ae%c0%ae/x.md", "path-percent-encoded"),  # overlong UTF-8 dot
    ("\uff05\uff12\uff45.md", "path-percent-encoded"),  # fullwidth %2e: an escape after NFKC
    # --- hidden ---
    (".obsidian/app.md", "path-hidden-segment"),  # Obsidian settings
    (".git/config", "path-hidden-segment"),  # git internals
    (".git/hooks/pre-commit.md", "path-hidden-segment"),  # git hooks
    ("notes/.secret.md", "path-hidden-segment"),  # hidden file
    (".md", "path-hidden-segment"),  # a name that is only the suffix
    ("a/.hidden/b.md", "path-hidden-segment"),  # hidden folder in the middle
    # --- empty segment ---
    ("a//b.md", "path-empty-segment"),  # doubled slash
    ("a/b.md/", "path-empty-segment"),  # trailing slash
    ("notes/", "path-empty-segment"),  # folder given where a note is expected
    # --- control characters (Cc) ---
    ("a\x00.md", "path-control-char"),  # NUL truncates C strings
    ("a\x00/../../etc/passwd.md", "path-control-char"),  # NUL ahead of a traversal: reported first
    ("a\tb.md", "path-control-char"),  # tab
    ("a\nb.md", "path-control-char"),  # newline splits logs and headers
    ("a\rb.md", "path-control-char"),  # carriage return
    ("a\x1bb.md", "path-control-char"),  # ESC: terminal escape sequences
    ("a\x7f.md", "path-control-char"),  # DEL
    ("a\x85.md", "path-control-char"),  # C1 NEXT LINE
    ("a\x9b.md", "path-control-char"),  # C1 CSI
    ("\t", "path-control-char"),  # whitespace-only, but the control char is more specific
    # --- invisible characters ---
    ("evil\u202egpj.md", "path-invisible-char"),  # RIGHT-TO-LEFT OVERRIDE: spoofs the extension
    ("a\u2066b\u2069.md", "path-invisible-char"),  # bidi isolates
    ("a\u200bb.md", "path-invisible-char"),  # ZERO WIDTH SPACE
    ("a\u200db.md", "path-invisible-char"),  # ZERO WIDTH JOINER
    ("a\u200cb.md", "path-invisible-char"),  # ZERO WIDTH NON-JOINER
    ("\ufeffa.md", "path-invisible-char"),  # BOM
    ("a\u00adb.md", "path-invisible-char"),  # SOFT HYPHEN
    ("a\u034fb.md", "path-invisible-char"),  # COMBINING GRAPHEME JOINER
    ("a\u2060b.md", "path-invisible-char"),  # WORD JOINER
    ("rules\U000e0020\U000e0041.md", "path-invisible-char"),  # tag characters (hidden ASCII)
    ("\U000e0001a.md", "path-invisible-char"),  # LANGUAGE TAG
    ("a\ufe0f.md", "path-invisible-char"),  # VARIATION SELECTOR-16
    ("a\U000e0100.md", "path-invisible-char"),  # VARIATION SELECTOR-17
    ("a\u180e.md", "path-invisible-char"),  # MONGOLIAN VOWEL SEPARATOR
    ("\u115f.md", "path-invisible-char"),  # HANGUL CHOSEONG FILLER (Lo, yet blank)
    ("a\u1160.md", "path-invisible-char"),  # HANGUL JUNGSEONG FILLER
    ("\u3164/x.md", "path-invisible-char"),  # HANGUL FILLER as a whole folder name
    ("a\uffa0.md", "path-invisible-char"),  # HALFWIDTH HANGUL FILLER
    ("a\u2028b.md", "path-invisible-char"),  # LINE SEPARATOR (Zl)
    ("a\u2029b.md", "path-invisible-char"),  # PARAGRAPH SEPARATOR (Zp)
    ("a\ue000.md", "path-invisible-char"),  # private use (Co)
    ("a\U000f0000.md", "path-invisible-char"),  # supplementary private use (Co)
    ("a\u0378.md", "path-invisible-char"),  # unassigned (Cn)
    ("a\uffff.md", "path-invisible-char"),  # noncharacter (Cn)
    ("a\u0600.md", "path-invisible-char"),  # ARABIC NUMBER SIGN (Cf, not default-ignorable)
    ("\U0001f468\u200d\u200d\U0001f469.md", "path-invisible-char"),  # a doubled joiner inside an emoji sequence
    ("./\u200b.md", "path-invisible-char"),  # invisible reported before traversal
    # --- reserved characters ---
    ("a<b.md", "path-reserved-char"),  # <
    ("a>b.md", "path-reserved-char"),  # >
    ("notes/a:b.md", "path-reserved-char"),  # colon (NTFS stream) after the first segment
    ("ab:c.md", "path-reserved-char"),  # colon, not a drive (two letters)
    ('a"b.md', "path-reserved-char"),  # "
    ("a|b.md", "path-reserved-char"),  # |
    ("what?.md", "path-reserved-char"),  # ?
    ("*.md", "path-reserved-char"),  # *
    ("x.md::$DATA", "path-reserved-char"),  # NTFS alternate data stream
    # --- lookalike separators (NFKC / TR39) ---
    ("a\uff0fb.md", "path-lookalike-separator"),  # FULLWIDTH SOLIDUS: NFKC gives '/'
    ("\uff0e\uff0e\uff0fetc.md", "path-lookalike-separator"),  # fullwidth ../ in one segment
    ("\uff0e\uff0e/x.md", "path-lookalike-separator"),  # fullwidth .. as a whole segment
    ("a/\uff0e/x.md", "path-lookalike-separator"),  # fullwidth . segment
    ("\uff0egit/config.md", "path-lookalike-separator"),  # fullwidth .git: hidden after NFKC
    ("\u2025/x.md", "path-lookalike-separator"),  # TWO DOT LEADER: '..' after NFKC
    ("\u2024\u2024/x.md", "path-lookalike-separator"),  # ONE DOT LEADER twice
    ("\u2026notes.md", "path-lookalike-separator"),  # ELLIPSIS at the start: hidden after NFKC
    ("a\uff3cb.md", "path-lookalike-separator"),  # FULLWIDTH REVERSE SOLIDUS
    ("a\ufe68b.md", "path-lookalike-separator"),  # SMALL REVERSE SOLIDUS
    ("rules\u2215digest.md", "path-lookalike-separator"),  # DIVISION SLASH: spoofs rules/digest.md
    ("rules\u2044digest.md", "path-lookalike-separator"),  # FRACTION SLASH
    ("a\u29f8b.md", "path-lookalike-separator"),  # BIG SOLIDUS
    ("a\u2216b.md", "path-lookalike-separator"),  # SET MINUS looks like a backslash
    # --- whitespace at segment ends ---
    (" a.md", "path-segment-space"),  # leading space
    ("a /b.md", "path-segment-space"),  # trailing space on a folder (Windows drops it)
    ("a/b.md ", "path-segment-space"),  # trailing space after the suffix
    ("\u3000a.md", "path-segment-space"),  # IDEOGRAPHIC SPACE
    ("a\u00a0/b.md", "path-segment-space"),  # NO-BREAK SPACE
    # --- trailing dot (Windows drops it) ---
    ("notes./x.md", "path-trailing-dot"),  # folder ending in a dot
    ("x.md.", "path-trailing-dot"),  # name ending in a dot
    # --- reserved names (Windows devices, git's NTFS alias) ---
    ("con.md", "path-reserved-name"),  # CON
    ("notes/NUL.md", "path-reserved-name"),  # NUL, any case
    ("aux/x.md", "path-reserved-name"),  # AUX as a folder
    ("com1.md", "path-reserved-name"),  # COM1
    ("LPT9.backup.md", "path-reserved-name"),  # device name with a double extension
    ("git~1/config.md", "path-reserved-name"),  # NTFS short name of .git
    ("GIT~1/hooks/x.md", "path-reserved-name"),  # same, upper case
    # --- lengths ---
    ("a" * (MAX_SEGMENT_BYTES - 2) + ".md", "segment-too-long"),  # 256 bytes
    ("\u00e9" * 127 + ".md", "segment-too-long"),  # 257 bytes in UTF-8, only 130 characters
    ("/".join(["a" * 200] * 6) + "/x.md", "path-too-long"),  # 1210 bytes, every segment fine
    ("a/" * 3000 + "x.md", "path-too-long"),  # bounded before any Unicode work
    ("\x00" * 10_000, "path-too-long"),  # the work bound comes before everything else
    # --- not markdown ---
    ("notes/a.txt", "path-not-markdown"),  # other file type
    ("notes/README", "path-not-markdown"),  # no suffix
    ("notes/a.MD", "path-not-markdown"),  # only lowercase .md is accepted
    ("notes/a.Md", "path-not-markdown"),  # mixed case
    ("notes/a.md.txt", "path-not-markdown"),  # suffix smuggled in the middle
    ("notes/a.markdown", "path-not-markdown"),  # long suffix is not accepted either
    ("notes", "path-not-markdown"),  # a folder given where a note is expected
]


@pytest.mark.parametrize(("raw", "rule"), HOSTILE, ids=[f"{i}-{r}" for i, (_, r) in enumerate(HOSTILE)])
def test_hostile_input_is_refused_with_exact_rule(raw: object, rule: str) -> None:
    with pytest.raises(PathRejected) as info:
        NotePath.parse(raw)  # type: ignore[arg-type]
    assert info.value.rule == rule


@pytest.mark.parametrize(("raw", "rule"), HOSTILE, ids=[f"{i}-{r}" for i, (_, r) in enumerate(HOSTILE)])
def test_refusal_message_is_safe_to_show(raw: object, rule: str) -> None:
    with pytest.raises(PathRejected) as info:
        NotePath.parse(raw)  # type: ignore[arg-type]
    error = info.value
    assert isinstance(error, NotegateError)
    assert error.message and len(error.message) < 600
    # The message never carries an invisible or control character from the input.
    assert not [ch for ch in error.message if unicodedata.category(ch) in FORBIDDEN_CATEGORIES]
    assert f"[{rule}]" in error.explain()
    assert isinstance(error.raw, str)


def test_rule_names_in_table_are_the_documented_set() -> None:
    assert {rule for _, rule in HOSTILE} == {
        "path-not-text",
        "path-empty",
        "path-absolute",
        "path-backslash",
        "path-traversal",
        "path-percent-encoded",
        "path-hidden-segment",
        "path-empty-segment",
        "path-control-char",
        "path-invisible-char",
        "path-reserved-char",
        "path-lookalike-separator",
        "path-segment-space",
        "path-trailing-dot",
        "path-reserved-name",
        "segment-too-long",
        "path-too-long",
        "path-not-markdown",
    }


@pytest.mark.parametrize("cp", list(range(0x00, 0x20)) + list(range(0x7F, 0xA0)))
def test_every_control_character_is_refused(cp: int) -> None:
    with pytest.raises(PathRejected) as info:
        NotePath.parse(f"a{chr(cp)}b.md")
    assert info.value.rule == "path-control-char"


def test_default_ignorable_table_matches_the_unicode_version() -> None:
    ranges = unicode_tables.DEFAULT_IGNORABLE_RANGES
    assert all(lo <= hi for lo, hi in ranges)
    assert all(a[1] < b[0] for a, b in itertools.pairwise(ranges)), "sorted, non-overlapping"
    assert (
        sum(hi - lo + 1 for lo, hi in ranges) == 4174
    )  # DerivedCoreProperties.txt total (unchanged since Unicode 6.1)


def test_every_default_ignorable_code_point_is_refused() -> None:
    for lo, hi in unicode_tables.DEFAULT_IGNORABLE_RANGES:
        for cp in range(lo, hi + 1):
            with pytest.raises(PathRejected) as info:
                NotePath.parse(f"a{chr(cp)}b.md")
            assert info.value.rule == "path-invisible-char", hex(cp)


@pytest.mark.parametrize("ch", sorted(unicode_tables.SEPARATOR_LOOKALIKES))
def test_separator_lookalikes_are_symbols_and_refused(ch: str) -> None:
    # Letters confusable with '/' (e.g. KATAKANA LETTER NO) must stay usable.
    assert not unicodedata.category(ch).startswith("L"), unicodedata.name(ch)
    with pytest.raises(PathRejected) as info:
        NotePath.parse(f"a{ch}b.md")
    assert info.value.rule == "path-lookalike-separator"


# --------------------------------------------------------------------------------------------
# Legitimate paths: accepted, and normalised as expected.
# --------------------------------------------------------------------------------------------

LEGIT = [
    ("projects/notegate.md", "projects/notegate.md"),  # the common case
    ("x.md", "x.md"),  # a note at the root
    ("日本語/メモ.md", "日本語/メモ.md"),  # Japanese folder and name
    ("ノート/ノ.md", "ノート/ノ.md"),  # KATAKANA NO is confusable with '/' but is a letter
    ("café.md", "café.md"),  # composed é
    ("cafe\u0301.md", "café.md"),  # decomposed é is stored composed (NFC)
    ("v1.2..v1.3.md", "v1.2..v1.3.md"),  # dots inside a name are fine
    ("a..md", "a..md"),  # two dots before the suffix
    ("100% done.md", "100% done.md"),  # a bare % is fine
    ("50%.md", "50%.md"),  # % at the end of the stem
    ("a%zz.md", "a%zz.md"),  # % not followed by hex digits
    ("a-b_c (1).md", "a-b_c (1).md"),  # punctuation people use
    ("🚀 launch.md", "🚀 launch.md"),  # emoji without joiners or variation selectors
    ("\U0001f468\u200d\U0001f469.md", "\U0001f468\u200d\U0001f469.md"),  # ZWJ emoji sequence
    ("📝/🐍 notes.md", "📝/🐍 notes.md"),  # emoji folder
    ("Ωmega/Straße.md", "Ωmega/Straße.md"),  # Greek and German
    ("עברית/שלום.md", "עברית/שלום.md"),  # right-to-left script without bidi controls
    ("العربية.md", "العربية.md"),  # Arabic
    ("한국어/메모.md", "한국어/메모.md"),  # Hangul syllables (not fillers)
    ("会議：議事録.md", "会議：議事録.md"),  # FULLWIDTH COLON is ordinary CJK punctuation
    ("本当？.md", "本当？.md"),  # FULLWIDTH QUESTION MARK likewise
    ("½ cup.md", "½ cup.md"),  # NFKC gives FRACTION SLASH, which is not '/'
    ("a b/c d.md", "a b/c d.md"),  # inner spaces
    ("C#/notes.md", "C#/notes.md"),  # '#' is allowed
    ("git/config.md", "git/config.md"),  # 'git' without the dot is ordinary
    ("console.md", "console.md"),  # starts with 'con' but is not a device name
    ("com10.md", "com10.md"),  # COM10 is not reserved
    ("inbox/handoffs/notegate.md", "inbox/handoffs/notegate.md"),  # inbox route
    ("a" * (MAX_SEGMENT_BYTES - 3) + ".md", "a" * (MAX_SEGMENT_BYTES - 3) + ".md"),  # 255 bytes exactly
    ("\u00e9" * 126 + ".md", "\u00e9" * 126 + ".md"),  # 255 bytes exactly, in 2-byte characters
]


@pytest.mark.parametrize(("raw", "expected"), LEGIT)
def test_legitimate_path_is_accepted(raw: str, expected: str) -> None:
    path = NotePath.parse(raw)
    assert path.value == expected
    assert str(path) == expected
    assert NotePath.parse(str(path)) == path


def test_path_of_exactly_max_bytes_is_accepted_and_one_more_is_not() -> None:
    folders = "/".join(["a" * 200] * 4) + "/"  # 804 bytes
    name_len = MAX_PATH_BYTES - len(folders)
    exact = folders + "b" * (name_len - len(NOTE_SUFFIX)) + NOTE_SUFFIX
    assert len(exact.encode()) == MAX_PATH_BYTES
    assert NotePath.parse(exact).value == exact
    with pytest.raises(PathRejected) as info:
        NotePath.parse(folders + "b" * (name_len - len(NOTE_SUFFIX) + 1) + NOTE_SUFFIX)
    assert info.value.rule == "path-too-long"


def test_composed_and_decomposed_are_the_same_path() -> None:
    composed = NotePath.parse("Résumé/café.md")
    decomposed = NotePath.parse(nfd("Résumé/café.md"))
    assert composed == decomposed
    assert hash(composed) == hash(decomposed)
    assert len({composed, decomposed}) == 1


def test_note_path_accessors() -> None:
    path = NotePath.parse("projects/notegate/design.md")
    assert path.parts == ("projects", "notegate", "design.md")
    assert path.name == "design.md"
    assert path.stem == "design"
    assert path.folder == "projects/notegate"
    assert str(path) == "projects/notegate/design.md"
    root = NotePath.parse("v1.2..v1.3.md")
    assert root.parts == ("v1.2..v1.3.md",)
    assert root.folder == ""
    assert root.stem == "v1.2..v1.3"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Notes/Café.md", "notes/cafe\u0301.md"),  # case and composition
        ("STRASSE.md", "straße.md"),  # full case folding: ß -> ss
        ("ﬁle.md", "file.md"),  # compatibility ligature
        ("Ｍemo.md", "memo.md"),  # fullwidth letter
        ("ΣΊΣΥΦΟΣ.md", "σίσυφος.md"),  # final sigma
    ],
)
def test_case_key_collides_for_case_and_compatibility_variants(a: str, b: str) -> None:
    assert NotePath.parse(a) != NotePath.parse(b)
    assert NotePath.parse(a).case_key() == NotePath.parse(b).case_key()


def test_case_key_keeps_different_names_apart() -> None:
    assert NotePath.parse("a/b.md").case_key() != NotePath.parse("a/c.md").case_key()
    assert NotePath.parse("ab/c.md").case_key() != NotePath.parse("a/bc.md").case_key()


def test_constructor_rechecks_its_value() -> None:
    with pytest.raises(PathRejected) as info:
        NotePath("../x.md")
    assert info.value.rule == "path-traversal"
    with pytest.raises(PathRejected) as info:
        NotePath("cafe\u0301.md")
    assert info.value.rule == "path-not-normalised"
    with pytest.raises(PathRejected) as info:
        NotePath(7)  # type: ignore[arg-type]
    assert info.value.rule == "path-not-text"
    with pytest.raises(PathRejected) as info:
        FolderPath("a/")
    assert info.value.rule == "path-empty-segment"
    with pytest.raises(PathRejected) as info:
        FolderPath("cafe\u0301")
    assert info.value.rule == "path-not-normalised"
    assert NotePath("a/b.md") == NotePath.parse("a/b.md")


def test_paths_are_frozen_values() -> None:
    path = NotePath.parse("a/b.md")
    with pytest.raises(dataclasses.FrozenInstanceError):
        path.value = "../x.md"  # type: ignore[misc]
    assert not hasattr(path, "__dict__")
    folder = FolderPath.parse("a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        folder.value = ".git"  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# Folders.
# --------------------------------------------------------------------------------------------

FOLDERS_OK = [
    ("", ""),  # the root
    ("/", ""),  # the root, written as a slash
    (".", ""),  # the root, written as a dot
    ("a", "a"),  # a folder
    ("a/", "a"),  # one trailing slash is dropped
    ("a/b", "a/b"),  # nested
    ("a/b/", "a/b"),  # nested, trailing slash
    ("日本語/", "日本語"),  # unicode
    ("cafe\u0301", "café"),  # NFC
    ("notes.md", "notes.md"),  # folders need no .md and may look like one
]

FOLDERS_BAD = [
    (None, "path-not-text"),  # not text
    ("//", "path-empty"),  # only slashes, and not one of the root spellings
    ("/a", "path-absolute"),  # absolute
    ("C:/a", "path-absolute"),  # drive
    ("./a", "path-traversal"),  # leading ./ refused as for notes
    ("..", "path-traversal"),  # parent
    ("a/../b", "path-traversal"),  # traversal inside
    (".git", "path-hidden-segment"),  # hidden
    (".obsidian/", "path-hidden-segment"),  # hidden, trailing slash
    ("a//", "path-empty-segment"),  # only one trailing slash is dropped
    ("a//b", "path-empty-segment"),  # doubled slash
    (" ", "path-empty"),  # whitespace is not the root
    ("a\\b", "path-backslash"),  # backslash
    ("a\u202e", "path-invisible-char"),  # bidi override
    ("%2e%2e", "path-percent-encoded"),  # encoded traversal
    ("\uff0e\uff0e", "path-lookalike-separator"),  # fullwidth traversal
]


@pytest.mark.parametrize(("raw", "expected"), FOLDERS_OK)
def test_folder_accepted_forms(raw: str, expected: str) -> None:
    folder = FolderPath.parse(raw)
    assert folder.value == expected
    assert str(folder) == expected
    assert FolderPath.parse(str(folder)) == folder


@pytest.mark.parametrize(("raw", "rule"), FOLDERS_BAD)
def test_folder_refusals(raw: object, rule: str) -> None:
    with pytest.raises(PathRejected) as info:
        FolderPath.parse(raw)  # type: ignore[arg-type]
    assert info.value.rule == rule


@pytest.mark.parametrize(
    ("folder", "path", "inside"),
    [
        ("a", "a/x.md", True),  # direct child
        ("a", "a/b/c/x.md", True),  # deeper
        ("a", "ab/x.md", False),  # prefix of a name, not of a segment
        ("a", "a.md", False),  # a note named like the folder is not inside it
        ("a", "A/x.md", False),  # exact comparison (case is the store's business)
        ("a/b", "a/b/x.md", True),  # nested folder
        ("a/b", "a/bc/x.md", False),  # segment-wise
        ("a/b", "a/x.md", False),  # sibling
        ("", "x.md", True),  # the root contains every note
        ("", "a/b/x.md", True),  # ...at any depth
        ("inbox", "inbox/handoffs/notegate.md", True),  # inbox route
        ("inbox", "inboxes/x.md", False),  # not a substring check
        ("café", "cafe\u0301/x.md", True),  # compared after NFC
        ("x.md", "x.md", False),  # a folder never contains a note of the same path
    ],
)
def test_folder_contains_is_segment_wise(folder: str, path: str, inside: bool) -> None:
    assert FolderPath.parse(folder).contains(path) is inside
    assert FolderPath.parse(folder).contains(NotePath.parse(path)) is inside


@pytest.mark.parametrize(
    ("outer", "inner", "inside"),
    [
        ("a", "a", True),  # a folder contains itself
        ("a", "a/b", True),  # and its subfolders
        ("a/b", "a", False),  # not its parent
        ("a", "ab", False),  # segment-wise
        ("", "", True),  # root contains root
        ("", "a/b", True),  # root contains everything
    ],
)
def test_folder_contains_folder(outer: str, inner: str, inside: bool) -> None:
    assert FolderPath.parse(outer).contains(FolderPath.parse(inner)) is inside


def test_folder_contains_parses_strings_instead_of_prefix_matching() -> None:
    with pytest.raises(PathRejected) as info:
        FolderPath.parse("inbox").contains("inbox/../rules/digest.md")
    assert info.value.rule == "path-traversal"


def test_folder_accessors_and_case_key() -> None:
    assert FolderPath.parse("").parts == ()
    assert FolderPath.parse("a/b/").parts == ("a", "b")
    assert FolderPath.parse("Private").case_key() == FolderPath.parse("private").case_key()


# --------------------------------------------------------------------------------------------
# Hidden tree paths.
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "hidden"),
    [
        (".obsidian/app.json", True),  # Obsidian settings
        (".git/config", True),  # git internals
        ("notes/.secret.md", True),  # hidden file
        ("a/.trash/b.md", True),  # hidden folder in the middle
        (".gitignore", True),  # dot file at the root
        ("notes/a.md", False),  # ordinary note
        ("v1.2..v1.3.md", False),  # dots inside a name
        ("", False),  # the root itself
    ],
)
def test_is_hidden_tree_path(path: str, hidden: bool) -> None:
    assert is_hidden_tree_path(path) is hidden


# --------------------------------------------------------------------------------------------
# Properties.
# --------------------------------------------------------------------------------------------

# Pieces that combine into nasty paths: separators, dots, escapes, lookalikes, invisibles.
HOSTILE_ATOMS = [
    "/", "//", ".", "..", "\\", "%", "%2e", "%2f", "%25", "2e", ":", "C:", " ", "\x00", "\t", "\n",
    "\u202e", "\u200d", "\ufe0f", "\U000e0041", "\uff0f", "\uff0e", "\uff3c", "\u2215", "\u2025", "\u3164",
    "md", ".md", ".MD", "a", "B", "é", "e\u0301", "日", "🚀", "~", "git", "con", "\u0338", "<", "?",
]  # fmt: skip

SAFE_CHARS = "abcXYZ019 -_()%.,'&+=@#~[]{}!éßİ日本メノ한🚀½：\u0301"

segment = st.text(alphabet=SAFE_CHARS, min_size=1, max_size=12)
path_like_text = st.lists(st.sampled_from(HOSTILE_ATOMS), max_size=12).map("".join)
any_text = st.one_of(st.text(max_size=60), path_like_text, st.text(alphabet=SAFE_CHARS + "/\\", max_size=40))


def try_parse(raw: str) -> NotePath | None:
    try:
        return NotePath.parse(raw)
    except PathRejected:
        return None


accepted_paths = (
    st.builds(lambda parts, name: "/".join([*parts, name + NOTE_SUFFIX]), st.lists(segment, max_size=4), segment)
    .map(try_parse)
    .filter(lambda p: p is not None)
)


def assert_safe(path: NotePath) -> None:
    """Every invariant the module promises, checked independently of its implementation."""
    value = path.value
    assert isinstance(value, str)
    assert nfc(value) == value
    assert not value.startswith("/")
    assert "\\" not in value
    # Invisible only where a script's spelling needs it, by the floor's own table (tests/vault/test_paths_scripts.py).
    hidden = [i for i, ch in enumerate(value) if unicodedata.category(ch) in FORBIDDEN_CATEGORIES]
    assert not [i for i in hidden if not floor_chars.contextual_allowed(value, i)]
    assert not [ch for ch in value if ch in '<>:"|?*']
    assert len(value.encode()) <= MAX_PATH_BYTES
    assert value.endswith(NOTE_SUFFIX)
    for seg in value.split("/"):
        assert seg
        assert seg not in (".", "..")
        assert not seg.startswith(".")
        assert not unicodedata.normalize("NFKC", seg).startswith(".")
        assert len(seg.encode()) <= MAX_SEGMENT_BYTES
    assert "/" not in unicodedata.normalize("NFKC", value).replace("/", "", value.count("/"))
    # Joined onto a base directory, it never escapes it, on POSIX or on Windows.
    assert posixpath.normpath(posixpath.join("/srv/vault", value)).startswith("/srv/vault/")
    assert ntpath.normpath(ntpath.join("C:\\vault", value)).startswith("C:\\vault\\")
    # It is its own normal form.
    assert NotePath.parse(value) == path
    assert NotePath.parse(nfd(value)) == path


@PROPERTY_SETTINGS
@given(any_text)
def test_only_path_rejected_escapes_and_accepted_paths_are_safe(raw: str) -> None:
    try:
        path = NotePath.parse(raw)
    except PathRejected as error:
        assert error.rule
        return
    assert_safe(path)


@PROPERTY_SETTINGS
@given(any_text)
def test_folder_parse_only_raises_path_rejected(raw: str) -> None:
    try:
        folder = FolderPath.parse(raw)
    except PathRejected:
        return
    assert FolderPath.parse(folder.value) == folder
    assert nfc(folder.value) == folder.value
    assert not folder.value.endswith("/")
    assert all(seg and not seg.startswith(".") for seg in folder.parts)


@PROPERTY_SETTINGS
@given(st.one_of(st.integers(), st.none(), st.binary(), st.floats(), st.lists(st.text(max_size=3))))
def test_non_text_is_refused_as_not_text(raw: object) -> None:
    with pytest.raises(PathRejected) as info:
        NotePath.parse(raw)  # type: ignore[arg-type]
    assert info.value.rule == "path-not-text"


@PROPERTY_SETTINGS
@given(accepted_paths)
def test_accepted_paths_round_trip_and_are_safe(path: NotePath) -> None:
    assert NotePath.parse(str(path)) == path
    assert_safe(path)
    assert path.parts[-1] == path.name
    assert path.stem + NOTE_SUFFIX == path.name
    assert "/".join(p for p in (path.folder, path.name) if p) == path.value


@PROPERTY_SETTINGS
@given(st.text(alphabet=SAFE_CHARS + "/", max_size=40))
def test_nfc_idempotence(raw: str) -> None:
    first = try_parse(raw)
    second = try_parse(nfd(raw))
    assert first == second
    if first is not None:
        assert nfc(first.value) == first.value
        assert NotePath.parse(first.value).value == first.value


@PROPERTY_SETTINGS
@given(st.lists(segment, max_size=3), accepted_paths)
def test_contains_matches_segment_prefix(folder_parts: list[str], path: NotePath) -> None:
    try:
        folder = FolderPath.parse("/".join(folder_parts))
    except PathRejected:
        return
    expected = folder.value == "" or path.value.startswith(folder.value + "/")
    assert folder.contains(path) is expected
    # A folder built from the note's own leading segments always contains it.
    assert FolderPath.parse(path.folder).contains(path)
