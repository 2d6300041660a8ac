"""The tools gateway's test upstreams: the pinned real ones from the local cache (``make upstream-cache``) and
a small credential-checking upstream of our own, built here as a wheel (deterministic bytes, so one pin).

Nothing here downloads. Without the cache (or without node for the npm one) the tests skip with the reason,
unless NOTEGATE_REQUIRE_TOOLS_UPSTREAMS=1 (``.ci/run``) makes them fail instead."""

from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".tools" / "upstreams"

#: The pins, as a catalog holds them (the same versions the Makefile's upstream-cache target fetches).
TIME = {
    "kind": "pypi",
    "package": "mcp-server-time",
    "version": "2026.10.19",
    "digest": "sha256:5c099a001c6ca78260bda419f2e9b2aabee1adc4fe6ca56d8959871ad8da58a1",
    "program": "mcp-server-time",
}
EVERYTHING = {
    "kind": "npm",
    "package": "@modelcontextprotocol/server-everything",
    "version": "2026.8.31",
    "digest": "sha512-5U3OZh8Xq0Li4nA26l6uNvV9/1suMDuWSn+NjLZIhzinhMY6N3A4DCrxVecBGPf2PsNFKTEv5krxGPRwzxc7jQ==",
    "program": "mcp-server-everything",
}

#: A fake credential of a shape the scanner knows (a GitHub token): the checker's leak tool returns it.
LEAKED = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

CHECKER_SOURCE = '''
"""A credential-checking upstream: proves it received exactly its mount's credential, never returns it."""
import hashlib
import os

from mcp.server import MCPServer

app = MCPServer("checker")
VARIANT = os.environ.get("CHECK_VARIANT", "1")


@app.tool(description="Compare the credential this upstream was given with a digest you hold."
          + (" Now with more!" if VARIANT == "2" else ""))
def check(expected_sha256: str) -> str:
    given = os.environ.get("CHECK_TOKEN", "")
    return "match" if hashlib.sha256(given.encode()).hexdigest() == expected_sha256 else "mismatch"


@app.tool(description="The names of the environment variables this upstream was started with.")
def env_names() -> str:
    return " ".join(sorted(os.environ))


@app.tool(description="Return a text holding a token-shaped value.")
def leak() -> str:
    return "here it is: LEAKED_VALUE and nothing else"


@app.tool(description="Write something upstream.")
def write_thing(text: str) -> str:
    return "written"


@app.tool(description="Answer after a while.")
async def slow(seconds: float) -> str:
    import anyio

    await anyio.sleep(seconds)
    return "late"


@app.tool(description="Return a large text.")
def big() -> str:
    return "x" * 300000


@app.tool(description="Stop this upstream at once.")
def crash() -> str:
    os._exit(3)


if VARIANT == "2":

    @app.tool(description="A tool that appeared later.")
    def extra() -> str:
        return "surprise"


def main() -> None:
    app.run()
'''


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def checker_wheel(folder: Path) -> tuple[Path, dict[str, str]]:
    """Build the checker's wheel in ``folder`` (same bytes every time) and return it with its pin."""
    files = {
        "notegate_checker/__init__.py": CHECKER_SOURCE.replace("LEAKED_VALUE", LEAKED).encode(),
        "notegate_checker-1.0.0.dist-info/METADATA": (
            b"Metadata-Version: 2.1\nName: notegate-checker\nVersion: 1.0.0\nRequires-Dist: mcp==2.3.0\n"
        ),
        "notegate_checker-1.0.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: notegate-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
        "notegate_checker-1.0.0.dist-info/entry_points.txt": (
            b"[console_scripts]\nnotegate-checker = notegate_checker:main\n"
        ),
    }
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in files.items())
    record += "notegate_checker-1.0.0.dist-info/RECORD,,\n"
    files["notegate_checker-1.0.0.dist-info/RECORD"] = record.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            wheel.writestr(info, data)
    path = folder / "notegate_checker-1.0.0-py3-none-any.whl"
    path.write_bytes(buffer.getvalue())
    digest = "sha256:" + hashlib.sha256(buffer.getvalue()).hexdigest()
    return path, {
        "kind": "pypi",
        "package": "notegate-checker",
        "version": "1.0.0",
        "digest": digest,
        "program": "notegate-checker",
    }


def _missing(reason: str) -> None:
    if os.environ.get("NOTEGATE_REQUIRE_TOOLS_UPSTREAMS") == "1":
        pytest.fail(reason + " (NOTEGATE_REQUIRE_TOOLS_UPSTREAMS=1 requires it)")
    pytest.skip(reason)


def upstream_cache(folder: Path) -> tuple[Path, dict[str, str]]:
    """A cache for one test module: the pinned artifacts of the real cache (linked, not copied) plus the
    checker's wheel. Returns it and the checker's pin. Skips (or fails under CI) without the real cache."""
    if not (CACHE / ".installed").is_file():
        _missing("the upstream cache is not filled: run `make upstream-cache`")
    (folder / "pypi").mkdir(parents=True)
    for wheel in (CACHE / "pypi").glob("*.whl"):
        (folder / "pypi" / wheel.name).symlink_to(wheel)
    for part in ("npm", "npm-cache"):
        (folder / part).symlink_to(CACHE / part)
    _wheel, pin = checker_wheel(folder / "pypi")
    return folder, pin


def node_or_skip() -> str:
    node = shutil.which("node")
    if node is None or shutil.which("npm") is None:
        _missing("node and npm are not installed (the npm upstream needs them)")
    return node
