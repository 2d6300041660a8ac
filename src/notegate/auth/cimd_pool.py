"""Client metadata fetches for the server: their own small pool, one deadline, cached and coalesced per URL.

Theory of operation
-------------------
A Client ID Metadata Document is fetched from a URL a stranger chose (any anonymous ``/authorize``), so its
cost must never land on the capacity authenticated work runs on (anyio's default thread limiter: every
bearer check, the console, the contracts).  A host that accepts the connection and stays silent used to hold
one of the server's few shared worker threads for the whole fetch deadline.

* **Own pool.**  At most ``workers`` fetches run at once, each in a worker thread that holds a token of this
  pool's :class:`anyio.CapacityLimiter` until the thread itself ends, so the fetch threads are bounded even
  when a caller stops waiting.  The thread hop takes a token of a second limiter of the same size, never the
  default one.
* **Refuse, never queue.**  With every token held, a request needing a new fetch is refused at once
  (``[cimd-busy]``, HTTP 429); waiting in line would only hand the stranger the requests of everyone else.
* **One deadline.**  The fetch gives up after ``seconds`` (resolve, connect, TLS and read together), and the
  caller stops waiting then too.
* **Coalesced.**  Concurrent requests for one URL share one fetch (and its answer or refusal).
* **Cached, both ways, bounded.**  A document is kept for what its ``Cache-Control`` allows (at most 24 h); a
  refusal for :data:`NEGATIVE_SECONDS`, so a silent host costs one fetch per URL per that long.  Each cache
  holds at most :data:`~notegate.auth.cimd.CACHE_ENTRIES` URLs (oldest dropped first).

Everything but the fetch itself runs on the event loop: the caches and the in-flight table need no lock.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import anyio
import anyio.from_thread
import anyio.to_thread

from notegate.auth.cimd import CACHE_ENTRIES, CimdFetcher, CimdRefused, ClientDocument

#: How long a refusal (unreachable, invalid, private address) is remembered for its URL.
NEGATIVE_SECONDS = 60.0

Outcome = ClientDocument | CimdRefused


class CimdPool:
    """Async front of a :class:`CimdFetcher`: see the module for the rules it keeps."""

    def __init__(
        self,
        fetcher: CimdFetcher,
        *,
        workers: int = 4,
        seconds: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.fetcher = fetcher
        self.fetcher.timeout = seconds
        self.workers = workers
        self.seconds = seconds
        self.clock = clock
        self._limiter: anyio.CapacityLimiter | None = None
        self._hop: anyio.CapacityLimiter | None = None
        self._cache: OrderedDict[str, tuple[Outcome, float]] = OrderedDict()
        self._inflight: dict[str, tuple[anyio.Event, list[Outcome]]] = {}
        self.fetches = 0  # how many fetches were started (tests read it)

    def _limiters(self) -> tuple[anyio.CapacityLimiter, anyio.CapacityLimiter]:
        """Made on first use: a limiter belongs to the event loop that first uses it."""
        if self._limiter is None or self._hop is None:
            self._limiter = anyio.CapacityLimiter(self.workers)
            self._hop = anyio.CapacityLimiter(self.workers)
        return self._limiter, self._hop

    def _remember(self, url: str, outcome: Outcome, seconds: float) -> None:
        if seconds <= 0:
            return
        self._cache[url] = (outcome, self.clock() + seconds)
        self._cache.move_to_end(url)
        while len(self._cache) > CACHE_ENTRIES:
            self._cache.popitem(last=False)

    async def fetch(self, url: str) -> ClientDocument:
        """The validated document of ``url``, or :class:`CimdRefused` (``cimd-busy`` when the pool is full)."""
        cached = self._cache.get(url)
        if cached is not None:
            if cached[1] > self.clock():
                return _unwrap(cached[0])
            del self._cache[url]
        shared = self._inflight.get(url)
        if shared is not None:
            done, result = shared
            with anyio.move_on_after(self.seconds):
                await done.wait()
            if not result:
                raise _late(self.seconds)
            return _unwrap(result[0])
        limiter, hop = self._limiters()
        borrower = object()
        try:
            limiter.acquire_on_behalf_of_nowait(borrower)
        except anyio.WouldBlock:
            raise CimdRefused(
                f"the server is already fetching {self.workers} client metadata documents, its limit",
                rule="cimd-busy",
            ) from None
        done, result = anyio.Event(), []
        self._inflight[url] = (done, result)
        try:
            outcome = await self._fetch(url, limiter, hop, borrower)
            result.append(outcome)
            if isinstance(outcome, CimdRefused):
                self._remember(url, outcome, NEGATIVE_SECONDS)
        finally:
            del self._inflight[url]
            done.set()
        return _unwrap(outcome)

    async def _fetch(
        self, url: str, limiter: anyio.CapacityLimiter, hop: anyio.CapacityLimiter, borrower: object
    ) -> Outcome:
        """Run one fetch in a worker thread; the pool's token goes back exactly once: by the thread when it
        ends, or here if the thread never started (the caller was cancelled before it was picked up)."""
        self.fetches += 1
        lock = threading.Lock()
        phase = {"started": False, "dropped": False}

        def release() -> None:
            limiter.release_on_behalf_of(borrower)

        def work() -> tuple[ClientDocument, float] | CimdRefused | None:
            with lock:
                if phase["dropped"]:
                    return None
                phase["started"] = True
            try:
                return self.fetcher.fetch_fresh(url)
            except CimdRefused as refused:
                return refused
            finally:
                with contextlib.suppress(RuntimeError):  # the event loop already closed: nothing to give back
                    anyio.from_thread.run_sync(release)

        answer: tuple[ClientDocument, float] | CimdRefused | None = None
        try:
            # a little past the fetch's own deadline: normally the fetch itself answers "did not arrive"
            with anyio.move_on_after(self.seconds + 0.5):
                answer = await anyio.to_thread.run_sync(work, abandon_on_cancel=True, limiter=hop)
        finally:
            with lock:
                never_ran = not phase["started"]
                phase["dropped"] = True
            if never_ran:
                release()
        if answer is None:
            return _late(self.seconds)
        if isinstance(answer, CimdRefused):
            return answer
        document, ttl = answer
        self._remember(url, document, ttl)
        return document


def _late(seconds: float) -> CimdRefused:
    return CimdRefused(f"the document did not arrive within {seconds:g} s", rule="cimd-unreachable")


def _unwrap(outcome: Outcome) -> ClientDocument:
    if isinstance(outcome, CimdRefused):
        raise CimdRefused(outcome.message, rule=outcome.rule)
    return outcome
