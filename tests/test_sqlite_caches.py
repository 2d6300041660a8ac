"""SQLite's page caches are bounded for the whole process (notegate/sqlite.py ``bound_page_caches``): a
connection per thread no longer means a full cache per thread, and a connection alone keeps its whole cache.

Measured in a fresh interpreter each (the limit belongs to the SQLite library of the process), by SQLite's own
count of its heap (``sqlite3_memory_used``), with every thread's connection still open."""

from __future__ import annotations

import subprocess
import sys

import pytest

from notegate.sqlite import PAGE_CACHES_BYTES

READERS = """
import ctypes, ctypes.util, sqlite3, sys, threading
from pathlib import Path
from notegate.sqlite import LocalSQLite, bound_page_caches

path, mode, threads = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
limit = bound_page_caches(int(sys.argv[4])) if mode == "bound" else 0
library = ctypes.CDLL(ctypes.util.find_library("sqlite3"))
library.sqlite3_memory_used.restype = ctypes.c_int64
library.sqlite3_libversion.restype = ctypes.c_char_p
if library.sqlite3_libversion().decode() != sqlite3.sqlite_version:
    print("other-library")
    raise SystemExit(0)
db = LocalSQLite(path)
read, done = threading.Barrier(threads + 1), threading.Event()

def reader():
    db.conn().execute("SELECT sum(length(body)) FROM t").fetchone()  # every page, through this thread's cache
    read.wait()
    done.wait()

workers = [threading.Thread(target=reader) for _ in range(threads)]
for worker in workers:
    worker.start()
read.wait()
print(limit, library.sqlite3_memory_used())
done.set()
for worker in workers:
    worker.join()
"""


@pytest.fixture(scope="module")
def big_db(tmp_path_factory: pytest.TempPathFactory):
    """A 12 MiB table: more than one connection's default cache (2 MiB) holds."""
    import sqlite3

    path = tmp_path_factory.mktemp("caches") / "big.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body BLOB)")
    conn.executemany("INSERT INTO t (body) VALUES (?)", ((bytes([i % 251]) * 3000,) for i in range(4000)))
    conn.commit()
    conn.close()
    return path


def _sqlite_heap(path, mode: str, threads: int, limit: int = PAGE_CACHES_BYTES) -> tuple[int, int]:
    out = subprocess.run(
        [sys.executable, "-c", READERS, str(path), mode, str(threads), str(limit)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    if out == ["other-library"]:
        pytest.skip("this Python's sqlite3 module is not linked to the system's libsqlite3 (cannot be measured)")
    return int(out[0]), int(out[1])


def test_sixteen_threads_reading_hold_no_more_than_the_limit_together(big_db) -> None:
    limit = 8 * 2**20
    unbound = _sqlite_heap(big_db, "free", 16)[1]
    in_force, bound = _sqlite_heap(big_db, "bound", 16, limit)
    assert in_force == limit
    assert unbound > 16 * 2 * 2**20 * 0.9  # a full 2 MiB cache each: what the servers' threads used to hold
    assert bound < limit + 2 * 2**20  # the limit, and each connection's schema and statements


def test_a_connection_alone_keeps_its_whole_cache(big_db) -> None:
    """The server's default limit leaves one session's connection its whole default cache (2 MiB)."""
    alone_unbound = _sqlite_heap(big_db, "free", 1)[1]
    alone_bound = _sqlite_heap(big_db, "bound", 1)[1]
    assert alone_unbound > 2 * 2**20 * 0.9
    assert alone_bound >= alone_unbound * 0.95
