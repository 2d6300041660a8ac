"""The policy file's values as one frozen :class:`Policy` (its path classes, the inbox and its routes), how
it is built from the ``[policy]`` table, and what the doctor asks of a policy file (globs that cannot match,
routes that reach guarded paths).

The rows themselves (names, defaults, docstrings, enforcers) are the one table in :mod:`notegate.policyfile`;
this module only reads them.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from notegate.globs import any_match, glob_match
from notegate.policy.decision import Decision, allow, deny
from notegate.policy.names import instruction_file_named
from notegate.policyfile import (
    INBOX_ROOT,
    default,
    fill_template,
    is_slug,
    policy_values,
    session_folders,
    template_regex,
)


@dataclass(frozen=True)
class InboxItemRef:
    kind: str
    key: str  # the project (or the capture's slug)
    path: str


@dataclass(frozen=True)
class ProjectLayout:
    """Where one project's notes live, all from the policy: what ``session_start`` reads and what the session
    hooks write (the server sends this with ``session_start``, so a hook never assumes a folder).  ``''``:
    the policy gives that note no place (a route set to '')."""

    handoff: str  # the handoff route's target: read at session start, replaced by a trusted write-back
    log: str  # the log route's target: a trusted write-back adds its entry on top
    summary: str  # the project summary: its "Context to resume" is read at start
    sessions: str  # the folder of the immutable session notes


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
    project_summary: str = default("project_summary")
    session_notes: str = default("session_notes")
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
        return INBOX_ROOT

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

    def project_layout(self, project: str) -> ProjectLayout:
        """The paths of ``project``'s notes (``project`` is a slug: the caller checked it)."""
        return ProjectLayout(
            handoff=fill_template(self.route_template("handoff"), project),
            log=fill_template(self.route_template("log"), project),
            summary=fill_template(self.project_summary, project),
            sessions=self.session_notes.replace("{project}", project),
        )

    def is_session_loaded(self, path: str) -> bool:
        """Is ``path`` what sessions load at start or what routes reach: the protected globs, the digest,
        and the folders of the routes and of the project summaries (the notes ``session_start`` reads)?
        Compared case-insensitively (a case-insensitive clone loads ``HANDOFFS/x.md`` as ``handoffs/x.md``).
        The git door protects these: the floor runs on what is pushed there, and only
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
        folders = _session_folders(self.routes, self.project_summary)
        return next((folder for folder in folders if folded.startswith(folder)), None)

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


@lru_cache(maxsize=16)
def _session_folders(routes: tuple[tuple[str, str], ...], project_summary: str) -> tuple[str, ...]:
    return session_folders(routes, project_summary)


def policy_from_table(table: dict[str, Any]) -> Policy:
    """The policy of a ``[policy]`` table, validated (see :mod:`notegate.policyfile`)."""
    return Policy(**policy_values(table))


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
