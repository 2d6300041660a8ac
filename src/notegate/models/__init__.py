"""Model providers: one small interface for asking a model one structured question.

Used by the scheduled inbox reviewer, the conversation reflector and the session-end hook::

    chain = build_chain(config.models, os.environ)          # only the CLI passes os.environ
    try:
        done = chain.complete(SYSTEM, [DataPart("inbox item", path, text)], load_schema("review"),
                              schema_name="review", timeout=config.models.timeout_seconds)
    except ModelSkipped:      # chain reached "none": leave model decisions undone
        ...
    except ModelError:        # every provider failed: the last error, with its rule
        ...
    result = check_output(done.text, "review", manifest)   # the answer is untrusted input

See :mod:`notegate.models.base` for the guarantees (instructions and data apart, raw text back,
no key, prompt or data in any log or message).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from notegate.models.anthropic_api import AnthropicProvider
    from notegate.models.base import (
        HOOK_GUARD_ENV,
        DataPart,
        ModelError,
        ModelRefused,
        ModelSkipped,
        ModelTimeout,
        NoneProvider,
        Provider,
    )
    from notegate.models.chain import Attempt, Completion, FallbackChain, build_chain, build_provider
    from notegate.models.claude_cli import ClaudeCliProvider
    from notegate.models.config import (
        MODEL_SETTINGS,
        PROVIDER_NAMES,
        AnthropicSettings,
        ClaudeCliSettings,
        ModelsConfig,
        OpenAISettings,
        Setting,
        models_from_table,
    )
    from notegate.models.openai_api import OpenAIProvider

#: Where each public name lives. Importing the package imports none of them: ``notegate.config`` reads
#: ``notegate.models.config`` on every start (the pre-receive hook, the Claude Code hooks), and the
#: providers, the chain and their SDKs would cost each of those processes ~0.25 s they never use.
#: A name is imported from its module on first use (PEP 562), so ``from notegate.models import X`` works.
_HOME = {
    "AnthropicProvider": "notegate.models.anthropic_api",
    "AnthropicSettings": "notegate.models.config",
    "Attempt": "notegate.models.chain",
    "ClaudeCliProvider": "notegate.models.claude_cli",
    "ClaudeCliSettings": "notegate.models.config",
    "Completion": "notegate.models.chain",
    "DataPart": "notegate.models.base",
    "FallbackChain": "notegate.models.chain",
    "HOOK_GUARD_ENV": "notegate.models.base",
    "MODEL_SETTINGS": "notegate.models.config",
    "ModelError": "notegate.models.base",
    "ModelRefused": "notegate.models.base",
    "ModelSkipped": "notegate.models.base",
    "ModelTimeout": "notegate.models.base",
    "ModelsConfig": "notegate.models.config",
    "NoneProvider": "notegate.models.base",
    "OpenAIProvider": "notegate.models.openai_api",
    "OpenAISettings": "notegate.models.config",
    "PROVIDER_NAMES": "notegate.models.config",
    "Provider": "notegate.models.base",
    "Setting": "notegate.models.config",
    "build_chain": "notegate.models.chain",
    "build_provider": "notegate.models.chain",
    "models_from_table": "notegate.models.config",
}


__all__ = [
    "HOOK_GUARD_ENV",
    "MODEL_SETTINGS",
    "PROVIDER_NAMES",
    "AnthropicProvider",
    "AnthropicSettings",
    "Attempt",
    "ClaudeCliProvider",
    "ClaudeCliSettings",
    "Completion",
    "DataPart",
    "FallbackChain",
    "ModelError",
    "ModelRefused",
    "ModelSkipped",
    "ModelTimeout",
    "ModelsConfig",
    "NoneProvider",
    "OpenAIProvider",
    "OpenAISettings",
    "Provider",
    "Setting",
    "build_chain",
    "build_provider",
    "models_from_table",
]


def __getattr__(name: str):
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOME])
