"""The lab's second person (issue 35): invited by the owner from the console, logged in through an OpenID
Connect provider, connected, and removed.

The provider is ``oidc-provider-mock`` (a Flask app on Authlib, the dev extra the suite's relying-party tests
use), run in the lab's process on loopback; notegate serves as its relying party exactly as it would for
Keycloak or Pocket ID (discovery, keys, Authorization Code + PKCE, a confidential client). Without the dev extra
the phase is skipped with the reason. The person's browser is its own Chromium context; their AI client is the
MCP SDK's OAuth client (the phone's Client ID Metadata Document), consented to in that browser.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
import warnings
from collections.abc import Iterator
from typing import Any

from notegate.lab.stack import ASSERTION_SECONDS, PhoneStorage, phone_session, refused_rule
from notegate.network import LOCALHOST

PROVIDER = "lab-id"
CLIENT_ID = "notegate-lab"
#: The client secret the mock provider accepts (it accepts any): a file beside the config, as for a real one.
SECRET_FILE = "oidc-secret"  # noqa: S105 - a file name, not a secret
PERSON = "sam"
SUBJECT = "sam-at-lab-id"


def config_table(issuer: str) -> str:
    """The ``[oidc.lab-id]`` table the lab's config gains."""
    return (
        f'\n[oidc.{PROVIDER}]\nissuer = "{issuer}"\nclient_id = "{CLIENT_ID}"\n'
        f'client_secret_file = "{SECRET_FILE}"\ndisplay_name = "Lab ID"\nsecond_factor_amr = ["otp"]\n'
    )


def _import_provider() -> Any:
    """oidc-provider-mock's server runner, imported without authlib's deprecation warning on the lab's output
    (authlib's own module sets "always" for it when first imported: our filter goes in after it)."""
    with warnings.catch_warnings():
        import authlib.deprecate  # noqa: F401

        warnings.simplefilter("ignore")
        from oidc_provider_mock import run_server_in_thread
    return run_server_in_thread


def missing() -> str | None:
    try:
        _import_provider()
    except ImportError:
        return "oidc-provider-mock is missing (the dev extra: pip install -e '.[dev]')"
    return None


@contextlib.contextmanager
def provider() -> Iterator[str]:
    """oidc-provider-mock on loopback in this process; its issuer URL."""
    run_server_in_thread = _import_provider()
    # its request log would print authorization URLs (state, nonce, code) on the lab's output
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    previous = os.environ.get("AUTHLIB_INSECURE_TRANSPORT")
    os.environ["AUTHLIB_INSECURE_TRANSPORT"] = "1"  # the provider on plain http, on loopback only
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with run_server_in_thread(require_nonce=True) as server:
                yield f"http://{LOCALHOST}:{server.server_port}"
    finally:
        if previous is None:
            os.environ.pop("AUTHLIB_INSECURE_TRANSPORT", None)
        else:
            os.environ["AUTHLIB_INSECURE_TRANSPORT"] = previous


def _outcomes(lab: Any, tool: str) -> list[str]:
    return [str(row["outcome"]) for row in lab.audit(tool=tool)]


def _rows(lab: Any, login: str) -> dict[str, int]:
    """The person's own MCP audit rows, counted by tool (their connector's calls)."""
    counted: dict[str, int] = {}
    for row in lab.audit(connector=login):
        if not str(row["tool"]).startswith("web:"):
            counted[row["tool"]] = counted.get(row["tool"], 0) + 1
    return counted


class _Removed(Exception):
    """The person's AI client was sent to log in again after the removal: the lab does not (they are out)."""


async def play(lab: Any, owner: Any, browser: Any, metadata_url: str, redirect: Any) -> None:
    from notegate.lab.browser import Owner

    c = lab.checks
    assert lab.server is not None
    console = lab.server.url

    # -------------------------------------------------- the owner invites, stepping up first
    # once the owner's last passkey check (the login, an approval) went stale: on a fast machine the lab reached
    # here within the window, the invitation needed no step-up, and the check failed for want of the refusal
    await asyncio.sleep(max(0.0, ASSERTION_SECONDS + 0.5 - (time.monotonic() - owner.asserted_at)))
    first, link = await owner.invite(console, PERSON)
    invites = _outcomes(lab, "web:member-invite")
    c.check(
        "member-invited-from-console-with-step-up",
        first == "step-up-required"
        and link.startswith(f"{console}/join/ngi_")
        and invites[:1] == ["refused:step-up-required"]
        and any(o.startswith("ok:") and o.endswith(f":{PERSON}") for o in invites[1:])
        and any(o.startswith("ok:") for o in _outcomes(lab, "web:step-up")),
        f"first try [{first}], one-time link shown={link.startswith(f'{console}/join/ngi_')}; audit: web:member-invite "
        + ", ".join(f"ok for {o.rsplit(':', 1)[1]}" if o.startswith("ok:") else o for o in invites)
        + f", web:step-up ok={any(o.startswith('ok:') for o in _outcomes(lab, 'web:step-up'))}",
    )
    stepped_up = time.monotonic()

    # ------------------------------------------ the person joins by linking their account at the provider
    person = await Owner.open(browser)
    await person.page.goto(link)
    await person.at_provider(f"#link-{PROVIDER}", SUBJECT)
    who = await person.who()
    links = _outcomes(lab, "web:oidc-link")
    await person.page.goto(link)
    spent = await person.refusal()
    c.check(
        "member-joins-through-the-provider",
        who == PERSON and any(o.startswith(f"ok:{PROVIDER}:") for o in links) and spent == "invite-used",
        f"signed in as the invited person={who == PERSON}; invitation again [{spent}]; audit: web:oidc-link "
        + ", ".join(o.split(":oi_")[0] for o in links),
    )

    # ---------------------------------- their AI client: OAuth, consented in their own browser; one call
    consents = 0

    async def consent(authorize_url: str, prefix: str) -> dict[str, str]:
        nonlocal consents
        consents += 1
        if consents > 1:
            raise _Removed
        return await person.consent(authorize_url, prefix)

    storage = PhoneStorage()
    next_call, held = "", ""
    removed_yet = False
    try:
        async with phone_session(console, _Consenting(consent), metadata_url, redirect, storage) as client:
            tier = (client.started.structured_content or {}).get("tier")
            listed = await client.call("list_notes", {"folder": ""})
            row = await owner.member_row(console, PERSON)
            rows = _rows(lab, PERSON)
            c.check(
                "member-connector-and-mcp-call",
                not client.started.is_error
                and refused_rule(listed) is None
                and "OAuth" in row
                and rows.get("list_notes", 0) >= 1
                and any(o.startswith("ok:") for o in _outcomes(lab, "web:consent-approve")),
                f"session_start tier={tier}, list_notes [{refused_rule(listed) or 'ok'}], members page shows the "
                f"OAuth connector={'OAuth' in row}; audit: web:consent-approve ok, "
                + ", ".join(f"{n} {t}" for t, n in sorted(rows.items())),
            )

            held = storage.tokens.access_token  # the login's access token, to ask the server about it after
            # --------------------------------------- the owner removes them, once the last check went stale
            await asyncio.sleep(max(0.0, ASSERTION_SECONDS + 0.5 - (time.monotonic() - stepped_up)))
            first, done = await owner.remove(console, PERSON)
            removed_yet = True
            removed = _outcomes(lab, "web:member-remove")
            ended = next((o for o in removed if o.startswith(f"ok:{PERSON}:")), "")
            c.check(
                "member-removed-from-console-with-step-up",
                first == "step-up-required"
                and done == "member-removed"
                and "oauth_families=" in ended
                and "oauth_families=-" not in ended,
                f"first try [{first}], done={done}; audit: web:member-remove "
                + ", ".join(_summary(o) for o in removed),
            )

            # ---------------------------------- the running session's next call, their console, their provider
            # the SDK logs its failed re-login with a traceback; the check below says what happened
            logging.getLogger("mcp.client.auth").setLevel(logging.CRITICAL)
            try:
                again = await client.call("list_notes", {"folder": ""})
                next_call = f"answered [{refused_rule(again) or 'ok'}]"
            except Exception as exc:  # the transport's refusal of a revoked login, named by type only
                next_call = f"refused ({type(exc).__name__})"
    except Exception as exc:  # the client's task group ends with the refusal too
        if not removed_yet:
            raise
        next_call = next_call or f"refused ({type(exc).__name__})"
    finally:
        logging.getLogger("mcp.client.auth").setLevel(logging.NOTSET)
    probe = await _probe(console, held)
    await person.page.goto(f"{console}/")
    console_ended = "/login" in person.page.url
    if console_ended:
        await person.at_provider(f"#login-{PROVIDER}", SUBJECT)
    login_again = await person.refusal()
    c.check(
        "removed-member-refused-at-next-call",
        next_call.startswith("refused")
        and consents > 1
        and probe == "401 invalid_token"
        and console_ended
        and login_again == "person-unknown",
        f"the running MCP session's next call {next_call} (its client sent to log in again={consents > 1}), its "
        f"token answers {probe}, console session ended={console_ended}, provider login again [{login_again}]",
    )
    await person.page.context.close()


class _Consenting:
    """What phone_session wants of the person's browser: ``consent(authorize_url, redirect_prefix)``."""

    def __init__(self, consent: Any) -> None:
        self.consent = consent


def _summary(outcome: str) -> str:
    """A removal's audit row without its ids: which kinds of credential ended (``ok:sam:ended oauth, …``)."""
    if not outcome.startswith("ok:"):
        return outcome
    _ok, login, kinds = outcome.split(":", 2)
    ended = [k for k, _, ids in (p.partition("=") for p in kinds.split(";")) if ids not in ("", "-", "0")]
    return f"ok:{login}:ended {', '.join(ended) or 'nothing'}"


async def _probe(console: str, token: str) -> str:
    """What the server answers the removed login's access token now (the SDK hides it behind its re-login)."""
    import httpx2

    if not token:
        return "no token held"
    async with httpx2.AsyncClient(timeout=10) as http:
        answer = await http.post(
            f"{console}/mcp",
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        )
    error = "invalid_token" if "invalid_token" in answer.headers.get("www-authenticate", "") else "-"
    return f"{answer.status_code} {error}"
