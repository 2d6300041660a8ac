"""What a stranger can cost the OAuth door (issue 27), against a real `notegate serve`: a silent client metadata
host does not stall authenticated work; consent requests and their fields are bounded; a registration flood
is rate-limited per source and cannot lock the owner's new connector out."""

from __future__ import annotations

import socket
import statistics
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import anyio
import httpx2
import pytest

from notegate.config import load_config
from notegate.errors import NotegateError
from notegate.state import StateDB
from support import Server, mint, running, set_policy
from support.oauth import approved_code, backend, exchange, pkce_params, register, set_server

pytestmark = pytest.mark.anyio


class Silent:
    """A TCP listener on 127.0.0.1 that accepts every connection and never sends a byte (a client metadata
    host that stalls the TLS handshake)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(128)
        self.port = self.sock.getsockname()[1]
        self.held: list[socket.socket] = []
        self.closed = False
        self.thread = threading.Thread(target=self._accept, daemon=True)

    def _accept(self) -> None:
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(conn)

    def __enter__(self) -> Silent:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closed = True
        self.sock.close()
        for conn in self.held:
            conn.close()


async def tools_list_seconds(http: httpx2.AsyncClient, server: Server, token: str) -> float:
    started = time.perf_counter()
    response = await http.post(
        f"{server.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
        headers={
            "Authorization": f"Bearer {token}",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2025-11-25",
        },
    )
    assert response.status_code == 200, response.text
    return time.perf_counter() - started


def db_bytes(vault: Path) -> int:
    folder = load_config(vault).state_dir
    return sum(p.stat().st_size for p in folder.glob("state.sqlite*"))


def pending_rows(vault: Path) -> list[tuple[str, int]]:
    db = StateDB(load_config(vault).state_dir / "state.sqlite")
    try:
        return [(r["client_id"], len(r["params_json"])) for r in db.query("SELECT * FROM oauth_pending")]
    finally:
        db.close()


# ------------------------------------------------------------------------ a silent metadata host
async def test_a_silent_cimd_host_does_not_stall_authenticated_work(vault: Path) -> None:
    """16 anonymous /authorize requests name metadata documents on a host that accepts and never answers.
    Before: each held one of the 8 shared worker threads for the 5 s fetch deadline, so an authenticated
    tools/list waited seconds.  Now the fetches run in their own pool of 4, the rest are refused at once."""
    set_server(vault, cimd_private_hosts=["localhost"])  # the silent host is on loopback
    token = mint(vault)
    with Silent() as silent, running(vault) as server:
        async with httpx2.AsyncClient(timeout=30) as http:
            await tools_list_seconds(http, server, token)  # warm
            baseline = statistics.median([await tools_list_seconds(http, server, token) for _ in range(5)])
            answers: list[httpx2.Response] = []

            async def stranger(n: int) -> None:
                client_id = f"https://localhost:{silent.port}/client-{n}.json"  # one URL each: no cache helps
                answers.append(await http.get(f"{server.url}/authorize?{urlencode(pkce_params(client_id))}"))

            async with anyio.create_task_group() as tasks:
                for n in range(16):
                    tasks.start_soon(stranger, n)
                deadline = time.monotonic() + 10
                while len(silent.held) < 4 and time.monotonic() < deadline:  # the fetches are in flight
                    await anyio.sleep(0.02)
                loaded = await tools_list_seconds(http, server, token)
    assert loaded < max(10 * baseline, 1.0), (loaded, baseline)
    busy = [a for a in answers if a.status_code == 429]
    assert busy and all("Refused [cimd-busy]" in a.json()["error_description"] for a in busy)
    assert all(a.headers.get("retry-after") for a in busy)
    assert len(silent.held) <= 4  # the pool's size: never more fetches at once


# ------------------------------------------------------------------------------ consent requests
async def test_a_huge_state_is_refused_and_never_stored(served: Server, vault: Path) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        client_id = (await register(http, served.url)).json()["client_id"]
        before = db_bytes(vault)
        for _ in range(20):
            form = pkce_params(client_id, state="s" * 10_000)
            refused = await http.post(f"{served.url}/authorize", data=form)
            assert refused.status_code == 400, refused.text
            assert refused.json()["error_description"].startswith("Refused [oauth-field-too-long]")
            assert "location" not in refused.headers  # not redirected: the state is not echoed back
        for _ in range(20):  # the form parser took 1 MiB per field: before, each of these was a 200 KB row
            padded = await http.post(f"{served.url}/authorize", data=pkce_params(client_id, state="s" * 200_000))
            assert padded.status_code == 413, padded.text
            assert padded.json()["error_description"].startswith("Refused [oauth-body-too-large]")
        long_resource = await http.get(
            f"{served.url}/authorize?{urlencode(pkce_params(client_id, resource='https://x.example/' + 'r' * 600))}"
        )
        assert long_resource.status_code == 400
        assert "Refused [oauth-field-too-long]" in long_resource.json()["error_description"]
        fine = await http.post(f"{served.url}/authorize", data=pkce_params(client_id, state="s" * 1024))
        assert fine.status_code == 302 and "/oauth/consent?request=" in fine.headers["location"]
    assert pending_rows(vault) == [(client_id, pending_rows(vault)[0][1])]  # only the one within bounds
    assert pending_rows(vault)[0][1] < 4096
    assert db_bytes(vault) - before < 256 << 10  # was 20 MB


async def test_pending_consents_are_capped_per_client_and_overall(vault: Path) -> None:
    set_server(vault, oauth_max_pending_per_client=3, oauth_max_pending_consents=5)
    with running(vault) as server:
        async with httpx2.AsyncClient(timeout=30) as http:

            async def ask(client_id: str) -> str:
                answer = await http.get(f"{server.url}/authorize?{urlencode(pkce_params(client_id))}")
                assert answer.status_code == 302, answer.text
                return answer.headers["location"].split("request=", 1)[1]

            a, b, c = [(await register(http, server.url)).json()["client_id"] for _ in range(3)]
            first_of_a = [await ask(a) for _ in range(4)]  # a's cap is 3: its oldest made room
            core = backend(vault, server.url)
            assert [core.pending(r, now=time.time()) is None for r in first_of_a] == [True, False, False, False]
            of_b = [await ask(b) for _ in range(2)]
            of_c = await ask(c)  # 6 live requests with a cap of 5: the oldest overall (a's second) made room
            assert [client for client, _ in pending_rows(vault)].count(a) == 2
            assert len(pending_rows(vault)) == 5
            assert core.pending(first_of_a[1], now=time.time()) is None
            assert all(core.pending(r, now=time.time()) is not None for r in [*first_of_a[2:], *of_b, of_c])
            with pytest.raises(NotegateError) as gone:
                core.approve(first_of_a[0], person="owner", now=time.time())
            assert gone.value.rule == "consent-unknown"
            # the newest request of the flooded client is still answerable: nobody is locked out
            assert "code=" in core.approve(first_of_a[3], person="owner", now=time.time())


# ---------------------------------------------------------------------------------- registrations
async def test_registration_flood_is_rate_limited_per_source(served: Server) -> None:
    async with httpx2.AsyncClient(timeout=30) as http:
        for _ in range(10):  # registrations_per_hour = 10: a burst of 10, then 10 an hour
            assert (await register(http, served.url)).status_code == 201
        refused = await register(http, served.url)
        spoofed = await http.post(
            f"{served.url}/register",
            json={"client_name": "p", "redirect_uris": ["http://127.0.0.1:33333/callback"]},
            headers={"X-Forwarded-For": "203.0.113.9"},  # not a trusted proxy: the header is ignored
        )
        authorize = await http.get(f"{served.url}/authorize?{urlencode(pkce_params('x'))}")  # its own bucket
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0
    assert refused.json()["error"] == "temporarily_unavailable"
    assert refused.json()["error_description"].startswith("Refused [rate-limited]")
    assert spoofed.status_code == 429
    assert authorize.status_code == 400  # the unknown client, not the registration limit


async def test_a_full_registration_table_evicts_a_never_consented_one(vault: Path) -> None:
    """The cap of registrations filled by strangers: the owner's new connector still registers (the oldest
    registration that never completed a consent makes room), and a connector in use is never evicted."""
    set_policy(vault, oauth_max_registrations=5)
    set_server(vault, registrations_per_hour=1000)
    with running(vault) as server:
        async with httpx2.AsyncClient(timeout=30) as http:
            in_use, code, verifier = await approved_code(http, server, vault)
            assert (await exchange(http, server, in_use, code, verifier)).status_code == 200
            flood = [(await register(http, server.url)) for _ in range(12)]
            assert [r.status_code for r in flood] == [201] * 12
            owner_new = await register(http, server.url, ["https://claude.ai/api/mcp/auth_callback"])
            assert owner_new.status_code == 201, owner_new.text
            db = StateDB(load_config(vault).state_dir / "state.sqlite")
            try:
                kept = {r["client_id"] for r in db.query("SELECT client_id FROM oauth_clients")}
            finally:
                db.close()
            assert len(kept) == 5 and in_use in kept and owner_new.json()["client_id"] in kept
            assert flood[0].json()["client_id"] not in kept  # the oldest strangers' went first
            still = await http.get(f"{server.url}/authorize?{urlencode(pkce_params(in_use))}")
            assert still.status_code == 302 and "/oauth/consent?request=" in still.headers["location"]


async def test_the_other_anonymous_endpoints_share_one_bucket_per_source(vault: Path) -> None:
    set_server(vault, anonymous_requests_per_minute=4)
    with running(vault) as server:
        async with httpx2.AsyncClient(timeout=30) as http:
            spent = [
                await http.post(f"{server.url}/token", data={"grant_type": "refresh_token", "client_id": "x"}),
                await http.post(f"{server.url}/revoke", data={"client_id": "x", "token": "y"}),
                await http.post(f"{server.url}/oauth/consent", data={"decision": "approve"}),
                await http.get(f"{server.url}/authorize?{urlencode(pkce_params('x'))}"),
            ]
            refused = await http.post(f"{server.url}/token", data={"grant_type": "refresh_token", "client_id": "x"})
            health = await http.get(f"{server.url}/healthz")  # not an anonymous OAuth endpoint: not counted
    assert all(r.status_code != 429 for r in spent)
    assert refused.status_code == 429 and refused.json()["error_description"].startswith("Refused [rate-limited]")
    assert health.status_code == 200


async def test_provider_logins_and_joins_share_the_anonymous_bucket(vault: Path) -> None:
    """Starting a provider login keeps a row and the callback may fetch from the provider: a stranger's flood of
    them, or of an invitation's ceremony, is counted per source like the OAuth endpoints (issue 35)."""
    set_server(vault, anonymous_requests_per_minute=3)
    with running(vault) as server:
        async with httpx2.AsyncClient(timeout=30) as http:
            spent = [
                await http.post(f"{server.url}/oidc/nothing/start", data={"csrf": "x"}),
                await http.get(f"{server.url}/oidc/callback?state=nothing&code=x"),
                await http.post(f"{server.url}/join/ngi_nothing/options", json={}),
            ]
            refused = await http.post(f"{server.url}/oidc/other/start", data={"csrf": "x"})
    assert all(r.status_code != 429 for r in spent), [r.status_code for r in spent]
    assert refused.status_code == 429 and refused.json()["error_description"].startswith("Refused [rate-limited]")
