"""The documentation site, built once per test session (``mkdocs build --strict``, about 10 s of CPU).

The built site is an immutable artefact of the sources the session runs against, and every test that uses it
only reads it. Under xdist each worker is its own process, so a session-scoped fixture alone built it once per
worker (twice under ``make test``'s ``-n 2``); the workers share the session's temporary root (the parent of
each worker's base directory), so the first worker to need the site builds it there under a file lock and the
others read that build."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from support.sitebuild import REPO, mkdocs_build


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # pytest-N/, shared by this session's workers (each has pytest-N/popen-gwK/)
    out = root / "docs-site" / "site"
    with open(root / "docs-site.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, even if the build fails
        done = root / "docs-site" / "built"
        if not done.exists():
            built = mkdocs_build(REPO / "mkdocs.yml", out)
            assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-5000:]
            done.touch()
    return out
