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
from collections.abc import Callable
from http import HTTPStatus
from typing import Any, ClassVar, Protocol

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from notegate.auth.ratelimit import TokenBuckets
from notegate.doors.admission import CreditedPeers, GatedSocket, HeadDeadlines, SynDrops, is_credited
from notegate.errors import NotegateError, http_status
from notegate.policy import Decision, decide_connection_slot, decide_peer_connection
from notegate.services.eventlog import event

#: A refusal of the listener is logged at most this often per rule, with how many there were since: a
#: flood of connections must not become a flood of log lines.
LOG_EVERY_SECONDS = 10.0


def _status_line(rule: str) -> tuple[int, str]:
    """The status and reason phrase a refusal of the listener is written with (the registry's status)."""
    status = http_status(rule)
    return status, HTTPStatus(status).phrase


def bind_listener(host: str, port: int) -> GatedSocket:
    """A bound, listening TCP socket for ``host:port`` (what uvicorn would bind: SO_REUSEADDR, so a restart
    does not wait out TIME_WAIT), or ``[port-in-use]`` naming the address.  Its ``gate`` (unset: a plain
    accept) refuses connections at accept (doors/admission.py)."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise NotegateError(
            f"cannot listen on {host}:{port}: the host does not resolve ({exc.strerror}).",
            rule="config-invalid",
            remedy="Pass --host with an address of this machine, such as 127.0.0.1.",
        ) from None
    sock = GatedSocket(family, kind, proto)
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
    """What the connections of one server share: how many each peer holds, how many are open, which have
    never completed a request head (oldest first, the order a dict keeps; a stranger's and a credited
    peer's apart), each peer's budget of new connections, the peers known as callers, and the head
    deadlines.  It admits at ``accept()`` (:meth:`admit`, through :class:`~notegate.doors.admission.GatedSocket`)
    or, for a transport that did not come through the gate, in ``connection_made``."""

    def __init__(
        self,
        *,
        max_connections: int,
        per_peer: int,
        header_timeout: float,
        new_per_second: float | None = None,
        new_burst: int = 200,
        strangers_per_second: float | None = None,
        credited_seconds: float = 3600.0,
        max_peers: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_connections = max_connections
        self.per_peer = per_peer
        self.header_timeout = header_timeout
        self.peers: dict[str, int] = {}
        self.open = 0
        self.waiting: dict[BoundedH11Protocol, None] = {}  # strangers' connections that never sent a head
        self.waiting_credited: dict[BoundedH11Protocol, None] = {}  # credited peers' ones
        self.reserved: dict[int, tuple[str, bool]] = {}  # admitted at accept: fd -> (peer, credited)
        self.new_per_second = new_per_second
        self.buckets = (
            TokenBuckets(capacity=max(1, new_burst), rate=new_per_second, max_sources=max_peers)
            if new_per_second
            else None
        )
        self.strangers_per_second = strangers_per_second
        self.strangers = (  # one bucket that every stranger's new connection spends from
            TokenBuckets(capacity=max(1, new_burst), rate=strangers_per_second, max_sources=1)
            if strangers_per_second
            else None
        )
        #: how long a stranger over its budget has its SYNs dropped: until its burst has refilled
        self.drop_seconds = max(1.0, new_burst / new_per_second) if new_per_second else 0.0
        self.drops: SynDrops | None = None  # set by serve_on (the listening socket's filter)
        self.credited = CreditedPeers(seconds=credited_seconds, max_peers=max_peers)
        self.deadlines = HeadDeadlines(header_timeout)
        self.clock = clock
        self._refused: dict[str, int] = {}
        self._logged: dict[str, float] = {}
        self._answers: dict[tuple[str, str], bytes] = {}
        self._over_own_rate = False  # the last decide_peer found the peer over its own budget

    def refused(self, rule: str) -> None:
        """Count one refusal; log the count now and then (never the peer's address: it is the caller's)."""
        self._refused[rule] = self._refused.get(rule, 0) + 1
        now = time.monotonic()
        if now - self._logged.get(rule, -LOG_EVERY_SECONDS) >= LOG_EVERY_SECONDS:
            event("refused", status=http_status(rule), reason=rule, connections=self._refused.pop(rule))
            self._logged[rule] = now

    def _refusal(self, decision: Decision) -> bytes:
        """The bytes of a refusal at accept, made once per distinct reason (a flood repeats one reason)."""
        key = (decision.rule, decision.reason)
        found = self._answers.get(key)
        if found is None:
            if len(self._answers) >= 64:
                self._answers.clear()
            refusal = NotegateError(decision.reason, rule=decision.rule)
            found = self._answers[key] = http_refusal(*_status_line(decision.rule), refusal.explain())
        return found

    def serve_on(self, listener: GatedSocket) -> None:
        """Admit the connections of ``listener`` at its ``accept()``, and drop the SYNs of strangers over
        their budget with a filter on it."""
        listener.gate = self
        self.drops = SynDrops(listener)

    def decide_peer(self, peer: str) -> tuple[Decision, bool]:
        """May ``peer`` open one more connection (spending one of its new-connection tokens), and is it
        credited?  Asked at accept, from the address alone."""
        now = self.clock()
        credited = self.credited.known(peer, now)
        over_rate = strangers_over = False
        if self.buckets is not None and not credited:
            over_rate = not self.buckets.take(peer, now).allowed
        self._over_own_rate = over_rate
        if self.strangers is not None and not credited and not over_rate:
            strangers_over = not self.strangers.take("", now).allowed
        decision = decide_peer_connection(
            from_peer=self.peers.get(peer, 0),
            per_peer=self.per_peer,
            credited=credited,
            over_rate=over_rate,
            rate=self.new_per_second or 0.0,
            drop_seconds=self.drop_seconds if self.drops is not None and self.drops.enabled else 0.0,
            strangers_over=strangers_over,
            strangers_rate=self.strangers_per_second or 0.0,
        )
        return decision, credited

    def decide_slot(self, credited: bool) -> Decision:
        """Is there a slot (closing the connection that gives way to make one)?  Asked once the connection
        has a protocol: only a protocol can be closed to make room, and every connection admitted at
        accept in the same turn of the loop has one by then."""
        decision = decide_connection_slot(
            open_total=self.open,
            max_total=self.max_connections,
            waiting=len(self.waiting),
            credited=credited,
            waiting_credited=len(self.waiting_credited),
        )
        if decision.rule == "connection-replaces-waiting":
            next(iter(self.waiting))._close(refusal=None)
        elif decision.rule == "connection-replaces-waiting-credited":
            next(iter(self.waiting_credited))._close(refusal=None)
        return decision

    def peer_leaves(self, peer: str) -> None:
        left = self.peers[peer] - 1
        if left:
            self.peers[peer] = left
        else:
            del self.peers[peer]

    def admit(self, fd: int, peername: object) -> bytes | None:
        """At ``accept()``: None when the peer may open the connection (it counts against the peer at once,
        reserved for the protocol under ``fd``), else the refusal to write before it is closed."""
        stale = self.reserved.pop(fd, None)
        if stale is not None:  # that descriptor's transport was never made: the peer's count comes back
            self.peer_leaves(stale[0])
        peer = peer_key(peername)
        decision, credited = self.decide_peer(peer)
        if not decision.allowed:
            if self._over_own_rate and self.drops is not None:  # its own budget, not the strangers' shared one
                self.drops.drop(peer, self.drop_seconds, asyncio.get_running_loop())
            self.refused(decision.rule)
            return self._refusal(decision)
        self.peers[peer] = self.peers.get(peer, 0) + 1
        self.reserved[fd] = (peer, credited)
        return None


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, bounded before the request (see the module's docstring).  Use
    :func:`bounded_protocol` for a subclass holding one server's :class:`ListenerBounds`."""

    bounds: ClassVar[ListenerBounds]

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._admitted = False  # holds a slot of the bounds
        self._counted = False  # counts against its peer
        self._started = False  # uvicorn's own connection_made ran (so its connection_lost must run too)
        self._partial = False  # some bytes of the awaited head came
        bounds = self.bounds
        sock = transport.get_extra_info("socket")
        reserved = bounds.reserved.pop(sock.fileno(), None) if sock is not None else None
        if reserved is not None:  # the peer's part was decided at accept (admission.GatedSocket)
            self._peer, self._credited = reserved
            self._counted = True
            decision = bounds.decide_slot(self._credited)
        else:  # a transport that did not come through the gate: the peer's part here
            self._peer = peer_key(transport.get_extra_info("peername"))
            decision, self._credited = bounds.decide_peer(self._peer)
            if decision.allowed:
                bounds.peers[self._peer] = bounds.peers.get(self._peer, 0) + 1
                self._counted = True
                decision = bounds.decide_slot(self._credited)
        if not decision.allowed:
            self.transport = transport
            self._release()
            bounds.refused(decision.rule)
            refusal = NotegateError(decision.reason, rule=decision.rule)
            transport.write(http_refusal(*_status_line(decision.rule), refusal.explain()))
            transport.close()
            return
        bounds.open += 1
        (bounds.waiting_credited if self._credited else bounds.waiting)[self] = None
        self._admitted = True
        super().connection_made(transport)
        self._started = True
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        bounds = self.bounds
        if bounds.deadlines.armed(self):
            if self.conn.their_state is h11.IDLE:
                self._partial = True
            else:  # h11 parsed a whole head (the request runs), or refused it (the connection closes)
                bounds.deadlines.cancel(self)
                bounds.waiting.pop(self, None)
                bounds.waiting_credited.pop(self, None)

    def on_response_complete(self) -> None:
        if self._admitted and is_credited(self.scope):
            self.bounds.credited.credit(self._peer, self.bounds.clock())
        super().on_response_complete()
        if self._admitted and not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self._arm()  # kept alive: the next head has the same deadline (a pipelined one is parsed already)

    def connection_lost(self, exc: Exception | None) -> None:
        self._release()
        if not self._started:
            return  # refused in connection_made: uvicorn never saw it
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._partial = False
        self.bounds.deadlines.arm(self, self.loop)

    def _head_late(self) -> None:
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
        bounds = self.bounds
        bounds.deadlines.cancel(self)
        if self._counted:
            self._counted = False
            bounds.peer_leaves(self._peer)
        if not self._admitted:
            return
        self._admitted = False
        bounds.waiting.pop(self, None)
        bounds.waiting_credited.pop(self, None)
        bounds.open -= 1


def bounded_protocol(**settings: Any) -> type[BoundedH11Protocol]:
    """The protocol class for one server (uvicorn's ``Config(http=...)`` takes a class), with its own
    :class:`ListenerBounds`: two servers in one process never share counts.  ``bounds.serve_on(listener)``
    (a :func:`bind_listener` socket) refuses at accept and drops the SYNs of strangers over their budget.
    ``settings`` are :class:`ListenerBounds`' keywords, passed on as they are (one signature to keep, so a
    new bound cannot be added to one and forgotten in the other)."""
    bounds = ListenerBounds(**settings)
    namespace: dict[str, Any] = {"bounds": bounds}
    return type("BoundedH11Protocol", (BoundedH11Protocol,), namespace)


class ListenerSettings(Protocol):
    """What a listener is bounded by: the ``[server]`` keys (:class:`notegate.config.Config`), which the
    ``[livesync]`` table repeats for the gate (:class:`notegate.livesync.settings.LiveSyncConfig`), so the
    MCP server and the LiveSync gate are admitted by this one module, each with its own numbers."""

    @property
    def max_connections(self) -> int: ...
    @property
    def max_connections_per_peer(self) -> int: ...
    @property
    def header_timeout_seconds(self) -> float: ...
    @property
    def idle_connection_seconds(self) -> float: ...
    @property
    def new_connections_per_peer_per_second(self) -> float: ...
    @property
    def new_connections_burst(self) -> int: ...
    @property
    def stranger_connections_per_second(self) -> float: ...
    @property
    def credited_peer_seconds(self) -> float: ...
    @property
    def rate_limit_sources(self) -> int: ...


def bounded_server(app: Any, listener: GatedSocket, settings: ListenerSettings, *, host: str, port: int) -> Any:
    """uvicorn serving ``app`` on ``listener`` (a :func:`bind_listener` socket) within ``settings``' bounds:
    connections admitted at ``accept()`` (doors/admission.py) and the SYNs of strangers over their budget
    dropped, then the bounded protocol (per peer, in all, the head's deadline).  uvicorn's own
    ``limit_concurrency`` stays off (it would count strangers' half heads against callers), upgrades are not
    served (``ws="none"``: an upgrade would leave the protocol's bounds), and ``proxy_headers`` is off: uvicorn
    believes X-Forwarded-For from 127.0.0.1 by default, and the app decides instead from its own
    ``trusted_proxies`` (auth/ratelimit.source_of), so no local process names its own source.  A peer is
    credited as a caller when the app marks a request (:func:`notegate.doors.admission.credit_peer`)."""
    protocol = bounded_protocol(
        max_connections=settings.max_connections,
        per_peer=settings.max_connections_per_peer,
        header_timeout=settings.header_timeout_seconds,
        new_per_second=settings.new_connections_per_peer_per_second,
        new_burst=settings.new_connections_burst,
        strangers_per_second=settings.stranger_connections_per_second,
        credited_seconds=settings.credited_peer_seconds,
        max_peers=settings.rate_limit_sources,
    )
    protocol.bounds.serve_on(listener)  # refused at accept, before a transport or protocol object exists
    return uvicorn.Server(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            http=protocol,
            ws="none",
            log_level="warning",
            log_config=None,  # uvicorn's lines go through our handler, in the chosen --log-format
            access_log=False,
            limit_concurrency=None,
            timeout_keep_alive=int(settings.idle_connection_seconds),
            proxy_headers=False,
        )
    )
