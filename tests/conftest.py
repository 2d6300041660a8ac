"""Fixtures: real vault directories, runtimes and callers. No mocks of git, SQLite or HTTP."""

from __future__ import annotations

import shutil
from pathlib import Path

import pygit2
import pytest

from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from support.callers import make_caller, vault_template


def pytest_configure(config: pytest.Config) -> None:
    """Byte-compile the package once, before the workers start. Hundreds of tests start a fresh interpreter
    (git runs the pre-receive hook per push; the Claude Code hooks; the CLI's real path): with
    PYTHONDONTWRITEBYTECODE set, or a checkout whose bytecode is older than its sources, each of them
    compiled every notegate module it imports again (~0.1 s of CPU per pre-receive hook). compileall
    writes only what is missing or stale, next to the sources (``__pycache__``, ignored by git)."""
    if hasattr(config, "workerinput"):  # an xdist worker: the controller did it
        return
    import compileall

    import notegate

    compileall.compile_dir(Path(notegate.__file__).parent, quiet=1)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def vault(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh `notegate init` directory; returns its config path. It is a copy of one made earlier the same
    day by this worker, with the server clone's origin pointed at the copy's own origin (all init wrote
    that names its directory), so it is the directory `notegate init` would have made."""
    target = tmp_path / "vault"
    shutil.copytree(vault_template(tmp_path_factory), target, symlinks=True)
    config = load_config(target / "notegate.toml")
    for name, env in config.environments.items():
        clone = config.state_dir / "envs" / name / "vault.git"
        pygit2.Repository(str(clone)).remotes.set_url("origin", env.origin_url)
    return target / "notegate.toml"


@pytest.fixture
def runtime(vault: Path):
    rt = Runtime(load_config(vault))
    yield rt
    rt.close()


@pytest.fixture
def notes(runtime: Runtime) -> NotesService:
    return NotesService(runtime)


@pytest.fixture
def trusted() -> Caller:
    return make_caller()


@pytest.fixture
def restricted() -> Caller:
    return make_caller(tier="restricted", client_class="hosted", login="phone", client="chat-app")


# -- the state database on both backends -------------------------------------------------------------------
# State-level tests take ``state_url``: "" (SQLite in tmp_path, the embedded default) and a fresh schema on a
# throwaway PostgreSQL cluster (tests/support/pgcluster.py). Without PostgreSQL's binaries the second skips, unless
# NOTEGATE_REQUIRE_POSTGRES=1 (.ci/run) makes it fail.
@pytest.fixture(scope="session")
def pg_cluster():
    import os

    from support.pgcluster import Cluster, find_bin

    bindir = find_bin()
    if bindir is None:
        if os.environ.get("NOTEGATE_REQUIRE_POSTGRES") == "1":
            pytest.fail("NOTEGATE_REQUIRE_POSTGRES=1 but no PostgreSQL server binaries were found")
        pytest.skip("no PostgreSQL server binaries (Debian's postgresql package)")
    cluster = Cluster(bindir)
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def state_url(request) -> str:
    if request.param == "sqlite":
        return ""
    return request.getfixturevalue("pg_cluster").new_database()
