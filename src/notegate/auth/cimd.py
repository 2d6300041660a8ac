"""Client ID Metadata Documents: a ``client_id`` that is an https URL names a JSON document about the client.

Theory of operation
-------------------
The document is fetched by the server, on demand, from a URL the *client* chose: that is a request forgery
waiting to happen (a URL pointing at the cloud metadata service, the router, a port on loopback), so the
fetch is deliberately narrow:

* https only, on a URL with a host, no user info, no fragment and a path that is not the root;
* **resolve once, check, connect to that address**: the name is resolved, every address it resolves to
  must be global (not private, loopback, link-local, multicast or reserved) unless the host is named in
  ``[server] cimd_private_hosts``, and the TCP connection goes to the checked address itself, the TLS
  handshake verifying the certificate for the host name.  A resolver that answers differently the second
  time has no second time to answer (no DNS-rebinding window);
* at most :data:`TIMEOUT_SECONDS` for the whole exchange (resolving, connecting, TLS and reading under one
  deadline) and :data:`MAX_DOCUMENT_BYTES` of body; redirects
  are never followed (a 3xx is a refusal); an HTTP/1.0 request, so the answer is never chunked;
* the body is strict JSON whose ``client_id`` equals the URL, with at least one redirect URI; the client is
  public (``token_endpoint_auth_method`` absent or ``none``);
* cached for what the response's ``Cache-Control`` allows and never more than :data:`MAX_CACHE_SECONDS`.

:func:`parse_response` is pure (bytes in, a document or one :class:`CimdRefused` out) and property-tested;
:class:`CimdFetcher` does the (blocking) I/O; :mod:`notegate.auth.cimd_pool` runs it for the server in a
small pool of its own, cached and coalesced per URL, so a stranger's fetch never holds a shared worker.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from notegate.errors import NotegateError

TIMEOUT_SECONDS = 5.0
MAX_DOCUMENT_BYTES = 10 * 1024
MAX_HEAD_BYTES = 8 * 1024
MAX_CACHE_SECONDS = 24 * 3600
CACHE_ENTRIES = 256
MAX_NAME_CHARS = 100
MAX_REDIRECT_URIS = 10

Resolver = Callable[[str, int], Iterable[str]]


class CimdRefused(NotegateError):
    """A client metadata document that cannot be used (the rule says which check refused it)."""

    rule = "cimd-invalid"


@dataclass(frozen=True)
class ClientDocument:
    client_id: str
    client_name: str
    redirect_uris: tuple[str, ...]


@dataclass(frozen=True)
class Target:
    host: str
    port: int
    path: str  # path and query, as sent in the request line


def parse_url(url: str) -> Target:
    """The parts of a client metadata URL, or :class:`CimdRefused`."""
    try:
        parts = urlsplit(url)
        port = parts.port or 443
    except ValueError:
        raise CimdRefused("the client_id is not a valid URL") from None
    if parts.scheme != "https":
        raise CimdRefused("a client metadata URL must be https")
    if not parts.hostname or "@" in parts.netloc or parts.fragment:
        raise CimdRefused("a client metadata URL needs a host and no user info or fragment")
    if parts.path in ("", "/"):
        raise CimdRefused("a client metadata URL needs a path (the root is not a document)")
    if not url.isascii() or any(c.isspace() or ord(c) < 0x20 for c in url):
        raise CimdRefused("a client metadata URL must be plain ASCII without spaces")
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    return Target(host=parts.hostname, port=port, path=path)


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def cache_seconds(cache_control: str | None) -> float:
    """How long a document may be reused: what Cache-Control allows, at most 24 hours."""
    if cache_control is None:
        return MAX_CACHE_SECONDS
    seconds: float = MAX_CACHE_SECONDS
    for directive in cache_control.lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name in ("no-store", "no-cache", "private"):
            return 0
        if name in ("max-age", "s-maxage"):
            value = value.strip().strip('"')
            seconds = min(seconds, int(value)) if _digits(value) and len(value) < 12 else 0
    return max(0.0, min(seconds, MAX_CACHE_SECONDS))


def _document(body: bytes, url: str) -> ClientDocument:
    try:
        data = json.loads(body.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise CimdRefused("the client metadata document is not JSON") from None
    if not isinstance(data, dict):
        raise CimdRefused("the client metadata document is not a JSON object")
    if data.get("client_id") != url:
        raise CimdRefused("the document's client_id is not the URL it was fetched from")
    uris = data.get("redirect_uris")
    if not isinstance(uris, list) or not uris or len(uris) > MAX_REDIRECT_URIS:
        raise CimdRefused(f"the document must list 1 to {MAX_REDIRECT_URIS} redirect_uris")
    if not all(isinstance(u, str) and 0 < len(u) <= 2000 and u.isascii() and u.isprintable() for u in uris):
        raise CimdRefused("every redirect URI must be a printable ASCII string")
    method = data.get("token_endpoint_auth_method", "none")
    if method != "none":
        raise CimdRefused("a client known by its metadata document is public: token_endpoint_auth_method 'none'")
    name = data.get("client_name", "")
    if not isinstance(name, str):
        raise CimdRefused("client_name must be a string")
    name = "".join(c for c in name if c.isprintable())[:MAX_NAME_CHARS].strip()
    return ClientDocument(client_id=url, client_name=name or urlsplit(url).hostname or url, redirect_uris=tuple(uris))


def _no_constant(name: str) -> object:
    raise ValueError(name)  # NaN, Infinity: not JSON


def parse_response(raw: bytes, url: str) -> tuple[ClientDocument, float]:
    """An HTTP/1.x response (head and body, as read off the socket) → the document and how long to cache it.

    Pure, and total: any input gives a document or raises :class:`CimdRefused`, nothing else."""
    head, sep, body = raw.partition(b"\r\n\r\n")
    if not sep or len(head) > MAX_HEAD_BYTES:
        raise CimdRefused("the answer is not an HTTP response", rule="cimd-unreachable")
    lines = head.decode("latin-1").split("\r\n")
    status = lines[0].split(" ", 2)
    if len(status) < 2 or not status[0].startswith("HTTP/1.") or not _digits(status[1]) or len(status[1]) != 3:
        raise CimdRefused("the answer is not an HTTP response", rule="cimd-unreachable")
    code = int(status[1])
    if 300 <= code < 400:
        raise CimdRefused("the document URL redirects; redirects are not followed", rule="cimd-unreachable")
    if code != 200:
        raise CimdRefused(f"the document URL answered HTTP {code}", rule="cimd-unreachable")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            raise CimdRefused("the answer has a malformed header", rule="cimd-unreachable")
        headers[name.strip().lower()] = value.strip()
    if "transfer-encoding" in headers:
        raise CimdRefused("the answer is chunked; the document must be sent whole", rule="cimd-unreachable")
    if len(body) > MAX_DOCUMENT_BYTES:
        raise CimdRefused(f"the document is over {MAX_DOCUMENT_BYTES} bytes", rule="cimd-unreachable")
    length = headers.get("content-length")
    if length is not None and (not _digits(length) or int(length) != len(body)):
        raise CimdRefused("the document arrived incomplete", rule="cimd-unreachable")
    kind = headers.get("content-type", "").split(";")[0].strip().lower()
    if kind and kind != "application/json" and not kind.endswith("+json"):
        raise CimdRefused("the document is not served as application/json")
    return _document(body, url), cache_seconds(headers.get("cache-control"))


def system_resolver(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def is_public(address: str) -> bool:
    """A globally routable unicast address (IPv4-mapped IPv6 judged as the IPv4 it maps)."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


class CimdFetcher:
    """Fetches, validates and caches client metadata documents (blocking: call it from a worker thread)."""

    def __init__(
        self,
        *,
        ca_file: str | None = None,
        private_hosts: Iterable[str] = (),
        resolver: Resolver = system_resolver,
        clock: Callable[[], float] = time.time,
        timeout: float = TIMEOUT_SECONDS,
    ) -> None:
        self.context = ssl.create_default_context(cafile=ca_file or None)
        self.private_hosts = frozenset(h.lower() for h in private_hosts)
        self.resolver = resolver
        self.clock = clock
        self.timeout = timeout
        self._cache: OrderedDict[str, tuple[ClientDocument, float]] = OrderedDict()

    def fetch(self, url: str) -> ClientDocument:
        now = self.clock()
        cached = self._cache.get(url)
        if cached is not None and cached[1] > now:
            return cached[0]
        self._cache.pop(url, None)
        document, ttl = self.fetch_fresh(url)
        if ttl > 0:
            self._cache[url] = (document, now + ttl)
            while len(self._cache) > CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return document

    def fetch_fresh(self, url: str) -> tuple[ClientDocument, float]:
        """The document and how long it may be cached, fetched now (no cache): resolving, connecting, the TLS
        handshake and reading all count against one deadline of ``timeout`` seconds."""
        deadline = time.monotonic() + self.timeout
        target = parse_url(url)
        address = self._address(target)
        return parse_response(self._get(target, address, deadline), url)

    def _address(self, target: Target) -> str:
        """Resolve once; every address must be public unless the host is allowed; connect to the first."""
        try:
            addresses = list(self.resolver(target.host, target.port))
        except (OSError, UnicodeError):
            raise CimdRefused(f"the host {target.host} does not resolve", rule="cimd-unreachable") from None
        if not addresses:
            raise CimdRefused(f"the host {target.host} does not resolve", rule="cimd-unreachable")
        if target.host.lower() not in self.private_hosts and not all(is_public(a) for a in addresses):
            raise CimdRefused(
                f"the host {target.host} resolves to a private, loopback or link-local address",
                rule="cimd-private-address",
            )
        return addresses[0]

    def _get(self, target: Target, address: str, deadline: float) -> bytes:
        request = (
            f"GET {target.path} HTTP/1.0\r\nHost: {target.host}\r\nAccept: application/json\r\n"
            "User-Agent: notegate-cimd\r\nConnection: close\r\n\r\n"
        ).encode("ascii")
        limit = MAX_HEAD_BYTES + MAX_DOCUMENT_BYTES + 4
        chunks: list[bytes] = []
        size = 0
        try:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            with socket.create_connection((address, target.port), timeout=left) as raw:
                raw.settimeout(max(0.001, deadline - time.monotonic()))  # the TLS handshake: what is left
                with self.context.wrap_socket(raw, server_hostname=target.host) as tls:
                    tls.sendall(request)
                    while size <= limit:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            raise TimeoutError
                        tls.settimeout(left)
                        chunk = tls.recv(65536)
                        if not chunk:
                            break
                        chunks.append(chunk)
                        size += len(chunk)
        except TimeoutError:
            raise CimdRefused(
                f"the document did not arrive within {self.timeout:g} s", rule="cimd-unreachable"
            ) from None
        except (OSError, ssl.SSLError) as exc:
            raise CimdRefused(
                f"the document could not be fetched ({type(exc).__name__})", rule="cimd-unreachable"
            ) from None
        raw_answer = b"".join(chunks)
        if size > limit:
            raise CimdRefused(f"the document is over {MAX_DOCUMENT_BYTES} bytes", rule="cimd-unreachable")
        return raw_answer
