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

Linear time: markdown-it's CommonMark rules are linear, the wikilink rule's pattern cannot cross the
``[`` that starts its next attempt, and the final pass visits each token once (tests/web/test_render.py
measures it with tests/timing.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote, unquote

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from notegate.vault.links import Link, LinkTargets, resolve

__all__ = ["ALLOWED_SCHEMES", "allowed_link", "file_url", "note_url", "render_note"]

#: The only URL schemes a rendered note may link to (anything else stays plain text).
ALLOWED_SCHEMES = ("http", "https")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")
_WIKI = re.compile(r"!?\[\[([^\[\]\n]{1,500})\]\]")
_FRONT_MATTER = re.compile(r"---\r?\n(?:[^\n]*\n){0,200}?---[ \t]*(?:\r?\n|\Z)")


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
        token = state.push("wikilink", "", 0)
        token.meta = {"target": target.split("#", 1)[0].strip(), "alias": alias.strip(), "embed": src[pos] == "!"}
        token.content = alias.strip() or target.strip()
    state.pos = match.end()
    return True


class _Vault:
    """What the final pass needs to know about the vault: where links point, and what each file is."""

    def __init__(self, note_path: str, targets: LinkTargets, media_type: Callable[[str], str], query: str = "") -> None:
        self.note_path = note_path
        self.targets = targets
        self.media_type = media_type
        self.query = query

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
        if token.type == "wikilink":
            path = vault.find(token.meta["target"], wiki=True)
            if token.meta["embed"]:
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


def _parser(vault: _Vault) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = allowed_link  # type: ignore[method-assign]
    md.inline.ruler.before("link", "wikilink", _wikilink)

    def vault_links(state: StateCore) -> None:
        for block in state.tokens:
            if block.type == "inline" and block.children is not None:
                block.children = _rewrite(block.children, vault)

    md.core.ruler.after("inline", "vault_links", vault_links)
    return md


def render_note(
    text: str, note_path: str, targets: LinkTargets, media_type: Callable[[str], str], *, query: str = ""
) -> str:
    """``text`` (a note at ``note_path``) as HTML safe to place in a console page.  ``targets`` are the
    vault paths the viewer can see; ``media_type`` is the policy's type for a path ("" when not allowed);
    ``query`` (``?env=NAME`` or "") is added to every link into the vault, so they stay in its environment."""
    vault = _Vault(note_path, targets, media_type, query)
    md = _parser(vault)
    front = _FRONT_MATTER.match(text)
    head = ""
    if front:
        head = md.render("```yaml\n" + front.group(0).replace("```", "` ` `") + "```\n").replace(
            "<pre>", '<pre class="front-matter">', 1
        )
        text = text[front.end() :]
    return head + md.render(text)
