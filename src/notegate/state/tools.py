"""The tools gateway's rows (migration 6, TOOLS_SCHEMA): public keys, catalog pins, mounts, sealed credentials,
tool-list approvals and the per-call audit.

Nothing here can return a credential in clear: the database holds only what was sealed to the tools process's
recipient (notegate.tools.sealing), and the one method that hands sealed values out (``sealed_credentials``) is
called by the tools process, the only holder of the key that opens them."""

from __future__ import annotations

import json
import sqlite3

from notegate.state.db import StateCore, _storable


class ToolsTables(StateCore):
    """tools_keys, tools_catalog, tools_mounts, tools_credentials, tools_approvals, tools_calls."""

    # ---------------------------------------------------------------- keys
    def tools_key(self, purpose: str) -> str | None:
        """The public half stored for ``purpose`` ('seal' or 'mint'), or None."""
        rows = self.query("SELECT public_key FROM tools_keys WHERE purpose = ?", (purpose,))
        return str(rows[0]["public_key"]) if rows else None

    def set_tools_key(self, purpose: str, public_key: str, now: float) -> None:
        """Record (or replace) a public half. Replacing the seal recipient leaves older credentials sealed to
        the old one: the tools process cannot open them and says so (set them again)."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO tools_keys (purpose, public_key, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT (purpose) DO UPDATE SET public_key = excluded.public_key,"
                " created_at = excluded.created_at",
                (purpose, public_key, now),
            )

    def add_tools_key_once(self, purpose: str, public_key: str, now: float) -> str:
        """Record a public half unless one is there; returns the one in force (two replicas starting at once
        keep the first)."""
        with self.tx(claim=f"tools-key:{purpose}") as db:
            db.execute(
                "INSERT INTO tools_keys (purpose, public_key, created_at) VALUES (?, ?, ?)"
                " ON CONFLICT (purpose) DO NOTHING",
                (purpose, public_key, now),
            )
        return self.tools_key(purpose) or public_key

    # ------------------------------------------------------------- catalog
    def add_catalog_entry(self, row: dict[str, object]) -> None:
        with self.tx() as db:
            db.execute(
                "INSERT INTO tools_catalog (name, kind, package, version, digest, program, created_at)"
                " VALUES (:name, :kind, :package, :version, :digest, :program, :created_at)"
                " ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, package = excluded.package,"
                " version = excluded.version, digest = excluded.digest, program = excluded.program",
                row,
            )

    def catalog_entries(self) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM tools_catalog ORDER BY name")

    # -------------------------------------------------------------- mounts
    def add_mount(self, row: dict[str, object]) -> None:
        """A new mount; ``variables`` and ``write_tools`` are lists, stored as JSON arrays of names."""
        values = {
            **row,
            "variables": json.dumps(list(row["variables"])),
            "write_tools": json.dumps(list(row["write_tools"])),
        }
        with self.tx() as db:
            db.execute(
                "INSERT INTO tools_mounts (name, catalog, account, environment, variables, write_tools, created_at)"
                " VALUES (:name, :catalog, :account, :environment, :variables, :write_tools, :created_at)",
                values,
            )

    def mounts(self) -> list[dict[str, object]]:
        """The live mounts, their list columns decoded."""
        rows = self.query("SELECT * FROM tools_mounts WHERE removed_at IS NULL ORDER BY name")
        return [
            {
                **dict(r),
                "variables": tuple(json.loads(r["variables"])),
                "write_tools": tuple(json.loads(r["write_tools"])),
            }
            for r in rows
        ]

    def mount_taken(self, name: str, catalog: str, account: str, environment: str) -> str | None:
        """The mount, live or removed, that already holds this name or this entry, account and environment.
        A removed mount's name is never reused: a new mount must not inherit its approvals or its audit."""
        rows = self.query(
            "SELECT name FROM tools_mounts WHERE name = ? OR (catalog = ? AND account = ? AND environment = ?)",
            (name, catalog, account, environment),
        )
        return str(rows[0][0]) if rows else None

    def remove_mount(self, name: str, now: float) -> int:
        with self.tx() as db:
            cur = db.execute(
                "UPDATE tools_mounts SET removed_at = ? WHERE name = ? AND removed_at IS NULL", (now, name)
            )
            db.execute("DELETE FROM tools_credentials WHERE mount = ?", (name,))
            return cur.rowcount

    # --------------------------------------------------------- credentials
    def store_sealed_credential(self, mount: str, variable: str, sealed: str, now: float) -> None:
        """Keep a credential already sealed by the caller (write-only: nothing here reads it back for the
        process that stored it)."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO tools_credentials (mount, variable, sealed, created_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (mount, variable) DO UPDATE SET sealed = excluded.sealed,"
                " created_at = excluded.created_at",
                (mount, variable, sealed, now),
            )

    def credential_names(self, mount: str) -> list[str]:
        """Which variables of a mount have a credential stored (names only)."""
        return [
            str(r[0])
            for r in self.query("SELECT variable FROM tools_credentials WHERE mount = ? ORDER BY variable", (mount,))
        ]

    def sealed_credentials(self, mount: str) -> dict[str, str]:
        """variable -> sealed value, for the tools process to open (sealed: useless without its key)."""
        return {
            str(r[0]): str(r[1])
            for r in self.query("SELECT variable, sealed FROM tools_credentials WHERE mount = ?", (mount,))
        }

    # ----------------------------------------------------------- approvals
    def see_tool_listing(self, mount: str, tool: str, digest: str, listing: str, now: float) -> None:
        """Record a tool's listing as seen (pending until approved); a digest seen before keeps its row."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO tools_approvals (mount, tool, digest, listing, seen_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (mount, tool, digest) DO NOTHING",
                (mount, tool, digest, listing, now),
            )

    def approved_digests(self, mount: str) -> dict[str, set[str]]:
        """tool -> the digests of its listing the owner approved."""
        out: dict[str, set[str]] = {}
        for r in self.query(
            "SELECT tool, digest FROM tools_approvals WHERE mount = ? AND approved_at IS NOT NULL", (mount,)
        ):
            out.setdefault(str(r[0]), set()).add(str(r[1]))
        return out

    def approved_listings(self, mount: str) -> dict[str, str]:
        """tool -> the listing (JSON) of its most recently approved digest: what a held listing is compared to."""
        out: dict[str, str] = {}
        for r in self.query(
            "SELECT tool, listing FROM tools_approvals WHERE mount = ? AND approved_at IS NOT NULL"
            " ORDER BY approved_at, seen_at",
            (mount,),
        ):
            out[str(r[0])] = str(r[1])
        return out

    def pending_tools(self, mount: str | None = None) -> list[sqlite3.Row]:
        """Listings seen and not approved (what the owner is asked about)."""
        return self.query(
            "SELECT mount, tool, digest, listing, seen_at FROM tools_approvals WHERE approved_at IS NULL"
            " AND (? IS NULL OR mount = ?) ORDER BY mount, tool, seen_at",
            (mount, mount),
        )

    def approve_tools(self, mount: str, by: str, now: float, tool: str | None = None, digest: str | None = None) -> int:
        """Approve the pending listings of a mount (one tool's, or one digest's, when named)."""
        with self.tx() as db:
            cur = db.execute(
                "UPDATE tools_approvals SET approved_at = ?, approved_by = ? WHERE mount = ? AND approved_at IS NULL"
                " AND (? IS NULL OR tool = ?) AND (? IS NULL OR digest = ?)",
                (now, by, mount, tool, tool, digest, digest),
            )
            return cur.rowcount

    # --------------------------------------------------------------- audit
    def audit_tool_call(self, row: dict[str, object]) -> None:
        """One upstream call: who, which mount and tool, outcome, duration, the names of what was redacted."""
        values = {k: _storable(v) if isinstance(v, str) else v for k, v in row.items()}
        with self.tx() as db:
            db.execute(
                "INSERT INTO tools_calls (at, environment, login, connector, client, tier, mount, tool, outcome,"
                " duration_ms, redacted) VALUES (:at, :environment, :login, :connector, :client, :tier, :mount,"
                " :tool, :outcome, :duration_ms, :redacted)",
                values,
            )

    def tool_calls(self, mount: str | None = None, limit: int = 200) -> list[sqlite3.Row]:
        rows = self.query(
            "SELECT * FROM tools_calls WHERE (? IS NULL OR mount = ?) ORDER BY at DESC, id DESC LIMIT ?",
            (mount, mount, limit),
        )
        return list(reversed(rows))
