"""`notegate backup`: a consistent, encrypted snapshot of a deployment, safe while the server runs.

What is taken, in this order (see backup_manifest.py for the files and how tampering is caught):

1. the state database, through SQLite's online backup API (``StateDB.backup_to``): one committed state,
   whatever the server writes meanwhile;
2. every environment's repository (the server's clone: every commit it acknowledged), as a git bundle of
   all refs (``vault.store.bundle_repository``).  Taken *after* the database, so every commit the database
   names (inbox authorship, audit rows) is in the bundle; a commit made between the two is in the bundle and
   simply not yet in the database, as after a crash at that moment;
3. the config file (the restore rewrites its paths).

Each is encrypted to one age recipient (pyrage) as it is written; plaintext only ever sits in a private
temporary directory outside the backup folder, removed at the end.  The folder is written as
``NAME.partial`` and renamed when complete, so a backup cut short never looks like a whole one; with
durability on, its files are flushed before the rename and the rename after it, so a power cut cannot leave a
whole-looking folder of empty files.  The next backup into the same folder removes what one cut short left
(backup_partial.py: a ``.partial`` folder no running backup holds locked).

Not backed up: the search indexes (rebuilt from the notes), the write locks, the hooks' local state.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyrage

from notegate.config import Config
from notegate.errors import NotegateError
from notegate.services import backup_partial
from notegate.services.backup_manifest import (
    CONFIG_FILE,
    FORMAT_VERSION,
    MANIFEST_NAME,
    SEAL_NAME,
    STATE_FILE,
    EnvironmentEntry,
    FileEntry,
    Manifest,
    RecordedQuery,
    Seal,
    bundle_name,
)
from notegate.services.envdirs import CLONE_NAME, env_dir
from notegate.services.runtime import policy_fingerprint
from notegate.state import SCHEMA_VERSION, StateDB
from notegate.vault import durable
from notegate.vault.index import SearchIndex
from notegate.vault.store import VaultStore, bundle_repository, repository_from_bundle

GIT_TIMEOUT = 600.0
#: How many search queries each environment records for the rehearsal to replay.
QUERIES_PER_ENVIRONMENT = 3


@dataclass(frozen=True)
class BackupResult:
    folder: Path
    manifest: Manifest
    removed: tuple[str, ...] = ()  # the .partial folders of earlier backups cut short, removed as this one started


def parse_recipient(text: str) -> pyrage.x25519.Recipient:
    try:
        return pyrage.x25519.Recipient.from_str(text.strip())
    except (pyrage.RecipientError, ValueError):
        raise NotegateError("the recipient is not an age public key", rule="backup-recipient-invalid") from None


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _encrypt(plain: Path, out: Path, recipient: pyrage.x25519.Recipient) -> FileEntry:
    pyrage.encrypt_file(str(plain), str(out), [recipient])
    os.chmod(out, 0o600)
    return FileEntry(
        size=out.stat().st_size,
        sha256=sha256_file(out),
        plain_size=plain.stat().st_size,
        plain_sha256=sha256_file(plain),
    )


def take_backup(config: Config, to_dir: Path, recipient_text: str, *, now: datetime, version: str) -> BackupResult:
    """Write one backup folder under ``to_dir`` (``notegate-backup-<UTC time>``) and return it."""
    recipient = parse_recipient(recipient_text)
    stamp = now.strftime("%Y%m%dT%H%M%SZ")
    to_dir.mkdir(parents=True, exist_ok=True)
    removed = backup_partial.sweep(to_dir)  # what earlier backups cut short left (never one under way)
    mine = backup_partial.claim(to_dir, stamp)  # locked until renamed whole: no sweep takes it meanwhile
    final, partial = mine.final, mine.partial
    try:
        try:
            manifest = _write(config, partial, recipient, now=now, version=version)
        except BaseException:  # nothing of a backup cut short is kept
            shutil.rmtree(partial, ignore_errors=True)
            raise
        # A power cut must not leave a folder named as whole whose files never reached the disk: flushed, then
        # renamed, then the rename flushed (with durability on; notegate.vault.durable).
        durable.flush_tree(partial)
        partial.rename(final)
        durable.flush_folder(to_dir)
    finally:
        mine.release()
    return BackupResult(folder=final, manifest=manifest, removed=tuple(removed))


def _write(
    config: Config, partial: Path, recipient: pyrage.x25519.Recipient, *, now: datetime, version: str
) -> Manifest:
    files: dict[str, FileEntry] = {}
    environments: dict[str, EnvironmentEntry] = {}
    queries: list[RecordedQuery] = []
    read: tuple[str, str, str] | None = None
    with tempfile.TemporaryDirectory(prefix="notegate-backup-") as work_name:
        work = Path(work_name)
        os.chmod(work, 0o700)
        # 1. the state database
        state_copy = work / "state.sqlite"
        live = StateDB.for_config(config)
        try:
            live.backup_to(state_copy)
        finally:
            live.close()
        copy = StateDB(state_copy)
        try:
            tables, digests = copy.table_counts(), copy.secret_digests()
        finally:
            copy.close()
        files[STATE_FILE] = _encrypt(state_copy, partial / STATE_FILE, recipient)
        # 2. every environment's repository
        for name in sorted(config.environments):
            clone = env_dir(config.state_dir, name) / CLONE_NAME
            bundle = work / f"{name}.bundle"
            refs = bundle_repository(clone, bundle, GIT_TIMEOUT) if (clone / "HEAD").exists() else {}
            if not refs:
                environments[name] = EnvironmentEntry(file=None, refs={})
                continue
            file = bundle_name(name)
            while file in files:
                file = file.replace(".bundle.age", "-x.bundle.age")
            files[file] = _encrypt(bundle, partial / file, recipient)
            environments[name] = EnvironmentEntry(file=file, refs=refs)
            found, note = _record_queries(config, name, bundle, work)
            queries += found
            if read is None and note is not None and name == config.default_environment:
                read = note
        # 3. the config
        files[CONFIG_FILE] = _encrypt(config.path, partial / CONFIG_FILE, recipient)
    manifest = Manifest(
        format_version=FORMAT_VERSION,
        notegate_version=version,
        created_at=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        schema_version=SCHEMA_VERSION,
        tables=tables,
        secret_digests=digests,
        environments=environments,
        files=files,
    )
    raw = manifest.to_json()
    (partial / MANIFEST_NAME).write_bytes(raw)
    os.chmod(partial / MANIFEST_NAME, 0o600)
    seal = Seal(
        manifest_sha256=hashlib.sha256(raw).hexdigest(),
        queries=tuple(queries),
        read_environment=None if read is None else read[0],
        read_path=None if read is None else read[1],
        read_sha256=None if read is None else read[2],
    )
    (partial / SEAL_NAME).write_bytes(pyrage.encrypt(seal.to_json(), [recipient]))
    os.chmod(partial / SEAL_NAME, 0o600)
    return manifest


def build_index(config: Config, name: str, repo_dir: Path) -> tuple[VaultStore, SearchIndex]:
    """The search index of a scratch repository (the caller's own copy: its config gains a remote), built by
    the server's own code (``SearchIndex.catch_up`` over a ``VaultStore``): what a server restored from this
    repository indexes."""
    store = VaultStore(name, repo_dir, str(repo_dir))
    policy = config.policy
    index = SearchIndex(
        repo_dir.parent / f"index-{name}.sqlite",
        lambda path: (policy.is_private(path), policy.is_inbox(path)),
        policy_fingerprint(policy),
    )
    index.catch_up(store)
    return store, index


def replay(index: SearchIndex, query: str) -> tuple[str, ...]:
    """The paths a query finds, in rank order, private notes and inbox included (the whole index)."""
    return tuple(hit.path for hit in index.search(query, limit=20, include_private=True, include_inbox=True))


def _record_queries(
    config: Config, name: str, bundle: Path, work: Path
) -> tuple[list[RecordedQuery], tuple[str, str, str] | None]:
    """A few queries (words of note names, spread over the vault) and their hits in an index built from the
    bundle just written, and one visible note for the rehearsal's read through the server."""
    origin = work / f"origin-{name}.git"
    repository_from_bundle(bundle, origin, GIT_TIMEOUT)
    store, index = build_index(config, name, origin)
    try:
        paths = sorted(index.paths())
        step = max(1, len(paths) // QUERIES_PER_ENVIRONMENT)
        picked = paths[::step][:QUERIES_PER_ENVIRONMENT]
        queries = []
        for path in picked:
            words = Path(path).stem.replace("-", " ").replace("_", " ")
            queries.append(RecordedQuery(name, words, replay(index, words)))
        note = None
        for path in paths:
            if path.endswith(".md") and not config.policy.is_private(path) and not config.policy.is_inbox(path):
                found = store.read(path)
                if found is not None:
                    note = (name, path, hashlib.sha256(found[0]).hexdigest())
                    break
        return queries, note
    finally:
        index.close()
