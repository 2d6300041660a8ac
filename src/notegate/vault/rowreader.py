"""A big catch-up's rows, read in a child process while the index inserts the batch before (storage).

Why: what the index inserts for a note (:func:`notegate.vault.query.note_row`: its fields, language and word
forms) is pure Python, ~80 us a note; inserting it (FTS5 tokenising eight columns) is ~110 us more.  A first
build at 100,000 notes did the two one after the other: ~26 s of CPU on one core while the second core idled.
Threads cannot overlap them (measured: SQLite gives the GIL up for each row's ~50 us step, and a Python
thread then keeps it for the whole 5 ms switch interval, so the insert crawls), so the rows are read in a
child: ``python -m notegate.vault.rowreader``, started afresh (nothing of the server's memory is copied into
it, no secret, no connection), fed each batch's paths and texts over its stdin and answering each batch's
rows on its stdout, in order.  The parent keeps two batches in flight at most, so memory stays bounded.

What crosses the pipe is ``marshal`` data of strings, tuples and None (``marshal`` is safe for data this
process's own child wrote, and several times faster than ``pickle`` for it).  When the child cannot be started
or fails, the rows are read inline: slower, never different (:func:`rows_of` in both places).
"""

from __future__ import annotations

import contextlib
import logging
import marshal
import os
import queue
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from notegate.vault.notefields import NoteFields
from notegate.vault.query import note_row

__all__ = ["Batches", "NoteRow", "RowReader", "rows_of", "start"]

log = logging.getLogger(__name__)

NoteRow = tuple[tuple[str, ...], NoteFields, str | None]
_FRAME = struct.Struct(">I")
#: The largest frame either side accepts: a batch of notes at the size limit, with room (a bound, so a broken
#: peer cannot make the other allocate without end).
MAX_FRAME = 1 << 30
#: How long one batch's answer may take (a batch is ~0.1 s of work) before the child is taken for stuck.
ANSWER_SECONDS = 120.0


def rows_of(notes: Sequence[tuple[str, str]]) -> list[NoteRow]:
    """Each (path, text)'s :func:`note_row`: what the child computes, and what the parent computes inline."""
    return [note_row(path, text) for path, text in notes]


def _pack(rows: list[NoteRow]) -> bytes:
    return marshal.dumps(
        [(values, (f.name, f.heading, f.aliases, f.headings, f.tags, f.lang), language) for values, f, language in rows]
    )


def _unpack(data: bytes) -> list[NoteRow]:
    return [(tuple(values), NoteFields(*fields), language) for values, fields, language in marshal.loads(data)]  # noqa: S302 - our own child's frames


def _write_frame(out: BinaryIO, data: bytes) -> None:
    out.write(_FRAME.pack(len(data)))
    out.write(data)
    out.flush()


def _read_frame(inp: BinaryIO) -> bytes | None:
    """One frame, or None at a clean end of the stream."""
    head = inp.read(_FRAME.size)
    if not head:
        return None
    if len(head) != _FRAME.size:
        raise EOFError("the row reader's stream ended inside a frame")
    (size,) = _FRAME.unpack(head)
    if size > MAX_FRAME:
        raise ValueError("the row reader's frame is over its bound")
    data = inp.read(size)
    if len(data) != size:
        raise EOFError("the row reader's stream ended inside a frame")
    return data


class RowReader:
    """The parent's side: :meth:`send` a batch, :meth:`receive` the oldest batch's rows.  After a failure
    (:attr:`broken`) the caller reads rows inline; :meth:`close` ends the child however the build ended."""

    def __init__(self, git_dir: str | Path) -> None:
        package_root = str(Path(__file__).resolve().parents[2])  # the folder holding `notegate`: the same code
        # No GIT_* variable of this process (a hook's GIT_OBJECT_DIRECTORY, say) may point the child elsewhere.
        env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
        env["PYTHONPATH"] = package_root
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "notegate.vault.rowreader", str(git_dir)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.broken = False

    def send(self, items: Sequence[tuple[str, str, str | None]]) -> None:
        """One batch: (path, blob id, text), the text None for the child to read the blob."""
        assert self._proc.stdin is not None
        _write_frame(self._proc.stdin, marshal.dumps(list(items)))

    def receive(self) -> list[NoteRow]:
        """The oldest batch's rows.  A child that does not answer within :data:`ANSWER_SECONDS` is killed (the
        read then ends, and the caller reads the rows inline): a stuck child never stalls the index."""
        assert self._proc.stdout is not None
        watchdog = threading.Timer(ANSWER_SECONDS, self._proc.kill)
        watchdog.daemon = True
        watchdog.start()
        try:
            data = _read_frame(self._proc.stdout)
        finally:
            watchdog.cancel()
        if data is None:
            raise EOFError("the row reader ended before answering")
        return _unpack(data)

    def close(self) -> None:
        for stream in (self._proc.stdin, self._proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


class Batches:
    """A catch-up's batches in order, each handed to ``insert(rows, made)`` with its :func:`note_row` values:
    read by the child while the batch before is inserted, or inline (no reader, or it failed).  At most two
    batches are in flight.  A row is the index's ``(path, folder, blob, last commit, private, inbox, text)``,
    its text None when the child is to read the blob (``text_of(path, blob)`` reads it here if it cannot)."""

    def __init__(
        self,
        insert: Callable[[list[tuple], list[NoteRow]], None],
        text_of: Callable[[str, str], str],
        reader: RowReader | None,
    ) -> None:
        self._insert, self._text_of, self._reader = insert, text_of, reader
        self._pending: list[tuple] | None = None

    def add(self, rows: list[tuple]) -> None:
        if not rows:
            return
        if self._reader is not None and not self._reader.broken:
            try:
                self._reader.send([(row[0], row[2], row[6]) for row in rows])
            except (OSError, ValueError):
                self._fail()
        if self._reader is None or self._reader.broken:
            self.finish()
            self._insert(rows, self._inline(rows))
            return
        self.finish()
        self._pending = rows

    def finish(self) -> None:
        """Insert the batch in flight: its rows from the child, or read here when the child failed."""
        rows, self._pending = self._pending, None
        if rows is None:
            return
        made: list[NoteRow] | None = None
        if self._reader is not None and not self._reader.broken:
            try:
                made = self._reader.receive()
            except (OSError, EOFError, ValueError):
                self._fail()
        if made is None or len(made) != len(rows):
            made = self._inline(rows)
        self._insert(rows, made)

    def _inline(self, rows: list[tuple]) -> list[NoteRow]:
        """The rows read here, as the child would have: an unreadable blob raises here, as without a child."""
        return rows_of([(row[0], row[6] if row[6] is not None else self._text_of(row[0], row[2])) for row in rows])

    def _fail(self) -> None:
        assert self._reader is not None
        log.warning("search index: the row reader failed; reading the rest inline")
        self._reader.broken = True


def start(git_dir: str | Path) -> RowReader | None:
    """A row reader over the repository at ``git_dir``, or None when the child cannot be started (the rows are
    then read inline)."""
    try:
        return RowReader(git_dir)
    except OSError as exc:
        log.warning("search index: reading rows inline (no child process: %s)", type(exc).__name__)
        return None


def _serve(git_dir: str, inp: BinaryIO, out: BinaryIO) -> None:
    """The child's loop: a thread takes frames off stdin as they come (so the parent's next batch never waits
    on this side's answer: no deadlock over two full pipes), the main thread answers them in order.  A blob
    it cannot read ends the child: the parent then reads that batch itself and meets the same error."""
    import pygit2

    from notegate.vault.query import indexed_text

    odb = pygit2.Repository(git_dir).odb
    frames: queue.Queue[bytes | None] = queue.Queue()

    def take() -> None:
        try:
            while True:
                frame = _read_frame(inp)
                frames.put(frame)
                if frame is None:
                    return
        except (OSError, EOFError, ValueError):
            frames.put(None)

    def text_of(path: str, blob: str) -> str:
        kind, data = odb.read(blob)
        if kind != pygit2.enums.ObjectType.BLOB:
            raise ValueError(f"{blob} is not a blob")
        return indexed_text(path, data)

    threading.Thread(target=take, name="rowreader-stdin", daemon=True).start()
    while (frame := frames.get()) is not None:
        items = marshal.loads(frame)  # noqa: S302 - our own parent's frames
        notes = [(path, text if text is not None else text_of(path, blob)) for path, blob, text in items]
        _write_frame(out, _pack(rows_of(notes)))


if __name__ == "__main__":
    _serve(sys.argv[1], sys.stdin.buffer, sys.stdout.buffer)
