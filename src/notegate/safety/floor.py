"""The floor: checks in code that hold an inbox item whatever any model or reviewer says.

Theory of operation
-------------------
An inbox item is held when its text or its path contains a character that can hide or reorder what a reader
sees (invisible, control, bidi, tag, stray variation selector, private-use, unassigned, line/paragraph
separator, ANSI escape, bare CR, blank-rendering space, a flood of stacked marks), or when either names a
file that coding agents load as instructions (CLAUDE.md, AGENTS.md, ...). The floor only ever says
"hold"; it never edits text and never says "promote".

This module is the verdict: it runs the scans and turns their findings into at most ``MAX_REASONS``
reasons. The scans live where their rules do:

1. **Characters** and 2. **floods** of stacked marks: :mod:`notegate.safety.floor_chars` (the character
   rules, their allowed contexts and why), over the original text, so every position is an exact index
   into what the caller sent.
3. **Names**: :mod:`notegate.safety.names` (look-alike folding and the instruction-file search), over the
   original text too.
4. **Rendered views.** When the original names no file, the name search runs again on what a Markdown/HTML
   reader and a shell make of the text (:mod:`notegate.safety.rendered`: tags, comments, entities, escapes,
   emphasis, links, quotes, backslashes, one line break). That reason has no position.

Invariants
----------
* Pure: imports only the standard library's ``dataclasses``, ``typing``, ``collections.abc`` and the floor's
  own modules; a test checks this with ``ast``.
* Total: every ``str`` (lone surrogates included) gets a verdict. Only caller errors raise: a non-``str``
  argument, or an instruction-file name whose fold is empty or not ASCII (a policy mistake that
  :func:`notegate.safety.names.validate_instruction_files` reports at start-up).
* Deterministic: the verdict depends only on the arguments.
* Bounded and inert output: at most ``MAX_REASONS`` reasons, every rule that fired is among them, the rest
  are counted in ``omitted``; reason text is ASCII and never echoes the item's characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from notegate.safety.floor_chars import Finding, Scan, describe_char, scan_chars, scan_floods
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES, name_hits, normalise_names
from notegate.safety.rendered import rendered_views

__all__ = [
    "MAX_REASONS",
    "RULES",
    "FloorVerdict",
    "HoldReason",
    "check_item",
    "check_text",
    "mentions_instruction_file",
]

MAX_REASONS = 20
"""At most this many reasons are listed per verdict; the rest are counted in ``FloorVerdict.omitted``."""

RULES: tuple[str, ...] = (
    "ansi-escape",
    "line-separator",
    "control-char",
    "bidi-control",
    "tag-char",
    "variation-selector",
    "private-use",
    "blank-char",
    "invisible-char",
    "unassigned",
    "instruction-file",
    "instruction-file-path",
    "combining-flood",
)
"""Every rule name a reason can carry."""

Where = Literal["text", "path"]


@dataclass(frozen=True)
class HoldReason:
    """Why an item is held: the rule, what was found, and where.

    ``position`` is a code-point index into the original text (or path, when ``where == "path"``);
    ``line`` and ``column`` are 1-based and given for text positions.
    """

    rule: str
    detail: str
    codepoint: str | None
    position: int | None
    line: int | None = None
    column: int | None = None
    where: Where = "text"

    def as_text(self) -> str:
        """One ASCII line, e.g. ``invisible-char: U+200B ZERO WIDTH SPACE at 12 (line 1, col 13)``."""
        parts = [f"{self.rule}:"]
        if self.codepoint is not None:
            parts.append(self.codepoint)
        parts.append(self.detail)
        if self.position is not None:
            if self.where == "path":
                parts.append(f"in path at {self.position}")
            elif self.line is not None:
                parts.append(f"at {self.position} (line {self.line}, col {self.column})")
            else:
                parts.append(f"at {self.position}")
        return " ".join(parts)


@dataclass(frozen=True)
class FloorVerdict:
    """The floor's answer for one item: held when there is any reason."""

    reasons: tuple[HoldReason, ...]
    omitted: int = 0

    @property
    def held(self) -> bool:
        """True when the item must stay in the inbox."""
        return bool(self.reasons)

    @property
    def verdict(self) -> Literal["pass", "hold"]:
        """The word the CLI and the review queue print."""
        return "hold" if self.reasons else "pass"

    def to_json(self) -> dict[str, object]:
        """``{"verdict": ..., "reasons": [...]}``; a last line says how many reasons were not listed."""
        lines = [r.as_text() for r in self.reasons]
        if self.omitted:
            lines.append(f"... and {self.omitted} more reasons not listed")
        return {"verdict": self.verdict, "reasons": lines}


def _scan_names(text: str, names: tuple[str, ...], order: int, limit: int) -> Scan:
    """Instruction-file names in ``text``, positions indexing the original text."""
    if not names:
        return Scan([], {}, 0)
    rule = "instruction-file" if order < 2 else "instruction-file-path"
    hits = name_hits(text, names)
    first = [Finding(order, start, rule, None, names[index]) for start, index in hits[:limit]]
    return Scan(first, {rule: first[0]} if first else {}, len(hits))


# --------------------------------------------------------------------------------------------------------
# Verdicts
# --------------------------------------------------------------------------------------------------------


def _select(scans: Iterable[Scan], limit: int) -> tuple[list[Finding], int]:
    """The first ``limit`` findings, making room for the first finding of every rule; and the total count.

    Listing every rule that fired matters more than listing the 20th zero-width space: the owner reading
    the hold needs to see each kind of problem. Scans arrive in report order (text, then path).
    """
    kept: list[Finding] = []
    extra: dict[str, Finding] = {}
    total = 0
    for scan in scans:
        total += scan.total
        kept.extend(scan.first[: max(0, limit - len(kept))])
        for rule, finding in scan.first_of_rule.items():
            extra.setdefault(rule, finding)
    seen = {f.rule for f in kept}
    missing = [f for rule, f in extra.items() if rule not in seen]
    for f in missing:
        counts: dict[str, int] = {}
        for k in kept:
            counts[k.rule] = counts.get(k.rule, 0) + 1
        drop = max(i for i, k in enumerate(kept) if counts[k.rule] > 1)
        kept[drop] = f
    kept.sort(key=lambda f: (f.order, f.position))
    return kept, total


def _line_columns(text: str, positions: Iterable[int]) -> dict[int, tuple[int, int]]:
    """1-based (line, column) of each position, counting newlines once from left to right."""
    out: dict[int, tuple[int, int]] = {}
    line, line_start, scanned = 1, 0, 0
    for pos in sorted(set(positions)):
        newlines = text.count("\n", scanned, pos)
        if newlines:
            line += newlines
            line_start = text.rfind("\n", scanned, pos) + 1
        scanned = pos
        out[pos] = (line, pos - line_start + 1)
    return out


def _reasons(selected: list[Finding], text: str, path: str | None) -> tuple[HoldReason, ...]:
    """Turn the selected findings into reasons, with line and column for positions in the text."""
    where_of: dict[int, Where] = {0: "text", 1: "text", 2: "path", 3: "path"}
    lines = _line_columns(text, (f.position for f in selected if where_of[f.order] == "text"))
    out: list[HoldReason] = []
    for f in selected:
        where = where_of[f.order]
        source = text if where == "text" else (path or "")
        if f.codepoint is None:
            name = f.note.encode("ascii", "backslashreplace").decode("ascii")
            detail, codepoint = (f"path names {name}" if where == "path" else f"names {name}"), None
        else:
            detail, codepoint = describe_char(f, source), f"U+{f.codepoint:04X}"
        if where == "text":
            line, column = lines[f.position]
            out.append(HoldReason(f.rule, detail, codepoint, f.position, line, column))
        else:
            out.append(HoldReason(f.rule, detail, codepoint, f.position, where="path"))
    return tuple(out)


def _require_str(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be str, got {type(value).__name__}")
    return value


def check_text(text: str) -> tuple[HoldReason, ...]:
    """Held characters of ``text`` only (no name check), at most ``MAX_REASONS`` of them."""
    _require_str(text, "text")
    selected, _ = _select([scan_chars(text, 0, MAX_REASONS), scan_floods(text, 0, MAX_REASONS)], MAX_REASONS)
    return _reasons(selected, text, None)


def mentions_instruction_file(
    text: str, instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES
) -> tuple[HoldReason, ...]:
    """Places where ``text`` names an instruction file, in any look-alike spelling, at most ``MAX_REASONS``."""
    _require_str(text, "text")
    names = normalise_names(instruction_files)
    selected, _ = _select([_scan_names(text, names, 1, MAX_REASONS)], MAX_REASONS)
    return _reasons(selected, text, None)


_RENDERED_NAME = HoldReason(
    rule="instruction-file",
    detail="names an instruction file once rendered or resolved (tags, comments, entities, escapes, emphasis, "
    "links, quotes, backslashes or a line break split the name)",
    codepoint=None,
    position=None,
)


def check_item(
    text: str,
    path: str | None = None,
    instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES,
    *,
    encoding_mark: bool = False,
) -> FloorVerdict:
    """The floor's verdict on one inbox item: its body ``text`` and, when given, its vault ``path``.

    ``encoding_mark``: ``text`` is a whole file's content, so one U+FEFF at offset 0 is its UTF-8 byte order
    mark, an encoding mark rather than a hidden character, and is not held; any other U+FEFF (a second one
    at the start included) still is.  Text a caller sent (an inbox item) has no such mark: off by default."""
    _require_str(text, "text")
    if path is not None:
        _require_str(path, "path")
    names = normalise_names(instruction_files)
    start = 1 if encoding_mark and text.startswith("\ufeff") else 0
    scans = [scan_chars(text, 0, MAX_REASONS, start), scan_floods(text, 0, MAX_REASONS)]
    scans.append(_scan_names(text, names, 1, MAX_REASONS))
    if path is not None:
        scans += [scan_chars(path, 2, MAX_REASONS), scan_floods(path, 2, MAX_REASONS)]
        scans.append(_scan_names(path, names, 3, MAX_REASONS))
    selected, total = _select(scans, MAX_REASONS)
    reasons = _reasons(selected, text, path)
    omitted = total - len(selected)
    if names and not any(r.rule.startswith("instruction-file") for r in reasons):
        reader, shell = rendered_views(text)
        views = reader if reader == shell else f"{reader}\n\n{shell}"
        if views != text and name_hits(views, names):
            if len(reasons) >= MAX_REASONS:  # keep the cap: the rendered finding replaces the last listed one
                reasons, omitted = reasons[: MAX_REASONS - 1], omitted + len(reasons) - MAX_REASONS + 1
            reasons = (*reasons, _RENDERED_NAME)
    return FloorVerdict(reasons, omitted)
