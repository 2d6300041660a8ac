"""The steps of ``notegate setup`` and their journal (see the package docstring)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import time
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from notegate.auth.tokens import PREFIX, issue_token, make_private_dirs, revoke_token, write_token_file
from notegate.errors import NotegateError
from notegate.network import DEFAULT_LOCAL_URL, local_url
from notegate.policy.vocab import ClientClass
from notegate.setup import plugin
from notegate.setup.tomledit import TomlEditRefused, add_table, remove_block

CLIENTS = ("claude-code", "codex")
DEFAULT_URL = DEFAULT_LOCAL_URL
SERVER_NAME = "notegate"  # the MCP server's name in Claude Code and Codex
CLAUDE_TIMEOUT = 120
PROBE_SECONDS = 2.0  # how long setup waits for the server's /healthz before saying nothing answers


@dataclass(frozen=True)
class Where:
    """The places setup writes to, resolved once by the CLI from the environment."""

    home: Path
    config_home: Path  # $XDG_CONFIG_HOME or ~/.config
    data_home: Path  # $XDG_DATA_HOME or ~/.local/share
    client_toml: Path  # where the hooks read client.toml (hooks.settings.config_path)
    codex_config: Path  # $CODEX_HOME/config.toml or ~/.codex/config.toml
    notegate: str  # the absolute command of the notegate running setup
    claude: str | None  # the claude CLI, when on PATH
    environ: Mapping[str, str] = field(default_factory=dict)  # for the claude CLI's process

    @property
    def token_file(self) -> Path:
        return self.config_home / "notegate" / "token"

    @property
    def plugin_dir(self) -> Path:
        return self.data_home / "notegate" / "claude-code"

    def journal(self, client: str) -> Path:
        return self.config_home / "notegate" / f"setup-{client}.json"


@dataclass(frozen=True)
class Options:
    url: str | None = None
    token_file: Path | None = None
    config: Path | None = None  # the server's notegate.toml, to mint a token
    name: str | None = None  # the minted token's name (default: the client's name)
    tier: str | None = None
    scope: str = "user"


class Journal:
    """What setup did, in order: the only thing --remove undoes."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self.lines: list[str] = []

    def add(self, step: dict[str, Any], line: str) -> None:
        self.steps.append(step)
        self.lines.append(line)

    def dirs(self, created: Sequence[Path]) -> None:
        if created:
            self.steps.append({"do": "dirs", "paths": [str(p) for p in created]})


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write_new(journal: Journal, path: Path, text: str, mode: int = 0o600) -> None:
    journal.dirs(make_private_dirs(path.parent))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    journal.steps.append({"do": "file", "path": str(path), "sha256": _sha(text)})


def _conflict(message: str) -> NotegateError:
    return NotegateError(message, rule="setup-conflict")


def _shown(argv: Sequence[str]) -> str:
    """A claude command as printed: the token replaced by a read of its file."""
    return " ".join(_quote(a) for a in argv)


def _quote(arg: str) -> str:
    import shlex

    return arg if arg.startswith('"') else shlex.quote(arg)


# ------------------------------------------------------------------ the claude CLI
def _claude(where: Where, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    assert where.claude is not None
    return subprocess.run(
        [where.claude, *argv],
        env=dict(where.environ),
        cwd=where.home,
        capture_output=True,
        text=True,
        timeout=CLAUDE_TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _run_claude(where: Where, journal: Journal, argv: list[str], undo: list[str], shown: str) -> None:
    if where.claude is None:
        journal.add({"do": "print", "undo": "claude " + _shown(undo)}, f"run yourself:  claude {shown}")
        return
    result = _claude(where, argv)
    if result.returncode != 0:
        said = (result.stderr.strip() or result.stdout.strip()).splitlines()
        raise NotegateError(
            f"`claude {shown}` failed (exit {result.returncode}): {said[-1] if said else 'no message'}.",
            rule="setup-client-failed",
        )
    journal.add({"do": "run", "undo": undo}, f"ran:           claude {shown}")


# ------------------------------------------------------------------ token and client.toml
def _server(config_path: Path):
    from notegate.config import load_config
    from notegate.state import StateDB

    config = load_config(config_path)
    return config, StateDB.for_config(config)


def _url(options: Options) -> str:
    if options.url:
        url = options.url.rstrip("/")
        return url[: -len("/mcp")] if url.endswith("/mcp") else url
    if options.config:
        from notegate.config import load_config

        config = load_config(options.config)
        return config.public_url.rstrip("/") if config.public_url else local_url(config.port)
    return DEFAULT_URL


def _token_plan(where: Where, options: Options) -> tuple[Path, bool]:
    """(token file, whether it must be minted); refused when there is neither a token nor a server config."""
    path = (options.token_file or where.token_file).expanduser().absolute()
    if path.exists():
        try:
            value = path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError):
            value = ""
        if not value.startswith(PREFIX):
            raise NotegateError(f"{path} holds no notegate token.", rule="setup-token-missing")
        return path, False
    if options.config is None:
        raise NotegateError(
            f"there is no token at {path} and no server config to mint one.", rule="setup-token-missing"
        )
    return path, True


def _get_token(where: Where, client: str, options: Options, journal: Journal, path: Path, mint: bool) -> str:
    if not mint:
        journal.lines.append(f"token:         using {path} as it is (--remove leaves it)")
        return path.read_text(encoding="utf-8").strip()
    assert options.config is not None
    config, db = _server(options.config)
    delivered: list[str] = []
    try:
        env = config.environment(None)

        def deliver(token: str) -> None:
            journal.dirs(write_token_file(path, token))
            delivered.append(token)

        try:
            record = issue_token(
                db,
                name=options.name or client,
                client_class=ClientClass.WORKSTATION,
                tier=options.tier,
                login=env.owner,
                environment=env.name,
                deliver=deliver,
                now=time.time(),
            )
        except NotegateError:
            if delivered:
                path.unlink(missing_ok=True)  # the insert lost: the file holds a value that is no token
            raise
    finally:
        db.close()
    journal.steps.append({"do": "file", "path": str(path), "sha256": _sha(delivered[0] + "\n")})
    journal.add(
        {"do": "token", "id": record.id, "config": str(config.path)},
        f"token:         minted '{record.name}' ({record.client_class}, {record.tier}, environment {env.name}) "
        f"into {path}",
    )
    return delivered[0]


def _client_toml_plan(where: Where, url: str, token_file: Path) -> bool:
    """Whether client.toml must be written (False: it already says exactly this); refused when it says
    something else."""
    path = where.client_toml
    if not path.exists():
        return True
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise _conflict(f"{path} exists and cannot be read as TOML.") from None
    named = data.get("token_file")
    same_file = isinstance(named, str) and Path(named).expanduser().absolute() == token_file
    if data.get("url", "").rstrip("/") == url and same_file:
        return False
    raise _conflict(f"{path} exists and names another server or token file (url, token_file).")


def _write_client_toml(where: Where, journal: Journal, client: str, url: str, token_file: Path) -> None:
    text = (
        f"# Written by `notegate setup {client}`; `notegate setup {client} --remove` deletes it.\n"
        f'url = "{url}"\n'
        f'token_file = "{token_file}"\n'
    )
    _write_new(journal, where.client_toml, text)
    journal.lines.append(f"client.toml:   wrote {where.client_toml} (url, token_file)")


# ------------------------------------------------------------------ the clients
def _claude_preflight(where: Where, options: Options) -> None:
    if where.plugin_dir.exists():
        raise _conflict(f"{where.plugin_dir} exists already.")
    if where.claude is not None and _claude(where, ["mcp", "get", SERVER_NAME]).returncode == 0:
        raise _conflict(f"Claude Code already has an MCP server named '{SERVER_NAME}' (claude mcp get {SERVER_NAME}).")


def _claude_steps(where: Where, options: Options, journal: Journal, url: str, token: str, token_file: Path) -> None:
    mcp = ["mcp", "add", "--scope", options.scope, "--transport", "http", SERVER_NAME, f"{url}/mcp", "--header"]
    _run_claude(
        where,
        journal,
        [*mcp, f"Authorization: Bearer {token}"],
        ["mcp", "remove", "--scope", options.scope, SERVER_NAME],
        _shown(mcp) + f' "Authorization: Bearer $(cat {token_file})"',
    )
    for relative, text in plugin.plugin_files(where.notegate).items():
        _write_new(journal, where.plugin_dir / relative, text, mode=0o644)
    journal.lines.append(f"plugin:        wrote {where.plugin_dir} (its hooks run {where.notegate})")
    add = ["plugin", "marketplace", "add", str(where.plugin_dir)]
    _run_claude(where, journal, add, ["plugin", "marketplace", "remove", plugin.MARKETPLACE], _shown(add))
    ref = f"{plugin.PLUGIN}@{plugin.MARKETPLACE}"
    install = ["plugin", "install", "--scope", options.scope, ref]
    _run_claude(where, journal, install, ["plugin", "uninstall", "--scope", options.scope, ref], _shown(install))


CODEX_TABLE = ("mcp_servers", SERVER_NAME)
CODEX_TOKEN_VARIABLE = "NOTEGATE_TOKEN"  # noqa: S105 - the name of a variable, not its value


def _codex_preflight(where: Where) -> str:
    path = where.codex_config
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    try:
        add_table(text, CODEX_TABLE, {"url": "x", "bearer_token_env_var": "x"}, "probe")
    except TomlEditRefused as exc:
        raise _conflict(f"{path}: {exc.message}.") from None
    return text


def _codex_steps(where: Where, journal: Journal, client: str, url: str, token_file: Path, before: str) -> None:
    path = where.codex_config
    values = {"url": f"{url}/mcp", "bearer_token_env_var": CODEX_TOKEN_VARIABLE}
    after, block = add_table(before, CODEX_TABLE, values, f"Added by `notegate setup {client}` (--remove takes it out)")
    created = not path.exists()
    if created:
        journal.dirs(make_private_dirs(path.parent))
    path.write_text(after, encoding="utf-8")
    journal.add(
        {"do": "toml", "path": str(path), "block": block, "table": list(CODEX_TABLE), "created": created},
        f"codex:         added [mcp_servers.{SERVER_NAME}] to {path} (the rest of the file is unchanged)",
    )
    journal.lines.append(
        f"next:          Codex sends the token from ${CODEX_TOKEN_VARIABLE}; put this in your shell profile:\n"
        f'                 export {CODEX_TOKEN_VARIABLE}="$(cat {token_file})"'
    )


# ------------------------------------------------------------------ set up, remove
def set_up(client: str, where: Where, options: Options) -> list[str]:
    """Do every step for ``client``; returns what was done, one line each. On failure, undoes what it did."""
    if client not in CLIENTS:
        raise NotegateError(
            f"unknown client '{client}'", rule="bad-argument", remedy=f"Use one of: {', '.join(CLIENTS)}."
        )
    journal_path = where.journal(client)
    if journal_path.exists():
        raise _conflict(f"notegate setup {client} was done already ({journal_path}).")
    url = _url(options)
    token_file, mint = _token_plan(where, options)
    write_toml = _client_toml_plan(where, url, token_file)
    codex_before = ""
    if client == "claude-code":
        _claude_preflight(where, options)
    else:
        codex_before = _codex_preflight(where)
    journal = Journal()
    try:
        token = _get_token(where, client, options, journal, token_file, mint)
        if write_toml:
            _write_client_toml(where, journal, client, url, token_file)
        else:
            journal.lines.append(f"client.toml:   {where.client_toml} already names this server and token")
        if client == "claude-code":
            _claude_steps(where, options, journal, url, token, token_file)
        else:
            _codex_steps(where, journal, client, url, token_file, codex_before)
        journal.dirs(make_private_dirs(journal_path.parent))
        record = {"client": client, "version": 1, "url": url, "steps": journal.steps}
        fd = os.open(journal_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(record, indent=2) + "\n")
    except BaseException:
        _undo(where, journal.steps, [])
        raise
    done = [*journal.lines, f"journal:       {journal_path}", f"undo all of it: notegate setup {client} --remove"]
    silent = _not_answering(url)
    if silent is not None:  # done all the same (the server may start later), but said now, not by `claude mcp list`
        done.insert(
            len(journal.lines),
            f"server:        nothing answers at {url} now ({silent}): start it, or undo (--remove) and set up again "
            "with the URL the server printed (--url)",
        )
    return done


def _not_answering(url: str, timeout: float = PROBE_SECONDS) -> str | None:
    """Why the server's ``/healthz`` does not answer at ``url`` now, or None when it does. A newcomer whose server
    runs on another port than the config's (``make run PORT=N``) otherwise learns it only when the client fails
    to connect. Only http(s) URLs are probed (urllib would open a ``file:`` one)."""
    import urllib.error
    import urllib.request

    if not url.startswith(("http://", "https://")):
        return None
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=timeout) as answer:  # noqa: S310 (http(s) only)
            return None if answer.status == 200 else f"HTTP {answer.status}"
    except urllib.error.HTTPError as error:
        return f"HTTP {error.code}"
    except (OSError, ValueError) as error:
        return str(getattr(error, "reason", None) or error)


def remove(client: str, where: Where) -> list[str]:
    """Undo what ``notegate setup CLIENT`` journaled, newest first; returns one line per step."""
    path = where.journal(client)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotegateError(
            f"there is no journal of notegate setup {client} ({path}).", rule="setup-not-done"
        ) from None
    except (OSError, ValueError):
        raise _conflict(f"{path} cannot be read; nothing was undone.") from None
    path.unlink()  # first: the folders it sits in may be among those setup created
    lines: list[str] = []
    _undo(where, record["steps"], lines)
    return [*lines, f"notegate setup {client} is undone"]


def _undo(where: Where, steps: list[dict[str, Any]], lines: list[str]) -> None:
    for step in reversed(steps):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            lines.extend(_undo_one(where, step))


def _undo_one(where: Where, step: dict[str, Any]) -> list[str]:
    kind = step["do"]
    if kind == "file":
        path = Path(step["path"])
        if not path.exists():
            return [f"gone already:  {path}"]
        if _sha(path.read_text(encoding="utf-8", errors="replace")) != step["sha256"]:
            return [f"left as is:    {path} (changed since setup)"]
        path.unlink()
        return [f"deleted:       {path}"]
    if kind == "dirs":
        out = []
        for folder in reversed([Path(p) for p in step["paths"]]):
            try:
                folder.rmdir()
                out.append(f"deleted:       {folder}/")
            except OSError:
                out.append(f"left as is:    {folder}/ (not empty)")
        return out
    if kind == "token":
        _config, db = _server(Path(step["config"]))
        try:
            count = revoke_token(db, step["id"], now=time.time())
        finally:
            db.close()
        return [f"revoked:       token {step['id']}" + ("" if count else " (revoked already)")]
    if kind == "run":
        shown = "claude " + _shown(step["undo"])
        if where.claude is None:
            return [f"run yourself:  {shown}"]
        result = _claude(where, step["undo"])
        return [f"ran:           {shown}" + ("" if result.returncode == 0 else f" (exit {result.returncode})")]
    if kind == "print":
        return [f"run yourself:  {step['undo']}"]
    if kind == "toml":
        path = Path(step["path"])
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        after = remove_block(text, step["block"], tuple(step["table"]))
        if after is None:
            return [f"left as is:    [{'.'.join(step['table'])}] in {path} (changed since setup)"]
        if step.get("created") and not after.strip():
            path.unlink()
            return [f"deleted:       {path}"]
        path.write_text(after, encoding="utf-8")
        return [f"removed:       [{'.'.join(step['table'])}] from {path}"]
    return [f"unknown step {kind!r} left alone"]
