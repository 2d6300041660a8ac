"""A container image by digest as a catalog kind (issue 32): the pin names one image (a tag is a hard load
failure), the argument vector that runs it is built from typed values only (no credential value, nothing of
the host), the tools process refuses to start without a working engine, and a fake engine standing in for
docker proves the whole path: the tools process runs it with exactly that vector, the upstream receives
exactly its mount's credential through the engine's environment, and a caller's call comes back.

No container engine runs here (nor in CI): the fake engine is a small Python script named ``docker`` first on
the tools process's PATH; it records what it was asked and, for ``run``, execs a tiny MCP upstream with only
the variables named by ``--env``, as the engine would."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import httpx2
import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.policy import decide_mount, decide_pin
from notegate.policy.container import ENGINE_VARIABLES, container_argv
from notegate.state import StateDB
from notegate.tools.tokens import Minter
from support import free_port, notegate, start_cli
from support.upstreams import CHECKER_SOURCE

DIGEST = "sha256:" + "ab" * 32
IMAGE = "ghcr.io/example/checker"
SECRET = "container-credential-of-the-owner-5678"

# -- the pin ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("image", "version", "digest", "network"),
    [
        (IMAGE, "", DIGEST, ""),
        ("docker.io/library/mcp-time", "", DIGEST, "none"),
        ("localhost:5000/team/my_server", "", DIGEST, "bridge"),
        ("checker", "", DIGEST, ""),
    ],
)
def test_a_container_pinned_by_digest_is_accepted(image: str, version: str, digest: str, network: str) -> None:
    assert decide_pin("container", image, version, digest, network).allowed


@pytest.mark.parametrize(
    ("image", "version", "digest", "network"),
    [
        (IMAGE + ":latest", "", DIGEST, ""),  # a tag in the name
        (IMAGE, "latest", DIGEST, ""),  # a tag as the version
        (IMAGE, "1.2.3", DIGEST, ""),  # a version is a tag too
        (IMAGE, "", "", ""),  # no digest
        (IMAGE, "", "sha256:" + "ab" * 31, ""),  # a short digest
        (IMAGE, "", "sha256:" + "AB" * 32, ""),  # not lowercase hex
        (IMAGE, "", "sha512:" + "ab" * 64, ""),  # another algorithm
        (f"{IMAGE}@{DIGEST}", "", DIGEST, ""),  # the digest belongs in its own field
        ("Ghcr.io/Example/Checker", "", DIGEST, ""),  # repositories are lowercase
        (IMAGE + " --privileged", "", DIGEST, ""),
        ("--privileged", "", DIGEST, ""),
        (IMAGE, "", DIGEST, "host"),  # the host's network
        (IMAGE, "", DIGEST, "container:other"),  # another container's
        ("a/" * 130 + "b", "", DIGEST, ""),  # longer than a reference may be
    ],
)
def test_a_container_pin_that_does_not_name_one_image_is_refused(
    image: str, version: str, digest: str, network: str
) -> None:
    decision = decide_pin("container", image, version, digest, network)
    assert not decision.allowed and decision.rule == "tools-pin-invalid"


@given(st.text(alphabet="abcXYZ019_.-", min_size=1, max_size=20))
def test_any_tag_on_a_container_image_is_refused(tag: str) -> None:
    assert decide_pin("container", f"{IMAGE}:{tag}", "", DIGEST, "").rule == "tools-pin-invalid"
    assert decide_pin("container", IMAGE, tag, DIGEST, "").rule == "tools-pin-invalid"


# -- the argument vector ------------------------------------------------------------------------------------

_names = st.lists(st.from_regex(r"[A-Z][A-Z0-9_]{0,20}", fullmatch=True), max_size=6, unique=True).map(tuple)


@given(
    variables=_names,
    values=st.lists(st.text(min_size=1, max_size=40), min_size=6, max_size=6),
    network=st.sampled_from(["", "none", "bridge"]),
    memory=st.integers(1, 1 << 20),
    pids=st.integers(1, 1 << 16),
)
def test_the_argv_holds_fixed_flags_names_and_the_image_only(
    variables: tuple[str, ...], values: list[str], network: str, memory: int, pids: int
) -> None:
    """Whatever the mount's credentials hold, none of it is in the vector (``ps`` would show it): only the
    declared NAMES, each after its own ``--env``, and the pinned reference last."""
    argv = container_argv(
        "/usr/bin/docker", IMAGE, DIGEST, network=network, variables=variables, memory_mb=memory, pids=pids
    )
    assert argv[:11] == (
        "/usr/bin/docker",
        "run",
        "--rm",
        "-i",
        "--pull=never",
        f"--network={network or 'none'}",
        "--read-only",
        "--cap-drop=ALL",
        "--security-opt=no-new-privileges",
        f"--memory={memory}m",
        f"--pids-limit={pids}",
    )
    assert argv[-1] == f"{IMAGE}@{DIGEST}"
    middle = argv[11:-1]
    assert middle[::2] == ("--env",) * len(variables) and middle[1::2] == variables
    secrets = [v for v in values if len(v) > 3 and v not in variables]
    assert not any(secret in element for secret in secrets for element in argv[11:-1])
    assert not any("=" in name for name in middle[1::2])


@pytest.mark.parametrize("variable", ["DOCKER_HOST", "XDG_RUNTIME_DIR", "CONTAINER_HOST"])
def test_a_container_mount_may_not_declare_the_engines_own_variables(tmp_path: Path, variable: str) -> None:
    """Such a value would steer the engine client (which daemon, which config), not reach the container."""
    from notegate.errors import NotegateError
    from notegate.tools.container import container_launch
    from notegate.tools.install import Entry
    from notegate.tools.settings import ToolsConfig

    assert decide_mount("box", "checker", "me", "personal", (variable,), ()).allowed  # fine for a package
    entry = Entry("checker", "container", IMAGE, "", DIGEST, "")
    with pytest.raises(NotegateError) as refused:
        container_launch(entry, "/usr/bin/docker", "box", (variable,), ToolsConfig(installs=tmp_path))
    assert refused.value.rule == "tools-mount-invalid"
    assert variable in ENGINE_VARIABLES


# -- the tools process --------------------------------------------------------------------------------------

FAKE_ENGINE = r"""#!{python}
# A stand-in for docker: records its argv and the names of its environment, then acts as the engine would.
import json, os, sys

with open({record!r}, "a") as handle:
    handle.write(json.dumps({{"argv": sys.argv, "env": sorted(os.environ)}}) + "\n")
args = sys.argv[1:]
if args[:1] == ["version"]:
    sys.exit({version_exit})
if args[:2] == ["image", "inspect"]:
    sys.exit(0 if args[2:] == [{reference!r}] else 1)
if args[:1] == ["run"]:
    names = [args[i + 1] for i, a in enumerate(args) if a == "--env"]
    env = {{name: os.environ[name] for name in names if name in os.environ}}
    os.execve({python!r}, [{python!r}, {upstream!r}], env)
sys.exit(2)
"""


def fake_engine(folder: Path, *, daemon: bool = True, reference: str = f"{IMAGE}@{DIGEST}") -> Path:
    """A folder holding ``docker`` (the fake engine) and the upstream it runs; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    upstream = folder / "checker.py"
    upstream.write_text(CHECKER_SOURCE + "\nmain()\n")
    engine = folder / "docker"
    engine.write_text(
        FAKE_ENGINE.format(
            python=sys.executable,
            record=str(folder / "calls.jsonl"),
            version_exit=0 if daemon else 1,
            reference=reference,
            upstream=str(upstream),
        )
    )
    engine.chmod(0o755)
    return folder


def engine_calls(folder: Path) -> list[dict]:
    path = folder / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.is_file() else []


def tools(config: Path, *args: str, input: str | None = None) -> subprocess.CompletedProcess[str]:
    done = notegate("tools", *args, "--config", str(config), input=input)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture
def box_vault(vault: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A vault whose catalog holds one container entry, mounted as ``box`` with one credential."""
    text = vault.read_text().replace(
        "[policy]", f'[tools]\ninstalls = "{tmp_path / "installs"}"\nrestart_seconds = 0.2\n\n[policy]', 1
    )
    vault.write_text(text)
    key = tmp_path / "tools.key"
    tools(vault, "keygen", "--output", str(key))
    pin = {"kind": "container", "package": IMAGE, "digest": DIGEST}
    tools(vault, "catalog", "--name", "checker", *(f"--{k}={v}" for k, v in pin.items()))
    tools(
        vault,
        "mount",
        "--name",
        "box",
        "--catalog",
        "checker",
        "--account",
        "owner@example.org",
        "--environment",
        "personal",
        "--variable",
        "CHECK_TOKEN",
    )
    tools(vault, "credential", "box", "CHECK_TOKEN", input=SECRET + "\n")
    return vault, key


@pytest.mark.parametrize("daemon", [False, True])
def test_the_tools_process_refuses_to_start_without_a_working_engine(box_vault, tmp_path: Path, daemon: bool) -> None:
    """No engine on PATH, or a client whose daemon does not answer: refused before anything listens."""
    config, key = box_vault
    path = "/usr/bin:/bin"
    if not daemon:  # the client is there (first on PATH), its daemon is not: as on this machine
        path = f"{fake_engine(tmp_path / 'engine', daemon=False)}{os.pathsep}{path}"
    else:  # the settings name podman, which is not installed
        config.write_text(config.read_text().replace("[tools]\n", '[tools]\nengine = "podman"\n', 1))
        if any((Path(d) / "podman").exists() for d in path.split(os.pathsep)):
            pytest.skip("podman is installed here")
    done = notegate(
        "tools", "serve", "--config", str(config), "--key-file", str(key), "--port", str(free_port()),
        env={"PATH": path},
    )  # fmt: skip
    assert done.returncode == 1
    assert "Refused [tools-container-engine-missing]" in done.stderr and "serving" not in done.stderr, done.stderr


def test_an_image_the_engine_has_not_loaded_refuses_to_start(box_vault, tmp_path: Path) -> None:
    config, key = box_vault
    folder = fake_engine(tmp_path / "engine", reference=f"{IMAGE}@sha256:{'cd' * 32}")
    done = notegate(
        "tools", "serve", "--config", str(config), "--key-file", str(key), "--port", str(free_port()),
        env={"PATH": f"{folder}{os.pathsep}/usr/bin:/bin"},
    )  # fmt: skip
    assert done.returncode == 1 and "Refused [tools-image-missing]" in done.stderr, done.stderr
    assert [c["argv"][1:] for c in engine_calls(folder)] == [["version"], ["image", "inspect", f"{IMAGE}@{DIGEST}"]]


def test_a_container_mount_runs_through_the_engine_with_exactly_its_credential(box_vault, tmp_path: Path) -> None:
    config, key = box_vault
    folder = fake_engine(tmp_path / "engine")
    mint_key = tools(config, "mint-key").stdout.strip()
    port = free_port()
    log = tmp_path / "tools.log"
    argv = ["tools", "serve", "--config", str(config), "--key-file", str(key), "--port", str(port)]
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "SECRET_OF_THE_HOST": "no"}
    proc = start_cli([*argv, f"--mint-key={mint_key}"], log, env)  # an id may begin with "-"
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert proc.poll() is None, log.read_text()[-3000:]
            try:
                if httpx2.get(f"{url}/healthz", timeout=2).json().get("status") == "ok":
                    break
            except httpx2.HTTPError:
                pass
            time.sleep(0.1)
        else:
            raise AssertionError(log.read_text()[-3000:])
        tools(config, "approve", "box")
        state = StateDB.for_config(load_config(config))
        try:
            minter = Minter(state, load_config(config).state_dir)
            caller = SimpleNamespace(login="owner", connector_id="token:t1", client="laptop", tier="trusted")

            def call(tool: str, arguments: dict) -> dict:
                token = minter.mint(caller, "personal", "tools:call", "box", tool)
                body = {"mount": "box", "tool": tool, "arguments": arguments}
                answer = httpx2.post(f"{url}/v1/call", json=body, headers={"Authorization": f"Bearer {token}"})
                assert answer.status_code == 200, answer.text
                return answer.json()

            listing = httpx2.post(
                f"{url}/v1/list",
                headers={"Authorization": f"Bearer {minter.mint(caller, 'personal', 'tools:list')}"},
            ).json()
            assert "check" in json.dumps(listing)
            digest = hashlib.sha256(SECRET.encode()).hexdigest()
            assert '"match"' in json.dumps(call("check", {"expected_sha256": digest}))
            assert '"mismatch"' in json.dumps(call("check", {"expected_sha256": "0" * 64}))
            names = json.dumps(call("env_names", {}))
        finally:
            state.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    # the container saw its declared variable and nothing of the host
    assert "CHECK_TOKEN" in names and "SECRET_OF_THE_HOST" not in names and "PATH" not in names
    runs = [c for c in engine_calls(folder) if c["argv"][1:2] == ["run"]]
    assert runs, engine_calls(folder)
    expected = container_argv(
        str(folder / "docker"), IMAGE, DIGEST, network="", variables=("CHECK_TOKEN",), memory_mb=512, pids=256
    )
    for run in runs:
        assert tuple(run["argv"]) == expected
        assert not any(SECRET in element for element in run["argv"])
        # the engine client got the credential by name and its own variables, nothing else of the host
        assert set(run["env"]) - {"LC_CTYPE"} <= {"CHECK_TOKEN", *ENGINE_VARIABLES} and "CHECK_TOKEN" in run["env"]
