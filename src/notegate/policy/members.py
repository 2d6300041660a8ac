"""Who is a member of an environment, and who may invite or remove one (pure: no I/O, no clock).

Why here: membership decides what every door lets a person do, so the rule that combines the config file's
seed with the state database's rows, and the checks on an invitation or a removal, are values a test can
drive with any input. The owner is never a member row: the config file names them, and only there.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from notegate.policy.decision import Decision, allow, deny
from notegate.policy.vocab import ClientClass

#: A login a person is invited under: the shape passkeys, audit rows and commit trailers already use.
LOGIN = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}\Z")


def effective_members(seed: Iterable[str], rows: Iterable[tuple[str, bool]]) -> tuple[str, ...]:
    """The members of one environment: every login with a live row, and every login of the config file's
    ``members`` that has no row at all (not yet seeded). A row that was removed wins over the file: removing
    a member from the console holds until the owner invites them again (the doctor reports the file)."""
    recorded = dict(rows)
    live = [login for login, alive in recorded.items() if alive]
    unseeded = [login for login in seed if login not in recorded]
    return tuple(dict.fromkeys([*live, *unseeded]))


def decide_member_invite(owner: str, members: Iterable[str], login: object) -> Decision:
    """May ``login`` be invited to an environment owned by ``owner`` whose members are ``members``?"""
    if not isinstance(login, str) or not LOGIN.match(login):
        return deny("member-login-invalid", "this login is not a plain lowercase name")
    if login == owner:
        return deny("member-is-owner", f"'{login}' owns this environment")
    if login in set(members):
        return deny("member-exists", f"'{login}' is already a member of this environment")
    return allow("member-invite", f"'{login}' may be invited")


def decide_member_removal(owner: str, members: Iterable[str], login: object) -> Decision:
    """May ``login`` be removed from an environment owned by ``owner``? Only a current member; never the owner
    (an environment without its owner would have nobody to approve anything)."""
    if not isinstance(login, str):
        return deny("member-unknown", "no member was named")
    if login == owner:
        return deny("member-is-owner", f"'{login}' owns this environment and cannot be removed from it")
    if login not in set(members):
        return deny("member-unknown", f"'{login}' is not a member of this environment")
    return allow("member-remove", f"'{login}' may be removed")


def decide_member_caller(
    members: Iterable[str], owner: str, login: str, client_class: str, removed: Iterable[str] = ()
) -> Decision:
    """Is a connector login's person still allowed in its environment? Refused only when its person was a member
    and was removed (``removed``: the logins whose membership row ended) and is not one again: so removing a
    member refuses their running sessions at their next call, whatever credential survived. Machines are bound
    to their token, not to a person; a credential minted for a login that never was a member (the library's
    own callers, fixed connectors) is judged by its token as before."""
    if client_class == ClientClass.MACHINE or login == owner or login in set(members):
        return allow("member", f"'{login}' belongs to this environment")
    if login in set(removed):
        return deny("member-removed", f"'{login}' is no longer a member of this environment")
    return allow("member", f"'{login}' was never removed from this environment")


def decide_member_use(owner: str, members: Iterable[str], login: str) -> Decision:
    """May ``login`` act in an environment owned by ``owner`` whose members are ``members`` (mint a token
    there, be given an OAuth grant for it, enrol a LiveSync device)?  Its owner or one of its members."""
    if login == owner or login in set(members):
        return allow("member-use", f"'{login}' belongs to this environment")
    return deny("member-unknown", f"'{login}' is neither the owner nor a member of this environment")
