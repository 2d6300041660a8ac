"""The LiveSync bridge: the notes database into the environment's repository and back, through the one recipe.

**In** (devices -> git): the bridge reads CouchDB's ``_changes`` from its checkpoint with a bounded long poll,
joins each note from its chunks (:mod:`notegate.livesync.documents`), and commits each device's edits as
that device's connector login (``livesync:<kid>``, the writer the gate recorded in ``livesync_revisions``)
through :meth:`NotesService.commit_as` with ``Intent(op="livesync")``: the planner judges them by the same
rules as every door. A note the rules refuse is left out of the commit (it stays in CouchDB, on the device)
and becomes a task for the owner naming it; a refusal of the whole batch (the deletion limit) leaves the
whole batch out. A revision nobody recorded (written to CouchDB behind the gate's back) is never committed.

**Out** (git -> devices): each commit since the last one exported that changed a note becomes LiveSync
documents (a metadata document and its chunks) written as the bridge; a note whose CouchDB text already
equals the repository's is not written again, so the bridge never echoes its own commits back, and the
revisions it writes are recorded under its own name so the way in skips them.

**Conflicts** are CouchDB's: the bridge commits the winning revision and never deletes a losing one, so a
conflict stays in the database for LiveSync to show on the device, as Obsidian shows it.

**End-to-end encryption**: given the passphrase (a secret of the bridge process: ``$NOTEGATE_LIVESYNC_PASSPHRASE``
or ``[livesync] passphrase_file``, never the config or the vault), the bridge reads the database's PBKDF2 salt
from LiveSync's sync parameters (creating them as LiveSync does when no device has yet), opens what devices
wrote and seals what it exports, path obfuscation included (:mod:`notegate.livesync.e2ee`). Without it an
encrypted note is refused by name and named in a task. **Binary files** (images, PDFs) travel both ways as
LiveSync's ``newnote`` documents; the planner judges them as it judges any attachment (types and sizes from the
policy).

The checkpoint (the last sequence read and the last commit exported) is a ``_local`` document of the notes
database, written only after what it covers is committed: a restart neither loses nor repeats an edit.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from urllib.parse import quote

import httpx

from notegate.errors import NotegateError, OriginUnavailable
from notegate.livesync import documents, e2ee
from notegate.livesync.bridge_rules import BRIDGE_KID, LIVESYNC_TASK, device_caller, refused_task_text
from notegate.livesync.settings import LiveSyncConfig
from notegate.policy.notes import attachment_media_type
from notegate.policy.plan import Intent
from notegate.services.eventlog import event
from notegate.services.notes import ABSENT, Change  # a door reaches the store through the service

CHECKPOINT = "_local/notegate-bridge"


@dataclass
class Pass:
    """What one pass did (for the CLI's line and the tests)."""

    committed: list[str] = field(default_factory=list)  # commit ids
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, rule)
    exported: int = 0
    skipped: int = 0


class Bridge:
    """One environment's notes database and repository kept in step (``run_once`` is one pass each way)."""

    def __init__(
        self,
        runtime,
        notes,
        *,
        environment: str,
        couchdb_url: str,
        database: str,
        auth: str | None,
        clock: Callable[[], float] = time.time,
        passphrase: str | None = None,
        obfuscate: bool = False,
        settings: LiveSyncConfig | None = None,
    ) -> None:
        self.rt, self.notes, self.environment, self.clock = runtime, notes, environment, clock
        headers = {"Authorization": auth} if auth else {}
        self.db_url = f"{couchdb_url.rstrip('/')}/{quote(database, safe='')}"
        self._settle: dict[str, float] = {}  # deletion revision key -> when first seen
        self._pending: dict[str, float] = {}  # revision key -> when first seen without its writer or chunks
        self.http = httpx.Client(headers=headers, timeout=httpx.Timeout(30.0, read=90.0))
        self._passphrase = passphrase or None  # held for the cipher only: never logged, never in an error
        self.obfuscate = bool(obfuscate and self._passphrase)
        self.cipher: e2ee.Cipher | None = None
        self.settings = settings or LiveSyncConfig()  # the batch, wait and settle bounds ([livesync] bridge_*)

    def close(self) -> None:
        self.http.close()

    # ------------------------------------------------------------ checkpoint
    def checkpoint(self) -> dict:
        answer = self.http.get(f"{self.db_url}/{CHECKPOINT}")
        if answer.status_code == 404:
            return {"_id": CHECKPOINT}
        answer.raise_for_status()
        return answer.json()

    def _save_checkpoint(self, point: dict) -> dict:
        answer = self.http.put(f"{self.db_url}/{CHECKPOINT}", json=point)
        answer.raise_for_status()
        return {**point, "_rev": answer.json().get("rev", point.get("_rev"))}

    # ------------------------------------------------------------ one pass
    def run_once(self, poll_seconds: float = 0.0) -> Pass:
        env = self.rt.environment(self.environment)
        self._load_cipher()
        point = self.checkpoint()
        done = Pass()
        if "commit" not in point:  # first run: the repository as it stands is the starting point for export
            point["commit"] = env.store.head()
            point = self._save_checkpoint(point)
        point = self._pull(env, point, poll_seconds, done)
        self._export(env, point, done)
        return done

    def _load_cipher(self) -> None:
        """The database's cipher: the passphrase and the PBKDF2 salt in LiveSync's sync parameters (created as
        LiveSync creates them when no device has yet; a device that arrives later reads the same salt)."""
        if self._passphrase is None:
            return
        url = f"{self.db_url}/{e2ee.SYNC_PARAMETERS}"
        answer = self.http.get(url)
        if answer.status_code == 404:
            created = self.http.put(url, json=e2ee.new_sync_parameters())
            if created.status_code != 409:  # 409: a device wrote them first; read theirs
                created.raise_for_status()
            answer = self.http.get(url)
        answer.raise_for_status()
        salt = e2ee.salt_of(answer.json())
        if self.cipher is None or self.cipher.salt != salt:
            self.cipher = e2ee.Cipher(self._passphrase, salt)

    def _opened(self, meta: dict) -> dict:
        """A metadata document with its sealed facts opened when the bridge can (else as it came: reading it
        then refuses it by name)."""
        if self.cipher is None or not documents.is_note(meta):
            return meta
        try:
            return self.cipher.open_meta(meta)
        except documents.DocumentError:
            return meta

    # ------------------------------------------------------------ devices -> git
    def _changes(self, since: object, poll_seconds: float) -> dict:
        params = {
            "since": since if since is not None else 0,
            "include_docs": "true",
            "conflicts": "true",
            "limit": str(self.settings.bridge_batch),
        }
        if poll_seconds > 0:
            params.update(feed="longpoll", timeout=str(int(poll_seconds * 1000)))
        try:  # bounded here too: a server that ignores the poll's timeout (pouchdb-server) holds until a change
            answer = self.http.get(
                f"{self.db_url}/_changes", params=params, timeout=httpx.Timeout(30.0, read=poll_seconds + 5.0)
            )
        except httpx.ReadTimeout:
            return {"results": [], "last_seq": None}
        answer.raise_for_status()
        return answer.json()

    def _chunks(self, ids: list[str]) -> dict[str, dict]:
        if not ids:
            return {}
        answer = self.http.post(f"{self.db_url}/_all_docs", params={"include_docs": "true"}, json={"keys": ids})
        answer.raise_for_status()
        return {row["id"]: row["doc"] for row in answer.json().get("rows", []) if isinstance(row.get("doc"), dict)}

    def _pull(self, env, point: dict, poll_seconds: float, done: Pass) -> dict:
        """Read one batch of changes and commit what each device wrote. The checkpoint moves only past what
        was decided: a note whose chunks or whose writer are not known yet (the gate records the writer just
        after CouchDB answers it, so the feed can be first) stops the batch there, to be read again."""
        feed = self._changes(point.get("since"), poll_seconds)
        results = [
            {**r, "doc": self._opened(r["doc"])} for r in feed.get("results", []) if isinstance(r.get("doc"), dict)
        ]
        children = sorted(
            {
                c
                for r in results
                if documents.is_note(r["doc"])
                for c in r["doc"].get("children") or []
                if isinstance(c, str)
            }
        )
        chunks = self._chunks(children)
        since = feed.get("last_seq")
        now = time.monotonic()
        for row in results:  # every deletion in the batch starts settling now, not when the loop reaches it
            if documents.is_note(row["doc"]) and (row["doc"].get("deleted") or row["doc"].get("_deleted")):
                self._settle.setdefault(documents.revision_key(row["doc"]["_id"], str(row["doc"].get("_rev"))), now)
        taken: list[tuple[dict, str, documents.LiveSyncNote]] = []
        stopped = False
        for row in results:
            meta = row["doc"]
            if not documents.is_note(meta):  # chunks, control documents; a hard deletion carries no path
                continue
            key = documents.revision_key(meta["_id"], str(meta.get("_rev")))
            author = self.rt.state.livesync_revision_author(self.environment, key)
            if author is None and self._waiting(key):
                since, stopped = self._before(results, row, point), True
                break
            if author is None or author == BRIDGE_KID:  # the bridge's own, or written behind the gate's back
                done.skipped += 1
                continue
            try:
                note = documents.read_note(meta, chunks, self.cipher)
            except documents.DocumentError as exc:
                if exc.rule == "livesync-document-incomplete" and self._waiting(key):
                    since, stopped = self._before(results, row, point), True
                    break
                self._unreadable(author, meta, exc, done)
                continue
            if note.deleted and self._settling(key):
                since, stopped = self._before(results, row, point), True
                break
            self._pending.pop(key, None)
            taken.append((row, author, note))
        if stopped:  # a deletion is judged only with the rest of its batch: none goes ahead of a stop
            first = next((i for i, (_r, _a, n) in enumerate(taken) if n.deleted), None)
            if first is not None:
                since = self._before(results, taken[first][0], point)
                taken = taken[:first]
        by_device: dict[str, list[documents.LiveSyncNote]] = {}
        for _row, author, note in taken:
            by_device.setdefault(author, []).append(note)
        for kid, notes in by_device.items():
            self._commit_device(env, kid, notes, done)
        if since is not None and since != point.get("since"):
            point = self._save_checkpoint({**point, "since": since})
        return point

    def _waiting(self, key: str) -> bool:
        """Is this revision still worth waiting for (its writer or chunks not known for bridge_wait_seconds)?"""
        first = self._pending.setdefault(key, time.monotonic())
        if time.monotonic() - first < self.settings.bridge_wait_seconds:
            return True
        self._pending.pop(key, None)
        return False

    def _settling(self, key: str) -> bool:
        """Is this deletion younger than bridge_settle_seconds here? A device pushes a mass deletion in several
        requests; holding deletions that long lets the bridge read them as one batch, so the deletion limit
        judges them together instead of one request's share at a time."""
        first = self._settle.setdefault(key, time.monotonic())
        if time.monotonic() - first < self.settings.bridge_settle_seconds:
            return True
        self._settle.pop(key, None)
        return False

    @staticmethod
    def _before(results: list[dict], row: dict, point: dict) -> object:
        """The sequence just before ``row`` in this batch (the checkpoint's own when ``row`` is the first)."""
        at = results.index(row)
        return results[at - 1].get("seq") if at else point.get("since")

    def _commit_device(self, env, kid: str, notes: list[documents.LiveSyncNote], done: Pass) -> None:
        device = self.rt.state.livesync_device(kid)
        if device is None or device.environment != self.environment:
            done.skipped += len(notes)
            return
        caller = device_caller(device, owner=self.rt.config.environment(self.environment).owner)
        changes: dict[str, Change] = {}
        for note in notes:  # the last revision of a path in the batch wins, as in CouchDB
            found = env.store.read(note.path)
            try:
                data = self._content(note)
            except NotegateError as exc:  # not UTF-8, a NUL, over max_note_bytes: refused like the rules' refusals
                changes.pop(note.path, None)
                self._refused(device, caller, [note.path], exc, done)
                continue
            if (found is None and data is None) or (found is not None and found[0] == data):
                changes.pop(note.path, None)
                continue
            changes[note.path] = Change(note.path, data)
        intent = Intent(op="livesync", paths=tuple(changes))
        kept: list[Change] = []
        for change in changes.values():  # a note the rules refuse by itself is left out, the rest go on
            try:
                self.notes.plan_commit(caller, env, [change], intent)
                kept.append(change)
            except NotegateError as exc:
                self._refused(device, caller, [change.path], exc, done)
        if not kept:
            return
        expect = {c.path: (env.store.blob_id(c.path) or ABSENT) for c in kept}
        new_paths = tuple(c.path for c in kept if expect[c.path] == ABSENT)
        try:
            result = self.notes.commit_as(
                caller,
                env,
                kept,
                expect,
                f"LiveSync: {len(kept)} note(s) from device {device.name}",
                new_paths=new_paths,
                intent=Intent(op="livesync", paths=tuple(c.path for c in kept)),
            )
        except NotegateError as exc:  # the batch as a whole (the deletion limit, a stale base)
            self._refused(device, caller, [c.path for c in kept], exc, done)
            return
        done.committed.append(result.commit)
        event("livesync-bridge", direction="in", commit=result.commit[:12], paths=len(kept), device=kid)

    def _content(self, note: documents.LiveSyncNote) -> bytes | None:
        """The bytes a device's file becomes in the repository: a Markdown note through the recipe's text checks,
        any other file (an image, a PDF, a canvas) as its bytes, for the planner to judge as an attachment."""
        if note.deleted:
            return None
        if note.path.endswith(".md"):
            if note.text is None:
                raise documents.DocumentError("a Markdown note stored as binary", rule="livesync-document-unsupported")
            return self.notes.encoded_content(note.text)
        return note.data

    def _unreadable(self, author: str, meta: dict, exc: documents.DocumentError, done: Pass) -> None:
        """A device's document the bridge cannot read (encrypted without the passphrase, another passphrase, a
        format it does not take): named in a task for the owner, like an edit the rules refused."""
        device = self.rt.state.livesync_device(author)
        name = f"(encrypted path, document {meta.get('_id')})" if documents.is_sealed(meta) else str(meta.get("path"))
        if device is None or device.environment != self.environment:
            done.refused.append((name, exc.rule or "refused"))
            return
        caller = device_caller(device, owner=self.rt.config.environment(self.environment).owner)
        self._refused(device, caller, [name], exc, done)

    def _refused(self, device, caller, paths: list[str], exc: NotegateError, done: Pass) -> None:
        rule = exc.rule or "refused"
        done.refused.extend((p, rule) for p in paths)
        key = hashlib.sha256("\n".join([device.kid, rule, *sorted(paths)]).encode()).hexdigest()[:24]
        self.rt.state.open_task(
            environment=self.environment,
            kind=LIVESYNC_TASK,
            key=key,
            text=refused_task_text(device.name, device.kid, caller.connector_id, rule, paths),
            now=self.clock(),
            connector=caller.connector_id,
            client=caller.client,
            login=caller.login,
        )
        event("livesync-bridge", direction="in", refused=rule, paths=len(paths), device=device.kid)

    # ------------------------------------------------------------ git -> devices
    def _export(self, env, point: dict, done: Pass) -> None:
        with suppress(OriginUnavailable):
            env.store.fetch(on_advance=env.on_advance)
        head = env.store.head()
        last = point.get("commit")
        if head is None or head == last:
            return
        repo = env.store.repo
        paths: set[str] = set()
        if last is None:
            paths.update(env.store.listing().notes)
        else:
            for delta in repo.diff(repo[last], repo[head]).deltas:
                paths.update({delta.old_file.path, delta.new_file.path})
        listing = env.store.listing()
        notes = listing.notes
        files = {p for p in listing.attachments if attachment_media_type(self.rt.policy, p)}
        for path in sorted(paths):
            if self.rt.policy.is_private(path):
                # One notes database serves every device, a restricted member's too, and a restricted caller
                # never reads a private path: private notes stay out of it until devices get views of their own.
                continue
            if path in notes or path in files or env.store.read(path) is None:
                self._export_note(env, path, done)
        self._save_checkpoint({**self.checkpoint(), "commit": head})

    def _export_note(self, env, path: str, done: Pass) -> None:
        sealer = self.cipher if self.obfuscate else None
        doc_id = documents.doc_id_of(path, cipher=sealer)
        answer = self.http.get(f"{self.db_url}/{quote(doc_id, safe='')}")
        current = self._opened(answer.json()) if answer.status_code == 200 else None
        found = env.store.read(path)
        data = found[0] if found else None
        if current is not None and documents.is_note(current):
            with_chunks = self._chunks([c for c in current.get("children") or [] if isinstance(c, str)])
            try:
                if documents.read_note(current, with_chunks, self.cipher).data == data:
                    return  # the device already holds these bytes (the bridge's own commit, or a device's)
            except documents.DocumentError:
                pass
        elif data is None:
            return
        now = int(self.clock() * 1000)
        rev = current.get("_rev") if current else None
        if data is None:
            kind = str(current.get("type") or documents.NOTE_PLAIN) if current else documents.NOTE_PLAIN
            docs = [
                documents.deleted_note(
                    path, mtime=now, rev=str(rev), cipher=self.cipher, obfuscate=self.obfuscate, kind=kind
                )
            ]
        else:
            ctime = int(current.get("ctime") or now) if current else now
            meta, chunks = documents.write_file(
                path, data, ctime=ctime, mtime=now, rev=rev, cipher=self.cipher, obfuscate=self.obfuscate
            )
            docs = [*chunks, meta]
        answer = self.http.post(f"{self.db_url}/_bulk_docs", json={"docs": docs})
        answer.raise_for_status()
        written = [
            documents.revision_key(r["id"], r["rev"]) for r in answer.json() if r.get("id") == doc_id and r.get("rev")
        ]
        self.rt.state.record_livesync_revisions(self.environment, BRIDGE_KID, written, now=self.clock())
        done.exported += 1
