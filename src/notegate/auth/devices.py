"""Device keys: the owner's own machine proves itself with a key only it holds.

Theory of operation
-------------------
* ``notegate device keygen NAME`` makes an Ed25519 key pair on the workstation. The private half stays in a
  0600 file under the user's config directory; the public half is pasted into the **deployment config**
  (``[devices.NAME]``), never the vault, so no session can enrol a key of its own.
* On each connection the client runs ``notegate device header`` (Claude Code's ``headersHelper``), which
  signs a short JWS: alg ``Ed25519``, ``kid`` = device name, claims ``aud`` (the server's URL), ``iat``,
  ``exp`` (at most 12 h after ``iat``) and a random ``jti``. It is sent as ``X-Notegate-Device``.
* The server verifies it against the keys of the loaded config (:func:`verify_device_header`, pure: the
  header, the keys, the audiences and ``now`` are parameters). The answer is a :class:`DeviceVerdict`,
  never an exception: a header that does not count leaves the caller as it was (restricted; reads still
  work) and its reason goes to the audit.
* The verdict alone lifts nobody: :func:`notegate.policy.decide_device_tier` decides the tier (trusted only for a
  workstation-class caller whose person is the device's person).

Invariants
----------
* Input is bounded before any parsing: a value longer than :data:`MAX_DEVICE_HEADER_CHARS` costs a length
  check and nothing else.
* Exactly one algorithm is accepted, read from the protected header before any key is touched: ``none``,
  ``HS256`` (the public key used as an HMAC secret), ``EdDSA`` and everything else count for nothing.
* The claims are interpreted only after the signature verified: unsigned bytes never reach a decision.
* Removing ``[devices.NAME]`` from the config revokes the device at once: keys are looked up in the config
  the verifier is given on every call, never cached elsewhere.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from joserfc import jws
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import OKPKey

from notegate.config import PUBLIC_KEY_PREFIX, is_device_name, parse_public_key
from notegate.errors import NotegateError
from notegate.network import LOOPBACK_URL_HOSTS
from notegate.policy import Caller, decide_device_tier, lifted

if TYPE_CHECKING:
    from notegate.config import Config, DeviceConfig
    from notegate.state import StateDB

HEADER_NAME = "X-Notegate-Device"
ALGORITHM = "Ed25519"  # RFC 9864; "EdDSA" is deprecated there and refused here
MAX_DEVICE_HEADER_CHARS = 4096  # a real header is ~350 characters; anything longer is refused unparsed
DEVICE_CLOCK_SKEW_SECONDS = 60  # how far in the future an iat may be (clocks of two machines differ)
DEVICE_MAX_LIFETIME_SECONDS = 12 * 3600  # exp - iat, at most
DEVICE_DEFAULT_LIFETIME_SECONDS = 12 * 3600  # headersHelper runs once per connection, which lasts a session
MAX_JTI_CHARS = 128
MAX_AUDITED_JTIS = 1024  # signed headers remembered so that each is audited once, not once per request
_B64URL = re.compile(r"[A-Za-z0-9_-]*\Z")
_HEADER_KEYS = frozenset({"alg", "kid", "typ"})


class Reason(StrEnum):
    """Why a device header counted, or why it did not (what the audit records)."""

    TRUSTED = "trusted"
    MISSING = "missing"
    TOO_LARGE = "too-large"
    MALFORMED = "malformed"
    ALG_NOT_ALLOWED = "alg-not-allowed"
    UNKNOWN_KEY = "unknown-key"
    BAD_SIGNATURE = "bad-signature"
    ISSUED_IN_FUTURE = "issued-in-future"
    LIFETIME_TOO_LONG = "lifetime-too-long"
    EXPIRED = "expired"
    WRONG_AUDIENCE = "wrong-audience"


@dataclass(frozen=True)
class DeviceVerdict:
    """The outcome of one header: the device and its person when it counted, else only the reason.

    ``device`` is set for a failure only when it names a configured device (an attacker's ``kid`` never
    reaches the audit)."""

    reason: Reason
    device: str | None = None
    person: str | None = None
    jti: str | None = None

    @property
    def trusted(self) -> bool:
        return self.reason is Reason.TRUSTED


# ----------------------------------------------------------------- keys
def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@lru_cache(maxsize=256)
def _verifying_key(public_key: str) -> OKPKey:
    return OKPKey.import_key({"kty": "OKP", "crv": "Ed25519", "x": _b64(parse_public_key(public_key))})


def generate_device_key() -> tuple[bytes, str]:
    """A new key pair: the private key as PKCS#8 PEM (for the 0600 file) and the public key line."""
    private = Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    return pem, public_key_of(pem)


def public_key_of(private_pem: bytes) -> str:
    """The public key line of a private key file's contents."""
    private = serialization.load_pem_private_key(private_pem, password=None)
    if not isinstance(private, Ed25519PrivateKey):
        raise ValueError("not an Ed25519 private key")
    raw = private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PUBLIC_KEY_PREFIX + _b64(raw)


def key_dir(environ: Mapping[str, str], home: Path) -> Path:
    """Where device keys live: $XDG_CONFIG_HOME/notegate/devices, else ~/.config/notegate/devices."""
    base = environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else home / ".config"  # XDG: relative values ignored
    return root / "notegate" / "devices"


def key_path(directory: Path, name: str) -> Path:
    if not is_device_name(name):
        raise NotegateError(
            f"'{name}' is not a device name.",
            rule="device-name-invalid",
        )
    return directory / f"{name}.pem"


def write_private_key(directory: Path, name: str, private_pem: bytes) -> Path:
    """Write a new key file, mode 0600 in a 0700 folder; an existing key is never overwritten (it may be
    the only copy of a key the server trusts)."""
    path = key_path(directory, name)
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        raise NotegateError(f"a key for device '{name}' already exists at {path}.", rule="device-key-exists") from None
    with os.fdopen(fd, "wb") as handle:
        os.fchmod(handle.fileno(), 0o600)  # whatever the umask
        handle.write(private_pem)
    return path


def local_keys(directory: Path) -> list[tuple[str, str, Path]]:
    """The device keys on this machine: (name, public key line, file), sorted by name; unreadable files skipped."""
    found: list[tuple[str, str, Path]] = []
    if not directory.is_dir():
        return found
    for path in sorted(directory.glob("*.pem")):
        if not is_device_name(path.stem):
            continue
        try:
            found.append((path.stem, public_key_of(path.read_bytes()), path))
        except (OSError, ValueError, TypeError):
            continue
    return found


def choose_key(directory: Path, name: str | None) -> tuple[str, Path]:
    """The key ``device header`` signs with: the one named, else the only one there is."""
    if name is not None:
        path = key_path(directory, name)
        if not path.is_file():
            raise NotegateError(f"there is no key for device '{name}' in {directory}.", rule="device-key-unknown")
        return name, path
    keys = local_keys(directory)
    if len(keys) != 1:
        what = "no device key" if not keys else f"{len(keys)} device keys ({', '.join(k[0] for k in keys)})"
        raise NotegateError(f"there is {what} in {directory}.", rule="device-key-unknown")
    return keys[0][0], keys[0][2]


# ----------------------------------------------------------- audiences
def audience_of(url: str) -> str:
    """The audience a URL stands for: scheme and host lowercased, trailing ``/`` and ``/mcp`` dropped, so
    the MCP URL a client knows and the base URL the server knows name the same audience."""
    text = url.strip()
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    if not parts.scheme or not parts.netloc:
        return text
    path = parts.path.rstrip("/")
    if path.endswith("/mcp"):
        path = path[: -len("/mcp")]
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path.rstrip('/')}"


def server_audiences(public_url: str, host: str, port: int) -> frozenset[str]:
    """What a server answers to: its public URL when it has one, else host:port (every loopback name when
    it listens on loopback: they are the same machine)."""
    if public_url:
        return frozenset({audience_of(public_url)})
    shown = f"[{host}]" if ":" in host else host
    names = LOOPBACK_URL_HOSTS if shown in LOOPBACK_URL_HOSTS else (shown,)
    return frozenset(f"http://{name}:{port}" for name in names)


# -------------------------------------------------------------- minting
def mint_device_header(
    private_pem: bytes,
    name: str,
    audience: str,
    *,
    now: float,
    lifetime: int = DEVICE_DEFAULT_LIFETIME_SECONDS,
    jti: str | None = None,
) -> str:
    """The compact JWS a device sends: alg Ed25519, kid = name, aud/iat/exp/jti."""
    if not 0 < lifetime <= DEVICE_MAX_LIFETIME_SECONDS:
        raise NotegateError(
            f"a device header lives at most {DEVICE_MAX_LIFETIME_SECONDS} seconds (asked: {lifetime}).",
            rule="device-lifetime-invalid",
        )
    if not is_device_name(name):
        raise NotegateError(f"'{name}' is not a device name.", rule="device-name-invalid")
    key = OKPKey.import_key(private_pem)
    iat = int(now)
    claims = {"aud": audience_of(audience), "iat": iat, "exp": iat + lifetime, "jti": jti or secrets.token_urlsafe(16)}
    payload = json.dumps(claims, separators=(",", ":"), sort_keys=True).encode("ascii")
    return jws.serialize_compact({"alg": ALGORITHM, "kid": name, "typ": "JWT"}, payload, key, algorithms=[ALGORITHM])


# --------------------------------------------------------- verification
def _json_object(part: str) -> dict | None:
    try:
        value = json.loads(_unb64(part).decode("utf-8"))
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def verify_device_header(
    value: str | bytes | None,
    keys: Mapping[str, DeviceConfig],
    audiences: Collection[str],
    now: float,
    *,
    skew: int = DEVICE_CLOCK_SKEW_SECONDS,
    max_lifetime: int = DEVICE_MAX_LIFETIME_SECONDS,
) -> DeviceVerdict:
    """Does this header prove a configured device? Pure; every input gives a verdict, never an exception."""
    if value is None:
        return DeviceVerdict(Reason.MISSING)
    if isinstance(value, bytes | bytearray | memoryview):
        if len(value) > MAX_DEVICE_HEADER_CHARS:
            return DeviceVerdict(Reason.TOO_LARGE)
        try:
            value = bytes(value).decode("ascii")
        except UnicodeDecodeError:
            return DeviceVerdict(Reason.MALFORMED)
    if not isinstance(value, str):
        return DeviceVerdict(Reason.MALFORMED)
    if len(value) > MAX_DEVICE_HEADER_CHARS:
        return DeviceVerdict(Reason.TOO_LARGE)
    value = value.strip(" \t")  # HTTP optional whitespace
    if not value:
        return DeviceVerdict(Reason.MISSING)
    parts = value.split(".")
    if len(parts) != 3 or not all(_B64URL.match(part) for part in parts):
        return DeviceVerdict(Reason.MALFORMED)
    header = _json_object(parts[0])
    if header is None or "alg" not in header:
        return DeviceVerdict(Reason.MALFORMED)
    if header["alg"] != ALGORITHM:
        return DeviceVerdict(Reason.ALG_NOT_ALLOWED)
    kid = header.get("kid")
    if not isinstance(kid, str) or not set(header) <= _HEADER_KEYS or not parts[1] or not parts[2]:
        return DeviceVerdict(Reason.MALFORMED)
    device = keys.get(kid)
    if device is None:
        return DeviceVerdict(Reason.UNKNOWN_KEY)
    named = DeviceVerdict(Reason.MALFORMED, device=kid)
    try:
        signed = jws.deserialize_compact(value, _verifying_key(device.public_key), algorithms=[ALGORITHM])
    except BadSignatureError:
        return replace(named, reason=Reason.BAD_SIGNATURE)
    except (JoseError, ValueError, TypeError, binascii.Error):
        return named
    try:
        claims = json.loads(signed.payload.decode("utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError):
        return named
    if not isinstance(claims, dict):
        return named
    iat, exp, aud, jti = claims.get("iat"), claims.get("exp"), claims.get("aud"), claims.get("jti")
    if not (_is_int(iat) and _is_int(exp) and isinstance(aud, str) and isinstance(jti, str)):
        return named
    if not 0 < len(jti) <= MAX_JTI_CHARS or exp <= iat:
        return named
    if iat > now + skew:
        return replace(named, reason=Reason.ISSUED_IN_FUTURE)
    if exp - iat > max_lifetime:
        return replace(named, reason=Reason.LIFETIME_TOO_LONG)
    if now >= exp:
        return replace(named, reason=Reason.EXPIRED)
    if audience_of(aud) not in audiences:
        return replace(named, reason=Reason.WRONG_AUDIENCE)
    return DeviceVerdict(Reason.TRUSTED, device=kid, person=device.person, jti=jti)


class DeviceVerifier:
    """The server's side: verify a request's device header against the loaded config, decide the tier.

    ``config`` is the loaded :class:`~notegate.config.Config`, or a callable returning the current one (a
    server that reloads its config revokes a removed device at its next request). ``state`` receives an
    audit row for every header that did not count, and for the first use of each trusted header (``jti``).
    """

    def __init__(
        self,
        config: Config | Callable[[], Config],
        clock: Callable[[], float] = time.time,
        *,
        audiences: Iterable[str] | None = None,
        state: StateDB | None = None,
        host: str | None = None,
        port: int | None = None,
    ) -> None:
        self._config = config if callable(config) else (lambda: config)
        self.clock = clock
        self.state = state
        self._audiences = None if audiences is None else frozenset(audience_of(a) for a in audiences)
        self._host, self._port = host, port
        self._seen: OrderedDict[str, None] = OrderedDict()  # jtis already audited, bounded

    def audiences(self) -> frozenset[str]:
        if self._audiences is not None:
            return self._audiences
        config = self._config()
        return server_audiences(config.public_url, self._host or config.host, self._port or config.port)

    def verify(self, header_value: str | bytes | None) -> DeviceVerdict:
        return verify_device_header(header_value, self._config().devices, self.audiences(), self.clock())

    def tier_for(self, caller: Caller, header_value: str | bytes | None) -> tuple[Caller, DeviceVerdict]:
        """The caller as this request's device header leaves it (trusted, or exactly as it was)."""
        verdict = self.verify(header_value)
        decision = decide_device_tier(caller, verdict)
        result = lifted(caller) if decision.allowed else caller
        self._audit(result, verdict, None if decision.allowed else decision.rule)
        return result, verdict

    def _audit(self, caller: Caller, verdict: DeviceVerdict, denied_rule: str | None) -> None:
        """One row per failed header; one per signed header (its jti) however many requests carry it."""
        if self.state is None or verdict.reason is Reason.MISSING:
            return
        if verdict.jti is not None:
            if verdict.jti in self._seen:
                return
            self._seen[verdict.jti] = None
            while len(self._seen) > MAX_AUDITED_JTIS:
                self._seen.popitem(last=False)
        outcome = f"device-{verdict.reason.value}" + (f":{denied_rule}" if denied_rule else "")
        self.state.audit(
            now=self.clock(),
            **caller.audit_fields(self._config().default_environment),
            tool="device-key",
            path=f"device:{verdict.device}" if verdict.device else None,
            outcome=outcome,
        )
