"""Turn a gated model answer into notes, and write them as the caller's tier allows.

Rendering is done only by the pure formats in :mod:`notegate.vault.formats`; the model never
writes Markdown structure.  Every rendered text is re-scanned and held to the floor as the exact
bytes to be committed (:func:`unsafe`: the jobs' own check) before anything is written: one
finding and nothing of this answer is written.

Where each note goes is the server's word (``session_start``'s ``layout``, from the owner's policy: the
routes, ``project_summary`` and ``session_notes``); this module names no folder of its own.

* **trusted** — the segment's log entry goes to the top of the log (``log/<project>.md`` by default,
  replacing the entry this machine wrote earlier for the same segment, so a segment has one entry), the
  handoff replaces the project's handoff; at the end of a segment (``final``) also an immutable session
  note ``<session_notes>/<YYYY-MM-DD>-<session8>[-s<segment>].md`` (created with base ``absent``,
  never rewritten) and the project summary's Recent sessions block, rebuilt by code from the 10
  newest session notes.  A write refused as stale is redone once on the fresh text.
* **restricted** — ``inbox_write(kind="log")`` and ``inbox_write(kind="handoff")``; a reviewer
  promotes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

from notegate.hooks.mcpclient import Refused
from notegate.hooks.vaultclient import ABSENT, VaultClient
from notegate.models.gated import Unsafe, exact_bytes
from notegate.policy.settings import ProjectLayout
from notegate.policy.vocab import Tier
from notegate.vault import formats

# Matched against the file name only (anchored): searching the whole path retried at every offset.
_SESSION_FILE = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})-[^/]*\.md\Z")


@dataclass(frozen=True)
class Rendered:
    """Everything one write-back would commit, already rendered and re-scanned."""

    log_entry: formats.LogEntry
    log_rendered: str
    handoff: str
    note_title: str
    note: formats.SessionNote
    note_text: str
    summary_line: str


@dataclass
class Outcome:
    """What was written and what was not (reasons are rule names, never content)."""

    written: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    log_rendered: str | None = None
    session_note: str | None = None


def layout_of(result: dict[str, Any]) -> ProjectLayout | None:
    """The project's layout from a ``session_start`` answer, or None when it sent none (or not as text)."""
    raw = result.get("layout")
    if not isinstance(raw, dict):
        return None
    values = {name: raw.get(name) for name in ("handoff", "log", "summary", "sessions")}
    if not all(isinstance(v, str) for v in values.values()):
        return None
    return ProjectLayout(**values)


def one_line(text: str) -> str:
    return " ".join(text.split())


def session_short(session: str) -> str:
    cleaned = re.sub(r"[^a-z0-9]", "", session.lower())
    return cleaned[:8] or "session"


def render(
    value: dict[str, Any],
    *,
    project: str,
    branch: str,
    client: str,
    session: str,
    created: datetime,
    now: datetime,
) -> Rendered:
    """All texts of one write-back; raises FormatError on values the formats refuse."""
    entry = formats.LogEntry(when=now, branch=branch, client=client, text=value["log_entry"].strip("\n"))
    handoff = formats.Handoff(
        project=project, branch=branch, written=now, session=session, client=client, **value["handoff"]
    )
    note_value = value["session_note"]
    title = f"{project} session {now:%Y-%m-%d} {session_short(session)}"
    note = formats.SessionNote(
        project=project,
        session=session,
        created=created,
        updated=now,
        title=title,
        summary=one_line(note_value["summary"]),
        bullets=tuple(b for b in (one_line(x) for x in note_value["bullets"]) if b),
        tags=tuple(note_value["tags"]),
    )
    return Rendered(
        log_entry=entry,
        log_rendered=formats.render_log_entry(entry),
        handoff=handoff.render(),
        note_title=title,
        note=note,
        note_text=note.render(),
        summary_line=one_line(note_value["summary"]),
    )


def unsafe(rendered: Rendered, layout: ProjectLayout) -> Unsafe | None:
    """Why the exact texts to commit are refused (``None`` = clean): the jobs' re-scan and floor.

    The floor runs here for every tier: the trusted route skips the inbox, and with it the review
    that runs the floor; so it runs on model output before anything is written (bidi and ANSI
    escapes, instruction-file names such as CLAUDE.md).  A hold writes nothing, like any gate refusal.
    """
    return exact_bytes(
        [
            (rendered.log_rendered, layout.log or None),
            (rendered.handoff, layout.handoff or None),
            (rendered.note_text, None),  # its name is chosen later, by code
        ]
    )


def _retry_stale(action: Callable[[], str]) -> str:
    try:
        return action()
    except Refused as exc:
        if exc.rule != "stale-revision":
            raise
    return action()  # once more on the fresh text


def _without(log_text: str, previous: str | None) -> str:
    if not previous:
        return log_text
    for old in (previous + "\n", previous):
        at = log_text.find(old)
        if at != -1 and (at == 0 or log_text[at - 1] == "\n"):
            out = log_text[:at] + log_text[at + len(old) :]
            return out[:-1] if out.endswith("\n\n") else out
    return log_text


def write_log(vault: VaultClient, path: str, project: str, rendered: Rendered, previous: str | None) -> str:
    def attempt() -> str:
        text, revision = vault.read(path)
        updated = formats.insert_log_entry(_without(text or "", previous) or None, project, rendered.log_entry)
        vault.write(path, updated, revision)
        return path

    return _retry_stale(attempt)


def write_handoff(vault: VaultClient, path: str, rendered: Rendered) -> str:
    def attempt() -> str:
        _, revision = vault.read(path)
        vault.write(path, rendered.handoff, revision)
        return path

    return _retry_stale(attempt)


def session_note_path(folder: str, session: str, segment: int, when: datetime) -> str:
    suffix = f"-s{segment}" if segment else ""
    return f"{folder}/{when:%Y-%m-%d}-{session_short(session)}{suffix}.md"


def write_session_note(vault: VaultClient, path: str, rendered: Rendered, turns: int) -> str:
    """Create the immutable note; if that name is taken (a resumed session), use ``-t<turns>``."""
    try:
        vault.write(path, rendered.note_text, ABSENT)
        return path
    except Refused as exc:
        if exc.rule != "stale-revision":
            raise
    other = path[: -len(".md")] + f"-t{turns}.md"
    vault.write(other, rendered.note_text, ABSENT)
    return other


def newest_sessions(vault: VaultClient, folder: str, fresh: tuple[str, date, str]) -> list[formats.SessionRef]:
    """The 10 newest session notes in ``folder`` (by the date in their name, then path), with their summaries."""
    dated: list[tuple[date, str]] = []
    for path in vault.list_paths(folder):
        match = _SESSION_FILE.match(path.rpartition("/")[2])
        if path.startswith(folder + "/") and match:
            try:
                dated.append((date.fromisoformat(match.group(1)), path))
            except ValueError:
                continue
    if all(path != fresh[0] for _, path in dated):
        dated.append((fresh[1], fresh[0]))
    dated.sort(reverse=True)
    refs = []
    for day, path in dated[: formats.RECENT_SESSIONS]:
        if path == fresh[0]:
            refs.append(formats.SessionRef(path, day, fresh[2]))
            continue
        text, _ = vault.read(path)
        summary = ""
        if text is not None:
            try:
                summary = formats.SessionNote.parse(text).summary
            except formats.FormatError:
                summary = ""
        refs.append(formats.SessionRef(path, day, summary))
    return refs


def rebuilt_summary(text: str | None, project: str, refs: Sequence[formats.SessionRef]) -> str:
    """The project summary with only its sessions block rebuilt (a new summary when there is none)."""
    if text is None:
        return formats.ProjectSummary(project=project, sessions=tuple(refs)).render()
    try:
        return formats.rebuild_sessions_block(text, refs)
    except formats.FormatError as exc:
        if exc.rule != "summary-too-long":
            raise
    summary = formats.ProjectSummary.parse(text)  # raises if a person reshaped it: then we leave it
    return formats.ProjectSummary(
        project=summary.project,
        cwd=summary.cwd,
        status=summary.status,
        tags=summary.tags,
        goal=summary.goal,
        current_state=summary.current_state,
        key_files=summary.key_files,
        recent_decisions=summary.recent_decisions,
        open_tasks=summary.open_tasks,
        context_to_resume=summary.context_to_resume,
        sessions=tuple(refs),
        extra=summary.extra,
    ).render()


def write_summary(vault: VaultClient, path: str, project: str, refs: Sequence[formats.SessionRef]) -> str:
    def attempt() -> str:
        text, revision = vault.read(path)
        vault.write(path, rebuilt_summary(text, project, refs), revision)
        return path

    return _retry_stale(attempt)


def _step(outcome: Outcome, name: str, action: Callable[[], Any]) -> Any:
    try:
        result = action()
    except Refused as exc:
        outcome.failed.append(f"{name}: refused [{exc.rule}]")
        return None
    except formats.FormatError as exc:
        outcome.failed.append(f"{name}: {exc.rule}")
        return None
    outcome.written.append(name)
    return result


def write_trusted(
    vault: VaultClient,
    *,
    layout: ProjectLayout,
    project: str,
    session: str,
    segment: int,
    turns: int,
    rendered: Rendered,
    previous_log: str | None,
    final: bool,
    now: datetime,
) -> Outcome:
    outcome = Outcome()
    if layout.log and _step(outcome, "log", lambda: write_log(vault, layout.log, project, rendered, previous_log)):
        outcome.log_rendered = rendered.log_rendered
    if layout.handoff:
        _step(outcome, "handoff", lambda: write_handoff(vault, layout.handoff, rendered))
    if not final:
        return outcome
    path = session_note_path(layout.sessions, session, segment, now)
    written = _step(outcome, "session-note", lambda: write_session_note(vault, path, rendered, turns))
    if written:
        outcome.session_note = written
        fresh = (written, now.astimezone(UTC).date(), rendered.summary_line)

        def summary() -> str:
            return write_summary(vault, layout.summary, project, newest_sessions(vault, layout.sessions, fresh))

        _step(outcome, "summary", summary)
    return outcome


def write_restricted(
    vault: VaultClient, *, project: str, session: str, branch: str, client: str, rendered: Rendered, now: datetime
) -> Outcome:
    outcome = Outcome()
    stamp = f"{now.astimezone(UTC):%Y-%m-%d %H:%M} UTC"
    log_text = f"{rendered.log_entry.text}\n\n_Session {session_short(session)} on {branch} ({client}), {stamp}._"
    _step(outcome, "inbox-log", lambda: vault.inbox("log", log_text, project))
    _step(outcome, "inbox-handoff", lambda: vault.inbox("handoff", rendered.handoff, project))
    return outcome


def write_as(
    tier: str,
    vault: VaultClient,
    rendered: Rendered,
    *,
    layout: ProjectLayout,
    project: str,
    branch: str,
    client: str,
    session: str,
    segment: int,
    turns: int,
    previous_log: str | None,
    final: bool,
    now: datetime,
) -> Outcome:
    """Write the checked notes the way the caller's tier allows (``trusted`` or else ``restricted``)."""
    if tier == Tier.TRUSTED:
        return write_trusted(
            vault,
            layout=layout,
            project=project,
            session=session,
            segment=segment,
            turns=turns,
            rendered=rendered,
            previous_log=previous_log,
            final=final,
            now=now,
        )
    return write_restricted(
        vault, project=project, session=session, branch=branch, client=client, rendered=rendered, now=now
    )
