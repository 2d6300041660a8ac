"""The store's fetch: the origin's tip fetched and vetted outside the write lock, main moved to what was judged
under it, and main's commits the origin lost made again on its tip (:mod:`notegate.vault.converge`).

A mixin of :class:`notegate.vault.store.VaultStore` (issue 29 §4): methods only, over the attributes
``VaultStore.__init__`` sets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pygit2

from notegate.errors import OriginUnavailable
from notegate.vault import converge, refwrite
from notegate.vault.listing import (
    Listing,
)
from notegate.vault.storebase import (
    KEPT_VERDICTS,
    MAIN_REF,
    TRACKING_REF,
    Author,
    Change,
    FetchRefusal,
    Verdict,
    _Judging,
    _Request,
    _short,
    log,
)
from notegate.vault.trees import (
    _entry_blob,
    changed_paths,
)


class Fetching:
    """The fetch of :class:`~notegate.vault.store.VaultStore` (methods only; the store holds the state)."""

    # ----------------------------------------------------------------- fetch
    def fetch(self, on_advance: Callable[[str | None, str], None] | None = None) -> tuple[str | None, str | None]:
        """Take the origin's tip as ours (git is the truth), once the vet accepts it. Returns (old, new) tips.

        The origin's objects and tip are fetched, and the range vetted, *without* the write lock: a long range
        (20,000 pushed commits took 9-15 s to vet) would otherwise stall every writer of the environment.  The
        lock is taken only to move main, and only on what was judged: if main moved meanwhile (a write was
        pushed), the origin is fetched again under the lock and any new range judged there (a writer whose push
        found the origin moved waits for the verdict being made instead of making it twice: :meth:`_judge`)."""
        if self._lock_owner == threading.get_ident():  # inside a hold already (a contract): judge under it
            return self._fetch_locked(on_advance)
        old = self.head()
        new = self._fetch_tip()
        if new is not None and new != old and self.vet is not None:
            refusal = self.refusal
            if refusal is None or refusal.tip != new or refusal.good != old:
                repo = pygit2.Repository(str(self.repo_dir))  # this thread's own: writers use self.repo meanwhile
                base = self._base(old, new, repo)
                if base != new:
                    self._judge(base, new, repo)  # kept for the locked step
        with self.write_lock():
            return self._fetch_locked(on_advance, fetched=(old, new))

    def _fetch_tip(self) -> str | None:
        """Fetch the origin's main into the tracking ref (objects and tip; main does not move). None: the origin
        has no main.  One fetch at a time per store (the locked and the unlocked steps share the ref)."""
        with self._fetch_lock:
            try:
                self.repo.remotes["origin"].fetch([f"+{MAIN_REF}:{TRACKING_REF}"])
            except pygit2.GitError as exc:
                raise OriginUnavailable(
                    f"the origin of environment '{self.name}' could not be reached ({_short(exc)})",
                    remedy="Serving the last fetched state; writes are refused until the origin is back.",
                ) from exc
            try:
                return str(self.repo.references[TRACKING_REF].target)
            except KeyError:
                return None

    def _base(self, old: str | None, new: str, repo: pygit2.Repository | None = None) -> str | None:
        """Where the vet starts for the origin's tip ``new``: main when the tip descends from it (the usual
        case), else the last commit both share (the origin lost commits of ours: :mod:`notegate.vault.converge`
        re-applies them once the origin's own new commits pass), None when they share nothing."""
        repo = repo if repo is not None else self.repo
        if old is None or repo.descendant_of(new, old):
            return old
        found = repo.merge_base(old, new)
        return str(found) if found is not None else None

    def _judge(self, good: str | None, tip: str, repo: pygit2.Repository | None = None) -> Verdict:
        """The vet's verdict on ``good`` -> ``tip``, made once: a thread that needs a verdict another thread is
        making waits for it (the unlocked fetch makes it; a writer whose push found the origin moved needs the
        same one), and the last few verdicts are kept for the locked step that moves main."""
        assert self.vet is not None
        key = (good, tip)
        with self._judging_lock:
            judging = self._judging.get(key)
            mine = judging is None
            if judging is None:
                judging = self._judging[key] = _Judging()
                while len(self._judging) > KEPT_VERDICTS:
                    del self._judging[next(iter(self._judging))]
        if not mine:
            judging.done.wait()
            if judging.verdict is not None:
                return judging.verdict
            return self._judge(good, tip, repo)  # the other thread's vet failed: make it here
        try:
            judging.verdict = self.vet(repo if repo is not None else self.repo, good, tip)
        except BaseException:
            with self._judging_lock:
                self._judging.pop(key, None)
            raise
        finally:
            judging.done.set()
        return judging.verdict

    def _fetch_locked(
        self,
        on_advance: Callable[[str | None, str], None] | None,
        fetched: tuple[str | None, str | None] | None = None,
    ) -> tuple[str | None, str | None]:
        """Move main to the origin's tip if it is judged good (under the write lock). ``fetched``: the (main, tip)
        an unlocked :meth:`fetch` saw a moment ago; used as is while main has not moved since."""
        old = self.head()
        new = fetched[1] if fetched is not None and fetched[0] == old else self._fetch_tip()
        if new is None:
            return old, old
        if new == old:
            self.refusal = None
            return old, new
        base = self._base(old, new)
        refusal = self.refusal
        if refusal is None or refusal.tip != new or refusal.good != old:  # judge each (main, tip) once
            verdict = self._judge(base, new) if self.vet is not None and base != new else None
            refusal = None if verdict is None or verdict.ok else FetchRefusal(tip=new, good=old, verdict=verdict)
            if refusal is None and base != old:  # the origin lost commits of ours: re-apply them on its tip
                assert old is not None
                settled = self._converge(old, base, new)
                if isinstance(settled, str):
                    new = settled
                elif settled is not None:
                    refusal = FetchRefusal(tip=new, good=old, verdict=settled)
                else:  # the origin moved while we re-applied: the next fetch starts again from its new tip
                    return old, old
        self.refusal = refusal
        if refusal is not None:
            return old, old  # stay on the last good commit; the tracking ref keeps what the origin has
        refwrite.update_ref(self.repo_dir, MAIN_REF, new)
        if on_advance is not None:
            on_advance(old, new)
        return old, new

    def _converge(self, old: str, base: str | None, new: str) -> str | converge.Stuck | None:
        """The origin's tip ``new`` passed the vet but lost commits of main: re-apply them on it as new commits
        (:mod:`notegate.vault.converge`), pushed as a compare-and-swap from ``new``. Returns the new main, or
        why the server cannot do it alone, or None when the origin moved meanwhile (the next fetch sees it)."""
        tip_listing: list[Listing] = []

        def collision(path: str) -> str | None:
            if not tip_listing:
                tip_listing.append(self._full_listing(new))
            return tip_listing[0].collision(path)

        planned = converge.plan(
            self.repo, old, base, new, lambda a, b: list(changed_paths(self.repo, a, b)), _entry_blob, collision
        )
        if isinstance(planned, converge.Stuck):
            log.warning("environment %s: %s", self.name, planned.summary())
            return planned
        if not planned:  # the origin already holds every lost change
            return new
        group = [
            _Request(
                changes=tuple(
                    Change(path, None if blob is None else self.read_unverified_blob(blob)) for path, blob in r.changes
                ),
                expect={},
                author=Author(r.author_name, r.author_email.removesuffix("@notegate")),
                message=r.message,
                new_paths=(),
                on_advance=None,
            )
            for r in planned
        ]
        chain, made, _befores = self._build_chain(new, group)
        failed = next((r.error for r in group if r.error is not None), None)
        if failed is not None or len(chain) != len(group):
            raise OriginUnavailable(
                f"the commits of environment '{self.name}' the origin lost could not be made again ({_short(failed)})",
                remedy="Nothing was written. The server tries again at its next fetch.",
            )
        last = chain[-1][1]
        self._write_group(made)
        if not self._push(last, new):
            return None
        log.warning(
            "environment %s: the origin's tip %s had lost %d commit(s) the server acknowledged; re-applied as %s",
            self.name,
            new[:12],
            len(planned),
            str(last)[:12],
        )
        return str(last)
