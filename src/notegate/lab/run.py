"""`notegate lab`: the whole stack on one machine, then the seeds' promises as named PASS/FAIL checks.

What runs, each a real process or a real protocol on loopback:
* the notegate server (`notegate serve`, its own process) with two environments (personal, household);
* the bare origins `notegate init` makes, with the pre-receive hook;
* a model stand-in (OpenAI chat completions, answering from a script) for `notegate review`, run as the cron
  runs it (its own process);
* the phone: the official MCP SDK client doing OAuth with a Client ID Metadata Document (HTTPS stand-in,
  lab CA), session_start, restricted writes and an elevation request;
* the owner: Chromium (Debian's) with a CDP virtual authenticator, enrolling a passkey, approving the
  phone's consent and its elevation in the console;
* a workstation: a git clone under `notegate sync --once`, and a plain git clone pushing to the origin;
* a second person (lab/people.py): invited by the owner, logging in through an OpenID Connect provider run
  on loopback (oidc-provider-mock, the dev extra), connecting an AI client, removed;
* the phone as an Obsidian device (lab/obsidian.py): pouchdb-server, `notegate livesync gate` and `bridge`,
  and PouchDB under Node replicating through the gate with the phone's own key.

The last two are optional parts: where their tools are missing, each prints "SKIP part: why" and the rest runs.

Every check prints one line, "PASS name: detail" or "FAIL name: detail"; the exit status is 1 if any failed.
Details are produced by code (rules, counts, yes/no), never a note's text or a token.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import sys
import tempfile
import time
from pathlib import Path

from notegate.lab import obsidian, people, scenario
from notegate.lab.stack import Checks, Lab, ServerProcess, Shell, build_vault, free_port
from notegate.lab.standins import MetadataHost, ModelStandIn, RedirectCatcher


async def run_lab(base: Path, sh: Shell) -> int:
    from playwright.async_api import async_playwright

    from notegate.lab.browser import CHROMIUM, CHROMIUM_ARGS, Owner

    checks = Checks()
    lab = Lab(base, checks, sh, loop=asyncio.get_running_loop())
    port = free_port()
    started = checks.last = time.monotonic()
    try:
        with (
            ModelStandIn(lab.answer, api_key="lab-model-key") as model,
            MetadataHost(base / "tls") as metadata,
            RedirectCatcher() as redirect,
            contextlib.ExitStack() as optional,
        ):
            tables = _optional_parts(lab, optional)
            lab.config = build_vault(base, port=port, ca=metadata.ca, model_url=model.base_url, tables=tables)
            lab.origin = lab.config.parent / "origin.git"
            _optional_stacks(lab)
            metadata_url = metadata.serve(
                "/oauth/client.json",
                {
                    "client_id": metadata.url("/oauth/client.json"),
                    "client_name": "Lab phone",
                    "redirect_uris": [redirect.url],
                },
            )
            lab.server = ServerProcess(lab.config, port, sh.environ)
            lab.server.spawn()
            try:
                async with async_playwright() as playwright:
                    # the server, Chromium and the enrol link come up side by side
                    browser, link, _ = await asyncio.gather(
                        playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True),
                        asyncio.to_thread(sh.notegate, "owner", "enroll", "--config", str(lab.config)),
                        lab.server.ready(),
                    )
                    lab.browser = browser
                    try:
                        owner = await Owner.open(browser)
                        await owner.enrol(link.stdout.strip())
                        print(
                            f"lab: stack up in {time.monotonic() - started:.1f} s (server, Chromium, passkey enrolled)"
                        )
                        await scenario.play(lab, owner, metadata, metadata_url, redirect)
                    finally:
                        await browser.close()
            finally:
                phone = lab.parts.get("obsidian-phone")
                if hasattr(phone, "stop"):  # its processes, whatever stopped the run before its phase did
                    phone.stop()
                lab.server.stop()
    except Exception as exc:  # the stack did not come up (or a stand-in broke): one FAIL line, by type only
        checks.check("lab-stack-ran", False, f"{type(exc).__name__}; see the lab's serve.log (--keep)")
    elapsed = time.monotonic() - started
    failed = checks.failed
    print(
        f"lab: {len(checks.results) - len(failed)} passed, {len(failed)} failed"
        + (f", {len(lab.skipped)} part(s) skipped" if lab.skipped else "")
        + f" in {elapsed:.1f} s"
        + (f" (failed: {', '.join(failed)})" if failed else "")
    )
    return 1 if failed else 0


def _optional_parts(lab: Lab, optional: contextlib.ExitStack) -> str:
    """Start what the optional parts need before the config is written (the provider's issuer is in it);
    each part that cannot run here is printed as SKIP with the reason. Returns their config tables."""
    tables = ""
    why = people.missing()
    if why:
        lab.skip("second-person", why)
    else:
        lab.parts["second-person"] = issuer = optional.enter_context(people.provider())
        tables += people.config_table(issuer)
    why = obsidian.missing()
    if why:
        lab.skip("obsidian-phone", why)
    else:
        lab.parts["obsidian-phone"] = ports = (free_port(), free_port())
        tables += obsidian.config_table(*ports)
    return tables


def _optional_stacks(lab: Lab) -> None:
    """After the config exists: the provider's client secret beside it, the phone's stack (started later)."""
    assert lab.config is not None
    if "second-person" in lab.parts:
        (lab.config.parent / people.SECRET_FILE).write_text("a-lab-client-secret\n")
    if "obsidian-phone" in lab.parts:
        couch_port, gate_port = lab.parts["obsidian-phone"]
        lab.parts["obsidian-phone"] = obsidian.Stack(lab.base, lab.config, couch_port, gate_port, lab.sh.environ)


def main(directory: str | None, keep: bool, environ: dict[str, str]) -> int:
    """`notegate lab`: ``environ`` is the environment the CLI read (the lab's children inherit it, cleaned)."""
    from notegate.lab.browser import BrowserMissing, require_browser

    # The arguments first, then the machine: a mistake the user can fix in the command line is named even
    # where no browser is installed (and no temporary directory is made for a lab that cannot run).
    if directory and Path(directory).exists() and any(Path(directory).iterdir()):
        print(f"notegate lab: {directory} is not empty; give an empty or new directory", file=sys.stderr)
        return 2
    try:
        require_browser()
    except BrowserMissing as exc:
        print(f"notegate lab: {exc.explain()}", file=sys.stderr)
        return 2
    base = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="notegate-lab-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        return asyncio.run(run_lab(base, Shell.of(environ)))
    finally:
        if keep:
            print(f"lab: kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
