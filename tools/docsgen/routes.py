"""The HTTP reference, from the route table of the one ASGI app ``notegate serve`` runs
(``notegate.doors.http.create_app`` over a throwaway vault): its own routes, the lazily built doors (the
machine contracts and the console) and the MCP SDK's app mounted under ``/``. Routes are listed in the order
Starlette matches them; one the app serves earlier in the table hides a later one of the same path."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from docsgen import GENERATED_NOTE, code

#: What each door is, by where its routes come from (prose; the routes themselves come from the table).
DOORS = {
    "server": 'The server\'s own pages. `/healthz` answers anyone `{"status": "ok"}` and a token holder its '
    "environment's head, index and fetch state; `/metrics` is Prometheus text for a scraper on this machine or "
    "one holding a machine token.",
    "oauth": "The OAuth 2.1 authorization server hosted clients sign in with: metadata (RFC 8414), "
    "authorization with PKCE S256, tokens, revocation and dynamic registration. Anonymous, and bounded: see "
    "[what an anonymous caller can cost](../explanation/security-model.md#what-an-anonymous-caller-can-cost).",
    "contracts": "Machine contracts: typed writes for machine tokens only.",
    "console": "The web console: passkey login, the owner's pages, the OAuth consent page and elevation "
    "approvals. Every POST carries a CSRF token; every page a strict Content-Security-Policy.",
    "mcp": "The MCP SDK's app, mounted under `/` behind the door's guard: Streamable HTTP at `/mcp` "
    "(stateless; `GET /mcp` event streams are not served) and the protected-resource metadata (RFC 9728).",
}


@dataclass(frozen=True)
class Served:
    methods: tuple[str, ...]
    path: str
    door: str


@lru_cache(maxsize=1)
def table() -> tuple[Served, ...]:
    from starlette.routing import Mount, Route

    from notegate.config import load_config
    from notegate.doors.http import LazyRoutes, create_app
    from notegate.services.runtime import Runtime
    from notegate.services.vaultinit import init_directory

    found: list[Served] = []
    seen: set[tuple[str, str]] = set()

    def door_of(route, lazy: bool, mounted: bool) -> str:
        if mounted:
            return "mcp"
        if lazy:
            return "contracts" if route.path.startswith("/contracts") else "console"
        return "server" if route.path in ("/healthz", "/metrics") else "oauth"

    def walk(routes, prefix: str, lazy: bool, mounted: bool) -> None:
        for route in routes:
            if isinstance(route, LazyRoutes):
                walk(route.routes, prefix, True, mounted)
            elif isinstance(route, Mount):
                inner = route.app
                while not hasattr(inner, "routes") and hasattr(inner, "app"):  # through the door's guard
                    inner = inner.app
                walk(getattr(inner, "routes", []), prefix + route.path, lazy, True)
            elif isinstance(route, Route):
                # An ASGI app as the endpoint (the SDK's /mcp) has no method list: it answers each itself.
                methods = tuple(sorted(set(route.methods) - {"HEAD", "OPTIONS"})) if route.methods else ("any",)
                path = prefix + route.path
                fresh = tuple(m for m in methods if (m, path) not in seen)
                if fresh:
                    seen.update((m, path) for m in fresh)
                    found.append(Served(fresh, path, door_of(route, lazy, mounted)))
            else:
                raise TypeError(f"a route of an unknown kind: {route!r}: teach docsgen.routes to walk it")

    with tempfile.TemporaryDirectory(prefix="notegate-docs-") as folder:
        runtime = Runtime(load_config(init_directory(Path(folder) / "vault", empty=True)))
        try:
            walk(create_app(runtime, host="127.0.0.1", port=8765).routes, "", False, False)
        finally:
            runtime.close()
    return tuple(found)


def page() -> str:
    out = [
        "# HTTP routes",
        "",
        GENERATED_NOTE.format(source="the route table of the ASGI app `notegate serve` runs"),
        "Every route first checks the `Host` header against the allowlist (`127.0.0.1`, `localhost`, "
        "`public_url`'s host and `[server] allowed_hosts`) and answers `421 [host-not-allowed]` to any other.",
        "",
    ]
    titles = {
        "server": "Server",
        "oauth": "OAuth",
        "contracts": "Machine contracts",
        "console": "Web console",
        "mcp": "MCP",
    }
    for door, title in titles.items():
        rows = [r for r in table() if r.door == door]
        if not rows:
            continue
        out += [f"## {title}", "", DOORS[door], "", "| method | path |", "| --- | --- |"]
        out += [f"| {' '.join(r.methods)} | {code(r.path)} |" for r in rows]
        out.append("")
    unknown = {r.door for r in table()} - set(titles)
    assert not unknown, unknown
    return "\n".join(out)


def facts() -> list[tuple[str, list[str]]]:
    return [(r.path, [r.path, *r.methods]) for r in table()]
