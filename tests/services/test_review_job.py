"""The scheduled reviewer end to end: real vault, real SDKs against stand-in model servers, the real CLI
(a fresh interpreter in the first test; forks of the warm fork server, tests/support/zygote.py, in the rest)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.services.inbox import InboxService
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.vault.held import parse_held
from support import KEY, notegate
from support import configure_models as configure
from support.callers import make_caller
from support.standins import Answer, AnthropicStandIn, OpenAIStandIn

PHONE = make_caller(tier="restricted", client_class="hosted", login="phone", client="chat-app")


def seed(vault: Path) -> dict[str, str]:
    """Four inbox items written by a restricted session; returns path -> version."""
    rt = Runtime(load_config(vault))
    inbox = InboxService(NotesService(rt))
    inbox.inbox_write(PHONE, "log", "Migrated the index to FTS5.", project="notegate-demo")
    inbox.inbox_write(PHONE, "decision", "Maybe rewrite everything in Rust?", project="notegate-demo")
    inbox.inbox_write(PHONE, "handoff", "Stopped halfway\u202e through.", project="notegate-demo")  # floor
    inbox.inbox_write(PHONE, "capture", "A link list.", title="links")
    versions = {p: b for p, b in rt.environment(None).store.listing().notes.items() if p.startswith("inbox/")}
    rt.close()
    return versions


def verdicts(versions: dict[str, str], extra: list[dict] | None = None) -> dict:
    return {
        "verdicts": [
            {
                "item": "inbox/log/notegate-demo.md",
                "version": versions["inbox/log/notegate-demo.md"],
                "decision": "promote",
                "reason": "Accurate and useful.",
            },
            {
                "item": "inbox/decisions/notegate-demo.md",
                "version": versions["inbox/decisions/notegate-demo.md"],
                "decision": "hold",
                "reason": "Speculative; needs a person.",
            },
            # The model tries to promote the floor-held item: the floor wins.
            {
                "item": "inbox/handoffs/notegate-demo.md",
                "version": versions["inbox/handoffs/notegate-demo.md"],
                "decision": "promote",
                "reason": "Looks fine.",
            },
            *(extra or []),
        ]
    }


def review(vault: Path, *args: str, key: str | None = KEY, real: bool = False) -> subprocess.CompletedProcess:
    """`notegate review` in its own process: forked from the warm fork server, or ``real`` (a fresh
    interpreter, the cron's path) for the test that shows it end to end."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "OPENAI"))}
    if key:
        env["TEST_ANTHROPIC_KEY"] = key
    env["TEST_OPENAI_KEY"] = "sk-openai-test"
    return notegate("review", "--config", str(vault), *args, env=env, timeout=120, real=real)


def state_of(vault: Path) -> tuple[dict[str, str], str]:
    rt = Runtime(load_config(vault))
    store = rt.environment(None).store
    notes = dict(store.listing().notes)
    log = store.read("log/notegate-demo.md")[0].decode()
    rt.close()
    return notes, log


def test_review_applies_verdicts_and_the_floor_wins(vault: Path) -> None:
    versions = seed(vault)
    with AnthropicStandIn([Answer.json(verdicts(versions))], api_key=KEY) as server:
        configure(vault, anthropic_url=server.base_url)
        result = review(vault, real=True)
        request = server.requests[0].json
    assert result.returncode == 0, result.stderr
    assert "review: promoted 1, held 3, skipped 0, failed 0" in result.stdout
    notes, log = state_of(vault)
    assert "Migrated the index to FTS5." in log
    assert "inbox/log/notegate-demo.md" not in notes
    rt = Runtime(load_config(vault))
    held = {r.item: r for r in parse_held(rt.environment(None).store.read("inbox/_held.md")[0].decode())}
    rt.close()
    assert held["inbox/decisions/notegate-demo.md"].reason == "Speculative; needs a person."
    assert held["inbox/handoffs/notegate-demo.md"].reason.startswith("floor: bidi-control")
    assert "no route" in held["inbox/captures/links.md"].reason
    # Only the items the model may judge were sent, as fenced data apart from the instructions.
    sent = json.dumps(request["messages"])
    assert "Migrated the index" in sent and "Stopped halfway" not in sent and "A link list" not in sent
    assert "Migrated the index" not in json.dumps(request.get("system"))


def test_unknown_items_and_versions_are_ignored(vault: Path) -> None:
    versions = seed(vault)
    bogus = [
        {"item": "inbox/log/notegate-demo.md", "version": "0" * 40, "decision": "hold", "reason": "x"},
        {"item": "rules/digest.md", "version": "0" * 40, "decision": "promote", "reason": "x"},
    ]
    answer = {"verdicts": [*bogus]}
    with AnthropicStandIn([Answer.json(answer)], api_key=KEY) as server:
        configure(vault, anthropic_url=server.base_url)
        result = review(vault)
    # rules/digest.md is not in the manifest: the gate refuses the whole answer, nothing is decided by it
    assert result.returncode == 1 and "source-not-in-manifest" in result.stderr
    answer = {"verdicts": [bogus[0]]}
    with AnthropicStandIn([Answer.json(answer)], api_key=KEY) as server:
        configure(vault, anthropic_url=server.base_url)
        result = review(vault)
    assert result.returncode == 0
    notes, _ = state_of(vault)
    assert notes["inbox/log/notegate-demo.md"] == versions["inbox/log/notegate-demo.md"]  # untouched


@pytest.mark.parametrize(
    "raw",
    [
        'Sure! {"verdicts": []}',  # prose-wrapped
        '{"verdicts": [], "verdicts": []}',  # duplicate keys
        '{"verdicts": [{"item": "inbox/log/notegate-demo.md", "version": "x", "decision": "promote"}]}',  # schema
    ],
)
def test_malformed_answer_promotes_and_holds_nothing(vault: Path, raw: str) -> None:
    versions = seed(vault)
    with AnthropicStandIn([Answer.raw(raw)], api_key=KEY) as server:
        configure(vault, anthropic_url=server.base_url)
        result = review(vault)
    assert result.returncode == 1 and "failed 2" in result.stdout
    notes, _ = state_of(vault)
    assert notes["inbox/log/notegate-demo.md"] == versions["inbox/log/notegate-demo.md"]
    assert notes["inbox/decisions/notegate-demo.md"] == versions["inbox/decisions/notegate-demo.md"]


def test_failing_provider_falls_back(vault: Path) -> None:
    versions = seed(vault)
    with (
        AnthropicStandIn([Answer.error(529)], api_key=KEY) as down,
        OpenAIStandIn([Answer.json(verdicts(versions))], api_key="sk-openai-test") as local,
    ):
        configure(vault, anthropic_url=down.base_url, openai_url=local.base_url, chain=("anthropic", "openai", "none"))
        result = review(vault)
        assert len(down.requests) == 1 and len(local.requests) == 1
    assert result.returncode == 0 and "promoted 1" in result.stdout


def test_no_model_runs_code_only_parts(vault: Path) -> None:
    seed(vault)
    configure(vault, chain=("none",))
    result = review(vault)
    assert result.returncode == 0
    assert "review: promoted 0, held 2, skipped 2, failed 0" in result.stdout  # floor + no-route holds


def test_dry_run_changes_nothing(vault: Path) -> None:
    versions = seed(vault)
    with AnthropicStandIn([Answer.json(verdicts(versions))], api_key=KEY) as server:
        configure(vault, anthropic_url=server.base_url)
        before, _ = state_of(vault)
        result = review(vault, "--dry-run")
    assert result.returncode == 0 and "would promote inbox/log/notegate-demo.md" in result.stdout
    after, _ = state_of(vault)
    assert before == after


def test_missing_key_falls_through_without_calling(vault: Path) -> None:
    seed(vault)
    with AnthropicStandIn([Answer.json({"verdicts": []})], api_key=KEY) as server:
        configure(vault, anthropic_url=server.base_url)
        result = review(vault, key=None)
        assert server.requests == []
    assert result.returncode == 0 and "skipped 2" in result.stdout
