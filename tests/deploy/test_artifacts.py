"""The deploy artifacts are checked offline by the tools their platforms use, and say what they promise.

hadolint lints the image recipe; `docker compose config` (Debian's docker-compose, no engine needed) checks the
Compose file; kubernetes-validate checks the manifests against the Kubernetes API's schemas; systemd-analyze
verifies every unit. Each artifact's command line is also parsed by notegate's own parser, so a renamed option
fails here rather than on someone's server. The tools skip only when missing and NOTEGATE_REQUIRE_DEPLOY_TOOLS is
unset (`.ci/run` sets it and installs them).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from notegate.cli import build_parser
from notegate.config import load_config
from notegate.livesync.settings import GATE_PORT, LiveSyncConfig
from notegate.network import DEFAULT_PORT
from notegate.tools.settings import ToolsConfig

ROOT = Path(__file__).parents[2]
DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent


def tool(*names: str) -> list[str]:
    """The first of these commands that exists (a path, or a name on PATH), as argv; else skip or fail."""
    for name in names:
        argv = name.split()
        found = BIN / argv[0] if (BIN / argv[0]).exists() else shutil.which(argv[0])
        if found and (len(argv) == 1 or _works([str(found), *argv[1:], "version"])):
            return [str(found), *argv[1:]]
    if os.environ.get("NOTEGATE_REQUIRE_DEPLOY_TOOLS"):
        pytest.fail(f"NOTEGATE_REQUIRE_DEPLOY_TOOLS is set but none of {names} is installed")
    pytest.skip(f"none of {names} is installed")


def _works(argv: list[str]) -> bool:
    return subprocess.run(argv, capture_output=True, check=False).returncode == 0


def package_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


# ------------------------------------------------------------ the container image
DOCKERFILE = DEPLOY / "container" / "Dockerfile"


def test_the_dockerfile_passes_hadolint() -> None:
    result = subprocess.run([*tool("hadolint"), str(DOCKERFILE)], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_image_runs_as_a_user_checks_its_health_and_installs_this_version() -> None:
    text = DOCKERFILE.read_text()
    final = text[text.rindex("\nFROM ") :]  # the image that ships, not the build stage
    users = re.findall(r"^USER (\S+)", final, flags=re.M)
    assert users and users[-1].split(":")[0] not in ("0", "root"), users
    assert re.search(r"^HEALTHCHECK .*\n?.*/healthz", final, flags=re.M)
    assert re.search(rf"^ARG NOTEGATE_VERSION={re.escape(package_version())}$", final, flags=re.M)
    entry = next(line for line in final.splitlines() if line.startswith("ENTRYPOINT "))
    cmd = next(line for line in final.splitlines() if line.startswith("CMD "))
    assert yaml.safe_load(entry.removeprefix("ENTRYPOINT ")) == ["notegate"]
    args = build_parser().parse_args(yaml.safe_load(cmd.removeprefix("CMD ")))
    assert args.command == "serve" and args.config == "/data/notegate.toml"


# ------------------------------------------------------------ Compose
COMPOSE = DEPLOY / "compose" / "compose.yaml"


def compose_config(env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = tool("docker-compose", "docker compose")
    return subprocess.run(
        [*argv, "-f", str(COMPOSE), "config"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **env},
        cwd=COMPOSE.parent,
    )


def test_the_compose_file_is_valid_and_only_the_proxy_publishes_ports() -> None:
    result = compose_config({"NOTEGATE_DOMAIN": "notes.example.org"})
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert set(services) >= {"notegate", "caddy"}
    assert [name for name, service in services.items() if service.get("ports")] == ["caddy"]
    notegate = services["notegate"]
    assert notegate["read_only"] is True and notegate["user"].split(":")[0] != "0"
    assert notegate["cap_drop"] == ["ALL"]
    raw = yaml.safe_load(COMPOSE.read_text())
    assert raw["networks"]["back"]["internal"] is True
    assert raw["services"]["origin"]["networks"] == ["back"]  # the git daemon is never on the proxy's network


def test_compose_says_which_setting_is_missing() -> None:
    env = {k: v for k, v in os.environ.items() if k != "NOTEGATE_DOMAIN"}
    argv = tool("docker-compose", "docker compose")
    result = subprocess.run(
        [*argv, "-f", str(COMPOSE), "config"], capture_output=True, text=True, check=False, env=env, cwd=COMPOSE.parent
    )
    assert result.returncode != 0
    assert "NOTEGATE_DOMAIN" in result.stderr


# ------------------------------------------------------------ Kubernetes
MANIFESTS = sorted((DEPLOY / "kubernetes").glob("*.yaml"))


def documents() -> list[dict]:
    return [doc for path in MANIFESTS for doc in yaml.safe_load_all(path.read_text()) if doc]


def test_the_manifests_validate_strictly_against_the_kubernetes_schemas() -> None:
    assert MANIFESTS
    result = subprocess.run(
        [*tool("kubernetes-validate"), "--strict", *map(str, MANIFESTS)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    kinds = {doc["kind"] for doc in documents()}
    assert kinds >= {"Deployment", "Service", "PersistentVolumeClaim", "Secret", "NetworkPolicy"}


def test_the_manifests_config_loads_and_the_pod_is_locked_down(tmp_path: Path) -> None:
    by_kind = {
        doc["kind"]: doc for doc in documents() if doc["metadata"]["labels"]["app.kubernetes.io/name"] == "notegate"
    }
    config = tmp_path / "notegate.toml"
    config.write_text(by_kind["Secret"]["stringData"]["notegate.toml"])
    loaded = load_config(config)  # the Secret's config is one notegate accepts
    assert loaded.public_url.startswith("https://") and loaded.allowed_hosts
    pod = by_kind["Deployment"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["automountServiceAccountToken"] is False
    container = pod["containers"][0]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    args = build_parser().parse_args(container["args"])
    assert args.command == "serve" and args.config == "/etc/notegate/notegate.toml"
    assert by_kind["Deployment"]["spec"]["replicas"] == 1  # SQLite state: one writer


# ------------------------------------------------------------ systemd
UNITS = sorted([*(DEPLOY / "systemd").glob("*.service"), *(DEPLOY / "systemd").glob("*.timer")])


def exec_argv(unit: Path) -> list[str]:
    line = next(x for x in unit.read_text().splitlines() if x.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart="))


def test_every_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    """Each unit as written, but for the program's path (verify insists it exists): the notegate under test."""
    analyze = tool("systemd-analyze")
    notegate = BIN / "notegate"
    for unit in UNITS:
        text = unit.read_text()
        if unit.suffix == ".service":
            program = exec_argv(unit)[0]
            text = text.replace(f"ExecStart={program} ", f"ExecStart={notegate} ", 1)
        (tmp_path / unit.name).write_text(text)
    result = subprocess.run(
        [*analyze, "verify", *(str(tmp_path / u.name) for u in UNITS)], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "notegate" not in result.stderr.replace(str(tmp_path), ""), result.stderr  # no warnings about ours


def test_the_server_unit_is_hardened_and_calls_serve() -> None:
    unit = DEPLOY / "systemd" / "notegate.service"
    text = unit.read_text()
    for setting in ("ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "ProtectHome=yes"):
        assert re.search(rf"^{re.escape(setting)}$", text, flags=re.M), setting
    assert re.search(r"^User=(?!root$)\S+$", text, flags=re.M)
    args = build_parser().parse_args(exec_argv(unit)[1:])
    assert args.command == "serve"


# ------------------------------------------------------------ the LiveSync door (issue 31)
EXACT_VERSION = re.compile(r"^couchdb:\d+\.\d+\.\d+$")  # an exact release, never latest or 3


def _livesync_args(argv: list[str], action: str, config: str) -> None:
    args = build_parser().parse_args(argv)
    assert (args.command, args.livesync_command, args.config) == ("livesync", action, config), argv


def test_compose_runs_couchdb_the_gate_and_the_bridge_behind_the_proxy() -> None:
    result = subprocess.run(
        [*tool("docker-compose", "docker compose"), "-f", str(COMPOSE), "--profile", "livesync", "config"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "NOTEGATE_DOMAIN": "notes.example.org"},
        cwd=COMPOSE.parent,
    )
    assert result.returncode == 0, result.stderr
    services = yaml.safe_load(result.stdout)["services"]
    assert [name for name, service in services.items() if service.get("ports")] == ["caddy"]
    couchdb = services["couchdb"]
    assert EXACT_VERSION.match(couchdb["image"]) and list(couchdb["networks"]) == ["back"]  # never on the front
    for name, action in (("livesync-gate", "gate"), ("livesync-bridge", "bridge")):
        service = services[name]
        _livesync_args(service["command"], action, "/data/notegate.toml")
        assert service["read_only"] is True and service["user"].split(":")[0] != "0" and service["cap_drop"] == ["ALL"]
        assert any("notegate-data" in str(v) for v in service["volumes"])  # the server's state and clone
    assert services["livesync-gate"]["expose"] == [str(GATE_PORT)]  # the [livesync] table there sets no port
    assert f"livesync-gate:{GATE_PORT}" in (COMPOSE.parent / "Caddyfile").read_text()


def test_the_manifests_run_couchdb_alone_and_the_gate_and_bridge_beside_the_server(tmp_path: Path) -> None:
    docs = documents()
    named = {(doc["kind"], doc["metadata"]["name"]): doc for doc in docs}
    config = tmp_path / "notegate.toml"
    config.write_text(named[("Secret", "notegate-config")]["stringData"]["notegate.toml"])
    livesync = load_config(config).livesync
    assert livesync is not None and livesync.couchdb_url == "http://couchdb:5984" and livesync.host == "0.0.0.0"
    pod = named[("Deployment", "notegate")]["spec"]["template"]["spec"]
    containers = {c["name"]: c for c in pod["containers"]}
    for name, action in (("livesync-gate", "gate"), ("livesync-bridge", "bridge")):
        container = containers[name]
        _livesync_args(container["args"], action, "/etc/notegate/notegate.toml")
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        mounts = {m["mountPath"] for m in container["volumeMounts"]}
        assert {"/data", str(Path(livesync.couchdb_password_file).parent)} <= mounts  # the shared clone, the password
    assert [p["containerPort"] for p in containers["livesync-gate"]["ports"]] == [livesync.port]
    ingress = named[("NetworkPolicy", "notegate")]["spec"]["ingress"]
    assert livesync.port in [p["port"] for rule in ingress for p in rule["ports"]]
    couch = named[("Deployment", "couchdb")]["spec"]["template"]["spec"]
    assert EXACT_VERSION.match(couch["containers"][0]["image"]) and couch["securityContext"]["runAsNonRoot"] is True
    policy = named[("NetworkPolicy", "couchdb")]["spec"]
    assert policy["ingress"] == [
        {"from": [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "notegate"}}}], "ports": [{"port": 5984}]}
    ]
    ini = named[("Secret", "couchdb-config")]["stringData"]["10-notegate.ini"]
    for line in ("require_valid_user = true", f"max_http_request_size = {livesync.max_body_bytes}"):
        assert line in ini  # what `notegate livesync couchdb-config` prints for this config


def test_the_livesync_units_are_hardened_and_call_the_gate_and_the_bridge() -> None:
    for name, action in (("gate", "gate"), ("bridge", "bridge")):
        unit = DEPLOY / "systemd" / f"notegate-livesync-{name}.service"
        text = unit.read_text()
        for setting in ("ProtectSystem=strict", "NoNewPrivileges=yes", "PrivateTmp=yes", "ProtectHome=yes"):
            assert re.search(rf"^{re.escape(setting)}$", text, flags=re.M), (unit.name, setting)
        assert re.search(r"^User=(?!root$)\S+$", text, flags=re.M)
        _livesync_args(exec_argv(unit)[1:], action, "/var/lib/notegate/notegate.toml")


def test_the_server_the_livesync_gate_and_the_tools_process_have_three_default_ports() -> None:
    """All three run on one host as shipped (the systemd units, one pod): the gate's default was the tools
    process's 8767, so the second to start failed with `port-in-use`. The docs name each default."""
    defaults = {"server": DEFAULT_PORT, "gate": LiveSyncConfig().port, "tools": ToolsConfig().port}
    assert len(set(defaults.values())) == 3, defaults
    assert LiveSyncConfig().port == GATE_PORT
    guide = (ROOT / "docs" / "how-to" / "livesync.md").read_text()
    assert f"port = {GATE_PORT}" in guide and "8767` is also" not in guide
