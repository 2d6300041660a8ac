"""The one small interface every model provider implements, and the pieces they share.

Theory of operation
-------------------
A job (the inbox reviewer, the reflector, the session-end hook) asks a model one question with
:meth:`Provider.complete_json`.  Three things keep that call safe:

* **Instructions and data travel apart.**  ``system`` holds the job's instructions and goes in
  the system prompt.  Every :class:`DataPart` (an inbox item, a transcript) is untrusted and goes
  in the user turn, each one wrapped by :func:`notegate.vault.formats.fence_untrusted` (every line
  quoted, a header and footer saying it is data, not instructions).  Nothing else is ever put in
  the user turn, so no instruction of ours sits next to data a stranger wrote.
* **The answer is untrusted too.**  Providers return the model's raw text and never parse, repair
  or unwrap it; the caller runs it through :func:`notegate.safety.outputgate.check_output`.
* **Failures are exceptions, never text.**  :class:`ModelError` (and its subclasses) means "this
  provider could not answer, try the next one"; :class:`ModelSkipped` means "no model is
  configured: leave model decisions undone".  Messages name the provider, a status or an env var
  name, never a key, a prompt or a piece of data.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from notegate.errors import NotegateError
from notegate.vault.formats import fence_untrusted

log = logging.getLogger("notegate.models")

#: Set in the environment of every model process we start (the Claude CLI), so notegate's own
#: Claude Code hooks, if installed for that user, do nothing inside it (no recursion, no memory
#: injected into a job's call).
HOOK_GUARD_ENV = "NOTEGATE_HOOK_ACTIVE"

#: The user turn when a job passes no data at all (some APIs refuse an empty user turn).
NO_DATA_TEXT = "[notegate: no quoted data for this task.]"

#: Schema keywords that only notegate reads; they are removed before a schema goes on the wire
#: (strict structured-output modes refuse keywords they do not know).  The output gate still
#: checks the answer against the full schema.
_OWN_KEYWORDS = ("$schema", "$id")
_OWN_PREFIX = "x-"
# JSON Schema keywords whose value is a map of name -> subschema / a subschema / a list of them.
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_ONE = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
_SCHEMA_LISTS = ("anyOf", "allOf", "oneOf", "prefixItems")


@dataclass(frozen=True)
class DataPart:
    """One piece of untrusted data for the model, e.g. an inbox item.

    ``label`` says what it is ("inbox item"), ``source`` where it came from (a note path); both
    are one-line identifiers (``fence_untrusted`` refuses line breaks and control characters in
    them).  ``text`` is anything at all: it is quoted line by line.
    """

    label: str
    source: str
    text: str


class ModelError(NotegateError):
    """A provider could not produce an answer (down, refused the key, bad status, no key).

    The fallback chain moves on to the next provider.  ``provider`` names which one failed.
    """

    rule = "model-unavailable"

    def __init__(self, message: str, *, provider: str, rule: str | None = None, remedy: str | None = None) -> None:
        super().__init__(f"model provider '{provider}': {message}", rule=rule, remedy=remedy)
        self.provider = provider


class ModelTimeout(ModelError):
    """The provider did not answer within the job's timeout."""

    rule = "model-timeout"


class ModelRefused(ModelError):
    """The model declined to answer (a refusal stop reason or a content filter)."""

    rule = "model-refused"


class ModelSkipped(NotegateError):
    """No model is to be asked (the ``none`` provider): the job leaves model decisions undone."""

    rule = "model-none"


@runtime_checkable
class Provider(Protocol):
    """Asks one model one structured question.

    ``complete_json`` returns the model's raw text (JSON is expected but not checked here) or
    raises :class:`ModelError` / :class:`ModelSkipped`.  ``timeout`` is in seconds; ``schema`` is
    one of the shipped output schemas, ``schema_name`` its short name (``"review"``).
    """

    name: str

    def complete_json(
        self, system: str, data_parts: Sequence[DataPart], schema: dict[str, Any], *, schema_name: str, timeout: float
    ) -> str: ...


class NoneProvider:
    """The ``none`` provider: never asks anything, so the job runs only its code-only parts."""

    name = "none"

    def complete_json(
        self, system: str, data_parts: Sequence[DataPart], schema: dict[str, Any], *, schema_name: str, timeout: float
    ) -> str:
        raise ModelSkipped(
            "no model provider is configured to answer",
            remedy="Model decisions were left undone. Configure [models] chain to use a model.",
        )


def fenced_parts(data_parts: Sequence[DataPart]) -> list[str]:
    """Each data part quoted by ``fence_untrusted``; the only text a provider puts in the user turn."""
    if isinstance(data_parts, DataPart | str):
        raise TypeError("data_parts must be a sequence of DataPart")
    out = []
    for part in data_parts:
        if not isinstance(part, DataPart):
            raise TypeError("data_parts must be a sequence of DataPart")
        out.append(fence_untrusted(part.text, label=part.label, source=part.source))
    return out


def user_turn_text(data_parts: Sequence[DataPart]) -> str:
    """The whole user turn as one string (for APIs and the CLI, which take a single text)."""
    parts = fenced_parts(data_parts)
    return "\n".join(parts) if parts else NO_DATA_TEXT + "\n"


def wire_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``schema`` without notegate's own keywords (``$schema``, ``$id``, ``x-…``).

    Walks the schema structurally, so a *property* whose name starts with ``x-`` is kept; only
    keywords are dropped.
    """
    if not isinstance(schema, dict):
        raise TypeError("schema must be a JSON Schema object")
    return _strip(schema)


def _strip(node: Any) -> Any:
    if not isinstance(node, dict):
        return copy.deepcopy(node)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _OWN_KEYWORDS or key.startswith(_OWN_PREFIX):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _strip(sub) for name, sub in value.items()}
        elif key in _SCHEMA_ONE:
            out[key] = _strip(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_strip(sub) for sub in value]
        else:
            out[key] = copy.deepcopy(value)
    return _split_type_list(out)


_NULL_ONLY_KEYS = frozenset({"description", "title"})


def _split_type_list(node: dict[str, Any]) -> dict[str, Any]:
    """``{"type": ["string", "null"], …}`` → ``anyOf`` of the typed branch and ``null``.

    Providers' structured-output validators (Anthropic's ``transform_schema`` among them) accept only a
    single ``type``; the meaning is unchanged and the output gate still checks the original schema.
    """
    types = node.get("type")
    if not isinstance(types, list):
        return node
    shared = {k: v for k, v in node.items() if k in _NULL_ONLY_KEYS}
    constraints = {k: v for k, v in node.items() if k != "type" and k not in _NULL_ONLY_KEYS}
    branches = []
    for kind in types:
        branch: dict[str, Any] = {"type": kind}
        if kind != "null":
            branch.update(copy.deepcopy(constraints))
        branches.append(branch)
    return {**shared, "anyOf": branches}


def require_key(environ: Any, env_name: str, provider: str) -> str:
    """The API key from the job's environment mapping, or a ModelError naming the variable (never a value)."""
    key = environ.get(env_name, "") if env_name else ""
    if not key:
        raise ModelError(
            f"no API key: the environment variable {env_name or '(none configured)'} is not set",
            provider=provider,
            remedy=f"Set {env_name or 'the api_key_env variable'} for this job, or remove '{provider}' "
            "from [models] chain.",
        )
    return key
