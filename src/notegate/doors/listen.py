"""The listening socket, bound before anything says "serving": a busy port is a refusal with a hint, not a
traceback from deep inside uvicorn after the connect line was already printed."""

from __future__ import annotations

import contextlib
import socket

from notegate.errors import NotegateError


def bind_listener(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket for ``host:port`` (what uvicorn would bind: SO_REUSEADDR, so a restart
    does not wait out TIME_WAIT), or ``[port-in-use]`` naming the address."""
    try:
        family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise NotegateError(
            f"cannot listen on {host}:{port}: the host does not resolve ({exc.strerror}).",
            rule="config-invalid",
            remedy="Pass --host with an address of this machine, such as 127.0.0.1.",
        ) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(2048)
    except OSError as exc:
        with contextlib.suppress(OSError):
            sock.close()
        shown = f"[{host}]" if ":" in host else host
        raise NotegateError(
            f"cannot listen on {shown}:{port}: {exc.strerror or 'address already in use'}.", rule="port-in-use"
        ) from None
    sock.set_inheritable(True)
    return sock
