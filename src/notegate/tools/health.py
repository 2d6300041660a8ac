"""The knowledge service's owner-side questions to the tools process: the upstreams' status (in ``/healthz`` to
an environment's own token, and on the owner's console pages), and "is the stored credential this value I
hold?" (the console's verify field: a yes or no, never the stored value).

Who sees what: an anonymous ``/healthz`` never asks the tools process anything (a stranger's request costs no
outbound call) and names no mount; an environment's token sees that environment's mounts; the owner's console
sees the mounts of the environment it works in. The knowledge service asks with a ``tools:health`` token it
mints for the environment (the tools process's own anonymous ``/healthz`` gives counts only).

Bounds: one GET on loopback, at most ``HEALTH_SECONDS``, at most ``MAX_HEALTH_BYTES`` read, awaited on the
event loop (never a worker thread held while the tools process is slow); a tools process that does not
answer is reported as "unavailable", never an error of the page that asked.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx2

from notegate.errors import NotegateError
from notegate.tools.tokens import Minter

#: The longest the knowledge service waits for the tools process's health.
HEALTH_SECONDS = 2.0
#: The most it reads of that answer (a few hundred bytes per mount).
MAX_HEALTH_BYTES = 1 << 18

#: The longest the knowledge service waits for an OAuth step of the tools process (discovery, registration and
#: the code's exchange happen there, over the network).
OAUTH_SECONDS = 45.0

UNAVAILABLE: dict[str, Any] = {"status": "unavailable", "upstreams": {}}


class ToolsHealth:
    def __init__(self, url: str, minter: Minter) -> None:
        self.url = url
        self.minter = minter

    @classmethod
    def of_runtime(cls, runtime) -> ToolsHealth | None:
        """None when no tools gateway is configured."""
        url = runtime.config.tools.url
        if not url:
            return None
        return cls(url, Minter(runtime.state, runtime.config.state_dir, clock=runtime.clock))

    async def of(self, environment: str) -> dict[str, Any]:
        """``{"status": ok|degraded|unavailable, "upstreams": {mount: {...}}}`` for ``environment``'s mounts."""
        token = self.minter.mint_health(environment)
        status, body = await self._exchange("GET", "/healthz", token, None, HEALTH_SECONDS)
        if status != 200 or not isinstance(body.get("upstreams"), dict):
            return dict(UNAVAILABLE)
        return {"status": str(body.get("status", "unavailable")), "upstreams": body["upstreams"]}

    async def _exchange(
        self, method: str, path: str, token: str, body: dict[str, Any] | None, seconds: float
    ) -> tuple[int, dict[str, Any]]:
        """One request to the tools process, bounded in time (the whole exchange) and in the bytes read (as they
        arrive): (status, JSON object), or (0, {}) when it does not answer in time or in shape."""
        with anyio.move_on_after(seconds):
            try:
                async with (
                    httpx2.AsyncClient(trust_env=False, timeout=seconds) as client,
                    client.stream(
                        method, f"{self.url}{path}", json=body, headers={"Authorization": f"Bearer {token}"}
                    ) as answer,
                ):
                    raw = b""
                    async for chunk in answer.aiter_bytes():
                        raw += chunk
                        if len(raw) > MAX_HEALTH_BYTES:
                            return 0, {}
                    data = json.loads(raw)
            except (httpx2.HTTPError, ValueError):
                return 0, {}
            return answer.status_code, data if isinstance(data, dict) else {}
        return 0, {}

    async def _post(self, path: str, token: str, body: dict[str, Any], seconds: float) -> tuple[int, dict[str, Any]]:
        return await self._exchange("POST", path, token, body, seconds)

    def _refused(self, status: int, body: dict[str, Any]) -> NotegateError:
        if status == 0:
            return NotegateError("the tools process did not answer", rule="tools-unavailable")
        return NotegateError(str(body.get("error") or "refused"), rule=str(body.get("rule") or "tools-unavailable"))

    async def oauth_start(
        self, environment: str, mount: str, login: str, redirect_uri: str, client_document: str | None
    ) -> str:
        """The authorization URL of a new upstream grant for ``mount`` (the tools process does the OAuth)."""
        token = self.minter.mint_oauth(environment, mount, login)
        body = {"redirect_uri": redirect_uri, "client_document": client_document}
        status, answer = await self._post("/v1/oauth/start", token, body, OAUTH_SECONDS)
        url = answer.get("authorization_url")
        if status != 200 or not isinstance(url, str) or not url.startswith(("https://", "http://")):
            raise self._refused(status, answer)
        return url

    async def oauth_pending(self, state: str, login: str) -> tuple[str, str]:
        """(mount, environment) of the grant a returning ``state`` belongs to."""
        status, answer = await self._post(
            "/v1/oauth/pending", self.minter.mint_oauth("", "", login), {"state": state}, OAUTH_SECONDS
        )
        if status != 200:
            raise self._refused(status, answer)
        return str(answer.get("mount", "")), str(answer.get("environment", ""))

    async def oauth_finish(self, environment: str, mount: str, login: str, fields: dict[str, str]) -> None:
        token = self.minter.mint_oauth(environment, mount, login)
        status, answer = await self._post("/v1/oauth/finish", token, fields, OAUTH_SECONDS)
        if status != 200:
            raise self._refused(status, answer)

    async def verify(self, environment: str, mount: str, variable: str, value: str, login: str) -> bool | None:
        """Does the stored credential equal ``value``? None when the tools process does not answer."""
        token = self.minter.mint_verify(environment, mount, variable, login)
        status, body = await self._post("/v1/verify", token, {"value": value}, HEALTH_SECONDS)
        match = body.get("match") if status == 200 else None
        return match if isinstance(match, bool) else None
