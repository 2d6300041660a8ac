"""Enrolling a LiveSync device: the one code the CLI (``notegate livesync device add``) and the console's
LiveSync page share, so both refuse the same things with the same rules and hand out the same Setup URI.

Who may have a device is the membership every door asks (:class:`~notegate.auth.members.Membership`: the state
database is the truth, the config file only its seed), so a member the owner removed gets no new device even
while the file still lists them. The private key leaves this function inside the Setup URI and nowhere else
(the state database keeps the public key).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from notegate.errors import NotegateError
from notegate.livesync import keys

if TYPE_CHECKING:
    from notegate.auth.members import Membership
    from notegate.livesync.settings import LiveSyncConfig

ALGORITHMS = ("ES256", "ES512")


@dataclass(frozen=True)
class Enrolment:
    """What the owner is shown once: the Setup URI (the private key sealed inside), its passphrase."""

    kid: str
    name: str
    person: str
    setup_uri: str
    passphrase: str
    settings: dict


def device_url(settings: LiveSyncConfig, asked: str | None = None) -> str:
    """The gate's address as the device reaches it: asked, else ``public_url``, else the listening address."""
    return asked or settings.public_url or f"http://{settings.host}:{settings.port}"


def enrol_device(
    db: Any,  # the StateDB (this layer names no storage module)
    membership: Membership,
    settings: LiveSyncConfig,
    *,
    environment: str,
    owner: str,
    name: str,
    person: str | None,
    algorithm: str,
    url: str | None,
    now: float,
) -> Enrolment:
    """Record a new device of ``person`` (default: the owner) and return its Setup URI, or refuse.
    ``algorithm`` is one of :data:`ALGORITHMS` (the callers offer only those)."""
    if not keys.is_livesync_device_name(name):
        raise NotegateError(f"'{name[:60]}' is not a device name", rule="livesync-device-name-invalid")
    person = person or owner
    # the state database is the truth (a removed member stays removed whatever the file says)
    if not membership.may_use(person, environment):
        raise NotegateError(
            f"'{person[:60]}' is neither the owner nor a member of {environment}", rule="livesync-person-not-member"
        )
    if any(d.name == name for d in db.livesync_devices(environment)):
        raise NotegateError(f"a device named {name} is enrolled already", rule="livesync-device-exists")
    pair = keys.generate_key_pair(algorithm)
    kid = keys.new_kid(name)
    db.enrol_livesync_device(
        kid=kid,
        name=name,
        environment=environment,
        person=person,
        algorithm=algorithm,
        public_key=pair.public_pem,
        now=now,
    )
    device_settings = keys.device_settings(
        uri=device_url(settings, url),
        database=settings.database,
        kid=kid,
        algorithm=algorithm,
        private_pem=pair.private_pem,
    )
    passphrase = keys.new_passphrase()
    return Enrolment(kid, name, person, keys.setup_uri(device_settings, passphrase), passphrase, device_settings)
