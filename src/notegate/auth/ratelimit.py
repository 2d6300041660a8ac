"""A token bucket per source address, in a table that stays bounded however many sources there are.

Theory of operation
-------------------
The anonymous OAuth endpoints (/register, /authorize, /token, /revoke, the consent page's POST) are open to
anyone on the internet; each answer costs a state-database lookup or row, and some a fetch.  A source may
spend ``capacity`` requests at once and then ``rate`` per second (a token bucket).

Invariants (property-tested in ``tests/auth/test_ratelimit.py``):

* **never over its rate**: in any window of ``T`` seconds one source is allowed at most
  ``capacity + rate * T`` requests;
* **bounded table**: it never holds more than ``max_sources`` buckets.  A bucket that has refilled to full
  says nothing a missing bucket would not, so it is dropped first (the table is kept in least-recently-used
  order, so the oldest is the one to look at).  When the table is full of sources that all spent tokens
  recently, a *new* source is refused (``rate-limit-full``) rather than forgetting what an old one spent:
  forgetting would let a flood from many addresses reset every bucket, and the refusal only lasts until the
  oldest bucket refills (``capacity / rate`` seconds).

The source of a request is :func:`source_of`: the TCP peer's address, an IPv6 peer by its /64 (one host is
handed a whole /64, so per-address buckets would be one per attacker request); behind a proxy the peer is the
proxy, so the address the proxy appended to ``X-Forwarded-For`` is used, but only when the peer is one of the
configured ``trusted_proxies`` (anyone can send that header).  Pure: time is a parameter.
"""

from __future__ import annotations

import ipaddress
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass
class Bucket:
    tokens: float
    at: float


@dataclass(frozen=True)
class Verdict:
    """Whether one request may go ahead; when not, the rule and how long until it may."""

    allowed: bool
    rule: str | None = None
    retry_after: float = 0.0


class TokenBuckets:
    """One token bucket per source, ``capacity`` tokens refilled at ``rate`` per second, at most ``max_sources``
    buckets.  Not thread-safe: the door calls it on the event loop only."""

    def __init__(self, *, capacity: float, rate: float, max_sources: int) -> None:
        if capacity < 1 or rate <= 0 or max_sources < 1:
            raise ValueError("capacity >= 1, rate > 0 and max_sources >= 1")
        self.capacity = float(capacity)
        self.rate = float(rate)
        self.max_sources = max_sources
        self._buckets: OrderedDict[str, Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def _level(self, bucket: Bucket, now: float) -> float:
        return min(self.capacity, bucket.tokens + max(0.0, now - bucket.at) * self.rate)

    def take(self, source: str, now: float) -> Verdict:
        """Spend one token of ``source`` if it has one (``now`` in seconds, never going backwards per source)."""
        bucket = self._buckets.get(source)
        if bucket is None:
            if len(self._buckets) >= self.max_sources and not self._make_room(now):
                oldest = next(iter(self._buckets.values()))
                wait = (self.capacity - self._level(oldest, now)) / self.rate
                return Verdict(False, rule="rate-limit-full", retry_after=wait)
            bucket = self._buckets[source] = Bucket(self.capacity, now)
        else:
            self._buckets.move_to_end(source)
        level = self._level(bucket, now)
        bucket.at = max(bucket.at, now)
        if level < 1.0:
            bucket.tokens = level
            return Verdict(False, rule="rate-limited", retry_after=(1.0 - level) / self.rate)
        bucket.tokens = level - 1.0
        return Verdict(True)

    def _make_room(self, now: float) -> bool:
        """Drop the least recently used buckets that have refilled to full; True if there is room now."""
        while self._buckets:
            source, oldest = next(iter(self._buckets.items()))
            if self._level(oldest, now) < self.capacity:
                break
            del self._buckets[source]
        return len(self._buckets) < self.max_sources


def _address_key(text: str) -> str | None:
    """An address as a bucket key: IPv4 as itself, IPv6 as its /64 (IPv4-mapped IPv6 as the IPv4)."""
    try:
        ip = ipaddress.ip_address(text.strip().strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def source_of(peer: str | None, forwarded_for: str | None, trusted_proxies: Iterable[str]) -> str:
    """The bucket key of a request.  ``forwarded_for`` (the ``X-Forwarded-For`` header) counts only when the
    peer is a trusted proxy: then the right-most address that is not itself a trusted proxy (each proxy appends
    the address it saw, so that one was written by a proxy we trust, the ones left of it by the client)."""
    trusted = {key for key in (_address_key(p) for p in trusted_proxies) if key is not None}
    own = _address_key(peer or "") or "unknown"
    if own not in trusted or not forwarded_for:
        return own
    for hop in reversed(forwarded_for.split(",")[-16:]):
        key = _address_key(hop)
        if key is None:
            return own  # a malformed hop: trust nothing left of it
        if key not in trusted:
            return key
    return own
