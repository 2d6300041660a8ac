"""The fallback chain, built from config the way the jobs build it, against stand-ins."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anthropic  # noqa: F401  (imported up front: SDK import time must not count in timed tests)
import openai  # noqa: F401
import pytest

from notegate.models import (
    Attempt,
    DataPart,
    FallbackChain,
    ModelError,
    ModelRefused,
    ModelSkipped,
    NoneProvider,
    build_chain,
    models_from_table,
)
from notegate.safety.outputgate import check_output
from support import model_cases as cases
from support.model_cases import ANTHROPIC_KEY, MANIFEST, NEVER_LOGGED, OPENAI_KEY, SYSTEM
from support.standins import Answer, AnthropicStandIn, CliAnswer, FakeClaude, OpenAIStandIn

ENVIRON = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY, "OPENAI_API_KEY": OPENAI_KEY}


def chain_for(
    chain: list[str], anthropic_server: Any = None, openai_server: Any = None, **extra: Any
) -> dict[str, Any]:
    """A [models] table pointing the providers at the given stand-ins."""
    table: dict[str, Any] = {"chain": chain, "timeout_seconds": 0.5, **extra}
    if anthropic_server is not None:
        table["anthropic"] = {"model": "claude-standin", "base_url": anthropic_server.base_url}
    if openai_server is not None:
        table["openai"] = {"model": "standin-model", "base_url": openai_server.base_url}
    return table


def ask(chain: FallbackChain, timeout: float = 0.5) -> Any:
    return chain.complete(SYSTEM, cases.parts(), cases.review_schema(), schema_name="review", timeout=timeout)


def outcomes(attempts: tuple[Attempt, ...]) -> list[tuple[str, str]]:
    return [(a.provider, a.outcome) for a in attempts]


@pytest.mark.parametrize(
    "failure", [Answer.error(529), Answer.error(500), Answer.slow(1.5)], ids=["529", "500", "slow"]
)
def test_anthropic_down_then_openai_answers(failure: Answer) -> None:
    with (
        AnthropicStandIn([failure], api_key=ANTHROPIC_KEY) as down,
        OpenAIStandIn([Answer.json(cases.verdicts())], api_key=OPENAI_KEY) as up,
    ):
        chain = build_chain(models_from_table(chain_for(["anthropic", "openai", "none"], down, up)), ENVIRON)
        done = ask(chain, timeout=0.4)
        assert len(down.requests) == 1 and len(up.requests) == 1
    # A slow provider costs its timeout, not its delay: had the chain waited the delay out, the slow
    # reply would have arrived and been "answered".  So the outcome is the check, not a wall-clock limit.
    expected = "model-timeout" if failure.delay else "model-unavailable"
    assert done.provider == "openai" == chain.answered_by
    assert outcomes(done.attempts) == [("anthropic", expected), ("openai", "answered")]
    assert chain.attempts == done.attempts
    assert check_output(done.text, "review", MANIFEST).ok


def test_first_provider_answers_and_the_rest_are_not_asked() -> None:
    with (
        AnthropicStandIn([Answer.json(cases.verdicts())], api_key=ANTHROPIC_KEY) as up,
        OpenAIStandIn([Answer.json({})], api_key=OPENAI_KEY) as spare,
    ):
        chain = build_chain(models_from_table(chain_for(["anthropic", "openai"], up, spare)), ENVIRON)
        assert chain.complete_json(SYSTEM, cases.parts(), cases.review_schema(), schema_name="review", timeout=2) == (
            Answer.json(cases.verdicts()).text
        )
        assert spare.requests == []
    assert chain.answered_by == "anthropic"


def test_all_down_raises_the_last_error() -> None:
    with (
        AnthropicStandIn([Answer.error(500)], api_key=ANTHROPIC_KEY) as a,
        OpenAIStandIn([Answer.refuse()], api_key=OPENAI_KEY) as o,
    ):
        chain = build_chain(models_from_table(chain_for(["anthropic", "openai"], a, o)), ENVIRON)
        with pytest.raises(ModelRefused) as caught:
            ask(chain)
    assert caught.value.provider == "openai"
    assert chain.answered_by is None
    assert outcomes(chain.attempts) == [("anthropic", "model-unavailable"), ("openai", "model-refused")]


def test_none_ends_the_chain_with_model_skipped() -> None:
    with AnthropicStandIn([Answer.error(529)], api_key=ANTHROPIC_KEY) as a:
        chain = build_chain(models_from_table(chain_for(["anthropic", "none"], a)), ENVIRON)
        with pytest.raises(ModelSkipped) as caught:
            ask(chain)
    assert caught.value.rule == "model-none"
    assert outcomes(chain.attempts) == [("anthropic", "model-unavailable"), ("none", "model-none")]


def test_default_config_asks_no_model() -> None:
    chain = build_chain(models_from_table({}), {})
    assert [p.name for p in chain.providers] == ["none"]
    with pytest.raises(ModelSkipped):
        ask(chain)


def test_missing_key_falls_through_without_calling_the_server() -> None:
    with (
        AnthropicStandIn([Answer.json(cases.verdicts())], api_key=ANTHROPIC_KEY) as a,
        OpenAIStandIn([Answer.json(cases.verdicts())], api_key=OPENAI_KEY) as o,
    ):
        chain = build_chain(models_from_table(chain_for(["anthropic", "openai"], a, o)), {"OPENAI_API_KEY": OPENAI_KEY})
        done = ask(chain)
        assert a.requests == []
    assert done.provider == "openai"
    assert outcomes(done.attempts)[0] == ("anthropic", "model-unavailable")


def test_claude_cli_in_the_chain(tmp_path: Path) -> None:
    fake = FakeClaude(tmp_path, CliAnswer.fail(1))
    with OpenAIStandIn([Answer.json(cases.verdicts())], api_key=None) as o:
        chain = build_chain(models_from_table(chain_for(["claude-cli", "openai"], openai_server=o)), fake.environ())
        done = ask(chain)
    assert outcomes(done.attempts) == [("claude-cli", "model-unavailable"), ("openai", "answered")]
    fake.play(CliAnswer.json(cases.verdicts()))
    assert ask(chain).provider == "claude-cli"


def test_environ_is_read_when_the_chain_is_built() -> None:
    environ = {"ANTHROPIC_API_KEY": ANTHROPIC_KEY}
    with AnthropicStandIn([Answer.json({})], api_key=ANTHROPIC_KEY) as a:
        chain = build_chain(models_from_table(chain_for(["anthropic"], a)), environ)
        environ.clear()  # later changes do not reach the providers
        assert ask(chain).provider == "anthropic"


class Broken:
    """A provider with a bug: its exception is not a ModelError."""

    name = "broken"

    def complete_json(self, *args: Any, **kwargs: Any) -> str:
        raise KeyError("bug")


def test_a_bug_in_a_provider_is_not_swallowed() -> None:
    chain = FallbackChain([Broken(), NoneProvider()])
    with pytest.raises(KeyError):
        ask(chain)


def test_empty_chain_is_refused() -> None:
    with pytest.raises(ValueError):
        FallbackChain([])


def test_chain_logs_outcomes_but_nothing_of_the_call(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with (
        AnthropicStandIn([Answer.error(529)], api_key=ANTHROPIC_KEY) as a,
        OpenAIStandIn([Answer.json(cases.verdicts())], api_key=OPENAI_KEY) as o,
    ):
        ask(build_chain(models_from_table(chain_for(["anthropic", "openai"], a, o)), ENVIRON))
    chain_records = [r for r in caplog.records if r.name == "notegate.models"]
    assert [r.levelname for r in chain_records] == ["WARNING", "INFO"]
    assert "model-unavailable" in chain_records[0].getMessage()
    for secret in NEVER_LOGGED:
        assert secret not in caplog.text


def test_attempt_times_come_from_the_clock() -> None:
    ticks = iter([10.0, 12.5])
    chain = FallbackChain([NoneProvider()], clock=lambda: next(ticks))
    with pytest.raises(ModelSkipped):
        ask(chain)
    assert chain.attempts == (Attempt("none", "model-none", 2.5),)


@pytest.mark.parametrize(
    "data",
    [DataPart("inbox item", "a.md", "x"), "raw text", [("label", "src", "text")]],
    ids=["bare-part", "string", "tuple"],
)
def test_data_parts_must_be_a_sequence_of_data_part(data: Any) -> None:
    chain = FallbackChain([NoneProvider()])
    with pytest.raises(ModelSkipped):  # `none` never looks at the data...
        chain.complete(SYSTEM, data, {}, schema_name="review", timeout=1)
    with AnthropicStandIn([Answer.json({})], api_key=ANTHROPIC_KEY) as a:
        chain = build_chain(models_from_table(chain_for(["anthropic"], a)), ENVIRON)
        with pytest.raises(TypeError):  # ...a real provider refuses anything but DataPart values
            chain.complete(SYSTEM, data, cases.review_schema(), schema_name="review", timeout=1)
        assert a.requests == []


def test_model_error_is_a_notegate_error_with_a_remedy() -> None:
    chain = build_chain(models_from_table({"chain": ["anthropic"]}), {})
    with pytest.raises(ModelError) as caught:
        ask(chain)
    text = caught.value.explain()
    assert text.startswith("Refused [model-unavailable]: model provider 'anthropic': no API key")
    assert "ANTHROPIC_API_KEY" in text
