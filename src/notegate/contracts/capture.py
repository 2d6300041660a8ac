"""``capture``: share-sheet text (and an optional URL and title) becomes a new ``inbox/captures/<slug>.md``.

The item is quarantined like a session's capture: it reaches only the inbox, passes the credential gate a
restricted write passes (a machine is never trusted, so a credential is refused outright) and the commit
rules every door's commit meets; a reviewer promotes it, running the floor then.  The key is the sender's
``id``, or else the input itself (the same share sent twice is one capture).
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from notegate.contracts import Plan, PlanContext, PlannedNote
from notegate.services.inbox import slugify

NAME = "capture"
DESCRIPTION = "Share-sheet text (+ optional url and title) -> a new inbox/captures/<slug>.md item."
MAX_BODY_BYTES = 64 << 10
MAX_SUFFIX = 50


def key(value: dict[str, Any]) -> str:
    if "id" in value:
        return value["id"]
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def plan(value: dict[str, Any], ctx: PlanContext) -> Plan:
    text, title, url = value["text"], value.get("title", "").strip(), value.get("url")
    ctx.gates["credentials"](text + ("\n" + title if title else "") + ("\n" + url if url else ""))
    when = datetime.fromtimestamp(ctx.now, UTC)
    stem = slugify(title) or slugify(" ".join(text.split()[:8])) or f"capture-{when:%Y%m%d-%H%M%S}"
    path = ctx.policy.inbox_path("capture", stem)
    for suffix in range(2, MAX_SUFFIX + 2):
        if ctx.read(path) is None:
            break
        path = ctx.policy.inbox_path("capture", f"{stem[:56]}-{suffix}")
    body = (f"# {title}\n\n" if title else "") + text.rstrip() + "\n"
    if url:
        body += f"\nSource: <{url}>\n"
    body += f"\n_Captured by {ctx.caller.client} (capture contract) on {when:%Y-%m-%d %H:%M} UTC._\n"
    return Plan(summary=f"capture {path}", notes=(PlannedNote(path, body, new=True, inbox=True),))
