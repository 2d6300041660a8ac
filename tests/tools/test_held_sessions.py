"""The session handles the tools process holds for upstreams (tools/app.py ``HeldSessions``): whatever order of
calls and results, a call carries the handle its own (mount, person, connector) was last given, never another
key's and never the one the caller passed; the table stays bounded. (End to end against a remote notegate:
tests/tools/test_upstream_oauth.py.)"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from mcp_types import CallToolResult, TextContent

from notegate.tools.app import SESSION_HANDLE, HeldSessions

KEYS = st.tuples(st.sampled_from(["mine", "kids"]), st.sampled_from(["owner", "kid"]), st.sampled_from(["t1", "t2"]))
STEPS = st.lists(
    st.tuples(st.sampled_from(["start", "fail", "call"]), KEYS, st.text(min_size=1, max_size=8)), max_size=40
)


def result(handle: str, *, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text="started")], structured_content={"handle": handle}, is_error=error
    )


@given(STEPS, st.integers(1, 8))
def test_a_call_carries_only_its_own_keys_last_handle(steps: list[tuple[str, tuple, str]], most: int) -> None:
    held = HeldSessions(max_held=most)
    given_to: dict[tuple, str] = {}
    for action, key, value in steps:
        if action == "start":
            held.keep(key, result(value))
            given_to.pop(key, None)
            given_to[key] = value
            given_to = dict(list(given_to.items())[-most:])  # the least recent beyond the bound are forgotten
        elif action == "fail":  # an error result gives no session
            held.keep(key, result(value, error=True))
        else:
            passed = held.passed(key, {SESSION_HANDLE: "the caller's own", "q": value})
            assert passed["q"] == value
            assert passed.get(SESSION_HANDLE) == given_to.get(key)  # never the caller's own, never another key's
            if key in given_to:  # used: the most recent now
                given_to[key] = given_to.pop(key)
        assert len(held._held) <= most
