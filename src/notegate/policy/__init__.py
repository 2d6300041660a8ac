"""Pure decisions: may this caller do this action to this path?

Theory of operation
-------------------
* Every door and service asks here; nothing decides tiers or path classes anywhere else.
* Decisions are values (:class:`Decision`) carrying the rule's name and a reason a model can act on.
  The last branch of every decision denies: a case nobody thought of is refused, not allowed.
* Path classes come from globs in the policy file (matched case-insensitively, so ``PRIVATE/x.md`` is as
  private as ``private/x.md``); code holds no path constants.
* This package does no I/O: the policy table is parsed by :func:`policy_from_table` from the already
  loaded TOML, and the clock is a parameter where time matters.

The map
-------
One place, split by door so each module reads in one sitting; every public name is re-exported here, so
callers import from ``notegate.policy`` and never need to know which module holds a decision.

* :mod:`~notegate.policy.decision` -- :class:`Decision`, :func:`allow`, :func:`deny` and the note verbs
  (:class:`Action`): what every other module returns.
* :mod:`~notegate.policy.names` -- instruction-file and hidden names as the clones' file systems fold them.
* :mod:`~notegate.policy.settings` -- the :class:`Policy` values (path classes, inbox, routes) and what the
  doctor asks of a policy file. The rows and defaults are in :mod:`notegate.policyfile`.
* :mod:`~notegate.policy.caller` -- :class:`Caller`, fixed connectors, tiers by default, device keys,
  environments, Host, metrics, connections, token names, console owners.
* :mod:`~notegate.policy.notes` -- the note door: :func:`decide`, the inbox, two-step, quotas, reviews,
  attachments served, task notes.
* :mod:`~notegate.policy.oauth` -- redirect URIs, registration, elevation requests and answers, grants.
* :mod:`~notegate.policy.gitdoor` -- incoming commits, pushes, fast-forwards, provenance, case twins, imports,
  the server's fetch.
* :mod:`~notegate.policy.files` -- one file (mode, path, size, content) and one change's counts (deletions
  with renames left out, emptied notes, files), the same for the server, the hook, the fetch and sync.
* :mod:`~notegate.policy.contracts` -- machine contracts, health values, backups and restores.
* :mod:`~notegate.policy.console` -- which console actions need a fresh passkey step-up.
* :mod:`~notegate.policy.tools` -- the tools gateway: immutable pins, typed mount fields, which mounted tools a
  caller sees and calls.

Import order is the order above: each module imports only the ones before it (``names`` names
:class:`Policy` for type checkers only).
"""

from __future__ import annotations

from notegate.globs import any_match, folder_could_hold, glob_match
from notegate.policy.caller import (
    FIXED_CONNECTORS,
    Author,
    Caller,
    DeviceProof,
    decide_connection,
    decide_connection_slot,
    decide_console_owner,
    decide_console_revoke,
    decide_device_tier,
    decide_environment,
    decide_host,
    decide_metrics_reader,
    decide_peer_connection,
    decide_person,
    decide_reader,
    decide_token_environment,
    decide_token_name,
    default_tier,
    fixed_caller,
    fixed_client,
    metrics_environments,
    needs_session_handle,
    sees_private,
    sync_caller,
)
from notegate.policy.console import CONSOLE_ACTIONS, StepUp, decide_console_action, guarded_note
from notegate.policy.contracts import (
    HEALTH_RANGES,
    PlausibleRange,
    decide_backup_file,
    decide_backup_manifest,
    decide_contract,
    decide_contract_door,
    decide_health_value,
    decide_new_state_database,
    decide_restore_target,
    decide_state_url_stored,
)
from notegate.policy.decision import READ_ACTIONS, Action, Decision, allow, deny
from notegate.policy.files import (
    RENAME_LIMIT,
    FileBytes,
    FileFacts,
    count_deletions,
    decide_change_size,
    decide_file,
    is_blank,
)
from notegate.policy.gitdoor import (
    MODE_EXECUTABLE,
    MODE_FILE,
    MODE_GITLINK,
    MODE_SYMLINK,
    MODE_TREE,
    NEVER_REVERTED,
    PUSHER_VARIABLES,
    decide_attachment,
    decide_canvas,
    decide_case_twin,
    decide_commit_count,
    decide_commit_provenance,
    decide_commit_size,
    decide_fast_forward,
    decide_fetch,
    decide_fetched_finding,
    decide_import_existing,
    decide_import_folder,
    decide_incoming_folder,
    decide_incoming_mode,
    decide_incoming_note,
    decide_incoming_path,
    decide_incoming_size,
    decide_inspection_time,
    decide_push,
    decide_pushed_objects,
    decide_range_size,
    decide_ref_update,
    identify_pusher,
)
from notegate.policy.members import (
    decide_member_caller,
    decide_member_invite,
    decide_member_removal,
    effective_members,
)
from notegate.policy.names import HIDDEN_SHORT_NAMES, decide_name, instruction_file_named, is_hidden_segment
from notegate.policy.notes import (
    CAPTURE_NUMBERED,
    RESTRICTED_REASON,
    InboxKeys,
    WriteLimits,
    attachment_media_type,
    can_see,
    capture_keys,
    decide,
    decide_attachment_kind,
    decide_attachment_read,
    decide_attachment_write,
    decide_author,
    decide_connector_task,
    decide_credential,
    decide_folder,
    decide_quota,
    decide_review,
    decide_room,
    decide_task_reader,
    inbox_write_needs_preview,
    requires_two_step,
    two_step_reason,
    write_limits,
)
from notegate.policy.oauth import (
    GrantFacts,
    decide_elevation_approval,
    decide_elevation_denial,
    decide_elevation_request,
    decide_grant,
    decide_redirect_uri,
    decide_registration,
    decide_registration_redirects,
)
from notegate.policy.oidc import decide_authorized_party, decide_provider_step_up
from notegate.policy.settings import (
    InboxItemRef,
    Policy,
    ProjectLayout,
    glob_problem,
    policy_from_table,
    routes_reaching_guarded,
)
from notegate.policy.tools import (
    CATALOG_KINDS,
    decide_mount,
    decide_mount_tool,
    decide_pin,
    namespaced,
    split_namespaced,
)
from notegate.policyfile import CLIENT_CLASSES, POLICY_SETTINGS, SLUG, TIERS, is_slug
from notegate.safety.names import DEFAULT_INSTRUCTION_FILES

__all__ = [  # every public name of the package, and what other modules take from here besides the decisions
    "CAPTURE_NUMBERED",
    "CATALOG_KINDS",
    "CLIENT_CLASSES",
    "CONSOLE_ACTIONS",
    "DEFAULT_INSTRUCTION_FILES",
    "FIXED_CONNECTORS",
    "HEALTH_RANGES",
    "HIDDEN_SHORT_NAMES",
    "MODE_EXECUTABLE",
    "MODE_FILE",
    "MODE_GITLINK",
    "MODE_SYMLINK",
    "MODE_TREE",
    "NEVER_REVERTED",
    "POLICY_SETTINGS",
    "PUSHER_VARIABLES",
    "READ_ACTIONS",
    "RENAME_LIMIT",
    "RESTRICTED_REASON",
    "SLUG",
    "TIERS",
    "Action",
    "Author",
    "Caller",
    "Decision",
    "DeviceProof",
    "FileBytes",
    "FileFacts",
    "GrantFacts",
    "InboxItemRef",
    "InboxKeys",
    "PlausibleRange",
    "Policy",
    "ProjectLayout",
    "StepUp",
    "WriteLimits",
    "allow",
    "any_match",
    "attachment_media_type",
    "can_see",
    "capture_keys",
    "count_deletions",
    "decide",
    "decide_attachment",
    "decide_attachment_kind",
    "decide_attachment_read",
    "decide_attachment_write",
    "decide_author",
    "decide_authorized_party",
    "decide_backup_file",
    "decide_backup_manifest",
    "decide_canvas",
    "decide_case_twin",
    "decide_change_size",
    "decide_commit_count",
    "decide_commit_provenance",
    "decide_commit_size",
    "decide_connection",
    "decide_connection_slot",
    "decide_connector_task",
    "decide_console_action",
    "decide_console_owner",
    "decide_console_revoke",
    "decide_contract",
    "decide_contract_door",
    "decide_credential",
    "decide_device_tier",
    "decide_elevation_approval",
    "decide_elevation_denial",
    "decide_elevation_request",
    "decide_environment",
    "decide_fast_forward",
    "decide_fetch",
    "decide_fetched_finding",
    "decide_file",
    "decide_folder",
    "decide_grant",
    "decide_health_value",
    "decide_host",
    "decide_import_existing",
    "decide_import_folder",
    "decide_incoming_folder",
    "decide_incoming_mode",
    "decide_incoming_note",
    "decide_incoming_path",
    "decide_incoming_size",
    "decide_inspection_time",
    "decide_member_caller",
    "decide_member_invite",
    "decide_member_removal",
    "decide_metrics_reader",
    "decide_mount",
    "decide_mount_tool",
    "decide_name",
    "decide_new_state_database",
    "decide_peer_connection",
    "decide_person",
    "decide_pin",
    "decide_provider_step_up",
    "decide_push",
    "decide_pushed_objects",
    "decide_quota",
    "decide_range_size",
    "decide_reader",
    "decide_redirect_uri",
    "decide_ref_update",
    "decide_registration",
    "decide_registration_redirects",
    "decide_restore_target",
    "decide_review",
    "decide_room",
    "decide_state_url_stored",
    "decide_task_reader",
    "decide_token_environment",
    "decide_token_name",
    "default_tier",
    "deny",
    "effective_members",
    "fixed_caller",
    "fixed_client",
    "folder_could_hold",
    "glob_match",
    "glob_problem",
    "guarded_note",
    "identify_pusher",
    "inbox_write_needs_preview",
    "instruction_file_named",
    "is_blank",
    "is_hidden_segment",
    "is_slug",
    "metrics_environments",
    "namespaced",
    "needs_session_handle",
    "policy_from_table",
    "requires_two_step",
    "routes_reaching_guarded",
    "sees_private",
    "split_namespaced",
    "sync_caller",
    "two_step_reason",
    "write_limits",
]
