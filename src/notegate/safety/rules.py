"""The rule engine the gates share: a rule is a pattern over a view plus a check; a finding says where, never what.

Theory of operation
-------------------
A :class:`Rule` is a regex over a view (``view.text``, or ``view.lower`` for ASCII case-blind rules) and an
optional check that turns a match into zero or more hits; :func:`run_rules` maps each hit back to the
original text. Every rule starts with a literal, so ``re`` skips ahead with a substring search.

Why its own module: the credential scanner and the content gates define different rules but run them the
same way, report them the same way, and share the word-boundary and placeholder tests; none of that is
specific to credentials.

Invariants
1. Pure: no I/O, no mutable global state.
2. A :class:`Finding` carries gate, kind and positions in the ORIGINAL text (plus 1-based line/column
   there), never the matched value; :func:`describe` prints kind and position only.
3. :func:`run_rules` is deterministic: findings are de-duplicated and sorted by (start, end, gate, kind).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from notegate.safety.textview import NormalisedText

__all__ = [
    "PLACEHOLDER",
    "Check",
    "Finding",
    "Hit",
    "Rule",
    "describe",
    "is_word_char",
    "left_ok",
    "right_ok",
    "run_rules",
]


@dataclass(frozen=True)
class Finding:
    """One hit: which gate, what kind, where in the ORIGINAL text.  Never the value.

    ``line`` and ``col`` (1-based, in the original text) are filled in by the scanners so that
    :func:`describe` can be called without the text; 0 means "not known".
    """

    gate: str
    kind: str
    start: int
    end: int
    line: int = 0
    col: int = 0


def describe(f: Finding) -> str:
    """Human/model-readable location of a finding: gate, kind and position, never the value."""
    if f.line:
        return f"{f.gate} ({f.kind}) at line {f.line}, col {f.col}"
    return f"{f.gate} ({f.kind}) at offset {f.start}"


Hit = tuple[str, int, int]
Check = Callable[[NormalisedText, "re.Match[str]", str], Iterable[Hit]]


@dataclass(frozen=True)
class Rule:
    """A pattern over the view (``lowered`` → over ``view.lower``) and a check turning a match into hits."""

    gate: str
    kind: str
    pattern: re.Pattern[str]
    check: Check | None = None
    lowered: bool = False


def run_rules(view: NormalisedText, rules: Iterable[Rule]) -> list[Finding]:
    """Apply rules to a view; return de-duplicated findings in original positions, sorted."""
    hits: set[tuple[int, int, str, str]] = set()
    for rule in rules:
        haystack = view.lower if rule.lowered else view.text
        for m in rule.pattern.finditer(haystack):
            found = rule.check(view, m, rule.kind) if rule.check is not None else ((rule.kind, *m.span()),)
            for kind, start, end in found:
                first, last = view.span(start, end)
                hits.add((first, last, rule.gate, kind))
    out = []
    for start, end, gate, kind in sorted(hits):
        line, col = view.line_col(start)
        out.append(Finding(gate, kind, start, end, line, col))
    return out


# --------------------------------------------------------------------------------------------
# Shared value tests (every gate's checks)
# --------------------------------------------------------------------------------------------


def is_word_char(ch: str) -> bool:
    """Letters, digits and underscore: what may not touch a token on either side."""
    return ch.isalnum() or ch == "_"


def left_ok(s: str, i: int) -> bool:
    """True when position ``i`` starts a token (nothing word-like right before it)."""
    return i == 0 or not is_word_char(s[i - 1])


def right_ok(s: str, i: int) -> bool:
    """True when position ``i`` ends a token (nothing word-like at it)."""
    return i >= len(s) or not is_word_char(s[i])


#: Values that are obviously not secrets: templates, masks, and the words docs use instead.
PLACEHOLDER = re.compile(
    r"x{4,}|\*{3,}|\.{3}|…|<|>|\{\{|\$\{|%\(|%s\b"
    r"|example|placeholder|redacted|changeme|change[_-]me|dummy|sample|fake|not[_-]?a[_-]?real"
    r"|your[_-]?(?:own[_-]?)?(?:api[_-]?)?(?:key|token|secret|pass)",
    re.IGNORECASE,
)


def describe_where(finding: Finding, scanned: str, new_at: int, own_at: int) -> str:
    """Where a credential is, in words the caller can act on. ``scanned`` is what was scanned: the seam
    (the note's end, for an append) up to ``new_at``, then the new text, whose caller's own words begin at
    ``own_at``. A position inside those words is counted from their start; one in what the server added
    before them (an inbox item's title) is said to be in the item; one that starts in the note's end is
    said to be where the text joins it."""
    if own_at == 0:
        return describe(finding)  # the text is all the caller's: the scanner's position is already in it
    label = f"{finding.gate} ({finding.kind})"
    if finding.start < new_at:
        return f"{label} where your text joins the end of the note"
    if finding.start < own_at:
        if new_at:
            return f"{label} in the item, before your text"
        return f"{label} in the item, before your text (at line {finding.line}, col {finding.col} of the item)"
    line_start = scanned.rfind("\n", own_at, finding.start) + 1 or own_at
    line = scanned.count("\n", own_at, finding.start) + 1
    return f"{label} at line {line}, col {finding.start - line_start + 1} of your text"
