"""The documentation site, built once per worker (``mkdocs build --strict``, about 10 s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.sitebuild import REPO, mkdocs_build


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    built = mkdocs_build(REPO / "mkdocs.yml", out)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-5000:]
    return out
