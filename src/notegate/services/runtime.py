"""The live parts of a deployment: per-environment store and index, the state DB, the clock.

Doors build one :class:`Runtime` from a :class:`~notegate.config.Config` and hand it to services.  Paths
on disk (under the config's ``state_dir``)::

    state.sqlite                 tokens, previews, audit (and later sessions, grants, inbox authorship)
    envs/<name>/vault.git        the server's bare clone of the environment's origin
    envs/<name>/index.sqlite     the FTS5 search index
    envs/<name>/meaning.sqlite   one vector per note, beside the index ([server] search_meaning)
    envs/<name>/write.lock       serialises writers across processes

Environments fail alone: each is opened under its own lock, each fetch runs in its own thread
(:meth:`Runtime.sync_all`), and an origin that is unreachable, hangs or is refused only ever holds up its
own environment.  A refused fetch (:mod:`notegate.sync.fetchvet`) is logged once per refused tip (rule
names and paths, never contents) and leaves a task note for the environment's owner in the state DB, which
``list_inbox`` shows first; it is marked resolved once a fetch finds the origin repaired.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from notegate.auth.members import Membership, seed_members
from notegate.config import Config
from notegate.errors import OriginUnavailable
from notegate.policy import Policy
from notegate.safety import names
from notegate.services import provenance
from notegate.services.diskspace import no_space
from notegate.services.envdirs import CLONE_NAME, env_dir
from notegate.services.eventlog import event
from notegate.state import StateDB
from notegate.sync.fetchvet import FetchVerdict, summary, task_text, vet_fetch
from notegate.vault import durable
from notegate.vault.converge import Stuck
from notegate.vault.index import SearchIndex
from notegate.vault.store import Author, VaultStore, bound_pack_windows, read_objects_as_git_does

if TYPE_CHECKING:
    import pygit2

    from notegate.vault.meaning import MeaningIndex

log = logging.getLogger("notegate")
Clock = Callable[[], float]


def policy_fingerprint(policy: Policy) -> str:
    """Changes when the policy would classify paths differently (then the index re-classifies its rows)."""
    return hashlib.sha256(repr(("index-v2", policy.private, policy.inbox_root)).encode()).hexdigest()[:16]


#: The kind of task note a refused fetch leaves (state DB ``tasks``).
FETCH_TASK = "fetch-refused"


@dataclass
class Environment:
    name: str
    store: VaultStore
    index: SearchIndex
    meaning: MeaningIndex | None = None  # the vectors beside the index ([server] search_meaning)

    def on_advance(self, _old: str | None, _new: str) -> None:
        """Keep the index in step whenever main moves (our writes and fetched commits alike).

        On a full disk the index stays behind (it follows git: the next advance or fetch catches it up) and
        the write it follows stands: by now its commit is on the origin, and failing the call would tell the
        caller an acknowledged write was not made."""
        try:
            self.index.catch_up(self.store)
        except Exception as exc:
            if not no_space(exc):
                raise
            event("index-behind", environment=self.name, reason="disk-full")
        if self.meaning is not None:  # by meaning shortly after: embedded in the background
            self.meaning.wake(self.store, self.index)


class Runtime:
    def __init__(self, config: Config, *, clock: Clock = time.time, meaning: bool = True) -> None:
        """``meaning=False``: no vectors in this process whatever the config says (``notegate init``: a
        one-shot command would start embedding a vault only to abandon it at exit; the server embeds
        what it finds missing when it starts)."""
        bound_pack_windows()  # the listing and the index build would otherwise keep the packs they read resident
        read_objects_as_git_does()  # the hash is checked where objects arrive and by the doctor's fsck
        durable.enable(config.durability)  # process-wide: what a write flushes before it is acknowledged
        self.config = config
        self.policy = config.policy
        self.clock = clock
        self.state = StateDB.for_config(config)
        # Membership lives in the state database, the config file its seed (auth/members.py).
        self.members = Membership(self.state, lambda: self.config)
        seed_members(self.state, config, now=clock())
        self._envs: dict[str, Environment] = {}
        self._lock = threading.Lock()
        self._open_locks: dict[str, threading.Lock] = {}  # one per environment: a slow origin opens alone
        self._syncing: set[str] = set()  # environments whose fetch is running now
        #: environment -> clock time of its last fetch that reached the origin (the /metrics fetch lag)
        self.last_fetch: dict[str, float] = {}
        from notegate.vault.meaning_installed import off_reason  # looks for numpy and the model's files

        #: None when search by meaning is on; else why not ([server] search_meaning; /healthz shows it)
        self.meaning_off = off_reason(config.search_meaning) if meaning else "not in this command"

    def env_dir(self, name: str) -> Path:
        return env_dir(self.config.state_dir, name)

    def environment(self, name: str | None, *, index_now: bool = True) -> Environment:
        cfg = self.config.environment(name)
        env = self._envs.get(cfg.name)
        if env is not None:
            return env
        with self._lock:
            opening = self._open_locks.setdefault(cfg.name, threading.Lock())
        with opening:
            env = self._envs.get(cfg.name)
            if env is None:
                env = self._open(cfg.name, cfg.origin_url, index_now=index_now)
                self._envs[cfg.name] = env
        return env

    def _open(self, name: str, origin_url: str, *, index_now: bool = True) -> Environment:
        directory = self.env_dir(name)
        repo_dir = directory / CLONE_NAME

        def recorded(commit_id: str) -> bool:
            return bool(self.state.provenance(name, [commit_id]))

        def vet(repo: pygit2.Repository, good: str | None, tip: str) -> FetchVerdict:
            verdict = vet_fetch(repo, good, tip, self.policy, recorded=recorded)
            if not verdict.ok:
                log.warning("environment %s: %s", name, summary(verdict))
            return verdict

        for stale in durable.clear_stale_locks(repo_dir, directory / "write.lock"):  # a crash mid-update left it
            log.warning("environment %s: removed the stale lock file %s of the server's clone", name, stale)
        store = VaultStore.create_empty(name, repo_dir, origin_url, vet=vet)
        store.push_lock = functools.partial(self.state.push_lock, name)  # replicas queue their pushes
        store.record = functools.partial(self._record_provenance, name)  # who made it, before it is pushed
        index = SearchIndex(directory / "index.sqlite", self.classify, policy_fingerprint(self.policy))
        env = Environment(name=name, store=store, index=index)
        if self.meaning_off is None:
            from notegate.vault.meaning import MeaningIndex  # numpy and the model: only when on

            env.meaning = MeaningIndex(directory / "meaning.sqlite")
        try:  # start from the origin's truth (a crash may have left a pushed commit unrecorded here)
            store.fetch()
        except OriginUnavailable as exc:
            log.warning("environment %s: serving the last fetched state: %s", name, exc.message)
        self._record_fetch(env)
        store.listing()  # warm: the first read should not pay for it
        if index_now:
            index.catch_up(store)
            if env.meaning is not None:
                env.meaning.wake(store, index)
        return env

    def _record_provenance(self, name: str, commits: list[tuple[str, Author, str]]) -> None:
        """Who made each commit of a group (state ``commit_provenance``), before the group is pushed."""
        self.state.record_provenance(provenance.rows_for(name, commits, self.clock()))

    def _record_fetch(self, env: Environment) -> None:
        """Keep the task note in step with the last fetch: one open task per refused tip, resolved once the
        origin is repaired (the store stays refused until then, so an unreachable origin changes nothing)."""
        refusal = env.store.refusal
        now = self.clock()
        if refusal is None:
            resolved = self.state.resolve_tasks(environment=env.name, kind=FETCH_TASK, now=now)
            if resolved:
                log.warning("environment %s: the origin was repaired; the fetch moved on", env.name)
            return
        verdict = refusal.verdict
        if isinstance(verdict, Stuck):  # the origin lost commits of ours that the server cannot re-apply alone
            text = verdict.task_text(env.name)
        else:
            assert isinstance(verdict, FetchVerdict)
            text = task_text(env.name, verdict, refusal.good)
        self.state.resolve_tasks(environment=env.name, kind=FETCH_TASK, now=now, keep=refusal.tip)
        self.state.open_task(environment=env.name, kind=FETCH_TASK, key=refusal.tip, text=text, now=now)

    def classify(self, path: str) -> tuple[bool, bool]:
        """(private, inbox) for the index; the policy decides both."""
        return self.policy.is_private(path), self.policy.is_inbox(path)

    def open_all(self, *, background_index: bool = False) -> None:
        """Open every environment. With ``background_index``, reads are served at once while the search
        index catches up in a thread (a search waits for it, so it never answers from a stale index)."""
        # The instruction-file name matcher takes seconds to compile; do it now, not in the first write.
        warm = threading.Thread(
            target=names.warm, args=(self.policy.instruction_files,), name="warm-names", daemon=True
        )
        warm.start()
        if self.meaning_off is not None and self.config.search_meaning is not False:  # "auto", not installed
            log.warning("search by meaning is off: %s; searches use the words only", self.meaning_off)
        if not background_index:
            warm.join()
        for name in self.config.environments:
            env = self.environment(name, index_now=not background_index)
            if background_index:
                threading.Thread(target=self._build_index, args=(env,), name=f"index-{name}", daemon=True).start()

    def _build_index(self, env: Environment) -> None:
        started = time.perf_counter()
        env.index.catch_up(env.store)
        event("index", environment=env.name, ms=round((time.perf_counter() - started) * 1000, 1))
        if env.meaning is not None:
            env.meaning.wake(env.store, env.index)
        self._compact(env)

    @staticmethod
    def _compact(env: Environment) -> None:
        """Merge the index's segments beside the writers (``SearchIndex.compact``): after an import or a
        first build, here and not in some later write's commit."""
        started = time.perf_counter()
        steps = env.index.compact()
        if steps:
            ms = round((time.perf_counter() - started) * 1000, 1)
            event("index-compact", environment=env.name, steps=steps, ms=ms)

    def sync(self, name: str) -> tuple[str | None, str | None]:
        """Fetch the origin and index whatever arrived. Called on the policy's interval.

        Returns (old, new) tips of main; a refused fetch leaves main where it was (old == new) and
        ``store.refusal`` set."""
        env = self.environment(name)
        old, new = env.store.fetch(on_advance=env.on_advance)
        self.last_fetch[name] = self.clock()
        if old != new:
            event("fetch", environment=name, old=(old or "none")[:12], new=(new or "none")[:12])
        self._record_fetch(env)
        env.index.catch_up(env.store)
        return old, new

    def sync_all(self, wait_seconds: float | None = None) -> None:
        """Fetch every environment, each in its own thread: one that fails, is refused or hangs never holds
        up another.  Waits at most ``wait_seconds`` (default: the fetch interval) for them all; a fetch still
        running then is left to finish, and its environment is skipped until it has."""
        wait = self.policy.fetch_interval_seconds if wait_seconds is None else wait_seconds
        started: list[threading.Thread] = []
        for name in self.config.environments:
            with self._lock:
                if name in self._syncing:
                    log.warning("environment %s: the previous fetch is still running; skipped", name)
                    continue
                self._syncing.add(name)
            thread = threading.Thread(target=self._sync_alone, args=(name,), name=f"sync-{name}", daemon=True)
            thread.start()
            started.append(thread)
        deadline = time.monotonic() + wait
        for thread in started:
            thread.join(max(0.0, deadline - time.monotonic()))

    def _sync_alone(self, name: str) -> None:
        try:
            self.sync(name)
        except OriginUnavailable as exc:
            log.warning("fetch failed for environment %s: %s", name, exc.message)
        except Exception:  # one environment's failure is logged and stays its own
            log.exception("fetch failed for environment %s", name)
        finally:
            with self._lock:
                self._syncing.discard(name)

    def maintain(self) -> None:
        """Roll up loose objects (pushes into the origin leave them) and small packs (each group commit and
        fetch writes one) once there are many: a geometric repack, beside the writers (the store also rolls
        its own group packs up as it writes them).  And merge the search index's segments (a big fetch marks
        it; writes leave small ones), so no write's commit does it."""
        for env in self._envs.values():
            if env.store.needs_repack(self.policy.repack_loose_objects):
                env.store.roll_up()
            self._compact(env)

    def close(self) -> None:
        for env in self._envs.values():
            env.index.close()
            if env.meaning is not None:
                env.meaning.close()
        self.state.close()
