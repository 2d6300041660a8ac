"""Which project and branch a session is in, from its working directory alone.

Why no ``git`` subprocess: starting git costs ~5–20 ms and may not be installed where a hook
runs; the answers we need are two small files.  The top level is the nearest ancestor holding a
``.git`` entry (a directory, or a file ``gitdir: …`` for worktrees and submodules).  The project is
the repository's directory name as a lowercase slug (for a linked worktree, the main repository's
name), unless ``[projects]`` in client.toml maps the path or the repository name to another one.
The branch is read from ``HEAD``: ``ref: refs/heads/<name>`` gives the name, a detached HEAD gives
``detached-<12 hex>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

_NOT_SLUG = re.compile(r"[^a-z0-9]+")
MAX_BRANCH = 200


@dataclass(frozen=True)
class Place:
    """Where a session runs: the repository top level (or None), its project and branch."""

    top: Path | None
    project: str | None
    branch: str | None


def slug(name: str) -> str | None:
    """``My_Repo.git`` → ``my-repo-git``; None when nothing usable is left."""
    out = _NOT_SLUG.sub("-", name.lower()).strip("-")
    return out[:64].strip("-") or None


def _git_dir(top: Path) -> Path | None:
    dot = top / ".git"
    if dot.is_dir():
        return dot
    try:
        first = dot.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:") :].strip())
    return target if target.is_absolute() else (top / target)


def find_top(cwd: Path) -> Path | None:
    """The nearest directory at or above ``cwd`` with a ``.git`` entry."""
    for candidate in (cwd, *cwd.parents):
        try:
            if (candidate / ".git").exists():
                return candidate
        except OSError:
            return None
    return None


def read_branch(top: Path) -> str | None:
    git_dir = _git_dir(top)
    if git_dir is None:
        return None
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if head.startswith("ref:"):
        ref = head[4:].strip()
        name = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref
    elif re.fullmatch(r"[0-9a-f]{40,64}", head):
        name = f"detached-{head[:12]}"
    else:
        return None
    name = "".join(ch for ch in name if ch.isprintable() and ch not in "·")[:MAX_BRANCH].strip()
    return name or None


def repo_name(top: Path) -> str:
    """The repository's name; for a linked worktree, the main repository's directory name."""
    git_dir = _git_dir(top)
    if git_dir is not None and git_dir.parent.name == "worktrees" and git_dir.parent.parent.name == ".git":
        return git_dir.parent.parent.parent.name
    return top.name


def _mapped(cwd: Path, top: Path | None, projects: Mapping[str, str]) -> str | None:
    """The longest configured path that contains ``cwd``, else a configured repository name."""
    best: tuple[int, str] | None = None
    for key, project in projects.items():
        path = Path(key)
        if not path.is_absolute():
            continue  # a repository name, tried below
        if cwd == path or path in cwd.parents:
            depth = len(path.parts)
            if best is None or depth > best[0]:
                best = (depth, project)
    if best:
        return best[1]
    if top is not None:
        name = repo_name(top)
        for key in (name, name.lower(), slug(name) or ""):
            if key in projects:
                return projects[key]
    return None


def locate(cwd: str | None, projects: Mapping[str, str], explicit: str | None = None) -> Place:
    """Project and branch for a session started in ``cwd`` (missing or unreadable → no project).

    The owner's word comes first: ``explicit`` (``NOTEGATE_PROJECT``), then the ``[projects]``
    mapping; the checkout's directory name, which whoever named the repository chose, only last.
    Every answer is a slug (the settings check the configured ones).
    """
    if not cwd:
        return Place(None, explicit, None)
    path = Path(cwd)
    if not path.is_absolute():
        return Place(None, explicit, None)
    top = find_top(path)
    project = explicit or _mapped(path, top, projects)
    if project is None and top is not None:
        project = slug(repo_name(top))
    return Place(top, project, read_branch(top) if top is not None else None)
