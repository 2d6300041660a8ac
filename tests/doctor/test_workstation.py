"""On a workstation: client.toml, the Claude Code hooks (an installed plugin, settings.json) and the
notegate they run.  The fixture is what `claude plugin install` leaves: installed_plugins.json naming an
install path that holds a copy of the plugin's hooks/hooks.json."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate.doctor.workstation import notegate_words, parse_hooks, wiring_problems
from support.doctor import Doctor, failed
from support.timing import assert_catches_quadratic, measure

PLUGIN = Path(__file__).resolve().parents[2] / "integrations" / "claude-code" / "notegate"


def _install_plugin(home: Path) -> Path:
    install = home / ".claude" / "plugins" / "cache" / "notegate" / "notegate" / "0.1.0"
    shutil.copytree(PLUGIN, install)
    registry = {"version": 2, "plugins": {"notegate@notegate": [{"scope": "user", "installPath": str(install)}]}}
    (home / ".claude" / "plugins" / "installed_plugins.json").write_text(json.dumps(registry), encoding="utf-8")
    return install / "hooks" / "hooks.json"


def _client_toml(home: Path) -> None:
    folder = home / ".config" / "notegate"
    folder.mkdir(parents=True)
    (folder / "token").write_text("ngt_example_not_a_real_token\n", encoding="utf-8")
    (folder / "client.toml").write_text('url = "http://127.0.0.1:8765"\ntoken_file = "token"\n', encoding="utf-8")


@pytest.fixture
def workstation(isolated_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with client.toml and the plugin installed; `notegate` on PATH (this venv's bin)."""
    home = Path(isolated_env["HOME"])
    _client_toml(home)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":/usr/bin:/bin")
    return _install_plugin(home)


def _checks(results: list[dict[str, str]], name: str) -> list[dict[str, str]]:
    return [r for r in results if r["check"] == name]


def test_green_workstation(doctor: Doctor, demo: Path, workstation: Path) -> None:
    code, results = doctor("--config", str(demo))
    assert code == 0, results
    assert [r["status"] for r in _checks(results, "workstation.hooks")] == ["ok"]
    assert [r["status"] for r in _checks(results, "workstation.notegate")] == ["ok"]
    assert "ngt_example_not_a_real_token" not in json.dumps(results)


def test_workstation_only(doctor: Doctor, workstation: Path) -> None:
    code, results = doctor()
    assert code == 0 and {r["check"] for r in results} == {
        "workstation.client",
        "workstation.hooks",
        "workstation.notegate",
    }


def test_bad_hooks_json(doctor: Doctor, workstation: Path) -> None:
    workstation.write_text('{"hooks": {"SessionStart": [', encoding="utf-8")
    code, results = doctor()
    assert code == 1 and failed(results) == {"workstation.hooks"}
    assert "not valid JSON" in _checks(results, "workstation.hooks")[0]["found"]


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        ('"notegate hook session-start"', '"notegate hook session-begin"', "without a known `hook EVENT`"),
        ('"notegate hook stop"', '"notegate hook pre-compact"', "expected `notegate hook stop`"),
        ('"notegate hook stop"', '"echo stop"', "Stop is not wired"),
    ],
)
def test_hooks_wired_wrong(doctor: Doctor, workstation: Path, old: str, new: str, needle: str) -> None:
    text = workstation.read_text(encoding="utf-8")
    workstation.write_text(text.replace(old, new), encoding="utf-8")
    code, results = doctor()
    assert code == 1 and failed(results) == {"workstation.hooks"}
    assert needle in _checks(results, "workstation.hooks")[0]["found"]


def test_notegate_unreachable_from_the_hooks(
    doctor: Doctor, workstation: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = workstation.parents[6] / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    code, results = doctor()
    assert code == 1 and failed(results) == {"workstation.notegate"}
    assert "`notegate` is not on PATH" in _checks(results, "workstation.notegate")[0]["found"]


def test_an_absolute_hook_command_must_exist(doctor: Doctor, workstation: Path, tmp_path: Path) -> None:
    text = workstation.read_text(encoding="utf-8")
    workstation.write_text(text.replace('"notegate hook', f'"{tmp_path}/gone/notegate hook'), encoding="utf-8")
    code, results = doctor()
    assert code == 1 and failed(results) == {"workstation.notegate"}
    absolute = Path(sys.executable).parent / "notegate"
    workstation.write_text(text.replace('"notegate hook', f'"{absolute} hook'), encoding="utf-8")
    code, results = doctor()
    assert code == 0, results


def test_settings_json_hooks_are_checked(
    doctor: Doctor, isolated_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent) + ":/usr/bin:/bin")
    home = Path(isolated_env["HOME"])
    _client_toml(home)
    (home / ".claude").mkdir()
    settings = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "notegate hook nope"}]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    code, results = doctor()
    assert code == 1 and failed(results) == {"workstation.hooks"}


def test_a_broken_client_toml(doctor: Doctor, workstation: Path, isolated_env: dict[str, str]) -> None:
    client = Path(isolated_env["HOME"]) / ".config" / "notegate" / "client.toml"
    client.write_text('url = "http://127.0.0.1:8765"\ntokn = "x"\n', encoding="utf-8")
    code, results = doctor()
    assert code == 1 and failed(results) == {"workstation.client"}


def test_python_dash_m_commands_count_as_notegate() -> None:
    assert notegate_words("NOTEGATE_PROJECT=x /usr/bin/python3 -m notegate hook stop") is not None
    assert notegate_words("python -m notegate.cli hook stop") is not None
    assert notegate_words("echo notegate") is None
    problems = wiring_problems([("Stop", "python3 -m notegate hook stop")], required={"Stop": "stop"})
    assert problems == []


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=30,
)


@given(st.one_of(_json, st.fixed_dictionaries({"hooks": st.dictionaries(st.text(max_size=12), _json, max_size=4)})))
def test_parsing_any_json_gives_problems_never_an_exception(data: object) -> None:
    problems, commands = parse_hooks(data)
    assert isinstance(problems, list) and all(isinstance(c, str) for _, c in commands)
    wiring_problems(commands, required={"Stop": "stop"})


def test_parsing_a_hooks_document_is_linear() -> None:
    def document(n: int) -> str:
        hook = {"type": "command", "command": "notegate hook session-start"}
        groups = [{"hooks": [hook]}] * max(1, n // 70)
        return json.dumps({"hooks": {"SessionStart": groups}})

    def check(text: str) -> None:
        _problems, commands = parse_hooks(json.loads(text))
        wiring_problems(commands, required={})

    result = measure(check, document)
    assert result.linear, str(result)
    assert_catches_quadratic(document)  # the stick tells quadratic from linear at these sizes
