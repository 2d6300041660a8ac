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

import json
import math
import re
import unicodedata
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from functools import lru_cache
from typing import Any, Protocol

from notegate.errors import PathRejected
from notegate.globs import any_match, folder_could_hold, glob_match
from notegate.policyfile import (
    CLIENT_CLASSES,
    POLICY_SETTINGS,
    SLUG,
    TIERS,
    default,
    fill_template,
    is_slug,
    policy_values,
    template_regex,
)
from notegate.safety.attachments import extension_of, media_type_of, signature_matches
from notegate.safety.floor import check_item
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES, fold_name
from notegate.vault.paths import FolderPath, NotePath
from notegate.vault.provenance import carries_notegate_trailer, claims_server_identity

__all__ = [  # what other modules take from here besides the decisions
    "CLIENT_CLASSES",
    "DEFAULT_INSTRUCTION_FILES",
    "POLICY_SETTINGS",
    "SLUG",
    "TIERS",
    "any_match",
    "folder_could_hold",
    "glob_match",
    "is_slug",
]


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
    """Who makes a request. Decided from credentials by the door, never from what a caller writes.

    ``login`` is the person (owner or member); ``connector`` names the connector login: the one credential
    (a static token today, an OAuth grant family later) this client holds for that person.  Authorship is
    per connector login, so the owner's phone and the owner's workstation are different authors.
    """

    login: str
    display_name: str
    client: str
    client_class: str
    tier: str
    session: str = "-"
    environment: str | None = None
    connector: str = ""
    grant_id: str = ""  # the owner-approved grant that made it trusted (its public id), if one did

    def audit_fields(self, default_environment: str | None = None) -> dict[str, str | None]:
        """Who this caller is, as an audit row names it (one spelling for every door and service)."""
        return {
            "environment": self.environment or default_environment,
            "login": self.login,
            "client": self.client,
            "client_class": self.client_class,
            "tier": self.tier,
            "session": self.session,
        }

    @property
    def connector_id(self) -> str:
        """The connector login's stable id (``token:<id>``); callers built without one are named by client."""
        return self.connector or f"client:{self.client}@{self.login}"


#: The fixed connector logins: callers no credential decides, built only by code that the owner runs
#: (the scheduled jobs, the CLI).  connector -> (client, display name or None for the person, session).
FIXED_CONNECTORS: dict[str, tuple[str, str | None, str]] = {
    "job:review": ("notegate-review", "notegate reviewer", "scheduled-review"),
    "job:reflect": ("notegate-reflect", "notegate reflector", "reflect"),
    "cli:import": ("notegate-import", None, "-"),
    "cli:init": ("notegate-init", "notegate init", "-"),
    # The owner's browser after a passkey login: console actions (review, restore, edit) commit as this.
    "web:console": ("notegate-console", None, "console"),
}


def fixed_client(connector: str) -> str:
    """The client name a fixed connector login's audit rows carry (``notegate status``: the last review)."""
    return FIXED_CONNECTORS[connector][0]


def fixed_caller(connector: str, person: str) -> Caller:
    """The caller of a fixed connector login: a trusted workstation, because only the owner starts it.

    One table and one function, so the four fixed callers cannot drift apart (a job built by hand with
    another tier or class would be judged by different rules).  An unknown connector is a bug: it raises.
    """
    try:
        client, display_name, session = FIXED_CONNECTORS[connector]
    except KeyError:
        raise ValueError(f"{connector!r} is not a fixed connector login") from None
    return Caller(
        login=person,
        display_name=display_name or person,
        client=client,
        client_class="workstation",
        tier="trusted",
        session=session,
        connector=connector,
    )


def sync_caller(device: str, person: str) -> Caller:
    """Who commits what ``notegate sync`` finds changed in a workstation's vault: the owner at that device
    (connector login ``sync:<device>``), trusted like the other programs only the owner starts."""
    return Caller(
        login=person,
        display_name=person,
        client="notegate-sync",
        client_class="workstation",
        tier="trusted",
        session="-",
        connector=f"sync:{device}",
    )


@dataclass(frozen=True)
class Author:
    """Who wrote part of an inbox item: a connector login, its client name and its person.

    ``connector`` is empty for parts recorded before connector logins existed; such a part counts as
    written by *every* connector login of that person (the safe direction).
    """

    connector: str
    client: str
    person: str

    @classmethod
    def of(cls, caller: Caller) -> Author:
        return cls(caller.connector_id, caller.client, caller.login)

    @property
    def label(self) -> str:
        """How trailers and listings name it: the connector (client name) and the person."""
        return f"{self.client} ({self.person})"


@dataclass(frozen=True)
class Decision:
    allowed: bool
    rule: str
    reason: str


def allow(rule: str, reason: str = "") -> Decision:
    return Decision(True, rule, reason)


def deny(rule: str, reason: str) -> Decision:
    return Decision(False, rule, reason)


@dataclass(frozen=True)
class InboxItemRef:
    kind: str
    key: str  # the project (or the capture's slug)
    path: str


@dataclass(frozen=True)
class Policy:
    """The policy file's values. Every default comes from its row in :mod:`notegate.policyfile`."""

    private: tuple[str, ...] = default("private")
    protected: tuple[str, ...] = default("protected")
    max_note_bytes: int = default("max_note_bytes")
    two_step_classes: tuple[str, ...] = default("two_step_classes")
    fetch_interval_seconds: float = default("fetch_interval_seconds")
    repack_loose_objects: int = default("repack_loose_objects")
    min_free_bytes: int = default("min_free_bytes")
    preview_ttl_seconds: int = default("preview_ttl_seconds")
    instruction_files: tuple[str, ...] = default("instruction_files")
    inbox: tuple[tuple[str, str], ...] = default("inbox")
    inbox_reserved: tuple[str, ...] = default("inbox_reserved")
    routes: tuple[tuple[str, str], ...] = default("routes")
    protected_from_routes: tuple[str, ...] = default("protected_from_routes")
    two_step_inbox: bool = default("two_step_inbox")
    notice_interval_seconds: int = default("notice_interval_seconds")
    session_gate_classes: tuple[str, ...] = default("session_gate_classes")
    session_idle_seconds: int = default("session_idle_seconds")
    digest_path: str = default("digest_path")
    review_batch_size: int = default("review_batch_size")
    reflect_state_path: str = default("reflect_state_path")
    reflect_min_interval_seconds: int = default("reflect_min_interval_seconds")
    restricted_writes_per_hour: int = default("restricted_writes_per_hour")
    restricted_bytes_per_hour: int = default("restricted_bytes_per_hour")
    machine_writes_per_hour: int = default("machine_writes_per_hour")
    machine_bytes_per_hour: int = default("machine_bytes_per_hour")
    connector_open_tasks: int = default("connector_open_tasks")
    oauth_max_registrations: int = default("oauth_max_registrations")
    oauth_redirect_allowlist: tuple[str, ...] = default("oauth_redirect_allowlist")
    oauth_code_seconds: int = default("oauth_code_seconds")
    oauth_access_token_seconds: int = default("oauth_access_token_seconds")
    oauth_refresh_token_seconds: int = default("oauth_refresh_token_seconds")
    oauth_consent_seconds: int = default("oauth_consent_seconds")
    oauth_unused_registration_seconds: int = default("oauth_unused_registration_seconds")
    oauth_default_scope: str = default("oauth_default_scope")
    elevation_link_seconds: int = default("elevation_link_seconds")
    elevation_grant_seconds: int = default("elevation_grant_seconds")
    elevation_pending_cap: int = default("elevation_pending_cap")
    elevation_assertion_seconds: int = default("elevation_assertion_seconds")
    max_deletions_per_commit: int = default("max_deletions_per_commit")
    max_files_per_commit: int = default("max_files_per_commit")
    max_commits_per_push: int = default("max_commits_per_push")
    push_inspection_seconds: float = default("push_inspection_seconds")
    max_push_bytes: int = default("max_push_bytes")
    sync_interval_seconds: float = default("sync_interval_seconds")
    attachment_types: tuple[tuple[str, str], ...] = default("attachment_types")
    max_attachment_bytes: int = default("max_attachment_bytes")
    attachment_writes: bool = default("attachment_writes")
    contract_max_body_bytes: int = default("contract_max_body_bytes")
    journal_folder: str = default("journal_folder")

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
            match = template_regex(template).match(path)
            if match:
                return InboxItemRef(kind=kind, key=match.group(1), path=path)
        return None

    def inbox_path(self, kind: str, key: str) -> str:
        template = dict(self.inbox).get(kind)
        if template is None:
            raise ValueError(kind)
        return fill_template(template, key)

    def route_template(self, kind: str) -> str:
        return dict(self.routes).get(kind, "")

    def is_session_loaded(self, path: str) -> bool:
        """Is ``path`` what sessions load at start or what routes reach: the protected globs, the digest,
        and the folders of the routes and of the notes ``session_start`` reads (handoffs/, log/, design/,
        projects/ by default)?  Compared case-insensitively (a case-insensitive clone loads ``HANDOFFS/x.md``
        as ``handoffs/x.md``).  The git door protects these: the floor runs on what is pushed there, and only
        the owner may change them."""
        return self.session_loaded_area(path) is not None

    def session_loaded_area(self, path: str) -> str | None:
        """Which area of :meth:`is_session_loaded` holds ``path``: the protected glob it matches, the digest's
        path, or the folder (``projects/``); None when sessions do not load it.  Refusals name it, so a
        vault's own ``Projects/`` is told it is the policy's ``projects/``, not some fixed list."""
        glob = next((g for g in self.protected if glob_match(g, path)), None)
        if glob is not None:
            return glob
        folded = path.casefold()
        if folded == self.digest_path.casefold():
            return self.digest_path
        return next((folder for folder in _session_folders(self.routes) if folded.startswith(folder)), None)

    def names_instruction_file(self, path: str) -> bool:
        """Is any segment of the path an instruction file's name, as some file system or agent would see it?"""
        return instruction_file_named(self.instruction_files, path) is not None

    def reaches_guarded(self, target: str) -> bool:
        """Is ``target`` a path no route may reach (``protected_from_routes`` or ``protected``)?"""
        return any_match(self.protected_from_routes, target) or any_match(self.protected, target)

    def route_target(self, kind: str, key: str) -> Decision:
        """Where an item of ``kind`` for ``key`` is promoted to. Re-checked every time, whatever the config."""
        template = self.route_template(kind)
        if not template:
            return deny("no-route", f"{kind} items have no route.")
        if not is_slug(key):
            return deny("bad-route-key", f"'{key}' is not a valid project or slug name.")
        target = fill_template(template, key)
        if self.reaches_guarded(target):
            return deny("route-protected", f"the route for {kind} would reach a protected path; refused.")
        if self.is_inbox(target) or self.names_instruction_file(target):
            return deny("route-protected", f"the route for {kind} would reach {target}, which no route may reach.")
        return allow("route", target)


#: The notes ``session_start`` reads besides the digest (services/sessions.py): their folders are loaded at
#: start just like the routes' targets.
SESSION_START_NOTES = ("handoffs/{project}.md", "projects/{project}.md")


@lru_cache(maxsize=16)
def _session_folders(routes: tuple[tuple[str, str], ...]) -> tuple[str, ...]:
    templates = [t for _, t in routes if t] + list(SESSION_START_NOTES)
    return tuple(sorted({t.rsplit("/", 1)[0].casefold() + "/" for t in templates if "/" in t}))


_SHORT_NAME = re.compile(r"([a-z0-9]{1,6})~[0-9]{1,6}(?:\.([a-z0-9]{1,3}))?\Z")


# The per-segment folds below are pure functions of one name; a write's path repeats its folders' names, so
# they are remembered (bounded: a server's caches do not grow with every name it ever sees).  The verdicts
# built on them are unchanged.
@lru_cache(maxsize=8192)
def _plain_fold(name: str) -> str:
    """NFKC and case folding, then the NTFS aliases: a stream suffix (``::$DATA``) and trailing dots and
    spaces name the same file."""
    return unicodedata.normalize("NFKC", name).casefold().split(":", 1)[0].rstrip(". ")


@lru_cache(maxsize=8192)
def _name_key(name: str) -> str:
    """A file name as a case-insensitive, look-alike-blind file system resolves it (the floor's skeleton)."""
    return fold_name(_plain_fold(name)).rstrip(". ")


@lru_cache(maxsize=64)
def _instruction_keys(instruction_files: tuple[str, ...]) -> tuple[dict[tuple[str, ...], str], tuple[str, ...]]:
    """Instruction files as tuples of segment keys, and their plain folded last names (for 8.3 names)."""
    keys: dict[tuple[str, ...], str] = {}
    for entry in instruction_files:
        keys.setdefault(tuple(_name_key(seg) for seg in entry.split("/") if seg), entry)
    return keys, tuple(_plain_fold(entry.rsplit("/", 1)[-1]) for entry in instruction_files)


@lru_cache(maxsize=64)
def _instruction_runs(
    instruction_files: tuple[str, ...],
) -> tuple[tuple[int, dict[tuple[str, ...], tuple[int, str]]], ...]:
    """The entries' runs of segment keys grouped by length: (length, {keys: (order in the list, entry)})."""
    keys, _ = _instruction_keys(instruction_files)
    groups: dict[int, dict[tuple[str, ...], tuple[int, str]]] = {}
    for order, (entry_keys, entry) in enumerate(keys.items()):
        groups.setdefault(len(entry_keys), {})[entry_keys] = (order, entry)
    return tuple(sorted(groups.items()))


@lru_cache(maxsize=8192)
def _short_name_of(segment: str, instruction_files: tuple[str, ...]) -> str | None:
    """An 8.3 short name (``CLAUDE~1.MD``) that Windows could resolve to an instruction file's long name."""
    match = _SHORT_NAME.match(_plain_fold(segment))
    if not match:
        return None
    stem, ext = match.group(1), match.group(2) or ""
    _, long_names = _instruction_keys(instruction_files)
    for entry, long_name in zip(instruction_files, long_names, strict=True):
        long_stem, _, long_ext = (
            long_name.lstrip(".").rpartition(".") if "." in long_name.lstrip(".") else (long_name.lstrip("."), "", "")
        )
        compact = re.sub(r"[^a-z0-9]", "", long_stem)
        if compact.startswith(stem) and long_ext.startswith(ext):
            return entry
    return None


def instruction_file_named(instruction_files: tuple[str, ...], path: str) -> str | None:
    """The instruction file ``path`` (or one of its folders) would be taken for, or None.

    On a case-insensitive clone (macOS, Windows) ``inbox/handoffs/claude.md`` *is* ``CLAUDE.md`` to an agent
    working there, so segments are compared after case folding, the floor's skeleton (``ＣＬＡＵＤＥ``,
    Cyrillic look-alikes) and the NTFS alias rules (trailing dots or spaces, streams, 8.3 short names).
    A one-segment entry (``CLAUDE.md``) matches any segment; a longer one (``.junie/guidelines.md``) matches
    the same run of segments anywhere in the path.
    """
    files = tuple(instruction_files)
    by_length = _instruction_runs(files)
    segments = [seg for seg in path.split("/") if seg]
    folded = [_name_key(seg) for seg in segments]
    for i in range(len(folded)):
        # the first entry, in the list's order, whose run of keys starts here: one lookup per entry length
        # instead of one comparison per entry
        found = [hit for n, runs in by_length if (hit := runs.get(tuple(folded[i : i + n]))) is not None]
        if found:
            return min(found)[1]
        short = _short_name_of(segments[i], files)
        if short is not None:
            return short
    return None


def policy_from_table(table: dict[str, Any]) -> Policy:
    """The policy of a ``[policy]`` table, validated (see :mod:`notegate.policyfile`)."""
    return Policy(**policy_values(table))


# -------------------------------------------------------------- decisions
def sees_private(caller: Caller) -> bool:
    """Private notes exist only for trusted callers (listing, reading and search statistics alike)."""
    return caller.tier == "trusted"


def can_see(policy: Policy, caller: Caller, path: str) -> bool:
    """Visibility: what a caller may not see is not there (it is never 'denied')."""
    if sees_private(caller):
        return True
    return not policy.is_private(path)


def default_tier(client_class: str) -> str:
    """Restricted by default; machines are their own tier. Trust is never the default."""
    return "machine" if client_class == "machine" else "restricted"


def decide_credential(caller: Caller, allow_secret: bool) -> Decision:
    """A text that looks like it holds a credential: may this caller commit it?

    A secret committed once stays in every clone forever. Restricted and hosted callers never may (a
    hosted chat cannot be told apart from its prompt); a trusted workstation may only when it insists.
    """
    if caller.tier != "trusted" or caller.client_class == "hosted":
        return deny("credential-found", "the text contains what looks like a credential")
    if not allow_secret:
        return deny("credential-warning", "the text contains what looks like a credential")
    return allow("credential-insisted")


def needs_session_handle(policy: Policy, caller: Caller) -> bool:
    """Must this caller pass a session_start handle to every knowledge tool? (Clients with no hooks.)"""
    return caller.client_class in policy.session_gate_classes


def inbox_write_needs_preview(policy: Policy, caller: Caller) -> bool:
    """Does the policy make this caller preview inbox writes too (two_step_inbox for its class)?"""
    return policy.two_step_inbox and caller.client_class in policy.two_step_classes


CAPTURE_NUMBERED = 50  # numbered keys (-2 .. -51) untitled captures of one second may take before "busy"


@dataclass(frozen=True)
class InboxKeys:
    """The keys an inbox write may use, in order, and whether an existing item at the key takes it."""

    keys: tuple[str, ...]
    appends: bool  # True: an item at keys[0] gets the capture as a new section; False: take the first free key


def capture_keys(slug: str, now: float) -> InboxKeys:
    """Where a capture goes, from its title's slug (``''`` when the title has no ASCII letter or digit).

    A title that slugifies names a topic, and a topic is one item: a capture titled like an existing one
    is appended to it (the reviewer reads the topic once).  No title, or one in CJK or emoji, names no
    topic: such a capture is its own item, under its UTC second ``capture-YYYYMMDD-HHMMSS`` or, when that
    is taken (several captures in one second), ``-2``, ``-3`` ... -- never appended to an unrelated capture,
    which would bury its title in another's item.  The caller creates the first free key with expected
    version ABSENT, so a concurrent capture that took it first makes the create stale: take the next.
    """
    if slug:
        return InboxKeys(keys=(slug,), appends=True)
    stem = f"capture-{datetime.fromtimestamp(now, UTC):%Y%m%d-%H%M%S}"
    return InboxKeys(keys=(stem, *(f"{stem}-{n}" for n in range(2, CAPTURE_NUMBERED + 2))), appends=False)


class DeviceProof(Protocol):
    """What the device-key verifier proved (``notegate.auth.devices.DeviceVerdict``): policy needs only this."""

    @property
    def trusted(self) -> bool: ...

    @property
    def person(self) -> str | None: ...


def decide_device_tier(caller: Caller, verdict: DeviceProof) -> Decision:
    """Does a verified device key make this caller trusted? Allowed: the caller becomes trusted. Denied: the
    caller keeps exactly the tier its credential gave it (a bad header never lowers or raises anything).

    Only the owner's own machine qualifies: a workstation-class credential of the device's person. A hosted
    connector or a machine presenting a device header gains nothing (a key copied into a chat app's config
    must not turn the chat into the owner's workstation), nor does another person's workstation."""
    if not verdict.trusted:
        return deny("device-not-verified", "the device header did not verify; the caller keeps its tier.")
    if caller.client_class != "workstation" or caller.tier not in ("restricted", "trusted"):
        return deny(
            "device-wrong-class",
            f"a device key lifts only a workstation credential, not a {caller.client_class} one.",
        )
    if not verdict.person or verdict.person != caller.login:
        return deny("device-wrong-person", "the device belongs to another person than this credential's.")
    return allow("device-trusted", "a configured device key of this person verified.")


def decide_environment(caller: Caller, requested: str, *, default: str) -> Decision:
    """A credential is bound to one environment (its own, or the deployment's default): any other one is
    not there for it. The answer never confirms that another environment exists."""
    bound = caller.environment or default
    if requested == bound:
        return allow("environment")
    return deny("unknown-environment", f"no such environment; this credential is for '{bound}'.")


def decide_token_environment(bound: str | None, served: Collection[str]) -> Decision:
    """May a credential bound to environment ``bound`` (None: the deployment's default) open the door here?
    Not when this deployment serves no such environment (it was removed, or the token is another server's):
    refused at the bearer check, like an unknown token, rather than admitted to fail on every tool."""
    if bound is None or bound in served:
        return allow("token-environment")
    return deny("wrong-environment", "the credential is for an environment this server does not serve")


def decide_host(host: str | None, allowed: Collection[str]) -> Decision:
    """May a request naming ``host`` in its Host header reach the MCP door at all (DNS-rebinding protection)?
    The same answer as the SDK's own check, which stays behind it: an exact entry, or ``NAME:*`` for NAME with
    any port. Decided before the bearer check, so a foreign Host gets its 421 whether or not a token came."""
    if host:
        if host in allowed:
            return allow("host-allowed")
        if any(entry.endswith(":*") and host.startswith(entry[:-1]) for entry in allowed):
            return allow("host-allowed")
    return deny("host-not-allowed", "the Host header is not one this server answers to")


def decide_reader(caller: Caller) -> Decision:
    """May ``caller`` use the knowledge tools at all (list, search: results are then filtered)?"""
    if caller.tier == "machine" or caller.client_class == "machine":
        return deny(
            "machine-no-mcp",
            "machine credentials cannot use the knowledge tools.",
        )
    if caller.tier in ("restricted", "trusted"):
        return allow("reader")
    return deny("unknown-tier", f"tier '{caller.tier}' may not read notes.")


def decide_folder(folder: str, visible_notes: int) -> Decision:
    """Is ``folder`` there for a caller who can see ``visible_notes`` notes under it?  Git keeps no empty
    folders, so a folder exists only through its notes; counting only the notes the caller may see makes a
    folder of private notes "no such folder" to a restricted caller, in the same words as one never made."""
    if not folder or visible_notes > 0:
        return allow("folder")
    return deny("no-such-folder", f"no such folder: {folder}.")


def decide(policy: Policy, caller: Caller, action: Action, path: str) -> Decision:
    """May ``caller`` do ``action`` to ``path``?"""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if action in READ_ACTIONS:
        if can_see(policy, caller, path):
            return allow("visible")
        return deny("no-such-note", "no such note.")
    if not can_see(policy, caller, path):
        return deny("no-such-note", "no such note.")
    if action is not Action.DELETE:  # deleting a pushed CLAUDE.md is how a trusted session cleans it up
        named = decide_name(policy, path)
        if not named.allowed:
            return named
    if caller.tier == "trusted":
        if policy.is_protected(path):
            return allow("protected-trusted", "protected path: trusted callers only, always two-step.")
        return allow("trusted-write")
    if caller.tier == "restricted":
        return _decide_restricted_write(policy, action, path)
    return deny("unknown-tier", f"tier '{caller.tier}' may not {action.value} notes.")


def decide_name(policy: Policy, path: str) -> Decision:
    """No write, by any tier through any door, creates a file an agent would load as its instructions."""
    entry = instruction_file_named(policy.instruction_files, path)
    if entry is None:
        return allow("name")
    return deny(
        "instruction-file-name",
        f"{path} would be taken for the instruction file '{entry}' by an agent working in a clone (names are "
        "compared ignoring case, look-alike letters and Windows aliases).",
    )


#: Why a restricted write is refused; what to do instead is the rule's remedy (errors.RULES), said once.
RESTRICTED_REASON = (
    "a restricted session may only create or append inbox items (kind handoff, log, decision or capture)"
)


def _decide_restricted_write(policy: Policy, action: Action, path: str) -> Decision:
    if policy.is_reserved(path):
        return deny("inbox-reserved", f"{path} is kept by the server and reviewers only, and {RESTRICTED_REASON}.")
    item = policy.inbox_item(path)
    if item is None:
        where = "inside the inbox but not a typed inbox item" if policy.is_inbox(path) else "outside the inbox"
        return deny("restricted-outside-inbox", f"{path} is {where}, and {RESTRICTED_REASON}.")
    if action in (Action.CREATE, Action.APPEND):
        return allow("inbox-write", f"{item.kind} item")
    return deny(
        "inbox-append-only",
        f"a restricted session may not {action.value} inbox items, only create them or append to them.",
    )


def decide_author(caller: Caller, authors: Iterable[Author]) -> Decision:
    """May ``caller`` promote an item these connector logins wrote? Never its own: the same credential, also
    after a later elevation, may not review what it wrote; another connector login of the same person may."""
    for author in authors:
        same = author.connector == caller.connector_id if author.connector else author.person == caller.login
        if same:
            return deny(
                "author-cannot-promote",
                f"this connector login ({author.label}) wrote part of the item; a connector may not promote what "
                "it wrote.",
            )
    return allow("not-an-author")


@dataclass(frozen=True)
class WriteLimits:
    writes: int  # 0 = unlimited
    bytes: int  # 0 = unlimited
    window_seconds: float = 3600.0
    who: str = "restricted"  # whose settings they are: restricted | machine (named in a refusal)


def write_limits(policy: Policy, caller: Caller) -> WriteLimits | None:
    """Which write quota applies to ``caller``'s commits, at every door (the recipe's commit_as asks).

    Trusted connector logins have none: the owner's own programs and sessions. A machine token has its own
    (``machine_*_per_hour``): a cron posts on its own schedule, not a conversation's, so the owner may size it
    apart. Every other caller is held to the restricted one. The quota is per connector login either way."""
    if caller.tier == "trusted":
        return None
    if caller.tier == "machine" or caller.client_class == "machine":
        writes, size, who = policy.machine_writes_per_hour, policy.machine_bytes_per_hour, "machine"
    else:
        writes, size, who = policy.restricted_writes_per_hour, policy.restricted_bytes_per_hour, "restricted"
    if not writes and not size:
        return None
    return WriteLimits(writes, size, who=who)


def decide_quota(limits: WriteLimits, writes: int, used_bytes: int, size: int) -> Decision:
    """May one more write of ``size`` bytes go in, after ``writes`` writes of ``used_bytes`` in the window?"""
    if limits.writes and writes + 1 > limits.writes:
        sessions = "machine tokens" if limits.who == "machine" else "restricted sessions"
        return deny(
            "write-quota",
            f"this connector login made {writes} writes in the last hour, the limit for {sessions} "
            f"({limits.who}_writes_per_hour = {limits.writes}).",
        )
    if limits.bytes and used_bytes + size > limits.bytes:
        return deny(
            "write-quota",
            f"this write ({size} bytes) would take this connector login past {limits.bytes} bytes in an hour "
            f"({limits.who}_bytes_per_hour; {used_bytes} used).",
        )
    return allow("within-quota")


def decide_connector_task(policy: Policy, open_tasks: int) -> Decision:
    """May a caller's input open one more task note for the owner, with ``open_tasks`` of its kind already
    open from the same connector login?  Bounded, so one machine cannot bury the owner's inbox (or the state
    database) in notes: past the cap the call still answers what it dropped, and the audit row says so."""
    if open_tasks >= policy.connector_open_tasks:
        return deny(
            "task-cap",
            f"this connector login already left {open_tasks} open task notes of this kind "
            f"(connector_open_tasks = {policy.connector_open_tasks}).",
        )
    return allow("task-open")


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
    return two_step_reason(policy, caller, path) is not None


def two_step_reason(policy: Policy, caller: Caller, path: str) -> str | None:
    """Why this write must be previewed first, in words a refusal can quote (None: it need not be).
    The protected path comes first: it holds for every caller, whatever its class."""
    if policy.is_protected(path):
        return f"{path} is a protected path ([policy] protected), which every caller previews"
    if caller.connector == "web:console":
        return "the owner's console shows every change before it commits"
    if caller.client_class not in policy.two_step_classes:
        return None
    if policy.two_step_inbox or policy.inbox_item(path) is None:
        return f"your client class ({caller.client_class}) previews every write ([policy] two_step_classes)"
    return None


# ------------------------------------------------------------------ OAuth


#: An RFC 8252 loopback redirect: http, a loopback host, an optional port, a path (no user info, no fragment).
_LOOPBACK = re.compile(r"http://(127\.0\.0\.1|\[::1\]|localhost)(?::[0-9]{1,5})?(/[^#@\s]*)?\Z")


def _loopback_key(uri: str) -> tuple[str, str] | None:
    """``(host, path?query)`` of a loopback redirect, else None: the port is left out because a native
    client picks it when it starts listening (RFC 8252 §7.3)."""
    match = _LOOPBACK.match(uri)
    if match is None:
        return None
    return match.group(1), match.group(2) or "/"


def decide_redirect_uri(uri: str, registered: Iterable[str], allowlist: Iterable[str]) -> Decision:
    """May an authorization code be sent to ``uri``?  Both checks must pass, enforced at every authorize:

    * it is exactly one the client registered (or its metadata document lists); a loopback redirect may
      differ from the registered one only in its port (RFC 8252 §7.3);
    * it is on the policy's allowlist: an exact entry, or ``http://<loopback>:*`` for that loopback host.
    """
    registered = tuple(registered)
    loop = _loopback_key(uri)
    if uri not in registered and (loop is None or loop not in {_loopback_key(r) for r in registered}):
        return deny("redirect-not-registered", "the redirect URI is not one this client registered")
    for entry in allowlist:
        if entry == uri:
            return allow("redirect-allowed")
        if entry.endswith(":*") and loop is not None and entry[: -len(":*")] == f"http://{loop[0]}":
            return allow("redirect-allowed", "loopback")
    return deny("redirect-not-allowed", "the redirect URI is not on this server's allowlist (oauth_redirect_allowlist)")


def decide_registration_redirects(uris: Iterable[str], allowlist: Iterable[str]) -> Decision:
    """May a client register these redirect URIs?  Each must be on the allowlist (checked at registration so a
    client learns at once, and again at every authorize in :func:`decide_redirect_uri`)."""
    uris = tuple(uris)
    allowlist = tuple(allowlist)
    if not uris:
        return deny("redirect-not-registered", "a client must register at least one redirect URI")
    for uri in uris:
        decision = decide_redirect_uri(uri, uris, allowlist)
        if not decision.allowed:
            return decision
    return allow("redirects-allowed")


def decide_registration(count: int, cap: int, evictable: bool = False) -> Decision:
    """May one more dynamic client registration be kept?  Below the cap, yes.  At the cap, the oldest
    registration that never completed a consent makes room (rule ``registration-evict``): it holds no token,
    and refusing instead would let a stranger's flood of free registrations lock the owner's own new connector
    out.  Only when every registration has completed a consent (all belong to people who logged in) is one
    refused."""
    if count < cap:
        return allow("registration")
    if evictable:
        return allow("registration-evict", "the oldest registration that never completed a consent makes room")
    return deny(
        "registration-cap",
        f"this server already keeps {count} client registrations, its limit (oauth_max_registrations = {cap}), "
        "and every one of them has completed a consent",
    )


# -------------------------------------------------------------- elevation


def decide_elevation_request(policy: Policy, caller: Caller, pending: int) -> Decision:
    """May ``caller`` ask the owner for elevation, with ``pending`` unanswered requests of its connector login
    still live?  Only a restricted conversation caller needs it; the cap keeps a session from flooding the
    owner with links (each one is something the owner must read)."""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if caller.tier == "trusted":
        return deny("elevation-not-needed", "this caller needs no elevation grant.")
    if pending >= policy.elevation_pending_cap:
        return deny(
            "elevation-pending-cap",
            f"this connector login already has {pending} unanswered elevation requests, the limit "
            f"(elevation_pending_cap = {policy.elevation_pending_cap}).",
        )
    return allow("elevation-request")


def decide_elevation_approval(
    policy: Policy,
    *,
    environment_owner: str | None,
    person: str,
    assertion_at: float | None,
    user_verified: bool,
    now: float,
) -> Decision:
    """May ``person`` approve a request made in the environment ``environment_owner`` owns (None: nobody
    owns it any more), with a passkey assertion made at ``assertion_at``?  Only the environment's owner,
    with a user-verified assertion at most ``elevation_assertion_seconds`` old (a login cookie from hours
    ago proves nobody is at the keyboard).

    Why the owner and not the asker: a grant makes a connector login trusted in the whole environment, and
    a trusted writer changes ``rules/`` and what every session loads, the owner's included.  A member who
    approved their own connector's request could write the owner's digest; so a member asks, the owner
    decides (for the owner's own sessions the two are the same person)."""
    if environment_owner is None or person != environment_owner:
        return deny(
            "elevation-approver-not-owner",
            "only the owner of the environment this session asked in may approve its elevation.",
        )
    if assertion_at is None or not user_verified:
        return deny(
            "elevation-assertion-unverified",
            "approving needs a passkey assertion with user verification (PIN or biometric).",
        )
    age = now - assertion_at
    if age < 0 or age > policy.elevation_assertion_seconds:
        return deny(
            "elevation-assertion-stale",
            f"the passkey assertion is {int(age)} s old; approving needs one at most "
            f"{policy.elevation_assertion_seconds} s old.",
        )
    return allow("elevation-approved")


def decide_elevation_denial(*, asked_by: str, person: str, environment_owner: str | None) -> Decision:
    """May ``person`` deny a request the connector login of ``asked_by`` made?  The person whose connector
    asked, or the owner of the environment it asked in (``environment_owner``, None when unknown).

    Why the asker too, when only the owner may approve: a denial takes nothing away but one request, so a
    member may withdraw their own session's ask.  Anyone else logged in (another member holding a forwarded
    link) may not: a member never cancels the owner's requests."""
    if person == asked_by or (environment_owner is not None and person == environment_owner):
        return allow("elevation-denied")
    return deny(
        "elevation-deny-wrong-person",
        "this request was made by a connector login of another person, and you are not the environment's owner.",
    )


class GrantFacts(Protocol):
    """What a stored grant says (``notegate.auth.grants.Grant``): policy needs only this."""

    @property
    def connector(self) -> str: ...

    @property
    def conversation(self) -> str | None: ...

    @property
    def expires_at(self) -> float: ...

    @property
    def revoked_at(self) -> float | None: ...


def decide_grant(grant: GrantFacts, caller: Caller, conversation: str | None, now: float) -> Decision:
    """Does this grant make ``caller`` trusted?  Allowed: trusted for everything a trusted caller may do (its
    connector login stays the same, so :func:`decide_author` still keeps it from promoting what it wrote).

    Bound to the connector login that asked: any other one, even another OAuth login of the same client,
    gets nothing.  Bound to the conversation where the client sent an id when asking (``conversation`` is
    that id's hash, or None when the client sends none)."""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if grant.revoked_at is not None:
        return deny("grant-revoked", "the owner revoked this grant.")
    if now >= grant.expires_at:
        return deny("grant-expired", "this grant has expired.")
    if grant.connector != caller.connector_id:
        return deny("grant-other-connector", "this grant belongs to another connector login; it counts only there.")
    if grant.conversation is not None and conversation != grant.conversation:
        return deny("grant-other-conversation", "this grant was approved for another conversation.")
    return allow("grant-trusted", "an owner-approved grant of this connector login.")


def decide_person(persons: frozenset[str], login: str) -> Decision:
    """May ``login`` hold passkeys and use the console? Only an owner or member of an environment (the
    deployment config), so removing a member from the config locks them out at once."""
    if login in persons:
        return allow("person", "an owner or member of an environment")
    return deny("person-unknown", f"'{login}' is neither the owner nor a member of any environment")


def decide_console_owner(person: str, environment: str, environment_owner: str | None) -> Decision:
    """May a signed-in ``person`` use the owner's pages of ``environment`` (review the inbox, approve
    elevations, restore notes, see the audit and the connections)?  Only its owner: a member signs in for
    their own passkeys and elevation approvals, never to act on another person's vault."""
    if environment_owner is not None and person == environment_owner:
        return allow("console-owner", f"'{person}' owns environment '{environment}'")
    return deny(
        "console-not-owner",
        f"'{person}' is not the owner of environment '{environment}'; only its owner may use these pages",
    )


def decide_console_revoke(kind: str, item_environment: str | None, environment: str) -> Decision:
    """May the owner's page of ``environment`` revoke a connection (a static token, an OAuth grant family)
    bound to ``item_environment``?  Only one of its own: owning another environment too does not make this
    page the place to revoke there, and a token of a member's environment is never this owner's to end."""
    if item_environment == environment:
        return allow("console-revoke", f"the {kind} belongs to environment '{environment}'")
    return deny("console-revoke-other-environment", f"this {kind} does not belong to environment '{environment}'")


def decide_metrics_reader(*, loopback_peer: bool, behind_proxy: bool, client_class: str | None) -> Decision:
    """May this request read ``/metrics``?  A scraper on this machine, or a program holding a live machine
    token (a monitoring system is a machine).  The figures are counts per environment, but they still say
    how busy a vault is and when: a conversation's token never reads them.

    Behind a proxy (``public_url`` set) a loopback peer proves nothing: a proxy on this machine makes every
    request from the internet look local, so there only a machine token reads them."""
    if loopback_peer and not behind_proxy:
        return allow("metrics-loopback", "the request comes from this machine")
    if client_class == "machine":
        return allow("metrics-machine", "a live machine token")
    if client_class is None:
        return deny("metrics-unauthenticated", "reading /metrics from another machine needs a machine token")
    return deny("metrics-not-machine", f"a {client_class} token cannot read /metrics; only a machine token can")


def metrics_environments(
    reader: Decision, token_environment: str | None, default_environment: str, environments: Collection[str]
) -> frozenset[str]:
    """Which environments' figures a reader :func:`decide_metrics_reader` let in sees.  A scraper on this
    machine (not behind a proxy) is the deployment's operator: every environment.  A machine token sees
    its own environment only (a token without one: the default's): the figures name environments, tool
    activity, refusal rules and inbox counts, and a monitoring token of one environment's owner is no
    reason to tell them how another person's vault is used.  Anything else sees nothing."""
    if not reader.allowed:
        return frozenset()
    if reader.rule == "metrics-loopback":
        return frozenset(environments)
    if reader.rule == "metrics-machine":
        name = token_environment or default_environment
        return frozenset({name}) if name in environments else frozenset()
    return frozenset()


def decide_connection(*, from_peer: int, per_peer: int, open_total: int, max_total: int, waiting: int) -> Decision:
    """May the listener serve one more TCP connection, before any HTTP is read?  ``from_peer`` connections
    of the same peer are open (at most ``per_peer``), ``open_total`` in all (at most ``max_total``), of
    which ``waiting`` have never completed a request head.

    Why these bounds: a stranger who opens connections and sends half a request head (or nothing) holds a
    slot while sending no request, so the slots of callers who did send one run out.  One peer holds at
    most ``per_peer``; when the server is full, the connection that has waited longest for its first head
    gives its slot to the new one (rule ``connection-replaces-waiting``: the listener closes that one),
    so connections that never completed a request cannot starve the ones that did.  Only when every open
    connection has completed a request is the new one refused."""
    if from_peer >= per_peer:
        return deny(
            "too-many-connections-per-peer",
            f"this address already holds {from_peer} connections, the most one peer may open "
            f"(max_connections_per_peer = {per_peer})",
        )
    if open_total < max_total:
        return allow("connection")
    if waiting > 0:
        return allow("connection-replaces-waiting", "the oldest connection that never sent a request makes room")
    return deny(
        "too-many-connections", f"the server already serves {open_total} connections (max_connections = {max_total})"
    )


def decide_token_name(name: str, active_names: Iterable[str]) -> Decision:
    """May a new static token be called ``name`` in an environment whose live tokens are ``active_names``?
    Names are how the owner revokes and re-tiers tokens (``token revoke laptop``), so two live tokens of one
    environment never share one, ignoring case; a revoked token's name is free again."""
    wanted = name.casefold()
    if any(existing.casefold() == wanted for existing in active_names):
        return deny("token-name-taken", f"a live token named '{name}' already exists in this environment.")
    return allow("token-name-free")


# ------------------------------------------------------------ the git door
# What an incoming commit may carry (notegate.sync.incoming reads git and asks here), and who may push what
# (notegate.sync.prereceive).  Every function takes facts already read from git: names, modes, sizes, bytes.

#: Hidden names whose Windows 8.3 short names (``OBSIDI~1``, ``MCP~1.JSO``) alias them on an NTFS clone;
#: ``git~1`` (``.git``) is the one git itself refuses (CVE-2019-1353).
HIDDEN_SHORT_NAMES = (
    ".git",
    ".gitmodules",
    ".gitattributes",
    ".gitignore",
    ".obsidian",
    ".claude",
    ".github",
    ".mcp.json",
    ".cursor",
    ".vscode",
    ".trash",
)

#: Forge variables naming who pushes, in the order they are believed (README, "The git door"): an SSH key's
#: forced command, GitLab, Gitea/Forgejo, git http-backend behind a web server's authentication.
PUSHER_VARIABLES = ("NOTEGATE_PUSHER", "GL_USERNAME", "GITEA_PUSHER_NAME", "REMOTE_USER")

MODE_FILE = 0o100644
MODE_EXECUTABLE = 0o100755
MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000
MODE_TREE = 0o040000


def _short_name_aliases(plain: str, long_names: Iterable[str]) -> bool:
    """Could the 8.3 short name ``plain`` (already folded) be Windows' alias of one of ``long_names``?"""
    match = _SHORT_NAME.match(plain)
    if not match:
        return False
    stem, ext = match.group(1), match.group(2) or ""
    for name in long_names:
        long = name.lstrip(".")
        long_stem, _, long_ext = long.rpartition(".") if "." in long else (long, "", "")
        if re.sub(r"[^a-z0-9]", "", long_stem).startswith(stem) and long_ext.startswith(ext):
            return True
    return False


def is_hidden_segment(segment: str) -> bool:
    """Would a file system or a tool take ``segment`` for a hidden name (one starting with ``.``)?

    Compared as the instruction-file check compares names (:func:`_plain_fold`): NFKC (a fullwidth or
    small full stop is a dot), case folding, the NTFS aliases (a stream suffix, trailing dots and spaces),
    and leading whitespace dropped; and the 8.3 short names of :data:`HIDDEN_SHORT_NAMES`."""
    plain = _plain_fold(segment).lstrip()
    return plain.startswith(".") or _short_name_aliases(plain, HIDDEN_SHORT_NAMES)


def _is_gitmodules(segment: str) -> bool:
    """``.gitmodules`` in any case or NTFS spelling (its 8.3 names are refused as hidden paths)."""
    return _plain_fold(segment).lstrip() == ".gitmodules"


def decide_incoming_mode(mode: int) -> Decision:
    """May an incoming file have this git mode?  Only a plain file (100644): no symlink (it can point
    outside the clone), no submodule (it fetches another repository), nothing executable, nothing else."""
    if mode == MODE_FILE:
        return allow("incoming-mode")
    if mode == MODE_SYMLINK:
        return deny("incoming-symlink", "a symbolic link is not a note; it could point outside the vault.")
    if mode == MODE_GITLINK:
        return deny("incoming-submodule", "a submodule (gitlink) would make clones fetch another repository.")
    if mode == MODE_EXECUTABLE:
        return deny("incoming-executable", "an executable file is not a note or an attachment.")
    return deny("incoming-mode", f"mode {mode:o} is not a plain file (100644).")


def decide_incoming_folder(policy: Policy, path: str) -> Decision:
    """May an incoming commit hold a folder at ``path``?  (Refused folders are reported once and not entered.)"""
    segments = path.split("/")
    if any(_is_gitmodules(seg) for seg in segments):
        return deny("incoming-submodule", "a .gitmodules entry configures submodules; it never enters a vault.")
    if any(is_hidden_segment(seg) for seg in segments):
        return deny(
            "incoming-hidden-path",
            "hidden files and folders (.obsidian/, .git..., .claude/, .mcp.json, in any spelling: case, "
            "fullwidth dots, trailing dots or spaces, 8.3 short names) stay local to each device.",
        )
    try:
        parsed = FolderPath.parse(path)
    except PathRejected as exc:
        return deny(exc.rule, exc.message)
    return _decide_spelling(policy, path, parsed.value)


def _decide_spelling(policy: Policy, path: str, value: str) -> Decision:
    if value != path:
        return deny("path-not-normalised", "the path is not in Unicode NFC; commit it in NFC (one spelling per name).")
    return decide_name(policy, path)


def decide_incoming_path(policy: Policy, path: str) -> Decision:
    """May an incoming commit add or change a file at ``path``?  A note (``.md``) or an attachment of a type
    the policy allows, at a path the foundation's rules accept, named like no instruction file.  Allowed:
    rule ``incoming-note``, or ``incoming-attachment`` with the media type as its reason."""
    folder = decide_incoming_folder(policy, path)
    if not folder.allowed:
        return folder
    name = path.rsplit("/", 1)[-1]
    if extension_of(name) == "md":
        try:
            NotePath.parse(path)  # the .md suffix in lowercase; the rest FolderPath checked above
        except PathRejected as exc:
            return deny(exc.rule, exc.message)
        return allow("incoming-note")
    media_type = media_type_of(policy.attachment_types, name)
    if not media_type:
        return deny(
            "file-type-refused",
            "this file is neither a note (.md) nor an attachment of a type the policy allows (attachment_types).",
        )
    return allow("incoming-attachment", media_type)


def decide_incoming_size(policy: Policy, kind: Decision, size: int) -> Decision:
    """Is an incoming file of ``size`` bytes small enough?  ``kind`` is what :func:`decide_incoming_path`
    allowed.  Decided from the object's header, before its content is read."""
    if kind.rule == "incoming-note":
        if size > policy.max_note_bytes:
            return deny("note-too-large", f"the note is {size} bytes, over max_note_bytes ({policy.max_note_bytes}).")
        return allow("size")
    if kind.rule == "incoming-attachment":
        if size > policy.max_attachment_bytes:
            return deny(
                "attachment-too-large",
                f"the attachment is {size} bytes, over max_attachment_bytes ({policy.max_attachment_bytes}).",
            )
        return allow("size")
    return deny("file-type-refused", "this file is neither a note nor an allowed attachment.")


def decide_attachment(policy: Policy, name: str, head: bytes, size: int) -> Decision:
    """Is ``name`` an attachment of an allowed type, ``size`` bytes long, whose first bytes ``head`` are
    those of its media type?  (A ``.png`` that is an HTML page or a script is refused.)"""
    media_type = media_type_of(policy.attachment_types, name)
    if not media_type:
        return deny("file-type-refused", "this file is neither a note (.md) nor an allowed attachment type.")
    if size > policy.max_attachment_bytes:
        return deny(
            "attachment-too-large",
            f"the attachment is {size} bytes, over max_attachment_bytes ({policy.max_attachment_bytes}).",
        )
    if not signature_matches(media_type, head):
        return deny(
            "attachment-type-mismatch",
            f"its first bytes are not those of {media_type}, the type its extension names.",
        )
    return allow("incoming-attachment", media_type)


def decide_canvas(data: bytes) -> Decision:
    """Is this ``.canvas`` really a JSON Canvas: one JSON object (UTF-8, an optional byte order mark)?
    The git door looks at its first byte only; the importer, which holds the whole file, parses it."""
    try:
        value = json.loads(data.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        value = None
    if not isinstance(value, dict):
        return deny("attachment-type-mismatch", "it does not parse as a JSON object, as a .canvas must.")
    return allow("canvas-json")


def decide_import_existing(path: str, current: str, incoming: str) -> Decision:
    """May an import write the file whose blob id is ``incoming`` at ``path``, where the vault holds
    ``current`` (a blob id, or ``absent``)?  An import adds, never overwrites: the same bytes are left alone
    (rule ``import-unchanged``), other bytes are refused."""
    if current == "absent":
        return allow("import-new")
    if current == incoming:
        return allow("import-unchanged")
    return deny("import-exists", f"{path} is in the vault with other content; not overwritten.")


def decide_import_folder(policy: Policy, path: str, *, allow_policy_folders: bool) -> Decision:
    """May an import put a file at ``path``, a folder the policy gives a meaning of its own (the inbox: the
    quarantine restricted sessions write to; a protected folder: house rules injected into sessions)?

    A vault's own ``Inbox/`` or ``Rules/`` folder means something else to its owner, so such a file is
    refused, before anything is committed, unless the owner says it is meant (``--allow-policy-folders``);
    ``--into FOLDER`` keeps the vault's folders apart from the policy's.  A folder sessions load that is not
    protected (``projects/``: a project's notes) is no refusal here: its files land, each through the floor
    (:func:`decide_incoming_note`), as its owner's own project notes."""
    if allow_policy_folders:
        return allow("import-folder")
    if policy.is_inbox(path):
        return deny(
            "import-policy-folder",
            f"the policy treats {policy.inbox_root}/ as the inbox: restricted sessions' quarantine, read by reviewers.",
        )
    if policy.is_protected(path):
        return deny("import-policy-folder", "the policy treats this path as protected: house rules sessions load.")
    return allow("import-folder")


def attachment_media_type(policy: Policy, path: str) -> str:
    """The media type the policy gives the file at ``path`` ("" when it is not an attachment it allows)."""
    return media_type_of(policy.attachment_types, path.rsplit("/", 1)[-1])


def decide_attachment_read(policy: Policy, caller: Caller, path: str, size: int) -> Decision:
    """May ``caller`` read the attachment at ``path`` (``size`` bytes)?  Visibility exactly as for a note (a
    private attachment is not there for a restricted caller), then the type and the size: what the vault may
    not hold is not served either (a file pushed before the policy changed)."""
    seen = decide(policy, caller, Action.READ, path)
    if not seen.allowed:
        return seen
    media_type = attachment_media_type(policy, path)
    if not media_type:
        return deny("file-type-refused", "this file is neither a note (.md) nor an allowed attachment type.")
    if size > policy.max_attachment_bytes:
        return deny(
            "attachment-too-large",
            f"the attachment is {size} bytes, over max_attachment_bytes ({policy.max_attachment_bytes}).",
        )
    return allow("attachment-read", media_type)


def decide_attachment_write(policy: Policy, caller: Caller, action: Action, path: str) -> Decision:
    """May ``caller`` create, replace or delete the attachment at ``path``?

    Visibility first (a private path is "no such note" to a restricted caller, as for notes); then only
    trusted callers, and only while ``attachment_writes`` is on: a restricted session writes inbox items,
    and an inbox item stays Markdown.  The rest is the note table (instruction-file names, protected paths)."""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if not can_see(policy, caller, path):
        return deny("no-such-note", "no such note.")
    if caller.tier != "trusted":
        return deny(
            "attachment-write-trusted",
            "only a trusted session may write attachments; a restricted session writes Markdown inbox items.",
        )
    if not policy.attachment_writes:
        return deny("attachment-writes-off", "the policy turns attachment writes through MCP off (attachment_writes).")
    return decide(policy, caller, action, path)


def decide_incoming_note(policy: Policy, path: str, data: bytes) -> Decision:
    """May these exact bytes be the note at ``path``?  UTF-8 without NUL, like every note the server writes;
    where sessions load it at start (:meth:`Policy.is_session_loaded`), the floor must not hold it,
    whoever pushed it."""
    if b"\x00" in data:
        return deny("content-binary", "the note contains NUL bytes.")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return deny("content-not-utf8", "the note is not valid UTF-8.")
    if policy.is_session_loaded(path):
        # a whole file: its leading BOM (Windows editors write one) is an encoding mark, not a hidden character
        verdict = check_item(text, path=path, instruction_files=policy.instruction_files, encoding_mark=True)
        if verdict.held:
            return deny(
                "protected-floor-hold",
                "sessions load this note at start and the floor holds it: "
                + "; ".join(r.as_text() for r in verdict.reasons[:3]),
            )
    return allow("incoming-content")


def decide_commit_size(policy: Policy, *, deleted: int, added: int) -> Decision:
    """May one commit delete ``deleted`` files (renames already left out) and add ``added``?"""
    if deleted > policy.max_deletions_per_commit:
        return deny(
            "too-many-deletions",
            f"the commit deletes {deleted} files; one commit may delete at most {policy.max_deletions_per_commit} "
            "(max_deletions_per_commit; a rename is not a deletion).",
        )
    if added > policy.max_files_per_commit:
        return deny(
            "too-many-files",
            f"the commit adds more than {policy.max_files_per_commit} files (max_files_per_commit).",
        )
    return allow("commit-size")


def decide_range_size(policy: Policy, *, deleted: int, emptied: int, added: int) -> Decision:
    """May one push or fetch -- the whole range it brings, from its base to its new tip -- delete ``deleted``
    files (renames already left out), empty ``emptied`` notes (counted as deletions: a note emptied to
    whitespace is gone to every reader) and add ``added``?  Counted over the range, not per commit, so
    splitting a change across the commits of one push never changes the answer."""
    gone = deleted + emptied
    if gone > policy.max_deletions_per_commit:
        how = f" ({emptied} of them notes emptied to nothing)" if emptied else ""
        return deny(
            "too-many-deletions",
            f"this push or fetch deletes {gone} files, counted over all its commits{how}; one push or fetch may "
            f"delete at most {policy.max_deletions_per_commit} (max_deletions_per_commit; a rename is not a deletion).",
        )
    if added > policy.max_files_per_commit:
        return deny(
            "too-many-files",
            f"this push or fetch adds more than {policy.max_files_per_commit} files, counted over all its commits "
            "(max_files_per_commit).",
        )
    return allow("range-size")


def decide_commit_count(limit: int, count: int) -> Decision:
    """May one update bring ``count`` new commits, ``limit`` at most (the hook's ``max_commits_per_push``)?
    Bounded so one push cannot hold the origin, and every writer queued behind it, for long."""
    if count > limit:
        return deny("too-many-commits", f"the update brings more than {limit} commits (max_commits_per_push).")
    return allow("commit-count")


def decide_inspection_time(policy: Policy, *, overdue: bool) -> Decision:
    """May the inspection of one push go on, ``overdue`` past its ``push_inspection_seconds``?  Past the
    bound the push is refused: what was not seen whole is never accepted."""
    if overdue:
        return deny(
            "incoming-too-slow",
            f"inspecting the push took longer than {policy.push_inspection_seconds:g} s (push_inspection_seconds); "
            "it was refused, not accepted half-seen.",
        )
    return allow("inspection-time")


def decide_case_twin(twin_of: str | None) -> Decision:
    """May a new path stand beside the others of its tip?  Not when it differs from another (a note, or one
    of its folders) only by case or Unicode form (``twin_of``, from :func:`notegate.vault.paths.case_twins`):
    the two are one file on the case-insensitive clones of macOS and Windows vaults."""
    if twin_of is None:
        return allow("case-distinct")
    return deny("path-case-collision", f"it differs only in case or Unicode form from '{twin_of}' beside it.")


def decide_pushed_objects(*, unreferenced: int, pushed_bytes: int, policy: Policy) -> Decision:
    """May a push store the objects it brought?  Every new object must be named by a pushed commit (a
    hand-made pack may carry blobs no tree names: git would keep them), and the whole must fit
    ``max_push_bytes``."""
    if unreferenced:
        return deny(
            "push-unreferenced-object",
            f"the push brings {unreferenced} object(s) that no pushed commit names; git would keep them.",
        )
    if pushed_bytes > policy.max_push_bytes:
        return deny(
            "push-too-large",
            f"the push brings {pushed_bytes} bytes of objects; one push may bring at most {policy.max_push_bytes} "
            "(max_push_bytes).",
        )
    return allow("pushed-objects")


def decide_room(policy: Policy, *, part: str, free_bytes: int) -> Decision:
    """May a new write start while the disk holding ``part`` (the server's clone, a local origin, the state
    database) has ``free_bytes`` free?  Only above ``min_free_bytes``: the margin is what lets the writes
    already under way, the state rows they imply and SQLite's checkpoints finish, so a write is refused whole
    before it starts rather than failing half-way on a full disk."""
    if free_bytes >= policy.min_free_bytes:
        return allow("room")
    return deny(
        "disk-full",
        f"the disk holding {part} has {_mib(free_bytes)} free, below the {_mib(policy.min_free_bytes)} the policy "
        "keeps free (min_free_bytes); nothing was written",
    )


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB"


def decide_fast_forward(descends: bool) -> Decision:
    """May a branch move from its old tip to a new one?  Only forward: history is never rewritten."""
    if descends:
        return allow("fast-forward")
    return deny("push-non-fast-forward", "the new tip does not descend from the old one: this would rewrite history.")


def decide_commit_provenance(message: str, emails: Iterable[str], *, recorded: bool) -> Decision:
    """May a commit that came by git (a push, or the server's fetch) stand in the vault's history?

    Who made a commit is what the server recorded when it made it (the state database's
    ``commit_provenance``, keyed by commit id: ``recorded``), never what the commit says.  A commit the
    server did not record that still speaks in the server's voice -- a ``Notegate-*`` trailer in any
    spelling, or one of the server's identities as author or committer (``emails``) -- is refused: it
    could only be there to be taken for the server's."""
    if recorded:
        return allow("provenance-recorded", "the server made this commit and recorded who asked for it.")
    if carries_notegate_trailer(message):
        return deny(
            "push-forged-provenance",
            "the commit message carries a Notegate-* trailer: only the server writes those, on commits it made.",
        )
    if any(claims_server_identity(email) for email in emails):
        return deny(
            "push-forged-provenance",
            "the commit's author or committer is one of the server's identities (<login>@notegate, "
            "notegate@localhost), but the server did not make it.",
        )
    return allow("provenance-pushed", "a pushed commit, shown as pushed by its committer, never with a tier.")


def decide_ref_update(ref: str, *, deleting: bool, default_branch: str) -> Decision:
    """May a push update ``ref``?  Branches only; the default branch (what the server serves) is never
    deleted."""
    if not ref.startswith("refs/heads/"):
        return deny("push-not-a-branch", "only branches (refs/heads/...) may be pushed to a vault's origin.")
    if deleting and ref == default_branch:
        return deny("push-delete-default-branch", "the default branch is what the server serves; it is never deleted.")
    return allow("ref-update")


def identify_pusher(values: Mapping[str, str]) -> str | None:
    """Who pushes, from the forge's variables (:data:`PUSHER_VARIABLES`, as the hook's environment has them).

    None -- unidentified -- when none is set, or when two name different users (something set one of them
    that should not have); an unidentified pusher is never the owner."""
    names = {values[v].strip() for v in PUSHER_VARIABLES if values.get(v, "").strip()}
    return names.pop() if len(names) == 1 else None


def decide_push(policy: Policy, owner_pushers: Iterable[str], pusher: str | None, path: str) -> Decision:
    """May ``pusher`` change (add, modify or delete) ``path``?  What sessions load at start
    (:meth:`Policy.is_session_loaded`) only the environment's owner may change -- its forge logins
    ``owner_pushers``, which also name notegate's own push account on a remote forge.  Anything else any
    pusher may (the other incoming rules apply to every pusher alike)."""
    if not policy.is_session_loaded(path):
        return allow("push-path")
    if pusher is not None and pusher in tuple(owner_pushers):
        return allow("push-owner")
    who = "an unidentified pusher" if pusher is None else f"'{pusher}', who is not the owner,"
    return deny(
        "push-protected-path",
        f"sessions load {policy.session_loaded_area(path)} (in any case) at start; {who} may not change it.",
    )


# ------------------------------------------------------------ the server's fetch
#: Findings no later commit repairs: a rewritten history stays rewritten, an unreadable object stays unread, a
#: commit forging the server's voice stays in the history a later commit builds on.
NEVER_REVERTED = ("push-non-fast-forward", "incoming-malformed", "push-forged-provenance")


def decide_fetched_finding(rule: str, *, undone_at_tip: bool) -> Decision:
    """Does one finding of a fetched range (from the last good commit to the origin's tip) still count?

    ``undone_at_tip``: the tip no longer holds what the finding is about (a path finding: the tip's entry at
    that path differs from the commit's; a commit-level count: the tip has, at every path the commit changed,
    what the last good commit had -- its net effect is nil, as after a ``git revert``).  Only then does a
    later commit repair it; a rewritten history or an unreadable object never is."""
    if rule in NEVER_REVERTED:
        return deny(rule, "a later commit cannot repair this; only a force-push back to the last good commit can.")
    if not undone_at_tip:
        return deny(rule, "the origin's tip still holds it.")
    return allow("fetch-reverted", "a later commit in the range undid it.")


def decide_fetch(counted: int, *, truncated: bool) -> Decision:
    """May the server move its main to the origin's tip?  Only when no finding of the range still counts
    (:func:`decide_fetched_finding`) and the inspection saw every commit (it stops at a cap of findings)."""
    if truncated:
        return deny("origin-refused", "the inspection stopped at its cap of findings; the range was not seen whole.")
    if counted:
        return deny("origin-refused", f"{counted} finding(s) of the fetched commits still hold at the origin's tip.")
    return allow("fetch-accepted")


def decide_task_reader(caller: Caller, owner: str) -> Decision:
    """May ``caller`` see the server's task notes for an environment (a refused fetch: what the origin holds,
    and how to repair it)?  The environment's owner, in a trusted session: the task is theirs to act on."""
    if caller.tier == "trusted" and caller.login == owner:
        return allow("task-reader")
    return deny("task-owner-only", "task notes are for the environment's owner.")


# ------------------------------------------------------- what the doctor asks of the policy file
def glob_problem(glob: object) -> str | None:
    """Why a policy glob cannot mean what it says, or None when it is a well-formed vault glob.

    Globs match relative, normalised note paths (see :mod:`notegate.globs`): a glob with a leading ``/``, a
    backslash, an empty, ``.`` or ``..`` segment, a hidden segment or a control character never matches a
    note, so a private or protected glob spelt that way silently protects nothing.
    """
    if not isinstance(glob, str) or not glob:
        return "is empty or not text"
    if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in glob):
        return "holds a control or invisible character"
    if glob.startswith("/"):
        return "starts with '/': globs are relative to the vault root"
    if "\\" in glob:
        return "uses a backslash: separate folders with /"
    for segment in glob.split("/"):
        if segment == "":
            return "has an empty segment (a doubled or trailing /)"
        if segment in (".", ".."):
            return f"has a '{segment}' segment, which no note path has"
        if segment.startswith("."):
            return f"has a hidden segment '{segment}', which no note path has"
        if "**" in segment and segment != "**":
            return f"uses ** inside the segment '{segment}': ** must be a whole segment"
    return None


def _route_probes(policy: Policy) -> list[str]:
    """Keys to fill route templates with: a plain one, every folder or file stem named in a guarded glob
    (wildcards filled in), the reserved inbox files' stems and the instruction files' stems."""
    probes = {"x", "rules", "private", "inbox", "readme", "digest"}
    names = [*policy.protected_from_routes, *policy.protected, *policy.inbox_reserved, *policy.instruction_files]
    for glob in names:
        for segment in glob.split("/"):
            probe = segment.casefold().removesuffix(".md").replace("*", "x").replace("?", "x").strip(".")
            probes.add(probe)
    return sorted(p for p in probes if is_slug(p))


def routes_reaching_guarded(policy: Policy) -> tuple[tuple[str, str], ...]:
    """Each (kind, target) where a promotion route could land on a path no route may reach: a guarded glob
    (``protected_from_routes``, ``protected``) or the inbox.  A key that names an instruction file is refused
    per promotion by :meth:`Policy.route_target` and is not a fault of the route."""
    found: list[tuple[str, str]] = []
    for kind, template in policy.routes:
        if not template:
            continue
        for probe in _route_probes(policy):
            target = fill_template(template, probe)
            if policy.reaches_guarded(target) or policy.is_inbox(target):
                found.append((kind, target))
                break
    return tuple(found)


# ------------------------------------------------------------ machine contracts
def decide_contract_door(caller: Caller) -> Decision:
    """May ``caller`` use the contract door at all?  Machines only: a conversation has a model to deliver
    rules to and reaches notes through the MCP tools, never a contract (the second lock on the door)."""
    if caller.client_class == "machine" and caller.tier == "machine":
        return allow("contract-door")
    return deny(
        "contract-not-for-conversations",
        f"a {caller.client_class} credential cannot call contracts: conversations use the MCP tools.",
    )


def decide_contract(caller: Caller, granted: Collection[str], name: str, known: Collection[str]) -> Decision:
    """May this machine call contract ``name``?  Only one it was given at creation that this server ships;
    anything else is "no such contract", in the same words whether it exists or not."""
    door = decide_contract_door(caller)
    if not door.allowed:
        return door
    if name in granted and name in known:
        return allow("contract-granted")
    return deny("no-such-contract", "no such contract for this credential.")


@dataclass(frozen=True)
class PlausibleRange:
    low: float
    high: float


#: What a day's health export may plausibly hold, in the unit the vault records (inclusive bounds). A value
#: outside is dropped loudly, never recorded: an exporter's scale error (grams as kilograms, minutes as hours)
#: lands far outside these. Sources: the limits of human physiology, with generous margins.
HEALTH_RANGES: dict[str, PlausibleRange] = {
    "steps": PlausibleRange(0, 150_000),
    "weight": PlausibleRange(2, 400),  # kg
    "sleep": PlausibleRange(0, 24),  # h
    "resting_heart_rate": PlausibleRange(20, 250),  # 1/min
    "heart_rate": PlausibleRange(20, 250),  # 1/min
    "distance": PlausibleRange(0, 300),  # km
    "active_energy": PlausibleRange(0, 20_000),  # kcal
    "water": PlausibleRange(0, 20),  # L
    "body_fat": PlausibleRange(1, 80),  # %
    "blood_oxygen": PlausibleRange(50, 100),  # %
}


def decide_health_value(metric: str, value: float) -> Decision:
    """May a converted health value be recorded?  Only a known metric, finite, inside its plausible range."""
    bounds = HEALTH_RANGES.get(metric)
    if bounds is None:
        return deny("health-unknown-metric", f"the vault records no metric named {metric!r}.")
    if not math.isfinite(value) or not bounds.low <= value <= bounds.high:
        return deny(
            "health-implausible-value",
            f"{metric} = {value:g} is outside the plausible range {bounds.low:g}..{bounds.high:g}.",
        )
    return allow("health-value")


# -- backups and restores (services/backup.py, services/restore.py) -----------------------------------------
def decide_restore_target(exists: bool, entries: int) -> Decision:
    """May a backup be restored into a directory that ``exists`` with ``entries`` entries?  Only a new or
    empty one: a restore never mixes a backup's state with files already there (or overwrites a vault)."""
    if not exists or entries == 0:
        return allow("restore-target", "a new or empty directory")
    return deny("restore-target-not-empty", f"the target directory is not empty ({entries} entries)")


_STATE_URL = re.compile(r"^postgres(?:ql)?://([^/?#]*)(.*)$", re.DOTALL)


def _percent_decoded(text: str) -> str:
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda m: chr(int(m.group(1), 16)), text)


def decide_state_url_stored(url: str) -> Decision:
    """May ``url`` be written into a config file (``notegate init --state-url``, ``restore --state-url``)?
    Not with a password in it: a config file is copied, backed up and read by every command. libpq reads the
    password itself from ``~/.pgpass`` (or the file PGPASSFILE names) or PGPASSWORD."""
    found = _STATE_URL.match(url)
    if found is None:
        return deny("config-invalid", "the state URL must be a postgresql:// URL")
    userinfo = found.group(1).rpartition("@")[0]
    query = found.group(2).partition("?")[2].partition("#")[0]
    keys = {_percent_decoded(pair.partition("=")[0]).strip().lower() for pair in query.split("&")}
    if ":" in userinfo or "password" in keys:  # libpq decodes %-escapes in keys too
        return deny("state-url-password", "the state URL holds a password, which would be written into the config")
    return allow("state-url", "a PostgreSQL URL without a password")


def decide_new_state_database(rows: int) -> Decision:
    """May init or restore put a deployment's state into a PostgreSQL database that holds ``rows`` rows in
    notegate's tables? Only an empty one: two deployments' tokens and audit never mix, and a restore never
    lands on top of a live state."""
    if rows == 0:
        return allow("new-state-database", "no notegate rows there")
    return deny("state-database-not-empty", f"the state database already holds {rows} rows of a notegate state")


def decide_backup_manifest(
    format_version: int, schema_version: int, *, supported_format: int, supported_schema: int
) -> Decision:
    """May this notegate restore a backup whose manifest has ``format_version`` and a state database of
    ``schema_version``?  Not a newer one of either: its tables or files may mean what this code cannot know."""
    if format_version > supported_format:
        return deny(
            "backup-manifest-newer",
            f"the manifest has format {format_version}; this notegate reads format {supported_format} at most",
        )
    if schema_version > supported_schema:
        return deny(
            "backup-manifest-newer",
            f"the backup's state database has schema {schema_version}; this notegate knows schema "
            f"{supported_schema} at most",
        )
    return allow("backup-manifest", "a manifest this notegate can restore")


def decide_backup_file(
    name: str, *, present: bool, expected_size: int, size: int, expected_sha256: str, sha256: str
) -> Decision:
    """Is the file ``name`` of a backup the one the manifest describes?  Present, of its size, of its hash
    (a shorter file is named truncated; any other difference altered)."""
    if not present:
        return deny("backup-file-missing", f"the backup file {name} is missing")
    if size < expected_size:
        return deny("backup-file-truncated", f"the backup file {name} is truncated ({size} of {expected_size} bytes)")
    if size != expected_size or sha256 != expected_sha256:
        return deny(
            "backup-file-altered", f"the backup file {name} was altered (its SHA-256 differs from the manifest)"
        )
    return allow("backup-file", f"{name} is as the manifest says")
