"""The LiveSync gate's devices (migration 5): enrol, look up by kid, list, revoke, stamp last use.

A device row holds the public key only. The gate reads it on every request (one primary-key lookup), so a
revocation counts at the next request, in every gate process that shares the state database.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from notegate.state.db import StateCore


@dataclass(frozen=True)
class LiveSyncDevice:
    kid: str
    name: str
    environment: str
    person: str
    connector: str
    algorithm: str
    public_key: str | None
    created_at: float
    revoked_at: float | None
    last_used_at: float | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> LiveSyncDevice:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})


class LiveSyncTables(StateCore):
    """The livesync_devices table."""

    def add_livesync_device(self, device: LiveSyncDevice) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO livesync_devices (kid, name, environment, person, connector, algorithm, public_key,"
                " created_at, revoked_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    device.kid,
                    device.name,
                    device.environment,
                    device.person,
                    device.connector,
                    device.algorithm,
                    device.public_key,
                    device.created_at,
                    device.revoked_at,
                    device.last_used_at,
                ),
            )

    def enrol_livesync_device(
        self, *, kid: str, name: str, environment: str, person: str, algorithm: str, public_key: str, now: float
    ) -> None:
        """A new device, live from ``now``, acting as connector login ``livesync:<kid>`` (the enrolment's row:
        the doors that enrol, CLI and console, build it here, below their layer)."""
        self.add_livesync_device(
            LiveSyncDevice(
                kid=kid,
                name=name,
                environment=environment,
                person=person,
                connector=f"livesync:{kid}",
                algorithm=algorithm,
                public_key=public_key,
                created_at=now,
                revoked_at=None,
                last_used_at=None,
            )
        )

    def livesync_device(self, kid: str) -> LiveSyncDevice | None:
        rows = self.query("SELECT * FROM livesync_devices WHERE kid = ?", (kid,))
        return LiveSyncDevice.from_row(rows[0]) if rows else None

    def livesync_devices(
        self, environment: str | None = None, *, include_revoked: bool = False
    ) -> list[LiveSyncDevice]:
        sql = "SELECT * FROM livesync_devices WHERE (? IS NULL OR environment = ?)"
        if not include_revoked:
            sql += " AND revoked_at IS NULL"
        rows = self.query(sql + " ORDER BY environment, name, created_at", (environment, environment))
        return [LiveSyncDevice.from_row(r) for r in rows]

    def revoke_livesync_devices(self, environment: str, name: str, *, now: float) -> list[str]:
        """Revoke every live device of this name in this environment: its public key is deleted, so nothing
        can verify a token of it again. Returns the kids revoked."""
        with self.tx() as db:
            kids = [
                str(r[0])
                for r in db.execute(
                    "SELECT kid FROM livesync_devices WHERE environment = ? AND name = ? AND revoked_at IS NULL",
                    (environment, name),
                )
            ]
            for kid in kids:
                db.execute(
                    "UPDATE livesync_devices SET public_key = NULL, revoked_at = ? WHERE kid = ?",
                    (now, kid),
                )
        return kids

    def touch_livesync_device(self, kid: str, *, now: float) -> None:
        """Stamp last use, at most once a minute per device (a replicating device asks many times a minute)."""
        with self.tx() as db:
            db.execute(
                "UPDATE livesync_devices SET last_used_at = ? WHERE kid = ?"
                " AND (last_used_at IS NULL OR last_used_at < ?)",
                (now, kid, now - 60),
            )

    def record_livesync_revisions(self, environment: str, kid: str, keys: list[str], *, now: float) -> None:
        """Which device wrote these revisions (keys from livesync.documents.revision_key): the first writer of a
        revision is its author (a revision replicated back by another device keeps its author)."""
        if not keys:
            return
        with self.tx() as db:
            db.executemany(
                "INSERT INTO livesync_revisions (key, environment, kid, at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (key) DO NOTHING",
                [(key, environment, kid, now) for key in keys],
            )

    def livesync_revision_author(self, environment: str, key: str) -> str | None:
        rows = self.query("SELECT kid FROM livesync_revisions WHERE key = ? AND environment = ?", (key, environment))
        return str(rows[0][0]) if rows else None
