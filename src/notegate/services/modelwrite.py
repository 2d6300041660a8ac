"""Writing model output: render, re-scan the rendered text, stage, re-scan the staged diff, then commit.

Why three scans: the output gate scans each string the model returned; rendering joins those strings
with text from elsewhere (file names, templates), and staging joins the rendered block with what the note
already holds.  An injection can be split across any of those seams, so each stage is scanned as the
bytes that will actually exist.  The staged scan reads every added line *with one line of context on
each side*, so a phrase split across the boundary between old and new text is seen whole.

Only the job's own path is written, through the notes service (so policy, the credential gate, the
revision check and the commit rules all apply); nothing else is ever swept into the commit.
"""

from __future__ import annotations

from typing import Literal

from notegate.errors import GateRejected
from notegate.models.gated import exact_bytes
from notegate.policy import Caller
from notegate.services.notes import NotesService, WriteResult
from notegate.vault.store import ABSENT


def staged_lines(diff: str) -> str:
    """Added lines of a unified diff plus one line of context each side (the seams)."""
    lines = [ln for ln in diff.splitlines() if not ln.startswith(("---", "+++", "@@", "\\"))]
    keep: set[int] = set()
    for i, line in enumerate(lines):
        if line.startswith("+"):
            keep.update({i - 1, i, i + 1})
    picked = [lines[i][1:] for i in sorted(keep) if 0 <= i < len(lines) and not lines[i].startswith("-")]
    return "\n".join(picked)


def refuse_unsafe(stage: str, text: str, instruction_files: tuple[str, ...], path: str | None = None) -> None:
    """Raise unless ``text`` passes the content gates *and* the floor (:func:`exact_bytes`, as the hook).

    The floor runs on model output for every tier: a trusted job's note is loaded by the next session just
    like a promoted item, so hidden characters, terminal escapes and instruction-file names are held here too.
    """
    unsafe = exact_bytes([(text, path)], instruction_files)
    if unsafe is None:
        return
    if unsafe.stage == "rescan":
        first = unsafe.findings[0]
        raise GateRejected(
            f"the {stage} holds unsafe content ({first.gate}: {first.kind})",
            rule=f"{stage}-rescan:unsafe-content:{first.gate}",
            remedy="Nothing was written; the job records the failure and keeps provenance only.",
        )
    first_reason = unsafe.reasons[0]
    raise GateRejected(
        f"the floor holds the {stage}: {first_reason.as_text()}",
        rule=f"{stage}-floor:{first_reason.rule}",
        remedy="Nothing was written; the job records the failure and keeps provenance only.",
    )


def guarded_write(
    notes: NotesService,
    caller: Caller,
    path: str,
    rendered: str,
    *,
    mode: Literal["replace", "append"],
    environment: str | None = None,
) -> WriteResult:
    """Write ``rendered`` to ``path`` (replace it, or append to it) only if every re-scan is clean."""
    files = notes.policy.instruction_files
    refuse_unsafe("rendered", rendered, files, path)
    env = notes.env(caller, environment)
    base = env.store.blob_id(path)
    if mode == "append" and base != ABSENT:
        preview = notes.append_note(caller, path, rendered, base, confirmed=False, environment=env.name)
    else:
        preview = notes.write_note(caller, path, rendered, base, confirmed=False, environment=env.name)
    refuse_unsafe("staged", staged_lines(preview.diff), files)
    if mode == "append" and base != ABSENT:
        return notes.append_note(caller, path, rendered, base, confirmed=True, environment=env.name)
    return notes.write_note(caller, path, rendered, base, confirmed=True, environment=env.name)
