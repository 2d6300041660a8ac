"""Client settings and project detection (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from notegate.hooks.project import locate, slug
from notegate.hooks.settings import SettingsError, load_settings
from support.hookrun import client_toml, make_repo


def test_environment_wins_over_the_file(tmp_path: Path):
    client_toml(tmp_path / ".config/notegate/client.toml", url="http://file:1", extra='token = "from-file"\n')
    env = {"HOME": str(tmp_path), "NOTEGATE_URL": "http://env:2/", "NOTEGATE_TOKEN": "from-env"}
    settings = load_settings(env)
    assert settings is not None and (settings.url, settings.token) == ("http://env:2", "from-env")
    assert settings.state_dir == tmp_path / ".local/state/notegate"
    settings = load_settings({"HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "st")})
    assert settings is not None and settings.token == "from-file" and settings.state_dir == tmp_path / "st/notegate"


def test_token_file_relative_to_the_config_and_home(tmp_path: Path):
    cfg = tmp_path / ".config/notegate"
    client_toml(cfg / "client.toml", url="http://h:1", extra='token_file = "tok"\n')
    (cfg / "tok").write_text("abc\n")
    assert load_settings({"HOME": str(tmp_path)}).token == "abc"
    client_toml(cfg / "client.toml", url="http://h:1", extra='token_file = "~/t2"\n')
    (tmp_path / "t2").write_text("def")
    assert load_settings({"HOME": str(tmp_path)}).token == "def"


@pytest.mark.parametrize(
    "body",
    [
        "url = 3\n",
        'archived = ["Not A Slug"]\n',
        '[projects]\n"/x" = "Bad Name"\n',
        "models = 1\n",
        'url = "ftp://x"\ntoken = "t"\n',
        "this is not toml",
        'client_name = "a b"\n',
    ],
)
def test_bad_files_are_refused_with_a_reason(tmp_path: Path, body: str):
    client_toml(tmp_path / ".config/notegate/client.toml", extra=body)
    with pytest.raises(SettingsError):
        load_settings({"HOME": str(tmp_path)})


def test_unconfigured_is_none(tmp_path: Path):
    assert load_settings({"HOME": str(tmp_path)}) is None
    assert load_settings({}) is None
    assert load_settings({"NOTEGATE_URL": "http://x:1"}) is None


def test_locate_project_and_branch(tmp_path: Path):
    repo = make_repo(tmp_path, "My_Repo.git", branch="feat/ünïcode")
    deep = repo / "src" / "a"
    deep.mkdir(parents=True)
    place = locate(str(deep), {})
    assert (place.top, place.project, place.branch) == (repo, "my-repo-git", "feat/ünïcode")
    (repo / ".git" / "HEAD").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert locate(str(repo), {}).branch == "detached-0123456789ab"
    assert locate(str(repo), {str(repo / "src"): "other"}).project == "my-repo-git"
    assert locate(str(deep), {str(repo / "src"): "other", str(repo): "top"}).project == "other"
    assert locate(str(deep), {"My_Repo.git": "named"}).project == "named"
    assert locate("relative/path", {}).project is None
    assert locate(str(tmp_path), {}).project is None


def test_worktree_uses_the_main_repository_name(tmp_path: Path):
    main = make_repo(tmp_path, "mainrepo")
    gitdir = main / ".git" / "worktrees" / "wt1"
    gitdir.mkdir(parents=True)
    (gitdir / "HEAD").write_text("ref: refs/heads/topic\n")
    wt = tmp_path / "wt1"
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {gitdir}\n")
    place = locate(str(wt), {})
    assert (place.project, place.branch) == ("mainrepo", "topic")


def test_slug():
    assert slug("Hello World!!") == "hello-world"
    assert slug("---") is None
