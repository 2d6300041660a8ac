"""The inbox's bookkeeping: which connector login wrote each part of an item, the reviewers' holds, and
when each caller was last told how many items wait (notices)."""

from __future__ import annotations

import sqlite3

from notegate.state.db import StateCore


class InboxTables(StateCore):
    """The inbox_parts, inbox_holds and notices tables."""

    # -------------------------------------------------------- inbox parts
    def record_inbox_part(
        self,
        *,
        environment: str,
        path: str,
        login: str,
        client: str,
        connector: str,
        at: float,
        commit_id: str,
        op: str,
    ) -> None:
        """Which connector login wrote which part of an inbox item (the authors that may not promote it)."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO inbox_parts (environment, path, login, client, connector, at, commit_id, op)"
                " VALUES (?,?,?,?,?,?,?,?)",
                (environment, path, login, client, connector, at, commit_id, op),
            )

    def inbox_parts(self, environment: str, path: str) -> list[sqlite3.Row]:
        return self.query(
            "SELECT * FROM inbox_parts WHERE environment = ? AND path = ? ORDER BY id", (environment, path)
        )

    def copy_inbox_parts(self, environment: str, source: str, target: str) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO inbox_parts (environment, path, login, client, connector, at, commit_id, op) "
                "SELECT environment, ?, login, client, connector, at, commit_id, op FROM inbox_parts "
                "WHERE environment = ? AND path = ?",
                (target, environment, source),
            )

    def forget_inbox_item(self, environment: str, path: str) -> None:
        """The item left the inbox (promoted or deleted): a new item at that path starts a new author list."""
        with self.tx() as db:
            db.execute("DELETE FROM inbox_parts WHERE environment = ? AND path = ?", (environment, path))
            db.execute("DELETE FROM inbox_holds WHERE environment = ? AND path = ?", (environment, path))

    # -------------------------------------------------------------- holds
    def set_hold(self, *, environment: str, path: str, version: str, reason: str, reviewer: str, at: float) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO inbox_holds (environment, path, version, reason, reviewer, at)"
                " VALUES (?,?,?,?,?,?)",
                (environment, path, version, reason, reviewer, at),
            )

    def holds(self, environment: str) -> dict[str, sqlite3.Row]:
        rows = self.query("SELECT * FROM inbox_holds WHERE environment = ? ORDER BY path", (environment,))
        return {r["path"]: r for r in rows}

    def drop_hold(self, environment: str, path: str) -> None:
        with self.tx() as db:
            db.execute("DELETE FROM inbox_holds WHERE environment = ? AND path = ?", (environment, path))

    # ------------------------------------------------------------ notices
    def notice_due(self, *, environment: str, login: str, client: str, count: int, now: float, interval: float) -> bool:
        """True when the caller should be told about ``count`` waiting items now (and remember that we did)."""
        row = self.query_one(
            "SELECT last_count, last_at FROM notices WHERE environment = ? AND login = ? AND client = ?",
            (environment, login, client),
        )
        if row is not None and row["last_count"] == count and (count == 0 or now - row["last_at"] < interval):
            return False  # the common case, answered without taking the write lock
        with self.tx(claim=f"notices:{environment}:{login}:{client}") as db:
            row = db.execute(
                "SELECT last_count, last_at FROM notices WHERE environment = ? AND login = ? AND client = ?",
                (environment, login, client),
            ).fetchone()
            due = count > 0 and (row is None or row["last_count"] != count or now - row["last_at"] >= interval)
            if due or row is None or row["last_count"] != count:
                db.execute(
                    "INSERT OR REPLACE INTO notices (environment, login, client, last_count, last_at)"
                    " VALUES (?,?,?,?,?)",
                    (environment, login, client, count, now if due or row is None else row["last_at"]),
                )
            return due
