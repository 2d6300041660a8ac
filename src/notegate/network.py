"""Where the server listens by default, and which names mean "this machine": one source for every module.

Why one module: the default address and port, and the spellings of loopback, were written out in the config
table, the HTTP door, the web sessions, the device keys, the passkeys, the OAuth redirect defaults, restore,
the lab and the client setup.  A host added to one list and not another is a door that trusts a name the
other refuses.  Pure constants (no I/O), at the bottom of the layers: the policy file, the config table and
the doors all import from here.
"""

from __future__ import annotations

#: The IPv4 and IPv6 loopback addresses: what a peer connecting from this machine comes from.
LOOPBACK_V4 = "127.0.0.1"
LOOPBACK_V6 = "::1"
#: The name a loopback server calls itself (never an IP: WebAuthn refuses IP addresses as relying parties).
LOCALHOST = "localhost"

#: The address ``notegate serve`` listens on unless ``[server] host`` says otherwise (its row's default).
DEFAULT_HOST = LOOPBACK_V4
#: The TCP port ``notegate serve`` listens on unless ``[server] port`` or ``--port`` says otherwise.
DEFAULT_PORT = 8765

#: Peer addresses of a connection from this machine.
LOOPBACK_PEERS = frozenset({LOOPBACK_V4, LOOPBACK_V6})
#: Host names (as a listen address or a URL's host, without brackets) that mean this machine only.
LOOPBACK_HOSTS = frozenset({LOOPBACK_V4, LOCALHOST, LOOPBACK_V6})
#: The same, as they appear in a URL's authority (IPv6 in brackets), in a fixed order for messages.
LOOPBACK_URL_HOSTS = (LOOPBACK_V4, LOCALHOST, f"[{LOOPBACK_V6}]")
#: Addresses that listen on every interface (compared only: never a default).
WILDCARD_HOSTS = frozenset({"0.0.0.0", "::"})  # noqa: S104 - comparison only


def local_url(port: int) -> str:
    """The URL a loopback server on ``port`` names itself by (``localhost``, never an IP: see LOCALHOST)."""
    return f"http://{LOCALHOST}:{port}"


#: The URL a client on this machine reaches a default server by.
DEFAULT_LOCAL_URL = local_url(DEFAULT_PORT)
