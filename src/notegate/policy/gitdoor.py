"""The git door: what an incoming commit may carry (:mod:`notegate.sync.incoming` reads git and asks here),
who may push what (:mod:`notegate.sync.prereceive`), and when the server's fetch may move its main to the
origin's tip. Every function takes facts already read from git: names, modes, sizes, bytes.

Imports of an existing vault (``notegate import``) ask the same questions of the files they bring in.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from notegate.errors import PathRejected
from notegate.policy.decision import Decision, allow, deny
from notegate.policy.names import _is_gitmodules, decide_name, is_hidden_segment
from notegate.policy.notes import decide_attachment_kind
from notegate.policy.settings import Policy
from notegate.safety.attachments import extension_of, media_type_of, signature_matches
from notegate.safety.floor import check_item
from notegate.vault.paths import FolderPath, NotePath
from notegate.vault.provenance import carries_notegate_trailer, claims_server_identity

#: Forge variables naming who pushes, in the order they are believed (README, "The git door"): an SSH key's
#: forced command, GitLab, Gitea/Forgejo, git http-backend behind a web server's authentication.
PUSHER_VARIABLES = ("NOTEGATE_PUSHER", "GL_USERNAME", "GITEA_PUSHER_NAME", "REMOTE_USER")


MODE_FILE = 0o100644


MODE_EXECUTABLE = 0o100755


MODE_SYMLINK = 0o120000


MODE_GITLINK = 0o160000


MODE_TREE = 0o040000


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
    kind = decide_attachment_kind(policy, media_type, size)
    if not kind.allowed:
        return kind
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
