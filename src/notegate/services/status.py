"""``notegate status``: what the owner wants to know at a glance, read without changing anything.

Per environment: the origin (reachable, the server's clone in step with it: its refs are listed, never
fetched), the last commit (id and time: never its message, which a caller wrote), notes, the search index
(size on disk, whether it has caught up with the clone), inbox items waiting and held. Overall: tokens, the
last review and reflect runs. Every value is produced by code (counts, ids, times, yes/no), never read from
a note.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

from notegate.config import Config
from notegate.errors import OriginUnavailable
from notegate.policy import fixed_client
from notegate.services.runtime import CLONE_NAME, Runtime, env_dir, policy_fingerprint
from notegate.state import StateDB
from notegate.vault.index import SearchIndex
from notegate.vault.store import VaultStore

ORIGIN_TIMEOUT = 10.0


@dataclass
class EnvironmentStatus:
    name: str
    origin_reachable: bool
    in_sync: bool | None  # None: unknown (origin unreachable, or no clone yet)
    sync: str  # in words: "in sync", "behind by 2", "ahead by 1", "diverged", "unknown"
    head: str | None
    last_commit_at: float | None
    notes: int
    index_bytes: int
    index_commit: str | None
    index_fresh: bool
    inbox_waiting: int
    inbox_held: int


@dataclass
class Status:
    version: str
    environments: list[EnvironmentStatus] = field(default_factory=list)
    tokens_active: int = 0
    tokens_revoked: int = 0
    last_review_at: float | None = None
    last_reflect_at: float | None = None

    def to_json(self) -> dict:
        return asdict(self)


def _sync_words(ahead: int | None, behind: int | None) -> tuple[bool | None, str]:
    if ahead == 0 and behind == 0:
        return True, "in sync"
    if ahead == 0:
        return False, f"behind by {behind}" if behind is not None else "behind"
    if behind == 0:
        return False, f"ahead by {ahead}" if ahead is not None else "ahead"
    if ahead is None or behind is None:
        return None, "unknown"
    return False, "diverged"


def _environment(config: Config, state: StateDB, name: str, origin_url: str, classify) -> EnvironmentStatus:
    directory = env_dir(config.state_dir, name)
    clone = directory / CLONE_NAME
    index_file = directory / "index.sqlite"
    index_bytes = sum(p.stat().st_size for p in directory.glob("index.sqlite*")) if directory.exists() else 0
    empty = EnvironmentStatus(name, False, None, "no clone yet", None, None, 0, index_bytes, None, False, 0, 0)
    if not (clone / "HEAD").exists():
        return empty
    store = VaultStore(name, clone, origin_url)
    head = store.head()
    try:
        tip = store.origin_main(ORIGIN_TIMEOUT)
        reachable = True
        in_sync, sync = _sync_words(*store.compare_with_origin(tip))
    except OriginUnavailable:
        reachable, in_sync, sync = False, None, "unknown (origin unreachable)"
    listing = store.listing()
    policy = config.policy
    items = [p for p in listing.notes if policy.inbox_item(p) is not None]
    held = set(state.holds(name))
    index_commit = _indexed_commit(index_file, classify, policy_fingerprint(policy))
    return EnvironmentStatus(
        name=name,
        origin_reachable=reachable,
        in_sync=in_sync,
        sync=sync,
        head=head,
        last_commit_at=float(store.commit_info(head).commit_time) if head else None,
        notes=len(listing.notes),
        index_bytes=index_bytes,
        index_commit=index_commit,
        index_fresh=index_commit == head,
        inbox_waiting=sum(1 for p in items if p not in held),
        inbox_held=sum(1 for p in items if p in held),
    )


def _indexed_commit(path: Path, classify, fingerprint: str) -> str | None:
    """The commit the index last caught up with; opened as the server opens it (same policy fingerprint, so
    nothing is reclassified), never caught up here."""
    if not path.exists():
        return None
    index = SearchIndex(path, classify, fingerprint)
    try:
        return index.indexed_commit
    finally:
        index.close()


def collect(config: Config, version: str) -> Status:
    runtime = Runtime(config)  # for its path classifier only: no environment is opened or fetched
    state = runtime.state
    try:
        status = Status(version=version)
        for name, env in config.environments.items():
            status.environments.append(_environment(config, state, name, env.origin_url, runtime.classify))
        rows = state.tokens()
        status.tokens_active = sum(1 for r in rows if r["revoked_at"] is None)
        status.tokens_revoked = len(rows) - status.tokens_active
        status.last_review_at = state.last_audit_at(fixed_client("job:review"))
        status.last_reflect_at = state.reflect_last_start()
    finally:
        runtime.close()
    return status
