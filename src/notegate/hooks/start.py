"""``notegate hook session-start``: load the shared memory into a new session, fenced as data.

The server does the work (``session_start`` reads the rules digest, the project's handoff and the
summary's "Context to resume", fences each as quoted data and combines them with the inbox count
and a branch note into one ``context``, which carries each part once); this module only finds the
project and branch, makes one call and prints
Claude Code's SessionStart output::

    {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "<context>"}}

Codex accepts the same output for its SessionStart hook.  When the server is down or refuses,
nothing is printed (the session starts without memory) and one line goes to stderr.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, TextIO

from notegate.hooks.mcpclient import call_tool
from notegate.hooks.project import Place
from notegate.hooks.settings import HookSettings
from notegate.vault.fence import HANDOFF_LEAD, OWNER_AND_DATA, RULES_LEAD, quoted_blocks, shorten_fenced

#: The most characters injected as ``additionalContext`` (Claude Code cuts longer hook output to a preview).
CONTEXT_BUDGET = 10_000
#: Share of the budget the rules digest may take before it is cut (inside its fence) too.
DIGEST_SHARE = 0.6
_HANDLE = re.compile(r"ngs_[A-Za-z0-9_-]{20,100}\Z")


def _quotes(context: object) -> dict[str, str]:
    """The server's fenced parts, cut from its ``context`` (the first quote of each label); the lines
    between them are not kept, so nothing a server printed outside a fence reaches the fallback."""
    if not isinstance(context, str):
        return {}
    found: dict[str, str] = {}
    for label, quote in quoted_blocks(context):
        found.setdefault(label, quote)
    return found


def compose_context(result: Mapping[str, Any], branch: str | None, *, budget: int = CONTEXT_BUDGET) -> str:
    """The text to inject, within ``budget`` characters.

    The server's combined ``context`` when it fits.  Otherwise one built here from the fenced parts
    cut out of that ``context`` (the server sends each part once, inside it): the rules digest
    always goes in, introduced as the owner's rules (cut inside its fence only if it alone would
    take more than :data:`DIGEST_SHARE` of the budget), then the handoff and the context to resume,
    each cut inside its fence to what is left; outside the fences only fixed sentences and values
    code checked (yes/no, a count).  ``branch`` is not printed: the server compared it.
    """
    context = result.get("context")
    if isinstance(context, str) and context.strip() and len(context) <= budget:
        return context
    quotes = _quotes(context)
    count = result.get("inbox_count")
    tail = []
    if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
        tail.append(f"Inbox: {count} {'item' if count == 1 else 'items'} waiting for review.")
    handle = result.get("handle")
    if isinstance(handle, str) and _HANDLE.match(handle) and isinstance(context, str) and handle in context:
        tail.append(f"Your session handle is {handle} — pass it as `handle` to every other notegate tool.")
    parts = [OWNER_AND_DATA]
    left = budget - len(OWNER_AND_DATA) - sum(len(t) + 2 for t in tail)
    digest = quotes.get("rules digest")
    if digest is not None:
        digest = shorten_fenced(digest, max(600, min(len(digest), int(budget * DIGEST_SHARE))))
        parts += [RULES_LEAD, digest]
        left -= len(digest) + len(RULES_LEAD) + 4
    handoff = quotes.get("last handoff")
    if handoff is not None:
        same = result.get("handoff_on_your_branch")
        lead = HANDOFF_LEAD + (f" (on your branch: {'yes' if same else 'no'}):" if isinstance(same, bool) else ":")
        room = left - len(lead) - 4
        if room >= 600:
            parts += [lead, shorten_fenced(handoff, room)]
            left -= len(parts[-1]) + len(lead) + 4
        else:
            parts.append("The last handoff did not fit in the hook's budget: read this project's handoff note.")
    resume = quotes.get("context to resume")
    if resume is not None and left >= 600:
        parts.append(shorten_fenced(resume, left - 2))
    return "\n\n".join(parts + tail)


def start_arguments(place: Place) -> dict[str, str]:
    args: dict[str, str] = {}
    if place.project:
        args["project"] = place.project
    if place.branch:
        args["branch"] = place.branch
    return args


def run_session_start(
    payload: Mapping[str, Any], settings: HookSettings, place: Place, stdout: TextIO, *, timeout: float
) -> None:
    """One ``session_start`` call, then the SessionStart JSON on stdout.  Raises HookError on failure."""
    session = payload.get("session_id") if isinstance(payload.get("session_id"), str) else None
    result = call_tool(
        settings.url, settings.token, "session_start", start_arguments(place), timeout=timeout, session=session
    )
    output = {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": compose_context(result, place.branch),
        }
    }
    stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
    stdout.flush()
