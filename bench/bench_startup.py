"""Process start-up cost, old code against new, back to back (issue 15: restart -> first read; every hook).

Why this shape: the machine is shared, so an absolute figure means little; each measurement alternates
between the two source trees run by the same interpreter (the new one is this checkout, the old one a
``git archive`` of a commit unpacked somewhere, given with ``--baseline``), and the report gives medians
and their ratio. Measured, each in a fresh interpreter, as CPU seconds (user + system, from ``wait4``):

* ``import notegate.doors.http`` (what ``notegate serve`` imports before anything else);
* the pre-receive hook's command, ``python -m notegate pre-receive --config ... --environment ...``, as git
  runs it, on one pushed commit that changes one note;
* ``python -m notegate.cli hook session-start`` with Claude Code's hook JSON on stdin (unconfigured: the
  start-up a session pays when notegate is not set up there) and ``notegate token list`` (a CLI start
  that loads the config);
* ``notegate doctor --help`` (the parser and nothing else: the floor under every command) and
  ``notegate init`` into a fresh directory (config, bare origin, clone, the default notes committed through
  the notes service's recipe: the floor's patterns are compiled on that first check);
* restart -> first read: ``notegate serve`` on a vault of ``--notes`` notes (generated and imported once,
  index already built), wall seconds from spawn to the first ``read_note`` answered over MCP, and the
  server's CPU seconds at that moment.

    python bench/bench_startup.py --baseline-ref 48d538a [--runs 7] [--notes 10000] [--skip-restart]
    python bench/bench_startup.py --baseline /tmp/baseline/src     # an old src/ unpacked already
    python bench/bench_startup.py --quick                          # new code only, 3 runs, 1,000 notes

Without a baseline only this checkout is measured (``run_all.py`` runs it so).

Everything runs in a temporary directory that is always removed; every server is always stopped.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_notes  # a sibling script, not a package
import genvault

NEW_SRC = Path(__file__).resolve().parent.parent / "src"


def cpu_of(argv: list[str], env: dict[str, str], stdin: bytes = b"", cwd: Path | None = None) -> float:
    """CPU seconds (user + system) of one child process, from its own rusage."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd
    )
    assert proc.stdin is not None and proc.stderr is not None
    proc.stdin.write(stdin)
    proc.stdin.close()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0,):
        raise RuntimeError(f"{argv[1:4]} exited {proc.returncode}: {err.decode(errors='replace')[-600:]}")
    return usage.ru_utime + usage.ru_stime


def env_for(src: Path) -> dict[str, str]:
    """This interpreter, importing notegate from ``src`` (PYTHONPATH precedes the editable install)."""
    return {**os.environ, "PYTHONPATH": str(src)}  # .pyc files are written for both: compiling is no start cost


def check_tree(src: Path) -> None:
    code = "import notegate, sys; print(notegate.__file__)"
    out = subprocess.run([sys.executable, "-c", code], env=env_for(src), capture_output=True, text=True, check=True)
    if not out.stdout.strip().startswith(str(src)):
        raise SystemExit(f"{src}: notegate is imported from {out.stdout.strip()} instead")


def alternate(runs: int, trees: dict[str, Path], measure: Callable[[Path], float]) -> dict[str, list[float]]:
    """``runs`` measurements of each tree, alternating (old, new, old, new, ...) after one warm-up each."""
    for src in trees.values():
        measure(src)  # warm the page cache and the .pyc files of both
    figures: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, src in trees.items():
            figures[name].append(measure(src))
    return figures


def prepare_push(workdir: Path, path: str) -> tuple[Path, bytes]:
    """A vault whose origin holds one new commit (the note at ``path`` added) that is not yet on main: the
    stdin git would give the pre-receive hook for pushing it."""
    workdir.mkdir(parents=True)
    cfg = bench_notes.init_directory(workdir / "vault")
    origin = cfg.parent / "origin.git"
    clone = workdir / "clone"
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git, "clone", "-q", str(origin), str(clone)], check=True)
    note = clone / path
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("# bench\n\nOne line of an ordinary note, changed by a push.\n", encoding="utf-8")
    subprocess.run([*git, "-C", str(clone), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(clone), "commit", "-q", "-m", "bench: one note"], check=True)
    old = subprocess.run(["git", "-C", str(origin), "rev-parse", "main"], capture_output=True, text=True, check=True)
    new = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    # Objects into the origin without running its hook (a fetch runs none), the ref left where it was.
    subprocess.run(["git", "-C", str(origin), "fetch", "-q", str(clone), "HEAD:refs/bench/incoming"], check=True)
    return cfg, f"{old.stdout.strip()} {new.stdout.strip()} refs/heads/main\n".encode()


def proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def restart_once(cfg: Path, token: str, read_path: str, probe: str, src: Path, log: Path) -> tuple[float, float]:
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(src)
    try:
        server = bench_notes.ServerProcess(cfg, log).spawn()
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
    try:
        first, _searchable = await bench_notes.wait_until_answering(server, token, read_path, probe)
        assert server.proc is not None
        return first, proc_cpu(server.proc.pid)
    finally:
        server.stop()


def report(title: str, figures: dict[str, list[float]], unit: str = "s CPU") -> str:
    spread = "  ".join(f"{k} [{min(v):.3f}..{max(v):.3f}]" for k, v in figures.items())
    new = statistics.median(figures["new"])
    if "old" not in figures:
        return f"{title:<58} new {new:7.3f} {unit}   ({spread})"
    old = statistics.median(figures["old"])
    return f"{title:<58} old {old:7.3f}  new {new:7.3f} {unit}  new/old {new / old:5.2f}   ({spread})"


def unpack(ref: str, into: Path) -> Path:
    """``git archive`` of ``ref``'s src/ (this repository's history), unpacked under ``into``."""
    repo = NEW_SRC.parent
    archive = subprocess.run(["git", "-C", str(repo), "archive", ref, "src"], capture_output=True, check=True).stdout
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=None, help="the old code's src/ directory")
    parser.add_argument("--baseline-ref", default=None, help="a commit of this repository to compare against")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="3 runs, 1,000 notes (a smoke run)")
    parser.add_argument("--skip-restart", action="store_true", help="only the fresh-interpreter figures")
    args = parser.parse_args(argv)
    # Both trees write and reuse their .pyc files (servers included): compiling is not a start-up cost, and an
    # environment that forbids writing them made an unpacked baseline compile every module on every run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if args.quick:
        args.runs, args.notes = min(args.runs, 3), min(args.notes, 1000)
    py = sys.executable
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [f"bench_startup: median of {args.runs} alternating runs, {os.cpu_count()} cores, load {load}"]
    workdir = Path(tempfile.mkdtemp(prefix="notegate-startup-"))
    try:
        trees = {"new": NEW_SRC}
        if args.baseline is not None or args.baseline_ref is not None:
            old = args.baseline.resolve() if args.baseline else unpack(args.baseline_ref, workdir / "baseline")
            trees = {"old": old, "new": NEW_SRC}
        for src in trees.values():
            check_tree(src)
        figures = alternate(args.runs, trees, lambda s: cpu_of([py, "-c", "import notegate.doors.http"], env_for(s)))
        lines.append(report("import notegate.doors.http", figures))
        for label, path in (("a note", "notes/bench.md"), ("an inbox item: the floor runs", "inbox/captures/bench.md")):
            cfg, push = prepare_push(workdir / path.replace("/", "-"), path)
            origin = cfg.parent / "origin.git"
            hook = [py, "-m", "notegate", "pre-receive", "--config", str(cfg), "--environment", "personal"]
            env = {"GIT_DIR": str(origin)}
            figures = alternate(args.runs, trees, lambda s: cpu_of(hook, env_for(s) | env, push, cwd=origin))  # noqa: B023
            lines.append(report(f"pre-receive, one commit adding {label}", figures))
        payload = b'{"cwd": "/nonexistent", "session_id": "s1", "hook_event_name": "SessionStart"}'
        session = [py, "-m", "notegate.cli", "hook", "session-start"]
        figures = alternate(args.runs, trees, lambda s: cpu_of(session, env_for(s), payload, cwd=workdir))
        lines.append(report("hook session-start (unconfigured)", figures))
        fresh = itertools.count()  # every init needs a directory of its own
        inits = workdir / "inits"

        def init_cpu(src: Path) -> float:
            return cpu_of([py, "-m", "notegate.cli", "init", str(inits / f"v{next(fresh)}")], env_for(src))

        figures = alternate(args.runs, trees, init_cpu)
        lines.append(report("init (config, origin, clone, default notes committed)", figures))
        helps = [py, "-m", "notegate.cli", "doctor", "--help"]
        figures = alternate(args.runs, trees, lambda s: cpu_of(helps, env_for(s)))
        lines.append(report("doctor --help (the parser only)", figures))
        tokens = [py, "-m", "notegate.cli", "token", "list", "--config", str(cfg)]
        figures = alternate(args.runs, trees, lambda s: cpu_of(tokens, env_for(s)))
        lines.append(report("token list (a CLI start that loads the config)", figures))
        print("\n".join(lines), flush=True)
        if not args.skip_restart:
            lines.append(asyncio.run(restart(args, trees, workdir)))
            print(lines[-1])
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


async def restart(args: argparse.Namespace, trees: dict[str, Path], workdir: Path) -> str:
    spec = genvault.generate(workdir / "src", args.notes, 1)
    cfg = bench_notes.init_directory(workdir / "big")
    bench_notes.import_vault(cfg, workdir / "src", spec)
    token, probe = bench_notes.bench_token(cfg, workdir / "bench.token"), next(iter(spec.rare_terms))
    log = workdir / "serve.log"
    for src in trees.values():  # the first builds the index; each tree writes its .pyc files
        await restart_once(cfg, token, spec.paths[0], probe, src, log)
    walls: dict[str, list[float]] = {name: [] for name in trees}
    cpus: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, src in trees.items():
            wall, cpu = await restart_once(cfg, token, spec.paths[0], probe, src, log)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return "\n".join(
        (
            report(f"restart -> first read, {args.notes} notes (wall)", walls, "s wall"),
            report(f"restart -> first read, {args.notes} notes (server CPU)", cpus),
        )
    )


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - started:.0f} s)")
    sys.exit(code)
