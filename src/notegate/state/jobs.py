"""Scheduled jobs' bookkeeping: the transcripts the reflector read, its runs, each job's last result."""

from __future__ import annotations

import sqlite3

from notegate.state.db import StateCore, _storable


class JobTables(StateCore):
    """The reflect_files, reflect_runs and job_runs tables."""

    # ----------------------------------------------------------- reflector
    def reflect_seen(self) -> dict[str, tuple[int, float]]:
        """Transcript files the reflector already read: path -> (size, mtime)."""
        return {r["path"]: (r["size"], r["mtime"]) for r in self.query("SELECT * FROM reflect_files")}

    def reflect_remember(self, files: list[tuple[str, int, float]]) -> None:
        with self.tx() as db:
            db.executemany("INSERT OR REPLACE INTO reflect_files (path, size, mtime) VALUES (?,?,?)", files)

    def reflect_last_start(self) -> float | None:
        rows = self.query("SELECT started_at FROM reflect_runs ORDER BY id DESC LIMIT 1")
        return rows[0]["started_at"] if rows else None

    def record_job_run(self, *, job: str, environment: str | None, at: float, line: str) -> None:
        """A scheduled job's one-line result (its summary's ``line()``); the newest per job is kept."""
        with self.tx(claim=f"job_runs:{job}:{environment}") as db:
            db.execute("DELETE FROM job_runs WHERE job = ? AND environment IS ?", (job, environment))
            db.execute(
                "INSERT INTO job_runs (job, environment, at, line) VALUES (?,?,?,?)",
                (job, environment, at, _storable(line[:300])),
            )

    def last_job_run(self, job: str, environment: str | None = None) -> sqlite3.Row | None:
        """The newest result of ``job`` (in ``environment``, or in any when None)."""
        return self.query_one(
            "SELECT job, environment, at, line FROM job_runs WHERE job = ? AND (? IS NULL OR environment = ?)"
            " ORDER BY at DESC, id DESC LIMIT 1",
            (job, environment, environment),
        )

    def reflect_started(self, now: float) -> None:
        with self.tx() as db:
            db.execute("INSERT INTO reflect_runs (started_at, status) VALUES (?, 'running')", (now,))
