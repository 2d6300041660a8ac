"""Admission at ``accept()``, one timer for every awaited request head, and the peers known as callers.

Why at accept: profiled under a peer that reconnects at full speed as soon as it is refused (``py-spy`` on a
real server, ``bench/bench_attack.py`` ``slow-heads``), the event loop spent nearly all its time on what a
refused connection cost *before* :class:`~notegate.doors.listen.BoundedH11Protocol` could refuse it: an
asyncio transport and a task, uvicorn's protocol object and its h11 parser, a head timer, then writing the
refusal and closing through the transport.  The caller's p50 rose ninefold.  :class:`GatedSocket` is the
listening socket with ``accept()`` deciding first, from the peer's address alone: a connection the bounds
refuse is answered with one ``write`` on its descriptor and closed there, and asyncio never sees it.  At
most :data:`REFUSALS_PER_ACCEPT` are refused per call, then ``accept()`` reports an empty queue, so a flood
cannot hold the event loop in one accept loop (the listener is still readable: the next turn goes on).

A connection admitted here has its slot counted at once (a burst of accepts in one turn would otherwise all
see the same counts); the protocol's ``connection_made`` claims the reservation by file descriptor.  If the
transport is never made (asyncio failed to build it and closed the socket), the descriptor number comes back
with a later connection and its stale reservation is given back then.

Who is a caller: a peer (an IPv4 address, an IPv6 /64) on which a request carrying a valid credential
completed (the MCP guard and the contract door mark the request's ``scope["state"]``; the protocol reads the
mark when the response is done).  For ``credited_peer_seconds`` after, that peer's new connections are not
held to ``new_connections_per_peer_per_second`` and never give way to a stranger's.  The table is bounded
(least recently credited forgotten first).  A stranger behind the same address (one NAT) shares the credit:
the per-peer connection cap still binds it, and its refusals cost an accept, not a protocol object.

Pure bookkeeping apart from the socket and the loop's clock; decisions are :func:`notegate.policy.decide_connection`.
"""

from __future__ import annotations

import contextlib
import ctypes
import ipaddress
import socket
import struct
import sys
from collections import OrderedDict
from typing import Any, Protocol

#: Connections refused in one ``accept()`` call before it reports an empty queue: the loop serves the
#: requests it already has between two batches of a flood.
REFUSALS_PER_ACCEPT = 64

#: The key of ``scope["state"]`` that says the request carried a valid credential.
CREDITED = "notegate.credited"


def credit_peer(scope: Any) -> None:
    """Mark a request as carrying a valid credential, so its peer is remembered as a caller once the response
    is done.  ``scope["state"]`` is the one dict uvicorn gives each request that every copy of the scope
    shares (a router or middleware that copies the scope copies the reference); outside uvicorn (an
    in-process test transport) there is none and nothing is marked."""
    state = scope.get("state") if isinstance(scope, dict) else None
    if isinstance(state, dict):
        state[CREDITED] = True


def is_credited(scope: Any) -> bool:
    state = scope.get("state") if isinstance(scope, dict) else None
    return isinstance(state, dict) and state.get(CREDITED) is True


class CreditedPeers:
    """Peers that completed a request with a valid credential within ``seconds``, at most ``max_peers`` (the
    least recently credited is forgotten first).  Times are the caller's monotonic clock."""

    def __init__(self, *, seconds: float, max_peers: int) -> None:
        self.seconds = seconds
        self.max_peers = max_peers
        self._at: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._at)

    def credit(self, peer: str, now: float) -> None:
        self._at[peer] = now
        self._at.move_to_end(peer)
        while len(self._at) > self.max_peers:
            self._at.popitem(last=False)

    def known(self, peer: str, now: float) -> bool:
        at = self._at.get(peer)
        if at is None:
            return False
        if now - at > self.seconds:
            del self._at[peer]
            return False
        return True


class AwaitsHead(Protocol):
    def _head_late(self) -> None: ...


class HeadDeadlines:
    """When each connection's awaited request head is due, with one loop timer for all of them.

    Every deadline is the moment it was armed plus the same ``seconds``, so the order in which they were
    armed is the order in which they fall due: a dict (insertion order) is the whole queue, re-arming moves
    an entry to its end, cancelling deletes it, each in constant time, and one timer waits for the first.
    A connection per timer meant a timer handle, a heap entry and a cancellation for every connection and
    every kept-alive request."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._due: dict[AwaitsHead, float] = {}
        self._timer: Any = None  # asyncio.TimerHandle of the first deadline, or None when none is set

    def __len__(self) -> int:
        return len(self._due)

    def armed(self, conn: AwaitsHead) -> bool:
        return conn in self._due

    def arm(self, conn: AwaitsHead, loop: Any) -> None:
        self._due.pop(conn, None)
        self._due[conn] = loop.time() + self.seconds
        if self._timer is None:
            self._schedule(loop)

    def cancel(self, conn: AwaitsHead) -> None:
        """Forget a deadline (the timer stays: when it fires it finds the next one still due and waits again)."""
        self._due.pop(conn, None)

    def _schedule(self, loop: Any) -> None:
        first = next(iter(self._due.values()))
        self._timer = loop.call_at(first, self._fire, loop)

    def _fire(self, loop: Any) -> None:
        self._timer = None
        now = loop.time()
        while self._due:
            conn, due = next(iter(self._due.items()))
            if due > now:
                break
            del self._due[conn]
            conn._head_late()
        if self._due:
            self._schedule(loop)


#: Linux's ``SO_ATTACH_FILTER`` and the classic-BPF offset of the network header (``SKF_NET_OFF``).
SO_ATTACH_FILTER = 26
SKF_NET_OFF = -0x100000
#: Peers whose SYNs are dropped at once, at most (each costs one to three filter instructions per packet).
MAX_DROPPED_PEERS = 256


def _filter_words(peer: str) -> tuple[int, ...] | None:
    """The 32-bit words of the network header's source address the filter compares for ``peer`` (an IPv4
    address: one word; an IPv6 /64 or address: its first two words); None for a key it cannot express."""
    try:
        network = ipaddress.ip_network(peer, strict=False)
    except ValueError:
        return None
    packed = network.network_address.packed
    if network.version == 4:
        return struct.unpack("!I", packed)
    return struct.unpack("!II", packed[:8])


def syn_filter(peers: list[str], family: int) -> list[tuple[int, int, int, int]]:
    """A classic BPF socket filter that drops every packet whose source is one of ``peers`` and keeps the
    rest.  On a listening socket the packets it sees are handshakes: a dropped SYN is never answered, and
    the peer's kernel retries it after one second, then three, then seven, at no cost to this process."""
    ld = 0x20  # BPF_LD | BPF_W | BPF_ABS
    jeq = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
    ret = 0x06  # BPF_RET | BPF_K
    off = 12 if family == socket.AF_INET else 8  # the source address in the IPv4 / IPv6 header
    words = [w for w in (_filter_words(p) for p in peers) if w is not None and len(w) == (1 if off == 12 else 2)]
    body: list[list[tuple[int, int, int, int]]] = []
    for w in words:
        if len(w) == 1:
            body.append([(ld, 0, 0, (SKF_NET_OFF + off) & 0xFFFFFFFF), (jeq, 0, 0, w[0])])
        else:
            body.append(
                [
                    (ld, 0, 0, (SKF_NET_OFF + off) & 0xFFFFFFFF),
                    (jeq, 0, 2, w[0]),  # first word differs: on to the next peer
                    (ld, 0, 0, (SKF_NET_OFF + off + 4) & 0xFFFFFFFF),
                    (jeq, 0, 0, w[1]),
                ]
            )
    program: list[tuple[int, int, int, int]] = []
    remaining = sum(len(b) for b in body)
    for block in body:
        remaining -= len(block)
        *head, (code, _jt, jf, k) = block
        program.extend(head)
        program.append((code, remaining + 1, jf, k))  # a match jumps over the rest and the "keep" to "drop"
    return [*program, (ret, 0, 0, 0xFFFFFFFF), (ret, 0, 0, 0)]


class SynDrops:
    """Peers whose new connections the kernel drops, each until a moment, kept as a socket filter on the
    listening socket (Linux; elsewhere nothing is dropped and the gate refuses at accept as before).

    Why: a peer refused at accept that reconnects at full speed still costs an accept, a write and a close
    each time, thousands a second.  Once a stranger has spent its budget of new connections, its SYNs are
    dropped for as long as the budget takes to refill: its connects hang in the kernel's retries instead of
    reaching this process.  A connection accepted while a filter is attached keeps that filter (the kernel
    copies it to the new socket), which only ever names other peers."""

    def __init__(self, sock: socket.socket, *, max_peers: int = MAX_DROPPED_PEERS) -> None:
        self.sock = sock
        self.max_peers = max_peers
        self.until: dict[str, float] = {}
        self.enabled = sys.platform.startswith("linux") and sock.family in (socket.AF_INET, socket.AF_INET6)
        self._timer: Any = None
        self._program: Any = None  # the filter's memory, kept alive while attached

    def __contains__(self, peer: str) -> bool:
        return peer in self.until

    def drop(self, peer: str, seconds: float, loop: Any) -> bool:
        """Drop ``peer``'s new connections for ``seconds``; False when this cannot (not Linux, too many)."""
        if not self.enabled or peer in self.until or len(self.until) >= self.max_peers:
            return False
        if _filter_words(peer) is None:
            return False
        self.until[peer] = loop.time() + seconds
        self._attach()
        if self._timer is None:
            self._timer = loop.call_later(seconds, self._expire, loop)
        return True

    def _expire(self, loop: Any) -> None:
        self._timer = None
        now = loop.time()
        ended = [peer for peer, until in self.until.items() if until <= now]
        for peer in ended:
            del self.until[peer]
        if ended:
            self._attach()
        if self.until:
            self._timer = loop.call_later(max(0.05, min(self.until.values()) - now), self._expire, loop)

    def _attach(self) -> None:
        program = syn_filter(sorted(self.until), self.sock.family)
        buffer = ctypes.create_string_buffer(b"".join(struct.pack("HBBI", *op) for op in program))
        try:
            self.sock.setsockopt(
                socket.SOL_SOCKET, SO_ATTACH_FILTER, struct.pack("HL", len(program), ctypes.addressof(buffer))
            )
        except OSError:  # refused by this kernel: nothing is dropped from now on, the gate still refuses
            self.enabled = False
            self.until.clear()
            return
        self._program = buffer


class Gate(Protocol):
    def admit(self, fd: int, peername: object) -> bytes | None: ...


class GatedSocket(socket.socket):
    """The listening socket; ``accept()`` asks :attr:`gate` (when set) about each connection first and
    closes a refused one on its descriptor, writing the refusal the gate returns (see the module's
    docstring).  Without a gate it accepts as a plain socket does."""

    gate: Gate | None = None

    def accept(self) -> tuple[socket.socket, Any]:
        gate = self.gate
        if gate is None:
            return super().accept()
        for _ in range(REFUSALS_PER_ACCEPT):
            fd, address = self._accept()  # type: ignore[attr-defined]  # BlockingIOError: nothing waits
            refusal = gate.admit(fd, address)
            if refusal is None:
                return socket.socket(self.family, self.type, self.proto, fileno=fd), address
            refuse_descriptor(fd, refusal)
        raise BlockingIOError("refused a batch of connections; the rest wait for the next turn of the loop")


def refuse_descriptor(fd: int, refusal: bytes) -> None:
    """Write the refusal and close.  What the client already sent is read and dropped first: a socket
    closed with unread data answers with a reset, which makes the client's kernel discard the refusal it
    has not read yet (every HTTP client sends its request at once).  Each step is one non-blocking system
    call; a peer that already left costs nothing more (the error is ignored)."""
    sock = socket.socket(fileno=fd)
    try:
        sock.setblocking(False)
        with contextlib.suppress(OSError):
            sock.recv(65536)
        with contextlib.suppress(OSError):
            sock.send(refusal)
    finally:
        sock.close()
