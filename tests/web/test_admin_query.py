"""The audit page's filter parser: total (a query or [console-bad-query], never another exception), its own
links parse back to the same filters, bounded work whatever is sent, and the revoke decision's two answers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.doors.web.admin_query import FIELDS, MAX_PAGE, AuditQuery, parse_audit_query
from notegate.errors import NotegateError
from notegate.policy import decide_console_revoke
from support.timing import assert_linear, fill

NOW = 1_800_000_000.0

keys = st.one_of(st.sampled_from(FIELDS), st.text(max_size=12))
values = st.one_of(
    st.text(max_size=60),
    st.from_regex(r"[0-9]{1,4}[mhd]", fullmatch=True),
    st.from_regex(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}([+-][0-9]{2}:[0-9]{2})?)?", fullmatch=True),
    st.integers(min_value=-5, max_value=10**13).map(str),
)


def parse(pairs) -> AuditQuery | str:
    try:
        return parse_audit_query(pairs, now=NOW)
    except NotegateError as exc:
        return exc.rule


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(keys, values), max_size=12))
def test_the_parser_is_total(pairs) -> None:
    result = parse(pairs)
    assert isinstance(result, AuditQuery) or result == "console-bad-query"
    if isinstance(result, AuditQuery):
        assert 1 <= result.limit <= MAX_PAGE
        assert result.since is None or result.until is None or result.since < result.until
        again = parse(result.link())
        assert isinstance(again, AuditQuery)
        assert (again.env, again.connector, again.tool, again.path, again.outcome, again.limit) == (
            result.env,
            result.connector,
            result.tool,
            result.path,
            result.outcome,
            result.limit,
        )


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([], AuditQuery()),
        (
            [("tool", "write_note"), ("limit", "")],
            AuditQuery(tool="write_note", raw=(("tool", "write_note"), ("limit", ""))),
        ),
        ([("since", "2h")], AuditQuery(since=NOW - 7200, raw=(("since", "2h"),))),
        ([("since", "2027-01-15T08:00")], AuditQuery(since=NOW, raw=(("since", "2027-01-15T08:00"),))),  # UTC
        ([("until", "2027-01-15T09:00+01:00")], AuditQuery(until=NOW, raw=(("until", "2027-01-15T09:00+01:00"),))),
        ([("before", "42"), ("limit", "200")], AuditQuery(before=42, limit=200, raw=(("limit", "200"),))),
    ],
)
def test_some_queries(pairs, expected) -> None:
    assert parse(pairs) == expected


@pytest.mark.parametrize(
    "pairs",
    [
        [("tool", "a"), ("tool", "b")],  # twice
        [("Tool", "a")],  # not a field (no case folding)
        [("since", "2026-13-01")],  # no such month
        [("since", "9" * 41)],
        [("outcome", "ok\u200b".encode().decode("unicode_escape"))],
        [("limit", "\u0661".encode().decode("unicode_escape"))],  # an Arabic-Indic digit is not a page size
        [("x", "1")] * 30,
    ],
)
def test_refused_queries(pairs) -> None:
    assert parse(pairs) == "console-bad-query"


def test_the_work_is_bounded_by_the_input() -> None:
    for field in ("path", "since", "tool"):
        assert_linear(lambda text, field=field: parse([(field, text)]), lambda n: fill("a/\u00e9 ", n))
    # The pairs come lazily, as a form parser yields them: the work is what the parser reads, not the split of
    # the whole input into 26,000 pairs before it starts (that list alone measured ratios over 20 under load).
    assert_linear(lambda text: parse((m.group(), "x") for m in re.finditer(r"\S+", text)), lambda n: fill("path ", n))


def test_a_revoke_is_decided_by_the_pages_environment() -> None:
    assert decide_console_revoke("token", "personal", "personal").rule == "console-revoke"
    for other in ("household", None, "Personal"):
        decision = decide_console_revoke("token", other, "personal")
        assert not decision.allowed and decision.rule == "console-revoke-other-environment"
