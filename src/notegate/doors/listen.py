"""The listening socket and what a connection may cost before it has sent a request.

The socket is bound before anything says "serving": a busy port is a refusal with a hint, not a traceback
from deep inside uvicorn after the connect line was already printed.

The bounds: uvicorn counts every open connection against ``limit_concurrency`` and answers 503 to a
request that arrives while the count is reached, but it never closes a connection that is still waiting
for a request head (its keep-alive timer runs only after a response, and any byte cancels it).  So 260
connections that sent half a head and then nothing held every slot for as long as they liked, and every
real request got 503.  :class:`BoundedH11Protocol` is uvicorn's own h11 protocol with three additions,
each at one of its hooks:

* ``connection_made``: the connection is admitted or closed at once, before any HTTP is read, as
  :func:`notegate.policy.decide_connection` says: a cap per peer; when the server is full, the connection
  that has waited longest for its first head is closed to make room (strangers who never sent a request
  cannot starve callers who did); only when every open connection has sent one is the newcomer refused.
* A head timer, started at ``connection_made`` and again by ``on_response_complete`` on a kept-alive
  connection, cancelled in ``data_received`` once h11 has parsed a whole head: a head that does not arrive
  within ``header_timeout_seconds`` closes the connection (answered 408 first if part of it came).
* ``connection_lost`` gives the slot back.

uvicorn's own ``limit_concurrency`` is then left off (it would answer 503 to a caller's request while
strangers' half heads fill the count).  A head's size is bounded by h11 already (16 KiB, then 400).  The
counters live on the event loop (no thread touches them), so plain integers need no lock.  Upgrades are
not served (``ws="none"``): one would hand the transport to another protocol and skip ``connection_lost``.

A peer is the TCP peer's address (an IPv6 /64: one host commonly holds the whole prefix).  Behind a proxy
every connection comes from the proxy, so there the per-peer cap caps the proxy: set
``max_connections_per_peer = max_connections`` and let the proxy bound each client (nginx reads a whole
head before it opens a connection upstream, so slow heads never reach this listener).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import time
from http import HTTPStatus
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from notegate.errors import NotegateError, http_status
from notegate.policy import decide_connection
from notegate.services.eventlog import event

#: A refusal of the listener is logged at most this often per rule, with how many there were since: a
#: flood of connections must not become a flood of log lines.
LOG_EVERY_SECONDS = 10.0


def _status_line(rule: str) -> tuple[int, str]:
    """The status and reason phrase a refusal of the listener is written with (the registry's status)."""
    status = http_status(rule)
    return status, HTTPStatus(status).phrase


def bind_listener(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket for ``host:port`` (what uvicorn would bind: SO_REUSEADDR, so a restart
    does not wait out TIME_WAIT), or ``[port-in-use]`` naming the address."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise NotegateError(
            f"cannot listen on {host}:{port}: the host does not resolve ({exc.strerror}).",
            rule="config-invalid",
            remedy="Pass --host with an address of this machine, such as 127.0.0.1.",
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        with contextlib.suppress(OSError):
            sock.close()
        shown = f"[{host}]" if ":" in host else host
        raise NotegateError(
            f"cannot listen on {shown}:{port}: {exc.strerror or 'address already in use'}.", rule="port-in-use"
        ) from None
    sock.set_inheritable(True)
    return sock


def peer_key(peername: object) -> str:
    """Who a connection counts against: its IPv4 address, or its IPv6 /64 (an IPv4-mapped address counts
    as the IPv4 one, loopback as itself); ``""`` for a peer without an address (a Unix socket)."""
    if not isinstance(peername, tuple | list) or not peername:
        return ""
    host = str(peername[0])
    if ":" not in host:
        return host
    try:
        address = ipaddress.IPv6Address(host.partition("%")[0])
    except ValueError:
        return host
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    if address.is_loopback:
        return str(address)
    return str(ipaddress.IPv6Network((address, 64), strict=False))


def http_refusal(status: int, phrase: str, text: str) -> bytes:
    """A whole HTTP/1.1 answer written straight to the transport (no request was parsed to answer)."""
    body = (text + "\n").encode("utf-8")
    head = (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


class ListenerBounds:
    """What the connections of one server share: how many each peer holds, how many are open, and which
    have never completed a request head (oldest first, the order a dict keeps)."""

    def __init__(self, *, max_connections: int, per_peer: int, header_timeout: float) -> None:
        self.max_connections = max_connections
        self.per_peer = per_peer
        self.header_timeout = header_timeout
        self.peers: dict[str, int] = {}
        self.open = 0
        self.waiting: dict[BoundedH11Protocol, None] = {}
        self._refused: dict[str, int] = {}
        self._logged: dict[str, float] = {}

    def refused(self, rule: str) -> None:
        """Count one refusal; log the count now and then (never the peer's address: it is the caller's)."""
        self._refused[rule] = self._refused.get(rule, 0) + 1
        now = time.monotonic()
        if now - self._logged.get(rule, -LOG_EVERY_SECONDS) >= LOG_EVERY_SECONDS:
            event("refused", status=http_status(rule), reason=rule, connections=self._refused.pop(rule))
            self._logged[rule] = now


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, bounded before the request (see the module's docstring).  Use
    :func:`bounded_protocol` for a subclass holding one server's :class:`ListenerBounds`."""

    bounds: ClassVar[ListenerBounds]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._head_timer: asyncio.TimerHandle | None = None
        self._admitted = False  # holds a slot of the bounds
        self._started = False  # uvicorn's own connection_made ran (so its connection_lost must run too)
        self._partial = False  # some bytes of the awaited head came
        self._peer = peer_key(transport.get_extra_info("peername"))
        bounds = self.bounds
        decision = decide_connection(
            from_peer=bounds.peers.get(self._peer, 0),
            per_peer=bounds.per_peer,
            open_total=bounds.open,
            max_total=bounds.max_connections,
            waiting=len(bounds.waiting),
        )
        if not decision.allowed:
            self.transport = transport
            bounds.refused(decision.rule)
            refusal = NotegateError(decision.reason, rule=decision.rule)
            transport.write(http_refusal(*_status_line(decision.rule), refusal.explain()))
            transport.close()
            return
        if decision.rule == "connection-replaces-waiting":
            next(iter(bounds.waiting))._close(refusal=None)
        bounds.peers[self._peer] = bounds.peers.get(self._peer, 0) + 1
        bounds.open += 1
        bounds.waiting[self] = None
        self._admitted = True
        super().connection_made(transport)
        self._started = True
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._head_timer is not None:
            if self.conn.their_state is h11.IDLE:
                self._partial = True
            else:  # h11 parsed a whole head (the request runs), or refused it (the connection closes)
                self._head_timer.cancel()
                self._head_timer = None
                self.bounds.waiting.pop(self, None)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self._admitted and not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()  # kept alive: the next head has the same deadline (a pipelined one is parsed already)

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        if not self._started:
            return  # refused in connection_made: uvicorn never saw it
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._partial = False
        self._head_timer = self.loop.call_later(self.bounds.header_timeout, self._head_late)

    def _head_late(self) -> None:
        self._head_timer = None
        if self._partial:
            seconds = f"{self.bounds.header_timeout:g}"
            refused = NotegateError(
                f"the request head did not arrive within {seconds} seconds", rule="request-head-timeout"
            )
            self.bounds.refused("request-head-timeout")
            self._close(refusal=http_refusal(*_status_line("request-head-timeout"), refused.explain()))
        else:  # nothing came: close quietly, as uvicorn closes an idle kept-alive connection
            self._close(refusal=None)

    def _close(self, *, refusal: bytes | None) -> None:
        """Close now and give the slot back at once (not when the loop reports the close)."""
        self._release()
        if not self.transport.is_closing():
            if refusal is not None:
                self.transport.write(refusal)
            self.transport.close()

    def _release(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        if not self._admitted:
            return
        self._admitted = False
        bounds = self.bounds
        bounds.waiting.pop(self, None)
        bounds.open -= 1
        left = bounds.peers[self._peer] - 1
        if left:
            bounds.peers[self._peer] = left
        else:
            del bounds.peers[self._peer]


def bounded_protocol(*, max_connections: int, per_peer: int, header_timeout: float) -> type[BoundedH11Protocol]:
    """The protocol class for one server (uvicorn's ``Config(http=...)`` takes a class), with its own
    :class:`ListenerBounds`: two servers in one process never share counts."""
    bounds = ListenerBounds(max_connections=max_connections, per_peer=per_peer, header_timeout=header_timeout)
    namespace: dict[str, Any] = {"bounds": bounds}
    return type("BoundedH11Protocol", (BoundedH11Protocol,), namespace)
