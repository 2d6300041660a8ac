"""`notegate init`: a directory with the config, a bare origin (with notegate's pre-receive hook), the
server's clone and the default notes -- or none (``empty``: for bringing a vault in with ``notegate import``;
the policy's folders then exist only once something is written there, so the vault's own ``Projects/`` or
``Inbox/`` never meets a demo folder of another spelling).

The default notes are committed through the notes service's recipe like every other write (trailers,
lock, push to the origin before returning), as the owner at a shell through the CLI's own connector.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pygit2

from notegate.config import load_config
from notegate.errors import InitError, NotegateError
from notegate.policy import decide_new_state_database, decide_state_url_stored, fixed_caller
from notegate.policy.plan import Intent
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.sync.hookfile import bound_pack, install_hook
from notegate.vault.layout import CONFIG_NAME, default_notes, render_config, render_toml
from notegate.vault.store import Change


def init_directory(
    directory: Path, *, owner: str = "owner", now: datetime | None = None, empty: bool = False, state_url: str = ""
) -> Path:
    """Create config, bare origin, server clone and state with the default layout (``empty``: no notes, no
    commit; the first write makes the first commit). Returns the config path.

    With ``state_url`` the state lives in that PostgreSQL database (``[state] url``), checked before anything
    is made: no password in the URL ``[state-url-password]``, reachable ``[state-unavailable]``, no notegate
    rows in it ``[state-database-not-empty]``."""
    now = now or datetime.now(UTC)
    config_path = directory / CONFIG_NAME
    if directory.exists() and any(directory.iterdir()):
        if config_path.exists():
            raise InitError(f"{directory.name} is already a notegate directory (it has {CONFIG_NAME})")
        raise InitError(f"{directory.name} is not empty and is not a notegate directory")
    if state_url:
        _check_state_url(state_url)
    directory.mkdir(parents=True, exist_ok=True)
    origin = pygit2.init_repository(str(directory / "origin.git"), bare=True, initial_head="main")
    # Pushes from workstations are received by git itself, quarantine and all: flush what it writes, refs too
    # (git's default flushes packs but not refs; notegate.vault.durable says what the server flushes).
    origin.config["core.fsync"] = "all"
    text = render_config(owner)
    if state_url:
        text += "\n[state]\n" + render_toml({"url": state_url})
    config_path.write_text(text, encoding="utf-8")
    config = load_config(config_path)
    # The server pushes through libgit2's local transport, which runs no hooks; every other push meets it.
    install_hook(directory / "origin.git", config_path, config.default_environment)
    bound_pack(directory / "origin.git", config.policy.max_push_bytes)
    runtime = Runtime(config, meaning=False)  # the server embeds the default notes when it starts
    try:
        env = runtime.environment(None, index_now=False)
        if empty:
            return config_path
        changes = [Change(path, text.encode("utf-8")) for path, text in default_notes(now).items()]
        NotesService(runtime).commit_as(
            fixed_caller("cli:init", owner),
            env,
            changes,
            {change.path: "absent" for change in changes},
            "Create the default vault layout",
            new_paths=tuple(change.path for change in changes),
            intent=Intent(op="init"),
        )
    finally:
        runtime.close()
    return config_path


def _check_state_url(state_url: str) -> None:
    # Imported here: only ``init --state-url`` talks to PostgreSQL, and every other ``init`` would pay for
    # the driver glue and ``logging`` at start-up (issue 9).
    from notegate.postgres import describe_url
    from notegate.state import inspect_postgres

    decision = decide_state_url_stored(state_url)
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)
    status = inspect_postgres(state_url)
    if status.unreachable:
        raise NotegateError(
            f"the state database ({describe_url(state_url)}) could not be reached: {status.unreachable}",
            rule="state-unavailable",
        )
    decision = decide_new_state_database(status.rows)
    if not decision.allowed:
        raise NotegateError(decision.reason, rule=decision.rule)
