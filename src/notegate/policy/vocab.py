"""The closed vocabularies of a caller: its :class:`Tier` and its :class:`ClientClass`, declared once.

Why enums: a tier or a class spelled as a free string in six modules drifts (one module's list grows a
value another never learns); one type that every door, service and the policy file's checks use cannot.
They are :class:`~enum.StrEnum`, so a value read back from the state database, a token's claims or the
policy file compares equal to its member, prints as its plain name and lands in SQL and JSON unchanged.
This module imports nothing of the package: everything else sits above it.
"""

from __future__ import annotations

from enum import StrEnum


class Tier(StrEnum):
    """How far a caller is trusted: decided from credentials (device key, owner-approved grant), never
    from anything a caller writes."""

    RESTRICTED = "restricted"  # the default: reads what is not private, writes inbox items only
    TRUSTED = "trusted"  # a device key of the owner's machine, or a grant the owner approved
    MACHINE = "machine"  # a cron or an app: typed contracts only, never the knowledge tools


class ClientClass(StrEnum):
    """What kind of program holds the credential."""

    HOSTED = "hosted"  # web and phone chat apps over OAuth
    WORKSTATION = "workstation"  # the owner's own machine: a static bearer (+ device key)
    MACHINE = "machine"  # a cron or an app calling contracts


#: The tiers an owner may give a conversation's token (a machine token's tier is its class's).
CONVERSATION_TIERS = (Tier.RESTRICTED, Tier.TRUSTED)
