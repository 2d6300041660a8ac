"""The tools process (issue 32), when ``[tools] url`` is set: does it answer, and is each mount's upstream up?
A crashed upstream is restarted with backoff by the tools process itself; this says which one is down."""

from __future__ import annotations

import json
import urllib.request

from notegate.doctor.result import CheckResult, fail, ok

_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy


def check_tools(config, timeout: float = 3.0) -> list[CheckResult]:
    url = config.tools.url
    if not url:
        return []
    try:
        with _OPENER.open(f"{url}/healthz", timeout=timeout) as response:
            health = json.loads(response.read(1 << 20))
    except (OSError, ValueError) as exc:
        return [
            fail(
                "tools.upstreams",
                f"the tools process at {url} does not answer ({type(exc).__name__})",
                "Start it: `notegate tools serve` (or systemctl start notegate-tools), and check [tools] url.",
            )
        ]
    results = []
    for mount, upstream in sorted((health.get("upstreams") or {}).items()):
        found = f"{upstream.get('status')}, {upstream.get('restarts', 0)} restart(s)"
        if upstream.get("status") == "up":
            results.append(ok("tools.upstreams", found, subject=str(mount)))
        else:
            results.append(
                fail(
                    "tools.upstreams",
                    found,
                    "The tools process restarts it with backoff; if it stays down, run the upstream by hand to see "
                    "why, and check its mount's credentials.",
                    subject=str(mount),
                )
            )
    return results or [ok("tools.upstreams", "the tools process answers; no mount")]
