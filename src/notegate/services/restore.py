"""`notegate restore`: check a backup folder, decrypt it into a new directory that serves it, or rehearse.

The order of checks (each refusal names its rule; nothing is written before all of 1-5 passed):

1. an identity is given ``[backup-no-identity]`` and holds an age identity ``[backup-identity-invalid]``;
2. ``manifest.json`` is there ``[backup-file-missing]`` and parses strictly ``[backup-manifest-invalid]``;
3. it is not from a newer format or state schema ``[backup-manifest-newer]``;
4. the seal decrypts with the identity ``[backup-wrong-identity]`` (a cut or changed seal:
   ``[backup-file-altered]``) and holds the manifest's exact hash ``[backup-file-altered]`` naming manifest.json;
5. every file is there, of its size and hash ``[backup-file-missing|truncated|altered]`` naming the file;
6. into the target (new or empty ``[restore-target-not-empty]``): each file decrypted and its plaintext hash
   checked, the state database, one bare origin per environment (from its bundle, with the pre-receive hook),
   and a ``notegate.toml`` that serves them (the original config, with its paths pointed at the new folder).

``--rehearse`` restores into a temporary directory and runs the named checks of :func:`rehearse`.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pyrage

from notegate.auth.tokens import create_token
from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.network import LOOPBACK_V4
from notegate.policy import (
    ClientClass,
    Tier,
    decide_backup_file,
    decide_backup_manifest,
    decide_new_state_database,
    decide_restore_target,
    decide_state_url_stored,
)
from notegate.postgres import describe_url
from notegate.services.backup import GIT_TIMEOUT, build_index, replay, sha256_file
from notegate.services.backup_manifest import (
    CONFIG_FILE,
    FORMAT_VERSION,
    MANIFEST_NAME,
    MAX_SEAL_BYTES,
    SEAL_NAME,
    STATE_FILE,
    Manifest,
    Seal,
    parse_manifest,
    parse_seal,
)
from notegate.state import SCHEMA_VERSION, StateDB, inspect_postgres
from notegate.sync.hookfile import bound_pack, install_hook
from notegate.vault import durable
from notegate.vault.layout import CONFIG_NAME, render_toml
from notegate.vault.store import clone_local, git_fsck, missing_objects, repository_from_bundle, repository_refs

ORIGINS = "origins"
SERVE_TIMEOUT = 90.0
#: age's header and per-64 KiB chunk tags around the seal's JSON: far less than this.
SEAL_OVERHEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class OpenedBackup:
    """A backup folder whose manifest, seal and files all checked out against one identity."""

    folder: Path
    manifest: Manifest
    seal: Seal
    identity: pyrage.x25519.Identity


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def load_identity(path: Path | None) -> pyrage.x25519.Identity:
    if path is None:
        raise NotegateError("no identity given", rule="backup-no-identity")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        raise NotegateError("the identity file cannot be read", rule="backup-identity-invalid") from None
    keys = [line.strip() for line in lines if line.strip().startswith("AGE-SECRET-KEY-")]
    if len(keys) != 1:
        raise NotegateError("the identity file does not hold exactly one age identity", rule="backup-identity-invalid")
    try:
        return pyrage.x25519.Identity.from_str(keys[0])
    except (pyrage.IdentityError, ValueError):
        raise NotegateError("the identity file does not hold an age identity", rule="backup-identity-invalid") from None


def _refuse(decision) -> None:
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)


def open_backup(folder: Path, identity_file: Path | None) -> OpenedBackup:
    """Steps 1-5 of the module's order: a backup to restore from, or a refusal naming what is wrong."""
    identity = load_identity(identity_file)
    manifest_path = folder / MANIFEST_NAME
    if not manifest_path.is_file():
        raise NotegateError(f"the backup file {MANIFEST_NAME} is missing", rule="backup-file-missing")
    raw = manifest_path.read_bytes()
    manifest = parse_manifest(raw)
    _refuse(
        decide_backup_manifest(
            manifest.format_version,
            manifest.schema_version,
            supported_format=FORMAT_VERSION,
            supported_schema=SCHEMA_VERSION,
        )
    )
    seal_path = folder / SEAL_NAME
    if not seal_path.is_file():
        raise NotegateError(f"the backup file {SEAL_NAME} is missing", rule="backup-file-missing")
    if seal_path.stat().st_size > MAX_SEAL_BYTES + SEAL_OVERHEAD_BYTES:
        raise NotegateError(
            f"the backup file {SEAL_NAME} was altered (it is far too large)", rule="backup-file-altered"
        )
    try:
        seal = parse_seal(pyrage.decrypt(seal_path.read_bytes(), [identity]))
    except pyrage.DecryptError as exc:
        if "no matching keys" in str(exc).lower():
            raise NotegateError("this backup is not encrypted to that identity", rule="backup-wrong-identity") from None
        raise NotegateError(f"the backup file {SEAL_NAME} was altered or cut", rule="backup-file-altered") from None
    if seal.manifest_sha256 != hashlib.sha256(raw).hexdigest():
        raise NotegateError(
            f"the backup file {MANIFEST_NAME} was altered (its hash is not the one sealed in {SEAL_NAME})",
            rule="backup-file-altered",
        )
    for name, entry in sorted(manifest.files.items()):
        path = folder / name
        present = path.is_file()
        size = path.stat().st_size if present else 0
        digest = sha256_file(path) if present and size == entry.size else ""
        _refuse(
            decide_backup_file(
                name, present=present, expected_size=entry.size, size=size, expected_sha256=entry.sha256, sha256=digest
            )
        )
    return OpenedBackup(folder=folder, manifest=manifest, seal=seal, identity=identity)


def _decrypt(backup: OpenedBackup, name: str, out: Path) -> Path:
    entry = backup.manifest.files[name]
    try:
        pyrage.decrypt_file(str(backup.folder / name), str(out), [backup.identity])
    except pyrage.DecryptError:
        raise NotegateError(f"the backup file {name} was altered or cut", rule="backup-file-altered") from None
    if out.stat().st_size != entry.plain_size or sha256_file(out) != entry.plain_sha256:
        raise NotegateError(
            f"the backup file {name} decrypted to other bytes than recorded", rule="backup-file-altered"
        )
    return out


def restore_into(backup: OpenedBackup, target: Path, *, port: int | None = None, state_url: str = "") -> Path:
    """Step 6: the state database, one bare origin per environment and a config serving them, in ``target``
    (new or empty).  Returns the new config's path.

    The state goes into SQLite under the target's state_dir, or with ``state_url`` into that PostgreSQL
    database, which must be reachable ``[state-unavailable]``, hold no notegate rows ``[state-database-not-
    empty]`` and be named without a password ``[state-url-password]`` (the URL is written into the config).
    A backup of a deployment on PostgreSQL restores into SQLite unless a state URL is given: a restore never
    points the restored config at the database the backup was taken from."""
    exists = target.exists()
    entries = len(list(target.iterdir())) if target.is_dir() else int(exists)  # a file there counts as one
    _refuse(decide_restore_target(exists, entries))
    if state_url:
        _check_state_target(state_url)
    target.mkdir(parents=True, exist_ok=True)
    os.chmod(target, 0o700)
    try:
        config_path = _restore_files(backup, target, port, state_url)
        if state_url:
            _load_state(target / "state" / "state.sqlite", state_url)
        return config_path
    except BaseException:  # a restore cut short leaves the directory as it found it (new or empty)
        for child in target.iterdir():
            shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
        if not exists:
            target.rmdir()
        raise


def _check_state_target(state_url: str) -> None:
    """A PostgreSQL database to restore the state into: named without a password, reachable, empty."""
    _refuse(decide_state_url_stored(state_url))
    status = inspect_postgres(state_url)
    if status.unreachable:
        raise NotegateError(
            f"the state database ({describe_url(state_url)}) could not be reached: {status.unreachable}",
            rule="state-unavailable",
        )
    _refuse(decide_new_state_database(status.rows))


def _load_state(copy_path: Path, state_url: str) -> None:
    """The restored SQLite copy's rows into the PostgreSQL database (one transaction), then the copy removed:
    the restored config names the database, and no second copy of the state stays behind."""
    copy, live = StateDB(copy_path), StateDB(copy_path.with_name("unused.sqlite"), url=state_url)
    try:
        live.load_from(copy)
    finally:
        live.close()
        copy.close()
    for leftover in copy_path.parent.glob(copy_path.name + "*"):
        leftover.unlink()


def _restore_files(backup: OpenedBackup, target: Path, port: int | None, state_url: str = "") -> Path:
    with tempfile.TemporaryDirectory(prefix="notegate-restore-") as work_name:
        work = Path(work_name)
        (target / "state").mkdir()
        _decrypt(backup, STATE_FILE, target / "state" / "state.sqlite")
        original = tomllib.loads(_decrypt(backup, CONFIG_FILE, work / CONFIG_NAME).read_text(encoding="utf-8"))
        (target / ORIGINS).mkdir()
        for name, env in sorted(backup.manifest.environments.items()):
            bundle = None if env.file is None else _decrypt(backup, env.file, work / f"{name}.bundle")
            repository_from_bundle(bundle, target / ORIGINS / f"{name}.git", GIT_TIMEOUT)
    # The config comes last, whole: what serves the folder (and a hook names) exists only once everything it
    # names is on disk, so a restore cut short (a power cut: no cleanup runs) leaves no config, never half a
    # deployment that serves (with durability on, as `notegate restore` runs: notegate.vault.durable).
    config_path = target / CONFIG_NAME
    pending = target / f".{CONFIG_NAME}.partial"
    pending.write_text(_restored_config(original, backup, port, state_url), encoding="utf-8")
    restored = load_config(pending)  # the restored config must load, or the restore is not done
    for name in sorted(backup.manifest.environments):
        origin = target / ORIGINS / f"{name}.git"
        install_hook(origin, config_path, name)
        bound_pack(origin, restored.policy.max_push_bytes)
        pygit2.Repository(str(origin)).config["core.fsync"] = "all"  # as `notegate init` makes an origin
    durable.flush_tree(target)
    pending.rename(config_path)
    durable.flush_folder(target)
    return config_path


def _restored_config(original: dict, backup: OpenedBackup, port: int | None, state_url: str = "") -> str:
    """The original config with its paths pointed at the restored folder: ``state_dir = "state"`` and each
    environment's origin the restored bare repository (a forge origin comes back as a local one; push it
    to the forge and set ``origin`` again to go back); ``[state] url`` the one restored into, or none."""
    doc = json.loads(json.dumps(original))  # a deep copy of plain TOML values
    server = doc.setdefault("server", {})
    server["state_dir"] = "state"
    doc.pop("state", None)  # never the database the backup was taken from
    if state_url:
        doc["state"] = {"url": state_url}
    if port is not None:
        server["host"] = LOOPBACK_V4
        server["port"] = port
        server["public_url"] = ""
    for name in backup.manifest.environments:
        doc.setdefault("environments", {}).setdefault(name, {})["origin"] = f"{ORIGINS}/{name}.git"
    header = (
        "# Restored by `notegate restore` from a backup taken "
        f"{backup.manifest.created_at} (notegate {backup.manifest.notegate_version}).\n"
        "# Each origin is the restored bare repository under origins/; push it to a forge and set origin to go back.\n"
    )
    return header + render_toml(doc)


# ------------------------------------------------------------------ rehearsal
def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK_V4, 0))
        return s.getsockname()[1]


def rehearse(backup: OpenedBackup, *, say: Callable[[Check], None] = lambda _c: None) -> list[Check]:
    """Restore into a temporary directory and run the named checks; each is passed to ``say`` as it ends."""
    checks: list[Check] = []

    def record(name: str, ok: bool, detail: str) -> None:
        check = Check(name, ok, detail)
        checks.append(check)
        say(check)

    with tempfile.TemporaryDirectory(prefix="notegate-rehearse-") as work_name:
        work = Path(work_name)
        port = free_port()
        config_path = restore_into(backup, work / "restored", port=port)
        record("restore", True, "every file decrypted to the bytes the manifest records")
        config = load_config(config_path)
        for name, env in sorted(backup.manifest.environments.items()):
            origin = work / "restored" / ORIGINS / f"{name}.git"
            refs = repository_refs(origin)
            missing = missing_objects(origin, sorted(set(env.refs.values())))
            ok = refs == env.refs and not missing
            record(
                f"refs {name}",
                ok,
                f"{len(env.refs)} refs, every commit present"
                if ok
                else f"{len(set(env.refs.items()) ^ set(refs.items()))} refs differ, {len(missing)} commits missing",
            )
            problems = git_fsck(origin, GIT_TIMEOUT) if refs else []
            record(f"fsck {name}", not problems, "git fsck clean" if not problems else problems[0][:200])
        db = StateDB(config.state_dir / "state.sqlite")
        try:
            counts, digests = db.table_counts(), db.secret_digests()
        finally:
            db.close()
        differ = sorted(
            t for t in set(counts) | set(backup.manifest.tables) if counts.get(t) != backup.manifest.tables.get(t)
        )
        record(
            "state rows",
            not differ,
            f"{len(counts)} tables, every row count equal"
            if not differ
            else f"row counts differ in {', '.join(differ)}",
        )
        bad = sorted(k for k in backup.manifest.secret_digests if digests.get(k) != backup.manifest.secret_digests[k])
        record(
            "credential hashes",
            not bad,
            "token, OAuth token and grant hashes equal" if not bad else f"hashes differ in {', '.join(bad)}",
        )
        _check_index(backup, config, work, record)
        _check_serve(backup, config_path, port, record)
    return checks


def _check_index(backup: OpenedBackup, config, work: Path, record: Callable[[str, bool, str], None]) -> None:
    by_env: dict[str, list] = {}
    for query in backup.seal.queries:
        by_env.setdefault(query.environment, []).append(query)
    for name in sorted(backup.manifest.environments):
        recorded = by_env.get(name, [])
        if not recorded:
            record(f"index {name}", True, "no notes, no queries recorded")
            continue
        scratch = work / "check" / f"{name}.git"  # a copy: the restored origin stays exactly as restored
        scratch.parent.mkdir(exist_ok=True)
        clone_local(work / "restored" / ORIGINS / f"{name}.git", scratch, GIT_TIMEOUT)
        _store, index = build_index(config, name, scratch)
        try:
            same = [q for q in recorded if replay(index, q.query) == q.hits]
        finally:
            index.close()
        record(
            f"index {name}",
            len(same) == len(recorded),
            f"rebuilt; {len(same)} of {len(recorded)} recorded queries give the same hits",
        )


def _check_serve(backup: OpenedBackup, config_path: Path, port: int, record: Callable[[str, bool, str], None]) -> None:
    """Start the real ``notegate serve`` on the restored folder and read the recorded note over MCP."""
    seal = backup.seal
    if seal.read_path is None:
        record("serve", True, "nothing to read (no visible note); not started")
        return
    config = load_config(config_path)
    db = StateDB(config.state_dir / "state.sqlite")
    try:  # a token of the rehearsal's own, in the throw-away copy only
        token, _ = create_token(
            db,
            name="rehearsal",
            client_class=ClientClass.WORKSTATION,
            tier=Tier.RESTRICTED,
            login=config.environment(seal.read_environment).owner,
            environment=seal.read_environment,
            now=time.time(),
        )
    finally:
        db.close()
    log_path = config_path.parent / "serve.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "notegate.cli", "serve", "--config", str(config_path), "--port", str(port)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    try:
        ok, detail = _read_over_mcp(proc, port, token, seal)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=20)
    record("serve", ok, detail)


def _http(
    port: int, method: str, path: str, body: bytes | None = None, headers: dict | None = None
) -> tuple[int, bytes]:
    """One HTTP request to the rehearsal's own server on loopback."""
    conn = http.client.HTTPConnection(LOOPBACK_V4, port, timeout=30)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


def _read_over_mcp(proc: subprocess.Popen, port: int, token: str, seal: Seal) -> tuple[bool, str]:
    deadline = time.monotonic() + SERVE_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False, f"notegate serve exited with status {proc.returncode}"
        try:
            if _http(port, "GET", "/healthz")[0] == 200:
                break
        except OSError:
            pass
        time.sleep(0.1)
    else:
        return False, f"notegate serve did not answer /healthz in {SERVE_TIMEOUT:g} s"
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "read_note", "arguments": {"path": seal.read_path, "environment": seal.read_environment}},
    }
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    try:
        status, raw = _http(port, "POST", "/mcp", json.dumps(message).encode(), headers)
        body = json.loads(raw)
    except (OSError, ValueError) as exc:
        return False, f"the read over MCP failed ({type(exc).__name__})"
    if status != 200 or not isinstance(body, dict):
        return False, f"the read over MCP was answered {status}"
    result = body.get("result") or {}
    text = (result.get("structuredContent") or {}).get("text")
    if result.get("isError") or not isinstance(text, str):
        return False, "the read over MCP was refused"
    if hashlib.sha256(text.encode("utf-8")).hexdigest() != seal.read_sha256:
        return False, "the note read over MCP differs from the one backed up"
    return True, f"served on 127.0.0.1:{port}; a note read over MCP equals the one backed up"
