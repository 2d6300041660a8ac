"""One small exception family, converted to a message at each door.

Every error carries a machine-readable ``rule`` (what refused) and a ``remedy``
(what the caller can do instead).  Doors turn them into an MCP ``ToolError``, a
CLI exit status or an HTTP answer; none of them ever carries a token or a
note's contents.  The registry (:mod:`notegate.errors.rules`, re-exported here) gives each rule its remedy
and its HTTP status.

The whole family, with the module each class lives in (a class raised by one layer stays there, so that a
pure module never imports the layer it refuses for; tests/test_exception_family.py checks that every public
exception of the package derives from the one root and is drawn here)::

    NotegateError                       the root: rule, remedy, explain()
    +-- ConfigError                     notegate.toml or the policy is invalid; start-up stops
    +-- PathRejected                    an unsafe or malformed note path
    +-- PolicyDenied                    the policy refuses this caller this action
    +-- NoSuchNote                      absent, or outside the caller's scope (the same answer)
    +-- StaleRevision                   the note changed since the revision the write was based on
    +-- ContentRejected                 a note's text cannot be written as it is
    |   +-- FormatError                 vault.frontmatter: a fixed note format refuses the text
    |       +-- FrontMatterError        vault.frontmatter: YAML front matter outside the safe subset
    +-- GateRejected                    a content gate refused (secrets, instructions, the floor)
    |   +-- OutputGateError             safety.outputgate: a model's answer fails its schema or gates
    +-- OriginUnavailable               the git origin cannot be reached
    +-- OriginRefused                   the origin refused the push
    +-- DiskFull                        too little free space to finish a write
    +-- UnknownEnvironment              no such environment on this server
    +-- AuthError                       a credential cannot be used
    +-- InitError                       notegate init cannot lay out the vault
    +-- Conflict                        vault.storebase: the target exists or moved under the write
    +-- CaseCollision                   vault.storebase: a path differing only in case exists
    +-- CimdRefused                     auth.cimd: a client metadata document is refused
    +-- Refusal                         doors.guard: the door refuses before any tool runs
    +-- BodyTooLarge                    doors.guard: a request body over the door's limit
    +-- ModelError                      models.base: a provider gave no answer
    |   +-- ModelTimeout                models.base: it did not answer in time
    |   +-- ModelRefused                models.base: the model declined
    +-- ModelSkipped                    models.base: the 'none' provider, nothing asked
    +-- ManifestInvalid                 services.backup_manifest: a backup's manifest is unusable
    +-- TomlEditRefused                 setup.tomledit: a client config setup will not edit
    +-- NotAClone                       sync.workclone: the folder is no notegate clone
    +-- BrowserMissing                  lab.browser: the lab's browser is not installed
    +-- ExprError                       vault.baseparse: a Bases expression cannot be parsed or evaluated
    |   +-- Unsupported                 vault.baseparse: Obsidian has it, the console does not evaluate it
    +-- BaseError                       vault.bases: a .base file (YAML) the console cannot read
    +-- DocumentError                   livesync.documents: a LiveSync document the bridge cannot read
    +-- GateRefused                     livesync.gate: the LiveSync gate refuses a device's request
    +-- SettingsError                   hooks.settings: client.toml cannot be used
    +-- HookError                       hooks.mcpclient: a hook's call to the server failed
        +-- Unavailable                 hooks.mcpclient: the server cannot be reached or read
        +-- Refused                     hooks.mcpclient: the server refused (its rule kept)
"""

from __future__ import annotations

from notegate.errors.rules import (
    AUDIENCE_REMEDIES,
    HTTP_STATUS,
    RULE_FAMILIES,
    RULES,
    http_status,
    remedy_for,
    remedy_in,
)

__all__ = [
    "AUDIENCE_REMEDIES",
    "HTTP_STATUS",
    "RULES",
    "RULE_FAMILIES",
    "AuthError",
    "ConfigError",
    "ContentRejected",
    "DiskFull",
    "GateRejected",
    "InitError",
    "NoSuchNote",
    "NotegateError",
    "OriginRefused",
    "OriginUnavailable",
    "PathRejected",
    "PolicyDenied",
    "StaleRevision",
    "UnknownEnvironment",
    "http_status",
    "no_such_note",
    "remedy_for",
    "remedy_in",
    "sentence",
]


def sentence(text: str) -> str:
    """``text`` as one sentence: stripped, with a period added unless it already ends in . ! or ?
    (a trailing , ; or : gives way to the period, so punctuation is never doubled)."""
    text = text.strip()
    if not text or text.endswith((".", "!", "?")):
        return text
    return text.rstrip(",;: ") + "."


class NotegateError(Exception):
    """Base of every anticipated refusal. Raise a subclass, or pass the ``rule``: the registry names it."""

    rule: str = "policy-denied"

    def __init__(self, message: str, *, rule: str | None = None, remedy: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if rule is not None:
            self.rule = rule
        self.remedy = remedy if remedy is not None else remedy_for(self.rule)

    def explain(self) -> str:
        """The text a person or a model reads: what was refused, why, what to do."""
        text = f"Refused [{self.rule}]: {sentence(self.message)}"
        if self.remedy:
            text += f" {sentence(self.remedy)}"
        return text


class ConfigError(NotegateError):
    """The deployment config or policy file is invalid; start-up stops."""

    rule = "config-invalid"


class PathRejected(NotegateError):
    """A note or folder path is unsafe or malformed."""

    rule = "path-invalid"

    def __init__(self, raw: str, rule: str, message: str, *, remedy: str | None = None) -> None:
        super().__init__(
            message,
            rule=rule,
            remedy=remedy or "Use a relative POSIX path inside the vault, made of visible segments, ending in .md.",
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

    def __init__(self, message: str, *, current_revision: str, diff: str, remedy: str | None = None) -> None:
        super().__init__(
            message,
            remedy=remedy
            or "Nothing was written. Read the note again, redo your change on the current text "
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


class DiskFull(NotegateError):
    """A write that cannot be stored: a disk it needs is full, or below the policy's ``min_free_bytes``."""

    rule = "disk-full"


class OriginRefused(NotegateError):
    """The origin moved to a commit the server's fetch refused: a write would have to build on it."""

    rule = "origin-refused"


class UnknownEnvironment(NotegateError):
    rule = "unknown-environment"


class AuthError(NotegateError):
    rule = "unauthenticated"


class InitError(NotegateError):
    """`notegate init` refuses a directory that is not empty."""

    rule = "init-refused"


def no_such_note(path: str, remedy: str | None = None) -> NoSuchNote:
    """The one "no such note" refusal: the same words whether the note is absent or invisible to the caller."""
    return NoSuchNote(f"no such note: {path}", remedy=remedy)
