"""The doors: ``serve`` (HTTP, with the hints it prints on start) and ``mcp`` (stdio for one token)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _sub, console_url, self_command
from notegate.network import DEFAULT_HOST, DEFAULT_PORT


def add_serve(subs) -> None:
    p = _sub(subs, "serve", "serve MCP over Streamable HTTP at /mcp (and /healthz)")
    _config_arg(p)
    p.add_argument("--host", default=None, help=f"listen address (default: from config, {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=None, help=f"listen port (default: from config, {DEFAULT_PORT})")
    p.add_argument("--token-file", default=None, help="a token file to show in the connection hint")
    p.add_argument(
        "--log-format",
        choices=["text", "json"],
        default="text",
        help="the server log: one line per event, as words (default) or one JSON object for log collectors",
    )


def _console_hint(config, port: int) -> str:
    """Where the owner's console is and how to get a first passkey's link: the command, with absolute paths
    (the link itself is a credential, minted only when asked for, never into a log)."""
    url = console_url(config, port)
    here = Path(sys.executable).parent / "notegate"
    program = str(here) if here.exists() else "notegate"
    port_arg = f" --port {port}" if port != config.port and not config.public_url else ""
    config_arg = str(Path(config.path).absolute()) if config.path else "CONFIG"
    return (
        f"Console (passkey login): {url}/\n"
        f"  first passkey: {program} owner enroll --config {config_arg}{port_arg}\n"
        "  prints a one-time enrol link (15 min, single use): open it in the browser that keeps the passkey."
    )


def _connect_hint(url: str, token_file: str | None, config: str | Path | None = None) -> str:
    """How to connect, without ever printing a token (stderr often ends up in a log). Paths are absolute and
    the registration is at user scope, so the lines work pasted into any folder."""
    token = f"$(cat {Path(token_file).expanduser().absolute()})" if token_file else "<token>"
    config_arg = str(Path(config).absolute()) if config else "CONFIG"
    notegate = self_command()
    return (
        f"notegate is serving MCP at {url}/mcp\n"
        "Connect Claude Code (from any folder; user scope):\n"
        f"  claude mcp add --scope user --transport http notegate {url}/mcp "
        f'--header "Authorization: Bearer {token}"\n'
        f"  or all in one step (token, client.toml, MCP, plugin): {notegate} setup claude-code --config {config_arg} "
        f"--url {url}\n"
        "Any MCP client: Streamable HTTP at the URL above with that Authorization header.\n"
        f"Make a token: {notegate} token create --config {config_arg} --name NAME --class workstation "
        "[--tier trusted]\n"
        # The enrol command is printed once, on the console's line (with --port when it differs): a second copy
        # here without it sent the link to the config's port, where nothing served.
        "Hosted apps (claude.ai, ChatGPT, phones) connect with OAuth to the same URL, no token: enrol your passkey\n"
        "first (the 'first passkey' line below), then approve the app on the consent page. They stay restricted.\n"
        "A phone needs TLS (docs/how-to/hosted-oauth.md); a program on this machine signs in over this URL as it is\n"
        "(docs/how-to/sdk-client.md)."
    )


def cmd_serve(args: argparse.Namespace) -> int:
    from notegate.doors import gil, heap
    from notegate.doors.http import base_url, create_app
    from notegate.doors.listen import bind_listener, bounded_server
    from notegate.services import eventlog
    from notegate.services.runtime import Runtime
    from notegate.sqlite import bound_page_caches

    heap.bound_arenas()  # before any thread of the server's exists (doors/heap.py)
    bound_page_caches()  # every thread's SQLite connections together (notegate/sqlite.py)
    config = _load(args)
    host = args.host or config.host
    port = args.port or config.port
    listener = bind_listener(host, port)  # a busy port is refused here, before anything says "serving"
    runtime = Runtime(config)
    app = create_app(runtime, host=host, port=port, settle_heap=True)
    gil.share()  # the group commit's flushes give the GIL away; each hand-back waits this long at most
    eventlog.configure(args.log_format)
    hint = _connect_hint(base_url(runtime, host, port), args.token_file, config.path)
    print(hint, file=sys.stderr, flush=True)
    print(_console_hint(config, port), file=sys.stderr, flush=True)
    # Connections are bounded before any HTTP parsing: admitted at accept, per peer, in all, and the time a
    # request head may take (doors/listen.py, the same listener as the LiveSync gate's).  The app's guard
    # bounds open requests per credential.
    server = bounded_server(app, listener, config, host=host, port=port)
    server.run(sockets=[listener])
    return 0


def add_mcp(subs) -> None:
    p = _sub(subs, "mcp", "serve the same tools over stdio for a local client")
    _config_arg(p)
    p.add_argument("--token-file", required=True, help="file holding the bearer token that decides the caller")


def cmd_mcp(args: argparse.Namespace) -> int:
    import threading

    from notegate.auth.tokens import verify_token
    from notegate.doors.mcp import CallerResolver, build_mcp
    from notegate.errors import AuthError
    from notegate.policy import decide_token_environment
    from notegate.services.container import Services
    from notegate.services.runtime import Runtime

    config = _load(args)
    runtime = Runtime(config)
    try:
        token = Path(args.token_file).read_text(encoding="utf-8").strip()
    except OSError:
        return _fail("notegate mcp: cannot read the token file", 2)
    record = verify_token(runtime.state, token)
    if record is None:
        return _fail("notegate mcp: the token in the token file is not valid (revoked or mistyped)", 2)
    served = decide_token_environment(record.environment, config.environments)  # the HTTP door's own decision
    if not served.allowed:
        raise AuthError(f"the token in the token file is refused: {served.reason}", rule=served.rule)
    runtime.open_all()

    def loop() -> None:
        while True:
            time.sleep(config.policy.fetch_interval_seconds)
            runtime.sync_all()

    threading.Thread(target=loop, daemon=True, name="notegate-sync").start()

    def still_valid() -> bool:  # one indexed row per call: a revoked token stops this process at its next call
        return verify_token(runtime.state, token) is not None

    services = Services.build(runtime)
    server = build_mcp(services, resolver=CallerResolver(fixed=record.caller(), still_valid=still_valid))
    server.run()
    return 0
