"""Shared by the notes pages' tests: a signed-in console session without a browser (a passkey row and a web
session in the server's own state database, as a completed login leaves them), notes and attachments
written through the real notes service, and a look at the origin's commits."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import httpx2
import pygit2

from notegate.auth.websession import WebSessions
from notegate.policy import fixed_caller
from notegate.services.notes import NotesService
from notegate.vault.store import ABSENT, Author, Change
from support.web_harness import Console

SESSION_COOKIE = "notegate-session"  # loopback: no __Host- prefix


def png(width: int = 2, height: int = 2) -> bytes:
    """A real, valid PNG (red pixels): what a phone's screenshot is, only smaller."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


#: An SVG that would run script if a browser ever rendered it as a document on the console's origin.
HOSTILE_SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" onload="document.title=\'svg-ran\'">'
    b"<script>window.__pwned=1</script></svg>"
)

HOSTILE_NOTE = """# Hostile

<script>window.__pwned = 1</script>

<img src="x" onerror="window.__pwned = 1">

[click me](javascript:window.__pwned=1) [data](data:text/html,<script>window.__pwned=1</script>)
[vb](vbscript:msgbox) [spaced](java&#9;script:window.__pwned=1) <javascript:window.__pwned=1>

![svg as image](evil.svg) ![[evil.svg]] [svg link](evil.svg)
"""


@dataclass
class Signed:
    """A browser-less signed-in person: their cookie and CSRF token, and an httpx client sending both."""

    login: str
    cookie: str
    csrf: str
    client: httpx2.Client

    def post(self, path: str, data: dict[str, str], *, csrf: bool = True) -> httpx2.Response:
        body = {**({"csrf": self.csrf} if csrf else {}), **data}
        return self.client.post(path, data=body)


def sign_in(console: Console, login: str = "owner") -> Signed:
    state = console.runtime.state
    passkey_id = f"pk_{login}"
    state.insert_passkey(
        {
            "id": passkey_id,
            "login": login,
            "credential_id": passkey_id.encode(),
            "public_key": b"k",
            "user_handle": login.encode(),
            "sign_count": 0,
            "name": "test",
            "created_at": console.clock(),
        }
    )
    session = WebSessions(state).open(login=login, passkey_id=passkey_id, now=console.clock())
    client = httpx2.Client(
        base_url=console.url,
        cookies={SESSION_COOKIE: session.secret},
        headers={"Origin": console.url},
        follow_redirects=False,
    )
    return Signed(login, session.secret, session.csrf, client)


def owner_caller():
    return fixed_caller("cli:import", "owner")  # a trusted writer that is not the console


def write(console: Console, path: str, text: str) -> str:
    notes = NotesService(console.runtime)
    try:
        base = notes.read_note(owner_caller(), path).revision
    except Exception:
        base = ABSENT
    result = notes.write_note(owner_caller(), path, text, base, confirmed=True)
    assert result.status == "committed", result
    return result.commit or ""


def delete(console: Console, path: str) -> str:
    notes = NotesService(console.runtime)
    base = notes.read_note(owner_caller(), path).revision
    result = notes.delete_note(owner_caller(), path, base, confirmed=True)
    assert result.status == "committed"
    return result.commit or ""


def attach(console: Console, path: str, data: bytes) -> None:
    notes = NotesService(console.runtime)
    result = notes.write_attachment(owner_caller(), path, base64.b64encode(data).decode(), ABSENT, confirmed=True)
    assert result.status == "committed"


def plant(console: Console, path: str, data: bytes) -> None:
    """A file the policy would refuse (an SVG), committed straight into the store: what a vault may hold
    from before its policy changed. Only a test does this; every door refuses it."""
    env = console.runtime.environment(console.runtime.config.default_environment)
    env.store.commit(
        [Change(path, data)], {path: ABSENT}, Author("owner", "owner"), f"plant {path}\n", new_paths=(path,)
    )


def origin_head(console: Console) -> pygit2.Commit:
    env = console.runtime.config.environment(None)
    origin = pygit2.Repository(str(Path(env.origin_url)))
    return origin[origin.references["refs/heads/main"].target]


def origin_text(console: Console, path: str) -> str | None:
    tree = origin_head(console).tree
    try:
        return tree[path].data.decode()
    except KeyError:
        return None


#: Where a rendered note's href/src may point: the console's own routes, an http(s) URL with a host, or an
#: anchor of the same page (a footnote and its way back).
SAFE_URL = re.compile(r"(/notes/|/files/|https?://[^/\\]|#fn(?:ref)?[0-9]+(?::[0-9]+)?$)")
SAFE_TAGS = frozenset(
    [
        "a",
        "p",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "em",
        "strong",
        "code",
        "pre",
        "blockquote",
        "ul",
        "ol",
        "li",
        "hr",
        "br",
        "img",
        "span",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        # Obsidian's syntax (doors/web/obsidian.py): callouts, embeds, highlights, strikethrough, footnotes,
        # and a task's checkbox (disabled: it runs nothing and submits nothing)
        "div",
        "details",
        "summary",
        "mark",
        "s",
        "sup",
        "section",
        "input",
        # a base's cards (doors/web/bases_view.py): a description list of each file's properties
        "dl",
        "dt",
        "dd",
        "tfoot",  # a table view's summaries
    ]
)


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in SAFE_TAGS:
            self.problems.append(f"tag <{tag}>")
        for name, value in attrs:
            if name.startswith("on") or name in ("style", "srcdoc", "formaction"):
                self.problems.append(f"attribute {name} on <{tag}>")
            if name in ("href", "src") and not SAFE_URL.match(value or ""):
                self.problems.append(f"{name}={value!r} on <{tag}>")


def unsafe_markup(html: str) -> list[str]:
    """What in ``html`` (a rendered note) could run script or leave the vault: tags outside the renderer's
    set, event-handler or style attributes, links and sources outside the allowed places."""
    parser = _Markup()
    parser.feed(html)
    parser.close()
    return parser.problems
