"""A backup's manifest and seal: what each file of a backup folder is, read strictly.

Theory of operation.  A backup folder holds age-encrypted files (the state database, one git bundle per
environment, the config) and two descriptions of them:

* ``manifest.json`` (plain JSON, readable without the identity): for every file its size and SHA-256 as
  stored (the ciphertext) and as restored (the plaintext), every environment's refs, the state database's
  schema version, row counts and digests of its stored credential hashes, the notegate version and the
  time.  Plain so that a truncated, altered or missing file is named before anything is decrypted.
* ``seal.age`` (encrypted to the same recipient): the SHA-256 of the exact manifest bytes, plus what the
  rehearsal replays (a few search queries with their hits, one note to read through the server).  Queries
  and paths come from notes, so they stay inside the encryption.

Tampering: changing a file changes its hash (named by :func:`notegate.policy.decide_backup_file`); changing
the manifest to match changes the manifest's hash, which the seal holds; age's authenticated encryption
refuses a changed or cut seal.  What this does not stop: anyone who knows the recipient's *public* key can
write a whole new backup (age has no sender signature).  Keep the recipient key with the backup job, not
published, and the identity off the server; a signature would need a signing key on the server, which is
exactly what a thief of the server would also take.

The parser is total over its input: any bytes give a :class:`Manifest` or raise :class:`ManifestInvalid`
(rule ``backup-manifest-invalid``); nothing else escapes (a hypothesis property pins it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import notegate.strictjson as strictjson
from notegate.errors import NotegateError

FORMAT = "notegate-backup"
#: The manifest layout this code writes and reads (policy.decide_backup_manifest refuses a newer one).
FORMAT_VERSION = 1
MANIFEST_NAME = "manifest.json"
SEAL_NAME = "seal.age"
STATE_FILE = "state.sqlite.age"
CONFIG_FILE = "notegate.toml.age"
MAX_MANIFEST_BYTES = 1 << 20
MAX_SEAL_BYTES = 4 << 20

_HEX64 = re.compile(r"[0-9a-f]{64}\Z")
_OID = re.compile(r"[0-9a-f]{40}\Z")
_FILE = re.compile(r"[a-z0-9][a-z0-9_.-]{0,120}\.age\Z")
_ENV = re.compile(r"[A-Za-z0-9_-]{1,64}\Z")
_REF = re.compile(r"refs/[A-Za-z0-9_./-]{1,200}\Z")
_TABLE = re.compile(r"[a-z][a-z0-9_]{0,63}\Z")
_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z\Z")
_VERSION = re.compile(r"[0-9A-Za-z.+_-]{1,64}\Z")


class ManifestInvalid(NotegateError):
    rule = "backup-manifest-invalid"


def bundle_name(environment: str) -> str:
    """The file one environment's bundle is stored as (environment names are ASCII slugs, lowercased here
    only to fit the file name pattern; two names differing by case get a suffix from the caller)."""
    return f"env-{environment.lower()}.bundle.age"


@dataclass(frozen=True)
class FileEntry:
    size: int
    sha256: str
    plain_size: int
    plain_sha256: str


@dataclass(frozen=True)
class EnvironmentEntry:
    file: str | None  # None: the repository had no commit yet (nothing to bundle)
    refs: dict[str, str]


@dataclass(frozen=True)
class Manifest:
    format_version: int
    notegate_version: str
    created_at: str
    schema_version: int
    tables: dict[str, int]
    secret_digests: dict[str, str]
    environments: dict[str, EnvironmentEntry]
    files: dict[str, FileEntry]

    def to_json(self) -> bytes:
        doc = {
            "format": FORMAT,
            "format_version": self.format_version,
            "notegate_version": self.notegate_version,
            "created_at": self.created_at,
            "state": {
                "schema_version": self.schema_version,
                "tables": self.tables,
                "secret_digests": self.secret_digests,
            },
            "environments": {
                name: {"file": env.file, "refs": env.refs} for name, env in sorted(self.environments.items())
            },
            "files": {
                name: {"size": f.size, "sha256": f.sha256, "plain_size": f.plain_size, "plain_sha256": f.plain_sha256}
                for name, f in sorted(self.files.items())
            },
        }
        return (json.dumps(doc, indent=2, sort_keys=True) + "\n").encode("utf-8")


@dataclass(frozen=True)
class RecordedQuery:
    environment: str
    query: str
    hits: tuple[str, ...]


@dataclass(frozen=True)
class Seal:
    manifest_sha256: str
    queries: tuple[RecordedQuery, ...]
    read_environment: str | None
    read_path: str | None
    read_sha256: str | None

    def to_json(self) -> bytes:
        doc = {
            "manifest_sha256": self.manifest_sha256,
            "queries": [{"environment": q.environment, "query": q.query, "hits": list(q.hits)} for q in self.queries],
            "read": None
            if self.read_path is None
            else {"environment": self.read_environment, "path": self.read_path, "sha256": self.read_sha256},
        }
        return json.dumps(doc, sort_keys=True).encode("utf-8")


# ------------------------------------------------------------------ strict reading
def _shown(text: str) -> str:
    """A key or value named in a refusal: short and escaped (it comes from a file anyone could have written)."""
    return text[:40].encode("unicode_escape").decode("ascii")


def _load(raw: bytes, limit: int, what: str) -> Any:
    if len(raw) > limit:
        raise ManifestInvalid(f"the {what} is larger than {limit} bytes")
    try:
        return strictjson.loads(raw)
    except (ValueError, RecursionError) as exc:
        key, constant = strictjson.repeated_key(exc), strictjson.constant_named(exc)
        if key is not None:
            raise ManifestInvalid(f"the key '{_shown(key)}' appears twice") from None
        if constant is not None:
            raise ManifestInvalid(f"the manifest holds {constant}, which is not JSON") from None
        raise ManifestInvalid(f"the {what} is not JSON ({type(exc).__name__})") from None


def _object(value: Any, keys: set[str], where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ManifestInvalid(f"{where} must be an object")
    if set(value) != keys:
        extra = sorted(set(value) - keys)
        missing = sorted(keys - set(value))
        raise ManifestInvalid(
            f"{where} has unexpected keys {[_shown(k) for k in extra]} or lacks {missing}"
            if extra or missing
            else f"{where} is malformed"
        )
    return value


def _int(value: Any, where: str, *, low: int = 0, high: int = 1 << 53) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ManifestInvalid(f"{where} must be a whole number from {low} to {high}")
    return value


def _text(value: Any, pattern: re.Pattern[str], where: str) -> str:
    if not isinstance(value, str) or pattern.match(value) is None:
        raise ManifestInvalid(f"{where} is malformed")
    return value


def _mapping(value: Any, where: str, key: re.Pattern[str], limit: int = 10_000) -> dict[str, Any]:
    if not isinstance(value, dict) or len(value) > limit:
        raise ManifestInvalid(f"{where} must be an object of at most {limit} entries")
    for name in value:
        _text(name, key, f"a key of {where}")
    return value


def parse_manifest(raw: bytes) -> Manifest:
    """The manifest in ``raw``, or :class:`ManifestInvalid`: exact keys, exact types, bounded sizes; file
    names are plain ``*.age`` names (never a path), refs are ``refs/...`` with 40-hex ids."""
    doc = _object(
        _load(raw, MAX_MANIFEST_BYTES, "manifest"),
        {"format", "format_version", "notegate_version", "created_at", "state", "environments", "files"},
        "the manifest",
    )
    if doc["format"] != FORMAT:
        raise ManifestInvalid("the manifest is not a notegate backup manifest")
    format_version = _int(doc["format_version"], "format_version", low=1, high=1 << 31)
    state = _object(doc["state"], {"schema_version", "tables", "secret_digests"}, "state")
    files = {
        _text(name, _FILE, "a file name"): _file_entry(entry, name)
        for name, entry in _mapping(doc["files"], "files", _FILE).items()
    }
    environments = {}
    for name, entry in _mapping(doc["environments"], "environments", _ENV, limit=256).items():
        env = _object(entry, {"file", "refs"}, f"environment {name}")
        file = None if env["file"] is None else _text(env["file"], _FILE, f"environment {name} file")
        if file is not None and file not in files:
            raise ManifestInvalid(f"environment {name} names a file the manifest does not list")
        refs = {ref: _text(oid, _OID, f"a ref of {name}") for ref, oid in _mapping(env["refs"], "refs", _REF).items()}
        if (file is None) != (not refs):
            raise ManifestInvalid(f"environment {name} must have a bundle exactly when it has refs")
        environments[name] = EnvironmentEntry(file=file, refs=refs)
    for required in (STATE_FILE, CONFIG_FILE):
        if required not in files:
            raise ManifestInvalid(f"the manifest does not list {required}")
    named = {STATE_FILE, CONFIG_FILE} | {env.file for env in environments.values() if env.file}
    if set(files) != named:
        raise ManifestInvalid("the manifest lists files no part of the backup names")
    return Manifest(
        format_version=format_version,
        notegate_version=_text(doc["notegate_version"], _VERSION, "notegate_version"),
        created_at=_text(doc["created_at"], _TIME, "created_at"),
        schema_version=_int(state["schema_version"], "schema_version", low=1, high=1 << 31),
        tables={k: _int(v, f"the row count of {k}") for k, v in _mapping(state["tables"], "tables", _TABLE).items()},
        secret_digests={
            k: _text(v, _HEX64, f"the digest of {k}")
            for k, v in _mapping(state["secret_digests"], "secret_digests", _TABLE).items()
        },
        environments=environments,
        files=files,
    )


def _file_entry(value: Any, name: str) -> FileEntry:
    entry = _object(value, {"size", "sha256", "plain_size", "plain_sha256"}, f"file {name}")
    return FileEntry(
        size=_int(entry["size"], f"the size of {name}"),
        sha256=_text(entry["sha256"], _HEX64, f"the sha256 of {name}"),
        plain_size=_int(entry["plain_size"], f"the plain size of {name}"),
        plain_sha256=_text(entry["plain_sha256"], _HEX64, f"the plain sha256 of {name}"),
    )


def parse_seal(raw: bytes) -> Seal:
    """The decrypted seal, or :class:`ManifestInvalid` (it was written by us and authenticated by age, so a
    malformed one means a notegate that writes something else)."""
    doc = _object(_load(raw, MAX_SEAL_BYTES, "seal"), {"manifest_sha256", "queries", "read"}, "the seal")
    queries = doc["queries"]
    if not isinstance(queries, list) or len(queries) > 1000:
        raise ManifestInvalid("the seal's queries must be a list")
    recorded = []
    for item in queries:
        q = _object(item, {"environment", "query", "hits"}, "a recorded query")
        hits = q["hits"]
        if not isinstance(q["query"], str) or not isinstance(hits, list) or not all(isinstance(h, str) for h in hits):
            raise ManifestInvalid("a recorded query is malformed")
        recorded.append(RecordedQuery(_text(q["environment"], _ENV, "a query's environment"), q["query"], tuple(hits)))
    read = doc["read"]
    if read is not None:
        read = _object(read, {"environment", "path", "sha256"}, "the seal's read")
        if not isinstance(read["path"], str):
            raise ManifestInvalid("the seal's read path is malformed")
    return Seal(
        manifest_sha256=_text(doc["manifest_sha256"], _HEX64, "the manifest's hash"),
        queries=tuple(recorded),
        read_environment=None if read is None else _text(read["environment"], _ENV, "the read's environment"),
        read_path=None if read is None else read["path"],
        read_sha256=None if read is None else _text(read["sha256"], _HEX64, "the read's hash"),
    )
