"""The ``anthropic`` provider: the official SDK's Messages API with structured output.

Structured output: the installed SDK (``anthropic`` 2.x) sends ``output_config.format =
{"type": "json_schema", "schema": …}`` on the plain Messages API, so the model's answer is the
text of its reply, constrained to the schema.  We use that rather than a forced tool call: no
tool is ever offered to the model, and the answer arrives as text, exactly what the output gate
expects.  The schema sent is the shipped one without notegate's own keywords, passed through the
SDK's ``transform_schema`` (which moves keywords the API does not enforce, like ``maxLength``,
into descriptions); the output gate still enforces the full schema afterwards.  Models without
structured-output support answer 400, which is a :class:`ModelError`, so the chain moves on.

What this module guarantees
* The key comes from the job's environment mapping (``api_key_env``) and is passed explicitly,
  so the SDK never reads ``ANTHROPIC_API_KEY`` or a credentials profile on its own; ``base_url``
  is always explicit too (the SDK would otherwise read ``ANTHROPIC_BASE_URL``).
* No retries inside the SDK (``max_retries=0``): the fallback chain is the retry, and a job's
  time stays bounded by ``timeout`` per network phase (the SDK's/httpx's timeout semantics).
* The SDK's own loggers are held at WARNING: at DEBUG the SDK logs whole request options, i.e.
  the prompt.  OpenTelemetry tracing is off for the same reason.
* Error messages carry the HTTP status and the API's error *type* only, never a response body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from notegate.models.base import (
    NO_DATA_TEXT,
    DataPart,
    ModelError,
    ModelRefused,
    fenced_parts,
    require_key,
    wire_schema,
)
from notegate.models.config import AnthropicSettings
from notegate.models.sdk import SDK_MAX_RETRIES, quiet_sdk_loggers, sdk_errors

DEFAULT_BASE_URL = "https://api.anthropic.com"


class AnthropicProvider:
    """Ask an Anthropic model through the official SDK."""

    name = "anthropic"

    def __init__(self, settings: AnthropicSettings, environ: Mapping[str, str]) -> None:
        self.settings = settings
        self._environ = environ

    def complete_json(
        self, system: str, data_parts: Sequence[DataPart], schema: dict[str, Any], *, schema_name: str, timeout: float
    ) -> str:
        blocks = [{"type": "text", "text": text} for text in fenced_parts(data_parts)] or [
            {"type": "text", "text": NO_DATA_TEXT}
        ]
        key = require_key(self._environ, self.settings.api_key_env, self.name)

        import anthropic  # imported late: a job configured for other providers never loads the SDK

        quiet_sdk_loggers("anthropic")
        output_schema = anthropic.transform_schema(wire_schema(schema))
        with (
            sdk_errors(anthropic, anthropic.AnthropicError, provider=self.name, timeout=timeout),
            anthropic.Anthropic(
                api_key=key,
                base_url=self.settings.base_url or DEFAULT_BASE_URL,
                timeout=timeout,
                max_retries=SDK_MAX_RETRIES,
                open_telemetry=False,
            ) as client,
        ):
            message = client.messages.create(
                model=self.settings.model,
                max_tokens=self.settings.max_tokens,
                system=system,
                messages=[{"role": "user", "content": blocks}],
                output_config={"format": {"type": "json_schema", "schema": output_schema}},
            )
        return self._text_of(message)

    def _text_of(self, message: Any) -> str:
        if message.stop_reason == "refusal":
            raise ModelRefused("the model refused to answer", provider=self.name)
        if message.stop_reason == "max_tokens":
            raise ModelError(
                "the answer was cut off at max_tokens",
                provider=self.name,
                remedy="Raise [models.anthropic] max_tokens or send smaller batches.",
            )
        texts = [block.text for block in message.content if getattr(block, "type", None) == "text"]
        if not texts:
            raise ModelError("the answer held no text", provider=self.name)
        return "".join(texts)
