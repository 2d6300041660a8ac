"""A note's Markdown as safe HTML for the owner's console (pure: text and the vault's paths in, HTML out).

Theory of operation.  A note is untrusted text (an inbox item, a model's write, a pushed file), and the
console runs on the owner's origin, so nothing in a note may become markup the note chose:

* markdown-it-py parses CommonMark with ``html=False``: raw HTML in a note is shown as escaped text.
* Every URL the output carries is one this module built or accepted, checked on the final tokens (a core
  rule after parsing, whatever rule made the token): a link is ``http(s)://`` (any other scheme --
  ``javascript:``, ``data:``, ``vbscript:``, ``file:`` -- is dropped by :func:`allowed_link` and the text
  stays plain), or it names a file of the vault and is rewritten to this console's own ``/notes/…`` or
  ``/files/…`` route.  ``//host`` and backslashes count as foreign and are dropped.
* An image is shown only when it is a file of the vault whose policy media type is an image: its ``src``
  is ``/files/<path>`` (same origin, and the CSP says ``img-src 'self'``).  Anything else becomes its alt
  text.  SVG is never an allowed attachment type, so it never renders as an image.
* ``[[Note]]``, ``[[Note|alias]]`` and the embed ``![[file.png]]`` are resolved with Obsidian's rules
  (:func:`notegate.vault.links.resolve`); an unresolved one stays text, marked ``missing``.
* A note embed, ``![[Note]]``, ``![[Note#Heading]]`` or ``![[Note#^block]]``, alone in its paragraph, shows
  that note (or that section) rendered by this same function, inside a marked box: at most
  :data:`MAX_EMBED_DEPTH` deep and :data:`MAX_EMBEDS` per page, never a note already being shown (a cycle
  is a link).  The embedded note is read through ``read``, with the viewer's own visibility.
* Obsidian's own syntax (tables, callouts, highlights, tags, comments, block ids, footnotes, task lists,
  math as text, right-to-left blocks) is :mod:`notegate.doors.web.obsidian`; front matter shows as a table
  of properties.

Linear time: markdown-it's CommonMark rules are linear, the wikilink rule's pattern cannot cross the
``[`` that starts its next attempt, and the final pass visits each token once (tests/web/test_render.py
measures it with tests/support/timing.py).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from notegate.doors.web.obsidian import obsidian_plugin
from notegate.vault.frontmatter import FormatError, split_front_matter
from notegate.vault.links import Link, LinkTargets, resolve

__all__ = ["ALLOWED_SCHEMES", "MAX_EMBEDS", "MAX_EMBED_DEPTH", "allowed_link", "file_url", "note_url", "render_note"]

#: The only URL schemes a rendered note may link to (anything else stays plain text).
ALLOWED_SCHEMES = ("http", "https")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_WIKI = re.compile(r"!?\[\[([^\[\]\n]{1,500})\]\]")
_FRONT_MATTER = re.compile(r"---\r?\n(?:[^\n]*\n){0,200}?---[ \t]*(?:\r?\n|\Z)")
_HEADING = re.compile(r"(#{1,6})[ \t]+(.*?)[ \t#]*$")
#: How deep note embeds nest (Obsidian stops too), and how many one page shows: a vault of notes embedding
#: each other cannot make one page cost more than this many renders.
MAX_EMBED_DEPTH = 3
MAX_EMBEDS = 20
Reader = Callable[[str], str | None]
#: Shows a base (doors/web/bases_view.py) inside a note: (the .base path or None for a ```base block, the
#: view named after ``#``, the block's YAML or None, the embedding note's path) -> HTML.
BaseEmbedder = Callable[[str | None, str, str | None, str], str]


def allowed_link(url: str) -> bool:
    """May a rendered note link to ``url`` as written?  http(s) URLs with a host, and scheme-less
    references to vault files (which the renderer then rewrites); never another scheme, ``//host`` or a
    backslash (which browsers read as ``/``)."""
    url = url.strip()
    if "\\" in url or url.startswith("//") or any(ord(c) < 0x21 for c in url):
        return False
    match = _SCHEME.match(url)
    if match is None:
        return ":" not in url.split("/", 1)[0]  # "a:b/c" is a scheme to some parsers: refuse it
    return match.group(1).lower() in ALLOWED_SCHEMES and url[match.end() :].startswith("//")


def note_url(path: str) -> str:
    return "/notes/" + quote(path, safe="/")


def file_url(path: str) -> str:
    return "/files/" + quote(path, safe="/")


def _wikilink(state: StateInline, silent: bool) -> bool:
    src, pos = state.src, state.pos
    if not (src.startswith("[[", pos) or src.startswith("![[", pos)):
        return False
    match = _WIKI.match(src, pos, state.posMax)
    if match is None:
        return False
    if not silent:
        inner = match.group(1)
        target, _, alias = inner.partition("|")
        target = target.removesuffix("\\")  # [[Target\|alias]] inside a table: the pipe was escaped for it
        name, _, section = target.partition("#")
        token = state.push("wikilink", "", 0)
        token.meta = {"target": name.strip(), "section": section.strip(), "alias": alias.strip()}
        token.meta["embed"] = src[pos] == "!"
        token.content = alias.strip() or target.strip()
    state.pos = match.end()
    return True


class _Vault:
    """What the final pass needs to know about the vault: where links point, and what each file is."""

    def __init__(
        self,
        note_path: str,
        targets: LinkTargets,
        media_type: Callable[[str], str],
        query: str = "",
        read: Reader | None = None,
        shown: tuple[str, ...] = (),
        budget: list[int] | None = None,
        bases: BaseEmbedder | None = None,
    ) -> None:
        self.note_path = note_path
        self.targets = targets
        self.media_type = media_type
        self.query = query
        self.read = read
        self.shown = (*shown, note_path)  # the notes being shown around this one: embedding one is a cycle
        self.budget = budget if budget is not None else [MAX_EMBEDS]
        self.bases = bases

    def embeds(self, path: str) -> bool:
        """May the note at ``path`` be shown inside this one (depth, count and cycles bounded)?"""
        shows = self.bases if path.endswith((".base", "#base")) else self.read
        if shows is None or len(self.shown) > MAX_EMBED_DEPTH or path in self.shown or self.budget[0] <= 0:
            return False
        self.budget[0] -= 1
        return True

    def nested(self, path: str) -> _Vault:
        return _Vault(path, self.targets, self.media_type, self.query, self.read, self.shown, self.budget, self.bases)

    def find(self, target: str, *, wiki: bool) -> str | None:
        """The vault file a link names, if it is a note or an attachment the policy serves (never, say, SVG)."""
        if not target:
            return None
        path = resolve(Link(target, embed=False, wiki=wiki), self.note_path, self.targets)
        if path is None or not (path.endswith(".md") or self.media_type(path)):
            return None
        return path

    def href(self, path: str) -> str:
        return (note_url(path) if path.endswith(".md") else file_url(path)) + self.query


def _text(content: str) -> Token:
    token = Token("text", "", 0)
    token.content = content
    return token


def _span(content: str, cls: str) -> list[Token]:
    opening = Token("span_open", "span", 1)
    opening.attrs = {"class": cls}
    return [opening, _text(content), Token("span_close", "span", -1)]


def _link(href: str, content: str, cls: str, external: bool = False) -> list[Token]:
    opening = Token("link_open", "a", 1)
    opening.attrs = {"href": href, "class": cls}
    if external:
        opening.attrs["rel"] = "noopener noreferrer nofollow"
    return [opening, _text(content), Token("link_close", "a", -1)]


def _image(vault: _Vault, path: str | None, alt: str) -> list[Token]:
    if path is not None and vault.media_type(path).startswith("image/"):
        token = Token("image", "img", 0)
        token.attrs = {"src": vault.href(path), "alt": alt, "class": "embed"}
        token.children = [_text(alt)]
        token.content = alt
        return [token]
    if path is not None and vault.media_type(path):  # a PDF, audio, a canvas: linked, never inlined
        return _link(vault.href(path), alt or path, "attachment")
    if path is not None and path.endswith(".md"):
        return _link(vault.href(path), alt or path, "wikilink")
    return _span(alt, "missing")


def _local_target(href: str) -> str:
    """A scheme-less href as the note wrote it: percent-escapes and the #heading dropped."""
    return unquote(href.split("#", 1)[0]).strip()


def _rewrite(children: list[Token], vault: _Vault) -> list[Token]:
    """The final pass: every link and image in one inline run, checked and pointed at the vault."""
    out: list[Token] = []
    closing: list[bool] = []  # per open link: was it kept (so its close is kept too)?
    for token in children:
        if token.type == "wikilink" and not token.meta["target"] and token.meta["section"]:
            # [[#Heading]] / [[#^block]]: a place in this very note (it exists: the note is being shown)
            out += _link(vault.href(vault.note_path), token.content.lstrip("#^") or token.content, "wikilink")
        elif token.type == "wikilink":
            path = vault.find(token.meta["target"], wiki=True)
            if token.meta["embed"] and path is not None and path.endswith((".md", ".base")):
                embed = Token("note_embed", "", 0)
                embed.meta = {"path": path, "section": token.meta["section"]}
                embed.content = token.content
                out.append(embed)
            elif token.meta["embed"]:
                out += _image(vault, path, token.content)
            elif path is not None:
                out += _link(vault.href(path), token.content, "wikilink")
            else:
                out += _span(token.content, "missing")
        elif token.type == "link_open":
            href = str(token.attrs.get("href", ""))
            kept: str | None = None
            external = False
            if allowed_link(href) and _SCHEME.match(href.strip()):
                kept, external = href.strip(), True
            elif allowed_link(href) and href.strip() and not href.strip().startswith("#"):
                path = vault.find(_local_target(href), wiki=False)
                kept = vault.href(path) if path is not None else None
            closing.append(kept is not None)
            if kept is not None:
                fresh = Token("link_open", "a", 1)
                fresh.attrs = {"href": kept, **({"rel": "noopener noreferrer nofollow"} if external else {})}
                out.append(fresh)
        elif token.type == "link_close":
            if closing.pop() if closing else False:
                out.append(Token("link_close", "a", -1))
        elif token.type == "image":
            src = str(token.attrs.get("src", ""))
            alt = "".join(c.content for c in token.children or []) or token.content
            path = None
            if allowed_link(src) and not _SCHEME.match(src.strip()):
                path = vault.find(_local_target(src), wiki=False)
            out += _image(vault, path, alt)
        else:
            out.append(token)
    return out


def section_of(text: str, section: str) -> str | None:
    """The part of a note an embed names: ``Heading`` (its heading line and everything up to the next heading
    of the same or a higher level; the last part of ``H1#H2``) or ``^block`` (the paragraph or list item whose
    line ends with that id). None when the note has no such part. Linear: one pass over the lines."""
    lines = text.split("\n")
    if section.startswith("^"):
        marker = " " + section
        for i, line in enumerate(lines):
            if line.rstrip().endswith(marker) or line.rstrip() == section:
                if line.lstrip().startswith(("- ", "* ", "+ ")) or line.lstrip()[:1].isdigit():
                    return line
                start = i
                while start > 0 and lines[start - 1].strip():
                    start -= 1
                return "\n".join(lines[start : i + 1])
        return None
    wanted = section.rsplit("#", 1)[-1].strip().casefold()
    level = 0
    taken: list[str] = []
    for line in lines:
        heading = _HEADING.match(line)
        if level:
            if heading and len(heading.group(1)) <= level:
                break
            taken.append(line)
        elif heading and heading.group(2).strip().casefold() == wanted:
            level = len(heading.group(1))
            taken.append(line)
    return "\n".join(taken) if level else None


def _embedded(vault: _Vault, path: str, section: str, label: str) -> str:
    """The HTML of one note embed: the note (or its section) rendered inside a box, or a link when it may not
    be shown (too deep, too many, a cycle, unreadable, or no such section).  A base shows its view."""
    link = f'<a href="{html.escape(vault.href(path))}" class="wikilink">{html.escape(label or path)}</a>'
    if not vault.embeds(path):
        return f"<p>{link}</p>\n"
    if path.endswith(".base") and vault.bases is not None:
        inner = vault.bases(path, section, None, vault.note_path)
        return f'<div class="embed-base" dir="auto"><div class="embed-title">{link}</div>{inner}</div>\n'
    text = vault.read(path) if vault.read is not None else None
    if text is not None and section:
        text = section_of(_FRONT_MATTER.sub("", text, count=1), section)
    if text is None:
        return f"<p>{link}</p>\n"
    inner = _render(text, vault.nested(path), properties=False)
    return f'<div class="embed-note" dir="auto"><div class="embed-title">{link}</div>{inner}</div>\n'


def _parser(vault: _Vault) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = allowed_link  # type: ignore[method-assign]
    md.use(obsidian_plugin)
    md.inline.ruler.before("link", "wikilink", _wikilink)

    def vault_links(state: StateCore) -> None:
        for block in state.tokens:
            if block.type == "inline" and block.children is not None:
                block.children = _rewrite(block.children, vault)

    def lone_embeds(state: StateCore) -> None:
        """A note embed alone in its paragraph replaces the paragraph (a box is no inline element)."""
        tokens = state.tokens
        for i in range(1, len(tokens) - 1):
            children = tokens[i].children
            if tokens[i].type == "inline" and children and len(children) == 1 and children[0].type == "note_embed":
                embed = children[0]
                box = Token("html_block", "", 0)
                box.content = _embedded(vault, embed.meta["path"], embed.meta["section"], embed.content)
                tokens[i - 1].type = tokens[i + 1].type = "obsidian_hidden"
                tokens[i] = box

    def inline_embed(_self: object, tokens: list[Token], idx: int, _options: object, _env: object) -> str:
        embed = tokens[idx]  # an embed inside a line of text: a link to the note
        href = html.escape(vault.href(embed.meta["path"]))
        return f'<a href="{href}" class="wikilink">{html.escape(embed.content or embed.meta["path"])}</a>'

    fence = md.renderer.rules.get("fence")

    def base_block(self: object, tokens: list[Token], idx: int, options: object, env: object) -> str:
        """A ```base block shows its base's first view (Obsidian's embedded base), within the embed limits."""
        token = tokens[idx]
        key = f"{vault.note_path}#base"
        if token.info.strip() != "base" or vault.bases is None or not vault.embeds(key):
            return fence(tokens, idx, options, env)  # type: ignore[misc]  # the renderer's own, bound
        inner = vault.bases(None, "", token.content, vault.note_path)
        return f'<div class="embed-base" dir="auto">{inner}</div>\n'

    md.add_render_rule("fence", base_block)
    md.core.ruler.after("inline", "vault_links", vault_links)
    md.core.ruler.after("vault_links", "lone_embeds", lone_embeds)
    md.add_render_rule("note_embed", inline_embed)
    return md


def _properties(data: dict[str, str | list[str]]) -> str:
    """Front matter as Obsidian shows it: a table of properties, each value escaped text (lists joined)."""
    rows = "".join(
        f'<tr><th scope="row">{html.escape(key)}</th>'
        f'<td dir="auto">{html.escape(", ".join(value) if isinstance(value, list) else value)}</td></tr>'
        for key, value in data.items()
    )
    return f'<table class="properties">{rows}</table>\n' if rows else ""


def _render(text: str, vault: _Vault, *, properties: bool = True) -> str:
    md = _parser(vault)
    front = _FRONT_MATTER.match(text)
    head = ""
    if front:
        try:
            data, _body = split_front_matter(text[: front.end()].replace("\r\n", "\n"))
        except FormatError:  # outside the subset notegate reads: shown as the YAML it is
            data = None
        if data is not None:
            head = _properties(data) if properties else ""
        elif properties:
            head = md.render("```yaml\n" + front.group(0).replace("```", "` ` `") + "```\n").replace(
                "<pre>", '<pre class="front-matter">', 1
            )
        text = text[front.end() :]
    return head + md.render(text)


def render_note(
    text: str,
    note_path: str,
    targets: LinkTargets,
    media_type: Callable[[str], str],
    *,
    query: str = "",
    read: Reader | None = None,
    bases: BaseEmbedder | None = None,
) -> str:
    """``text`` (a note at ``note_path``) as HTML safe to place in a console page.  ``targets`` are the
    vault paths the viewer can see; ``media_type`` is the policy's type for a path ("" when not allowed);
    ``query`` (``?env=NAME`` or "") is added to every link into the vault, so they stay in its environment;
    ``read`` gives another note's text as the viewer may read it (None: note embeds are links); ``bases``
    shows a base embedded in the note (None: base embeds are links and ```base blocks stay code)."""
    return _render(text, _Vault(note_path, targets, media_type, query, read, bases=bases))
