"""The owner's actions on the tools gateway, shared by the CLI (``notegate tools …``) and the console's Tools
pages: mounts (create, remove), credentials (store, sealed), held tool listings (show as a diff, approve).

Every action of the console names the environment it works in (the one the owner owns, picked by the page):
a mount of another environment is "no such mount" here, in the same words as one that does not exist. Nothing
here can read a credential back: storing goes through :class:`~notegate.tools.sealing.CredentialSealer`, and
the only answer about a stored value is its variable's name and when it was stored.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from notegate.errors import NotegateError
from notegate.policy.tools import decide_mount
from notegate.tools.sealing import CredentialSealer

#: The longest credential the console or the CLI stores (an API key, an OAuth client secret, a PEM key).
MAX_CREDENTIAL_CHARS = 16384
#: The longest diff of one held listing a page shows (a description is text an upstream chose).
MAX_LISTING_DIFF_CHARS = 20000


@dataclass(frozen=True)
class HeldListing:
    """One tool listing seen and not approved: what changed against the last approved listing of that tool."""

    tool: str
    digest: str
    seen_at: float
    new: bool  #: no listing of this tool was ever approved
    diff: str  #: unified diff, approved -> held, of the listing as pretty JSON


def _pretty(listing: str) -> str:
    try:
        return json.dumps(json.loads(listing), indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    except ValueError:
        return listing + "\n"


def listing_diff(approved: str | None, held: str, tool: str) -> str:
    old = _pretty(approved) if approved is not None else ""
    text = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            _pretty(held).splitlines(keepends=True),
            fromfile=f"{tool} (approved)" if approved is not None else f"{tool} (never approved)",
            tofile=f"{tool} (held)",
        )
    )
    if len(text) > MAX_LISTING_DIFF_CHARS:
        text = text[:MAX_LISTING_DIFF_CHARS] + "\n… diff truncated …\n"
    return text


def _names(raw: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """A form's "A B, C" (or the CLI's repeated flags) as a tuple of names, duplicates dropped."""
    items = raw.replace(",", " ").split() if isinstance(raw, str) else list(raw)
    return tuple(dict.fromkeys(items))


class ToolsAdmin:
    def __init__(self, state) -> None:
        self.state = state

    # -- mounts
    def mounts(self, environment: str | None) -> list[dict[str, Any]]:
        """The live mounts of ``environment`` (None: all), with the names of the credentials they hold."""
        out = []
        for mount in self.state.mounts():
            if environment is not None and mount["environment"] != environment:
                continue
            out.append({**mount, "credentials": self.state.credential_names(str(mount["name"]))})
        return out

    def mount(self, environment: str, name: str) -> dict[str, Any]:
        for mount in self.mounts(environment):
            if mount["name"] == name:
                return mount
        raise NotegateError(f"there is no mount named '{name[:40]}' in this environment", rule="tools-unknown")

    def create_mount(
        self,
        *,
        name: str,
        catalog: str,
        account: str,
        environment: str,
        variables: str | tuple[str, ...],
        write_tools: str | tuple[str, ...],
        now: float,
    ) -> dict[str, Any]:
        variables, write_tools = _names(variables), _names(write_tools)
        decision = decide_mount(name, catalog, account, environment, variables, write_tools)
        if not decision.allowed:
            raise NotegateError(decision.reason, rule=decision.rule)
        if catalog not in {str(r["name"]) for r in self.state.catalog_entries()}:
            raise NotegateError(f"there is no catalog entry named '{catalog}'", rule="tools-unknown")
        taken = self.state.mount_taken(name, catalog, account, environment)
        if taken is not None:  # live or removed: a removed mount's name and place are never given out again
            raise NotegateError(
                f"the mount '{taken}' already is (or was) this name or this entry, account and environment",
                rule="tools-mount-exists",
            )
        row = {
            "name": name,
            "catalog": catalog,
            "account": account,
            "environment": environment,
            "variables": variables,
            "write_tools": write_tools,
            "created_at": now,
        }
        self.state.add_mount(row)
        return row

    def remove_mount(self, environment: str, name: str, now: float) -> None:
        """End a mount and drop its sealed credentials (its calls' audit stays)."""
        self.mount(environment, name)
        self.state.remove_mount(name, now)

    # -- credentials (write-only)
    def store_credential(self, environment: str, mount: str, variable: str, value: str, now: float) -> None:
        self.mount(environment, mount)
        if not value:
            raise NotegateError("the credential is empty", rule="bad-argument")
        if len(value) > MAX_CREDENTIAL_CHARS:
            raise NotegateError(f"the credential is longer than {MAX_CREDENTIAL_CHARS} characters", rule="bad-argument")
        CredentialSealer(self.state).store(mount, variable, value, now)

    # -- held listings
    def held(self, environment: str, mount: str) -> list[HeldListing]:
        """Each listing of ``mount`` waiting for approval, as a diff against its tool's last approved listing."""
        self.mount(environment, mount)
        approved = self.state.approved_listings(mount)
        return [
            HeldListing(
                tool=str(row["tool"]),
                digest=str(row["digest"]),
                seen_at=float(row["seen_at"]),
                new=str(row["tool"]) not in approved,
                diff=listing_diff(approved.get(str(row["tool"])), str(row["listing"]), str(row["tool"])),
            )
            for row in self.state.pending_tools(mount)
        ]

    def approve(self, environment: str, mount: str, shown: str, by: str, now: float) -> int:
        """Approve exactly the listings the owner was shown (``shown``: "tool@digest …" from the page), never a
        listing that arrived after the page was drawn."""
        self.mount(environment, mount)
        pairs = [item.partition("@") for item in shown.split()]
        if not pairs or any(not tool or not digest for tool, _at, digest in pairs):
            raise NotegateError("the approval names no listing that was shown", rule="bad-argument")
        return sum(self.state.approve_tools(mount, by, now, tool=tool, digest=digest) for tool, _at, digest in pairs)
