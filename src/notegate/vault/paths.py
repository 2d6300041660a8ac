"""Note and folder paths: the one place a vault path is parsed.

Theory of operation
-------------------
Every path that reaches the store, the index or the policy is a :class:`NotePath` or a
:class:`FolderPath` built by ``parse``.  Parsing is pure string work (no file system, no git):
it normalises the text to NFC, then refuses anything that could escape the vault, hide from a
reader, alias another path on some platform, or break a clone.  Code that holds a ``NotePath``
never re-checks it ("parse, don't validate"); constructing one directly re-runs the checks, so
there is no unchecked way in.

Invariants of an accepted ``NotePath.value`` (``FolderPath`` is the same minus rule 10, and
``""`` is the root):

1. It is NFC, and ``parse(value)`` returns the same value.
2. It is relative POSIX: no leading ``/`` or ``\\``, no drive (``C:``), no URL, no ``\\`` at all.
3. Every segment is non-empty, is not made only of dots (``.``, ``..``, ``...``) and does not
   start with ``.`` -- so ``posixpath.normpath(base + "/" + value)`` always stays under ``base``.
4. It contains no control (Cc), format (Cf), surrogate (Cs), private-use (Co), unassigned (Cn),
   line/paragraph separator (Zl/Zp) or Default_Ignorable_Code_Point character, except a joiner, ZWSP or
   variation selector exactly where the floor's table lets one through in note text
   (:func:`notegate.safety.floor_chars.contextual_allowed`): ZWNJ between Persian or Arabic letters,
   ZWSP between Khmer or Thai letters, ZWJ inside an emoji sequence or after a virama, VS16 after an
   emoji base. Never at a segment's edge, never doubled, never between Latin letters.
5. It contains no percent-escape (``%`` + two hex digits), in its NFC or NFKC form: a path is
   never URL-decoded and then trusted.
6. It contains none of ``< > : " | ? *``.
7. It contains no character that looks like, or folds under NFKC to, ``/`` or ``\\``, and no
   segment whose NFKC form is only dots or starts with ``.`` (``．．``, ``．git``).
8. No segment starts or ends with whitespace or ends with ``.``; no segment is a Windows device
   name (``con``, ``aux``, ``com1`` ...) or git's NTFS alias of ``.git`` (``git~1``).
9. Each segment is at most ``MAX_SEGMENT_BYTES`` and the whole at most ``MAX_PATH_BYTES``
   UTF-8 bytes.
10. The last segment ends with lowercase ``.md``.

Order of checks: the reported rule is the most specific one.  Character-level problems come
first (so later messages can safely quote the path), then the shape of the whole path
(empty, absolute, backslash, percent-escape, reserved and lookalike characters), then each
segment (traversal before hidden before the rest), then lengths, then the ``.md`` suffix.

Deliberate decisions:

* A leading ``./`` is refused as ``path-traversal`` rather than stripped: one spelling per note.
* Only lowercase ``.md`` is a note; ``Note.MD`` is refused with a hint, so two spellings never
  name one note on case-insensitive clones.
* Fullwidth ``／`` ``＼`` ``．．`` and the TR39 slash lookalikes are refused as
  ``path-lookalike-separator``: NFC keeps them, but NFKC-folding tools and Windows "best fit"
  code pages turn them into real separators, and in a listing they spoof folders.
* Fullwidth ``：`` ``？`` and other CJK punctuation are allowed: they are ordinary text in CJK
  titles, and only the separator lookalikes can change what a path means.
* A name must look like what it is, in its own script: the invisible characters a script's spelling
  needs pass in that context only (Persian plurals take ZWNJ: ``فایل‌ها``; Khmer breaks words with ZWSP),
  by the floor's one table; the same character anywhere else is refused ``path-invisible-char``. The
  instruction-file check folds every invisible character away first, so ``CLA<ZWNJ>UDE.md`` is still
  ``CLAUDE.md``.
* Python's ``unicodedata`` decides Cn; a character newer than its Unicode version is refused
  as unassigned, which is the safe direction.
* The Unicode tables (Default_Ignorable, separator look-alikes, control names) are
  :mod:`notegate.safety.unicode_tables`, the one copy the floor and the gates read too.

Out of scope here (the store's job): symlinks, and two paths that differ only by case, which
:meth:`NotePath.case_key` exists to detect.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from notegate.errors import RULES, PathRejected
from notegate.safety.floor_chars import CONTEXTUAL_NAME_CHARS, contextual_allowed
from notegate.safety.unicode_tables import DEFAULT_IGNORABLE_RANGES, PATH_CONTROL_NAMES, SEPARATOR_LOOKALIKES

__all__ = [
    "MAX_PATH_BYTES",
    "MAX_SEGMENT_BYTES",
    "NOTE_SUFFIX",
    "FolderPath",
    "NotePath",
    "TreePaths",
    "case_twin",
    "caseless_key",
    "is_hidden_tree_path",
]

MAX_SEGMENT_BYTES = 255  # UTF-8 bytes per segment (the common file-system name limit)
MAX_PATH_BYTES = 1024  # UTF-8 bytes for the whole path
NOTE_SUFFIX = ".md"

# Work bound: longer raw input is refused before any Unicode work is done.  No accepted path
# comes near it (an accepted path is at most 1024 bytes after NFC).
_MAX_RAW_CHARS = 4 * MAX_PATH_BYTES

# General categories refused anywhere in a path (UAX #44, General_Category), besides Cc and Cs
# which get their own rules.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Co", "Cn", "Zl", "Zp"})

# Names Windows reserves for devices, with any extension (Microsoft, "Naming Files, Paths, and
# Namespaces"); Git for Windows refuses to check them out.  'git~1' is the NTFS short name of
# '.git', which git refuses everywhere since CVE-2019-1353 (core.protectNTFS).
_WINDOWS_DEVICE_NAMES = frozenset(
    {"con", "prn", "aux", "nul", "conin$", "conout$"} | {f"{dev}{n}" for dev in ("com", "lpt") for n in "0123456789¹²³"}
)
_GIT_SHORT_NAME = re.compile(r"git~[0-9]+")

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # General_Category=Cc, exactly
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")  # ASCII hex only, unlike \d or str.isdigit
_RESERVED = re.compile(r'[<>:"|?*]')
_DRIVE = re.compile(r"[A-Za-z]:")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")

_EXAMPLE = {"note": "'projects/notegate.md'", "folder": "'projects/notegate'"}


def _is_default_ignorable(cp: int) -> bool:
    return any(lo <= cp <= hi for lo, hi in DEFAULT_IGNORABLE_RANGES)


def _describe(ch: str) -> str:
    """Name a character by code point, never by printing it (it may be invisible or reorder text)."""
    cp = ord(ch)
    name = unicodedata.name(ch, "") or PATH_CONTROL_NAMES.get(cp, "")
    if not name and unicodedata.category(ch) == "Cn":
        name = "unassigned"
    return f"U+{cp:04X} ({name})" if name else f"U+{cp:04X}"


def _show(text: str) -> str:
    """Quote user text for a message: escaped and bounded, so a refusal never echoes a wall of input."""
    if len(text) > 60:
        text = text[:57] + "..."
    return repr(text)


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def _check_characters(raw: str, value: str) -> None:
    """Refuse control and invisible characters in the raw text and in its NFC form.

    Both forms are scanned so the verdict does not depend on whether normalisation happened to
    compose a character away; none of these classes compose, so this only costs a second pass.
    """
    texts = (raw,) if raw == value else (raw, value)
    for text in texts:
        if (m := _CONTROL.search(text)) is not None:
            raise PathRejected(
                raw,
                "path-control-char",
                f"The path contains the control character {_describe(m.group())}. "
                "Paths cannot contain control characters such as NUL, tab or newline; remove it.",
            )
    for text in texts:
        if text.isascii():
            continue
        for at, ch in enumerate(text):
            cp = ord(ch)
            if cp < 0x80:
                continue
            if ch in CONTEXTUAL_NAME_CHARS and contextual_allowed(text, at):
                continue  # a script's own joiner or word break, in the one place its spelling puts it
            if unicodedata.category(ch) in _INVISIBLE_CATEGORIES or _is_default_ignorable(cp):
                raise PathRejected(
                    raw,
                    "path-invisible-char",
                    f"The path contains the invisible or unassigned character {_describe(ch)}. "
                    "Invisible, formatting, bidirectional, tag, private-use and unassigned characters "
                    "could make a name look like another one; remove it and use visible characters only.",
                )


def _check_lookalikes(raw: str, value: str) -> None:
    """Refuse characters that are, or fold to, a path separator in some other tool."""
    for ch in value:
        if ch.isascii():
            continue
        if ch in SEPARATOR_LOOKALIKES or any(sep in unicodedata.normalize("NFKC", ch) for sep in "/\\"):
            raise PathRejected(
                raw,
                "path-lookalike-separator",
                f"The path contains {_describe(ch)}, which looks like a slash or becomes one in other tools. "
                "Use '/' only between folders, and another character such as '-' inside a name.",
            )


def _check_segments(raw: str, segments: list[str]) -> None:
    """Per-segment rules, each rule over all segments before the next, most specific first."""
    for seg in segments:
        if seg and seg.strip(".") == "":
            what = "the current folder" if seg == "." else "a parent folder"
            raise PathRejected(
                raw,
                "path-traversal",
                f"The path has a {_show(seg)} segment, which refers to {what}. "
                "Write the path from the vault root without '.' or '..' segments "
                "(a leading './' is refused too).",
            )
    for seg in segments:
        if seg.startswith("."):
            raise PathRejected(
                raw,
                "path-hidden-segment",
                f"the segment {_show(seg)} starts with '.', which marks hidden files and folders "
                "(.git, .obsidian): they hold each device's settings and are never notes",
                remedy=RULES["path-hidden-segment"],  # never "rename it": .obsidian/app.json is the user's
            )
    for seg in segments:
        folded = unicodedata.normalize("NFKC", seg)
        if seg and (folded.strip(".") == "" or folded.startswith(".")):
            raise PathRejected(
                raw,
                "path-lookalike-separator",
                f"The segment {_show(seg)} becomes {_show(folded)} under Unicode compatibility folding (NFKC), "
                "which would be a traversal or hidden name in other tools. Use ordinary letters at its start.",
            )
    if "" in segments:
        raise PathRejected(
            raw,
            "path-empty-segment",
            "The path has an empty segment (a doubled '/' or a trailing '/'). Remove the extra slash.",
        )
    for seg in segments:
        if seg[0].isspace() or seg[-1].isspace():
            raise PathRejected(
                raw,
                "path-segment-space",
                f"The segment {_show(seg)} starts or ends with a space. "
                "Remove spaces at the start and end of folder and file names.",
            )
    for seg in segments:
        if seg.endswith("."):
            raise PathRejected(
                raw,
                "path-trailing-dot",
                f"The segment {_show(seg)} ends with '.', which Windows drops silently, so clones there "
                "would see another name. Remove the trailing dot.",
            )
    for seg in segments:
        base = seg.split(".", 1)[0].rstrip(" ").casefold()
        if base in _WINDOWS_DEVICE_NAMES or _GIT_SHORT_NAME.fullmatch(seg.casefold()):
            raise PathRejected(
                raw,
                "path-reserved-name",
                f"The segment {_show(seg)} is a reserved name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, "
                "or git~1, git's short name for .git); clones there cannot check it out",
                remedy=RULES["path-reserved-name"],  # said once: a denial or the import report appends it too
            )
    for seg in segments:
        size = _utf8_len(seg)
        if size > MAX_SEGMENT_BYTES:
            raise PathRejected(
                raw,
                "segment-too-long",
                f"The segment {_show(seg)} is {size} bytes in UTF-8; the limit is {MAX_SEGMENT_BYTES} bytes "
                "per folder or file name. Shorten it.",
            )


def _normalise(raw: object, kind: str) -> str:
    """Return the NFC form of ``raw`` if it is a safe vault path, else raise ``PathRejected``.

    ``kind`` is ``"note"`` (requires ``.md``) or ``"folder"`` (the root is handled by the caller).
    """
    example = _EXAMPLE[kind]
    if not isinstance(raw, str):
        raise PathRejected(
            f"<{type(raw).__name__}>",
            "path-not-text",
            f"The path must be text, not {type(raw).__name__}. Pass it as a string such as {example}.",
        )
    if len(raw) > _MAX_RAW_CHARS:
        raise PathRejected(
            raw,
            "path-too-long",
            f"The path is {len(raw)} characters long; the limit is {MAX_PATH_BYTES} bytes in UTF-8. "
            "Use shorter folder and note names.",
        )
    for ch in raw:
        if "\ud800" <= ch <= "\udfff":
            raise PathRejected(
                raw,
                "path-not-text",
                f"The path contains U+{ord(ch):04X}, a lone surrogate, which is not valid Unicode text "
                "(usually a file name that was not UTF-8). Write the name in valid UTF-8 text.",
            )
    value = unicodedata.normalize("NFC", raw)
    _check_characters(raw, value)

    if not value.replace("/", "").strip():
        raise PathRejected(
            raw,
            "path-empty",
            f"The path is empty (or only spaces and slashes). Give a path such as {example}.",
        )
    if value.startswith(("/", "\\")) or _DRIVE.match(value) or _URL.match(value):
        raise PathRejected(
            raw,
            "path-absolute",
            f"The path {_show(value)} is absolute (it starts with a slash, a drive such as 'C:', or a URL). "
            f"Paths are relative to the vault root, such as {example}.",
        )
    if "\\" in value:
        raise PathRejected(
            raw,
            "path-backslash",
            f"The path {_show(value)} contains a backslash. Vault paths separate folders with '/'; "
            "replace each '\\' with '/'.",
        )
    for text in (value, unicodedata.normalize("NFKC", value)):
        if (m := _PERCENT_ESCAPE.search(text)) is not None:
            raise PathRejected(
                raw,
                "path-percent-encoded",
                f"The path contains {_show(m.group())}, which looks like a URL percent-escape. "
                "Paths are never URL-decoded here: write the character itself, "
                "and do not follow '%' with two hexadecimal digits.",
            )
    if (m := _RESERVED.search(value)) is not None:
        raise PathRejected(
            raw,
            "path-reserved-char",
            f'The path contains {_show(m.group())}; the characters < > : " | ? * are not allowed in names '
            "because Windows and Obsidian clones cannot use them. Remove it or use '-' instead.",
        )
    _check_lookalikes(raw, value)

    segments = value.split("/")
    _check_segments(raw, segments)
    size = _utf8_len(value)
    if size > MAX_PATH_BYTES:
        raise PathRejected(
            raw,
            "path-too-long",
            f"The path is {size} bytes in UTF-8; the limit is {MAX_PATH_BYTES}. "
            "Use shorter or fewer folder and note names.",
        )
    if kind == "note" and not segments[-1].endswith(NOTE_SUFFIX):
        name = segments[-1]
        if name.lower().endswith(NOTE_SUFFIX):
            hint = f"The suffix must be lowercase: rename it to {_show(name[: -len(NOTE_SUFFIX)] + NOTE_SUFFIX)}."
        else:
            hint = "Only Markdown notes are stored; add '.md' to the name."
        raise PathRejected(raw, "path-not-markdown", f"The note name {_show(name)} does not end in '.md'. {hint}")
    return value


def _caseless_key(value: str) -> str:
    """Compatibility caseless key (Unicode 15.0 §3.13, D145), recomposed to NFC for compactness.

    NFKD(casefold(NFKD(casefold(NFD(x))))) makes 'Café', 'cafe\u0301', 'CAFÉ' and 'ﬁle'/'file'
    collide, which is what matters for clones on case-insensitive file systems.
    """
    folded = unicodedata.normalize("NFD", value).casefold()
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", folded).casefold())
    return unicodedata.normalize("NFC", folded)


@dataclass(frozen=True, slots=True)
class NotePath:
    """A safe, normalised path of a Markdown note, relative to the vault root.

    Build it with :meth:`parse`.  The constructor re-checks its value and accepts only the
    normal form, so a ``NotePath`` can never hold an unchecked string.
    """

    value: str

    def __post_init__(self) -> None:
        if _normalise(self.value, "note") != self.value:
            raise PathRejected(
                self.value,
                "path-not-normalised",
                f"NotePath was given {_show(self.value)}, which is valid but not in normal (NFC) form. "
                "Build note paths with NotePath.parse().",
            )

    @classmethod
    def parse(cls, raw: str) -> NotePath:
        """Parse untrusted text into a note path, or raise ``PathRejected`` naming the rule.

        The value is built once: ``_normalise`` returns the normal form, which the constructor's re-check
        would only normalise again (half of the listing's cost at start, where every tree path is parsed).
        The property ``NotePath(parse(x).value) == parse(x)`` is what the tests hold this to."""
        path = object.__new__(cls)
        object.__setattr__(path, "value", raw if _accepted_as_is(raw, "note") else _normalise(raw, "note"))
        return path

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.value.split("/"))

    @property
    def name(self) -> str:
        """The last segment, e.g. ``notegate.md``."""
        return self.value.rsplit("/", 1)[-1]

    @property
    def stem(self) -> str:
        """The name without ``.md``; used as the note's title."""
        return self.name[: -len(NOTE_SUFFIX)]

    @property
    def folder(self) -> str:
        """The containing folder, ``""`` for a note at the vault root."""
        return self.value.rpartition("/")[0]

    def case_key(self) -> str:
        """Key under which two paths collide on case-insensitive clones (macOS, Windows).

        The store refuses a new path whose key equals an existing path's key.
        """
        return _caseless_key(self.value)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class FolderPath:
    """A safe, normalised folder path; ``""`` is the vault root.

    Same segment rules as notes, without the ``.md`` requirement and with no trailing slash.
    """

    value: str

    def __post_init__(self) -> None:
        if self.value != "" and _normalise(self.value, "folder") != self.value:
            raise PathRejected(
                self.value,
                "path-not-normalised",
                f"FolderPath was given {_show(self.value)}, which is valid but not in normal (NFC) form. "
                "Build folder paths with FolderPath.parse().",
            )

    @classmethod
    def parse(cls, raw: str) -> FolderPath:
        """Parse untrusted text into a folder path, or raise ``PathRejected``.

        ``""``, ``"/"`` and ``"."`` mean the root; one trailing slash is dropped (``"a/"`` is
        ``"a"``).  Anything else follows the note rules, so ``"/a"`` is absolute and ``"./a"``
        is traversal, exactly as for notes.
        """
        if isinstance(raw, str):
            if raw in ("", "/", "."):
                return cls("")
            if raw.endswith("/"):
                raw = raw[:-1]
        # built once, like NotePath.parse: the constructor's re-check would only normalise the value again
        folder = object.__new__(cls)
        object.__setattr__(folder, "value", raw if _accepted_as_is(raw, "folder") else _normalise(raw, "folder"))
        return folder

    @property
    def parts(self) -> tuple[str, ...]:
        """The segments; ``()`` for the root."""
        return tuple(self.value.split("/")) if self.value else ()

    def contains(self, path: NotePath | FolderPath | str) -> bool:
        """Whether ``path`` lies inside this folder, compared segment by segment.

        ``ab/x.md`` is not inside ``a``.  A folder contains itself and everything below it; the
        root contains everything.  A ``str`` is parsed as a note path first (and raises
        ``PathRejected`` if it is not one), so an unchecked string is never matched by prefix.
        Comparison is exact: case collisions are the store's business (see ``case_key``).
        """
        if isinstance(path, str):
            path = NotePath.parse(path)
        mine = self.parts
        theirs = path.parts
        if isinstance(path, NotePath) and len(theirs) <= len(mine):
            return False
        return theirs[: len(mine)] == mine

    def case_key(self) -> str:
        """Key under which two folders collide on case-insensitive clones."""
        return _caseless_key(self.value)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class AttachmentPath:
    """A safe, normalised path of an attachment (a non-Markdown file): the segment rules of a note
    (normalised, no traversal, no hidden or reserved segment, no control or invisible character), a file name
    with an extension, and not a note (``.md``: read_note serves those).  Whether its type is allowed is the
    policy's call (``attachment_types``), not the path's."""

    value: str

    @classmethod
    def parse(cls, raw: str) -> AttachmentPath:
        """Parse untrusted text into an attachment path, or raise ``PathRejected``."""
        value = FolderPath.parse(raw).value if isinstance(raw, str) and not raw.endswith("/") else ""
        name = value.rsplit("/", 1)[-1]
        stem, dot, ext = name.rpartition(".")
        if not (dot and stem and ext) or name.casefold().endswith(NOTE_SUFFIX):
            raise PathRejected(
                raw if isinstance(raw, str) else repr(raw),
                "path-not-attachment",
                f"{_show(value or str(raw))} is not an attachment's path: name a file with its extension, such "
                "as 'images/diagram.png' (notes, ending in .md, are read with read_note).",
            )
        return cls(value)

    @property
    def name(self) -> str:
        return self.value.rsplit("/", 1)[-1]

    def __str__(self) -> str:
        return self.value


def caseless_key(text: str) -> str:
    """The case-collision key of an already-normalised path or folder (no re-parsing): the one key the
    store's listing (``Listing.collision``), the import and the git door (``sync/incoming``) compare."""
    return _caseless_key(text)


def case_twin(path: str, other: str) -> str | None:
    """The part of ``other`` -- one of its folders (with a ``/`` after it) or the whole path -- that differs
    from the part of ``path`` at the same depth only by case or Unicode form (:func:`caseless_key`), or None
    when the two can stand side by side on a case-insensitive file system (macOS, Windows).

    Compared prefix by prefix from the root: the first prefix spelled differently decides, since below a
    folder spelled differently (and not a twin) nothing can collide.  The git door checks the same thing
    name by name inside each folder a push changes; the key of ``folder/name`` is the folder's key, ``/``
    and the name's key, because no name holding a character whose key has a ``/`` (U+2100, U+FF0F, ...)
    passes the path rules."""
    mine, theirs = path.split("/"), other.split("/")
    for depth in range(min(len(mine), len(theirs))):
        a, b = "/".join(mine[: depth + 1]), "/".join(theirs[: depth + 1])
        if a == b:
            continue
        if _caseless_key(a) != _caseless_key(b):
            return None
        return b if depth == len(theirs) - 1 else b + "/"
    return None


def is_hidden_tree_path(path: str) -> bool:
    """True if any segment of a tree path starts with '.', e.g. ``.obsidian/app.json``, ``.git/config``.

    For walking existing trees (which may hold hidden folders that are left alone), not for
    validating input: use :meth:`NotePath.parse` for that.
    """
    return any(seg.startswith(".") for seg in path.split("/"))


# A one-segment name that every rule accepts as it is: ASCII (so NFC, NFKC and the Unicode tables have
# nothing to say), starting with a letter, digit, '_' or '-' (not hidden, not a traversal, no space or dot
# at either end), and none of '/', '\\', '%', the reserved < > : " | ? * or a control character.  What
# is left to check is a device name, git's short name and the length.  Anything else takes the full check.
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_-](?:[A-Za-z0-9 _.,()'+=&!~-]*[A-Za-z0-9_)-])?")


def _accepted(text: str, kind: str) -> bool:
    """Whether the full check accepts ``text`` unchanged (already in normal form)."""
    if (
        len(text) <= MAX_SEGMENT_BYTES
        and _PLAIN_NAME.fullmatch(text)
        and text.split(".", 1)[0].rstrip(" ").casefold() not in _WINDOWS_DEVICE_NAMES
        and not _GIT_SHORT_NAME.fullmatch(text.casefold())
    ):
        return kind != "note" or text.endswith(NOTE_SUFFIX)
    try:
        return _normalise(text, kind) == text
    except PathRejected:
        return False


@lru_cache(maxsize=8192)
def _folder_accepted(folder: str) -> bool:
    """``_accepted(folder, "folder")``, remembered: an import or a listing parses thousands of paths under the
    same few hundred folders.  Bounded, so a long-running server's cache cannot grow with every folder."""
    return _accepted(folder, "folder")


def _accepted_as_is(raw: object, kind: str) -> bool:
    """True only when ``_normalise(raw, kind)`` would return ``raw`` itself (so it need not run): its folder
    accepted as a folder path (remembered per folder), its last segment as a one-segment path of ``kind``,
    and the whole at most ``MAX_PATH_BYTES``.  The split is exact for the reasons :class:`TreePaths` gives
    (every rule is per character, per segment, or on the whole path's start and length); False sends the
    path to the full check, which then names the rule.  tests/vault/test_paths_parse_fast.py holds it to
    the full check."""
    if not isinstance(raw, str) or not raw:
        return False
    folder, slash, leaf = raw.rpartition("/")
    if slash and not (folder and _folder_accepted(folder)):
        return False
    if not _accepted(leaf, kind):
        return False
    return len(raw) * 4 <= MAX_PATH_BYTES or _utf8_len(raw) <= MAX_PATH_BYTES


class TreePaths:
    """Classify the paths of one tree walk as the full checks would, checking each folder once.

    ``kind(path)`` is ``"note"`` exactly when ``NotePath.parse(path).value == path`` (and the path is not
    hidden), ``"attachment"`` exactly when ``AttachmentPath.parse(path).value == path`` for a non-``.md``
    path, else ``None`` (hidden, refused, or in another normal form).  Why it may split the work: every
    check is either per character, per segment, or on the whole path's start and length; NFC and NFKC
    never act across ``/`` (a stable code point), and a percent-escape cannot span one.  So a path is
    accepted unchanged iff its folder is (as a folder path), its last segment is (as a one-segment note
    or attachment path), and the whole is at most ``MAX_PATH_BYTES``.  The folder's verdict is cached, so
    a listing of N files under F folders does F folder checks and N short leaf checks instead of N full
    ones.  tests/vault/test_paths_tree.py holds it to the full check.  One instance per walk (the cache
    grows with the tree's folders)."""

    __slots__ = ("_folders",)

    def __init__(self) -> None:
        self._folders: dict[str, bool] = {}

    def kind(self, path: str) -> str | None:
        folder, slash, leaf = path.rpartition("/")
        if slash:
            ok = self._folders.get(folder)
            if ok is None:
                ok = self._folders[folder] = bool(folder) and _accepted(folder, "folder")
            if not ok:
                return None
        if leaf.endswith(NOTE_SUFFIX):
            if not _accepted(leaf, "note"):
                return None
            kind = "note"
        else:
            stem, dot, ext = leaf.rpartition(".")
            if not (dot and stem and ext) or leaf.casefold().endswith(NOTE_SUFFIX) or not _accepted(leaf, "folder"):
                return None
            kind = "attachment"
        if len(path) * 4 > MAX_PATH_BYTES and _utf8_len(path) > MAX_PATH_BYTES:  # at most 4 bytes a character
            return None
        return kind
