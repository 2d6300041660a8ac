"""The LiveSync gate's CouchDB, as the doctor sees it: reachable, no admin party, no anonymous reads, and the
gate's own login a member of the notes database and nothing more (docs/how-to/livesync.md says why).

Each probe is one GET with a short timeout; :func:`judge` turns the statuses into results (pure, so the
combinations are tested without a server). Never prints the gate's password or anything CouchDB returned
beyond a status and a role name.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from notegate.doctor.result import CheckResult, fail, ok, warn

TIMEOUT = 5.0


@dataclass(frozen=True)
class Probe:
    """What CouchDB answered: ``status`` 0 when it did not answer at all; ``admin_party`` whether an
    anonymous ``/_session`` came back with the ``_admin`` role."""

    reachable: bool
    admin_party: bool
    anonymous_db: int  # GET /{db} without credentials
    gate_db: int  # GET /{db} with the gate's login (0: no login configured)
    gate_config: int  # GET /_node/_local/_config with the gate's login (0: no login configured)


def judge(probe: Probe, *, subject: str) -> list[CheckResult]:
    if not probe.reachable:
        return [
            fail(
                "livesync.couchdb",
                "CouchDB does not answer at [livesync] couchdb_url",
                "Start CouchDB, or fix couchdb_url.",
                subject=subject,
            )
        ]
    out = [ok("livesync.couchdb", "CouchDB answers", subject=subject)]
    if probe.admin_party:
        out.append(
            fail(
                "livesync.admin-party",
                "an anonymous request is CouchDB's admin (admin party)",
                "Create an admin in CouchDB ([admins] in local.ini): notegate livesync couchdb-config.",
                subject=subject,
            )
        )
    else:
        out.append(ok("livesync.admin-party", "anonymous requests are not admin", subject=subject))
    if probe.anonymous_db == 200:
        out.append(
            fail(
                "livesync.anonymous",
                "the notes database answers without credentials",
                "Set [chttpd] require_valid_user = true and the database's members (notegate livesync couchdb-config).",
                subject=subject,
            )
        )
    else:
        out.append(
            ok(
                "livesync.anonymous",
                f"the notes database refuses anonymous reads ({probe.anonymous_db})",
                subject=subject,
            )
        )
    if not probe.gate_db:
        out.append(
            warn(
                "livesync.gate-login",
                "the gate has no CouchDB login ([livesync] couchdb_user is empty)",
                "Give the gate a member login: notegate livesync couchdb-config.",
                subject=subject,
            )
        )
    elif probe.gate_config == 200:
        out.append(
            fail(
                "livesync.gate-login",
                "the gate's login can read CouchDB's configuration: it is an admin",
                "Make the gate's login a plain member of the notes database (notegate livesync couchdb-config).",
                subject=subject,
            )
        )
    elif probe.gate_db != 200:
        out.append(
            fail(
                "livesync.gate-login",
                f"the gate's login cannot read the notes database ({probe.gate_db})",
                "Check its password and that it is a member of the database (_security).",
                subject=subject,
            )
        )
    else:
        out.append(ok("livesync.gate-login", "the gate's login is a member, not an admin", subject=subject))
    return out


def _get(url: str, auth: str | None) -> tuple[int, bytes]:
    if not url.startswith(("http://", "https://")):
        return 0, b""
    request = urllib.request.Request(url, headers={"Authorization": auth} if auth else {})  # noqa: S310 - http(s)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:  # noqa: S310 - the owner's own URL
            return answer.status, answer.read(65536)
    except urllib.error.HTTPError as exc:
        return exc.code, b""
    except (OSError, ValueError):
        return 0, b""


def probe(settings, config_dir: Path) -> Probe:
    base = settings.couchdb_url.rstrip("/")
    status, _body = _get(base + "/", None)
    if status == 0:
        return Probe(False, False, 0, 0, 0)
    _status, session = _get(base + "/_session", None)
    try:
        roles = json.loads(session or b"{}").get("userCtx", {}).get("roles", [])
    except (ValueError, AttributeError):
        roles = []
    auth = None
    if settings.couchdb_user:
        password = (
            (config_dir / settings.couchdb_password_file).read_text(encoding="utf-8").strip()
            if settings.couchdb_password_file
            else os.environ.get("NOTEGATE_COUCHDB_PASSWORD", "")
        )
        auth = "Basic " + base64.b64encode(f"{settings.couchdb_user}:{password}".encode()).decode("ascii")
    anonymous_db = _get(f"{base}/{settings.database}", None)[0]
    gate_db = _get(f"{base}/{settings.database}", auth)[0] if auth else 0
    gate_config = _get(f"{base}/_node/_local/_config", auth)[0] if auth else 0
    return Probe(True, "_admin" in roles, anonymous_db, gate_db, gate_config)


def check_livesync(config) -> list[CheckResult]:
    """The doctor's LiveSync checks, when the config has a [livesync] table."""
    if config.livesync is None:
        return []
    subject = f"{config.livesync.couchdb_url.rstrip('/')}/{config.livesync.database}"
    return judge(probe(config.livesync, config.path.parent), subject=subject)
