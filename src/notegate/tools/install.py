"""Install each catalog entry into its own environment, from the local cache, verified against its pin.

Nothing here downloads: pip runs with ``--no-index`` over the cache's ``pypi/`` folder and npm with
``--offline`` over its ``npm-cache/``, both with a clean environment (no pip or npm configuration of the
machine, no index URL, no proxy). The pinned artifact itself is hashed before anything is installed: a
missing artifact, or one whose digest differs from the pin, is a hard load failure (never a warning), and a
pin that names a range or a tag never gets this far (policy.decide_pin). npm runs with ``--ignore-scripts``:
no package's install script runs on this host.

An environment is made once per pin (its folder is named by the digest) and reused while its stamp names
the same digest.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from notegate.errors import NotegateError
from notegate.policy.tools import decide_pin

#: How long one install may take (pip or npm, offline) before the load fails.
INSTALL_SECONDS = 300
STAMP = ".notegate-installed"


@dataclass(frozen=True)
class Entry:
    """One catalog row."""

    name: str
    kind: str
    package: str
    version: str
    digest: str
    program: str

    @classmethod
    def of(cls, row) -> Entry:
        return cls(*(str(row[k]) for k in ("name", "kind", "package", "version", "digest", "program")))


@dataclass(frozen=True)
class Launch:
    """How to start an installed upstream: an argument vector (never a shell string) and its folder."""

    argv: tuple[str, ...]
    cwd: Path


def file_digest(path: Path, algorithm: str) -> bytes:
    h = hashlib.new(algorithm)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 16), b""):
            h.update(block)
    return h.digest()


def _pypi_artifact(entry: Entry, cache: Path) -> Path:
    stem = re.sub(r"[-_.]+", "_", entry.package).lower()
    candidates = sorted((cache / "pypi").glob(f"{stem}-{entry.version}-*.whl"))
    candidates += [
        p for p in sorted((cache / "pypi").glob("*.whl")) if p.name.lower().startswith(f"{stem}-{entry.version}-")
    ]
    if not candidates:
        raise NotegateError(
            f"the cache holds no wheel of {entry.package}=={entry.version} for the catalog entry '{entry.name}'",
            rule="tools-artifact-missing",
        )
    want = entry.digest.removeprefix("sha256:")
    for path in dict.fromkeys(candidates):
        if file_digest(path, "sha256").hex() == want:
            return path
    raise NotegateError(
        f"the cached wheel of {entry.package}=={entry.version} does not match the pin of '{entry.name}'",
        rule="tools-pin-mismatch",
    )


def _npm_artifact(entry: Entry, cache: Path) -> Path:
    tarball = cache / "npm" / f"{entry.package.lstrip('@').replace('/', '-')}-{entry.version}.tgz"
    if not tarball.is_file():
        raise NotegateError(
            f"the cache holds no tarball of {entry.package}@{entry.version} for the catalog entry '{entry.name}'",
            rule="tools-artifact-missing",
        )
    integrity = "sha512-" + base64.b64encode(file_digest(tarball, "sha512")).decode("ascii")
    if integrity != entry.digest:
        raise NotegateError(
            f"the cached tarball of {entry.package}@{entry.version} does not match the pin of '{entry.name}'",
            rule="tools-pin-mismatch",
        )
    return tarball


def require_pinned(entry: Entry) -> None:
    """Refuse ``entry`` unless its pin holds (policy.decide_pin): the one check both a package install
    (:func:`verify`) and a container image (tools/container.py) make before anything else."""
    decision = decide_pin(entry.kind, entry.package, entry.version, entry.digest, entry.program)
    if not decision.allowed:
        raise NotegateError(f"the catalog entry '{entry.name}' is not pinned: {decision.reason}", rule=decision.rule)


def verify(entry: Entry, cache: Path) -> Path:
    """The cached artifact of ``entry`` after checking its pin and its digest (raises on any mismatch)."""
    require_pinned(entry)
    return _pypi_artifact(entry, cache) if entry.kind == "pypi" else _npm_artifact(entry, cache)


def _run(argv: list[str], env: dict[str, str], entry: Entry) -> None:
    try:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=INSTALL_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NotegateError(
            f"installing '{entry.name}' failed ({type(exc).__name__})", rule="tools-install-failed"
        ) from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
        raise NotegateError(f"installing '{entry.name}' failed: {last}", rule="tools-install-failed")


def install(entry: Entry, cache: Path, installs: Path, *, node: str | None = None) -> Launch:
    """``entry`` installed (or found installed) in its own environment; how to start it."""
    artifact = verify(entry, cache)
    key = hashlib.sha256(entry.digest.encode()).hexdigest()[:16]
    home = installs / f"{entry.name}-{key}"
    stamp = home / STAMP
    if not (stamp.is_file() and stamp.read_text() == entry.digest):
        if home.exists():
            shutil.rmtree(home)
        home.mkdir(parents=True)
        if entry.kind == "pypi":
            _install_pypi(entry, artifact, cache, home)
        else:
            _install_npm(entry, artifact, cache, home, node)
        stamp.write_text(entry.digest)
    return _launch(entry, home, node)


def _install_pypi(entry: Entry, wheel: Path, cache: Path, home: Path) -> None:
    env = {"PATH": os.defpath, "HOME": str(home), "PIP_CONFIG_FILE": os.devnull}
    _run([sys.executable, "-m", "venv", "--without-pip", str(home / "venv")], env, entry)
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(home / "venv" / "bin" / "python"),
            "install",
            "--isolated",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--no-cache-dir",
            "--only-binary",
            ":all:",
            "--find-links",
            str(cache / "pypi"),
            str(wheel),
        ],
        env,
        entry,
    )


def _install_npm(entry: Entry, tarball: Path, cache: Path, home: Path, node: str | None) -> None:
    npm = shutil.which("npm")
    if node is None or npm is None:
        raise NotegateError(
            f"'{entry.name}' is an npm package and node or npm is not installed", rule="tools-install-failed"
        )
    env = {
        "PATH": f"{Path(node).parent}{os.pathsep}{os.defpath}",
        "HOME": str(home),
        "npm_config_userconfig": str(home / ".npmrc-user"),
        "npm_config_globalconfig": str(home / ".npmrc-global"),
    }
    (home / "package.json").write_text('{"private": true}\n')
    _run(
        [
            npm,
            "install",
            "--offline",
            "--ignore-scripts",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
            "--cache",
            str(cache / "npm-cache"),
            "--prefix",
            str(home),
            str(tarball),
        ],
        env,
        entry,
    )


def _launch(entry: Entry, home: Path, node: str | None) -> Launch:
    if entry.kind == "pypi":
        program = home / "venv" / "bin" / entry.program
        if not program.is_file():
            raise NotegateError(
                f"'{entry.package}' installs no program named {entry.program}", rule="tools-install-failed"
            )
        return Launch((str(program),), home)
    package_dir = home / "node_modules" / entry.package
    try:
        bins = json.loads((package_dir / "package.json").read_text()).get("bin") or {}
    except (OSError, ValueError) as exc:
        raise NotegateError(f"'{entry.package}' is not installed whole", rule="tools-install-failed") from exc
    if isinstance(bins, str):
        bins = {entry.package.rsplit("/", 1)[-1]: bins}
    script = bins.get(entry.program) if isinstance(bins, dict) else None
    if not isinstance(script, str) or node is None:
        raise NotegateError(f"'{entry.package}' installs no program named {entry.program}", rule="tools-install-failed")
    path = (package_dir / script).resolve()
    if not path.is_relative_to(package_dir.resolve()):
        raise NotegateError(f"'{entry.package}' names a program outside itself", rule="tools-install-failed")
    return Launch((node, str(path)), home)
