"""`notegate pre-receive`: a bare origin's hook that refuses a push breaking the policy.

git runs ``hooks/pre-receive`` inside the origin with one ``<old> <new> <ref>`` line per updated ref on
stdin, before any ref moves; the pushed objects are still in its quarantine directory
(``GIT_OBJECT_DIRECTORY``, with the origin's own objects in ``GIT_ALTERNATE_OBJECT_DIRECTORIES``).  A
non-zero exit refuses the whole push, and whatever the hook prints on stderr the pusher reads as
``remote: …``.

For every updated ref: branches only, the default branch never deleted (:func:`policy.decide_ref_update`),
and every new commit inspected (:func:`notegate.sync.incoming.inspect_update`) with the pusher guard:
only the environment's owner -- the forge logins in ``owner_pushers`` -- may change what sessions load at
start (:func:`policy.decide_push`).  The pusher comes from the forge's variables, which only the CLI
reads (:func:`policy.identify_pusher`); an unidentified pusher is not the owner.

A commit speaking in the server's voice (a ``Notegate-*`` trailer, the server's author or committer e-mail)
passes only when the server recorded it as its own before pushing it (:func:`notegate.state.recorded_commits`,
in the state database the hook's config names: a remote origin the server pushes to needs the servers'
state database in its hook's config); any other is refused ``[push-forged-provenance]``.  Nobody can claim
to be the server: the record is keyed by the commit's id and only the server writes it.

The push as a whole is bounded: at most ``max_commits_per_push`` new commits per updated ref, inspected
within ``push_inspection_seconds`` (past it: refused, never accepted half-seen), and every object in git's
quarantine named by a pushed commit, ``max_push_bytes`` at most (:mod:`notegate.sync.quarantine`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from notegate.config import Config
from notegate.policy import Decision, decide_push, decide_ref_update, identify_pusher
from notegate.sync.incoming import Finding, explain_all, inspect_update, open_repository
from notegate.sync.quarantine import check_quarantine

__all__ = ["PreReceiveReport", "RefUpdate", "check_push", "parse_alternates", "parse_updates"]

ZERO = "0" * 40
_LINE = re.compile(r"([0-9a-f]{40}) ([0-9a-f]{40}) (\S+)\Z")


@dataclass(frozen=True)
class RefUpdate:
    old: str | None  # None: the ref is created
    new: str | None  # None: the ref is deleted
    ref: str


@dataclass(frozen=True)
class PreReceiveReport:
    findings: tuple[Finding, ...]
    pusher: str | None
    owner: bool
    updates: int

    @property
    def ok(self) -> bool:
        return not self.findings

    def lines(self) -> list[str]:
        """What the pusher reads: each finding, the remedies, and one summary line."""
        if self.ok:
            return []
        who = "unidentified pusher" if self.pusher is None else f"pusher {self.pusher}"
        role = "the owner" if self.owner else "not the owner"
        return [
            *explain_all(self.findings),
            f"push refused: {len(self.findings)} finding(s) ({who}, {role}); nothing was updated.",
        ]


def parse_updates(text: str) -> tuple[list[RefUpdate], list[Finding]]:
    """git's pre-receive input; a line that is not ``<40 hex> <40 hex> <ref>`` is a finding, never a crash."""
    updates: list[RefUpdate] = []
    bad: list[Finding] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        match = _LINE.match(line)
        if match is None:
            bad.append(Finding(ZERO, "", "incoming-malformed", "a pre-receive input line is not '<old> <new> <ref>'"))
            continue
        old, new, ref = match.groups()
        updates.append(RefUpdate(None if old == ZERO else old, None if new == ZERO else new, ref))
    return updates, bad


def parse_alternates(value: str) -> list[str]:
    """``GIT_ALTERNATE_OBJECT_DIRECTORIES``: ``:``-separated, an entry with a ``:`` in it double-quoted with
    C escapes (git's quote.c)."""
    out: list[str] = []
    i = 0
    while i < len(value):
        if value[i] == '"':
            j, chars = i + 1, []
            while j < len(value) and value[j] != '"':
                if value[j] == "\\" and j + 1 < len(value):
                    j += 1
                chars.append(value[j])
                j += 1
            out.append("".join(chars))
            i = j + 1
            if i < len(value) and value[i] == ":":
                i += 1
            continue
        end = value.find(":", i)
        end = len(value) if end < 0 else end
        if value[i:end]:
            out.append(value[i:end])
        i = end + 1
    return out


def _default_branch(repo) -> str:
    try:
        target = repo.lookup_reference("HEAD").target
    except (KeyError, ValueError):
        return "refs/heads/main"
    return target if isinstance(target, str) else "refs/heads/main"


def check_push(
    config: Config,
    environment: str,
    stdin_text: str,
    pusher_values: Mapping[str, str],
    git_dir: str | Path,
    object_dirs: Iterable[str | Path] = (),
    *,
    quarantine: Path | None = None,
) -> PreReceiveReport:
    """Judge one push: every ref update on ``stdin_text`` against ``environment``'s rules.

    ``pusher_values`` are the forge's variables (``GL_USERNAME``, …) as the hook's environment has them;
    ``object_dirs`` the quarantine and alternate object directories git names; ``quarantine`` git's
    ``GIT_QUARANTINE_PATH`` (the objects this push brought), checked whole when given."""
    policy = config.policy
    deadline = time.monotonic() + policy.push_inspection_seconds
    env = config.environment(environment)
    pusher = identify_pusher(pusher_values)
    owners = env.owner_pushers or (env.owner,)
    owner = pusher is not None and pusher in owners

    def guard(path: str) -> Decision:
        return decide_push(policy, owners, pusher, path)

    def recorded(commit_id: str) -> bool:
        """Did the server make this commit (its record in the state database the config names)?  Asked only
        about a commit speaking in the server's voice; a database out of reach answers no (refused)."""
        from notegate.state import recorded_commits  # only then: most pushes never need the state database

        try:
            return commit_id in recorded_commits(
                config.state_dir / "state.sqlite", config.state_url, env.name, [commit_id]
            )
        except Exception:  # the hook fails closed: unrecorded
            return False

    updates, findings = parse_updates(stdin_text)
    repo = open_repository(git_dir, object_dirs)
    default_branch = _default_branch(repo)
    accepted = []
    for ref in repo.references:
        if ref.startswith("refs/heads/"):
            try:
                accepted.append(str(repo.references[ref].target))
            except (KeyError, ValueError):
                continue
    for update in updates:
        decision = decide_ref_update(update.ref, deleting=update.new is None, default_branch=default_branch)
        if not decision.allowed:
            findings.append(Finding(update.new or update.old or ZERO, update.ref, decision.rule, decision.reason))
            continue
        if update.new is None:
            continue
        inspection = inspect_update(
            repo,
            update.old,
            update.new,
            policy,
            hide=accepted,
            guard=guard,
            max_commits=policy.max_commits_per_push,
            deadline=deadline,
            recorded=recorded,
        )
        findings.extend(inspection.findings)
    if quarantine is not None and quarantine.is_dir() and not findings:  # a push deleting refs brings none
        tips = [u.new for u in updates if u.new is not None]
        stored = check_quarantine(policy, repo, git_dir, quarantine, tips)
        if not stored.allowed:
            findings.append(Finding(tips[0] if tips else ZERO, "", stored.rule, stored.reason))
    return PreReceiveReport(tuple(findings), pusher, owner, len(updates))
