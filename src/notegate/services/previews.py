"""Two-step writes: a confirmation counts only for a preview the server itself issued.

Why a key and not a flag: a hosted model could send ``confirmed=true`` on its first call. The server
remembers a digest of exactly what it showed (environment, connector login, tool, path, base revision,
every changed path's new bytes, a move's target), and a confirmation is accepted once, within the policy's
``preview_ttl_seconds``, only if it hashes to a remembered key. Any change to the content, the base or the
caller makes a new key, so an unseen change can never ride on an earlier preview.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from notegate.policy import Caller
from notegate.state import StateDB
from notegate.vault.store import Change


def preview_key(
    caller: Caller, environment: str, op: str, path: str, base: str, changes: Iterable[Change], new_path: str
) -> str:
    digest = hashlib.sha256()
    for part in (environment, caller.connector_id, caller.login, caller.client, op, path, base, new_path):
        digest.update(part.encode("utf-8") + b"\x00")
    for change in changes:
        content = hashlib.sha256(change.data).hexdigest() if change.data is not None else "-"
        digest.update(f"{change.path}={content}\x00".encode())
    return digest.hexdigest()


class Previews:
    """Issued previews, kept in the state database (they survive a restart and are shared by threads)."""

    def __init__(self, state: StateDB, ttl_seconds: float) -> None:
        self.state = state
        self.ttl = ttl_seconds

    def issue(self, key: str, now: float) -> None:
        self.state.remember_preview(key, now + self.ttl, now)

    def redeem(self, key: str, now: float) -> bool:
        """True once for a key issued within the TTL; the key is spent either way."""
        return self.state.take_preview(key, now)
