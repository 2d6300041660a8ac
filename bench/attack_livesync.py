"""The LiveSync door for ``bench_attack.py --door livesync``: the gate in front of a CouchDB-protocol server, and
a device syncing through it while strangers attack the gate's port.

The lab is the LiveSync tests' own (tests/support/livesync.py: ``notegate init``, pouchdb-server in memory from
tests/livesync/npm, two enrolled devices, ``notegate livesync gate`` as its own process).  The device is the
phone, syncing as PouchDB's replication does against the gate, on one keep-alive connection with a token it
signs itself (ES256, re-signed each minute as LiveSync re-signs before expiry).  One sync round:

1. ``POST /notes/_revs_diff`` for its new revision of one note;
2. ``POST /notes/_bulk_docs`` with that revision (``new_edits: false``, its revision history);
3. ``GET /notes/_changes?since=<its checkpoint>``;
4. ``PUT /notes/_local/<its replication id>``, the new checkpoint.

Each round's wall time is one sample, as a read+write pair is for the MCP door.
"""

from __future__ import annotations

import secrets
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import httpx2

TESTS = Path(__file__).resolve().parents[1] / "tests"
NOTE_ID = "bench/sync.md"
CHECKPOINT = "_local/bench-phone-replication"


def start_lab(work: Path) -> Any:
    """The lab under ``work``, started (CouchDB, two devices, the gate); SystemExit when the npm fixtures are
    missing (``make livesync-npm``)."""
    sys.path.insert(0, str(TESTS))
    from support.livesync import POUCHDB_SERVER, Lab  # the tests' lab: one way to stand the door up

    if not POUCHDB_SERVER.exists():
        raise SystemExit(f"pouchdb-server is not installed at {POUCHDB_SERVER}: run make livesync-npm")
    return Lab(work).start()


class Phone:
    """The device's replication state between rounds: its revision history of the note, its checkpoint."""

    def __init__(self, lab: Any) -> None:
        self.lab = lab
        self.device = lab.devices["phone"]
        self.history: list[str] = []  # the note's revision ids, newest first
        self.generation = 0
        self.since = "0"
        self.checkpoint_rev: str | None = None
        self._token = ("", 0.0)

    def token(self) -> str:
        if time.monotonic() - self._token[1] > 60:
            self._token = (self.device.token(), time.monotonic())
        return self._token[0]

    async def round(self, http: httpx2.AsyncClient) -> None:
        """One sync round (the module's docstring); raises RuntimeError naming the step that was refused."""
        headers = {"Authorization": f"Bearer {self.token()}"}
        self.generation += 1
        self.history.insert(0, secrets.token_hex(16))
        del self.history[100:]  # PouchDB's revs_limit keeps as many
        start = self.generation
        rev = f"{start}-{self.history[0]}"
        diff = await http.post("/notes/_revs_diff", json={NOTE_ID: [rev]}, headers=headers)
        _expect(diff, 200, "_revs_diff")
        doc = {
            "_id": NOTE_ID,
            "_rev": rev,
            "_revisions": {"start": start, "ids": self.history},
            "type": "plain",
            "data": f"synced {start}",
        }
        pushed = await http.post("/notes/_bulk_docs", json={"docs": [doc], "new_edits": False}, headers=headers)
        _expect(pushed, 201, "_bulk_docs")
        changes = await http.get("/notes/_changes", params={"since": self.since, "limit": "100"}, headers=headers)
        _expect(changes, 200, "_changes")
        self.since = str(changes.json()["last_seq"])
        body: dict[str, Any] = {"last_seq": self.since}
        if self.checkpoint_rev:
            body["_rev"] = self.checkpoint_rev
        saved = await http.put(f"/notes/{CHECKPOINT}", json=body, headers=headers)
        _expect(saved, 201, "checkpoint")
        self.checkpoint_rev = saved.json()["rev"]


def _expect(answer: httpx2.Response, status: int, step: str) -> None:
    if answer.status_code != status:
        raise RuntimeError(f"{step}: {answer.status_code} {answer.text[:160]}")


async def device_sync(phone: Phone, seconds: float, *, timeout: float, minimum: int = 20) -> dict[str, Any]:
    """Sync rounds for ``seconds`` (at least ``minimum``): the p50 of their wall time in ms, and every failure."""
    times: list[float] = []
    failures: list[str] = []
    deadline = time.monotonic() + seconds
    hard_deadline = deadline + 4 * timeout
    limits = httpx2.Limits(max_connections=1, max_keepalive_connections=1)
    async with httpx2.AsyncClient(base_url=phone.lab.gate, limits=limits, timeout=timeout, trust_env=False) as http:
        while (time.monotonic() < deadline or len(times) < minimum) and time.monotonic() < hard_deadline:
            started = time.perf_counter()
            try:
                await phone.round(http)
            except (RuntimeError, httpx2.HTTPError, OSError, ValueError, KeyError) as exc:
                failures.append(f"{type(exc).__name__}: {str(exc)[:160]}")
                continue
            times.append((time.perf_counter() - started) * 1000)
    return {"pairs": len(times), "p50_ms": statistics.median(times) if times else float("nan"), "failures": failures}
