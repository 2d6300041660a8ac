"""/metrics against a real `notegate serve`: counts heard from the server's events, gauges read at scrape
time, labels that never carry a path or a login, and readers limited to this machine or a machine token
(which reads its own environment's figures only)."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import httpx2
import pygit2
import pytest
from prometheus_client.parser import text_string_to_metric_families

from notegate.config import load_config
from notegate.policy import decide_metrics_reader, metrics_environments
from notegate.services.container import Services
from notegate.services.metrics import Metrics
from notegate.services.runtime import Runtime
from support import mcp_http, mint, mint_oauth, running, text_of

MARKER = "zq7-unique-marker"


def samples(body: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, parsed by the reference client's own parser (so the format is valid)."""
    found = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(found: dict, name: str, **labels: str) -> float | None:
    return found.get((name, tuple(sorted(labels.items()))))


def test_a_write_and_a_refusal_are_counted_with_code_made_labels_only(vault: Path) -> None:
    trusted = mint(vault, name=f"laptop-{MARKER}", login="owner", tier="trusted")
    restricted = mint(vault, name="phone", client_class="hosted", login="owner")

    async def calls(url: str) -> None:
        async with mcp_http(url, trusted, start_session=True) as client:
            done = await client.call_tool(
                "write_note",
                {
                    "path": f"projects/{MARKER}.md",
                    "content": f"# {MARKER}\n",
                    "base_revision": "absent",
                    "confirmed": True,
                },
            )
            assert not done.is_error, text_of(done)
        async with mcp_http(url, restricted, start_session=True) as client:
            refused = await client.call_tool(
                "write_note", {"path": "rules/x.md", "content": "x\n", "base_revision": "absent"}
            )
            assert refused.is_error

    with running(vault) as server:
        anyio.run(calls, server.url)
        response = httpx2.get(f"{server.url}/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=")
    found = samples(response.text)
    assert value(found, "notegate_tool_calls_total", environment="personal", tool="write_note", outcome="ok") == 1
    refusals = {
        dict(labels)["outcome"]: n
        for (name, labels), n in found.items()
        if name == "notegate_tool_calls_total" and dict(labels)["tool"] == "write_note"
    }
    assert refusals.get("restricted-outside-inbox") == 1, refusals
    assert value(found, "notegate_write_seconds_count", environment="personal") == 1
    assert value(found, "notegate_commit_push_seconds_count", environment="personal") >= 1
    assert value(found, "notegate_index_notes", environment="personal") >= 1
    assert value(found, "notegate_inbox_waiting", environment="personal") == 0
    # A path, a login, a token name: none of them in any label or anywhere in the page.
    assert MARKER not in response.text and "phone" not in response.text and "laptop" not in response.text
    label_values = {v for (_, labels) in found for _, v in labels}
    assert label_values <= {"personal", "write_note", "session_start", "ok", "restricted-outside-inbox"} | {
        v for v in label_values if re.fullmatch(r"[0-9.e+]+|\+Inf", v)
    }


def test_behind_a_proxy_only_a_machine_token_reads_the_figures(vault: Path) -> None:
    text = vault.read_text().replace('public_url = ""', 'public_url = "https://notes.example.org"', 1)
    vault.write_text(text)
    machine = mint(vault, name="prometheus", client_class="machine")
    hosted = mint(vault, name="phone", client_class="hosted")
    with running(vault) as server:
        anonymous = httpx2.get(f"{server.url}/metrics")
        conversation = httpx2.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {hosted}"})
        scraper = httpx2.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {machine}"})
    assert anonymous.status_code == 401
    assert anonymous.text.startswith("Refused [metrics-unauthenticated]: ")
    assert conversation.status_code == 403
    assert conversation.text.startswith("Refused [metrics-not-machine]: ")
    assert scraper.status_code == 200 and "notegate_index_notes" in scraper.text


def test_a_bad_token_from_this_machine_is_refused_not_ignored(vault: Path) -> None:
    """A bad token is refused, not taken for a scraper on this machine.  A hosted client's OAuth access token is
    refused like a conversation's static token (``metrics-not-machine``) and gets its environment's details
    from /healthz: both build the caller with the one function every door uses (before, /metrics asked the
    OAuth credential for a caller it did not have and answered 500)."""
    oauth = mint_oauth(vault)
    with running(vault) as server:
        response = httpx2.get(f"{server.url}/metrics", headers={"Authorization": "Bearer ngt_0000_nope"})
        scrape = httpx2.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {oauth}"})
        health = httpx2.get(f"{server.url}/healthz", headers={"Authorization": f"Bearer {oauth}"})
    assert response.status_code == 401
    assert response.text.startswith("Refused [metrics-unauthenticated]: ")
    assert scrape.status_code == 403, scrape.text
    assert scrape.text.startswith("Refused [metrics-not-machine]: ")
    assert health.status_code == 200 and "personal" in health.json()["environments"]


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("tool", {"environment": "elsewhere", "tool": "write_note", "outcome": "ok", "ms": 3.0}),
        ("tool", {"tool": "write_note", "outcome": "ok", "ms": 3.0}),  # no environment at all
        ("commit", {"environment": "../x", "ms": 3.0}),
    ],
)
def test_an_event_of_no_configured_environment_makes_no_label(vault: Path, name: str, fields: dict) -> None:
    runtime = Runtime(load_config(vault))
    try:
        metrics = Metrics(runtime, Services.build(runtime))
        metrics.hear(name, fields)
        body = metrics.render().decode()
    finally:
        runtime.close()
    assert "elsewhere" not in body and "../x" not in body
    assert "notegate_tool_calls_total{" not in body and "notegate_commit_push_seconds_count{" not in body


def test_the_fetch_lag_is_the_time_since_the_last_fetch(vault: Path) -> None:
    now = [1000.0]
    runtime = Runtime(load_config(vault), clock=lambda: now[0])
    try:
        metrics = Metrics(runtime, Services.build(runtime), clock=lambda: now[0])
        assert "notegate_fetch_lag_seconds{" not in metrics.render().decode()  # no fetch yet: no figure
        runtime.sync("personal")
        now[0] += 42
        found = samples(metrics.render().decode())
    finally:
        runtime.close()
    assert value(found, "notegate_fetch_lag_seconds", environment="personal") == 42


def test_a_machine_token_reads_the_figures_of_its_own_environment_only(vault: Path) -> None:
    """Any machine token of any environment read every environment's names, tool activity, refusal rules
    and inbox counts; now a machine token sees its own environment (the default one's when it names none),
    and only a scraper on this machine sees them all."""
    pygit2.init_repository(str(vault.parent / "household.git"), bare=True, initial_head="main")
    text = vault.read_text().replace(
        "[policy]", '[environments.household]\norigin = "household.git"\nowner = "partner"\n\n[policy]', 1
    )
    vault.write_text(text)
    personal = mint(vault, name="prom-personal", client_class="machine", environment="personal")
    household = mint(vault, name="prom-household", login="partner", client_class="machine", environment="household")
    unbound = mint(vault, name="prom-default", client_class="machine")
    trusted = mint(vault, name="laptop", tier="trusted", environment="personal")

    async def calls(url: str) -> None:  # tool activity in personal, so it has a refusal rule and a latency
        async with mcp_http(url, trusted, start_session=True) as client:
            await client.call_tool("read_note", {"path": "nowhere.md"})

    with running(vault) as server:
        anyio.run(calls, server.url)
        pages = {
            name: httpx2.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {token}"})
            for name, token in (("personal", personal), ("household", household), ("default", unbound))
        }
        local = httpx2.get(f"{server.url}/metrics")
    for page in (*pages.values(), local):
        assert page.status_code == 200, page.text

    def environments(body: str) -> set[str]:
        return {dict(labels)["environment"] for (_, labels) in samples(body) if "environment" in dict(labels)}

    assert environments(pages["personal"].text) == {"personal"}
    assert environments(pages["household"].text) == {"household"}
    assert environments(pages["default"].text) == {"personal"}
    assert environments(local.text) == {"personal", "household"}
    assert "household" not in pages["personal"].text and "household" not in pages["default"].text
    assert "personal" not in pages["household"].text
    assert "notegate_tool_calls_total" not in {name for (name, _) in samples(pages["household"].text)}
    assert "read_note" not in pages["household"].text and "read_note" in pages["personal"].text


@pytest.mark.parametrize(
    ("reader", "token_environment", "seen"),
    [
        (decide_metrics_reader(loopback_peer=True, behind_proxy=False, client_class=None), None, {"a", "b"}),
        (decide_metrics_reader(loopback_peer=False, behind_proxy=False, client_class="machine"), "b", {"b"}),
        (decide_metrics_reader(loopback_peer=False, behind_proxy=False, client_class="machine"), None, {"a"}),
        (decide_metrics_reader(loopback_peer=False, behind_proxy=False, client_class="machine"), "gone", set()),
        (decide_metrics_reader(loopback_peer=True, behind_proxy=True, client_class=None), None, set()),
        (decide_metrics_reader(loopback_peer=False, behind_proxy=False, client_class="hosted"), "a", set()),
    ],
)
def test_metrics_environments(reader, token_environment: str | None, seen: set[str]) -> None:
    assert metrics_environments(reader, token_environment, "a", ("a", "b")) == seen
