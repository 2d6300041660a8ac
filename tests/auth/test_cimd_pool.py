"""The CIMD pool: its own bounded threads (never the default limiter), refusal instead of a queue, one
deadline, coalescing of concurrent requests for one URL, and the positive and negative caches."""

from __future__ import annotations

import threading

import anyio
import anyio.to_thread
import pytest

from notegate.auth.cimd import CimdRefused, ClientDocument
from notegate.auth.cimd_pool import NEGATIVE_SECONDS, CimdPool

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Fake:
    """A fetcher whose fetches wait for ``gate`` (a stalled host) and count themselves."""

    def __init__(self, *, refuse: bool = False, ttl: float = 60.0) -> None:
        self.gate = threading.Event()
        self.calls: list[str] = []
        self.refuse = refuse
        self.ttl = ttl
        self.timeout = 0.0
        self.threads: set[str] = set()

    def fetch_fresh(self, url: str) -> tuple[ClientDocument, float]:
        self.calls.append(url)
        self.threads.add(threading.current_thread().name)
        self.gate.wait(self.timeout)
        if self.refuse or not self.gate.is_set():
            raise CimdRefused("the document did not arrive", rule="cimd-unreachable")
        return ClientDocument(url, "c", ("http://127.0.0.1/cb",)), self.ttl


async def test_a_full_pool_refuses_at_once_and_never_takes_a_shared_thread() -> None:
    fake = Fake()
    pool = CimdPool(fake, workers=2, seconds=5)  # type: ignore[arg-type]
    shared = anyio.to_thread.current_default_thread_limiter()
    outcomes: list[str] = []

    async def one(n: int) -> None:
        try:
            await pool.fetch(f"https://h.example/{n}.json")
            outcomes.append("ok")
        except CimdRefused as refused:
            outcomes.append(refused.rule)

    async with anyio.create_task_group() as tasks:
        for n in range(5):
            tasks.start_soon(one, n)
        while len(fake.calls) < 2:
            await anyio.sleep(0.01)
        await anyio.sleep(0.05)
        assert shared.borrowed_tokens == 0  # the stalled fetches hold none of the shared threads
        assert sorted(outcomes) == ["cimd-busy"] * 3  # refused at once, not queued
        fake.gate.set()
    assert sorted(outcomes) == ["cimd-busy"] * 3 + ["ok"] * 2
    assert len(fake.calls) == 2


async def test_concurrent_requests_for_one_url_share_one_fetch_and_its_cache() -> None:
    fake = Fake()
    pool = CimdPool(fake, workers=1, seconds=5)  # type: ignore[arg-type]
    got: list[ClientDocument] = []

    async def one() -> None:
        got.append(await pool.fetch("https://h.example/c.json"))

    async with anyio.create_task_group() as tasks:
        for _ in range(10):
            tasks.start_soon(one)
        while not fake.calls:
            await anyio.sleep(0.01)
        fake.gate.set()
    assert len(got) == 10 and len(fake.calls) == 1  # one fetch, one pool slot, ten answers
    await pool.fetch("https://h.example/c.json")
    assert len(fake.calls) == 1  # cached


async def test_a_refusal_is_remembered_and_a_stalled_fetch_ends_at_the_deadline() -> None:
    now = [0.0]
    fake = Fake()
    pool = CimdPool(fake, workers=1, seconds=0.2, clock=lambda: now[0])  # type: ignore[arg-type]
    with anyio.fail_after(3):
        with pytest.raises(CimdRefused) as first:
            await pool.fetch("https://silent.example/c.json")
    assert first.value.rule == "cimd-unreachable"
    with pytest.raises(CimdRefused):
        await pool.fetch("https://silent.example/c.json")
    assert len(fake.calls) == 1  # the silent host costs one fetch per NEGATIVE_SECONDS
    now[0] += NEGATIVE_SECONDS + 1
    for _ in range(100):  # the thread gave its pool token back when it ended
        if pool._limiter is not None and pool._limiter.borrowed_tokens == 0:
            break
        await anyio.sleep(0.01)
    with pytest.raises(CimdRefused) as again:
        await pool.fetch("https://silent.example/c.json")
    assert again.value.rule == "cimd-unreachable" and len(fake.calls) == 2
