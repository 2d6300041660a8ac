"""Passkeys: the only way a person (an environment's owner or member) proves who they are to the console.

Theory of operation:

* There is no password anywhere: no field, no column, no fallback. A person's first passkey is enrolled
  through a one-time link (``nge_`` + 256 random bits, stored hashed) that ``notegate owner enroll``
  prints: valid :data:`ENROL_SECONDS` (15 min), used at most once (an immediate transaction marks it).
  Further passkeys are added from a logged-in page.
* Every ceremony uses the ``webauthn`` package (3.0.1) with **user verification required** and
  **resident (discoverable) keys required**; logging in sends no credential list, the authenticator
  chooses and the credential id finds the row.
* A challenge is random (64 bytes), stored against the browser's cookie secret (hashed) and the ceremony's
  purpose, consumed on first use and dead after :data:`CEREMONY_SECONDS`: a replayed or foreign response
  never verifies.
* A passkey logs in only while it is live (``owner revoke`` ends that at once, with its sessions) and while
  its login is still a person in the deployment config (removing a member revokes them at once).
* Failures say which rule refused; a missing user verification is told apart from any other invalid
  assertion (``passkey-user-verification``), because its remedy differs.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from webauthn import (
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers import parse_authentication_credential_json, parse_authenticator_data
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from notegate.auth.websession import hash_secret, mint_secret, parse_secret
from notegate.config import Config
from notegate.errors import NotegateError
from notegate.network import LOCALHOST
from notegate.policy import decide_person
from notegate.state import StateDB

ENROL_PREFIX = "nge_"
#: A printed enrol link works this long, and once.
ENROL_SECONDS = 15 * 60
#: A WebAuthn challenge must be answered within this long.
CEREMONY_SECONDS = 5 * 60
CEREMONY_TIMEOUT_MS = 120_000
RP_NAME = "notegate"
MAX_PASSKEY_NAME = 64


@dataclass(frozen=True)
class RelyingParty:
    """Where passkeys are valid: the RP ID (a domain, never an IP) and the one origin that may use them."""

    rp_id: str
    origin: str
    name: str = RP_NAME


def relying_party(public_url: str, port: int) -> RelyingParty:
    """Behind a proxy: ``public_url``'s host; on loopback: ``localhost`` (WebAuthn refuses IP addresses)."""
    if public_url:
        parts = urlsplit(public_url)
        return RelyingParty(rp_id=(parts.hostname or "").lower(), origin=f"{parts.scheme}://{parts.netloc}")
    return RelyingParty(rp_id=LOCALHOST, origin=f"http://{LOCALHOST}:{port}")


def persons(config: Config) -> frozenset[str]:
    """Every owner and member of every environment: the logins that may have passkeys."""
    found: set[str] = set()
    for env in config.environments.values():
        found.add(env.owner)
        found.update(env.members)
    return frozenset(found)


@dataclass(frozen=True)
class PasskeyRecord:
    id: str
    login: str
    name: str
    created_at: float
    last_used_at: float | None
    revoked_at: float | None

    @classmethod
    def of(cls, row: Any) -> PasskeyRecord:
        return cls(row["id"], row["login"], row["name"], row["created_at"], row["last_used_at"], row["revoked_at"])


def _require_person(known: frozenset[str], login: str) -> None:
    decision = decide_person(known, login)
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)


# ------------------------------------------------------------------------------------------ enrol links
def parse_enrol_token(raw: object) -> str | None:
    return parse_secret(raw, ENROL_PREFIX)


def create_enrol_link(state: StateDB, *, login: str, known: frozenset[str], now: float) -> str:
    """A one-time enrol secret for ``login`` (printed once; only its hash is kept)."""
    _require_person(known, login)
    token = mint_secret(ENROL_PREFIX)
    state.insert_enrol_link(token_hash=hash_secret(token), login=login, now=now, expires_at=now + ENROL_SECONDS)
    return token


def check_enrol_link(state: StateDB, raw: object, *, now: float) -> str:
    """The login a live, unused link enrols; else refused (unknown, used or expired)."""
    token = parse_enrol_token(raw)
    row = state.enrol_link(hash_secret(token)) if token else None
    if row is None:
        raise NotegateError("this enrol link is not one this server issued", rule="enrol-link-unknown")
    if row["used_at"] is not None:
        raise NotegateError("this enrol link was already used", rule="enrol-link-used")
    if row["expires_at"] <= now:
        raise NotegateError("this enrol link has expired", rule="enrol-link-expired")
    return str(row["login"])


def _use_enrol_link(state: StateDB, raw: str, *, now: float) -> str:
    login = check_enrol_link(state, raw, now=now)
    token = parse_enrol_token(raw)
    if token is None or not state.use_enrol_link(hash_secret(token), now=now):
        raise NotegateError("this enrol link was already used", rule="enrol-link-used")  # lost a race
    return login


# ---------------------------------------------------------------------------------------------- ceremonies
class Passkeys:
    """The WebAuthn ceremonies, bound to one relying party and the deployment's persons."""

    def __init__(self, state: StateDB, rp: RelyingParty, known: Callable[[], frozenset[str]]) -> None:
        self.state = state
        self.rp = rp
        self.known = known

    def _challenge(
        self, binding: str, purpose: str, now: float, login: str | None = None, user_handle: bytes | None = None
    ) -> bytes:
        challenge = secrets.token_bytes(64)
        self.state.put_challenge(
            binding_hash=hash_secret(binding),
            purpose=purpose,
            challenge=challenge,
            login=login,
            user_handle=user_handle,
            now=now,
            expires_at=now + CEREMONY_SECONDS,
        )
        return challenge

    def _take(self, binding: str, purpose: str, now: float) -> Any:
        row = self.state.take_challenge(binding_hash=hash_secret(binding), purpose=purpose, now=now)
        if row is None:
            raise NotegateError(
                "no passkey step is pending for this browser (or it timed out)", rule="passkey-ceremony-expired"
            )
        return row

    # -- registration
    def registration_options(self, *, login: str, binding: str, now: float) -> dict[str, Any]:
        """Options for navigator.credentials.create(): resident key and user verification required."""
        _require_person(self.known(), login)
        existing = [r for r in self.state.passkeys(login) if r["revoked_at"] is None]
        # A random handle for a person's first passkey (never derived from the login: privacy), then reused.
        handle = self.state.user_handle(login) or secrets.token_bytes(32)
        options = generate_registration_options(
            rp_id=self.rp.rp_id,
            rp_name=self.rp.name,
            user_name=login,
            user_id=handle,
            challenge=self._challenge(binding, "register", now, login, handle),
            timeout=CEREMONY_TIMEOUT_MS,
            authenticator_selection=AuthenticatorSelectionCriteria(
                resident_key=ResidentKeyRequirement.REQUIRED,
                require_resident_key=True,
                user_verification=UserVerificationRequirement.REQUIRED,
            ),
            exclude_credentials=[PublicKeyCredentialDescriptor(id=bytes(r["credential_id"])) for r in existing],
        )
        return json.loads(options_to_json(options))

    def enrol_options(self, *, enrol_token: str, binding: str, now: float) -> dict[str, Any]:
        login = check_enrol_link(self.state, enrol_token, now=now)
        return self.registration_options(login=login, binding=binding, now=now)

    def _verify_new(self, *, login: str, binding: str, credential: object, now: float) -> tuple[Any, bytes]:
        _require_person(self.known(), login)
        pending = self._take(binding, "register", now)
        if pending["login"] != login:
            raise NotegateError("the pending passkey step belongs to another person", rule="passkey-invalid")
        try:
            verified = verify_registration_response(
                credential=_as_json(credential),
                expected_challenge=bytes(pending["challenge"]),
                expected_rp_id=self.rp.rp_id,
                expected_origin=self.rp.origin,
                require_user_verification=True,
            )
        except WebAuthnException as exc:
            rule = "passkey-user-verification" if "user verification" in str(exc).lower() else "passkey-invalid"
            raise NotegateError("the browser's new passkey did not verify", rule=rule) from None
        if self.state.passkey_by_credential(verified.credential_id) is not None:
            raise NotegateError("this passkey is already enrolled", rule="passkey-invalid")
        return verified, bytes(pending["user_handle"])

    def _keep(self, login: str, verified: Any, handle: bytes, name: object, now: float) -> PasskeyRecord:
        record = PasskeyRecord("pk_" + secrets.token_hex(4), login, clean_name(name), now, None, None)
        self.state.insert_passkey(
            {
                "id": record.id,
                "login": login,
                "credential_id": verified.credential_id,
                "public_key": verified.credential_public_key,
                "user_handle": handle,
                "sign_count": verified.sign_count,
                "name": record.name,
                "created_at": now,
            }
        )
        return record

    def register(self, *, login: str, binding: str, credential: object, name: object, now: float) -> PasskeyRecord:
        """Verify a creation response for ``login``'s pending challenge and keep the new passkey."""
        verified, handle = self._verify_new(login=login, binding=binding, credential=credential, now=now)
        return self._keep(login, verified, handle, name, now)

    def enrol(self, *, enrol_token: str, binding: str, credential: object, name: object, now: float) -> PasskeyRecord:
        """The first passkey through a one-time link: the link is spent only by a passkey that verified."""
        login = check_enrol_link(self.state, enrol_token, now=now)
        verified, handle = self._verify_new(login=login, binding=binding, credential=credential, now=now)
        _use_enrol_link(self.state, enrol_token, now=now)  # atomic: of two tabs, one wins
        return self._keep(login, verified, handle, name, now)

    # -- an invited person's first passkey (auth/members.py): not a member until the invitation is spent
    def invited_options(self, *, login: str, binding: str, now: float) -> dict[str, Any]:
        invited = Passkeys(self.state, self.rp, lambda: self.known() | {login})
        return invited.registration_options(login=login, binding=binding, now=now)

    def enrol_invited(
        self, *, login: str, binding: str, credential: object, name: object, now: float, spend: Callable[[], None]
    ) -> PasskeyRecord:
        """Verify the new passkey, then ``spend`` the invitation (which makes the person a member), then keep it:
        an invitation is spent only by a passkey that verified, and of two tabs only one spends it."""
        invited = Passkeys(self.state, self.rp, lambda: self.known() | {login})
        verified, handle = invited._verify_new(login=login, binding=binding, credential=credential, now=now)
        spend()
        return invited._keep(login, verified, handle, name, now)

    # -- authentication
    def authentication_options(self, *, binding: str, now: float) -> dict[str, Any]:
        options = generate_authentication_options(
            rp_id=self.rp.rp_id,
            challenge=self._challenge(binding, "login", now),
            timeout=CEREMONY_TIMEOUT_MS,
            allow_credentials=[],  # discoverable credentials: the authenticator offers the person's passkeys
            user_verification=UserVerificationRequirement.REQUIRED,
        )
        return json.loads(options_to_json(options))

    def authenticate(self, *, binding: str, credential: object, now: float) -> PasskeyRecord:
        """The passkey that answered this browser's pending login challenge, with user verification."""
        pending = self._take(binding, "login", now)
        try:
            parsed = parse_authentication_credential_json(_as_json(credential))
        except (WebAuthnException, ValueError, TypeError):
            raise NotegateError("the browser's answer is not a passkey assertion", rule="passkey-invalid") from None
        row = self.state.passkey_by_credential(parsed.raw_id)
        if row is None or row["revoked_at"] is not None:
            raise NotegateError("this passkey is not enrolled here (or was revoked)", rule="passkey-unknown")
        _require_person(self.known(), row["login"])
        if parsed.response.user_handle is not None and parsed.response.user_handle != bytes(row["user_handle"]):
            raise NotegateError("the passkey answered for another account", rule="passkey-invalid")
        try:
            verified = verify_authentication_response(
                credential=parsed,
                expected_challenge=bytes(pending["challenge"]),
                expected_rp_id=self.rp.rp_id,
                expected_origin=self.rp.origin,
                credential_public_key=bytes(row["public_key"]),
                credential_current_sign_count=row["sign_count"],
                require_user_verification=True,
            )
        except WebAuthnException:
            if not _user_verified(parsed.response.authenticator_data):
                raise NotegateError(
                    "the passkey answered without user verification (no PIN or biometric)",
                    rule="passkey-user-verification",
                ) from None
            raise NotegateError("the passkey assertion did not verify", rule="passkey-invalid") from None
        self.state.passkey_used(row["id"], sign_count=verified.new_sign_count, now=now)
        return PasskeyRecord.of(row)


def _user_verified(authenticator_data: bytes) -> bool:
    try:
        return bool(parse_authenticator_data(authenticator_data).flags.uv)
    except (WebAuthnException, ValueError, IndexError):
        return False


def _as_json(credential: object) -> str | dict[str, Any]:
    if isinstance(credential, str | dict):
        return credential
    raise NotegateError("the browser's answer is not a passkey credential", rule="passkey-invalid")


def clean_name(name: object) -> str:
    """A passkey's label: printable, one line, short; the person's own words for their own list."""
    text = name if isinstance(name, str) else ""
    text = "".join(ch for ch in text if ch.isprintable()).strip()[:MAX_PASSKEY_NAME]
    return text or "passkey"


# ------------------------------------------------------------------------------------------ listing
def list_passkeys(state: StateDB, login: str | None = None) -> list[PasskeyRecord]:
    return [PasskeyRecord.of(r) for r in state.passkeys(login)]


def revoke_passkey(state: StateDB, passkey_id: str, *, now: float, login: str | None = None) -> int:
    """Revoke at once: its sessions end and it logs in no more."""
    return state.revoke_passkey(passkey_id, now=now, login=login)
