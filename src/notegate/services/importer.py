"""Bring an existing Markdown/Obsidian folder into a vault, in commits of at most ``max_files_per_commit`` files.

A vault comes in whole: its notes (``.md``, ``.excalidraw.md`` included) and its attachments (the policy's
``attachment_types``, each checked against its magic bytes and ``max_attachment_bytes``; a ``.canvas`` must
parse as a JSON object) go in the same batched commits.  Hidden paths (``.obsidian/``, ``.git/``,
``.trash/``) and files of no allowed type are skipped, symlinks are refused (never followed), and every
skipped or refused file is reported with its rule, its reason in words and what to do.  Files already in
the vault are never overwritten: identical ones are left alone, differing ones are refused and listed.

Where files land: every file and folder name takes its Unicode NFC form (macOS stores names decomposed,
NFD: ``José`` as ``Jose`` + U+0301), as the MCP door does for a path it is sent, and the report lists each
such file under ``renamed``; only two source files that become one name (after NFC and case folding, the
collision check's key) are refused, naming both.  ``--into FOLDER`` puts the whole vault under one folder;
a folder that exists in the vault in another case takes the vault's spelling (``Projects/x.md`` lands in
``projects/x.md``: the policy's globs match case-insensitively anyway, and two spellings of one folder break
every case-insensitive clone).  A file that would land in a folder the policy gives a meaning of its own (the
inbox, protected house rules) is refused ``[import-policy-folder]`` unless the owner says so
(``--allow-policy-folders``); one that is already there byte for byte is unchanged (re-importing a clone of
the vault is not a refusal).  A folder sessions load that is not protected (``projects/``) takes the vault's
files, each through the floor, as its owner's own project notes.

Each file meets the same rules as any other write (the policy's decision for the importing caller, the
content limits, the credential decision, and the git door's content rules), and each commit goes through
the notes service's recipe (trailers, lock, push before acknowledging), so a running server picks it up.
The recipe does not decide a file's content a second time: it reuses the verdicts the importer got from the
service's own ``decide_content`` for those exact bytes (``ContentVerdicts``), and decides anything else.
Every decision is made before the first commit, so a dry run reports exactly what a real run would do.

Notes that are not UTF-8 are converted from ``encoding`` when one is given; otherwise they are refused with
a named guess (``looks like cp1252: pass --encoding cp1252``), never dropped in silence.

Why batches: the git door refuses a commit adding more than ``max_files_per_commit`` files (the pre-receive
hook, and every server's fetch of the origin), so one huge import commit would be refused by the server's
own fetch.  Each batch is pushed before the next is built; if one fails, the batches already pushed stay,
and the refusal says how far the import got.  Running the same import again resumes: files already in the
vault with the same content are left alone.
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from collections import deque
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

import pygit2

from notegate.errors import NotegateError, PathRejected, remedy_for
from notegate.policy import (
    Action,
    Caller,
    Decision,
    decide,
    decide_canvas,
    decide_credential,
    decide_import_existing,
    decide_import_folder,
    fixed_caller,
)
from notegate.policy.plan import Intent
from notegate.safety.attachments import extension_of, media_type_of
from notegate.safety.rules import describe
from notegate.safety.secrets import scan_credentials
from notegate.services.notes import ContentVerdicts, NotesService
from notegate.services.runtime import Environment
from notegate.vault.bulk import Record, blob_record, local_origin_dir, packed_blobs, trees_cached, write_records
from notegate.vault.links import Link, LinkTargets, canvas_links, canvas_relocated, links_in, resolves
from notegate.vault.paths import AttachmentPath, FolderPath, NotePath, caseless_key
from notegate.vault.store import ABSENT, Change


@dataclass
class ImportReport:
    added: list[str] = field(default_factory=list)  # notes imported (their vault paths)
    attachments: list[str] = field(default_factory=list)  # attachments imported (their vault paths)
    unchanged: list[str] = field(default_factory=list)  # already in the vault, byte for byte
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) — hidden, or of no allowed type
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, "rule: reason — what to do")
    landed: list[tuple[str, str]] = field(default_factory=list)  # (source path, vault path): another folder
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (source path, vault path): the name was not NFC
    converted: list[tuple[str, str]] = field(default_factory=list)  # (vault path, encoding it was read as)
    missing_links: list[tuple[str, str]] = field(default_factory=list)  # (note, link as written) that resolve nowhere
    dry_run: bool = False
    commit: str | None = None  # the last commit made
    commits: list[str] = field(default_factory=list)  # every commit made, in order (one per batch)


def scan_source(src: Path) -> tuple[list[tuple[str, Path, int]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(candidates, skipped, refused) without following any symlink.  Candidates are every visible regular
    file as (path in the source, full path, size in bytes); which of them are notes or attachments the
    importer decides with the policy.  The size is the ``lstat`` that told a regular file from a symlink:
    the size limits use it instead of a second ``stat`` of every file (the bytes read later are checked
    against the limit again by ``decide_content``, so a file that grew meanwhile is still refused)."""
    candidates: list[tuple[str, Path, int]] = []
    skipped: list[tuple[str, str]] = []
    refused: list[tuple[str, str]] = []
    for root, dirs, files in os.walk(src, followlinks=False):
        rel_root = Path(root).relative_to(src).as_posix()
        rel_root = "" if rel_root == "." else rel_root
        keep = []
        for d in sorted(dirs):
            rel = f"{rel_root}/{d}" if rel_root else d
            full = Path(root) / d
            if full.is_symlink():
                refused.append((rel + "/", "symlink: never followed"))
            elif d.startswith("."):
                skipped.append((rel + "/", "hidden folder"))
            else:
                keep.append(d)
        dirs[:] = keep
        for name in sorted(files):
            rel = f"{rel_root}/{name}" if rel_root else name
            full = Path(root) / name
            info = os.lstat(full)
            mode = info.st_mode
            if stat.S_ISLNK(mode):
                refused.append((rel, "symlink: never followed"))
            elif name.startswith("."):
                skipped.append((rel, "hidden file"))
            elif not stat.S_ISREG(mode):
                refused.append((rel, "not a regular file"))
            else:
                candidates.append((rel, full, info.st_size))
    return candidates, skipped, refused


def importing_caller(login: str) -> Caller:
    """Who an import is written by: the owner at a shell, trusted, through the CLI's own connector."""
    return fixed_caller("cli:import", login)


def guess_encoding(data: bytes) -> str:
    """A named guess for bytes that are not UTF-8: UTF-16 by its byte order mark, else Windows-1252 (what
    most "Latin-1" text really is) when every byte is defined there, else Latin-1 (which decodes anything)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        data.decode("cp1252")
    except UnicodeDecodeError:
        return "latin-1"
    return "cp1252"


def human_size(n: int) -> str:
    """``1048576`` -> ``1 MiB``; ``1536`` -> ``1.5 KiB``; ``12`` -> ``12 bytes``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            value = n / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{n} bytes"


# What to do, in the import's own words, where the registry's remedy speaks of another door.
_IMPORT_REMEDIES = {
    "note-too-large": "split it or raise the limit",
    "attachment-too-large": "leave it out, or raise the limit",
    "credential-warning": "take the credential out, or rerun with --allow-secrets to insist",
    "path-case-collision": "rename one of the two",
    "import-exists": "rename one of them, or change the vault's copy first",
    "content-not-utf8": "or convert the file to UTF-8 first",
}


def _refusal(rule: str, words: str) -> str:
    """``rule: what and why — what to do``: the report's line for one refused file."""
    todo = _IMPORT_REMEDIES.get(rule) or remedy_for(rule) or ""
    words = words.rstrip(". ")
    return f"{rule}: {words} — {todo[:1].lower() + todo[1:].rstrip('.')}" if todo else f"{rule}: {words}"


def _denied(decision: Decision) -> str:
    return _refusal(decision.rule, decision.reason)


@dataclass
class _Lander:
    """Where a source path lands: under ``into``, each folder in the spelling the vault (or, failing
    that, the first file of the source) already gives it."""

    vault_case: dict[str, str]
    into: str = ""
    source_case: dict[str, str] = field(default_factory=dict)
    # source folder -> where it lands: exact, as a folder's spelling is fixed by the first file that names it
    # (``source_case`` only ever gains keys), and it saves a caseless key per folder per file
    _folders: dict[str, str] = field(default_factory=dict)

    def land(self, rel: str) -> str:
        # NFC first, so a folder's spelling (``source_case``) is never fixed by a decomposed name, and the
        # git door (which refuses a path not in NFC: its pusher can rename) gets the one spelling it accepts
        folder, slash, name = unicodedata.normalize("NFC", rel).rpartition("/")
        landed = self._folders.get(folder)
        if landed is None:
            landed = self._folders[folder] = self._land_folder(folder if slash else None)
        return f"{landed}/{name}" if landed else name

    def _land_folder(self, rel_folder: str | None) -> str:
        parts = ([*self.into.split("/")] if self.into else []) + (rel_folder.split("/") if rel_folder else [])
        landed: list[str] = []
        for segment in parts:
            folder = "/".join([*landed, segment])
            key = caseless_key(folder)
            spelled = self.vault_case.get(key) or self.source_case.setdefault(key, folder)
            landed.append(spelled.rsplit("/", 1)[-1])
        return "/".join(landed)


def import_folder(
    notes: NotesService,
    env: Environment,
    caller: Caller,
    src: Path,
    *,
    message: str,
    progress: Callable[[int], None] | None = None,
    on_scanned: Callable[[int], None] | None = None,
    on_commit: Callable[[str, int, int], None] | None = None,
    allow_secrets: bool = False,
    into: str = "",
    encoding: str | None = None,
    dry_run: bool = False,
    allow_policy_folders: bool = False,
    after_commits: Callable[[], None] | None = None,
) -> ImportReport:
    """``on_scanned(n)`` hears how many candidate files the folder holds (a progress bar's total);
    ``on_commit(commit, done, total)`` hears each batch once it is pushed (files imported so far, of all).

    A note holding what looks like a credential is refused unless the owner insists (``allow_secrets``):
    history keeps it forever.  ``into`` must be a folder path (``FolderPath``); ``encoding`` a codec name
    the caller has looked up.  With ``dry_run`` everything is decided and reported, nothing committed.

    ``after_commits()`` runs once the last batch is pushed (never after a refused batch, nor when nothing
    was committed), in a thread while this process catches the search index up, and the import returns when
    both are done (an error of either is raised): the CLI's final repack, a ``git`` subprocess, then runs on
    the other core beside the catch-up instead of after it.
    """
    policy = notes.policy
    store = env.store
    report = ImportReport(dry_run=dry_run)
    if into:
        into = FolderPath.parse(into.strip("/")).value
    candidates, report.skipped, report.refused = scan_source(src)
    if on_scanned is not None:
        on_scanned(len(candidates))
    snapshot = store.listing()
    listing = snapshot.notes
    head = store.head()
    lander = _Lander(dict(snapshot.folder_case), into)
    changes: list[Change] = []
    batch = max(1, policy.max_files_per_commit)
    # The blobs of each batch-to-be, as records made in the pool, go into one pack as soon as the batch is
    # full (not at its commit: the records are then dropped, instead of a compressed copy of every file
    # being held beside its bytes until the end, +187 MB at 100,000 notes); ``packed`` keeps their ids.
    records: list[Record] = []
    packed: set[bytes] = set()
    # blob id -> the bytes committed under it, for the index's catch-up (it need not read them back from git):
    # the same bytes objects ``changes`` holds anyway, so no copy
    known: dict[str, bytes] = {}
    examined = _examined(notes, caller, lander, candidates, encoding)
    verdicts = notes.content_verdicts()  # the recipe reuses these: each file's content is decided once
    # imported note or canvas -> the links it holds, for the link report: the links, not the texts, are kept
    # (a 100,000-note import held every text twice, as bytes to commit and as str, for this report alone)
    links: dict[str, list[Link]] = {}
    seen_case: dict[str, tuple[str, str]] = {}  # caseless key -> (source path, vault path) of the first file
    for rel, _full, _size in candidates:
        if progress is not None:
            progress(1)
        dest, is_note, before, read = next(examined)
        if before is not None:  # skipped or refused before its bytes were read
            (report.skipped if before[0] == "skipped" else report.refused).append((rel, before[1]))
            continue
        data, decoded, scanned, found, record = read
        if not is_note and extension_of(rel) == "canvas" and (relocated := canvas_relocated(data, lander.land)):
            data, record = relocated, None  # its file nodes follow the files under --into
        text: str | None = None  # a canvas's text, scanned here (a note's was scanned in the pool: ``scanned``)
        used: str | None = None
        if is_note:
            if isinstance(decoded, str):
                report.refused.append((rel, decoded))
                continue
            (used,) = decoded  # ``data`` is the UTF-8 bytes to commit, converted from ``used`` if it is set
        current = (listing if is_note else snapshot.attachments).get(dest, ABSENT)
        blob = ABSENT if current == ABSENT else str(pygit2.Oid(raw=record[0]) if record else pygit2.hash(data))
        exists = decide_import_existing(dest, current, blob)
        if not exists.allowed:
            report.refused.append((rel, _denied(exists)))
            continue
        if exists.rule == "import-unchanged":  # nothing is written, wherever it is
            report.unchanged.append(dest)
            continue
        folder = decide_import_folder(policy, dest, allow_policy_folders=allow_policy_folders)
        if not folder.allowed:
            report.refused.append((rel, _denied(folder)))
            continue
        content = notes.decide_content(dest, data, verdicts=verdicts)  # what the git door would refuse, per file
        if content.allowed and not is_note and extension_of(rel) == "canvas":
            content = decide_canvas(data)
        if not content.allowed:
            report.refused.append((rel, _denied(content)))
            continue
        if not is_note and extension_of(rel) == "canvas":
            text = data.decode("utf-8-sig")  # decide_canvas parsed it: it is UTF-8 JSON, scanned like a note
        if is_note or text is not None:
            findings = scanned if is_note else scan_credentials(text)
            if findings:
                gate = decide_credential(caller, allow_secrets)
                if not gate.allowed:
                    where = "; ".join(describe(f) for f in findings[:3])
                    report.refused.append((rel, _refusal(gate.rule, f"{gate.reason}: {where}")))
                    continue
        key = caseless_key(dest)
        if key in seen_case:  # the key folds case and Unicode normalisation: NFC twins collide here too
            other, other_dest = seen_case[key]
            words = (
                f"it and {other} in the source are one name in Unicode NFC, {dest}"
                if other_dest == dest
                else f"it differs only in case from {other} in the source"
            )
            report.refused.append((rel, _refusal("path-case-collision", words)))
            continue
        seen_case[key] = (rel, dest)
        existing = snapshot.collision(dest)
        if existing is not None:
            report.refused.append(
                (rel, _refusal("path-case-collision", f"it differs only in case from {existing} in the vault"))
            )
            continue
        nfc = unicodedata.normalize("NFC", rel)
        if nfc != rel:
            report.renamed.append((rel, dest))
        if dest != nfc:
            report.landed.append((rel, dest))
        if used is not None:
            report.converted.append((dest, used))
        changes.append(Change(dest, data))
        if not dry_run:
            record = record if record is not None else blob_record(data)
            records.append(record)
            known[record[0].hex()] = data
            if len(records) == batch:
                _pack(store, records, packed)
                records = []
        if is_note:
            report.added.append(dest)
            links[dest] = found
        else:
            report.attachments.append(dest)
            if text is not None:  # a canvas: the files its nodes show are links too
                links[dest] = canvas_links(json.loads(text))
    report.missing_links = _missing_links(store, head, links, [c.path for c in changes])
    if dry_run:
        return report
    _pack(store, records, packed)
    with trees_cached():
        try:
            _commit_batches(notes, env, caller, changes, packed, message, batch, verdicts, report, on_commit)
        except BaseException:
            if report.commits:  # the batches left the index behind (index_now=False): one catch-up for them all
                env.index.catch_up(store, known=known)
            raise
        if report.commits:
            _catch_up_beside(env, known, after_commits)
    return report


def _catch_up_beside(env: Environment, known: dict[str, bytes], after_commits: Callable[[], None] | None) -> None:
    """The index's one catch-up for every batch, with ``after_commits`` running meanwhile in a thread.

    Why a thread is safe here: what runs beside the catch-up is, for the CLI, ``store.repack`` (a subprocess:
    the thread waits without the GIL).  The catch-up reads the new notes' bytes from ``known``, not from the
    packs the repack replaces, and the trees and commits it walks are found again in the new pack when their
    loose copies go (libgit2 rereads the pack folder when an object is missing, as for any reader of a
    repacking clone).  Both are waited for; the catch-up's error first, else the other's."""
    if after_commits is None:
        env.index.catch_up(env.store, known=known)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="import-after") as beside:
        done = beside.submit(after_commits)
        try:
            env.index.catch_up(env.store, known=known)
        finally:
            failed = done.exception()  # waits: the thread's work is over before this returns or raises
    if failed is not None:
        raise failed


def _commit_batches(
    notes: NotesService,
    env: Environment,
    caller: Caller,
    changes: list[Change],
    packed: set[bytes],
    message: str,
    batch: int,
    verdicts: ContentVerdicts,
    report: ImportReport,
    on_commit: Callable[[str, int, int], None] | None,
) -> None:
    """Each batch through the recipe, pushed before the next is built.  The search index is caught up once
    by the caller, after the last batch: per batch it was a catch-up (a history walk, a listing, the rows'
    lookups) for every 2,000 files."""
    store = env.store
    with packed_blobs(store.repo) as registered:
        registered.update(packed)  # the recipe's tree building finds these blobs packed (bulk.stored_blob)
        for start in range(0, len(changes), batch):
            _commit_batch(notes, env, caller, changes, start, message, batch, verdicts, report)
            if on_commit is not None:
                on_commit(report.commits[-1], min(start + batch, len(changes)), len(changes))


def _commit_batch(
    notes: NotesService,
    env: Environment,
    caller: Caller,
    changes: list[Change],
    start: int,
    message: str,
    batch: int,
    verdicts: ContentVerdicts,
    report: ImportReport,
) -> None:
    """One batch's commit through the recipe, which still decides and commits every file."""
    part = changes[start : start + batch]
    label = message if len(changes) <= batch else f"{message} ({start // batch + 1}/{-(-len(changes) // batch)})"
    try:
        result = notes.commit_as(
            caller,
            env,
            part,
            {c.path: ABSENT for c in part},
            label,
            new_paths=tuple(c.path for c in part),
            verdicts=verdicts,
            index_now=False,
            intent=Intent(op="import"),
        )
    except NotegateError as exc:
        raise _stopped(exc, report, done=[c.path for c in changes[:start]], total=len(changes)) from exc
    report.commit = result.commit
    report.commits.append(result.commit)


def _pack(store, records: list[Record], ids: set[bytes]) -> None:
    """One batch's blobs as one pack, here and in a local origin (asked each time: an origin may go away
    meanwhile), before the batch is committed; their ids into ``ids``.  A pack no commit names is inert
    (vault/bulk.py): a file refused later, or a batch the recipe refuses, leaves no note behind.  The ids are
    only registered when the pack reached every repository: the commit's own pack leaves out a registered blob,
    so a local origin must have it already (else the commit's pack carries it, and says if it cannot)."""
    origin = local_origin_dir(store.origin_url)
    repos = [store.repo_dir, *([origin] if origin is not None else [])]
    try:
        written = write_records(repos, records, strict=True)
    except OSError:
        return
    if written is not None:
        ids.update(oid for oid, _record, _crc in records)


#: From this many candidate files on, the reading, decoding, credential scan and link extraction of each note
#: run in a pool of processes (the decisions and the commits stay here); below it the pool's start costs more.
POOL_FROM = 2000
POOL_CHUNK = 256  # files per task: big enough that the pickling of a task is noise, small enough to balance
#: Chunks handed to the pool per worker before the oldest is taken back: enough to keep the workers busy
#: while this process decides the next chunk, few enough that results do not pile up (all chunks at once
#: held every file's bytes of a 100,000-note import in the result queue).
POOL_AHEAD = 2


def _examined(notes: NotesService, caller: Caller, lander: _Lander, candidates, encoding: str | None):
    """Per candidate, in order: (vault path, is it a note, ("skipped"|"refused", line) or None, what
    :func:`_examine` found in its bytes or None).

    The decisions made before a file is read (its type, path, policy and size: :func:`_decide_file`) are
    made here, in order, a chunk of candidates at a time; only the files they let through are read, each by
    :func:`_examine` -- in a pool of processes for a big import (the two cores of a small server: the
    credential scan and the decoding are most of an import's CPU), inline for a small one.  The pool works
    on earlier chunks while this process decides the next, with at most ``POOL_AHEAD`` chunks per worker
    in flight.  The results are the same either way and come back in the candidates' order, so the
    report's order does not depend on the pool."""
    policy = notes.policy

    def plan_of(part) -> tuple[list[tuple[str, bool, tuple[str, str] | None]], list[tuple[str, bool, str | None]]]:
        plan: list[tuple[str, bool, tuple[str, str] | None]] = []
        work: list[tuple[str, bool, str | None]] = []
        for rel, full, size in part:
            dest = lander.land(rel)
            is_note = extension_of(rel) == "md"
            if not is_note and not media_type_of(policy.attachment_types, rel):
                kind = f".{extension_of(rel)} files" if extension_of(rel) else "files without an extension"
                plan.append((dest, is_note, ("skipped", f"{kind}: not a type the policy allows (attachment_types)")))
                continue
            verdict = _decide_file(notes, caller, dest, size, is_note)
            if isinstance(verdict, str):
                plan.append((dest, is_note, ("refused", verdict)))
                continue
            plan.append((dest, is_note, None))
            work.append((str(full), is_note, encoding))
        return plan, work

    parts = (candidates[i : i + POOL_CHUNK] for i in range(0, len(candidates), POOL_CHUNK))
    workers = os.cpu_count() or 1
    if len(candidates) < POOL_FROM or workers < 2:
        for part in parts:
            plan, work = plan_of(part)
            yield from _zip_plan(plan, _examine(work))
        return
    # spawn, not fork: the parent holds open repositories, a database and maybe threads
    with ProcessPoolExecutor(max_workers=workers, mp_context=get_context("spawn")) as pool:
        pending: deque = deque()
        for part in parts:
            plan, work = plan_of(part)
            pending.append((plan, pool.submit(_examine, work)))
            if len(pending) > POOL_AHEAD * workers:
                plan, future = pending.popleft()
                yield from _zip_plan(plan, future.result())
        while pending:
            plan, future = pending.popleft()
            yield from _zip_plan(plan, future.result())


def _zip_plan(plan, results):
    results = iter(results)
    for dest, is_note, before in plan:
        yield dest, is_note, before, (None if before is not None else next(results))


def _examine(items: list[tuple[str, bool, str | None]]) -> list[tuple]:
    """A pool task: :func:`_examine_one` for each file of a chunk."""
    return [_examine_one(item) for item in items]


def _examine_one(item: tuple[str, bool, str | None]) -> tuple:
    """(bytes, decoded, credential findings, links, pack record) of one file.  For a note that decodes, the
    bytes are those to commit (UTF-8, converted if need be), ``decoded`` is ``(encoding converted from or
    None,)`` and the findings and links are those of its text; the text itself stays here (the parent only
    needs what was found in it, and sending every text back cost a copy of each note through the pipe).  For
    a note that does not decode, the bytes read and :func:`_decode`'s refusal line; for an attachment only
    the bytes.  The record (:func:`blob_record`: id, compressed data) is that of the
    bytes that would be committed, for the batch's pack: made here, in the pool, it is no longer the
    parent's work (zlib and SHA-1 were 10 s of the parent's 204 s at 100,000 notes).  Pure work on one
    file's bytes: what is done with it is decided by the caller, in order, exactly as if it had read the
    file itself."""
    full, is_note, encoding = item
    data = Path(full).read_bytes()
    if not is_note:
        return data, None, None, None, blob_record(data)
    decoded = _decode(data, encoding)
    if isinstance(decoded, str):
        return data, decoded, None, None, None
    text, committed, used = decoded
    return committed, (used,), scan_credentials(text), links_in(text), blob_record(committed)


def _decide_file(notes: NotesService, caller: Caller, dest: str, size: int, is_note: bool) -> str | None:
    """The decisions made before a file's bytes are read (path, policy, size as :func:`scan_source` found
    it): a refusal line, or None."""
    policy = notes.policy
    try:
        parsed = NotePath.parse(dest) if is_note else AttachmentPath.parse(dest)
    except PathRejected as exc:
        return _refusal(exc.rule, exc.message)
    decision = decide(policy, caller, Action.CREATE, parsed)
    if not decision.allowed:
        return _denied(decision)
    limit, rule, name = (
        (policy.max_note_bytes, "note-too-large", "max_note_bytes")
        if is_note
        else (policy.max_attachment_bytes, "attachment-too-large", "max_attachment_bytes")
    )
    if size > limit:
        return _refusal(rule, f"{size:,} bytes: over `{name}` ({human_size(limit)})")
    return None


def _decode(data: bytes, encoding: str | None) -> tuple[str, bytes, str | None] | str:
    """(text, the UTF-8 bytes to commit, the encoding converted from or None), or a refusal line."""
    try:
        return data.decode("utf-8"), data, None
    except UnicodeDecodeError:
        pass
    if encoding is None:
        guess = guess_encoding(data)
        return _refusal("content-not-utf8", f"not UTF-8; looks like {guess}: pass --encoding {guess}")
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        guess = guess_encoding(data)
        return _refusal(
            "content-not-utf8", f"neither UTF-8 nor {encoding}; looks like {guess}: pass --encoding {guess}"
        )
    return text, text.encode("utf-8"), encoding


def _missing_links(store, head: str | None, links: dict[str, list[Link]], imported: list[str]) -> list[tuple[str, str]]:
    """Every (note or canvas, link) among the imported files that points at nothing in the vault after the
    import."""
    if not links:
        return []
    present = [path for path, _blob in store.changed_notes(None, head)] if head else []
    targets = LinkTargets([*present, *imported])
    missing: list[tuple[str, str]] = []
    for path, found in links.items():
        for link in found:
            if not resolves(link, path, targets):
                missing.append((path, link.as_written()))
    return missing


def _stopped(exc: NotegateError, report: ImportReport, *, done: list[str], total: int) -> NotegateError:
    """The refusal of a batch, saying how far the import got (the pushed batches stay) and how to resume."""
    pushed = set(done)
    report.added = [p for p in report.added if p in pushed]
    report.attachments = [p for p in report.attachments if p in pushed]
    so_far = (
        f"{len(done)} of {total} files were imported in {len(report.commits)} commit(s), the last {report.commit[:12]}"
        if report.commit
        else f"none of the {total} files was imported"
    )
    return NotegateError(
        f"the import stopped at its commit {len(report.commits) + 1}: {so_far}; {exc.message}",
        rule=exc.rule,
        remedy=(exc.remedy + " " if exc.remedy else "")
        + "Then run the same notegate import again: files already in the vault are left alone, so it resumes "
        "where it stopped.",
    )
