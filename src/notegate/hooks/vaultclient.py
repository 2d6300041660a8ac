"""The handful of vault operations a write-back needs, over the lean MCP client.

Why a class: every call shares the server, the token, the session header and one deadline, so a
write-back can never outlive its budget however many calls it makes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from notegate.hooks.mcpclient import Refused, Unavailable, call_tool

ABSENT = "absent"
#: Longest single call; a write commits and pushes, which takes milliseconds on a healthy server.
CALL_TIMEOUT = 20.0


class VaultClient:
    def __init__(
        self,
        url: str,
        token: str,
        *,
        session: str | None,
        deadline: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.token = token
        self.session = session
        self.deadline = deadline
        self.clock = clock

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        left = self.deadline - self.clock()
        if left <= 0.5:
            raise Unavailable("the write-back ran out of time")
        return call_tool(self.url, self.token, name, arguments, timeout=min(CALL_TIMEOUT, left), session=self.session)

    def start(self, project: str | None, branch: str | None) -> dict[str, Any]:
        args = {k: v for k, v in (("project", project), ("branch", branch)) if v}
        return self.call("session_start", args)

    def read(self, path: str) -> tuple[str | None, str]:
        """(text, revision), or (None, "absent") when the note does not exist."""
        try:
            result = self.call("read_note", {"path": path})
        except Refused as exc:
            if exc.rule == "no-such-note":
                return None, ABSENT
            raise
        text, revision = result.get("text"), result.get("revision")
        if not isinstance(text, str) or not isinstance(revision, str):
            raise Unavailable("read_note answered without text or revision")
        return text, revision

    def write(self, path: str, content: str, base_revision: str) -> dict[str, Any]:
        """Create or replace a note in one step (workstation callers may confirm without a preview)."""
        return self.call(
            "write_note", {"path": path, "content": content, "base_revision": base_revision, "confirmed": True}
        )

    def list_paths(self, folder: str, *, max_pages: int = 5) -> list[str]:
        paths: list[str] = []
        cursor: str | None = None
        for _ in range(max_pages):
            args: dict[str, Any] = {"folder": folder, "recursive": True, "limit": 1000}
            if cursor:
                args["cursor"] = cursor
            try:
                result = self.call("list_notes", args)
            except Refused as exc:
                if exc.rule in ("no-such-note", "no-such-folder", "path-invalid"):
                    return paths
                raise
            notes = result.get("notes") if isinstance(result.get("notes"), list) else []
            paths.extend(n["path"] for n in notes if isinstance(n, dict) and isinstance(n.get("path"), str))
            cursor = result.get("next_cursor") if isinstance(result.get("next_cursor"), str) else None
            if not cursor:
                break
        return paths

    def inbox(self, kind: str, text: str, project: str, title: str | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {"kind": kind, "text": text, "project": project}
        if title:
            args["title"] = title
        return self.call("inbox_write", args)
