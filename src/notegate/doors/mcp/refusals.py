"""Refusals become ToolErrors the model can read; their text never reaches the server's log.

Why: an anticipated refusal (a :class:`NotegateError`) must reach the model whole (rule, reason, remedy,
and for a stale write the current revision and diff), or it cannot act on it; any other exception stays
the SDK's generic error, with nothing leaked.  The SDK logs every ToolError's text, and a stale diff is
note contents, so the log keeps only the rule.
"""

from __future__ import annotations

import logging
import re

from mcp.server.mcpserver.exceptions import ToolError

from notegate.errors import NotegateError, StaleRevision


class _RedactToolFailures(logging.Filter):
    """The SDK logs every ToolError's text; ours can carry a stale diff (note contents). Keep only the rule."""

    _RULE = re.compile(r"Refused \[([^\]]+)\]")

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str) and record.msg.startswith("Tool %r failed") and len(record.args or ()) == 2:
            name, text = record.args  # type: ignore[misc]
            match = self._RULE.search(str(text))
            record.args = (name, f"refused [{match.group(1) if match else 'error'}]")
        return True


def install_log_redaction() -> None:
    """Never let a refusal's text (paths are fine, note contents are not) reach the server's log."""
    sdk_logger = logging.getLogger("mcp.server.mcpserver.server")
    if not any(isinstance(f, _RedactToolFailures) for f in sdk_logger.filters):
        sdk_logger.addFilter(_RedactToolFailures())


def refusal(exc: NotegateError) -> ToolError:
    """One readable text per refusal: rule, reason, remedy (and the stale diff, which the caller needs)."""
    text = exc.explain()
    if isinstance(exc, StaleRevision):
        text += f"\ncurrent_revision: {exc.current_revision}\n--- diff from your base to now ---\n{exc.diff}"
    return ToolError(text)
