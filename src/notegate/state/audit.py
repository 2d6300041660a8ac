"""The audit trail: one row per call (who, which tool, which path, the outcome), never a note's contents."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from notegate.state.db import StateCore, _storable

#: How many tools StateDB.audit_rows can leave out of one client's rows (its statement's placeholders).
AUDIT_HIDDEN_TOOLS = 8


class AuditTables(StateCore):
    """The audit table."""

    # ------------------------------------------------------------- audit
    def audit(
        self,
        *,
        now: float,
        environment: str | None,
        login: str | None,
        client: str | None,
        client_class: str | None,
        tier: str | None,
        session: str | None,
        tool: str,
        path: str | None,
        outcome: str,
        commit_id: str | None = None,
    ) -> None:
        """One row, committed before this returns; rows of calls that end at once share one transaction
        (:mod:`notegate.state.grouped`: one WAL sync for a group commit's calls instead of one each)."""
        values = (environment, login, client, client_class, tier, session, tool, path, outcome, commit_id)
        self._audit_group.write((now, *(_storable(v) for v in values)))

    def _insert_audit(self, rows: Sequence[tuple[Any, ...]]) -> None:
        with self.tx() as db:
            for row in rows:
                db.execute(
                    "INSERT INTO audit (at, environment, login, client, client_class, tier, session, tool, path,"
                    " outcome, commit_id) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    row,
                )

    def audit_rows(
        self,
        *,
        since: float | None = None,
        connector: str | None = None,
        path: str | None = None,
        tool: str | None = None,
        outcome: str | None = None,
        limit: int = 200,
        environment: str | None = None,
        until: float | None = None,
        before_id: int | None = None,
        without_client: tuple[str, tuple[str, ...]] | None = None,
    ) -> list[sqlite3.Row]:
        """The newest ``limit`` audit rows that match, oldest first (read-only). ``connector`` matches a row's
        client name or login; ``path`` the note itself or anything under it as a folder; ``until`` is an
        exclusive upper bound on the time; ``before_id`` pages back: the rows after that row in this order
        (older, or as old with a smaller id), so pages neither skip nor repeat a row when clocks step back;
        ``without_client`` (client, tools) leaves out that client's calls of those tools."""
        folder = path.rstrip("/") + "/" if path else None
        hidden_client, hidden_tools = without_client if without_client else (None, ("",))
        # a fixed number of placeholders (the statement stays one text): the list is cut or padded to it
        tools = (*hidden_tools[:AUDIT_HIDDEN_TOOLS], *[hidden_tools[0]] * (AUDIT_HIDDEN_TOOLS - len(hidden_tools)))
        rows = self.query(
            "SELECT id, at, environment, login, client, client_class, tier, session, tool, path, outcome,"
            " commit_id FROM audit WHERE (? IS NULL OR at >= ?) AND (? IS NULL OR at < ?)"
            " AND (? IS NULL OR client = ? OR login = ?)"
            " AND (? IS NULL OR path = ? OR substr(path, 1, length(?)) = ?)"
            " AND (? IS NULL OR tool = ?) AND (? IS NULL OR outcome = ?)"
            " AND (? IS NULL OR environment = ?)"
            " AND (? IS NULL OR (at, id) < (SELECT at, id FROM audit WHERE id = ?))"
            " AND (? IS NULL OR client IS NULL OR client <> ? OR tool NOT IN (?, ?, ?, ?, ?, ?, ?, ?))"
            " ORDER BY at DESC, id DESC LIMIT ?",
            (
                *(since, since),
                *(until, until),
                *(connector, connector, connector),
                *(path, path, folder, folder),
                *(tool, tool),
                *(outcome, outcome),
                *(environment, environment),
                *(before_id, before_id),
                *(hidden_client, hidden_client, *tools),
                limit,
            ),
        )
        return list(reversed(rows))

    def last_audit_at(self, client: str) -> float | None:
        """When ``client`` (a fixed connector's client name, e.g. notegate-review) last left an audit row."""
        rows = self.query("SELECT MAX(at) AS at FROM audit WHERE client = ?", (client,))
        return rows[0]["at"] if rows else None
