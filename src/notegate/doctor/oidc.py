"""Identity providers: each ``[oidc.NAME]``'s discovery document and signing keys, fetched as the server will
(the same bounded fetch: deadline, size cap, no redirects), so a wrong issuer, an unreachable provider or keys
that do not parse are found before a person tries to log in. Only names, URLs and key ids are printed."""

from __future__ import annotations

import time

from notegate.auth.oidc import RelyingParty
from notegate.config import Config
from notegate.doctor.result import CheckResult, fail, ok
from notegate.errors import NotegateError

CHECK = "oidc.provider"


def check_providers(config: Config) -> list[CheckResult]:
    results = []
    rp = RelyingParty(None, lambda: config.oidc, redirect_uri="")  # type: ignore[arg-type]  # no state needed
    for name, provider in config.oidc.items():
        try:
            discovery = rp.discovery(provider, now=time.time())
            keys = rp.keys(provider, now=time.time())
        except NotegateError as exc:
            results.append(fail(CHECK, exc.explain(), f"Check [oidc.{name}] issuer and the provider.", subject=name))
            continue
        kids = sorted(str(k.kid) for k in keys.keys if k.kid)
        results.append(
            ok(
                CHECK,
                f"issuer {discovery.issuer}: discovery and {len(keys.keys)} signing key(s) "
                f"({', '.join(kids[:5]) or 'no kid'}); authorization at {discovery.authorization_endpoint}",
                subject=name,
            )
        )
    return results
