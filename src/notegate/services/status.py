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
from notegate.services.envdirs import CLONE_NAME, env_dir
from notegate.services.runtime import FETCH_TASK, Runtime, policy_fingerprint
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
    #: Open task notes (a refused fetch: one per refused tip), oldest first: id, created_at, text (the text
    #: is code's: short ids, counts, rule names, escaped paths; never a note's contents).
    tasks: list[dict] = field(default_factory=list)
    #: The last review of this environment: when, and its one-line result (counts only).
    last_review: dict | None = None
    last_reflect: dict | None = None

    @property
    def fetch_refused(self) -> bool:
        return any(t["kind"] == FETCH_TASK for t in self.tasks)


@dataclass
class Status:
    version: str
    environments: list[EnvironmentStatus] = field(default_factory=list)
    tokens_active: int = 0
    tokens_revoked: int = 0
    last_review_at: float | None = None
    last_reflect_at: float | None = None
    last_review_line: str | None = None
    last_reflect_line: str | None = None

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
    tasks = [
        {"id": r["id"], "kind": r["kind"], "created_at": r["created_at"], "text": r["text"]} for r in state.tasks(name)
    ]
    review = state.last_job_run("review", name)
    last_review = {"at": review["at"], "line": review["line"]} if review else None
    reflect = state.last_job_run("reflect", name)
    last_reflect = {"at": reflect["at"], "line": reflect["line"]} if reflect else None
    empty = EnvironmentStatus(
        name,
        False,
        None,
        "no clone yet",
        None,
        None,
        0,
        index_bytes,
        None,
        False,
        0,
        0,
        tasks,
        last_review,
        last_reflect,
    )
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
        tasks=tasks,
        last_review=last_review,
        last_reflect=last_reflect,
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
    try:
        return collect_from(runtime, version)
    finally:
        runtime.close()


def collect_from(runtime: Runtime, version: str, environments: list[str] | None = None) -> Status:
    """What :func:`collect` reports, over a runtime the caller already holds (the console's: its state DB and
    classifier; still no environment is opened or fetched). ``environments`` limits it to those names."""
    config, state = runtime.config, runtime.state
    status = Status(version=version)
    for name, env in config.environments.items():
        if environments is None or name in environments:
            status.environments.append(_environment(config, state, name, env.origin_url, runtime.classify))
    rows = state.tokens()
    status.tokens_active = sum(1 for r in rows if r["revoked_at"] is None)
    status.tokens_revoked = len(rows) - status.tokens_active
    status.last_review_at = state.last_audit_at(fixed_client("job:review"))
    status.last_reflect_at = state.reflect_last_start()
    review, reflect = state.last_job_run("review"), state.last_job_run("reflect")
    status.last_review_line = review["line"] if review else None
    status.last_reflect_line = reflect["line"] if reflect else None
    return status
