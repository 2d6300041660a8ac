"""Static tokens (``notegate token``): one row per token, its secret only as a hash."""

from __future__ import annotations

import sqlite3

from notegate.state.db import StateCore


class TokenTables(StateCore):
    """The tokens table."""

    # -------------------------------------------------------------- tokens
    def insert_token(self, row: dict[str, object]) -> None:
        """A new token row (its secret only as a hash)."""
        with self.tx() as db:
            db.execute(
                "INSERT INTO tokens (id, name, login, display_name, client_class, tier, environment, secret_hash,"
                " created_at, contracts) VALUES (:id, :name, :login, :display_name, :client_class, :tier,"
                " :environment, :secret_hash, :created_at, :contracts)",
                row,
            )

    def insert_token_checked(self, row: dict[str, object], decide) -> object:
        """Insert a token row only if ``decide(live names of its environment)`` allows it; reading the names
        and inserting are one transaction, so two concurrent creates cannot both take one name. Returns the
        decision."""
        with self.tx(claim=f"tokens:{row['environment']}") as db:
            names = [
                r[0]
                for r in db.execute(
                    "SELECT name FROM tokens WHERE environment IS ? AND revoked_at IS NULL", (row["environment"],)
                )
            ]
            decision = decide(names)
            if decision.allowed:
                db.execute(
                    "INSERT INTO tokens (id, name, login, display_name, client_class, tier, environment,"
                    " secret_hash, created_at, contracts) VALUES (:id, :name, :login, :display_name,"
                    " :client_class, :tier, :environment, :secret_hash, :created_at, :contracts)",
                    row,
                )
        return decision

    def token(self, token_id: str) -> sqlite3.Row | None:
        return self.query_one("SELECT * FROM tokens WHERE id = ?", (token_id,))

    def tokens(self) -> list[sqlite3.Row]:
        return self.query("SELECT * FROM tokens ORDER BY created_at")

    def set_token_tier(self, token_id_or_name: str, tier: str, decide) -> int:
        """Give the live tokens named ``token_id_or_name`` (an id or a name) the tier ``tier`` where
        ``decide(client_class)`` allows it (the policy keeps a machine token's tier); reading the rows and
        updating them are one transaction. Returns how many changed."""
        with self.tx() as db:
            rows = [
                (r[0], r[1])
                for r in db.execute(
                    "SELECT id, client_class FROM tokens WHERE (id = ? OR name = ?) AND revoked_at IS NULL",
                    (token_id_or_name, token_id_or_name),
                )
            ]
            changed = 0
            for token_id, client_class in rows:
                if decide(client_class).allowed:
                    changed += db.execute("UPDATE tokens SET tier = ? WHERE id = ?", (tier, token_id)).rowcount
            return changed

    def revoke_tokens(self, token_id_or_name: str, now: float) -> int:
        with self.tx() as db:
            cur = db.execute(
                "UPDATE tokens SET revoked_at = ? WHERE (id = ? OR name = ?) AND revoked_at IS NULL",
                (now, token_id_or_name, token_id_or_name),
            )
            return cur.rowcount

    def revoke_token_id(self, token_id: str, now: float) -> int:
        """Revoke exactly the token with this id (never a name that happens to look like one)."""
        with self.tx() as db:
            cur = db.execute("UPDATE tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (now, token_id))
            return cur.rowcount
