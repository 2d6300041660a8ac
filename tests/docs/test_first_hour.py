"""The first hour (docs/tutorials/first-hour.md) as a newcomer follows it, from the page itself (issue 34).

The commands come from the page's blocks marked ``first-hour-*`` (tests/support/runnable.py), so a change to the
page that would break a newcomer breaks this test: a fresh ``git clone`` of this checkout, the page's
``make run`` (with ``PORT=N INSTALL=no`` added: a free port, and the suite's own environment linked in as the
clone's ``.venv``, so nothing is built or downloaded; the clone's ``src/`` is what runs), then

* the laptop agent: the page's ``setup claude-code`` and ``claude mcp list`` with the pinned Claude Code CLI
  in a fresh HOME (connected), then its ``claude -p`` against a stand-in model that calls the note tool the
  prompt names: the note is committed and pushed, and the page's ``git log`` shows it;
* the console: the ``first passkey:`` line the server printed gives a link; Chromium, with a virtual
  authenticator, creates the passkey there and is signed in;
* the phone app over OAuth: the OAuth recipe of docs/how-to/sdk-client.md saved as ``phone.py`` and run as
  the page runs it; the person approves its consent in Chromium (already signed in with the passkey); the
  program calls its tools as a hosted, restricted caller and leaves an inbox item; the owner promotes it from
  the console's inbox, and a second run signs in no more.

In the blocks ``http://localhost:8765`` stands for the server's URL. The Claude Code part skips without the
CLI (``make claude-cli``, or NOTEGATE_CLAUDE_CLI) unless NOTEGATE_REQUIRE_CLAUDE_CLI=1; the browser part
without /usr/bin/chromium unless NOTEGATE_REQUIRE_BROWSER=1 (CI sets both). The server is stopped (its
process group, which this module started) however the tests end."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from support import free_port
from support.runnable import the_block

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent  # the environment this suite runs in: installed, nothing downloads
PAGE_URL = "http://localhost:8765"
NOTE_TOOL = "mcp__notegate__write_note"
CLEAN_ENV = ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "PYTHONPATH", "BROWSER", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY")


@dataclass
class FirstHour:
    clone: Path
    url: str
    port: int
    log: Path

    def block(self, kind: str) -> str:
        """The page's block, aimed at this server."""
        code = the_block(kind)
        return code.replace(PAGE_URL, self.url)

    def env(self, home: Path, path: str = "/usr/local/bin:/usr/bin:/bin", **extra: str) -> dict[str, str]:
        """A newcomer's shell in the clone: a HOME of its own, and the clone's code behind ``.venv/bin`` (as
        ``make run INSTALL=no`` serves it)."""
        env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV and not k.startswith(("NOTEGATE_", "XDG_"))}
        return {
            **env,
            "HOME": str(home),
            "PATH": path,
            "LANG": "C.UTF-8",
            "PYTHONPATH": str(self.clone / "src"),
            **extra,
        }


def _stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the process group this module started (make and the server under it), then wait."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


@pytest.fixture(scope="module")
def first_hour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FirstHour]:
    root = tmp_path_factory.mktemp("first-hour")
    clone = root / "notegate"
    cloned = subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], capture_output=True, text=True)
    assert cloned.returncode == 0, cloned.stderr
    (clone / ".venv").symlink_to(VENV)
    serve = the_block("first-hour-serve").strip()
    assert serve == "make run", f"the first hour starts with {serve!r}: teach this test how to run it"
    port = free_port()
    url = f"http://localhost:{port}"
    log = root / "make-run.log"
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [*shlex.split(serve), f"PORT={port}", "INSTALL=no"],
            cwd=clone,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**env, "PYTHONUNBUFFERED": "1", "LANG": "C.UTF-8"},
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while f"notegate is serving MCP at {url}/mcp" not in log.read_text() or "notegate.events: start" not in (
            log.read_text()
        ):
            assert proc.poll() is None, f"make run exited {proc.returncode}:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"make run did not start in 90 s:\n{log.read_text()[-3000:]}"
            time.sleep(0.05)
        yield FirstHour(clone=clone, url=url, port=port, log=log)
    finally:
        _stop(proc)


def test_the_banner_prints_one_enrol_command_and_it_names_the_port(first_hour: FirstHour) -> None:
    """Step 2 says: run the enrol line it printed. On another port than the config's (make run PORT=N) the
    server once printed the command twice, once without --port: that copy's link pointed where nothing served."""
    commands = re.findall(r"\S*notegate owner enroll[^\n)]*", first_hour.log.read_text())
    assert len(commands) == 1, commands
    assert commands[0].endswith(f" --port {first_hour.port}"), commands


# ------------------------------------------------------------------ the laptop agent: Claude Code
@pytest.fixture(scope="module")
def claude() -> Path:
    explicit = os.environ.get("NOTEGATE_CLAUDE_CLI", "")
    path = Path(explicit) if explicit else REPO / ".tools" / "node_modules" / ".bin" / "claude"
    if not path.exists():
        message = "Claude Code CLI not installed; run: make claude-cli"
        if os.environ.get("NOTEGATE_REQUIRE_CLAUDE_CLI") == "1":
            pytest.fail(message + " (NOTEGATE_REQUIRE_CLAUDE_CLI=1 requires it)")
        pytest.skip(message)
    return path


def test_claude_code_connects_and_its_note_is_committed(first_hour: FirstHour, claude: Path, tmp_path: Path) -> None:
    from support.claude_standin import ClaudeStandIn

    home = tmp_path / "home"
    home.mkdir()
    env = first_hour.env(
        home,
        path=f"{claude.parent}:/usr/local/bin:/usr/bin:/bin",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
    )

    def page(kind: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "-e", "-c", first_hour.block(kind)],
            cwd=first_hour.clone,
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=180,
            stdin=subprocess.DEVNULL,
        )

    connected = page("first-hour-claude")
    assert connected.returncode == 0, connected.stdout + connected.stderr
    assert "ran:           claude mcp add --scope user --transport http notegate" in connected.stdout
    assert "nothing answers" not in connected.stdout  # setup found the server at the page's URL
    assert f"notegate: {first_hour.url}/mcp (HTTP) - ✔ Connected" in connected.stdout, connected.stdout

    # The model is a stand-in: it calls the note tool for the path the page's prompt names, as a model would.
    [path] = re.findall(r"notes/[\w.-]+\.md", the_block("first-hour-agent"))
    call = {"path": path, "content": "The first hour works.\n", "base_revision": "absent", "confirmed": True}
    with ClaudeStandIn({}, tool_calls=[(NOTE_TOOL, call)]) as model:
        agent = page("first-hour-agent", ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-standin")
        [result] = model.tool_results()
        first = json.dumps(model.streamed()[0])
    assert agent.returncode == 0, agent.stdout + agent.stderr
    assert not result["is_error"], result["text"]
    assert json.loads(result["text"])["status"] == "committed"
    assert "[notegate: quoted data (rules digest from rules/digest.md)" in first  # the plugin's SessionStart
    assert re.search(rf"^[0-9a-f]{{7,}} create {re.escape(path)}$", agent.stdout, re.M), agent.stdout


# ------------------------------------------------------------------ the phone itself: a public name
def test_the_public_name_lines_change_the_demo_config_and_the_server_names_itself_by_them(vault: Path) -> None:
    """Step 4's TOML, applied as the page says (the lines are already under [server]: change them): the config
    loads, the enrol line prints a link under the public name (the passkey from step 2 belongs to localhost),
    and the server, reached through the proxy under that name, binds OAuth to it."""
    import asyncio
    import io
    import tomllib
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import redirect_stdout

    import httpx2

    from notegate.cli import main
    from notegate.config import SERVER_SETTINGS, load_config
    from notegate.doors.http import create_app
    from notegate.services.runtime import Runtime

    settings = tomllib.loads(the_block("first-hour-public"))
    assert set(settings) <= {setting.name for setting in SERVER_SETTINGS}, settings
    text = vault.read_text()
    server_table = text[text.index("[server]\n") : text.index("\n[", text.index("[server]\n") + 1)]
    for key in settings:
        [line] = [ln for ln in server_table.splitlines() if ln.split("=")[0].strip() == key]  # already there
        rendered = next(ln for ln in the_block("first-hour-public").splitlines() if ln.startswith(f"{key} ="))
        text = text.replace(f"\n{line}\n", f"\n{rendered}\n", 1)
    vault.write_text(text)
    config = load_config(vault)
    public = settings["public_url"]
    assert config.public_url == public and set(settings["trusted_proxies"]) <= set(config.trusted_proxies)

    printed = io.StringIO()
    with redirect_stdout(printed):  # the enrol command, in this process (a second interpreter costs seconds)
        assert main(["owner", "enroll", "--config", str(vault)]) == 0
    assert printed.getvalue().strip().startswith(f"{public}/enroll/nge_"), printed.getvalue()

    runtime = Runtime(config)
    try:
        app = create_app(runtime, host="127.0.0.1", port=config.port)

        async def ask(path: str) -> dict:
            transport = httpx2.ASGITransport(app=app)
            async with httpx2.AsyncClient(transport=transport, base_url=public) as client:
                answer = await client.get(path, headers={"X-Forwarded-For": "203.0.113.9"})
                assert answer.status_code == 200, answer.text
                return answer.json()

        with ThreadPoolExecutor(1) as pool:  # a loop of its own: a browser test's may be marked running here
            resource = pool.submit(asyncio.run, ask("/.well-known/oauth-protected-resource/mcp")).result()
            issuer = pool.submit(asyncio.run, ask("/.well-known/oauth-authorization-server")).result()
    finally:
        runtime.close()
    assert resource["resource"] == f"{public}/mcp" and resource["authorization_servers"] == [public]
    assert issuer["issuer"] == public and issuer["authorization_endpoint"] == f"{public}/authorize"


# ------------------------------------------------------------------ the console and the phone app over OAuth
@pytest.fixture(scope="module")
def browser():
    """Debian's chromium, for this module only: Playwright's sync API leaves its loop marked running on the
    main thread until it is torn down (see tests/web/conftest.py)."""
    from support.web_harness import CHROMIUM, CHROMIUM_ARGS

    if not Path(CHROMIUM).exists():
        if os.environ.get("NOTEGATE_REQUIRE_BROWSER"):
            pytest.fail(f"NOTEGATE_REQUIRE_BROWSER is set but {CHROMIUM} is missing (apt-get install chromium)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield chromium
        finally:
            chromium.close()


def test_the_phone_app_signs_in_over_oauth_and_the_owner_promotes_its_item(
    first_hour: FirstHour, browser, tmp_path: Path
) -> None:
    from support.web_harness import Device

    home = tmp_path / "home"
    home.mkdir()
    env = first_hour.env(home, BROWSER="true")  # webbrowser runs `true URL`: the person's browser is Chromium
    url = first_hour.url

    # step 2: the enrol line the server printed, pasted; the link opened where the passkey will live
    [line] = re.findall(r"first passkey: (.+)", first_hour.log.read_text())
    enrol = subprocess.run(shlex.split(line), capture_output=True, text=True, cwd=first_hour.clone, env=env, timeout=60)
    assert enrol.returncode == 0, enrol.stderr
    link = enrol.stdout.strip()
    assert link.startswith(f"{url}/enroll/nge_"), link
    device = Device(browser)
    try:
        assert device.enrol(link, name="laptop") == "ok"
        device.page.goto(f"{url}/")
        assert "signed in as owner" in device.page.locator("body").inner_text()

        # step 4: the OAuth recipe saved as phone.py, run as the page runs it
        (first_hour.clone / "phone.py").write_text(the_block("python-oauth"))
        phone = first_hour.block("first-hour-phone")
        run = subprocess.Popen(
            ["sh", "-e", "-c", phone], cwd=first_hour.clone, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            assert run.stdout is not None
            said = run.stdout.readline()
            assert said.startswith(f"Sign in: {url}/authorize?"), said + (run.stderr.read() if run.stderr else "")
            page = device.page
            page.goto(said.removeprefix("Sign in: ").strip())
            assert page.url.startswith(f"{url}/oauth/consent?request="), page.url
            assert page.locator("#client-name").text_content() == "“my notes script”"
            assert "unverified" in (page.locator("#unverified").text_content() or "")
            page.click("#approve")
            page.wait_for_url("http://127.0.0.1:*/callback?**", timeout=60_000)
            assert page.locator("body").text_content() == "Signed in: you can close this tab."
            out, err = run.communicate(timeout=120)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        assert run.returncode == 0, err[-3000:]
        printed = out.split()
        assert printed and printed[-1] == "inbox/log/phone.md", out  # hosted and restricted: the inbox
        kept = json.loads((home / ".config" / "notegate" / "oauth.json").read_text())
        assert kept["tokens"]["access_token"].startswith("nga_")

        # step 5: the owner promotes it from the console's inbox
        page.goto(f"{url}/inbox")
        item = page.locator('section.item[data-path="inbox/log/phone.md"]')
        assert "my notes script" in (item.locator(".authors").text_content() or "")
        item.locator("button.promote").click()
        page.wait_for_load_state()
        assert page.locator("#done").get_attribute("data-action") == "promote"
    finally:
        device.close()
    origin = first_hour.clone / "var" / "demo" / "origin.git"
    promoted = subprocess.run(
        ["git", "--git-dir", str(origin), "show", "HEAD:log/phone.md"], capture_output=True, text=True
    )
    assert "Bought the oat milk." in promoted.stdout, promoted.stdout + promoted.stderr

    # the program kept its token: a second run asks for no sign-in
    again = subprocess.run(
        ["sh", "-e", "-c", phone], cwd=first_hour.clone, env=env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Sign in:" not in again.stdout and again.stdout.split()[-1] == "inbox/log/phone.md"
