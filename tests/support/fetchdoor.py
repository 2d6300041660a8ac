"""The server's fetch as the HTTP door shows it: /healthz read with a token, a refusal's text, and a wait
for a state."""

from __future__ import annotations

import time

import httpx2

from support import text_of


def health(url: str, token: str | None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx2.get(f"{url}/healthz", headers=headers, timeout=10).json()


def shows_refusal(result, prefix: str) -> bool:
    """The door's refusal text (the SDK prefixes 'Error executing tool NAME: ')."""
    return prefix in text_of(result)


def until(check, timeout: float = 60.0):
    """Poll the server until ``check()`` answers something true (the fetch loop runs on its own clock)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError("the server never got there")
