"""A write's own checks, outside the planner: its text, its secrets, its base revision, a case twin.

Why its own module: the recipe (:mod:`notegate.services.recipe`) runs a plan -- the planner's verdict, the
preview or the confirmation, the quota, the store's commit, the bookkeeping.  Before a write is stated as a
:class:`~notegate.services.recipe.WriteIntent`, and around the commit, the note operations check what the
caller sent and shape the refusals it meets, each with the facts the caller needs to act: text that cannot be
a note (not UTF-8, a NUL, over the size limit), a credential (its kind and position, never its value), a
malformed base revision, a base that moved on (the current revision and the diff from the caller's base), a
path differing from an existing note or folder only by letter case.  That is this module's one job, as
:class:`WriteChecks`, a mixin of :class:`~notegate.services.recipe.WriteRecipe` over the attributes the
service has (``policy``).  Moved out of ``services/recipe.py`` unchanged.
"""

from __future__ import annotations

import re
from contextlib import suppress

from notegate.errors import ContentRejected, GateRejected, NotegateError, OriginUnavailable, StaleRevision
from notegate.policy import Caller, Policy, decide_credential
from notegate.safety.rules import describe_where
from notegate.safety.secrets import scan_credentials
from notegate.services.runtime import Environment
from notegate.vault.linediff import unified_diff
from notegate.vault.store import ABSENT


class WriteChecks:
    """The checks and refusals of :class:`~notegate.services.recipe.WriteRecipe` (see the module docstring)."""

    policy: Policy

    def encoded_content(self, text: str) -> bytes:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ContentRejected(
                f"the text is not valid UTF-8 (unpaired surrogate at character {exc.start})",
                rule="content-not-utf8",
            ) from exc
        if "\x00" in text:
            raise ContentRejected(
                "the text contains a NUL character (binary data)",
                rule="content-binary",
            )
        if len(data) > self.policy.max_note_bytes:
            raise ContentRejected(
                f"the note would be {len(data)} bytes, over the limit of {self.policy.max_note_bytes}",
                rule="note-too-large",
            )
        return data

    def check_secrets(
        self, caller: Caller, text: str, allow_secret: bool, *, seam: str = "", own_text_at: int = 0
    ) -> None:
        """No credential reaches git history from a restricted or hosted caller; trusted callers must insist.

        A secret committed once stays in every clone forever, so this runs before anything is committed
        (and before a preview). The refusal names the kind and position, never the value. An append is
        scanned joined to the end of the note (``seam``), so a token split across two appends is seen
        whole; only findings reaching into the new text count (the old text was judged when it was written).
        ``own_text_at`` is where in ``text`` the caller's own words begin (an inbox item puts a title heading
        or a separator before them): positions are given in the words the caller sent, which is what it can
        find and fix, not in the seam or the rendered item.
        """
        joined = seam
        findings = self._new_findings(seam, text)
        if seam and not findings:
            # The append's own line break joins the two parts in the note: judge them joined without it too.
            joined = seam.rstrip("\r\n")
            findings = self._new_findings(joined, text)
        if not findings:
            return
        where = "; ".join(
            describe_where(f, joined + text, len(joined), len(joined) + own_text_at) for f in findings[:5]
        )
        more = f" and {len(findings) - 5} more" if len(findings) > 5 else ""
        decision = decide_credential(caller, allow_secret)
        if decision.allowed:
            return
        if decision.rule == "credential-found":
            remedy = (
                "Nothing was written. Remove it or replace it with a placeholder such as <API_KEY>: "
                "a secret committed once stays in every clone's history forever."
            )
        else:
            remedy = (
                "Nothing was written. A secret committed once stays in every clone's history forever. "
                "If you really mean to commit it, repeat the call with allow_secret=true."
            )
        raise GateRejected(f"{decision.reason}: {where}{more}", rule=decision.rule, remedy=remedy)

    @staticmethod
    def _new_findings(old: str, text: str) -> list:
        """Findings in ``old + text`` that reach into ``text`` and are not a secret already in ``old``."""
        if not old:
            return scan_credentials(text)
        old_starts = {f.start for f in scan_credentials(old)}
        return [f for f in scan_credentials(old + text) if f.end > len(old) and f.start not in old_starts]

    def text_of(self, env: Environment, blob: str) -> str:
        if blob == ABSENT:
            return ""
        try:
            return env.store.read_unverified_blob(blob).decode("utf-8", errors="replace")
        except (KeyError, ValueError):
            return ""

    @staticmethod
    def fetched_blob(env: Environment, path: str) -> str:
        """The note's revision after one fetch: with several replicas on one origin, a base the caller read on
        another replica is newer than this clone until the next periodic fetch, and is not stale. An origin
        out of reach leaves the clone's answer (the write could not be pushed anyway)."""
        with suppress(OriginUnavailable):
            env.store.fetch(on_advance=env.on_advance)
        return env.store.blob_id(path)

    def stale(self, env: Environment, path: str, base: str, current: str) -> StaleRevision:
        # The diff starts from the caller's base only if that was once a version of *this* note; any other blob
        # id (say, of a private note) is never read back to the caller.
        known = base in (ABSENT, current) or any(b == base for _, b in env.store.history(path, 500))
        base_text = self.text_of(env, base) if known else ""
        current_text = self.text_of(env, current)
        diff = unified_diff(base_text, current_text, path, f"your base {base[:12]}", f"now {current[:12]}")
        return StaleRevision(
            f"{path} changed since revision {base[:12]}: it is now at {current[:12] if current != ABSENT else 'absent'}"
            f" (the diff from your base to now is attached)",
            current_revision=current,
            diff=diff,
        )

    @staticmethod
    def _case_collision(path: str, existing: str) -> NotegateError:
        """``existing`` is a note's path, or a folder's with ``/`` after it (``Listing.collision``): the text
        names which, and for a folder the path spelled as the vault spells it (case-insensitive file systems
        would merge the two folders in every clone)."""
        if existing.endswith("/"):
            depth = existing.count("/")  # the folders ``existing`` names, spelled by the vault
            spelled = existing + "/".join(path.split("/")[depth:])
            return NotegateError(
                f"{path} is in a folder that differs only by letter case from the existing folder {existing}",
                rule="path-case-collision",
                remedy=f"Write it in the existing folder, as {spelled}, or choose a clearly different name.",
            )
        return NotegateError(
            f"{path} differs only by letter case from the existing note {existing}",
            rule="path-case-collision",
        )

    @staticmethod
    def _normalise_base(base_revision: str) -> str:
        base = (base_revision or "").strip().lower()
        if base in ("", "none", "null", "new"):
            raise NotegateError(
                "base_revision is required",
                rule="base-revision-required",
            )
        if base != ABSENT and not re.fullmatch(r"[0-9a-f]{40}", base):
            raise NotegateError(
                f"base_revision '{base_revision[:50]}' is not a revision",
                rule="base-revision-invalid",
            )
        return base
