"""The ``[models]`` table of the config file: which providers to ask, in what order, and how.

Like the rest of the config (``notegate.config``), every key is known, typed and documented in
:data:`MODEL_SETTINGS`; an unknown key, a wrong type or an unknown provider stops start-up with
a :class:`~notegate.errors.ConfigError` naming it.  Keys themselves never live here: a provider
table names the *environment variable* that holds its key (``api_key_env``), and the key is read
from the environment mapping the CLI passes in, at call time.

Example::

    [models]
    chain = ["anthropic", "openai", "none"]   # tried in order; "none" = leave model decisions undone
    timeout_seconds = 60
    [models.anthropic]
    model = "claude-sonnet-4-6"
    api_key_env = "ANTHROPIC_API_KEY"
    [models.openai]
    model = "qwen3:8b"
    base_url = "http://127.0.0.1:11434/v1"     # Ollama; llama.cpp, vLLM and LM Studio work the same way
    api_key_env = ""                           # local servers need no key
    [models.claude-cli]
    command = "claude"

This module defines its own small :class:`Setting` rather than importing ``notegate.config``'s,
because ``notegate.config`` imports this module (a cycle otherwise).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from notegate.errors import ConfigError
from notegate.settings import Setting, check_table

PROVIDER_NAMES: tuple[str, ...] = ("anthropic", "openai", "claude-cli", "none")
#: Bounds of ``timeout_seconds`` (per provider attempt).
MAX_TIMEOUT_SECONDS = 3600
#: Upper bound of ``max_tokens`` accepted in the config (far above any model's output limit).
MAX_OUTPUT_TOKENS = 200_000

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _chain(value: list[Any]) -> str | None:
    if not value:
        return 'must name at least one provider (use ["none"] for no model)'
    for name in value:
        if not isinstance(name, str) or name not in PROVIDER_NAMES:
            return f"names an unknown provider {name!r} (known: {', '.join(PROVIDER_NAMES)})"
    if len(set(value)) != len(value):
        return "names a provider twice"
    if "none" in value and value[-1] != "none":
        return "has 'none' before the end: 'none' ends the chain, so put it last"
    return None


def _timeout(value: float) -> str | None:
    return None if 0 < value <= MAX_TIMEOUT_SECONDS else f"must be above 0 and at most {MAX_TIMEOUT_SECONDS}"


def _non_empty(value: str) -> str | None:
    return None if value.strip() else "must not be empty"


def _base_url(value: str) -> str | None:
    if value == "":
        return None
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be empty (the SDK default) or an http(s) URL"
    if parts.username or parts.password or parts.query or parts.fragment:
        return "must not carry credentials, a query or a fragment (keys come from the environment only)"
    return None


def _env_name(value: str) -> str | None:
    return None if _ENV_NAME.match(value) else "must be an environment variable name like ANTHROPIC_API_KEY"


def _env_name_or_empty(value: str) -> str | None:
    return None if value == "" else _env_name(value)


def _max_tokens(value: int) -> str | None:
    return None if 0 < value <= MAX_OUTPUT_TOKENS else f"must be between 1 and {MAX_OUTPUT_TOKENS}"


#: Every key of every ``[models…]`` table, by section, with its help line (the README lists these).
MODEL_SETTINGS: dict[str, tuple[Setting, ...]] = {
    "models": (
        Setting(
            "chain",
            list,
            ["none"],
            "Providers to ask, in order; the next is tried when one fails or times out. "
            f"Known: {', '.join(PROVIDER_NAMES)}. 'none' (last) leaves model decisions undone.",
            _chain,
        ),
        Setting(
            "timeout_seconds",
            (int, float),
            60,
            "Seconds each provider gets to answer one call before the chain moves on.",
            _timeout,
        ),
    ),
    "models.anthropic": (
        Setting("model", str, "claude-sonnet-4-6", "Anthropic model id.", _non_empty),
        Setting("base_url", str, "", "API base URL; empty means the SDK default (api.anthropic.com).", _base_url),
        Setting(
            "api_key_env", str, "ANTHROPIC_API_KEY", "Name of the environment variable holding the API key.", _env_name
        ),
        Setting("max_tokens", int, 4096, "Most tokens the model may write in one answer.", _max_tokens),
    ),
    "models.openai": (
        Setting("model", str, "gpt-5.4-mini", "Model name as the server knows it (qwen3:8b on Ollama).", _non_empty),
        Setting(
            "base_url",
            str,
            "",
            "Chat-completions base URL; empty means api.openai.com. For a local server, e.g. "
            "http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama.cpp), "
            "http://127.0.0.1:8000/v1 (vLLM), http://127.0.0.1:1234/v1 (LM Studio).",
            _base_url,
        ),
        Setting(
            "api_key_env",
            str,
            "OPENAI_API_KEY",
            "Environment variable holding the API key. Required when base_url is empty; optional for a local "
            "server (unset or '' sends no real key).",
            _env_name_or_empty,
        ),
    ),
    "models.claude-cli": (
        Setting(
            "command",
            str,
            "claude",
            "The Claude Code executable, looked up on PATH. It runs locked down: no tools, no MCP servers, "
            "no session persistence.",
            _non_empty,
        ),
    ),
}

_SUBTABLES = {"anthropic": "models.anthropic", "openai": "models.openai", "claude-cli": "models.claude-cli"}


@dataclass(frozen=True)
class AnthropicSettings:
    model: str = "claude-sonnet-4-6"
    base_url: str = ""
    api_key_env: str = "ANTHROPIC_API_KEY"
    max_tokens: int = 4096


@dataclass(frozen=True)
class OpenAISettings:
    model: str = "gpt-5.4-mini"
    base_url: str = ""
    api_key_env: str = "OPENAI_API_KEY"


@dataclass(frozen=True)
class ClaudeCliSettings:
    command: str = "claude"


@dataclass(frozen=True)
class ModelsConfig:
    """The validated ``[models]`` table.  ``ModelsConfig()`` is the default: no model (``["none"]``)."""

    chain: tuple[str, ...] = ("none",)
    timeout_seconds: float = 60.0
    anthropic: AnthropicSettings = field(default_factory=AnthropicSettings)
    openai: OpenAISettings = field(default_factory=OpenAISettings)
    claude_cli: ClaudeCliSettings = field(default_factory=ClaudeCliSettings)


def _check(section: str, table: dict[str, Any], extra_keys: tuple[str, ...] = ()) -> dict[str, Any]:
    return check_table(section, table, MODEL_SETTINGS[section], extra_keys)


def _subtable(raw: dict[str, Any], name: str) -> dict[str, Any]:
    section = _SUBTABLES[name]
    table = raw.get(name, {})
    if not isinstance(table, dict):
        raise ConfigError(f"[{section}] must be a table", remedy=f"Write it as [{section}] with its keys below.")
    return _check(section, table)


def models_from_table(raw: Any) -> ModelsConfig:
    """Validate the already-loaded ``[models]`` TOML table; any problem raises ConfigError naming the key."""
    if not isinstance(raw, dict):
        raise ConfigError("[models] must be a table", remedy="Write it as [models] with its keys below.")
    top = _check("models", raw, extra_keys=tuple(_SUBTABLES))
    anthropic = _subtable(raw, "anthropic")
    openai = _subtable(raw, "openai")
    cli = _subtable(raw, "claude-cli")
    return ModelsConfig(
        chain=tuple(top["chain"]),
        timeout_seconds=float(top["timeout_seconds"]),
        anthropic=AnthropicSettings(**anthropic),
        openai=OpenAISettings(**openai),
        claude_cli=ClaudeCliSettings(**cli),
    )
