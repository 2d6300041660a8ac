"""OpenID Connect decisions (pure: no I/O, no clock): the ID token's authorized party, and the step-up through
the provider.

Theory of operation: the ID token's signature and its registered claims (``iss``, ``aud``, ``exp``, ``iat``,
``nonce``) are checked by joserfc in auth/oidc.py; what is left for notegate to decide is what joserfc cannot
know: whether a token with several audiences names us as its authorized party (``azp``), and whether a login
is fresh enough and proves a second factor to stand in for the passkey step-up. Providers disagree on ``amr``
(Keycloak sends it only with a mapper, ZITADEL ``pwd``/``mfa``, Pocket ID none), so the values that prove a
second factor are a per-provider allowlist in the deployment's ``[oidc.NAME]`` table, never a guess here; a
provider that cannot prove it is refused with what it sent, and the console offers the passkey instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from notegate.policy.decision import Decision, allow, deny

#: How much of what a provider sent a refusal quotes (its amr values and acr), so a page stays readable.
MAX_QUOTED = 120


def decide_authorized_party(claims: Mapping[str, Any], client_id: str) -> Decision:
    """OpenID Connect Core 3.1.3.7 (steps 4-5): with several audiences the token must name us in ``azp``; an
    ``azp`` that is present must be us whatever the audience."""
    aud = claims.get("aud")
    azp = claims.get("azp")
    several = isinstance(aud, list) and len(aud) > 1
    if azp is not None and azp != client_id:
        return deny("oidc-audience", f"the ID token's authorized party (azp) is not this server's client '{client_id}'")
    if several and azp is None:
        return deny("oidc-audience", "the ID token names several audiences and no authorized party (azp)")
    return allow("oidc-audience", "the ID token is for this server's client")


def quoted(claims: Mapping[str, Any]) -> str:
    """What the provider sent about the login, as a refusal shows it: ``amr=[...] acr=... auth_time=...``."""
    amr = claims.get("amr")
    amr_text = ",".join(str(v) for v in amr) if isinstance(amr, list) else ("none" if amr is None else str(amr))
    acr = claims.get("acr")
    text = f"amr=[{amr_text}] acr={'none' if acr is None else acr} auth_time={claims.get('auth_time', 'none')}"
    return "".join(ch for ch in text if ch.isprintable())[:MAX_QUOTED]


def decide_provider_step_up(
    claims: Mapping[str, Any],
    *,
    now: float,
    max_age: float,
    second_factor_amr: Iterable[str],
    second_factor_acr: Iterable[str],
) -> Decision:
    """May a login through the provider stand in for a passkey step-up (approving an elevation, minting trust,
    changing members)? Only a login at most ``max_age`` seconds old by its ``auth_time`` (the request asked
    ``max_age``, so a provider that reused an old login says so here), with an ``amr`` value or the ``acr``
    that this provider's allowlist counts as a second factor."""
    auth_time = claims.get("auth_time")
    if isinstance(auth_time, bool) or not isinstance(auth_time, int | float):
        return deny("step-up-login-stale", f"the provider did not say when the person logged in ({quoted(claims)})")
    age = now - float(auth_time)
    if age > max_age or age < -60:
        return deny(
            "step-up-login-stale",
            f"the provider's login is {int(min(max(age, -1e9), 1e9))} s old, more than {int(max_age)} s "
            f"({quoted(claims)})",
        )
    amr = claims.get("amr")
    methods = {str(v) for v in amr} if isinstance(amr, list) else set()
    acr = claims.get("acr")
    if methods & set(second_factor_amr) or (acr is not None and str(acr) in set(second_factor_acr)):
        return allow("step-up-provider", f"a {int(max(age, 0))} s old provider login with a second factor")
    return deny(
        "step-up-second-factor-unproven",
        f"the provider sent nothing this server counts as a second factor ({quoted(claims)})",
    )
