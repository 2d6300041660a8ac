"""A credential in an upstream's result never reaches the caller: redacted in text, structured content that
holds one dropped, every kind named (for the audit). A property over any text around real-looking tokens."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from mcp_types import CallToolResult, TextContent

from notegate.safety.secrets import scan_credentials
from notegate.tools.app import redact
from support.upstreams import LEAKED

SECRETS = [LEAKED, "AKIAIOSFODNN7EXAMPLE", "sk-ant-api03-" + "a1B2" * 20]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=30), st.sampled_from(SECRETS)), max_size=6))
def test_no_credential_the_scanner_finds_survives_redaction(pieces: list[str]) -> None:
    text = " ".join(pieces)
    result = CallToolResult(content=[TextContent(type="text", text=text)], structured_content={"v": text})
    cleaned, kinds = redact(result)
    found = scan_credentials(text)
    out = cleaned.content[0].text
    for hit in found:
        assert text[hit.start : hit.end] not in out
    assert sorted({f.kind for f in found}) == kinds
    assert (cleaned.structured_content is None) == bool(found)
    assert not scan_credentials(out.replace("[redacted:", "[").replace("]", " "))
