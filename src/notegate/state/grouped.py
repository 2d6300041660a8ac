"""Group commit for the state database: rows that many threads write at once, committed in one transaction.

Why: every MCP call leaves one audit row, and with durability on each transaction syncs the WAL
(``synchronous=FULL``).  Under 32 concurrent writers the group commit of the vault acknowledges 32 calls at
once, and their 32 audit rows then each took ``BEGIN IMMEDIATE`` in turn: 32 WAL syncs, and SQLite's busy
handler putting the losers to sleep (1, 2, 5 … 100 ms) while one wrote.  Here the first thread to arrive
writes every row queued so far in one transaction; the threads that arrive meanwhile wait and are written
together by the next one.

What stays exactly as before: a call returns only once its own row is committed (durable, with durability
on), and a row whose group fails is written again alone, in its own transaction, so each call meets its own
row's outcome (a full disk, say) and no other's.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

#: Writes one group of rows in one transaction (raises to fail the whole group).
WriteRows = Callable[[Sequence[tuple[Any, ...]]], None]


class _Pending:
    __slots__ = ("done", "error", "row")

    def __init__(self, row: tuple[Any, ...]) -> None:
        self.row = row
        self.done = False
        self.error: BaseException | None = None


class GroupedRows:
    """``write(row)`` returns once ``row`` is committed; rows from threads that write at once share one commit."""

    def __init__(self, write_rows: WriteRows) -> None:
        self._write_rows = write_rows
        self._changed = threading.Condition(threading.Lock())
        self._queue: list[_Pending] = []
        self._writing = False  # one thread writes a group at a time (under _changed)

    def write(self, row: tuple[Any, ...]) -> None:
        pending = _Pending(row)
        with self._changed:
            self._queue.append(pending)
            while self._writing and not pending.done:
                self._changed.wait()
            if pending.done:  # written (or failed alone) by the thread that wrote its group
                if pending.error is not None:
                    raise pending.error
                return
            self._writing = True
            group, self._queue = self._queue, []
        try:
            self._write_group(group)
        finally:
            with self._changed:
                self._writing = False
                self._changed.notify_all()
        if pending.error is not None:
            raise pending.error

    def _write_group(self, group: list[_Pending]) -> None:
        """Every row of ``group`` in one transaction; if that fails, each row alone, so each keeps its own
        outcome (today's: one transaction per row)."""
        try:
            self._write_rows([p.row for p in group])
        except BaseException as exc:
            if len(group) == 1:
                group[0].error = exc
            else:
                for p in group:
                    try:
                        self._write_rows([p.row])
                    except BaseException as alone:  # handed to that row's own thread, raised there
                        p.error = alone
        for p in group:
            p.done = True
