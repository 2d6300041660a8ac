"""Security headers on every console answer, the Host check, CSRF and same-origin refusals (exact rules),
and the MCP door still answering on Host localhost:PORT."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator

import httpx2
import pytest

from support.callers import vault_template as _template
from support.web_harness import FETCH, Console, Device, assert_strict, enrolled, serve_console

PAGES = [
    ("GET", "/"),
    ("GET", "/login"),
    ("GET", "/login?next=//evil.example"),
    ("GET", "/enroll/nge_notarealtoken"),
    ("GET", "/passkeys"),
    ("GET", "/oauth/consent?request=x"),
    ("GET", "/static/web/passkeys.js"),
    ("GET", "/static/web/console.css"),
    ("GET", "/static/web/nothing.js"),
    ("POST", "/login/options"),
    ("POST", "/logout"),
    ("POST", "/passkeys/pk_1/revoke"),
]


@pytest.fixture(scope="module")
def page_console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Console]:
    """One console for the header checks below: each sends one request no session or CSRF token backs, so
    none changes what another sees (a fresh server per page only repeated the start-up)."""
    target = tmp_path_factory.mktemp("headers") / "vault"
    shutil.copytree(_template(tmp_path_factory), target, symlinks=True)
    with serve_console(target / "notegate.toml") as served:
        yield served


@pytest.mark.parametrize(("method", "path"), PAGES)
def test_every_answer_carries_the_security_headers(page_console: Console, method: str, path: str) -> None:
    response = httpx2.request(method, f"{page_console.url}{path}", follow_redirects=False)
    assert_strict(response.headers)


def test_pages_in_the_browser_have_the_headers_and_no_inline_script(console: Console, device: Device) -> None:
    violations: list[str] = []
    device.page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    responses = []
    device.page.on("response", lambda r: responses.append(r) if r.url.startswith(console.url) else None)
    enrolled(console, device)
    device.page.goto(f"{console.url}/login")
    assert responses and violations == []
    for response in responses:
        if response.request.is_navigation_request() or response.url.endswith((".js", ".css")):
            assert_strict(response.headers)
    assert "<script>" not in device.page.content()


def test_a_foreign_host_is_refused(console: Console) -> None:
    """By the app's outermost check (doors/hostfirst.py), before the console's own, stricter one."""
    response = httpx2.get(f"http://127.0.0.1:{console.port}/login", headers={"Host": "evil.example"})
    assert response.status_code == 421
    assert response.text.startswith("Refused [host-not-allowed]:")
    # an allowed name on another port gets past the app's check (NAME:*), not the console's (its own port)
    response = httpx2.get(f"http://127.0.0.1:{console.port}/login", headers={"Host": "localhost:1"})
    assert response.status_code == 421
    assert response.text.startswith("Refused [web-host-refused]:")


def test_the_mcp_door_accepts_host_localhost(console: Console) -> None:
    response = httpx2.post(f"{console.url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 401  # the bearer check, not the transport's DNS-rebinding refusal


def _form_post(device: Device, action: str, fields: dict[str, str]) -> str:
    """Submit a real form from the page (what a browser sends), returning the refusal's rule or the URL."""
    device.page.evaluate(
        """([action, fields]) => { const f = document.createElement('form'); f.method = 'post'; f.action = action;
           for (const [k, v] of Object.entries(fields)) { const i = document.createElement('input');
             i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i); }
           document.body.appendChild(f); f.submit(); }""",
        [action, fields],
    )
    device.page.wait_for_load_state("load")
    device.page.wait_for_function("() => document.readyState === 'complete'")
    refusal = device.page.locator("#refusal")
    return refusal.get_attribute("data-rule") if refusal.count() else device.page.url


def test_forms_without_or_with_a_wrong_csrf_token_are_refused(console: Console, device: Device) -> None:
    enrolled(console, device)
    assert _form_post(device, "/logout", {}) == "csrf-missing"
    device.page.goto(f"{console.url}/passkeys")
    assert _form_post(device, "/logout", {"csrf": "A" * 43}) == "csrf-invalid"
    device.page.goto(f"{console.url}/passkeys")
    assert _form_post(device, "/logout", {"csrf": "not a token"}) == "csrf-invalid"
    # another browser's token is wrong here too
    device.page.goto(f"{console.url}/passkeys")
    other = device.page.locator("#ceremony").get_attribute("data-csrf")
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", other)
    assert _form_post(device, "/logout", {"csrf": other[::-1]}) == "csrf-invalid"
    # still logged in after all of that
    device.page.goto(f"{console.url}/passkeys")
    assert device.page.locator("#who").text_content() == "owner"


def test_json_posts_need_the_csrf_header(console: Console, device: Device) -> None:
    enrolled(console, device)
    missing = device.page.evaluate(
        "async () => (await fetch('/passkeys/options', {method: 'POST', body: '{}'})).json()"
    )
    assert missing["rule"] == "csrf-missing"
    wrong = device.page.evaluate(
        "async () => (await fetch('/passkeys/options', {method: 'POST', body: '{}',"
        " headers: {'X-CSRF-Token': 'B'.repeat(43)}})).json()"
    )
    assert wrong["rule"] == "csrf-invalid"
    assert "challenge" in device.page.evaluate(FETCH, ["/passkeys/options", {}])


def test_a_post_from_another_site_is_refused(console: Console, device: Device) -> None:
    enrolled(console, device)
    csrf = device.page.locator("#ceremony").get_attribute("data-csrf")
    cookie = {c["name"]: c["value"] for c in device.context.cookies()}
    response = httpx2.post(
        f"{console.url}/logout",
        data={"csrf": csrf},
        cookies=cookie,
        headers={"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"},
    )
    assert response.status_code == 403 and 'data-rule="origin-mismatch"' in response.text
    response = httpx2.post(
        f"{console.url}/logout", data={"csrf": csrf}, cookies=cookie, headers={"Origin": "https://evil.example"}
    )
    assert 'data-rule="origin-mismatch"' in response.text


def test_an_oversized_form_is_refused_before_it_is_parsed(console: Console) -> None:
    response = httpx2.post(
        f"{console.url}/logout",
        content=b"csrf=" + b"A" * (100 << 10),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert response.status_code == 400 and 'data-rule="web-bad-request"' in response.text
