"""Where a hook finds its server, token, project mapping and model chain.

Why a separate, lean loader: hooks start on every session, so this module uses only the standard
library (``tomllib``) and reads nothing but the environment mapping it is given and one file.

Sources, first match wins per key:

* ``NOTEGATE_URL`` (the server's base URL, e.g. ``http://127.0.0.1:8765``) and ``NOTEGATE_TOKEN``
  (or ``NOTEGATE_TOKEN_FILE``) from the environment;
* ``$XDG_CONFIG_HOME/notegate/client.toml`` (default ``$HOME/.config/notegate/client.toml``, or the
  file named by ``NOTEGATE_CLIENT_CONFIG``)::

      url = "http://127.0.0.1:8765"
      token_file = "~/.config/notegate/token"   # or: token = "ngt_…"
      client_name = "claude-code"               # shown in log entries and handoffs
      archived = ["old-project"]                # hooks do nothing for these projects
      [projects]                                # cwd path or repository name → project
      "/home/me/src/website" = "homepage"
      "notegate-fork" = "notegate"
      [memory]                                  # project → a MEMORY.md the owner vouches for
      "homepage" = "~/notes/homepage-MEMORY.md"
      [models]                                  # the write-back's model chain (see notegate.models)
      chain = ["claude-cli", "none"]

``NOTEGATE_PROJECT`` (a slug) names the project explicitly and wins over ``[projects]`` and the
directory name.  Only a ``[memory]`` file is given to the write-back's model as the owner's word; a
``MEMORY.md`` inside a checkout is repository data (anyone who can push wrote it) and is labelled so.

Missing url or token means *unconfigured*: every hook is a silent no-op.  A malformed file is
reported as one line on stderr (never its contents) and the hook does nothing either.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from notegate.errors import NotegateError

#: Set by notegate's own model processes (and by anyone who wants hooks off for one command).
HOOK_GUARD_ENV = "NOTEGATE_HOOK_ACTIVE"
#: Keys of client.toml; anything else is refused with this list as the hint.
KNOWN_KEYS = ("url", "token", "token_file", "client_name", "archived", "projects", "memory", "models")
PROJECT_ENV = "NOTEGATE_PROJECT"
DEFAULT_CLIENT_NAME = "claude-code"
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
_CLIENT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")


class SettingsError(NotegateError):
    """client.toml cannot be used; the message names the key, never a value."""

    rule = "client-settings-invalid"


@dataclass(frozen=True)
class HookSettings:
    """Everything a hook needs, resolved once at start (no environment reads later)."""

    url: str
    token: str
    state_dir: Path
    client_name: str = DEFAULT_CLIENT_NAME
    projects: Mapping[str, str] = field(default_factory=dict)
    archived: frozenset[str] = frozenset()
    models: Mapping[str, Any] | None = None
    #: project → path of a MEMORY.md the owner configured (the only one labelled authoritative).
    memory: Mapping[str, Path] = field(default_factory=dict)
    #: The project named explicitly (``NOTEGATE_PROJECT``); wins over every other source.
    project: str | None = None

    @property
    def mcp_url(self) -> str:
        return self.url + "/mcp"


def home_dir(environ: Mapping[str, str]) -> Path | None:
    home = environ.get("HOME", "")
    return Path(home) if home else None


def config_path(environ: Mapping[str, str]) -> Path | None:
    """The client.toml to read: ``NOTEGATE_CLIENT_CONFIG``, else the XDG config location."""
    explicit = environ.get("NOTEGATE_CLIENT_CONFIG", "")
    if explicit:
        return Path(explicit)
    base = environ.get("XDG_CONFIG_HOME", "")
    if base:
        return Path(base) / "notegate" / "client.toml"
    home = home_dir(environ)
    return home / ".config" / "notegate" / "client.toml" if home else None


def state_dir(environ: Mapping[str, str]) -> Path:
    """Where hooks keep their small state files (dedup registry, write-back times, log)."""
    base = environ.get("XDG_STATE_HOME", "")
    if base:
        return Path(base) / "notegate"
    home = home_dir(environ)
    if home:
        return home / ".local" / "state" / "notegate"
    return Path(environ.get("TMPDIR", "/tmp")) / "notegate-state"  # noqa: S108 - last resort, no HOME at all


def _expand(raw: str, environ: Mapping[str, str], relative_to: Path | None) -> Path:
    if raw.startswith("~/") or raw == "~":
        home = home_dir(environ)
        if home is None:
            raise SettingsError("token_file starts with ~ but HOME is not set")
        return home / raw[2:]
    path = Path(raw)
    if not path.is_absolute() and relative_to is not None:
        path = relative_to / path
    return path


def _read_token(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        raise SettingsError("token_file cannot be read") from None


def _load_file(path: Path | None) -> dict[str, Any]:
    if path is None:
        return {}
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError:
        raise SettingsError(f"{path.name} cannot be read") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise SettingsError(f"{path.name} is not valid TOML") from None
    unknown = sorted(set(data) - set(KNOWN_KEYS))
    if unknown:
        raise SettingsError(f"{path.name} has unknown keys {unknown}; known keys: {', '.join(KNOWN_KEYS)}")
    return data


def _check_types(data: dict[str, Any]) -> None:
    for key in ("url", "token", "token_file", "client_name"):
        if key in data and not isinstance(data[key], str):
            raise SettingsError(f"client.toml: {key} must be a string")
    archived = data.get("archived", [])
    if not isinstance(archived, list) or not all(isinstance(a, str) and _SLUG.match(a) for a in archived):
        raise SettingsError("client.toml: archived must be a list of project names (lowercase, digits, hyphens)")
    projects = data.get("projects", {})
    if not isinstance(projects, dict) or not all(
        isinstance(v, str) and _SLUG.match(v) and k for k, v in projects.items()
    ):
        raise SettingsError("client.toml: [projects] must map paths or repository names to project names")
    memory = data.get("memory", {})
    if not isinstance(memory, dict) or not all(
        isinstance(k, str) and _SLUG.match(k) and isinstance(v, str) and v for k, v in memory.items()
    ):
        raise SettingsError("client.toml: [memory] must map project names to MEMORY.md paths")
    if "models" in data and not isinstance(data["models"], dict):
        raise SettingsError("client.toml: [models] must be a table")
    name = data.get("client_name", DEFAULT_CLIENT_NAME)
    if not _CLIENT_NAME.match(name):
        raise SettingsError("client.toml: client_name must be letters, digits, '.', '_' or '-' (at most 64)")


def load_settings(environ: Mapping[str, str]) -> HookSettings | None:
    """The resolved settings, or None when notegate is not configured (hooks then do nothing).

    Raises :class:`SettingsError` when something is configured but unusable.
    """
    path = config_path(environ)
    data = _load_file(path)
    _check_types(data)
    url = environ.get("NOTEGATE_URL", "") or data.get("url", "")
    token = environ.get("NOTEGATE_TOKEN", "")
    if not token and environ.get("NOTEGATE_TOKEN_FILE", ""):
        token = _read_token(_expand(environ["NOTEGATE_TOKEN_FILE"], environ, None))
    if not token:
        token = data.get("token", "")
    if not token and data.get("token_file"):
        token = _read_token(_expand(data["token_file"], environ, path.parent if path else None))
    if not url or not token:
        return None
    url = url.rstrip("/")
    if url.endswith("/mcp"):  # people paste the MCP endpoint; accept it
        url = url[: -len("/mcp")]
    if not url.startswith(("http://", "https://")):
        raise SettingsError("the notegate url must start with http:// or https://")
    project = environ.get(PROJECT_ENV, "") or None
    if project is not None and (len(project) > 64 or not _SLUG.match(project)):
        raise SettingsError(f"{PROJECT_ENV} must be a project name (lowercase letters, digits, hyphens)")
    memory = {
        name: _expand(raw, environ, path.parent if path else None) for name, raw in data.get("memory", {}).items()
    }
    return HookSettings(
        url=url,
        token=token,
        state_dir=state_dir(environ),
        client_name=data.get("client_name", DEFAULT_CLIENT_NAME),
        projects=dict(data.get("projects", {})),
        archived=frozenset(data.get("archived", [])),
        models=data.get("models"),
        memory=memory,
        project=project,
    )
