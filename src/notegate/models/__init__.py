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
