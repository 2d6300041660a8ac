"""A request body read once, handed on as if unread: the ASGI helper every middleware that reads a body before
the app behind it shares (the anonymous OAuth limits read it within a deadline, the MCP guard to check its
size, the single exchange to classify the request; the app behind each reads it again).

Why one: each had its own copy of the closure, and one that handed the body on twice, or dropped what the
connection sent after it (a disconnect), would be a bug in one door only.  No I/O of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]


def replayed(body: bytes, receive: Receive) -> Receive:
    """A receive that gives ``body`` (already read whole) once, then whatever the connection sends next."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
