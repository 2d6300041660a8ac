"""The tools process (issue 32), when ``[tools] url`` is set: does it answer, and is each mount's upstream
serving? A crashed upstream is restarted with backoff by the tools process itself; this says which one is
restarting, which one failed (crashed again and again) and which one holds a tool list waiting for approval.

The per-mount answer needs a ``tools:health`` token minted with the knowledge service's key (the doctor runs as
the server's user, so it reads the same key file); without that key it reports the counts the tools process
tells anyone on loopback."""

from __future__ import annotations

import json
import urllib.request

from notegate.doctor.result import CheckResult, fail, ok, warn

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy
_MAX_BYTES = 1 << 20

#: What the owner should do about an upstream in each state that does not serve.
_REMEDY = {
    "held": "Review the held tool list (`notegate tools approve --pending`, or the console's Tools page) and "
    "approve it; the mount's approved tools serve meanwhile.",
    "restarting": "The tools process restarts it with backoff; if it stays down, run the upstream by hand to see "
    "why, and check its mount's credentials.",
    "failed": "It crashed again and again: run the upstream by hand to see why, check its mount's credentials, "
    "then restart the tools process.",
    "starting": "Wait for its first start (installing a pin may take a minute).",
    "needs-grant": "Connect its upstream account: the console's Tools page, the mount, Connect (or "
    "`notegate tools oauth MOUNT`).",
}


def _minted_token(config) -> str | None:
    try:
        from notegate.state import StateDB
        from notegate.tools.tokens import Minter

        state = StateDB.for_config(config)
        try:
            minter = Minter.existing(state, config.state_dir)
            return minter.mint_health("") if minter is not None else None
        finally:
            state.close()
    except Exception:  # no state, no key: the counts alone
        return None


def check_tools(config, timeout: float = 3.0) -> list[CheckResult]:
    url = config.tools.url
    if not url:
        return []
    token = _minted_token(config)
    request = urllib.request.Request(f"{url}/healthz")  # noqa: S310 - [tools] url is checked http://loopback
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            health = json.loads(response.read(_MAX_BYTES))
    except (OSError, ValueError) as exc:
        return [
            fail(
                "tools.upstreams",
                f"the tools process at {url} does not answer ({type(exc).__name__})",
                "Start it: `notegate tools serve` (or systemctl start notegate-tools), and check [tools] url.",
            )
        ]
    if "upstreams" not in health:
        counts = ", ".join(f"{n} {state}" for state, n in sorted((health.get("mounts") or {}).items())) or "no mount"
        found = f"{health.get('status')}: {counts} (run the doctor as notegate serve's user for each mount)"
        if health.get("status") == "ok":
            return [ok("tools.upstreams", found)]
        return [fail("tools.upstreams", found, _REMEDY["restarting"])]
    results = []
    for mount, upstream in sorted((health.get("upstreams") or {}).items()):
        state = str(upstream.get("state"))
        found = f"{state}, {upstream.get('restarts', 0)} restart(s)"
        if upstream.get("held_tools"):
            found += f", {upstream['held_tools']} tool(s) held for approval"
        if upstream.get("last_refusal"):
            found += f", last cut off [{upstream['last_refusal']}]"
        remedy = _REMEDY.get(state, _REMEDY["restarting"])
        if state == "running":
            results.append(ok("tools.upstreams", found, subject=str(mount)))
        elif state in ("held", "starting", "restarting", "needs-grant"):  # serving, or on its way back by itself
            results.append(warn("tools.upstreams", found, remedy, subject=str(mount)))
        else:
            results.append(fail("tools.upstreams", found, remedy, subject=str(mount)))
    return results or [ok("tools.upstreams", "the tools process answers; no mount")]
