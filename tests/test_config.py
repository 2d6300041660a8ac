"""The deployment config loader: every documented refusal names its key; paths resolve against the file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.config import load_config
from notegate.errors import RULES, ConfigError, UnknownEnvironment

PERSONAL = '[environments.personal]\norigin = "origin.git"\nowner = "owner"\n'


def write(tmp_path: Path, text: str, name: str = "notegate.toml") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.rule == "config-invalid"
    return info.value.explain()


def test_a_minimal_file_takes_every_default(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, PERSONAL))
    assert (config.host, config.port, config.public_url) == ("127.0.0.1", 8765, "")
    assert config.default_environment == "personal"
    assert config.state_dir == (tmp_path / "state").resolve()
    assert config.allowed_hosts == ()
    assert list(config.environments) == ["personal"]
    assert config.path == (tmp_path / "notegate.toml").resolve()


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    text = refusal(tmp_path / "nothing.toml")
    assert text.startswith("Refused [config-invalid]: the config file does not exist")
    assert "notegate init" in text


def test_invalid_toml_is_refused(tmp_path: Path) -> None:
    assert refusal(write(tmp_path, "[server\nport = 1\n")).startswith(
        "Refused [config-invalid]: the config file is not valid TOML"
    )


def test_an_unknown_top_level_key_is_named(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, 'privte = ["secret/**"]\n' + PERSONAL))
    assert text.startswith("Refused [config-invalid]: unknown section or key 'privte' at the top level")


def test_an_unknown_server_key_is_named(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, '[server]\nhots = "0.0.0.0"\n' + PERSONAL))
    assert text.startswith("Refused [config-invalid]: unknown key 'hots' in [server]")
    assert "host" in text.split("Known keys:")[1]


def test_an_unknown_environment_key_is_named(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, PERSONAL + 'membres = ["kid"]\n'))
    assert text.startswith("Refused [config-invalid]: unknown key 'membres' in [environments.personal]")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('port = "8080"', "[server] port has the wrong type (str)"),
        ("port = true", "[server] port has the wrong type (bool)"),
        ("port = 80.5", "[server] port has the wrong type (float)"),
        ("host = 127", "[server] host has the wrong type (int)"),
        ('allowed_hosts = "a.example"', "[server] allowed_hosts has the wrong type (str)"),
        ("state_dir = []", "[server] state_dir has the wrong type (list)"),
    ],
)
def test_a_wrong_type_is_named(tmp_path: Path, line: str, message: str) -> None:
    assert refusal(write(tmp_path, f"[server]\n{line}\n" + PERSONAL)).startswith(f"Refused [config-invalid]: {message}")


def test_a_wrong_environment_type_is_named(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, PERSONAL + 'members = "kid"\n'))
    assert text.startswith("Refused [config-invalid]: [environments.personal] members has the wrong type (str)")


@pytest.mark.parametrize("table", ["server", "livesync", "tools"])
@pytest.mark.parametrize("port", [0, -1, 65536, 100000])
def test_a_port_out_of_range_is_refused(tmp_path: Path, table: str, port: int) -> None:
    """Every listening port is checked as a port (the tools process's was only checked above 0 once)."""
    text = refusal(write(tmp_path, f"[{table}]\nport = {port}\n" + PERSONAL))
    assert text.startswith(f"Refused [config-invalid]: [{table}] port must be between 1 and 65535")


@pytest.mark.parametrize("port", [1, 65535])
def test_the_port_range_ends_are_accepted(tmp_path: Path, port: int) -> None:
    assert load_config(write(tmp_path, f"[server]\nport = {port}\n" + PERSONAL)).port == port


def test_no_environment_is_refused(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, "[server]\nport = 8765\n"))
    assert text == "Refused [config-invalid]: no environment is configured. Add an [environments.personal] table."


def test_an_environment_that_is_not_a_table_is_refused(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, "[environments]\npersonal = 1\n"))
    assert text == "Refused [config-invalid]: [environments.personal] must be a table. " + RULES["config-invalid"]


def test_a_default_environment_that_is_not_configured_is_refused(tmp_path: Path) -> None:
    text = refusal(write(tmp_path, '[server]\ndefault_environment = "work"\n' + PERSONAL))
    assert text == "Refused [config-invalid]: default_environment 'work' is not configured. Configured: personal."


@pytest.mark.parametrize("name", ["my env", "a.b", "ümlaut", "-", "_", "", "x/y", "tab\t"])
def test_a_bad_environment_name_is_refused(tmp_path: Path, name: str) -> None:
    quoted = json.dumps(name)
    text = refusal(write(tmp_path, f'[server]\ndefault_environment = {quoted}\n[environments.{quoted}]\nowner = "o"\n'))
    assert text == (
        f"Refused [config-invalid]: environment name '{name}' must be ASCII letters, digits, - or _. "
        + RULES["config-invalid"]
    )


GOOD_NAME = re.compile(r"[A-Za-z0-9_-]*[A-Za-z0-9][A-Za-z0-9_-]*")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(alphabet=st.sampled_from("aZ09-_. /ü\u0660é"), min_size=0, max_size=8))
def test_environment_names_are_accepted_exactly_when_ascii_words(tmp_path: Path, name: str) -> None:
    quoted = json.dumps(name)
    path = write(tmp_path, f'[server]\ndefault_environment = {quoted}\n[environments.{quoted}]\nowner = "o"\n')
    if GOOD_NAME.fullmatch(name):
        assert list(load_config(path).environments) == [name]
    else:
        assert "must be ASCII letters, digits, - or _" in refusal(path)


def test_a_relative_origin_resolves_against_the_config_file(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path, '[environments.personal]\norigin = "../remotes/o.git"\n', name="conf/notegate.toml")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the working directory plays no part
    env = load_config(path).environment("personal")
    assert env.origin_url == str((tmp_path / "remotes" / "o.git").resolve())
    assert env.is_local_origin


def test_relative_state_dir_resolves_against_the_config_file(tmp_path: Path, monkeypatch) -> None:
    path = write(tmp_path, '[server]\nstate_dir = "data/st"\n' + PERSONAL, name="conf/notegate.toml")
    monkeypatch.chdir(tmp_path)
    assert load_config(path).state_dir == (tmp_path / "conf" / "data" / "st").resolve()


@pytest.mark.parametrize("origin", ["https://git.example.org/notes.git", "ssh://git@host/notes.git", "git@host:n.git"])
def test_a_remote_origin_is_kept_as_written(tmp_path: Path, origin: str) -> None:
    env = load_config(write(tmp_path, f'[environments.personal]\norigin = "{origin}"\n')).environment(None)
    assert env.origin_url == origin
    assert not env.is_local_origin


TWO = PERSONAL + '\n[environments.household]\norigin = "h.git"\nowner = "partner"\nmembers = ["kid", "gran"]\n'


def test_may_use_is_owner_or_member_of_that_environment(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, TWO))
    assert config.may_use("owner", "personal")
    assert not config.may_use("partner", "personal")
    assert config.may_use("partner", "household")
    assert config.may_use("kid", "household") and config.may_use("gran", "household")
    assert not config.may_use("owner", "household")
    assert not config.may_use("Kid", "household")  # logins compare exactly
    with pytest.raises(UnknownEnvironment) as info:
        config.may_use("owner", "work")
    assert info.value.rule == "unknown-environment"


def test_environment_none_is_the_default(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, '[server]\ndefault_environment = "household"\n' + TWO))
    assert config.environment(None).name == "household"
    assert config.environment("").name == "household"
    assert config.environment("personal").name == "personal"
    assert config.environment("household").members == ("kid", "gran")


def test_an_unknown_environment_is_refused_by_rule(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, TWO))
    with pytest.raises(UnknownEnvironment) as info:
        config.environment("work")
    assert info.value.explain().startswith("Refused [unknown-environment]: there is no environment named 'work'")
    assert "household" not in info.value.explain()  # never lists the configured environments


def test_the_file_notegate_init_writes_loads(vault: Path) -> None:
    config = load_config(vault)
    assert config.default_environment == "personal"
    assert config.environment(None).owner == "owner"
    assert config.environment(None).origin_url == str((vault.parent / "origin.git").resolve())


def test_docs_members_documents_every_oidc_setting_with_its_default() -> None:
    """docs/how-to/members.md is the reference of [oidc.NAME]: every key, and its default as the row has it."""
    from notegate.oidcconfig import OIDC_SETTINGS

    page = (Path(__file__).parents[1] / "docs" / "how-to" / "members.md").read_text()
    for setting in OIDC_SETTINGS:
        if setting.name in ("issuer", "client_id"):
            assert f"- `{setting.name}` (required)" in page, setting.name
        else:
            assert f"- `{setting.name}` (default `{json.dumps(setting.default)}`)" in page, setting.name


def test_an_oidc_table_is_checked_key_by_key(vault: Path) -> None:
    base = vault.read_text()
    for table, needle in (
        ('[oidc.a]\nissuer = "http://id.example.org"\nclient_id = "c"\n', "issuer"),
        ('[oidc.a]\nissuer = "https://id.example.org"\n', "client_id"),
        ('[oidc.a]\nissuer = "https://id.example.org"\nclient_id = "c"\nalgorithms = ["HS256"]\n', "algorithms"),
        (
            '[oidc.a]\nissuer = "https://id.example.org"\nclient_id = "c"\nsecond_factor_arm = ["mfa"]\n',
            "second_factor_arm",
        ),
        ('[oidc.a]\nissuer = "https://id.example.org"\nclient_id = "c"\nenvironments = ["nope"]\n', "nope"),
    ):
        vault.write_text(base + "\n" + table)
        with pytest.raises(ConfigError) as refused:
            load_config(vault)
        assert needle in str(refused.value), (table, str(refused.value))
    vault.write_text(base + '\n[oidc.a]\nissuer = "https://id.example.org"\nclient_id = "c"\n')
    provider = load_config(vault).oidc["a"]
    assert provider.second_factor_amr == ("mfa",) and provider.serves("personal") and "secret" not in repr(provider)


def test_search_by_meaning_without_its_extra_is_refused_at_start(tmp_path: Path, monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a))
    text = refusal(write(tmp_path, "[server]\nsearch_meaning = true\n" + PERSONAL))
    assert text.startswith("Refused [config-invalid]:")
    assert "search_meaning" in text and "needs the 'meaning' extra" in text and "missing: numpy" in text
    assert not load_config(write(tmp_path, "[server]\nsearch_meaning = false\n" + PERSONAL)).search_meaning


def test_search_by_meaning_without_its_model_files_is_refused_at_start(tmp_path: Path, monkeypatch) -> None:
    """The model's files come from the install step, not from pip: an environment without them is told how."""
    import sys

    monkeypatch.setattr(sys, "prefix", str(tmp_path / "bare-venv"))
    text = refusal(write(tmp_path, "[server]\nsearch_meaning = true\n" + PERSONAL))
    assert text.startswith("Refused [config-invalid]:")
    assert "python -m notegate.vault.meaning_model install" in text
    assert "missing: l2_supercat_256.safetensors, l2_supercat_tokenizer_config.json, LICENSE" in text
    assert not load_config(write(tmp_path, "[server]\nsearch_meaning = false\n" + PERSONAL)).search_meaning


def test_search_by_meaning_is_off_by_default_and_auto_starts_without_its_extra(tmp_path: Path, monkeypatch) -> None:
    """Off by default (it slows writes: config.py says by how much); "auto" starts where the extra is missing,
    off with the reason the log and /healthz give; a value other than true, false and "auto" is refused."""
    import importlib.util

    from notegate.vault.meaning_installed import off_reason

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numpy" else real(name, *a))
    assert load_config(write(tmp_path, PERSONAL)).search_meaning is False
    config = load_config(write(tmp_path, '[server]\nsearch_meaning = "auto"\n' + PERSONAL))
    reason = off_reason(config.search_meaning)
    assert reason is not None and reason.startswith("not installed (") and "missing: numpy" in reason
    assert off_reason(False) == "off in the config ([server] search_meaning = false)"
    text = refusal(write(tmp_path, '[server]\nsearch_meaning = "sometimes"\n' + PERSONAL))
    assert text.startswith("Refused [config-invalid]:") and 'must be true, false or "auto"' in text
