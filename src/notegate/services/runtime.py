"""The live parts of a deployment: per-environment store and index, the state DB, the clock.

Doors build one :class:`Runtime` from a :class:`~notegate.config.Config` and hand it to services.  Paths
on disk (under the config's ``state_dir``)::

    state.sqlite                 tokens, previews, audit (and later sessions, grants, inbox authorship)
    envs/<name>/vault.git        the server's bare clone of the environment's origin
    envs/<name>/index.sqlite     the FTS5 search index
    envs/<name>/write.lock       serialises writers across processes
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from notegate.config import Config
from notegate.errors import OriginUnavailable
from notegate.policy import Policy
from notegate.safety import names
from notegate.state import StateDB
from notegate.vault.index import SearchIndex
from notegate.vault.store import VaultStore

log = logging.getLogger("notegate")
Clock = Callable[[], float]


def policy_fingerprint(policy: Policy) -> str:
    """Changes when the policy would classify paths differently (then the index re-classifies its rows)."""
    return hashlib.sha256(repr(("index-v2", policy.private, policy.inbox_root)).encode()).hexdigest()[:16]


def env_dir(state_dir: Path, name: str) -> Path:
    """Where one environment's clone, index and write lock live (the doctor looks here too)."""
    return state_dir / "envs" / name


CLONE_NAME = "vault.git"


@dataclass
class Environment:
    name: str
    store: VaultStore
    index: SearchIndex

    def on_advance(self, _old: str | None, _new: str) -> None:
        """Keep the index in step whenever main moves (our writes and fetched commits alike)."""
        self.index.catch_up(self.store)


class Runtime:
    def __init__(self, config: Config, *, clock: Clock = time.time) -> None:
        self.config = config
        self.policy = config.policy
        self.clock = clock
        self.state = StateDB(config.state_dir / "state.sqlite")
        self._envs: dict[str, Environment] = {}
        self._lock = threading.Lock()

    def env_dir(self, name: str) -> Path:
        return env_dir(self.config.state_dir, name)

    def environment(self, name: str | None, *, index_now: bool = True) -> Environment:
        cfg = self.config.environment(name)
        env = self._envs.get(cfg.name)
        if env is not None:
            return env
        with self._lock:
            env = self._envs.get(cfg.name)
            if env is None:
                env = self._open(cfg.name, cfg.origin_url, index_now=index_now)
                self._envs[cfg.name] = env
        return env

    def _open(self, name: str, origin_url: str, *, index_now: bool = True) -> Environment:
        directory = self.env_dir(name)
        repo_dir = directory / CLONE_NAME
        if (repo_dir / "HEAD").exists():
            store = VaultStore(name, repo_dir, origin_url)
        else:
            store = VaultStore.create(name, repo_dir, origin_url)
        index = SearchIndex(directory / "index.sqlite", self.classify, policy_fingerprint(self.policy))
        env = Environment(name=name, store=store, index=index)
        try:  # start from the origin's truth (a crash may have left a pushed commit unrecorded here)
            store.fetch()
        except OriginUnavailable as exc:
            log.warning("environment %s: serving the last fetched state: %s", name, exc.message)
        store.listing()  # warm: the first read should not pay for it
        if index_now:
            index.catch_up(store)
        return env

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
        if not background_index:
            warm.join()
        for name in self.config.environments:
            env = self.environment(name, index_now=not background_index)
            if background_index:
                threading.Thread(
                    target=env.index.catch_up, args=(env.store,), name=f"index-{name}", daemon=True
                ).start()

    def sync(self, name: str) -> tuple[str | None, str | None]:
        """Fetch the origin and index whatever arrived. Called on the policy's interval."""
        env = self.environment(name)
        old, new = env.store.fetch(on_advance=env.on_advance)
        env.index.catch_up(env.store)
        return old, new

    def sync_all(self) -> None:
        for name in self.config.environments:
            try:
                self.sync(name)
            except OriginUnavailable as exc:
                log.warning("fetch failed for environment %s: %s", name, exc.message)

    def maintain(self) -> None:
        """Repack loose objects once there are many (in-memory commits leave them behind)."""
        for env in self._envs.values():
            if env.store.needs_repack(self.policy.repack_loose_objects):
                env.store.repack()

    def close(self) -> None:
        for env in self._envs.values():
            env.index.close()
        self.state.close()
