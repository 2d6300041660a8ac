"""The one gated model call, shared by the scheduled jobs and the session write-back hook.

Theory of operation
-------------------
A model's answer is untrusted input (DESIGN.md §1.5).  Two steps stand between it and a commit, and
every caller runs the same code for both, so a reply one of them refuses is refused by all of them
with the same rule:

1. :func:`ask` — one structured question to the fallback chain; the answer is only ever the output
   gate's value (strict JSON parse → schema → content gates → manifest of sources).  A model
   failure, the ``none`` provider or a gate refusal is a value (:class:`Answer`), never an exception.
2. :func:`exact_bytes` — after the caller rendered the value into the texts it will commit, those
   exact texts are re-scanned by the content gates and then held to the floor (invisible and bidi
   characters, terminal escapes, instruction-file names).  Rendering joins model strings with
   templates, so an injection split across a seam is only visible here.

What differs between callers (system prompt, schema, manifest, timeout, what gets rendered and
where it is written) is a parameter.  The jobs reach :func:`ask` through
:meth:`notegate.services.jobs.Job.ask` and :func:`exact_bytes` through
:func:`notegate.services.modelwrite.refuse_unsafe`; the hook calls both directly (it has no
services: it writes over MCP, and the server gates again).

Pure apart from the chain call: no file, process or network access of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from notegate.models.base import DataPart, ModelError, ModelSkipped
from notegate.models.chain import FallbackChain
from notegate.safety.floor import HoldReason, check_item
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES
from notegate.safety.outputgate import check_output, load_schema, rescan_text
from notegate.safety.rules import Finding

__all__ = ["Answer", "Unsafe", "ask", "exact_bytes"]


@dataclass(frozen=True)
class Answer:
    """What one gated question produced: a value, a skip, or the rule that stopped it."""

    value: Any | None = None  # the gated answer
    skipped: bool = False  # no model configured (the `none` provider): decisions left undone
    error: str | None = None  # a model failure's rule, or the output gate's code
    stage: Literal["model", "gate"] | None = None
    provider: str | None = None  # who answered, or (stage "model") the last provider that failed
    #: Configured providers that failed before the chain reached ``none``: "provider [rule]" each.
    failed: tuple[str, ...] = ()


def ask(
    chain: FallbackChain,
    system: str,
    parts: Sequence[DataPart],
    schema_name: str,
    manifest: Iterable[str],
    *,
    timeout: float,
) -> Answer:
    """Ask ``chain`` one structured question and gate the reply; ``manifest`` lists the citable sources."""
    try:
        done = chain.complete(system, parts, load_schema(schema_name), schema_name=schema_name, timeout=timeout)
    except ModelSkipped:
        failed = tuple(
            f"{a.provider} [{a.outcome}]"
            for a in getattr(chain, "attempts", ())
            if a.outcome not in ("answered", ModelSkipped.rule)
        )
        return Answer(skipped=True, failed=failed)
    except ModelError as exc:
        return Answer(error=exc.rule, stage="model", provider=exc.provider)
    result = check_output(done.text, schema_name, manifest)
    if not result.ok:
        return Answer(error=result.error or "gate", stage="gate", provider=done.provider)
    return Answer(value=result.value, provider=done.provider)


@dataclass(frozen=True)
class Unsafe:
    """Why the texts to commit were refused: content-gate findings, or else the floor's reasons."""

    stage: Literal["rescan", "floor"]
    findings: tuple[Finding, ...] = ()  # stage "rescan", in text order
    reasons: tuple[HoldReason, ...] = ()  # stage "floor", in text order

    @property
    def names(self) -> list[str]:
        """The distinct gate names (re-scan) or floor rules (floor), sorted: safe to print."""
        if self.stage == "rescan":
            return sorted({f.gate for f in self.findings})
        return sorted({r.rule for r in self.reasons})


def exact_bytes(
    texts: Iterable[tuple[str, str | None]], instruction_files: Iterable[str] = DEFAULT_INSTRUCTION_FILES
) -> Unsafe | None:
    """Re-scan each ``(text, path)`` about to be committed, then the floor; ``None`` when all are clean.

    The content gates run over every text before the floor runs on any (the floor is not asked
    about text the gates already refused).  ``path`` is where the text goes, when known: the floor
    also checks the name.
    """
    pairs = list(texts)
    findings = tuple(f for text, _ in pairs for f in rescan_text(text))
    if findings:
        return Unsafe("rescan", findings=findings)
    files = tuple(instruction_files)
    reasons = tuple(r for text, path in pairs for r in check_item(text, path, files).reasons)
    if reasons:
        return Unsafe("floor", reasons=reasons)
    return None
