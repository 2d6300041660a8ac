"""The ``[oidc.NAME]`` tables: OpenID Connect providers people may log in with (docs/how-to/members.md).

Why a table of settings like every other part of the file: a misspelt key (``second_factor_arm``) must stop
start-up naming it, never silently leave the step-up open. The provider's endpoints are not configured: they
come from its discovery document (``{issuer}/.well-known/openid-configuration``), whose ``issuer`` must equal
the configured one exactly (OpenID Connect Discovery 4.3), so a typo cannot point logins at another server.
The client secret lives in a file beside the config (never in it), read at start.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from notegate.errors import ConfigError
from notegate.network import LOOPBACK_HOSTS
from notegate.settings import Setting, check_table

LOOPBACK = LOOPBACK_HOSTS
#: Signature algorithms an ID token may use unless the table narrows them: asymmetric only (an HS256 token is
#: signed with the client secret, which the relying party holds too: it proves nothing about the provider).
DEFAULT_ALGORITHMS = ["RS256", "ES256", "EdDSA"]
ASYMMETRIC = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"})


def _issuer(value: str) -> str | None:
    parts = urlsplit(value)
    if parts.scheme == "https" and parts.hostname and not parts.query and not parts.fragment:
        return None
    if parts.scheme == "http" and (parts.hostname or "") in LOOPBACK:
        return None  # a provider on this machine (tests, a lab): plain http only on loopback
    return "must be the provider's https issuer URL (http only on localhost), without query or fragment"


def _required(value: str) -> str | None:
    return None if value.strip() else "is required"


def _algorithms(value: list) -> str | None:
    bad = [a for a in value if a not in ASYMMETRIC]
    return f"names algorithms notegate does not accept for ID tokens: {bad}" if bad or not value else None


def _strings(value: list) -> str | None:
    return None if all(isinstance(v, str) and v for v in value) else "must be a list of non-empty strings"


OIDC_SETTINGS: tuple[Setting, ...] = (
    Setting("issuer", str, "", "The provider's issuer URL, exactly as its discovery document names it.", _issuer),
    Setting("client_id", str, "", "The client id the provider gave notegate.", _required),
    Setting(
        "client_secret_file",
        str,
        "",
        "A file holding the client secret (relative to this file; '' = a public client, PKCE only).",
    ),
    Setting("display_name", str, "", "The button's label on the login page ('' = the table's name)."),
    Setting(
        "environments", list, [], "Environments whose people may log in with it ([] = every environment).", _strings
    ),
    Setting("algorithms", list, DEFAULT_ALGORITHMS, "Signature algorithms accepted on ID tokens.", _algorithms),
    Setting(
        "second_factor_amr",
        list,
        ["mfa"],
        "amr values (RFC 8176) that prove a second factor, so a fresh login here stands in for the passkey "
        "step-up. Providers differ: list what yours sends ([] = never; the passkey is asked instead).",
        _strings,
    ),
    Setting(
        "second_factor_acr", list, [], "acr values that prove a second factor at this provider ([] = none).", _strings
    ),
    Setting("ca_file", str, "", "CA bundle for the provider's TLS certificate ('' = the system's)."),
    Setting(
        "fetch_seconds",
        (int, float),
        5,
        "Each call to the provider (discovery, keys, token) must answer within this long.",
        lambda v: None if 0 < v <= 60 else "must be above 0 and at most 60",
    ),
)


@dataclass(frozen=True)
class OidcProvider:
    """One configured provider (the secret is held, never printed: repr leaves it out)."""

    name: str
    issuer: str
    client_id: str
    display_name: str
    environments: tuple[str, ...]
    algorithms: tuple[str, ...]
    second_factor_amr: tuple[str, ...]
    second_factor_acr: tuple[str, ...]
    ca_file: str = ""
    fetch_seconds: float = 5.0
    client_secret: str = ""

    def __repr__(self) -> str:
        return f"OidcProvider(name={self.name!r}, issuer={self.issuer!r}, client_id={self.client_id!r})"

    def serves(self, environment: str) -> bool:
        return not self.environments or environment in self.environments


def oidc_from_table(raw: Any, base: Path, environments: Mapping[str, Any]) -> Mapping[str, OidcProvider]:
    """Every ``[oidc.NAME]`` table, checked; ConfigError naming the key otherwise."""
    if not isinstance(raw, dict):
        raise ConfigError("[oidc] must hold one [oidc.NAME] table per provider")
    providers: dict[str, OidcProvider] = {}
    for name, table in raw.items():
        if not isinstance(table, dict):
            raise ConfigError(f"[oidc.{name}] must be a table")
        if not name.isascii() or not name.replace("-", "").replace("_", "").isalnum() or len(name) > 40:
            raise ConfigError(f"provider name '{name}' must be ASCII letters, digits, - or _ (at most 40)")
        values = check_table(f"oidc.{name}", table, OIDC_SETTINGS)
        unknown = [e for e in values["environments"] if e not in environments]
        if unknown:
            raise ConfigError(f"[oidc.{name}] environments names unknown environments: {unknown}")
        secret = ""
        if values["client_secret_file"]:
            path = (base / values["client_secret_file"]).resolve()
            try:
                secret = path.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(
                    f"[oidc.{name}] client_secret_file cannot be read ({type(exc).__name__})",
                    remedy="Write the provider's client secret alone in that file (chmod 600).",
                ) from None
        providers[name] = OidcProvider(
            name=name,
            issuer=values["issuer"],
            client_id=values["client_id"],
            display_name=values["display_name"] or name,
            environments=tuple(values["environments"]),
            algorithms=tuple(values["algorithms"]),
            second_factor_amr=tuple(values["second_factor_amr"]),
            second_factor_acr=tuple(values["second_factor_acr"]),
            ca_file=str((base / values["ca_file"]).resolve()) if values["ca_file"] else "",
            fetch_seconds=float(values["fetch_seconds"]),
            client_secret=secret,
        )
    return MappingProxyType(providers)
