"""A test oracle: the credential scan and the floor's name search as they were before they were made cheaper
per byte (main at 39ae21d).

Only the functions that changed are frozen here, copied verbatim: ``joined`` (one regex tried at every
position, a Python loop over every line break and the breakpoints always built), ``_encoded_blocks``
(base64 pieces found by a look-behind regex), the floor's ``rendered_views`` (class regexes) and
``name_hits`` (the full prefilter on every text).  Everything else the old code called is unchanged and is
imported from the package, so :func:`old_scan_credentials` is the old scan, not a re-implementation.
``tests/safety/test_gates_equivalence.py`` compares the new scan with it on generated hostile texts and on
every corpus; this module is not part of the product and nothing in ``src`` may import it.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Iterator

from notegate.safety import secrets as S
from notegate.safety.names import _name_matcher
from notegate.safety.rendered import _LINK_TARGET, _MD_ESCAPE, _TAG, _strip_comments
from notegate.safety.rules import Finding, run_rules
from notegate.safety.textview import _BREAK, _TOKEN_HEAD, Edit, NormalisedText, derive, normalise, rendered
from notegate.safety.unicode_tables import DOT_LOOKALIKES


def old_joined(view: NormalisedText) -> NormalisedText:
    """textview.joined before: every break found by ``_BREAK``, blanks walked back, then :func:`derive`."""
    text = view.text
    edits: list[Edit] = []
    floor = 0
    for m in _BREAK.finditer(text):
        start = m.start()
        stop = max(floor, start - 64)
        while start > stop and text[start - 1] in " \t":
            start -= 1
        edits.append((start, m.end(), " " if _TOKEN_HEAD.match(text, m.end()) else ""))
        floor = m.end()
    return derive(view, edits)


def old_encoded_blocks(text: str) -> Iterator[tuple[int, int, str]]:
    """secrets._encoded_blocks before: pieces from ``_B64_PIECE.finditer``."""
    start = end = -1
    parts: list[str] = []
    for m in S._B64_PIECE.finditer(text):
        if parts and S._PIECE_GAP.fullmatch(text, end, m.start()) and not parts[-1].endswith("="):
            parts.append(m.group())
            end = m.end()
            continue
        if parts:
            yield start, end, "".join(parts)
        start, end, parts = m.start(), m.end(), [m.group()]
    if parts:
        tail = S._B64_TAIL.match(text, end)
        if tail is not None and not parts[-1].endswith("="):
            parts.append(tail.group(1))
            end = tail.end(1)
        yield start, end, "".join(parts)


def _old_encoded_findings(view: NormalisedText) -> list[Finding]:
    text = view.text
    found: list[Finding] = []
    spans: list[tuple[int, int, str]] = []
    decoded: list[str] = []
    offsets: list[int] = []
    size = 0
    for start, end, run in old_encoded_blocks(text):
        if len(run) < S.MIN_ENCODED:
            continue
        for label, data in S._decodings(run):
            if S._der_private_key(data) or data.startswith(S._OPENSSH_MAGIC):
                found.append(S._finding(view, "private-key", start, end))
                continue
            plain = S._printable(data)
            if plain is not None and len(plain) >= 16:
                offsets.append(size)
                spans.append((start, end, label))
                decoded.append(plain)
                size += len(plain) + 1
    if decoded:
        for inner in run_rules(normalise("\n".join(decoded)), S.RULES):
            start, end, label = spans[bisect_right(offsets, inner.start) - 1]
            found.append(S._finding(view, f"{label}:{inner.kind}", start, end))
    return found


def old_scan_credentials(text: str) -> list[Finding]:
    """secrets.scan_credentials before (``_read`` + ``scan_view`` with the frozen functions)."""
    view = normalise(text)
    found = run_rules(view, S.RULES)
    shown = rendered(view)
    if shown is not view:
        found.extend(run_rules(shown, S.RULES))
    whole = old_joined(shown)
    if whole is not shown:
        found.extend(run_rules(whole, S._JOINABLE_RULES))
    found.extend(_old_encoded_findings(shown))
    return S._drop_nested(found)


_EMPHASIS = re.compile(r"[*_`~]+")
_BRACKETS_QUOTES = re.compile(r"[\[\]\"']+")
_ONE_LINE_BREAK = re.compile(r"\r?\n[ \t]*+(?!\r?\n)")
_DOT_LOOKALIKE = re.compile(f"[{DOT_LOOKALIKES}]")


def old_rendered_views(text: str) -> tuple[str, str]:
    """``(reader, shell)``: what a Markdown/HTML reader sees, and what a shell or Windows path resolves.

    Both drop HTML comments and tags, decode entities, drop emphasis markers, fold links to their text,
    drop brackets and quotes (``"CLAU""DE.md"``), join a name broken by one line break, and turn dot
    look-alikes into dots. The reader view then applies Markdown backslash escapes and reads any other
    backslash as a path separator (``.cursor\\rules``); the shell view drops every backslash (``C\\LAUDE``,
    line continuations).
    """
    view = _TAG.sub("", _strip_comments(text))
    if "&" in view:
        view = html.unescape(view)
    view = _EMPHASIS.sub("", view)
    view = _LINK_TARGET.sub("", view)
    view = _BRACKETS_QUOTES.sub("", view)
    view = _DOT_LOOKALIKE.sub(".", _ONE_LINE_BREAK.sub("", view))
    if "\\" not in view:
        return view, view
    return _MD_ESCAPE.sub("", view).replace("\\", "/"), view.replace("\\", "")


def old_name_hits(text: str, names: tuple[str, ...]) -> list[tuple[int, int]]:
    """``(start, name_index)`` for every run of ``text`` whose characters fold to a name's skeleton."""
    matcher = _name_matcher(names)
    if matcher.prefilter.search(text) is None:
        return []
    text = text.translate(matcher.table)
    size = len(text)
    reverse: str | None = None
    hits: set[tuple[int, int]] = set()
    for m in matcher.anchor.finditer(text):
        p = m.start()
        first = int(m.lastgroup[1:]) if m.lastgroup else 0
        group = matcher.groups[first]
        candidates = [group] + [g for g in (matcher.groups[i] for i in group.also) if g.forward.match(text, p + 1)]
        for g in candidates:
            if g.backward_any is not None:
                if reverse is None:
                    reverse = text[::-1]
                if not g.backward_any.match(reverse, size - p):
                    continue
            for index, backward in g.names:
                if backward is None:
                    hits.add((p, index))
                    continue
                assert reverse is not None
                back = backward.match(reverse, size - p)
                if back is not None:
                    hits.add((size - back.end(), index))
    return sorted(hits)
