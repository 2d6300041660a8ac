"""The pure parts of attachments: the path parser, the canvas text extractor and the two policy decisions.

Hostile inputs in tables, hypothesis properties (only ``PathRejected`` escapes the parser; what it returns
parses to itself; the canvas extractor is total), the extractor's linear time by tests/support/timing.py's ratio,
and every refusal by its exact rule.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.errors import PathRejected
from notegate.policy import Action, Policy, decide_attachment_read, decide_attachment_write
from notegate.vault.canvas import canvas_text
from notegate.vault.paths import AttachmentPath
from support.callers import make_caller
from support.timing import assert_catches_quadratic, assert_linear

# ------------------------------------------------------------------ paths
GOOD = ["diagram.png", "images/diagram.png", "Projects/Q3 plan.canvas", "a/b/c.PDF", "x.tar.gz"]
BAD = {
    "a.md": "path-not-attachment",  # a note: read_note
    "a.MD": "path-not-attachment",
    "noext": "path-not-attachment",
    "images/": "path-not-attachment",
    ".png": "path-hidden-segment",
    ".obsidian/app.png": "path-hidden-segment",
    "../x.png": "path-traversal",
    "": "path-not-attachment",
}


@pytest.mark.parametrize("raw", GOOD)
def test_attachment_paths_parse_to_themselves(raw: str) -> None:
    assert AttachmentPath.parse(AttachmentPath.parse(raw).value).value == AttachmentPath.parse(raw).value


@pytest.mark.parametrize(("raw", "rule"), BAD.items())
def test_bad_attachment_paths_are_refused_by_their_rule(raw: str, rule: str) -> None:
    with pytest.raises(PathRejected) as refused:
        AttachmentPath.parse(raw)
    assert refused.value.rule == rule


@given(st.text(max_size=80))
def test_only_path_rejected_escapes_and_values_are_fixed_points(raw: str) -> None:
    try:
        value = AttachmentPath.parse(raw).value
    except PathRejected:
        return
    assert AttachmentPath.parse(value).value == value
    assert not value.casefold().endswith(".md") and "." in value.rsplit("/", 1)[-1]


# ------------------------------------------------------------------ canvas
def test_canvas_text_takes_text_nodes_only() -> None:
    doc = {
        "nodes": [
            {"id": "1", "type": "text", "text": "first card"},
            {"id": "2", "type": "file", "file": "secret.png", "text": "not a text node"},
            {"id": "3", "type": "link", "url": "https://example.org"},
            {"id": "4", "type": "text", "text": "second card"},
            {"id": "5", "type": "text", "text": 42},
        ],
        "edges": [{"id": "e", "label": "edge label"}],
    }
    assert canvas_text(json.dumps(doc).encode()) == "first card\n\nsecond card"


@pytest.mark.parametrize(
    "data",
    [b"", b"{", b"[]", b'{"nodes": 3}', b'{"nodes": [1, "x", null]}', b"\xff\xfe", b"[" * 100_000, b"\x89PNG\r\n"],
)
def test_canvas_text_is_total(data: bytes) -> None:
    assert canvas_text(data) == ""


@given(st.binary(max_size=200))
def test_canvas_text_never_raises(data: bytes) -> None:
    assert isinstance(canvas_text(data), str)


def _many_nodes(n: int) -> str:
    node = '{"type":"text","text":"a b c"},'
    return '{"nodes":[' + node * (n // len(node)) + '{"type":"text","text":"z"}]}'


CANVAS_SHAPES = {
    "many-text-nodes": _many_nodes,
    "deep-nesting": lambda n: "[" * n,
    "long-string": lambda n: '{"nodes":[{"type":"text","text":"' + "x" * n + '"}]}',
    "unclosed-string": lambda n: '{"nodes":[{"type":"text","text":"' + "\\u00e9" * (n // 6),
}


@pytest.mark.parametrize("shape", CANVAS_SHAPES)
def test_canvas_text_is_linear(shape: str) -> None:
    build = CANVAS_SHAPES[shape]
    assert_linear(lambda text: canvas_text(text.encode()), build)


def test_the_measure_catches_a_quadratic_extractor_on_these_shapes() -> None:
    assert_catches_quadratic(_many_nodes)


# ------------------------------------------------------------------ decisions
POLICY = Policy()
TRUSTED = make_caller()
RESTRICTED = make_caller(tier="restricted", client_class="hosted", login="phone", client="chat-app")
MACHINE = make_caller(tier="machine", client_class="machine", login="cron", client="cron")


@pytest.mark.parametrize(
    ("caller", "path", "policy", "rule"),
    [
        (TRUSTED, "images/a.png", POLICY, "trusted-write"),
        (TRUSTED, "rules/a.png", POLICY, "protected-trusted"),
        (TRUSTED, "private/a.png", POLICY, "trusted-write"),
        (TRUSTED, "images/a.png", replace(POLICY, attachment_writes=False), "attachment-writes-off"),
        (RESTRICTED, "images/a.png", POLICY, "attachment-write-trusted"),
        (RESTRICTED, "inbox/captures/a.png", POLICY, "attachment-write-trusted"),  # an inbox item stays Markdown
        (RESTRICTED, "private/a.png", POLICY, "no-such-note"),  # visibility first: never "trusted only"
        (RESTRICTED, "private/a.png", replace(POLICY, attachment_writes=False), "no-such-note"),
        (MACHINE, "images/a.png", POLICY, "machine-no-mcp"),
    ],
)
def test_attachment_writes_are_decided_by_their_exact_rule(caller, path, policy, rule) -> None:
    for action in (Action.CREATE, Action.OVERWRITE):
        assert decide_attachment_write(policy, caller, action, AttachmentPath.parse(path)).rule == rule


@pytest.mark.parametrize(
    ("caller", "path", "size", "rule", "allowed"),
    [
        (TRUSTED, "images/a.png", 10, "attachment-read", True),
        (RESTRICTED, "images/a.png", 10, "attachment-read", True),
        (RESTRICTED, "private/a.png", 10, "no-such-note", False),
        (TRUSTED, "private/a.png", 10, "attachment-read", True),
        (TRUSTED, "images/a.html", 10, "file-type-refused", False),
        (TRUSTED, "images/a.png", (20 << 20) + 1, "attachment-too-large", False),
        (MACHINE, "images/a.png", 10, "machine-no-mcp", False),
    ],
)
def test_attachment_reads_are_decided_by_their_exact_rule(caller, path, size, rule, allowed) -> None:
    decision = decide_attachment_read(POLICY, caller, AttachmentPath.parse(path), size)
    assert (decision.rule, decision.allowed) == (rule, allowed)
