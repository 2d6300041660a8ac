"""One small exception family, converted to a message at each door.

Every error carries a machine-readable ``rule`` (what refused) and a ``remedy``
(what the caller can do instead).  Doors turn them into an MCP ``ToolError``, a
CLI exit status or an HTTP answer; none of them ever carries a token or a
note's contents.
"""

from __future__ import annotations


class NotegateError(Exception):
    """Base of every anticipated refusal."""

    rule: str = "notegate-error"

    def __init__(self, message: str, *, rule: str | None = None, remedy: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if rule is not None:
            self.rule = rule
        self.remedy = remedy

    def explain(self) -> str:
        """The text a person or a model reads: what was refused, why, what to do."""
        text = f"Refused [{self.rule}]: {self.message}"
        if self.remedy:
            text += f" {self.remedy}"
        return text


class ConfigError(NotegateError):
    """The deployment config or policy file is invalid; start-up stops."""

    rule = "config-invalid"


class PathRejected(NotegateError):
    """A note or folder path is unsafe or malformed."""

    rule = "path-invalid"

    def __init__(self, raw: str, rule: str, message: str) -> None:
        super().__init__(
            message,
            rule=rule,
            remedy="Use a relative POSIX path inside the vault, made of visible segments, ending in .md.",
        )
        self.raw = raw


class PolicyDenied(NotegateError):
    """The policy does not allow this caller to do this."""

    rule = "policy-denied"


class NoSuchNote(NotegateError):
    """The note does not exist, or is outside the caller's visibility (same answer)."""

    rule = "no-such-note"


class StaleRevision(NotegateError):
    """The write was based on a revision that is no longer current."""

    rule = "stale-revision"

    def __init__(self, message: str, *, current_revision: str, diff: str) -> None:
        super().__init__(
            message,
            remedy="Nothing was written. Read the note again, redo your change on the current text "
            "and pass its revision as base_revision.",
        )
        self.current_revision = current_revision
        self.diff = diff


class ContentRejected(NotegateError):
    """The content cannot be stored (not UTF-8, too large, not text)."""

    rule = "content-invalid"


class GateRejected(NotegateError):
    """A safety gate refused content (secrets, unsafe output)."""

    rule = "gate-rejected"


class OriginUnavailable(NotegateError):
    """The origin could not be reached or refused the push; nothing was acknowledged."""

    rule = "origin-unavailable"


class UnknownEnvironment(NotegateError):
    rule = "unknown-environment"


class AuthError(NotegateError):
    rule = "unauthenticated"
