"""The [models] table: every key known and typed, every mistake a ConfigError naming it."""

from __future__ import annotations

import dataclasses
import tomllib
from typing import Any

import pytest

from notegate.errors import ConfigError
from notegate.models import (
    MODEL_SETTINGS,
    PROVIDER_NAMES,
    AnthropicSettings,
    ClaudeCliSettings,
    ModelsConfig,
    OpenAISettings,
    models_from_table,
)

EXAMPLE = """
[models]
chain = ["anthropic", "openai", "none"]
timeout_seconds = 60
[models.anthropic]
model = "claude-sonnet-4-6"
base_url = ""
api_key_env = "ANTHROPIC_API_KEY"
max_tokens = 4096
[models.openai]
model = "gpt-5.4-mini"
base_url = "http://127.0.0.1:11434/v1"
api_key_env = "OPENAI_API_KEY"
[models.claude-cli]
command = "claude"
"""


def test_the_documented_example_parses() -> None:
    config = models_from_table(tomllib.loads(EXAMPLE)["models"])
    assert config.chain == ("anthropic", "openai", "none")
    assert config.timeout_seconds == 60.0
    assert config.openai.base_url == "http://127.0.0.1:11434/v1"
    assert config.claude_cli.command == "claude"


def test_defaults_ask_no_model_and_match_the_settings_table() -> None:
    assert models_from_table({}) == ModelsConfig()
    assert ModelsConfig().chain == ("none",)
    for section, cls in [
        ("models.anthropic", AnthropicSettings),
        ("models.openai", OpenAISettings),
        ("models.claude-cli", ClaudeCliSettings),
    ]:
        table_defaults = {s.name: s.default for s in MODEL_SETTINGS[section]}
        assert dataclasses.asdict(cls()) == table_defaults, section


def test_every_setting_is_documented_and_its_default_is_valid() -> None:
    for section, settings in MODEL_SETTINGS.items():
        for setting in settings:
            assert setting.help.strip(), (section, setting.name)
            assert isinstance(setting.default, setting.kind)
            if setting.check is not None:
                assert setting.check(setting.default) is None, (section, setting.name)


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"chian": ["none"]}, "chian"),
        ({"anthropic": {"modle": "x"}}, "modle"),
        ({"openai": {"api_key": "sk-123"}}, "api_key"),  # a key in the file is refused, not ignored
        ({"claude-cli": {"args": ["--dangerously-skip-permissions"]}}, "args"),
        ({"none": {}}, "none"),
    ],
)
def test_unknown_key_is_refused_by_name(table: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=f"unknown key '{named}'") as caught:
        models_from_table(table)
    assert "sk-123" not in caught.value.explain()


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ({"chain": "anthropic"}, "chain"),
        ({"timeout_seconds": "60"}, "timeout_seconds"),
        ({"timeout_seconds": True}, "timeout_seconds"),
        ({"anthropic": {"max_tokens": 1.5}}, "max_tokens"),
        ({"anthropic": {"max_tokens": True}}, "max_tokens"),
        ({"anthropic": {"model": 5}}, "model"),
        ({"openai": {"base_url": None}}, "base_url"),
        ({"claude-cli": {"command": ["claude"]}}, "command"),
    ],
)
def test_wrong_type_is_refused_by_name(table: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=f"{named} has the wrong type"):
        models_from_table(table)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"chain": ["anthropic", "gemini"]}, "unknown provider 'gemini'"),
        ({"chain": [1]}, "unknown provider 1"),
        ({"chain": []}, "at least one provider"),
        ({"chain": ["openai", "openai"]}, "twice"),
        ({"chain": ["none", "anthropic"]}, "put it last"),
        ({"timeout_seconds": 0}, "above 0"),
        ({"timeout_seconds": 86400}, "at most"),
        ({"anthropic": {"max_tokens": 0}}, "between 1"),
        ({"anthropic": {"model": " "}}, "must not be empty"),
        ({"anthropic": {"api_key_env": ""}}, "environment variable name"),
        ({"anthropic": {"api_key_env": "sk-ant-abc"}}, "environment variable name"),
        ({"openai": {"base_url": "ftp://example.org"}}, r"http\(s\) URL"),
        ({"openai": {"base_url": "localhost:11434"}}, r"http\(s\) URL"),
        ({"openai": {"base_url": "http://user:secret@127.0.0.1/v1"}}, "must not carry credentials"),
        ({"openai": {"base_url": "http://127.0.0.1/v1?key=secret"}}, "must not carry credentials"),
        ({"claude-cli": {"command": ""}}, "must not be empty"),
        ({"anthropic": "claude"}, r"\[models.anthropic\] must be a table"),
    ],
)
def test_bad_value_is_refused_with_a_hint(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        models_from_table(table)
    assert caught.value.rule == "config-invalid"
    assert "secret" not in caught.value.message


def test_models_must_be_a_table() -> None:
    with pytest.raises(ConfigError, match=r"\[models\] must be a table"):
        models_from_table(["none"])


def test_openai_key_may_be_unset_for_a_local_server() -> None:
    config = models_from_table(
        {"chain": ["openai"], "openai": {"base_url": "http://127.0.0.1:8080/v1", "api_key_env": ""}}
    )
    assert config.openai.api_key_env == ""


def test_every_provider_name_can_be_configured() -> None:
    assert models_from_table({"chain": list(PROVIDER_NAMES)}).chain == PROVIDER_NAMES
