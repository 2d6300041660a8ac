"""The ``anthropic`` and ``openai`` providers: the real SDKs against stand-in servers on 127.0.0.1.

Each provider is driven through the same table of scripted server behaviours; the wire-level
checks (where instructions, data and keys went) read the requests the stand-ins recorded.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anthropic  # noqa: F401  (imported up front: SDK import time must not count in timed tests)
import openai  # noqa: F401
import pytest

from notegate.models import (
    AnthropicProvider,
    AnthropicSettings,
    DataPart,
    ModelError,
    ModelRefused,
    ModelTimeout,
    OpenAIProvider,
    OpenAISettings,
)
from notegate.models.base import NO_DATA_TEXT, user_turn_text, wire_schema
from notegate.models.openai_api import NO_KEY_PLACEHOLDER
from notegate.safety.outputgate import check_output
from notegate.vault.formats import fence_untrusted
from support import model_cases as cases
from support.model_cases import (
    ANTHROPIC_KEY,
    DATA_MARKER,
    DUPLICATE_KEYS,
    MANIFEST,
    NEVER_LOGGED,
    OPENAI_KEY,
    PROSE_WRAPPED,
    SYSTEM,
    SYSTEM_MARKER,
)
from support.standins import ERROR_BODY_MARKER, Answer, AnthropicStandIn, OpenAIStandIn, closed_port_url

TIMEOUT = 0.4


@dataclass(frozen=True)
class Kind:
    """How to run one provider against its stand-in."""

    name: str
    key: str
    env: str

    @contextmanager
    def serve(self, answers: list[Answer], api_key: str | None = "default") -> Iterator[Any]:
        key = self.key if api_key == "default" else api_key
        cls = AnthropicStandIn if self.name == "anthropic" else OpenAIStandIn
        with cls(answers, api_key=key) as server:
            yield server

    def provider(self, base_url: str, environ: dict[str, str] | None = None) -> Any:
        environ = {self.env: self.key} if environ is None else environ
        if self.name == "anthropic":
            return AnthropicProvider(
                AnthropicSettings(model="claude-standin", base_url=base_url, api_key_env=self.env), environ
            )
        return OpenAIProvider(OpenAISettings(model="standin-model", base_url=base_url, api_key_env=self.env), environ)


ANTHROPIC = Kind("anthropic", ANTHROPIC_KEY, "ANTHROPIC_API_KEY")
OPENAI = Kind("openai", OPENAI_KEY, "OPENAI_API_KEY")
KINDS = pytest.mark.parametrize("kind", [ANTHROPIC, OPENAI], ids=lambda k: k.name)


def ask(provider: Any, data: list[DataPart] | None = None, timeout: float = 5.0) -> str:
    return provider.complete_json(
        SYSTEM, cases.parts() if data is None else data, cases.review_schema(), schema_name="review", timeout=timeout
    )


# ------------------------------------------------------------------ good path


@KINDS
def test_good_answer_is_returned_raw_and_passes_the_output_gate(kind: Kind) -> None:
    answer = json.dumps(cases.verdicts(), indent=2)
    with kind.serve([Answer.raw(answer)]) as server:
        raw = ask(kind.provider(server.base_url))
    assert raw == answer  # byte for byte: nothing parsed or re-serialised
    result = check_output(raw, "review", MANIFEST)
    assert result.ok, result.error
    assert result.value == cases.verdicts()


@KINDS
@pytest.mark.parametrize(
    ("text", "gate_error"),
    [
        (PROSE_WRAPPED, "not-json"),  # JSON inside prose is never scraped out
        (DUPLICATE_KEYS, "duplicate-json-key"),
        ('{"verdicts": []} trailing', "trailing-data"),
        ('{"verdicts": [], "extra": 1}', "schema-invalid:"),
    ],
    ids=["prose-wrapped", "duplicate-keys", "trailing-data", "extra-property"],
)
def test_malformed_answer_is_returned_as_is(kind: Kind, text: str, gate_error: str) -> None:
    with kind.serve([Answer.raw(text)]) as server:
        raw = ask(kind.provider(server.base_url))
    assert raw == text  # the provider does not "fix" it; the gate refuses it
    result = check_output(raw, "review", MANIFEST)
    assert not result.ok
    assert result.error is not None and result.error.startswith(gate_error)


# ------------------------------------------------------------------ failures


@KINDS
def test_slow_server_times_out_within_the_timeout(kind: Kind) -> None:
    with kind.serve([Answer.slow(1.5, cases.verdicts())]) as server, pytest.raises(ModelTimeout) as caught:
        ask(kind.provider(server.base_url), timeout=TIMEOUT)
    # The timeout fired before the 1.5 s reply (else the call had answered): the rule is the check,
    # not a wall-clock limit on the call, which flaked under load.
    assert caught.value.rule == "model-timeout"
    assert caught.value.provider == kind.name


@KINDS
@pytest.mark.parametrize(
    ("status", "error_type"),
    [(500, None), (529, "overloaded_error"), (503, None), (401, None), (400, None), (429, None)],
)
def test_server_error_is_a_model_error_without_the_body(kind: Kind, status: int, error_type: str | None) -> None:
    with kind.serve([Answer.error(status, error_type)]) as server:
        with pytest.raises(ModelError) as caught:
            ask(kind.provider(server.base_url))
        assert len(server.requests) == 1  # no SDK retries: the chain is the retry
    error = caught.value
    assert type(error) is ModelError
    assert error.rule == "model-unavailable"
    assert f"HTTP {status}" in error.message
    assert ERROR_BODY_MARKER not in error.explain()
    assert error.__cause__ is None and error.__suppress_context__  # no SDK text rides along


@KINDS
def test_wrong_key_is_refused_by_the_server_and_reported_without_the_key(kind: Kind) -> None:
    with (
        kind.serve([Answer.json(cases.verdicts())], api_key="the-right-key") as server,
        pytest.raises(ModelError) as caught,
    ):
        ask(kind.provider(server.base_url))
    assert "HTTP 401" in caught.value.message
    assert kind.key not in caught.value.explain()


@KINDS
def test_connection_refused_is_a_model_error(kind: Kind) -> None:
    with pytest.raises(ModelError) as caught:
        ask(kind.provider(closed_port_url()))
    assert "connect" in caught.value.message


@KINDS
def test_refusal_is_model_refused(kind: Kind) -> None:
    with kind.serve([Answer.refuse()]) as server, pytest.raises(ModelRefused) as caught:
        ask(kind.provider(server.base_url))
    assert caught.value.rule == "model-refused"


@KINDS
def test_cut_off_answer_is_a_model_error(kind: Kind) -> None:
    reason = "max_tokens" if kind is ANTHROPIC else "length"
    with (
        kind.serve([Answer.raw('{"verdicts": [', stop_reason=reason)]) as server,
        pytest.raises(ModelError, match="cut off"),
    ):
        ask(kind.provider(server.base_url))


@KINDS
def test_missing_key_fails_before_any_request(kind: Kind) -> None:
    with kind.serve([Answer.json(cases.verdicts())]) as server:
        provider = kind.provider(server.base_url, environ={})
        if kind is OPENAI:  # a key is optional for a custom base_url; required for the hosted API
            provider = OpenAIProvider(OpenAISettings(base_url="", api_key_env=kind.env), {})
        with pytest.raises(ModelError) as caught:
            ask(provider)
        assert server.requests == []
    assert kind.env in caught.value.message  # names the variable...
    assert caught.value.rule == "model-unavailable"


def test_keys_come_only_from_the_environ_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDKs read ANTHROPIC_API_KEY/OPENAI_API_KEY from os.environ on their own; we never let them."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-from-os-environ")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-os-environ")
    with AnthropicStandIn([Answer.json({})], api_key=None) as server:
        with pytest.raises(ModelError, match="ANTHROPIC_API_KEY"):
            ask(ANTHROPIC.provider(server.base_url, environ={}))
        assert server.requests == []
    with OpenAIStandIn([Answer.json({})], api_key=None) as server:
        ask(OPENAI.provider(server.base_url, environ={}))  # local server: key optional
        (request,) = server.requests
    assert request.headers["authorization"] == f"Bearer {NO_KEY_PLACEHOLDER}"
    assert b"sk-from-os-environ" not in request.body


def test_openai_local_server_without_any_key_setting() -> None:
    with OpenAIStandIn([Answer.json(cases.verdicts())], api_key=None) as server:
        provider = OpenAIProvider(OpenAISettings(model="qwen3:8b", base_url=server.base_url, api_key_env=""), {})
        raw = ask(provider)
    assert check_output(raw, "review", MANIFEST).ok


# ------------------------------------------------------------------ what goes on the wire


def _assert_only_in_auth_header(requests: list[Any], key: str) -> None:
    """The key is in exactly one header (x-api-key or authorization) and nowhere else."""
    assert requests
    for request in requests:
        carrying = [name for name, value in request.headers.items() if key in value]
        assert len(carrying) == 1 and carrying[0] in ("x-api-key", "authorization"), carrying
        assert key.encode() not in request.body
        assert key not in request.path


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node).union(*(_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node))
    return set()


def _assert_fenced_only(user_text: str) -> None:
    """Every line carrying data is a quoted line inside a fence."""
    for line in user_text.splitlines():
        if DATA_MARKER in line or "Ignore previous" in line or "developer mode" in line:
            assert line.startswith("> "), line
    assert SYSTEM_MARKER not in user_text


def test_anthropic_request_keeps_instructions_and_data_apart() -> None:
    data = cases.parts()
    with AnthropicStandIn([Answer.json(cases.verdicts())], api_key=ANTHROPIC_KEY) as server:
        ask(ANTHROPIC.provider(server.base_url), data)
        (request,) = server.requests
    body = request.json
    assert request.path == "/v1/messages"
    assert request.headers["anthropic-version"]
    assert body["system"] == SYSTEM  # only the instructions
    assert DATA_MARKER not in json.dumps(body["system"])
    assert [m["role"] for m in body["messages"]] == ["user"]  # one user turn, nothing else
    blocks = body["messages"][0]["content"]
    assert [b["text"] for b in blocks] == [fence_untrusted(p.text, label=p.label, source=p.source) for p in data]
    for block in blocks:
        _assert_fenced_only(block["text"])
    assert "tools" not in body and "tool_choice" not in body  # no tool is ever offered
    fmt = body["output_config"]["format"]
    assert fmt["type"] == "json_schema"
    assert not {"$schema", "$id", "x-notegate-sources"} & _keys(fmt["schema"])  # our keywords stay home
    assert body["max_tokens"] == 4096 and body["model"] == "claude-standin"
    _assert_only_in_auth_header(server.requests, ANTHROPIC_KEY)


def test_openai_request_keeps_instructions_and_data_apart() -> None:
    data = cases.parts()
    with OpenAIStandIn([Answer.json(cases.verdicts())], api_key=OPENAI_KEY) as server:
        ask(OPENAI.provider(server.base_url), data)
        (request,) = server.requests
    body = request.json
    assert request.path == "/v1/chat/completions"
    assert body["messages"][0] == {"role": "system", "content": SYSTEM}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    user = body["messages"][1]["content"]
    assert user == user_turn_text(data)
    _assert_fenced_only(user)
    assert "tools" not in body
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "review", "schema": wire_schema(cases.review_schema()), "strict": True},
    }
    _assert_only_in_auth_header(server.requests, OPENAI_KEY)


@KINDS
def test_no_data_still_sends_a_neutral_user_turn(kind: Kind) -> None:
    with kind.serve([Answer.json({"verdicts": []})]) as server:
        ask(kind.provider(server.base_url), data=[])
        (request,) = server.requests
    assert NO_DATA_TEXT in json.dumps(request.json["messages"][-1]["content"])


# ------------------------------------------------------------------ logs


@KINDS
def test_no_key_prompt_or_data_in_any_log_record(kind: Kind, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with kind.serve([Answer.json(cases.verdicts()), Answer.error(500), Answer.slow(1.5)]) as server:
        provider = kind.provider(server.base_url)
        ask(provider)
        with pytest.raises(ModelError):
            ask(provider)
        with pytest.raises(ModelTimeout):
            ask(provider, timeout=TIMEOUT)
    with pytest.raises(ModelError):
        ask(kind.provider("http://127.0.0.1:1", environ={}))
    assert len(server.requests) == 3
    assert caplog.records  # the HTTP client did log (so the check below has something to read)
    for record in caplog.records:
        text = record.getMessage() + (record.exc_text or "")
        for secret in (*NEVER_LOGGED, ERROR_BODY_MARKER):
            assert secret not in text, (record.name, record.levelname)
    assert logging.getLogger(kind.name).getEffectiveLevel() >= logging.WARNING  # SDK debug dumps bodies
