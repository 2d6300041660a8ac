"""The parts of a note search tells apart: its title, aliases, headings, tags and language (pure).

Why apart from the body: a note whose name, alias or heading is what a person typed is the note they meant,
and must outrank a long note that merely mentions the words (issue 33); and a hit says which part matched,
so the caller knows why it was found.  The store indexes each part as its own weighted field
(``vault/query.py`` FIELDS) and looks exact names up in ``vault/names.py``.

Front matter is read leniently, in one pass over its lines: ``key: a``, ``key: [a, b]`` or ``- a`` items under
``key:``.  Why not ``split_front_matter``: it refuses what it cannot round-trip, and search should still see
the aliases of a hand-written note whose front matter also holds a nested map.  What it does not understand
it skips.  Everything here is linear in the note's text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from notegate.vault.frontmatter import front_matter_end

#: The parts a hit can have matched in, in the order they are looked at (``Hit.part``).  Another way of finding
#: a note adds its own value to the MCP door's ``Part`` (a hit found by meaning says "meaning").
PARTS = ("title", "alias", "heading", "tag", "body")
_H1 = re.compile(r"^# +(.+?)\s*$", re.MULTILINE)
#: :data:`_H1` after the first line: a pattern starting with the literal ``\n#`` (scanned for at C speed, not
#: tried at every position of the note's top).
_H1_AFTER_NL = re.compile(r"\n# +(.+?)\s*$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
#: :data:`_HEADING` over ``"\n" + body``: the same headings (every line start is then after a newline), but a
#: pattern that starts with the literal ``\n#`` is scanned for at C speed, not tried at every position (~4x).
_HEADING_AFTER_NL = re.compile(r"\n#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_INLINE_TAG = re.compile(r"#([^\W\d][\w/-]*)")  # after white space, '(' or '[' (checked: a lookbehind was 30x slower)
#: The front matter properties read (lower case): a note's other names, its tags, its language.
_BEFORE_TAG = frozenset(" \t\n\r([")
_KEYS = {"aliases": "aliases", "alias": "aliases", "tags": "tags", "tag": "tags", "lang": "lang", "language": "lang"}
_TITLE_CHARS = 4000  # the first heading is looked for this far into a note (a title stands at its top)


@dataclass(frozen=True)
class NoteFields:
    name: str  # the file name without its extension
    heading: str  # the first level-one heading ('' when none)
    aliases: tuple[str, ...]
    headings: str  # every heading, one a line
    tags: str  # front matter and inline tags, space-separated, without '#'
    lang: str  # the front matter's language code or name, as written ('' when none)

    @property
    def title(self) -> str:
        """What the title field holds: the file name and the first heading."""
        return f"{self.name} {self.heading}" if self.heading else self.name


def _scalar(raw: str) -> str:
    raw = raw.strip()
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        raw = raw[1:-1]
    return raw.strip()


def properties(text: str, end: int | None = None) -> dict[str, list[str]]:
    """The front matter's aliases, tags and language (keys ``aliases``, ``tags``, ``lang``), read leniently
    (``end``: where the front matter ends, when the caller has it)."""
    end = front_matter_end(text) if end is None else end
    found: dict[str, list[str]] = {}
    if not end:
        return found
    key = ""
    for line in text[4:end].split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("- ") and key:
            value = _scalar(stripped[2:])
            if value:
                found.setdefault(key, []).append(value)
            continue
        name, colon, rest = line.partition(":")
        key = _KEYS.get(name.strip().lower(), "") if colon and not line[:1].isspace() else ""
        rest = rest.strip()
        if not key or not rest:
            continue
        if rest.startswith("[") and rest.endswith("]"):
            found.setdefault(key, []).extend(v for v in (_scalar(x) for x in rest[1:-1].split(",")) if v)
        else:
            found.setdefault(key, []).append(_scalar(rest))
    return found


def _headings(body: str) -> str:
    """Every heading of ``body``, one a line (:data:`_HEADING_AFTER_NL`)."""
    return "\n".join(_HEADING_AFTER_NL.findall("\n" + body)) if "#" in body else ""


def _tags(props: dict[str, list[str]], body: str) -> str:
    """Front matter and inline tags, space-separated, without '#', each once."""
    tags = [t.lstrip("#") for t in props.get("tags", [])]
    if "#" in body:
        tags += [m.group(1) for m in _INLINE_TAG.finditer(body) if m.start() == 0 or body[m.start() - 1] in _BEFORE_TAG]
    return " ".join(dict.fromkeys(tags))


def _title(path: str, text: str) -> tuple[str, str]:
    """The file name without its extension, and the first level-one heading ('' when none)."""
    name = path.rsplit("/", 1)[-1].removesuffix(".md").removesuffix(".canvas")
    head = text[:_TITLE_CHARS]
    first = _H1.match(head) or _H1_AFTER_NL.search(head)  # _H1.search(head): its first line, then the rest
    return name, first.group(1) if first else ""


def note_fields(path: str, text: str) -> NoteFields:
    end = front_matter_end(text)
    props = properties(text, end) if end else {}
    name, heading = _title(path, text)
    body = text[end:]
    return NoteFields(
        name=name,
        heading=heading,
        aliases=tuple(props.get("aliases", ())),
        headings=_headings(body),
        tags=_tags(props, body),
        lang=(props.get("lang") or [""])[0],
    )


def part_of(path: str, text: str, hits: re.Pattern[str] | None, end: int | None = None) -> str:
    """``matched_part(note_fields(path, text), hits)``, each part read only when the parts before it did not
    match.  Why: a search asks this of each of its hits, and a common word is rarely in a title, so every
    hit's headings and tags were read in full (half of a common-word search's CPU); the title and aliases
    cost a few hundred characters, and most hits stop there or at the headings.  ``end``: where the front
    matter ends, when the caller has it (a search's snippet needed it too)."""
    if hits is None:
        return "body"
    name, heading = _title(path, text)
    if hits.search(f"{name} {heading}" if heading else name) is not None:
        return "title"
    end = front_matter_end(text) if end is None else end
    # The front matter is read only when a hit is in it: an alias or a tag there is a piece of its text
    # whose neighbours there are never word characters (spaces, quotes, brackets, commas, '#', line ends),
    # so a hit in the piece is a hit in the whole at the same place.  Most hits' front matter holds none.
    keys = text[:end].lower() if end and hits.search(text, 0, end) is not None else ""
    props = properties(text, end) if "alias" in keys else {}  # read when a key could name aliases
    aliases = "\n".join(props.get("aliases", ()))
    if aliases and hits.search(aliases) is not None:
        return "alias"
    body = text[end:]
    if "#" in body and _a_heading_holds(body, hits):
        return "heading"
    if not props and "tag" in keys:  # the front matter's tags, read only now
        props = properties(text, end)
    if any(hits.search(tag) is not None for tag in _tag_list(props, body)):
        return "tag"
    return "body"


def _a_heading_holds(body: str, hits: re.Pattern[str]) -> bool:
    """``hits.search(_headings(body))`` found something: each heading looked at in turn, stopping at the first
    that holds a hit, the body not copied.  Why: a common word is in an early heading of most notes, and
    reading all of a long note's headings first was most of its part's cost.  The same answer: a hit is word
    characters (or a script's own characters) only, so it never spans the newline that joins two headings."""
    first = _HEADING.match(body)  # the first line (``_headings`` reads it after the "\n" it adds)
    if first is not None and hits.search(first.group(1)) is not None:
        return True
    return any(hits.search(m.group(1)) is not None for m in _HEADING_AFTER_NL.finditer(body))


def _tag_list(props: dict[str, list[str]], body: str) -> Iterator[str]:
    """:func:`_tags`'s tags one by one, lazily (repeats included: a hit's part only asks whether one holds a hit)."""
    for tag in props.get("tags", []):
        yield tag.lstrip("#")
    if "#" in body:
        for m in _INLINE_TAG.finditer(body):
            if m.start() == 0 or body[m.start() - 1] in _BEFORE_TAG:
                yield m.group(1)


def matched_part(fields: NoteFields, hits: re.Pattern[str] | None) -> str:
    """The first part, in :data:`PARTS` order, that holds a word of the query or one of its forms: what a
    caller is told about why the note was found.  ``hits``: the search's one pattern of its words."""
    if hits is not None:
        values = (fields.title, "\n".join(fields.aliases), fields.headings, fields.tags)
        for part, value in zip(PARTS, values, strict=False):
            if value and hits.search(value) is not None:
                return part
    return "body"
