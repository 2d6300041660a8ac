"""The documentation's Python clients (docs/how-to/sdk-client.md, the blocks marked ``runnable: python-token``
and ``python-oauth``) run as written, against a real `notegate serve` (a newcomer copies them)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from support import mint, running
from support.runnable import the_block


def the_python_block() -> str:
    return the_block("python-token")


def test_the_readme_client_connects_starts_a_session_and_searches(vault: Path, tmp_path: Path) -> None:
    token = mint(vault, name="script", client_class="workstation")
    script = tmp_path / "client.py"
    script.write_text(the_python_block())
    with running(vault) as server:
        env = {**os.environ, "NOTEGATE_URL": server.url, "NOTEGATE_TOKEN": token}
        result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    printed = result.stdout.split()
    assert printed and all(path.endswith(".md") for path in printed), result.stdout


def the_oauth_block() -> str:
    return the_block("python-oauth")


def test_the_readme_oauth_client_signs_in_keeps_its_token_and_searches(vault: Path, tmp_path: Path) -> None:
    """The OAuth recipe as written: it prints the sign-in URL (webbrowser opens nothing here: BROWSER is a
    no-op), the test plays the person approving on the consent page, the browser's return reaches the
    script's loopback page; a second run reuses the stored token and asks for no sign-in."""
    import httpx2

    from support.oauth import backend

    script = tmp_path / "oauth_client.py"
    script.write_text(the_oauth_block())
    store = tmp_path / "oauth.json"
    with running(vault) as server:
        env = {
            **os.environ,
            "NOTEGATE_URL": server.url,
            "NOTEGATE_OAUTH_FILE": str(store),
            "BROWSER": "true",  # webbrowser runs `true URL`: the person's browser is this test
        }
        first = subprocess.Popen(
            [sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        assert first.stdout is not None
        line = first.stdout.readline()
        assert line.startswith("Sign in: "), line + (first.stderr.read() if first.stderr else "")
        authorize = line.removeprefix("Sign in: ").strip()
        consent = httpx2.get(authorize, follow_redirects=False).headers["location"]
        request_id = parse_qs(urlsplit(consent).query)["request"][0]
        back = backend(vault, server.url).approve(request_id, person="owner", now=time.time())
        assert httpx2.get(back).status_code == 200  # the browser lands on the script's loopback page
        out, err = first.communicate(timeout=120)
        assert first.returncode == 0, err[-3000:]
        assert all(path.endswith(".md") for path in out.split()), out
        assert store.stat().st_mode & 0o077 == 0 and "refresh_token" in store.read_text()
        second = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0, second.stderr[-3000:]
    assert "Sign in:" not in second.stdout
