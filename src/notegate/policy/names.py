"""What a name is taken for: instruction files (``CLAUDE.md`` and its case, look-alike and Windows spellings)
and hidden names (``.git``, ``OBSIDI~1``), compared as the file systems of the clones compare them.

Why a module of its own: the note door (:func:`decide_name`), the git door (:func:`is_hidden_segment`) and
the policy's own route checks (:meth:`~notegate.policy.settings.Policy.names_instruction_file`) must fold a
name the same way, so the folds live once, below all three. The per-segment folds are remembered (bounded
``lru_cache``); tests patch them here, where they are looked up.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from notegate.policy.decision import Decision, allow, deny
from notegate.safety.names import fold_name

if TYPE_CHECKING:
    from notegate.policy.settings import Policy


_SHORT_NAME = re.compile(r"([a-z0-9]{1,6})~[0-9]{1,6}(?:\.([a-z0-9]{1,3}))?\Z")


# The per-segment folds below are pure functions of one name; a write's path repeats its folders' names, so
# they are remembered (bounded: a server's caches do not grow with every name it ever sees).  The verdicts
# built on them are unchanged.
@lru_cache(maxsize=8192)
def _plain_fold(name: str) -> str:
    """NFKC and case folding, then the NTFS aliases: a stream suffix (``::$DATA``) and trailing dots and
    spaces name the same file."""
    return unicodedata.normalize("NFKC", name).casefold().split(":", 1)[0].rstrip(". ")


@lru_cache(maxsize=8192)
def _name_key(name: str) -> str:
    """A file name as a case-insensitive, look-alike-blind file system resolves it (the floor's skeleton)."""
    return fold_name(_plain_fold(name)).rstrip(". ")


@lru_cache(maxsize=64)
def _instruction_keys(instruction_files: tuple[str, ...]) -> tuple[dict[tuple[str, ...], str], tuple[str, ...]]:
    """Instruction files as tuples of segment keys, and their plain folded last names (for 8.3 names)."""
    keys: dict[tuple[str, ...], str] = {}
    for entry in instruction_files:
        keys.setdefault(tuple(_name_key(seg) for seg in entry.split("/") if seg), entry)
    return keys, tuple(_plain_fold(entry.rsplit("/", 1)[-1]) for entry in instruction_files)


@lru_cache(maxsize=64)
def _instruction_runs(
    instruction_files: tuple[str, ...],
) -> tuple[tuple[int, dict[tuple[str, ...], tuple[int, str]]], ...]:
    """The entries' runs of segment keys grouped by length: (length, {keys: (order in the list, entry)})."""
    keys, _ = _instruction_keys(instruction_files)
    groups: dict[int, dict[tuple[str, ...], tuple[int, str]]] = {}
    for order, (entry_keys, entry) in enumerate(keys.items()):
        groups.setdefault(len(entry_keys), {})[entry_keys] = (order, entry)
    return tuple(sorted(groups.items()))


@lru_cache(maxsize=8192)
def _short_name_of(segment: str, instruction_files: tuple[str, ...]) -> str | None:
    """An 8.3 short name (``CLAUDE~1.MD``) that Windows could resolve to an instruction file's long name."""
    match = _SHORT_NAME.match(_plain_fold(segment))
    if not match:
        return None
    stem, ext = match.group(1), match.group(2) or ""
    _, long_names = _instruction_keys(instruction_files)
    for entry, long_name in zip(instruction_files, long_names, strict=True):
        long_stem, _, long_ext = (
            long_name.lstrip(".").rpartition(".") if "." in long_name.lstrip(".") else (long_name.lstrip("."), "", "")
        )
        compact = re.sub(r"[^a-z0-9]", "", long_stem)
        if compact.startswith(stem) and long_ext.startswith(ext):
            return entry
    return None


def instruction_file_named(instruction_files: tuple[str, ...], path: str) -> str | None:
    """The instruction file ``path`` (or one of its folders) would be taken for, or None.

    On a case-insensitive clone (macOS, Windows) ``inbox/handoffs/claude.md`` *is* ``CLAUDE.md`` to an agent
    working there, so segments are compared after case folding, the floor's skeleton (``ＣＬＡＵＤＥ``,
    Cyrillic look-alikes) and the NTFS alias rules (trailing dots or spaces, streams, 8.3 short names).
    A one-segment entry (``CLAUDE.md``) matches any segment; a longer one (``.junie/guidelines.md``) matches
    the same run of segments anywhere in the path.
    """
    files = tuple(instruction_files)
    by_length = _instruction_runs(files)
    segments = [seg for seg in path.split("/") if seg]
    folded = [_name_key(seg) for seg in segments]
    for i in range(len(folded)):
        # the first entry, in the list's order, whose run of keys starts here: one lookup per entry length
        # instead of one comparison per entry
        found = [hit for n, runs in by_length if (hit := runs.get(tuple(folded[i : i + n]))) is not None]
        if found:
            return min(found)[1]
        short = _short_name_of(segments[i], files)
        if short is not None:
            return short
    return None


def decide_name(policy: Policy, path: str) -> Decision:
    """No write, by any tier through any door, creates a file an agent would load as its instructions."""
    entry = instruction_file_named(policy.instruction_files, path)
    if entry is None:
        return allow("name")
    return deny(
        "instruction-file-name",
        f"{path} would be taken for the instruction file '{entry}' by an agent working in a clone (names are "
        "compared ignoring case, look-alike letters and Windows aliases).",
    )


#: Hidden names whose Windows 8.3 short names (``OBSIDI~1``, ``MCP~1.JSO``) alias them on an NTFS clone;
#: ``git~1`` (``.git``) is the one git itself refuses (CVE-2019-1353).
HIDDEN_SHORT_NAMES = (
    ".git",
    ".gitmodules",
    ".gitattributes",
    ".gitignore",
    ".obsidian",
    ".claude",
    ".github",
    ".mcp.json",
    ".cursor",
    ".vscode",
    ".trash",
)


def _short_name_aliases(plain: str, long_names: Iterable[str]) -> bool:
    """Could the 8.3 short name ``plain`` (already folded) be Windows' alias of one of ``long_names``?"""
    match = _SHORT_NAME.match(plain)
    if not match:
        return False
    stem, ext = match.group(1), match.group(2) or ""
    for name in long_names:
        long = name.lstrip(".")
        long_stem, _, long_ext = long.rpartition(".") if "." in long else (long, "", "")
        if re.sub(r"[^a-z0-9]", "", long_stem).startswith(stem) and long_ext.startswith(ext):
            return True
    return False


def is_hidden_segment(segment: str) -> bool:
    """Would a file system or a tool take ``segment`` for a hidden name (one starting with ``.``)?

    Compared as the instruction-file check compares names (:func:`_plain_fold`): NFKC (a fullwidth or
    small full stop is a dot), case folding, the NTFS aliases (a stream suffix, trailing dots and spaces),
    and leading whitespace dropped; and the 8.3 short names of :data:`HIDDEN_SHORT_NAMES`."""
    plain = _plain_fold(segment).lstrip()
    return plain.startswith(".") or _short_name_aliases(plain, HIDDEN_SHORT_NAMES)


def _is_gitmodules(segment: str) -> bool:
    """``.gitmodules`` in any case or NTFS spelling (its 8.3 names are refused as hidden paths)."""
    return _plain_fold(segment).lstrip() == ".gitmodules"
