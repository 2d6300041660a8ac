"""Which console actions need a fresh passkey step-up: one table, one decision (pure: no I/O, no clock).

Why: a console session lives up to 12 hours (``auth/websession.py``); a cookie that old proves a passkey was
used once, not that its person is at the keyboard now. Approving one session's four-hour elevation already
needs a user-verified passkey assertion at most ``elevation_assertion_seconds`` old; every other console
action that grants trust (a token, a passkey, a device key) or writes what sessions load (protected and
session-loaded notes, promotion into the routes' folders) needs the same, or a stolen or forgotten cookie
would mint *permanent* trust where the approval page asks for a fresh check.

The web door maps each of its POST routes to one action name of :data:`CONSOLE_ACTIONS` (a route with no
entry fails the route-table test and the app refuses to build) and asks :func:`decide_console_action` before
the handler runs. The step-up is the age of the session's last user-verified assertion: a console session is
opened only by one (login, enrolment, or the "confirm with passkey" ceremony, which opens a new session).
"""

from __future__ import annotations

from enum import StrEnum

from notegate.policy.decision import Decision, allow, deny
from notegate.policy.settings import Policy


class StepUp(StrEnum):
    """What an action needs beyond a live console session."""

    NONE = "none"  #: takes trust away, or writes nothing sessions load: the session (and CSRF) suffice
    ALWAYS = "always"  #: grants trust or writes what sessions load: a fresh step-up, whatever the target
    GUARDED_PATH = "guarded-path"  #: a note write: a fresh step-up when the path is protected or session-loaded
    OWN = "own"  #: the action carries its own per-request assertion (elevation approval), decided elsewhere
    CEREMONY = "ceremony"  #: a passkey ceremony itself (login, enrolment, the step-up): it *is* the assertion


#: Every console action a POST route may name, and what it needs. A new state-changing route needs a row here.
CONSOLE_ACTIONS: dict[str, StepUp] = {
    # ceremonies and leaving
    "login": StepUp.CEREMONY,
    "enrol": StepUp.CEREMONY,
    "step-up": StepUp.CEREMONY,
    "logout": StepUp.NONE,
    # passkeys: adding one is a new way in, so it needs the person's existing passkey, fresh
    "passkey-add": StepUp.ALWAYS,
    "passkey-revoke": StepUp.NONE,
    # connections: a token is permanent trust (any tier, any class: it outlives every session)
    "token-create": StepUp.ALWAYS,
    "token-revoke": StepUp.NONE,
    "oauth-revoke": StepUp.NONE,
    "device-key": StepUp.ALWAYS,  # no console route yet; the row says what one will need
    # OAuth consent: a hosted client's restricted login (the consent screen follows a login in practice)
    "consent-answer": StepUp.NONE,
    # elevation: approval carries its own fresh assertion (decide_elevation_approval); denial takes away
    "elevation-answer": StepUp.OWN,
    "elevation-assertion": StepUp.CEREMONY,
    "grant-revoke": StepUp.NONE,
    # the inbox: promotion writes the routes' folders, which sessions load; hold and delete stay in inbox/
    "inbox-promote": StepUp.ALWAYS,
    "inbox-hold": StepUp.NONE,
    "inbox-delete": StepUp.NONE,
    # members: an invitation lets a new person in, a removal ends a person's every credential (docs/how-to/members.md)
    "member-invite": StepUp.ALWAYS,
    "member-remove": StepUp.ALWAYS,
    "join": StepUp.CEREMONY,  # an invited person's first passkey: the invitation is the authority
    "oidc-start": StepUp.CEREMONY,  # sends the browser to the provider; what comes back is checked there
    "oidc-link": StepUp.ALWAYS,  # linking one's own provider account is a new way in (asked by oidc-start)
    # the tools gateway (docs/how-to/tools-gateway.md): a mount gives callers an upstream account's tools, a
    # credential decides what the upstream acts as, an approval shows a listing to every caller, and a verify
    # answers yes or no about a stored secret (an oracle: not for a stale cookie); a removal takes away
    "tools-mount-create": StepUp.ALWAYS,
    "tools-mount-remove": StepUp.NONE,
    "tools-credential-set": StepUp.ALWAYS,
    "tools-credential-verify": StepUp.ALWAYS,
    "tools-approve": StepUp.ALWAYS,
    "tools-oauth-start": StepUp.ALWAYS,  # the grant it starts lets the gateway act as an upstream account
    # LiveSync devices: a device key reads and writes every note the database holds; cutting one off is the
    # owner's word (a stale cookie must not lock the owner's phone out either)
    "livesync-device-add": StepUp.ALWAYS,
    "livesync-device-revoke": StepUp.ALWAYS,
    # notes
    "note-edit": StepUp.GUARDED_PATH,
    "note-restore": StepUp.GUARDED_PATH,
}


def guarded_note(policy: Policy, path: str | None) -> bool:
    """Is ``path`` a note sessions load or only trusted writers change (protected, the digest, the routes'
    and session_start's folders)? None (a path that does not parse) counts as guarded: deciding for an
    unparsed spelling could let a variant of ``rules/`` through."""
    if path is None:
        return True
    return policy.is_protected(path) or policy.is_session_loaded(path) or policy.names_instruction_file(path)


def decide_console_action(policy: Policy, action: str, *, step_up_age: float | None, guarded: bool = False) -> Decision:
    """May a signed-in person do ``action`` now, their last user-verified passkey assertion being
    ``step_up_age`` seconds old (None: no session)? ``guarded`` says whether a note write's path is
    protected or session-loaded (:func:`guarded_note`). Needs a step-up at most
    ``elevation_assertion_seconds`` old where :data:`CONSOLE_ACTIONS` says so; an action not in the table is
    refused (a route added without a decision does nothing)."""
    need = CONSOLE_ACTIONS.get(action)
    if need is None:
        return deny("console-action-unknown", f"the console action '{action}' has no step-up decision.")
    if need is StepUp.CEREMONY or need is StepUp.NONE or need is StepUp.OWN:
        return allow("console-action", f"'{action}' needs no step-up ({need.value})")
    if need is StepUp.GUARDED_PATH and not guarded:
        return allow("console-action", f"'{action}' on a path sessions do not load")
    limit = policy.elevation_assertion_seconds
    if step_up_age is None or step_up_age < 0 or step_up_age > limit:
        age = "no" if step_up_age is None or step_up_age < 0 else f"a {int(min(step_up_age, 1e9))} s old"
        what = "this note is protected or loaded by sessions" if need is StepUp.GUARDED_PATH else "it grants trust"
        return deny(
            "step-up-required",
            f"'{action}' needs a passkey check at most {limit} s old ({what}); this session has {age} check.",
        )
    return allow("console-step-up", f"'{action}' with a {int(step_up_age)} s old passkey check")
