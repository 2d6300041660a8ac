"""Installing and starting notegate as a newcomer does: which Pythons it accepts, which one `make` picks (on
fake interpreters: a broken pyenv shim, an old Python), a stale .venv rebuilt, `make clean` keeping the vault,
a busy port refused before "serving" is printed. The real install on every other interpreter this machine
has runs with NOTEGATE_TEST_INSTALL=1 (it downloads the pinned wheels: minutes)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
NOTEGATE = str(Path(sys.executable).parent / "notegate")


def test_requires_python_is_every_cpython_the_pinned_wheels_cover() -> None:
    """cp311..cp315 wheels exist for every pinned dependency (pygit2 1.21.0 and pydantic-core 2.50.5 are the
    binding ones: no cp310, no cp316), checked with pip download --only-binary=:all: --python-version X."""
    spec = SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert [v for v in ("3.10", "3.11", "3.12", "3.13", "3.14", "3.15", "3.16") if spec.contains(v + ".0")] == [
        "3.11",
        "3.12",
        "3.13",
        "3.14",
        "3.15",
    ]
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py311"  # the oldest one: no newer syntax slips in


def fake_python(folder: Path, name: str, version: str | None) -> Path:
    """An executable that answers like an interpreter printing its X.Y, or fails like a broken shim."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    body = f"echo {version}" if version else "echo 'pyenv: python: command not found' >&2; exit 127"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def _utilities() -> str:
    """A folder holding only the few tools pick-python uses, so no real interpreter is on the test's PATH."""
    folder = Path(os.environ.get("TMPDIR", "/tmp")) / f"notegate-pick-utils-{os.getpid()}"
    folder.mkdir(exist_ok=True)
    for tool in ("sed", "dirname", "rm"):
        link = folder / tool
        if not link.exists():
            link.symlink_to(shutil.which(tool))
    return str(folder)


def pick(*args: str, path: str, python: str | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {"PATH": f"{path}:{_utilities()}", **({"PYTHON": python} if python is not None else {})}
    return subprocess.run(
        ["/bin/sh", str(cwd / "tools" / "pick-python"), *args], env=env, cwd=cwd, capture_output=True, text=True
    )


def test_pick_python_takes_the_first_that_runs_and_is_supported(tmp_path: Path) -> None:
    first, second = tmp_path / "shims", tmp_path / "bin"
    fake_python(first, "python3.13", None)  # a pyenv shim for a version that is not active
    fake_python(second, "python3.13", "3.13")  # not reached: the name's first hit on PATH is the shim
    fake_python(second, "python3.12", "3.12")
    fake_python(second, "python3.11", "3.11")
    result = pick(path=f"{first}:{second}")
    assert (result.returncode, result.stdout.strip()) == (0, str(second / "python3.12"))
    only_old = tmp_path / "old"
    fake_python(only_old, "python3", "3.10")
    fake_python(only_old, "python3.16", "3.16")
    refused = pick(path=str(only_old))
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr == (
        "pick-python: no supported Python on PATH (notegate needs CPython >=3.11,<3.16: install python3.11, "
        "python3.12 or python3.13, or name one with make PYTHON=/path/to/python)\n"
    )


def test_an_explicit_python_is_checked_not_replaced(tmp_path: Path) -> None:
    old = fake_python(tmp_path, "python3.10", "3.10")
    fake_python(tmp_path, "python3.11", "3.11")
    refused = pick(path=str(tmp_path), python=str(old))
    assert refused.returncode == 1
    assert refused.stderr == f"pick-python: PYTHON={old} is Python 3.10; notegate needs >=3.11,<3.16\n"
    broken = pick(path=str(tmp_path), python=str(tmp_path / "nope"))
    assert (
        broken.stderr == f"pick-python: PYTHON={tmp_path / 'nope'} does not run; notegate needs CPython >=3.11,<3.16\n"
    )
    chosen = pick(path=str(tmp_path), python=str(tmp_path / "python3.11"))
    assert chosen.stdout.strip() == str(tmp_path / "python3.11")


@pytest.mark.parametrize(
    ("venv_python", "kept", "said"),
    [
        ("3.12", True, ""),
        ("3.10", False, ".venv is Python 3.10, not 3.12 ({chosen}); building it again instead of reusing it\n"),
        (None, False, ".venv: its interpreter does not run any more; building it again with {chosen} (Python 3.12)\n"),
    ],
)
def test_a_venv_of_another_python_is_removed_so_make_rebuilds_it(
    tmp_path: Path, venv_python: str | None, kept: bool, said: str
) -> None:
    project = copy_make_project(tmp_path / "project")
    chosen = fake_python(tmp_path / "bin", "python3.12", "3.12")
    fake_python(project / ".venv" / "bin", "python", venv_python)
    result = pick("--venv", ".venv", path=str(tmp_path / "bin"), cwd=project)
    assert result.returncode == 0
    assert result.stderr == said.format(chosen=chosen)
    assert (project / ".venv").exists() is kept


def copy_make_project(target: Path) -> Path:
    """The Makefile, its helper and pyproject.toml in a folder of their own (make clean must not touch ours)."""
    (target / "tools").mkdir(parents=True)
    for name in ("Makefile", "pyproject.toml", "tools/pick-python"):
        shutil.copy2(REPO / name, target / name)
    return target


def make(project: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path or os.environ["PATH"]}
    env.pop("PYTHON", None)
    env.pop("MAKEFLAGS", None)
    return subprocess.run(["make", "-s", *args], cwd=project, env=env, capture_output=True, text=True, timeout=60)


def test_make_uses_the_picked_python_and_passes_port_and_host(tmp_path: Path) -> None:
    project = copy_make_project(tmp_path / "project")
    fake = fake_python(tmp_path / "bin", "python3.12", "3.12")
    assert make(project, "python", path=f"{tmp_path / 'bin'}:/usr/bin:/bin").stdout.strip() == str(fake)
    planned = make(project, "-n", "run", "PORT=8799", "HOST=127.0.0.2", path=f"{tmp_path / 'bin'}:/usr/bin:/bin")
    assert f"'{fake}' -m venv .venv" in planned.stdout
    assert "touch .venv/.installed-3.12" in planned.stdout  # the stamp names the version: another one reinstalls
    assert planned.stdout.rstrip().endswith(
        ".venv/bin/notegate serve --config var/demo/notegate.toml --token-file var/demo/demo.token "
        "--port 8799 --host 127.0.0.2"
    )


def test_make_clean_keeps_the_vault_and_distclean_warns_before_deleting_it(tmp_path: Path) -> None:
    project = copy_make_project(tmp_path / "project")
    (project / ".venv" / "bin").mkdir(parents=True)
    (project / "var" / "demo" / "origin.git").mkdir(parents=True)
    (project / "var" / "demo" / "notegate.toml").write_text("")
    cleaned = make(project, "clean")
    assert cleaned.returncode == 0, cleaned.stderr
    assert not (project / ".venv").exists() and (project / "var" / "demo" / "origin.git").is_dir()
    assert "kept var/ (the demo vault and its origin); make distclean deletes it" in cleaned.stdout
    gone = make(project, "distclean")
    assert gone.returncode == 0, gone.stderr
    assert (
        "WARNING: deleting var/ (the demo vault var/demo, its origin var/demo/origin.git and its tokens)" in gone.stdout
    )
    assert not (project / "var").exists()


# ------------------------------------------------------------------ serve
def test_a_busy_port_is_refused_before_serving_is_printed(vault: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        result = subprocess.run(
            [NOTEGATE, "serve", "--config", str(vault), "--port", str(port)], capture_output=True, text=True, timeout=60
        )
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"notegate serve: Refused [port-in-use]: cannot listen on 127.0.0.1:{port}: Address already in use. "
        "Stop what holds it (ss -ltnp shows who), or choose another: notegate serve --port N, or make run PORT=N.\n"
    )


def test_the_connect_line_works_from_any_folder(tmp_path: Path) -> None:
    from notegate.cli import _connect_hint

    os.chdir(tmp_path)
    hint = _connect_hint("http://localhost:8799", "var/demo/demo.token", "var/demo/notegate.toml")
    token_file, config = tmp_path / "var/demo/demo.token", tmp_path / "var/demo/notegate.toml"
    assert (
        "claude mcp add --scope user --transport http notegate http://localhost:8799/mcp "
        f'--header "Authorization: Bearer $(cat {token_file})"'
    ) in hint
    assert f"notegate setup claude-code --config {config} --url http://localhost:8799" in hint
    assert "CONFIG" not in hint


def test_version_is_the_distribution_s_everywhere() -> None:
    import notegate
    from notegate.doors.mcp.server import PACKAGE_VERSION

    shown = subprocess.run([NOTEGATE, "--version"], capture_output=True, text=True, timeout=60)
    assert shown.stdout == f"notegate {PYPROJECT['project']['version']}\n"
    assert PACKAGE_VERSION == notegate.__version__ == PYPROJECT["project"]["version"]


# ------------------------------------------------------------------ a real install on the other Pythons
def other_interpreters() -> list[str]:
    """Every supported interpreter on this machine but the one running the tests (Debian's, pyenv's)."""
    found = {}
    spec = SpecifierSet(PYPROJECT["project"]["requires-python"])
    for candidate in ["/usr/bin/python3.1*", os.path.expanduser("~/.pyenv/versions/3.1*/bin/python3.1?")]:
        for path in sorted(glob.glob(candidate)):
            if path.endswith("-config") or not os.access(path, os.X_OK):
                continue
            probe = subprocess.run(
                [path, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"], capture_output=True, text=True
            )
            version = probe.stdout.strip()
            if (
                probe.returncode == 0
                and spec.contains(version)
                and not version.startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")
            ):
                found.setdefault(version.rsplit(".", 1)[0], path)
    return sorted(found.values())


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("NOTEGATE_TEST_INSTALL") != "1", reason="set NOTEGATE_TEST_INSTALL=1 (minutes)")
@pytest.mark.parametrize("python", other_interpreters() or ["none"])
def test_install_and_import_on_every_other_python(python: str, tmp_path: Path) -> None:
    if python == "none":
        pytest.skip("no other supported interpreter on this machine")
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True, timeout=300)
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check", str(REPO)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert installed.returncode == 0, installed.stderr[-2000:]
    shown = subprocess.run([str(venv / "bin" / "notegate"), "--version"], capture_output=True, text=True)
    assert shown.stdout == f"notegate {PYPROJECT['project']['version']}\n"
    imported = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import notegate.cli, notegate.doors.http, notegate.services.runtime"],
        capture_output=True,
        text=True,
    )
    assert imported.returncode == 0, imported.stderr


def test_the_hints_name_the_notegate_that_prints_them_when_path_does_not_find_it(tmp_path: Path) -> None:
    """After `make run`, notegate lives in the checkout's .venv/bin, which is not on PATH: the lines it prints
    must run as pasted, so they name that file, not a bare `notegate` the shell cannot find."""
    env = {k: v for k, v in os.environ.items() if k != "PATH"} | {"PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [NOTEGATE, "init", str(tmp_path / "v")], capture_output=True, text=True, timeout=120, env=env
    )
    assert result.returncode == 0, result.stderr
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("Serve it with: ")]
    command = line.removeprefix("Serve it with: ").split(" serve ")[0]
    assert command == str(Path(NOTEGATE).absolute())
    assert subprocess.run([command, "--version"], capture_output=True, env=env, timeout=60).returncode == 0
