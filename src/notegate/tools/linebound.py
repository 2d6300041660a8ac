"""An upstream's stdout, bounded per line: a line longer than the bound is refused before it is parsed.

Why: the SDK's stdio client reads a server's stdout into one growing string until it sees a newline, then
parses it. A hostile (or broken) upstream that writes one endless line would grow that string without end in
the tools process, the one process holding every mount's credentials. Here the bytes are counted as they
arrive, before any decoding: once the line in progress passes ``max_line_bytes`` the read stops with
:class:`_LineTooLong` (the SDK ends the session on it, as on a lost pipe), the rest of the line is never read
into the buffer, and the upstream is told through its ``on_exceeded`` hook so the supervisor restarts it and
names the refusal by its rule (``tools-upstream-line-too-long``).

How it reaches the SDK: the stdio client builds ``TextReceiveStream(process.stdout, …)`` in its reader task;
:func:`install` replaces that name in the SDK's module with a function that wraps the byte stream when the
task runs under :func:`bounded` (a context variable, inherited by the tasks the client starts), and leaves it
alone otherwise. The tools process calls :func:`install` once at its start, as it isolates the environment.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import mcp.client.stdio as sdk_stdio
from anyio.abc import ByteReceiveStream
from anyio.streams.text import TextReceiveStream


class _LineTooLong(ConnectionError):
    """The upstream wrote a line longer than its bound (a ConnectionError: the SDK ends the session on it)."""


@dataclass(frozen=True)
class LineBound:
    max_line_bytes: int
    on_exceeded: Callable[[], None]


_BOUND: contextvars.ContextVar[LineBound | None] = contextvars.ContextVar("notegate_line_bound", default=None)


class BoundedLines(ByteReceiveStream):
    """A byte stream that refuses to pass on a line longer than ``bound.max_line_bytes`` (newline excluded)."""

    def __init__(self, inner: ByteReceiveStream, bound: LineBound) -> None:
        self.inner = inner
        self.bound = bound
        self.pending = 0  # bytes of the line in progress

    async def receive(self, max_bytes: int = 65536) -> bytes:
        data = await self.inner.receive(max_bytes)
        limit = self.bound.max_line_bytes
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                self.pending += len(data) - start
                break
            if self.pending + newline - start > limit:
                self._exceeded()
            self.pending = 0
            start = newline + 1
        if self.pending > limit:
            self._exceeded()
        return data

    def _exceeded(self) -> None:
        self.bound.on_exceeded()
        raise _LineTooLong(f"a line longer than {self.bound.max_line_bytes} bytes")

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def extra_attributes(self) -> Any:
        return self.inner.extra_attributes


def _text_stream(transport_stream: ByteReceiveStream, *args: Any, **kwargs: Any) -> TextReceiveStream:
    bound = _BOUND.get()
    if bound is not None:
        transport_stream = BoundedLines(transport_stream, bound)
    return TextReceiveStream(transport_stream, *args, **kwargs)


def install() -> None:
    """Make the SDK's stdio client read a server's stdout through :class:`BoundedLines` under :func:`bounded`."""
    sdk_stdio.TextReceiveStream = _text_stream  # type: ignore[assignment, misc]


@contextlib.contextmanager
def bounded(max_line_bytes: int, on_exceeded: Callable[[], None]) -> Iterator[None]:
    """Inside this block, a stdio client started here reads its server's stdout bounded per line."""
    token = _BOUND.set(LineBound(max_line_bytes, on_exceeded))
    try:
        yield
    finally:
        _BOUND.reset(token)
