"""`notegate tools`: the tools gateway (issue 32). ``serve`` runs the tools process (loopback only); the other
actions manage its rows: the seal key, the catalog's pins, mounts, credentials (write-only: read from stdin,
never printed, never read back), tool-list approvals, and the per-call audit."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from notegate.cli.common import _config_arg, _fail, _load, _sub
from notegate.network import LOOPBACK_V4


def add_tools(subs) -> None:
    p = _sub(subs, "tools", "the tools gateway: pinned upstream MCP servers behind the one connector")
    t = p.add_subparsers(dest="tools_command", required=True, metavar="ACTION")
    s = t.add_parser("serve", help="run the tools process on 127.0.0.1 (its key from --key-file or systemd)")
    _config_arg(s)
    s.add_argument(
        "--key-file", default=None, help="the seal identity (default: $CREDENTIALS_DIRECTORY/notegate-tools-key)"
    )
    s.add_argument("--port", type=int, default=None, help="default: [tools] port")
    s.add_argument(
        "--mint-key",
        action="append",
        default=[],
        help="the id of a knowledge service's mint key to trust (`notegate tools mint-key` prints it; "
        "write --mint-key=ID: an id may begin with -; repeat)",
    )
    s.add_argument(
        "--mint-key-file",
        default=None,
        help="a file of mint key ids, one a line (default: $CREDENTIALS_DIRECTORY/notegate-tools-mint)",
    )
    mk = t.add_parser("mint-key", help="print the id of the knowledge service's mint key (made if missing)")
    _config_arg(mk)
    k = t.add_parser(
        "keygen", help="make the seal key: the identity goes to --output (mode 600), the recipient to the database"
    )
    _config_arg(k)
    k.add_argument("--output", required=True, help="where to write the identity (the tools process's key file)")
    c = t.add_parser("catalog", help="add a pinned upstream (or list the catalog without --name)")
    _config_arg(c)
    c.add_argument("--name", help="the entry's name, e.g. time")
    c.add_argument("--kind", choices=("pypi", "npm", "remote", "container"))
    c.add_argument(
        "--package",
        help="e.g. mcp-server-time or @modelcontextprotocol/server-everything; for --kind remote, the server's URL;"
        " for --kind container, the image as registry/name (no tag)",
    )
    c.add_argument("--version", help="one exact version (no range, no tag)")
    c.add_argument(
        "--digest",
        help="sha256:<wheel digest> (pypi), the npm integrity sha512-<base64>, or the image's sha256:<digest>",
    )
    c.add_argument(
        "--program", help="the program the package installs, e.g. mcp-server-time; for a container, its network"
    )
    m = t.add_parser("mount", help="mount a catalog entry for one upstream account in one environment (or list)")
    _config_arg(m)
    m.add_argument("--name", help="the mount's name: its tools are listed as NAME__tool")
    m.add_argument("--catalog", help="the catalog entry")
    m.add_argument("--account", help="the upstream account (a label: e-mail, user name)")
    m.add_argument("--environment", help="the environment whose callers see it")
    m.add_argument("--variable", action="append", default=[], help="a variable a credential fills (repeat)")
    m.add_argument("--write-tool", action="append", default=[], help="a tool that writes (repeat)")
    cr = t.add_parser("credential", help="store a mount's credential, read from stdin and sealed (never shown)")
    _config_arg(cr)
    cr.add_argument("mount")
    cr.add_argument("variable")
    a = t.add_parser("approve", help="approve a mount's pending tool listings (or list them with --pending)")
    _config_arg(a)
    a.add_argument("mount", nargs="?")
    a.add_argument("--tool", default=None)
    a.add_argument("--pending", action="store_true", help="list what waits for approval")
    a.add_argument("--by", default="owner")
    o = t.add_parser(
        "oauth",
        help="start a remote mount's upstream OAuth grant: prints the URL to open in a browser signed in to the "
        "console as the environment's owner (e.g. notegate tools oauth notes)",
    )
    _config_arg(o)
    o.add_argument("mount")
    au = t.add_parser("calls", help="the per-call audit of upstream calls")
    _config_arg(au)
    au.add_argument("--mount", default=None)
    au.add_argument("--json", action="store_true")


def _key_file(args: argparse.Namespace) -> Path | None:
    if args.key_file:
        return Path(args.key_file)
    folder = os.environ.get("CREDENTIALS_DIRECTORY")  # systemd LoadCredential
    return Path(folder) / "notegate-tools-key" if folder else None


def cmd_tools(args: argparse.Namespace) -> int:
    from notegate.errors import NotegateError
    from notegate.state import StateDB

    config = _load(args)
    state = StateDB.for_config(config)
    now = time.time()
    action = args.tools_command
    if action == "serve":
        return _serve(args, config, state)
    if action == "mint-key":
        from notegate.tools.tokens import Minter

        print(Minter(state, config.state_dir).kid)  # the public key's thumbprint: no secret
        return 0
    if action == "keygen":
        from notegate.tools.sealing import SEAL_PURPOSE, keygen, write_key_file

        identity, recipient = keygen()
        try:
            write_key_file(Path(args.output), identity)
        except FileExistsError:
            return _fail(f"notegate tools keygen: {args.output} exists; keep it or remove it first", 2)
        state.set_tools_key(SEAL_PURPOSE, recipient, now)
        print(recipient)
        return 0
    if action == "catalog":
        if not args.name:
            for row in state.catalog_entries():
                print(f"{row['name']}\t{row['kind']}\t{row['package']}\t{row['version']}\t{row['digest']}")
            return 0
        from notegate.policy.tools import decide_pin

        decision = decide_pin(
            args.kind or "", args.package or "", args.version or "", args.digest or "", args.program or ""
        )
        if not decision.allowed:
            raise NotegateError(decision.reason, rule=decision.rule)
        state.add_catalog_entry(
            {
                "name": args.name,
                "kind": args.kind,
                "package": args.package,
                "version": args.version or "",
                "digest": args.digest or "",
                "program": args.program or "",
                "created_at": now,
            }
        )
        return 0
    if action == "mount":
        if not args.name:
            for mount in state.mounts():
                print(f"{mount['name']}\t{mount['catalog']}\t{mount['account']}\t{mount['environment']}")
            return 0
        from notegate.tools.admin import ToolsAdmin

        ToolsAdmin(state).create_mount(
            name=args.name,
            catalog=args.catalog or "",
            account=args.account or "",
            environment=args.environment or "",
            variables=tuple(args.variable),
            write_tools=tuple(args.write_tool),
            now=now,
        )
        return 0
    if action == "oauth":
        return _oauth(args, config, state)
    if action == "credential":
        from notegate.tools.sealing import CredentialSealer

        value = sys.stdin.read().rstrip("\n")
        CredentialSealer(state).store(args.mount, args.variable, value, now)
        print(f"sealed {args.variable} for mount {args.mount} (it cannot be shown again)")
        return 0
    if action == "approve":
        if args.pending or not args.mount:
            for row in state.pending_tools(args.mount):
                print(f"{row['mount']}\t{row['tool']}\t{row['digest'][:16]}")
            return 0
        print(state.approve_tools(args.mount, args.by, now, tool=args.tool))
        return 0
    rows = state.tool_calls(args.mount)
    if args.json:
        print(json.dumps([dict(r) for r in rows], indent=2))
    else:
        for r in rows:
            print(f"{r['at']:.0f}\t{r['login']}\t{r['connector']}\t{r['mount']}\t{r['tool']}\t{r['outcome']}")
    return 0


def _oauth(args: argparse.Namespace, config, state) -> int:
    """Ask the tools process for the authorization URL of a new grant (it does the OAuth; this prints the URL)."""
    import anyio

    from notegate.errors import NotegateError
    from notegate.network import local_url
    from notegate.tools.health import ToolsHealth
    from notegate.tools.oauth_names import CALLBACK_PATH, CLIENT_DOCUMENT_PATH
    from notegate.tools.tokens import Minter

    mount = next((m for m in state.mounts() if m["name"] == args.mount), None)
    if mount is None:
        raise NotegateError(f"there is no mount named '{args.mount}'", rule="tools-unknown")
    minter = Minter.existing(state, config.state_dir)
    if not config.tools.url or minter is None:
        raise NotegateError(
            "no tools gateway here, or this user cannot read the server's key", rule="tools-unavailable"
        )
    base = config.public_url.rstrip("/") if config.public_url else local_url(config.port)
    document = f"{base}{CLIENT_DOCUMENT_PATH}" if base.startswith("https://") else None
    client = ToolsHealth(config.tools.url, minter)
    url = anyio.run(
        client.oauth_start, str(mount["environment"]), args.mount, "cli", f"{base}{CALLBACK_PATH}", document
    )
    print(url)
    print("Open it in a browser signed in to the console as the owner; it waits 10 minutes.", file=sys.stderr)
    return 0


def _mint_keys(args: argparse.Namespace) -> list[str]:
    """The mint key ids this tools process trusts: --mint-key, then the file (or systemd credential)."""
    keys = list(args.mint_key)
    from notegate.tools.tokens import MINT_PIN_CREDENTIAL

    folder = os.environ.get("CREDENTIALS_DIRECTORY")
    path = Path(args.mint_key_file) if args.mint_key_file else None
    if path is None and folder and (Path(folder) / MINT_PIN_CREDENTIAL).is_file():
        path = Path(folder) / MINT_PIN_CREDENTIAL
    if path is not None:
        keys += [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return keys


def _serve(args: argparse.Namespace, config, state) -> int:
    import uvicorn

    from notegate.tools.app import Gateway, create_tools_app
    from notegate.tools.sealing import read_key_file

    key_file = _key_file(args)
    if key_file is None:
        from notegate.errors import NotegateError

        raise NotegateError("the tools process was given no key file", rule="tools-key-file")
    gateway = Gateway(state, read_key_file(key_file), config.tools, mint_keys=_mint_keys(args))
    gateway.load()  # a pin that does not hold stops the start here, before anything listens
    if not gateway.verifier.pinned:  # trusting every key the database records trusts whoever writes it
        from notegate.errors import NotegateError

        raise NotegateError("the tools process was given no mint key id to trust", rule="tools-mint-unpinned")
    port = args.port or config.tools.port
    print(
        f"notegate tools: serving {len(gateway.upstreams)} mount(s) on http://127.0.0.1:{port}",
        file=sys.stderr,
        flush=True,
    )
    uvicorn.run(
        create_tools_app(gateway), host=LOOPBACK_V4, port=port, log_level="warning", log_config=None, access_log=False
    )
    return 0
