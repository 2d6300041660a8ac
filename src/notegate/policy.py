"""Pure decisions: may this caller do this action to this path?

Theory of operation
-------------------
* Every door and service asks here; nothing decides tiers or path classes anywhere else.
* Decisions are values (:class:`Decision`) carrying the rule's name and a reason a model can act on.
  The last branch of every decision denies: a case nobody thought of is refused, not allowed.
* Path classes come from globs in the policy file (matched case-insensitively, so ``PRIVATE/x.md`` is as
  private as ``private/x.md``); code holds no path constants.
* This module does no I/O: the policy table is parsed by :func:`policy_from_table` from the already
  loaded TOML, and the clock is a parameter where time matters.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

from notegate.errors import ConfigError
from notegate.safety.floor import DEFAULT_INSTRUCTION_FILES, validate_instruction_files
from notegate.settings import Setting as PolicySetting
from notegate.settings import check_table

MAX_NOTE_BYTES = 1 << 20
FETCH_INTERVAL_SECONDS = 5.0
REPACK_LOOSE_OBJECTS = 2000
PREVIEW_TTL_SECONDS = 1800

NOTICE_INTERVAL_SECONDS = 900
SESSION_IDLE_SECONDS = 12 * 3600
DEFAULT_INBOX = {
    "handoff": "inbox/handoffs/{project}.md",
    "log": "inbox/log/{project}.md",
    "decision": "inbox/decisions/{project}.md",
    "capture": "inbox/captures/{slug}.md",
}
DEFAULT_ROUTES = {
    "handoff": "handoffs/{project}.md",
    "log": "log/{project}.md",
    "decision": "design/{project}.md",
    "capture": "",
}
SLUG = r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?"
_SLUG_RE = re.compile(rf"{SLUG}\Z")
_TEMPLATE = re.compile(r"^((?:[a-z0-9_-]+/)+)\{(project|slug)\}\.md$")

TIERS = ("restricted", "trusted", "machine")
CLIENT_CLASSES = ("hosted", "workstation", "machine")


class Action(StrEnum):
    READ = "read"
    LIST = "list"
    SEARCH = "search"
    HISTORY = "history"
    CREATE = "create"
    OVERWRITE = "overwrite"
    APPEND = "append"
    MOVE = "move"
    DELETE = "delete"
    RESTORE = "restore"


READ_ACTIONS = frozenset({Action.READ, Action.LIST, Action.SEARCH, Action.HISTORY})


@dataclass(frozen=True)
class Caller:
    """Who makes a request. Decided from credentials by the door, never from what a caller writes."""

    login: str
    display_name: str
    client: str
    client_class: str
    tier: str
    session: str = "-"
    environment: str | None = None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: str
    reason: str


def allow(rule: str, reason: str = "") -> Decision:
    return Decision(True, rule, reason)


def deny(rule: str, reason: str) -> Decision:
    return Decision(False, rule, reason)


# ------------------------------------------------------------------ globs
@lru_cache(maxsize=512)
def _glob_regex(glob: str) -> re.Pattern[str]:
    """``**`` spans segments, ``*`` and ``?`` stay inside one segment; matched case-insensitively."""
    out = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append(r"(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(r".*")
            i += 2
        elif glob[i] == "*":
            out.append(r"[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append(r"[^/]")
            i += 1
        else:
            out.append(re.escape(glob[i].casefold()))
            i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def glob_match(glob: str, path: str) -> bool:
    """NFC and case-folded first: a decomposed or upper-case spelling of a private path is just as private."""
    return (
        _glob_regex(unicodedata.normalize("NFC", glob)).match(unicodedata.normalize("NFC", path).casefold()) is not None
    )


def any_match(globs: Iterable[str], path: str) -> bool:
    return any(glob_match(g, path) for g in globs)


def folder_could_hold(globs: Iterable[str], folder: str) -> bool:
    """True when some note inside ``folder`` could match one of ``globs`` (used to hide whole folders)."""
    probe = f"{folder}/x.md" if folder else "x.md"
    return any_match(globs, probe)


# ----------------------------------------------------------------- policy
POLICY_SETTINGS: tuple[PolicySetting, ...] = (  # the keys of [policy]
    PolicySetting("private", list, ["private/**"], "Globs of notes invisible to restricted callers."),
    PolicySetting(
        "protected", list, ["rules/**"], "Globs only trusted callers may change, always through a two-step write."
    ),
    PolicySetting("max_note_bytes", int, MAX_NOTE_BYTES, "Largest note accepted, in bytes of UTF-8."),
    PolicySetting(
        "two_step_classes", list, ["hosted"], "Client classes whose writes must be previewed before confirming."
    ),
    PolicySetting(
        "fetch_interval_seconds", (int, float), FETCH_INTERVAL_SECONDS, "How often the server fetches the origin."
    ),
    PolicySetting(
        "repack_loose_objects", int, REPACK_LOOSE_OBJECTS, "Repack the server's clone past this many loose objects."
    ),
    PolicySetting("preview_ttl_seconds", int, PREVIEW_TTL_SECONDS, "How long a two-step preview may be confirmed."),
    PolicySetting(
        "instruction_files",
        list,
        list(DEFAULT_INSTRUCTION_FILES),
        "Names of files agents load as instructions; the floor holds any inbox item naming one.",
    ),
    PolicySetting(
        "inbox", dict, dict(DEFAULT_INBOX), "Inbox kinds and the item path each writes (restricted callers)."
    ),
    PolicySetting(
        "inbox_reserved", list, ["inbox/_held.md", "inbox/README.md"], "Inbox files no restricted caller may touch."
    ),
    PolicySetting("routes", dict, dict(DEFAULT_ROUTES), "Where a promoted item of each kind goes ('' = no route)."),
    PolicySetting(
        "protected_from_routes",
        list,
        ["rules/**", "private/**", "inbox/**"],
        "Globs no route may ever reach (checked at start and again at every promotion).",
    ),
    PolicySetting("two_step_inbox", bool, False, "Whether inbox writes (create/append only) need a preview too."),
    PolicySetting("notice_interval_seconds", int, NOTICE_INTERVAL_SECONDS, "Repeat the inbox notice after this long."),
    PolicySetting(
        "session_gate_classes",
        list,
        ["hosted"],
        "Client classes that must call session_start and pass its handle to every knowledge tool.",
    ),
    PolicySetting(
        "session_idle_seconds", int, SESSION_IDLE_SECONDS, "A session handle expires after this long unused."
    ),
    PolicySetting("digest_path", str, "rules/digest.md", "The rules digest injected at session start."),
    PolicySetting("review_batch_size", int, 20, "Inbox items per model call of the scheduled reviewer."),
    PolicySetting(
        "reflect_state_path", str, "sessions/reflector-state.md", "Where the reflector writes the session state."
    ),
    PolicySetting(
        "reflect_min_interval_seconds", int, 300, "The reflector skips a run started sooner than this after the last."
    ),
)


@dataclass(frozen=True)
class InboxItemRef:
    kind: str
    key: str  # the project (or the capture's slug)
    path: str


@lru_cache(maxsize=64)
def _template_regex(template: str) -> re.Pattern[str]:
    prefix, _, suffix = template.partition("{")
    _, _, rest = suffix.partition("}")
    return re.compile(re.escape(prefix) + f"({SLUG})" + re.escape(rest) + r"\Z")


def _fill(template: str, key: str) -> str:
    return re.sub(r"\{(?:project|slug)\}", key, template)


def is_slug(value: str) -> bool:
    return bool(_SLUG_RE.match(value))


@dataclass(frozen=True)
class Policy:
    private: tuple[str, ...] = ("private/**",)
    protected: tuple[str, ...] = ("rules/**",)
    max_note_bytes: int = MAX_NOTE_BYTES
    two_step_classes: tuple[str, ...] = ("hosted",)
    fetch_interval_seconds: float = FETCH_INTERVAL_SECONDS
    repack_loose_objects: int = REPACK_LOOSE_OBJECTS
    preview_ttl_seconds: int = PREVIEW_TTL_SECONDS
    instruction_files: tuple[str, ...] = DEFAULT_INSTRUCTION_FILES
    inbox: tuple[tuple[str, str], ...] = tuple(DEFAULT_INBOX.items())
    inbox_reserved: tuple[str, ...] = ("inbox/_held.md", "inbox/README.md")
    routes: tuple[tuple[str, str], ...] = tuple(DEFAULT_ROUTES.items())
    protected_from_routes: tuple[str, ...] = ("rules/**", "private/**", "inbox/**")
    two_step_inbox: bool = False
    notice_interval_seconds: int = NOTICE_INTERVAL_SECONDS
    session_gate_classes: tuple[str, ...] = ("hosted",)
    session_idle_seconds: int = SESSION_IDLE_SECONDS
    digest_path: str = "rules/digest.md"
    review_batch_size: int = 20
    reflect_state_path: str = "sessions/reflector-state.md"
    reflect_min_interval_seconds: int = 300

    # ---------------------------------------------------------- path classes
    def is_private(self, path: str) -> bool:
        return any_match(self.private, path)

    def is_protected(self, path: str) -> bool:
        return any_match(self.protected, path)

    @property
    def inbox_root(self) -> str:
        return "inbox"

    def is_inbox(self, path: str) -> bool:
        """Anything under inbox/ (compared case-insensitively, so INBOX/x.md is not a way around it)."""
        return path.casefold().startswith(self.inbox_root + "/")

    def is_reserved(self, path: str) -> bool:
        return any(path.casefold() == r.casefold() for r in self.inbox_reserved)

    def inbox_item(self, path: str) -> InboxItemRef | None:
        """Which inbox kind ``path`` is an item of (exact template match, lowercase slug), else None."""
        for kind, template in self.inbox:
            match = _template_regex(template).match(path)
            if match:
                return InboxItemRef(kind=kind, key=match.group(1), path=path)
        return None

    def inbox_path(self, kind: str, key: str) -> str:
        template = dict(self.inbox).get(kind)
        if template is None:
            raise ValueError(kind)
        return _fill(template, key)

    def route_template(self, kind: str) -> str:
        return dict(self.routes).get(kind, "")

    def names_instruction_file(self, path: str) -> bool:
        """Is the path's file name an instruction file's name (case-insensitively)? The floor adds look-alikes."""
        name = path.casefold().rsplit("/", 1)[-1]
        return any(name == f.casefold() for f in self.instruction_files)

    def route_target(self, kind: str, key: str) -> Decision:
        """Where an item of ``kind`` for ``key`` is promoted to. Re-checked every time, whatever the config."""
        template = self.route_template(kind)
        if not template:
            return deny(
                "no-route",
                f"{kind} items have no route; hold it, or move it by hand as a trusted session.",
            )
        if not _SLUG_RE.match(key):
            return deny("bad-route-key", f"'{key}' is not a valid project or slug name.")
        target = _fill(template, key)
        if any_match(self.protected_from_routes, target) or any_match(self.protected, target):
            return deny("route-protected", f"the route for {kind} would reach a protected path; refused.")
        if self.is_inbox(target) or self.names_instruction_file(target):
            return deny("route-protected", f"the route for {kind} would reach {target}, which no route may reach.")
        return allow("route", target)


def policy_from_table(table: dict[str, Any]) -> Policy:
    """Validate the ``[policy]`` table: unknown keys and wrong types stop start-up."""
    values = check_table("policy", table, POLICY_SETTINGS)
    for setting in POLICY_SETTINGS:
        value = values[setting.name]
        if isinstance(value, list):
            if not all(isinstance(v, str) and v for v in value):
                raise ConfigError(f"[policy] {setting.name} must be a list of non-empty strings", remedy=setting.help)
            value = tuple(value)
        if isinstance(value, dict):
            if not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                raise ConfigError(f"[policy] {setting.name} must map names to strings", remedy=setting.help)
            value = tuple(value.items())
        values[setting.name] = value
    try:
        validate_instruction_files(values["instruction_files"])
    except ValueError as exc:
        raise ConfigError(f"[policy] instruction_files: {exc}") from None
    _check_inbox_and_routes(values)
    for cls in (*values["two_step_classes"], *values["session_gate_classes"]):
        if cls not in CLIENT_CLASSES:
            raise ConfigError(
                f"[policy] two_step_classes names an unknown class '{cls}'",
                remedy=f"Classes: {', '.join(CLIENT_CLASSES)}.",
            )
    if values["max_note_bytes"] <= 0 or values["max_note_bytes"] > 64 << 20:
        raise ConfigError("[policy] max_note_bytes must be between 1 and 64 MiB")
    if not 1 <= values["review_batch_size"] <= 50:
        raise ConfigError("[policy] review_batch_size must be between 1 and 50 (the review schema's cap)")
    for key in ("digest_path", "reflect_state_path"):
        value = values[key]
        if not value.endswith(".md") or value.startswith(("/", ".")) or ".." in value.split("/"):
            raise ConfigError(f"[policy] {key} must be a relative note path ending in .md")
    if any_match(values["protected"], values["reflect_state_path"]) or values["reflect_state_path"].startswith(
        "inbox/"
    ):
        raise ConfigError("[policy] reflect_state_path may not be a protected or inbox path")
    if values["reflect_state_path"].casefold().startswith(("handoffs/", "projects/", "log/", "design/")):
        # Those are loaded at session start or reached by routes; a model's summary belongs elsewhere.
        raise ConfigError("[policy] reflect_state_path may not be under handoffs/, projects/, log/ or design/")
    if values["fetch_interval_seconds"] <= 0:
        raise ConfigError("[policy] fetch_interval_seconds must be positive")
    return Policy(**values)


def _check_inbox_and_routes(values: dict[str, Any]) -> None:
    """Refuse, at start, any inbox or route template that could reach a path no route may reach.

    A template is literal folders then ``{project}``/``{slug}`` + ``.md``, and the key is a lowercase slug
    (no ``/``), so the only part that varies is the file's stem.  The literal folders are checked against
    the protected globs with probe stems, including every segment named in those globs and every
    instruction file's stem.  :meth:`Policy.route_target` checks the concrete target again at promotion.
    """
    inbox = dict(values["inbox"])
    for kind, template in inbox.items():
        if not is_slug(kind):
            raise ConfigError(f"[policy] inbox kind '{kind}' must be a lowercase name")
        if not _TEMPLATE.match(template) or not template.startswith("inbox/"):
            raise ConfigError(
                f"[policy] inbox.{kind} = '{template}' must look like 'inbox/<folder>/{{project}}.md'",
                remedy="Inbox items live under inbox/: literal folders, then {project} or {slug}, then .md.",
            )
    guarded = (*values["protected_from_routes"], *values["protected"])
    probes = {"x", "rules", "private", "inbox", "readme", "digest"}
    probes |= {f.casefold().rsplit("/", 1)[-1].removesuffix(".md").strip(".") for f in values["instruction_files"]}
    for glob in guarded:
        probes |= {seg.casefold() for seg in glob.split("/")}
    for kind, template in values["routes"]:
        if kind not in inbox:
            raise ConfigError(f"[policy] routes.{kind}: there is no inbox kind '{kind}'")
        if not template:
            continue
        if not _TEMPLATE.match(template):
            raise ConfigError(
                f"[policy] routes.{kind} = '{template}' must look like '<folder>/{{project}}.md'",
                remedy="A route is literal folders then {project} (or {slug}) .md; nothing else can vary.",
            )
        for probe in sorted(p for p in probes if is_slug(p)):
            target = _fill(template, probe)
            if any(glob_match(g, target) for g in guarded) or target.casefold().startswith("inbox/"):
                raise ConfigError(
                    f"[policy] routes.{kind} = '{template}' could reach '{target}', a path no route may reach",
                    remedy="Point routes at ordinary folders such as handoffs/, log/ or design/.",
                )


# -------------------------------------------------------------- decisions
def can_see(policy: Policy, caller: Caller, path: str) -> bool:
    """Visibility: what a caller may not see is not there (it is never 'denied')."""
    if caller.tier == "trusted":
        return True
    return not policy.is_private(path)


def decide_environment(caller: Caller, requested: str, *, default: str) -> Decision:
    """A credential is bound to one environment (its own, or the deployment's default): any other one is
    not there for it. The answer never confirms that another environment exists."""
    bound = caller.environment or default
    if requested == bound:
        return allow("environment")
    return deny("unknown-environment", f"no such environment; this credential is for '{bound}'.")


def decide_reader(caller: Caller) -> Decision:
    """May ``caller`` use the knowledge tools at all (list, search: results are then filtered)?"""
    if caller.tier == "machine" or caller.client_class == "machine":
        return deny(
            "machine-no-mcp",
            "machine credentials cannot use the knowledge tools; machines write through typed contracts.",
        )
    if caller.tier in ("restricted", "trusted"):
        return allow("reader")
    return deny("unknown-tier", f"tier '{caller.tier}' may not read notes.")


def decide(policy: Policy, caller: Caller, action: Action, path: str) -> Decision:
    """May ``caller`` do ``action`` to ``path``?"""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if action in READ_ACTIONS:
        if can_see(policy, caller, path):
            return allow("visible")
        return deny("no-such-note", "no such note.")
    if caller.tier == "trusted":
        if not can_see(policy, caller, path):  # pragma: no cover - trusted sees everything
            return deny("no-such-note", "no such note.")
        if policy.is_protected(path):
            return allow("protected-trusted", "protected path: trusted callers only, always two-step.")
        return allow("trusted-write")
    if caller.tier == "restricted":
        if not can_see(policy, caller, path):
            return deny("no-such-note", "no such note.")
        return _decide_restricted_write(policy, action, path)
    return deny("unknown-tier", f"tier '{caller.tier}' may not {action.value} notes.")


RESTRICTED_REMEDY = (
    "A restricted session may only create or append inbox items: use inbox_write(kind, text, project) with kind "
    "handoff, log, decision or capture. A reviewer then promotes or holds it. For anything else, ask the owner "
    "for a trusted session."
)


def _decide_restricted_write(policy: Policy, action: Action, path: str) -> Decision:
    if policy.is_reserved(path):
        return deny("inbox-reserved", f"{path} is kept by the server and reviewers only. " + RESTRICTED_REMEDY)
    item = policy.inbox_item(path)
    if item is None:
        where = "inside the inbox but not a typed inbox item" if policy.is_inbox(path) else "outside the inbox"
        return deny("restricted-outside-inbox", f"{path} is {where}. " + RESTRICTED_REMEDY)
    if action in (Action.CREATE, Action.APPEND):
        return allow("inbox-write", f"{item.kind} item")
    return deny(
        "inbox-append-only",
        f"a restricted session may not {action.value} inbox items, only create them or append to them. "
        + RESTRICTED_REMEDY,
    )


def decide_review(policy: Policy, caller: Caller) -> Decision:
    """Reviewing the inbox (list, promote, hold) is for trusted callers only."""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if caller.tier != "trusted":
        return deny(
            "review-trusted-only",
            "only a trusted session may review the inbox. A restricted session may write to it with inbox_write.",
        )
    return allow("reviewer")


def requires_two_step(policy: Policy, caller: Caller, path: str) -> bool:
    """Must this write be previewed (unconfirmed) before it may be confirmed?"""
    if policy.is_protected(path):
        return True
    if caller.client_class not in policy.two_step_classes:
        return False
    return policy.two_step_inbox or policy.inbox_item(path) is None
