"""The ``openai`` provider: the official SDK's chat completions with a JSON-schema response format.

One provider serves OpenAI and every OpenAI-compatible local server (Ollama, llama.cpp's server,
vLLM, LM Studio): only ``base_url`` differs.  The request is the plainest one they all accept: a
``system`` message with the instructions, one ``user`` message with the fenced data as a single
string, and ``response_format = {"type": "json_schema", "json_schema": {"name", "schema",
"strict": true}}``.

Keys: with ``base_url`` empty (api.openai.com) a key is required, read from the job's environment
mapping under ``api_key_env``; a missing key is a :class:`ModelError` before any request.  For a
local server the key is optional; without one we send a fixed placeholder (the SDK insists on a
bearer value, and local servers ignore it) -- never a key from ``os.environ``, which the SDK
would otherwise read on its own.  ``base_url`` is always explicit (the SDK would read
``OPENAI_BASE_URL``).  No SDK retries; the SDK loggers are held at WARNING; errors carry the
status and error type only (see :mod:`notegate.models.sdk`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from notegate.models.base import (
    DataPart,
    ModelError,
    ModelRefused,
    require_key,
    user_turn_text,
    wire_schema,
)
from notegate.models.config import OpenAISettings
from notegate.models.sdk import SDK_MAX_RETRIES, quiet_sdk_loggers, sdk_errors

DEFAULT_BASE_URL = "https://api.openai.com/v1"
#: Bearer value sent to a local server when no key is configured (never a real credential).
NO_KEY_PLACEHOLDER = "notegate-no-key"


class OpenAIProvider:
    """Ask an OpenAI or OpenAI-compatible chat-completions server through the official SDK."""

    name = "openai"

    def __init__(self, settings: OpenAISettings, environ: Mapping[str, str]) -> None:
        self.settings = settings
        self._environ = environ

    def _key(self) -> str:
        if not self.settings.base_url:  # the hosted API always needs a key
            return require_key(self._environ, self.settings.api_key_env, self.name)
        env = self.settings.api_key_env
        return (self._environ.get(env, "") if env else "") or NO_KEY_PLACEHOLDER

    def complete_json(
        self, system: str, data_parts: Sequence[DataPart], schema: dict[str, Any], *, schema_name: str, timeout: float
    ) -> str:
        user = user_turn_text(data_parts)
        key = self._key()

        import openai  # imported late: a job configured for other providers never loads the SDK

        quiet_sdk_loggers("openai")
        with (
            sdk_errors(openai, openai.OpenAIError, provider=self.name, timeout=timeout),
            openai.OpenAI(
                api_key=key,
                base_url=self.settings.base_url or DEFAULT_BASE_URL,
                timeout=timeout,
                max_retries=SDK_MAX_RETRIES,
            ) as client,
        ):
            completion = client.chat.completions.create(
                model=self.settings.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": schema_name, "schema": wire_schema(schema), "strict": True},
                },
            )
        return self._text_of(completion)

    def _text_of(self, completion: Any) -> str:
        if not completion.choices:
            raise ModelError("the answer held no choices", provider=self.name)
        choice = completion.choices[0]
        message = choice.message
        if getattr(message, "refusal", None) or choice.finish_reason == "content_filter":
            raise ModelRefused("the model refused to answer", provider=self.name)
        if choice.finish_reason == "length":
            raise ModelError("the answer was cut off at the token limit", provider=self.name)
        if not isinstance(message.content, str) or not message.content:
            raise ModelError("the answer held no text", provider=self.name)
        return message.content
