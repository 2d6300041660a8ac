"""The note door: may this caller see, read or write this path (:func:`decide`), the restricted tier's
inbox, the two-step preview, write quotas, reviews and authors, captures' keys, attachments served to a
caller, and task notes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from notegate.policy.caller import Author, Caller, decide_reader, sees_private
from notegate.policy.decision import READ_ACTIONS, Action, Decision, allow, deny
from notegate.policy.names import decide_name
from notegate.policy.settings import Policy
from notegate.policy.vocab import ClientClass, Tier
from notegate.safety.attachments import media_type_of
from notegate.vault.paths import AttachmentPath, NotePath


def can_see(policy: Policy, caller: Caller, path: str) -> bool:
    """Visibility: what a caller may not see is not there (it is never 'denied')."""
    if sees_private(caller):
        return True
    return not policy.is_private(path)


def decide_credential(caller: Caller, allow_secret: bool) -> Decision:
    """A text that looks like it holds a credential: may this caller commit it?

    A secret committed once stays in every clone forever. Restricted and hosted callers never may (a
    hosted chat cannot be told apart from its prompt); a trusted workstation may only when it insists.
    """
    if caller.tier != Tier.TRUSTED or caller.client_class == ClientClass.HOSTED:
        return deny("credential-found", "the text contains what looks like a credential")
    if not allow_secret:
        return deny("credential-warning", "the text contains what looks like a credential")
    return allow("credential-insisted")


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


def decide_folder(folder: str, visible_notes: int) -> Decision:
    """Is ``folder`` there for a caller who can see ``visible_notes`` notes under it?  Git keeps no empty
    folders, so a folder exists only through its notes; counting only the notes the caller may see makes a
    folder of private notes "no such folder" to a restricted caller, in the same words as one never made."""
    if not folder or visible_notes > 0:
        return allow("folder")
    return deny("no-such-folder", f"no such folder: {folder}.")


def decide(policy: Policy, caller: Caller, action: Action, note: NotePath | AttachmentPath) -> Decision:
    """May ``caller`` do ``action`` to the note (or attachment) at ``note``?  A parsed path: what is not a
    safe path was refused by :meth:`NotePath.parse` before a decision is asked, so this never re-checks one."""
    path = note.value
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
    if caller.tier == Tier.TRUSTED:
        if policy.is_protected(path):
            return allow("protected-trusted", "protected path: trusted callers only, always two-step.")
        return allow("trusted-write")
    if caller.tier == Tier.RESTRICTED:
        return _decide_restricted_write(policy, action, path)
    return deny("unknown-tier", f"tier '{caller.tier}' may not {action.value} notes.")


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
    who: Tier = Tier.RESTRICTED  # whose settings they are: restricted | machine (named in a refusal)


def write_limits(policy: Policy, caller: Caller) -> WriteLimits | None:
    """Which write quota applies to ``caller``'s commits, at every door (the recipe's commit_as asks).

    Trusted connector logins have none: the owner's own programs and sessions. A machine token has its own
    (``machine_*_per_hour``): a cron posts on its own schedule, not a conversation's, so the owner may size it
    apart. Every other caller is held to the restricted one. The quota is per connector login either way."""
    if caller.tier == Tier.TRUSTED:
        return None
    if caller.tier == Tier.MACHINE or caller.client_class == ClientClass.MACHINE:
        writes, size, who = policy.machine_writes_per_hour, policy.machine_bytes_per_hour, Tier.MACHINE
    else:
        writes, size, who = policy.restricted_writes_per_hour, policy.restricted_bytes_per_hour, Tier.RESTRICTED
    if not writes and not size:
        return None
    return WriteLimits(writes, size, who=who)


def decide_quota(limits: WriteLimits, writes: int, used_bytes: int, size: int) -> Decision:
    """May one more write of ``size`` bytes go in, after ``writes`` writes of ``used_bytes`` in the window?"""
    if limits.writes and writes + 1 > limits.writes:
        sessions = "machine tokens" if limits.who == Tier.MACHINE else "restricted sessions"
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
    if caller.tier != Tier.TRUSTED:
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


def attachment_media_type(policy: Policy, path: str) -> str:
    """The media type the policy gives the file at ``path`` ("" when it is not an attachment it allows)."""
    return media_type_of(policy.attachment_types, path.rsplit("/", 1)[-1])


def decide_attachment_read(policy: Policy, caller: Caller, attachment: AttachmentPath, size: int) -> Decision:
    """May ``caller`` read the attachment at ``path`` (``size`` bytes)?  Visibility exactly as for a note (a
    private attachment is not there for a restricted caller), then the type and the size: what the vault may
    not hold is not served either (a file pushed before the policy changed)."""
    seen = decide(policy, caller, Action.READ, attachment)
    if not seen.allowed:
        return seen
    media_type = attachment_media_type(policy, attachment.value)
    kind = decide_attachment_kind(policy, media_type, size)
    return kind if not kind.allowed else allow("attachment-read", media_type)


def decide_attachment_kind(policy: Policy, media_type: str, size: int) -> Decision:
    """Is a file of the policy's ``media_type`` ("" when the policy allows none for its name), ``size`` bytes
    long, an attachment at all?  The part every door's attachment check shares (read, write, push, import)."""
    if not media_type:
        return deny("file-type-refused", "this file is neither a note (.md) nor an allowed attachment type.")
    if size > policy.max_attachment_bytes:
        return deny(
            "attachment-too-large",
            f"the attachment is {size} bytes, over max_attachment_bytes ({policy.max_attachment_bytes}).",
        )
    return allow("attachment-kind", media_type)


def decide_attachment_write(policy: Policy, caller: Caller, action: Action, attachment: AttachmentPath) -> Decision:
    """May ``caller`` create, replace or delete the attachment at ``path``?

    Visibility first (a private path is "no such note" to a restricted caller, as for notes); then only
    trusted callers, and only while ``attachment_writes`` is on: a restricted session writes inbox items,
    and an inbox item stays Markdown.  The rest is the note table (instruction-file names, protected paths)."""
    reader = decide_reader(caller)
    if not reader.allowed:
        return reader
    if not can_see(policy, caller, attachment.value):
        return deny("no-such-note", "no such note.")
    if caller.tier != Tier.TRUSTED:
        return deny(
            "attachment-write-trusted",
            "only a trusted session may write attachments; a restricted session writes Markdown inbox items.",
        )
    if not policy.attachment_writes:
        return deny("attachment-writes-off", "the policy turns attachment writes through MCP off (attachment_writes).")
    return decide(policy, caller, action, attachment)


def decide_task_reader(caller: Caller, owner: str) -> Decision:
    """May ``caller`` see the server's task notes for an environment (a refused fetch: what the origin holds,
    and how to repair it)?  The environment's owner, in a trusted session: the task is theirs to act on."""
    if caller.tier == Tier.TRUSTED and caller.login == owner:
        return allow("task-reader")
    return deny("task-owner-only", "task notes are for the environment's owner.")


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
