"""A fork server for `notegate serve` in tests: the interpreter start and the imports are paid once per worker.

A fresh ``python -m notegate.cli serve`` spends ~2 s importing the MCP SDK and building the instruction-file
matcher (~1.4 s of regex compilation until it was compiled over stand-in characters; now well under 0.2 s)
before it listens; 100+ tests start a server, so that was most of the suite.
Here multiprocessing's "forkserver" process (started once per pytest worker, single-threaded, so forking
it is safe) imports this module, which imports the server stack and warms that cache; each server is a
fork of it running the same entry point, ``notegate.cli.main(["serve", ...])``. It is still a separate
process on a real loopback socket: tests SIGKILL it, count its descriptors by pid and read its log.

``run_cli`` does the same for the short commands (review, hook, token, device, floor, gate, import, ...):
``subprocess.run``'s answer (exit status, stdout, stderr) from a fork that got the test's stdin, environment
and working directory, at the cost of a fork instead of an interpreter start and ~1 s of imports. The few
tests that show the user's real path keep a fresh ``python -m notegate.cli`` (support.notegate(real=True)).

What the child gets, so it behaves as the old subprocess did: the environment the test had when it started
the server (passed explicitly, not the fork server's), the test's working directory, stdout and stderr
appended to the log file, no blocked signals and default dispositions (the fork server ignores SIGINT),
and the same process group as the pytest worker (as ``subprocess.Popen`` gave it).

Each fork starts by freezing the heap it inherited (``gc.freeze()``: CPython's advice for a fork without exec),
so its collections walk only what it made itself. Since ``notegate serve`` settles its heap once open
(doors/heap.py: a full collection, then a freeze), a forked server's full collection walked the fork server's
whole preloaded heap too, writing to every object and so copying every page of it: a server's start took
~0.75 s instead of ~0.3 s on the loaded test machine. A server started afresh freezes that same heap at the
same moment, having imported it itself.
"""

from __future__ import annotations

import atexit
import gc
import io
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

import anthropic  # noqa: F401 - the providers import their SDK on first use: seconds a fork need not pay
import openai  # noqa: F401
import uvicorn  # noqa: F401 - imported here so every fork has it already

import notegate.doors.http  # the MCP SDK: most of a fresh server's start-up
import notegate.hooks  # the short commands' own imports, so a forked command pays none
import notegate.models.chain  # the providers (review, reflect, session-end): the package imports them lazily
import notegate.services.container
import notegate.services.reflect
import notegate.services.review  # noqa: F401 - the last import binds `notegate` unused
from notegate.cli import main
from notegate.safety.floor import check_item

# Warm the per-process instruction-file matcher every fork shares (the default list's inverse fold and
# compiled search, built on first use). validate_instruction_files no longer compiles it, so the
# floor itself is asked once, on a name it must hold.
assert check_item("Read CLAUDE.md first.", path="inbox/captures/x.md").verdict == "hold"

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload([__name__])


def _ensure_fork_server() -> None:
    """Start the fork server with the tests' directory importable (this module is ``support.zygote``): Python
    3.11's fork server ignores the sys.path it is sent and skips a preload module it cannot import, so it
    reads PYTHONPATH from its environment."""
    here = str(Path(__file__).resolve().parents[1])
    before = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, before) if p)
    try:
        multiprocessing.forkserver.ensure_running()
    finally:
        if before is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = before


def _child(argv: list[str], env: dict[str, str], log: str) -> None:
    """The forked server: the log on fds 1 and 2, the caller's environment, default signals, then the CLI."""
    gc.freeze()  # the heap inherited from the fork server: never walked again (the module's docstring)
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=True, write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True, write_through=True)
    os.environ.clear()
    os.environ.update(env)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = ["notegate", *argv]
    code = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(code)


class Forked:
    """The part of :class:`subprocess.Popen` the tests use (pid, poll, wait, send_signal), for a fork."""

    def __init__(self, process: multiprocessing.process.BaseProcess) -> None:
        self._process = process
        assert process.pid is not None
        self.pid: int = process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        code = self._process.exitcode
        if code is None:
            raise subprocess.TimeoutExpired(["notegate", "serve"], timeout or 0)
        return code

    def send_signal(self, sig: int) -> None:
        if self._process.exitcode is None:  # never signal a pid the system may have handed on
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def fork_cli(argv: list[str], log: Path, env: Mapping[str, str] | None = None) -> Forked:
    """Run ``notegate ARGV`` as a fork of the warm fork server, output appended to ``log``, in the caller's
    working directory (multiprocessing sends it) with ``env`` (default: the caller's environment now)."""
    env = dict(os.environ if env is None else env)
    _ensure_fork_server()
    log.touch()  # there is a log to read even if the child dies before it opens it
    process = _context.Process(target=_child, args=(list(argv), env, str(log)), daemon=True)
    process.start()
    return Forked(process)


def _run_child(argv: list[str], env: dict[str, str], cwd: str, stdin: str, stdout: str, stderr: str) -> None:
    """A forked short command: stdin, stdout and stderr on the given files (fds 0, 1, 2), the caller's
    environment and directory, default signals, then the CLI; exit handlers run as at a real exit."""
    gc.freeze()  # the heap inherited from the fork server: never walked again (the module's docstring)
    for fd, path, flags in ((0, stdin, os.O_RDONLY), (1, stdout, os.O_WRONLY), (2, stderr, os.O_WRONLY)):
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace", write_through=True
    )
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = ["notegate", *argv]
    try:
        code = main(argv)
    finally:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    sys.exit(code)


def run_cli(
    argv: list[str],
    *,
    input: str | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    timeout: float | None = None,
) -> subprocess.CompletedProcess[str]:
    """``subprocess.run(["notegate", *argv], input=input, capture_output=True, text=True, env=env, cwd=cwd,
    timeout=timeout)``, answered by a fork of the warm fork server: the same exit status, stdout and stderr
    (decoded with universal newlines, as text=True does), in a separate process."""
    env = dict(os.environ if env is None else env)
    _ensure_fork_server()
    with tempfile.TemporaryDirectory(prefix="notegate-cli-") as scratch:
        files = {name: Path(scratch) / name for name in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(input or "", encoding="utf-8")
        files["stdout"].touch()
        files["stderr"].touch()
        process = _context.Process(
            target=_run_child,
            args=(list(argv), env, str(cwd or os.getcwd()), *(str(files[n]) for n in ("stdin", "stdout", "stderr"))),
            daemon=True,
        )
        process.start()
        process.join(timeout)
        if process.exitcode is None:
            process.kill()
            process.join()
            raise subprocess.TimeoutExpired(["notegate", *argv], timeout or 0)
        code = process.exitcode
        # read_text decodes with universal newlines, as text=True does
        out, err = (files[n].read_text(encoding="utf-8") for n in ("stdout", "stderr"))
    return subprocess.CompletedProcess(["notegate", *argv], code, out, err)  # a signal: -N, as Popen says
