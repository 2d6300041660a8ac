"""Any path a browser can send to the notes pages gets a page or a named refusal, never a crash: the pages
hand paths to the notes service's parsers (NotePath, FolderPath, AttachmentPath) and nothing else."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.callers import vault_template as _template
from support.web_harness import Console, serve_console
from support.web_notes import Signed, sign_in


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Console, Signed]]:
    target = tmp_path_factory.mktemp("paths") / "vault"
    shutil.copytree(_template(tmp_path_factory), target, symlinks=True)
    with serve_console(target / "notegate.toml") as console:
        yield console, sign_in(console)


SEGMENTS = st.one_of(
    st.sampled_from(["..", ".", "", ".obsidian", ".git", "private", "rules", "CLAUDE.md", "a.md", "x.png", "e.svg"]),
    st.text(min_size=1, max_size=12),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    route=st.sampled_from(["/notes/", "/history/", "/edit/", "/files/"]),
    segments=st.lists(SEGMENTS, min_size=1, max_size=4),
)
def test_any_path_is_a_page_or_a_named_refusal(signed: tuple[Console, Signed], route: str, segments: list[str]) -> None:
    _, owner = signed
    raw = "/".join(segments)
    response = owner.client.get(route + quote(raw, safe="/"))
    assert response.status_code < 500, (raw, response.status_code)
    if response.status_code >= 400 and response.url.path.startswith(route):  # ("a/../.." leaves the route)
        assert re.search(r'id="refusal" data-rule="[a-z0-9-]+"', response.text), (raw, response.text[:300])


@pytest.mark.parametrize("path", ["/notes/%0A0", "/history/a%0A.md", "/edit/x%0D%0Ay.md", "/files/a%0A.png"])
def test_a_path_holding_a_line_break_is_refused_by_name(signed: tuple[Console, Signed], path: str) -> None:
    """Starlette's ``{path:path}`` stops at a newline, so such a path once matched no route at all (a bare
    404); the notes routes take any character and hand it to the path parser, which refuses it by name."""
    _, owner = signed
    response = owner.client.get(path)
    assert 400 <= response.status_code < 500
    assert re.search(r'id="refusal" data-rule="[a-z0-9-]+"', response.text), response.text[:300]
