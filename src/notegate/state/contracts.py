"""Machine contracts and what bounds callers: idempotency records, the server's tasks, the write quota."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass

from notegate.state.db import StateCore


@dataclass(frozen=True)
class Reservation:
    """A write reserved against a quota (``id``), or refused (``id`` None) with the usage that refused it."""

    id: int | None
    writes: int
    bytes: int
    retry_at: float | None  # when the oldest write in the window leaves it


class ContractTables(StateCore):
    """The contract_calls, tasks and write_usage tables."""

    # --------------------------------------------------------- write quota
    def reserve_write(
        self, *, connector: str, now: float, window: float, size: int, fits: Callable[[int, int], bool]
    ) -> Reservation:
        """Count ``connector``'s writes in the window and, if ``fits(writes, bytes)``, reserve one more.

        One immediate transaction: two writers of one connector cannot both take the last slot.
        """
        with self.tx(claim=f"write_usage:{connector}") as db:
            db.execute("DELETE FROM write_usage WHERE at < ?", (now - window,))
            row = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(bytes), 0), MIN(at) FROM write_usage WHERE connector = ?", (connector,)
            ).fetchone()
            writes, used, oldest = int(row[0]), int(row[1]), row[2]
            if not fits(writes, used):
                return Reservation(None, writes, used, oldest + window if oldest is not None else None)
            cur = db.execute(
                "INSERT INTO write_usage (connector, at, bytes) VALUES (?,?,?) RETURNING id", (connector, now, size)
            )
            return Reservation(int(cur.fetchone()[0]), writes, used, None)

    def release_write(self, reservation_id: int) -> None:
        """A reserved write did not happen (refused or failed): it does not count."""
        with self.tx() as db:
            db.execute("DELETE FROM write_usage WHERE id = ?", (reservation_id,))

    # -------------------------------------------------------------- tasks
    def open_task(
        self,
        *,
        environment: str,
        kind: str,
        key: str,
        text: str,
        now: float,
        connector: str = "",
        client: str = "",
        login: str = "",
        fits: Callable[[int], bool] | None = None,
    ) -> int | None:
        """The open task of ``kind`` for ``key``, created once (a refused tip seen again adds nothing).

        ``connector`` (``client``, ``login``): the connector login whose input opened it ('' = the server's
        own). With ``fits``, a new task is added only if ``fits(open tasks of this kind from this connector)``,
        counted and added in one transaction; None when it was not added."""
        claim = f"tasks:{environment}:{kind}:" + (f"connector:{connector}" if connector else key)
        with self.tx(claim=claim) as db:
            row = db.execute(
                "SELECT id FROM tasks WHERE environment = ? AND kind = ? AND key = ? AND connector = ?"
                " AND resolved_at IS NULL",
                (environment, kind, key, connector),
            ).fetchone()
            if row is not None:
                return int(row[0])
            if fits is not None:
                (count,) = db.execute(
                    "SELECT COUNT(*) FROM tasks WHERE environment = ? AND kind = ? AND connector = ?"
                    " AND resolved_at IS NULL",
                    (environment, kind, connector),
                ).fetchone()
                if not fits(int(count)):
                    return None
            cursor = db.execute(
                "INSERT INTO tasks (environment, kind, key, text, created_at, connector, client, login)"
                " VALUES (?,?,?,?,?,?,?,?) RETURNING id",
                (environment, kind, key, text, now, connector, client, login),
            )
            return int(cursor.fetchone()[0])

    def resolve_tasks(self, *, environment: str, kind: str, now: float, keep: str | None = None) -> int:
        """Mark the open tasks of ``kind`` resolved (all but the one for ``keep``); how many were open."""
        rows = self.query(
            "SELECT id, key FROM tasks WHERE environment = ? AND kind = ? AND resolved_at IS NULL",
            (environment, kind),
        )
        ids = [r["id"] for r in rows if r["key"] != keep]
        if not ids:
            return 0
        with self.tx() as db:
            db.executemany("UPDATE tasks SET resolved_at = ? WHERE id = ?", [(now, i) for i in ids])
        return len(ids)

    def tasks(self, environment: str, *, resolved: bool = False) -> list[sqlite3.Row]:
        """Open tasks of an environment, oldest first (with ``resolved``: the resolved ones too)."""
        return self.query(
            "SELECT * FROM tasks WHERE environment = ? AND (? OR resolved_at IS NULL) ORDER BY id",
            (environment, resolved),
        )

    # ---------------------------------------------------------- contracts
    def contract_call(self, *, environment: str, contract: str, connector: str, key: str) -> sqlite3.Row | None:
        """The record of an idempotency key ``connector`` already used, or None (another connector login's use
        of the same key is its own record, never seen here)."""
        return self.query_one(
            "SELECT * FROM contract_calls WHERE environment = ? AND contract = ? AND connector = ? AND key = ?",
            (environment, contract, connector, key),
        )

    def record_contract_call(
        self,
        *,
        environment: str,
        contract: str,
        key: str,
        input_hash: str,
        fields: dict[str, str],
        commit_id: str | None,
        connector: str,
        now: float,
    ) -> bool:
        """Record a key's first use; False if it was recorded already (the first record stands)."""
        with self.tx() as db:
            cur = db.execute(
                "INSERT OR IGNORE INTO contract_calls (environment, contract, key, input_hash, fields, commit_id,"
                " connector, at) VALUES (?,?,?,?,?,?,?,?)",
                (environment, contract, key, input_hash, json.dumps(fields, sort_keys=True), commit_id, connector, now),
            )
            return cur.rowcount == 1

    def settle_contract_call(
        self, *, environment: str, contract: str, connector: str, key: str, commit_id: str | None
    ) -> None:
        """A pending record (written before its commit, :mod:`notegate.services.contracts`) now names the commit
        that recorded it, or, with None, is forgotten: no commit was made, so the key is free again."""
        ident = (environment, contract, connector, key)
        with self.tx() as db:
            if commit_id is None:
                db.execute(
                    "DELETE FROM contract_calls WHERE environment = ? AND contract = ? AND connector = ? AND key = ?",
                    ident,
                )
            else:
                db.execute(
                    "UPDATE contract_calls SET commit_id = ?"
                    " WHERE environment = ? AND contract = ? AND connector = ? AND key = ?",
                    (commit_id, *ident),
                )
