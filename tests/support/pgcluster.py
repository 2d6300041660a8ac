"""A throwaway PostgreSQL cluster for tests: Debian's server binaries, a data directory in /tmp, a unix socket
in that directory and no TCP listener (so no port can collide), torn down at the end of the session.

``initdb`` refuses to run as root: as root the cluster is created and run by the ``postgres`` system user
(Debian's package creates it) through ``runuser``, in a directory made for it; as anyone else it runs as
that user. Durability is off (fsync, synchronous_commit, full_page_writes): a test cluster is thrown away.
Without the binaries the PostgreSQL tests skip, unless NOTEGATE_REQUIRE_POSTGRES=1 (CI) makes them fail.
"""

from __future__ import annotations

import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

BIN_DIRS = ("/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/17/bin")
SERVICE_USER = "postgres"


def find_bin() -> Path | None:
    for candidate in BIN_DIRS:
        if (Path(candidate) / "initdb").is_file():
            return Path(candidate)
    found = shutil.which("pg_ctl")
    return Path(found).parent if found else None


class Cluster:
    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="ng-pg-"))
        self.data = self.root / "data"
        self._as_root = os.geteuid() == 0
        self._names = itertools.count()
        if self._as_root:
            shutil.chown(self.root, user=SERVICE_USER)
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync")
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write(
                f"listen_addresses = ''\nunix_socket_directories = '{self.root}'\nfsync = off\n"
                "synchronous_commit = off\nfull_page_writes = off\nmax_connections = 200\n"
                "shared_buffers = 32MB\n"
            )
        self._run("pg_ctl", "-D", str(self.data), "-w", "-s", "-l", str(self.root / "log"), "start")

    def _run(self, tool: str, *args: str) -> None:
        command = [str(self.bindir / tool), *args]
        if self._as_root:
            command = ["runuser", "-u", SERVICE_USER, "--", *command]
        subprocess.run(command, check=True, capture_output=True, cwd=self.root)

    def url(self) -> str:
        return f"postgresql://postgres@/postgres?host={self.root}"

    def new_database(self) -> str:
        """The URL of a fresh, empty schema that is the connection's search path (one per test: tests never
        see each other's rows). A schema is made in a millisecond; a CREATE DATABASE takes about a second."""
        import psycopg

        name = f"t{os.getpid()}_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE SCHEMA "{name}"')
        return f"{self.url()}&options=-csearch_path%3D{name}"

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-w", "-s", "-m", "immediate", "stop")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def stored_bytes(db) -> bytes:
    """Everything the state database holds, as bytes to search for a secret: the SQLite files (pages, WAL,
    free slots) or, on PostgreSQL, every row of every table."""
    if db.dialect == "sqlite":
        return b"".join(p.read_bytes() for p in Path(db.path).parent.glob(Path(db.path).name + "*"))
    return b"".join(repr(row).encode() for name in db._table_names() for row in db.query(f'SELECT * FROM "{name}"'))
