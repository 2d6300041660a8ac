"""Catalog pins and mount fields (policy.tools, pure): one artifact per pin, typed values only; and the
namespacing of mounted tools. Hostile inputs in tables, properties with hypothesis."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.policy import decide_mount, decide_mount_tool, decide_pin, namespaced, split_namespaced
from support.upstreams import EVERYTHING, TIME

SHA = "sha256:" + "ab" * 32


def pin(**changes: str) -> tuple[str, str, str, str, str]:
    values = {**TIME, **changes}
    return values["kind"], values["package"], values["version"], values["digest"], values["program"]


@pytest.mark.parametrize(
    "changes",
    [
        {"version": ">=2026.1"},  # a range
        {"version": "~=2026.10"},
        {"version": "2026.*"},  # a wildcard
        {"version": "latest"},  # a tag
        {"version": "2026.10.19 ; os_name=='nt'"},  # a marker smuggled in
        {"version": ""},
        {"digest": ""},  # no digest
        {"digest": "sha256:" + "AB" * 32},  # upper-case hex is not what we compare
        {"digest": "md5:" + "ab" * 16},
        {"package": "mcp-server-time; rm -rf /"},
        {"package": "-e git+https://example.org/x"},
        {"program": "mcp-server-time --debug"},  # an argument, not a program name
        {"program": "../../bin/sh"},
        {"kind": "git"},
    ],
)
def test_a_pypi_pin_that_names_more_than_one_artifact_is_refused(changes: dict[str, str]) -> None:
    assert decide_pin(*pin(**changes)).rule == "tools-pin-invalid"


@pytest.mark.parametrize(
    "version",
    [
        "^2026.8.31",
        "~2026.8.31",
        "2026.8.x",
        "latest",
        "next",
        "main",
        "2026.8",
        "*",
        "2026.8.31 || 1.0.0",
        "v2026.8.31",
    ],
)
def test_an_npm_range_or_tag_is_refused(version: str) -> None:
    values = {**EVERYTHING, "version": version}
    decision = decide_pin(values["kind"], values["package"], values["version"], values["digest"], values["program"])
    assert decision.rule == "tools-pin-invalid"


def test_the_real_pins_are_accepted() -> None:
    for values in (TIME, EVERYTHING):
        assert decide_pin(
            values["kind"], values["package"], values["version"], values["digest"], values["program"]
        ).allowed


@given(st.text(max_size=40))
def test_a_version_with_any_operator_or_space_is_refused(text: str) -> None:
    version = "2026.10.19" + text
    decision = decide_pin("pypi", "mcp-server-time", version, SHA, "mcp-server-time")
    if any(c in text for c in " <>=!~*;,|^@#/\\\n\t"):
        assert not decision.allowed


@pytest.mark.parametrize(
    ("variables", "allowed"),
    [
        (("GITHUB_TOKEN",), True),
        (("LD_PRELOAD",), False),
        (("PYTHONSTARTUP",), False),
        (("NODE_OPTIONS",), False),
        (("PATH",), False),
        (("BASH_ENV",), False),
        (("lower",), False),
        (("A B",), False),
        (("X=$(id)",), False),
    ],
)
def test_a_mount_declares_only_plain_variables_no_loader_reads(variables: tuple[str, ...], allowed: bool) -> None:
    assert decide_mount("gh", "github", "me@example.org", "personal", variables, ()).allowed is allowed


@pytest.mark.parametrize("account", ["me; rm -rf /", "$(id)", "a b", "`x`", "'q'", ""])
def test_a_mount_account_is_a_plain_label(account: str) -> None:
    assert decide_mount("gh", "github", account, "personal", (), ()).rule == "tools-mount-invalid"


@given(st.from_regex(r"[a-z][a-z0-9-]{0,31}", fullmatch=True), st.from_regex(r"[A-Za-z0-9_.-]{1,64}", fullmatch=True))
def test_namespacing_round_trips(mount: str, tool: str) -> None:
    assert split_namespaced(namespaced(mount, tool)) == (mount, tool)


@given(st.text(max_size=80))
def test_only_namespaced_names_split(name: str) -> None:
    parts = split_namespaced(name)
    assert parts is None or namespaced(*parts) == name


def decide(**changes):
    values = {
        "caller_environment": "personal",
        "tier": "restricted",
        "mount_environment": "personal",
        "tool": "read",
        "write_tools": ("write",),
        "approved": True,
        "calling": True,
    }
    return decide_mount_tool(**{**values, **changes})


def test_who_sees_and_calls_a_mounted_tool() -> None:
    assert decide().allowed
    assert decide(caller_environment="household").rule == "tools-hidden"
    assert decide(approved=False).rule == "tools-hidden"
    assert decide(tool="write").rule == "tools-write-restricted"
    assert decide(tool="write", calling=False).allowed  # listed, with the grant argument
    assert decide(tool="write", tier="trusted").allowed
    assert decide(tier="machine").rule == "tools-hidden"
    assert decide(tier="anything-else").rule == "tools-hidden"  # the last branch denies


def test_the_user_page_documents_every_tools_setting_with_its_default() -> None:
    from notegate.tools.settings import TOOLS_SETTINGS
    from notegate.vault.layout import _toml

    page = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "tools-gateway.md").read_text()
    for setting in TOOLS_SETTINGS:
        assert f"- `{setting.name}` (default `{_toml(setting.default)}`)" in page, setting.name


# ---------------------------------------------------------------- remote entries: a URL and nothing else
@pytest.mark.parametrize(
    "url",
    [
        "https://mcp.example.org/mcp",
        "https://mcp.example.org:8443/v1/mcp",
        "http://localhost:8765/mcp",  # this host's own servers, over loopback
        "http://127.0.0.1:9000/mcp",
        "http://[::1]:9000/mcp",
    ],
)
def test_a_remote_entry_names_an_https_url_or_this_hosts_loopback(url: str) -> None:
    assert decide_pin("remote", url, "", "", "").allowed


@pytest.mark.parametrize(
    ("url", "version", "digest", "program"),
    [
        ("http://mcp.example.org/mcp", "", "", ""),  # plain http off this host: a token on the wire
        ("http://10.0.0.5/mcp", "", "", ""),
        ("https://user:pw@mcp.example.org/mcp", "", "", ""),  # credentials in the URL
        ("https://mcp.example.org/mcp?x=1", "", "", ""),  # a query: not one resource
        ("https://mcp.example.org/mcp#frag", "", "", ""),
        ("https://mcp.example.org/ mcp", "", "", ""),
        ("ftp://mcp.example.org/mcp", "", "", ""),
        ("file:///etc/passwd", "", "", ""),
        ("https://mcp.example.org/mcp", "1.0.0", "", ""),  # a remote pins no version, digest or program
        ("https://mcp.example.org/mcp", "", SHA, ""),
        ("https://mcp.example.org/mcp", "", "", "sh"),
    ],
)
def test_a_remote_entry_that_is_not_one_plain_url_is_refused(url: str, version: str, digest: str, program: str) -> None:
    assert decide_pin("remote", url, version, digest, program).rule == "tools-pin-invalid"


@given(st.text(max_size=80))
def test_only_https_or_loopback_http_urls_pass_as_remote_entries(url: str) -> None:
    """Property: whatever the text, an accepted remote URL is https, or http to a loopback name, with no
    user, query, fragment or space."""
    decision = decide_pin("remote", url, "", "", "")
    if decision.allowed:
        assert (
            url.startswith("https://")
            or url.split("/")[2].split(":")[0] in ("localhost", "127.0.0.1")
            or url.startswith("http://[::1]")
        )
        assert not any(c in url for c in "@?# \n")
