"""The ``[policy]`` table of the policy file: every key, its type, its default and its help line.

Why its own module: the rows below are the only source of every policy default. ``Policy`` (in
``notegate.policy``) takes its field defaults from them, ``notegate init`` writes its commented config from
them, and the README's reference is checked against them; so a default is written once. Validation runs at
start in every enforcer (server, CLI, hooks, doctor): an unknown key, a wrong type or a route that could
reach a protected path stops start-up with a hint naming the key.  Pure: it reads already-parsed TOML.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from notegate.errors import ConfigError
from notegate.globs import any_match, glob_match
from notegate.network import LOCALHOST, LOOPBACK_V4, LOOPBACK_V6
from notegate.safety.attachments import DEFAULT_ATTACHMENT_TYPES, SIGNATURES
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES, validate_instruction_files
from notegate.settings import Setting as PolicySetting
from notegate.settings import check_table

SLUG = r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?"
_SLUG_RE = re.compile(rf"{SLUG}\Z")
_TEMPLATE = re.compile(r"^((?:[a-z0-9_-]+/)+)\{(project|slug)\}\.md$")
_FOLDER_TEMPLATE = re.compile(r"^((?:[a-z0-9_-]+/)+)\{project\}$")
#: The quarantine's folder: every inbox template must lie under it (the templates themselves are settings).
INBOX_ROOT = "inbox"
#: The readable list of held items; a reserved inbox file (its row below names it too).
HELD_PATH = f"{INBOX_ROOT}/_held.md"

#: RFC 8252 loopback redirects: any port on the three loopback spellings (notegate.network's names).
_LOOPBACK_ANY_PORT = tuple(f"http://{host}:*" for host in (LOOPBACK_V4, f"[{LOOPBACK_V6}]", LOCALHOST))
#: The callbacks of claude.ai / Claude's apps and of ChatGPT connectors, and RFC 8252 loopback redirects (any
#: port on the three loopback spellings) for CLI clients.  Sources: shared/STACK.md, issue 10.
OAUTH_REDIRECT_DEFAULTS = (
    "https://claude.ai/api/mcp/auth_callback",
    "https://claude.com/api/mcp/auth_callback",
    "https://chatgpt.com/connector_platform_oauth_redirect",
    *_LOOPBACK_ANY_PORT,
)


@lru_cache(maxsize=64)
def template_regex(template: str) -> re.Pattern[str]:
    prefix, _, suffix = template.partition("{")
    _, _, rest = suffix.partition("}")
    return re.compile(re.escape(prefix) + f"({SLUG})" + re.escape(rest) + r"\Z")


def fill_template(template: str, key: str) -> str:
    return re.sub(r"\{(?:project|slug)\}", key, template)


def is_slug(value: str) -> bool:
    return bool(_SLUG_RE.match(value))


POLICY_SETTINGS: tuple[PolicySetting, ...] = (  # the keys of [policy]
    PolicySetting(
        "private",
        list,
        ["private/**"],
        "Globs of notes invisible to restricted callers.",
        enforced_by=("notegate.policy:Policy.is_private",),
    ),
    PolicySetting(
        "protected",
        list,
        ["rules/**"],
        "Globs only trusted callers may change, always through a two-step write.",
        enforced_by=("notegate.policy:Policy.is_protected", "notegate.policy:Policy.reaches_guarded"),
    ),
    PolicySetting(
        "max_note_bytes",
        int,
        1 << 20,
        "Largest note accepted, in bytes of UTF-8.",
        enforced_by=(
            "notegate.services.writechecks:WriteChecks.encoded_content",
            "notegate.services.importer:_decide_file",
            "notegate.doors.http:create_app",
        ),
    ),
    PolicySetting(
        "two_step_classes",
        list,
        ["hosted"],
        "Client classes whose writes must be previewed before confirming.",
        enforced_by=("notegate.policy:two_step_reason", "notegate.policy:inbox_write_needs_preview"),
    ),
    PolicySetting(
        "fetch_interval_seconds",
        (int, float),
        5.0,
        "How often the server fetches the origin.",
        enforced_by=("notegate.doors.http:sync_loop", "notegate.cli.serve:cmd_mcp"),
    ),
    PolicySetting(
        "repack_loose_objects",
        int,
        2000,
        "Roll up the server's clone and a local origin past this many loose objects (a push leaves them) or 50 packs.",
        enforced_by=("notegate.services.runtime:Runtime.maintain",),
    ),
    PolicySetting(
        "min_free_bytes",
        int,
        64 << 20,
        "Refuse new writes [disk-full] while a disk holding the server's clone, a local origin or the SQLite state "
        "has less free than this, so what is under way always has room to finish.",
        enforced_by=("notegate.policy:decide_room", "notegate.services.diskspace:check_room"),
    ),
    PolicySetting(
        "preview_ttl_seconds",
        int,
        1800,
        "How long a two-step preview may be confirmed.",
        enforced_by=("notegate.services.notes:NotesService.__init__",),
    ),
    PolicySetting(
        "instruction_files",
        list,
        list(DEFAULT_INSTRUCTION_FILES),
        "Names of files agents load as instructions; the floor holds any inbox item naming one.",
        enforced_by=(
            "notegate.policy:Policy.names_instruction_file",
            "notegate.policy:decide_name",
            "notegate.services.inbox:InboxService.floor",
        ),
    ),
    PolicySetting(
        "inbox",
        dict,
        {
            "handoff": "inbox/handoffs/{project}.md",
            "log": "inbox/log/{project}.md",
            "decision": "inbox/decisions/{project}.md",
            "capture": "inbox/captures/{slug}.md",
        },
        "Inbox kinds and the item path each writes (restricted callers).",
        enforced_by=("notegate.policy:Policy.inbox_item", "notegate.policy:Policy.inbox_path"),
    ),
    PolicySetting(
        "inbox_reserved",
        list,
        [HELD_PATH, "inbox/README.md"],
        "Inbox files no restricted caller may touch.",
        enforced_by=("notegate.policy:Policy.is_reserved",),
    ),
    PolicySetting(
        "routes",
        dict,
        {
            "handoff": "handoffs/{project}.md",
            "log": "log/{project}.md",
            "decision": "design/{project}.md",
            "capture": "",
        },
        "Where a promoted item of each kind goes ('' = no route).",
        enforced_by=("notegate.policy:Policy.route_template",),
    ),
    PolicySetting(
        "protected_from_routes",
        list,
        ["rules/**", "private/**", "inbox/**"],
        "Globs no route may ever reach (checked at start and again at every promotion).",
        enforced_by=("notegate.policy:Policy.reaches_guarded",),
    ),
    PolicySetting(
        "two_step_inbox",
        bool,
        False,
        "Whether inbox writes (create/append only) need a preview too.",
        enforced_by=("notegate.policy:two_step_reason", "notegate.policy:inbox_write_needs_preview"),
    ),
    PolicySetting(
        "notice_interval_seconds",
        int,
        900,
        "Repeat the inbox notice after this long.",
        enforced_by=("notegate.services.inbox:InboxService.notice",),
    ),
    PolicySetting(
        "session_gate_classes",
        list,
        ["hosted"],
        "Client classes that must call session_start and pass its handle to every knowledge tool.",
        enforced_by=("notegate.policy:needs_session_handle",),
    ),
    PolicySetting(
        "session_idle_seconds",
        int,
        12 * 3600,
        "A session handle expires after this long unused.",
        enforced_by=(
            "notegate.services.sessions:SessionsService.check",
            "notegate.services.sessions:SessionsService.start",
        ),
    ),
    PolicySetting(
        "digest_path",
        str,
        "rules/digest.md",
        "The rules digest injected at session start.",
        enforced_by=("notegate.services.sessions:SessionsService.start",),
    ),
    PolicySetting(
        "project_summary",
        str,
        "projects/{project}.md",
        "Each project's summary: session_start loads its 'Context to resume', the session hooks rebuild its "
        "Recent sessions block (folders, then {project}.md).",
        enforced_by=("notegate.policy:Policy.project_layout", "notegate.policy:Policy.session_loaded_area"),
    ),
    PolicySetting(
        "session_notes",
        str,
        "sessions/{project}",
        "The folder of each project's immutable session notes, written by the session hooks.",
        enforced_by=("notegate.policy:Policy.project_layout",),
    ),
    PolicySetting(
        "review_batch_size",
        int,
        20,
        "Inbox items per model call of the scheduled reviewer.",
        enforced_by=("notegate.services.review:ReviewJob.run",),
    ),
    PolicySetting(
        "reflect_state_path",
        str,
        "sessions/reflector-state.md",
        "Where the reflector writes the session state.",
        enforced_by=("notegate.services.reflect:ReflectJob._reflect",),
    ),
    PolicySetting(
        "reflect_min_interval_seconds",
        int,
        300,
        "The reflector skips a run started sooner than this after the last.",
        enforced_by=("notegate.services.reflect:ReflectJob._run_locked",),
    ),
    PolicySetting(
        "restricted_writes_per_hour",
        int,
        120,
        "Commits one restricted connector login may make per hour (0 = no limit).",
        enforced_by=("notegate.policy:write_limits",),
    ),
    PolicySetting(
        "restricted_bytes_per_hour",
        int,
        2 << 20,
        "Bytes of note text one restricted connector login may commit per hour (0 = no limit).",
        enforced_by=("notegate.policy:write_limits",),
    ),
    PolicySetting(
        "machine_writes_per_hour",
        int,
        120,
        "Commits one machine token may make per hour through the contracts (0 = no limit).",
        enforced_by=("notegate.policy:write_limits",),
    ),
    PolicySetting(
        "machine_bytes_per_hour",
        int,
        2 << 20,
        "Bytes of note text one machine token may commit per hour through the contracts (0 = no limit).",
        enforced_by=("notegate.policy:write_limits",),
    ),
    PolicySetting(
        "connector_open_tasks",
        int,
        20,
        "Open task notes one connector login may leave the owner per kind; past it none is added (0 = none).",
        enforced_by=("notegate.policy:decide_connector_task",),
    ),
    # -- OAuth: the authorization server hosted clients connect through
    PolicySetting(
        "oauth_max_registrations",
        int,
        100,
        "Dynamic client registrations kept at most; at it the oldest never-consented one makes room.",
        enforced_by=("notegate.auth.oauth:NotegateOAuthProvider.register_client",),
    ),
    PolicySetting(
        "oauth_redirect_allowlist",
        list,
        list(OAUTH_REDIRECT_DEFAULTS),
        "Redirect URIs an OAuth client may use (exact; 'http://127.0.0.1:*' = that loopback host, any port).",
        enforced_by=(
            "notegate.auth.oauth:NotegateOAuthProvider.register_client",
            "notegate.auth.oauth_core:OAuthCore.start",
        ),
    ),
    PolicySetting(
        "oauth_code_seconds",
        int,
        60,
        "An authorization code is single-use and lives this long.",
        enforced_by=("notegate.auth.oauth_core:OAuthCore.approve",),
    ),
    PolicySetting(
        "oauth_access_token_seconds",
        int,
        3600,
        "An OAuth access token lives this long.",
        enforced_by=("notegate.auth.oauth_core:OAuthCore._mint",),
    ),
    PolicySetting(
        "oauth_refresh_token_seconds",
        int,
        30 * 86400,
        "An OAuth refresh token (rotated on every use) lives this long.",
        enforced_by=("notegate.auth.oauth_core:OAuthCore._mint",),
    ),
    PolicySetting(
        "oauth_consent_seconds",
        int,
        600,
        "A consent request must be answered within this long.",
        enforced_by=("notegate.auth.oauth_core:OAuthCore._live", "notegate.auth.oauth_core:OAuthCore.sweep"),
    ),
    PolicySetting(
        "oauth_unused_registration_seconds",
        int,
        86400,
        "A registration never used within this long (and holding no live token) is swept.",
        enforced_by=("notegate.auth.oauth_core:OAuthCore.sweep",),
    ),
    PolicySetting(
        "oauth_default_scope",
        str,
        "notes",
        "The scope granted when a client asks for none.",
        enforced_by=("notegate.auth.oauth:NotegateOAuthProvider.__init__", "notegate.doors.http:create_app"),
    ),
    PolicySetting(
        "elevation_link_seconds",
        int,
        600,
        "An elevation request's approval link (and its code) lives this long.",
        enforced_by=("notegate.auth.grants:Grants.request",),
    ),
    PolicySetting(
        "elevation_grant_seconds",
        int,
        4 * 3600,
        "An owner-approved elevation grant is valid this long.",
        enforced_by=("notegate.auth.grants:Grants._approve",),
    ),
    PolicySetting(
        "elevation_pending_cap",
        int,
        5,
        "Unanswered elevation requests one connector login may have at once.",
        enforced_by=("notegate.policy:decide_elevation_request",),
    ),
    PolicySetting(
        "elevation_assertion_seconds",
        int,
        300,
        "Approving an elevation, and every console action that grants trust or writes what sessions load (a "
        "token, a passkey, promotion, a protected note), needs a passkey assertion (user verified) at most this old.",
        enforced_by=("notegate.policy:decide_elevation_approval", "notegate.policy:decide_console_action"),
    ),
    # -- the git door: what incoming commits may carry (pre-receive hook, fetch, sync)
    PolicySetting(
        "max_deletions_per_commit",
        int,
        20,
        "Files one push or fetch may delete, counted over the whole range it brings (a rename is not a "
        "deletion; a note emptied to whitespace is); more refuses it.",
        enforced_by=("notegate.policy:decide_commit_size",),
    ),
    PolicySetting(
        "max_files_per_commit",
        int,
        2000,
        "Files one push or fetch may add, counted over the whole range it brings; more refuses it (notegate "
        "import pushes batches of it).",
        enforced_by=("notegate.policy:decide_commit_size", "notegate.services.importer:import_folder"),
    ),
    PolicySetting(
        "max_commits_per_push",
        int,
        1000,
        "Commits one push may bring (the pre-receive hook); more refuses the push before any is inspected "
        "[too-many-commits]. Bounds how long one push holds the origin (a busy vault's week of MCP writes is "
        "a few hundred commits; push more in several pushes).",
        enforced_by=("notegate.sync.prereceive:check_push",),
    ),
    PolicySetting(
        "push_inspection_seconds",
        (int, float),
        60,
        "How long the pre-receive hook may inspect one push; past it the push is refused "
        "[incoming-too-slow], never accepted half-seen.",
        enforced_by=("notegate.sync.prereceive:check_push",),
    ),
    PolicySetting(
        "max_push_bytes",
        int,
        256 << 20,
        "Bytes one push may bring (its pack, 256 MiB): `notegate init` and `notegate hooks install` set the "
        "origin's receive.maxInputSize to it, so git refuses a larger pack before storing it, and the hook "
        "refuses a push whose objects exceed it [push-too-large].",
        enforced_by=(
            "notegate.policy:decide_pushed_objects",
            "notegate.services.vaultinit:init_directory",
            "notegate.doctor.origins:_check_pack_bound",
        ),
    ),
    PolicySetting(
        "sync_interval_seconds",
        (int, float),
        30,
        "How often `notegate sync` commits a workstation vault's changes, fetches, replays and pushes.",
        enforced_by=("notegate.sync.daemon:run_loop",),
    ),
    PolicySetting(
        "attachment_types",
        dict,
        dict(DEFAULT_ATTACHMENT_TYPES),
        "Attachments a vault may hold: extension -> media type (its first bytes are checked; SVG never).",
        enforced_by=("notegate.policy:decide_incoming_path", "notegate.policy:decide_attachment"),
    ),
    PolicySetting(
        "max_attachment_bytes",
        int,
        20 << 20,
        "Largest attachment accepted, in bytes (20 MiB).",
        enforced_by=(
            "notegate.policy:decide_incoming_size",
            "notegate.policy:decide_attachment_kind",
            "notegate.services.importer:_decide_file",
        ),
    ),
    PolicySetting(
        "attachment_writes",
        bool,
        True,
        "Whether trusted MCP callers may write attachments (write_attachment); restricted callers never may.",
        enforced_by=("notegate.policy:decide_attachment_write",),
    ),
    PolicySetting(
        "contract_max_body_bytes",
        int,
        64 << 10,
        "Largest request body a machine contract accepts (POST /contracts/NAME); a contract may cap lower.",
        enforced_by=("notegate.services.contracts:ContractsService.body_limit",),
    ),
    PolicySetting(
        "journal_folder",
        str,
        "journal",
        "Where the health-daily contract keeps the day notes: FOLDER/YYYY/YYYY-MM-DD.md.",
        enforced_by=("notegate.contracts.health_daily:journal_path",),
    ),
)

_ROWS = {setting.name: setting for setting in POLICY_SETTINGS}


def as_policy_value(value: Any) -> Any:
    """A TOML value as ``Policy`` holds it: lists as tuples, tables as tuples of (key, value) pairs."""
    if isinstance(value, list):
        return tuple(value)
    if isinstance(value, dict):
        return tuple(value.items())
    return value


def default(name: str) -> Any:
    """The default of one ``[policy]`` key, from its row."""
    return as_policy_value(_ROWS[name].default)


def policy_values(table: dict[str, Any]) -> dict[str, Any]:
    """Validate the ``[policy]`` table: unknown keys and wrong types stop start-up. Lists become tuples and
    tables become tuples of pairs, as :class:`notegate.policy.Policy` holds them."""
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
    # Imported here: the classes are the policy package's, and that package reads this module's rows.
    from notegate.policy.vocab import ClientClass

    for cls in (*values["two_step_classes"], *values["session_gate_classes"]):
        if cls not in tuple(ClientClass):
            raise ConfigError(
                f"[policy] two_step_classes names an unknown class '{cls}'",
                remedy=f"Classes: {', '.join(ClientClass)}.",
            )
    if values["max_note_bytes"] <= 0 or values["max_note_bytes"] > 64 << 20:
        raise ConfigError("[policy] max_note_bytes must be between 1 and 64 MiB")
    if not 1 <= values["review_batch_size"] <= 50:
        raise ConfigError("[policy] review_batch_size must be between 1 and 50 (the review schema's cap)")
    if not 1024 <= values["contract_max_body_bytes"] <= 1 << 20:
        raise ConfigError("[policy] contract_max_body_bytes must be between 1 KiB and 1 MiB")
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*(?:/[a-z0-9][a-z0-9_-]*)*", values["journal_folder"]):
        raise ConfigError("[policy] journal_folder must be a relative folder of lowercase names, e.g. journal")
    for key in ("digest_path", "reflect_state_path"):
        value = values[key]
        if not value.endswith(".md") or value.startswith(("/", ".")) or ".." in value.split("/"):
            raise ConfigError(f"[policy] {key} must be a relative note path ending in .md")
    if any_match(values["protected"], values["reflect_state_path"]) or values["reflect_state_path"].startswith(
        INBOX_ROOT + "/"
    ):
        raise ConfigError("[policy] reflect_state_path may not be a protected or inbox path")
    folders = session_folders(values["routes"], values["project_summary"])
    if values["reflect_state_path"].casefold().startswith(folders):
        # Those are loaded at session start or reached by routes; a model's summary belongs elsewhere.
        raise ConfigError(
            f"[policy] reflect_state_path may not be under {', '.join(folders)} (the routes' folders and the "
            "project summaries': sessions load them)"
        )
    if values["restricted_writes_per_hour"] < 0 or values["restricted_bytes_per_hour"] < 0:
        raise ConfigError("[policy] restricted_writes_per_hour and restricted_bytes_per_hour must be 0 or more")
    for key in ("machine_writes_per_hour", "machine_bytes_per_hour", "connector_open_tasks"):
        if values[key] < 0:
            raise ConfigError(f"[policy] {key} must be 0 or more", remedy=_ROWS[key].help)
    for key in (
        "oauth_max_registrations",
        "oauth_code_seconds",
        "oauth_access_token_seconds",
        "oauth_refresh_token_seconds",
        "oauth_consent_seconds",
        "oauth_unused_registration_seconds",
        "elevation_link_seconds",
        "elevation_grant_seconds",
        "elevation_pending_cap",
        "elevation_assertion_seconds",
    ):
        if values[key] <= 0:
            raise ConfigError(f"[policy] {key} must be above 0", remedy=_ROWS[key].help)
    for entry in values["oauth_redirect_allowlist"]:
        if entry.endswith(":*") and entry not in _LOOPBACK_ANY_PORT:
            raise ConfigError(
                f"[policy] oauth_redirect_allowlist: '{entry}' uses ':*', which only loopback hosts may",
                remedy="Write other redirect URIs exactly; ':*' is for "
                + ", ".join(u.removesuffix(":*") for u in _LOOPBACK_ANY_PORT)
                + ".",
            )
    if values["fetch_interval_seconds"] <= 0:
        raise ConfigError("[policy] fetch_interval_seconds must be positive")
    if values["min_free_bytes"] < 0:
        raise ConfigError("[policy] min_free_bytes must be 0 or more", remedy=_ROWS["min_free_bytes"].help)
    _check_git_door(values)
    return values


_EXTENSION = re.compile(r"[a-z0-9]{1,16}\Z")


def _check_git_door(values: dict[str, Any]) -> None:
    """The incoming-commit limits and the attachment types: every media type named must be one notegate can
    check by its first bytes (so SVG, which may carry script, cannot be allowed)."""
    for key in (
        "max_deletions_per_commit",
        "max_files_per_commit",
        "sync_interval_seconds",
        "max_commits_per_push",
        "push_inspection_seconds",
        "max_push_bytes",
    ):
        if values[key] <= 0:
            raise ConfigError(f"[policy] {key} must be above 0", remedy=_ROWS[key].help)
    if not 0 < values["max_attachment_bytes"] <= 1 << 30:
        raise ConfigError("[policy] max_attachment_bytes must be between 1 and 1 GiB")
    for ext, media_type in values["attachment_types"]:
        if not _EXTENSION.match(ext) or ext == "md":
            raise ConfigError(
                f"[policy] attachment_types: '{ext}' must be a lowercase extension without its dot, not md",
                remedy='Write extensions such as png = "image/png"; notes (.md) are not attachments.',
            )
        if media_type not in SIGNATURES:
            raise ConfigError(
                f"[policy] attachment_types.{ext} = '{media_type}' is not a media type notegate can check",
                remedy=f"Checked media types: {', '.join(sorted(SIGNATURES))}. SVG is never accepted (it may "
                "carry script).",
            )


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
        if not _TEMPLATE.match(template) or not template.startswith(INBOX_ROOT + "/"):
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
    # The session hooks write the summary and the session notes directly, like a route's target.
    summary, notes = values["project_summary"], values["session_notes"]
    if not _TEMPLATE.match(summary) or "{slug}" in summary:
        raise ConfigError(f"[policy] project_summary = '{summary}' must look like '<folder>/{{project}}.md'")
    if not _FOLDER_TEMPLATE.match(notes):
        raise ConfigError(f"[policy] session_notes = '{notes}' must look like '<folder>/{{project}}'")
    targets = [(f"routes.{kind}", template) for kind, template in values["routes"] if template]
    targets += [("project_summary", summary), ("session_notes", notes + "/x.md")]
    for name, template in targets:
        for probe in sorted(p for p in probes if is_slug(p)):
            target = fill_template(template, probe)
            if any(glob_match(g, target) for g in guarded) or target.casefold().startswith(INBOX_ROOT + "/"):
                raise ConfigError(
                    f"[policy] {name} = '{template}' could reach '{target}', a path no route may reach",
                    remedy="Point routes at ordinary folders such as handoffs/, log/ or design/.",
                )


def session_folders(routes: Any, project_summary: str) -> tuple[str, ...]:
    """The folders sessions load at start besides the digest: those of the routes' targets (the handoff is
    read from its route) and of the project summaries, casefolded with their trailing ``/``."""
    templates = [t for _, t in routes if t] + [project_summary]
    return tuple(sorted({t.rsplit("/", 1)[0].casefold() + "/" for t in templates if "/" in t}))
