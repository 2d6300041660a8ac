"""Stand-ins for the parts of the lab that are not notegate, each speaking the real wire protocol on loopback.

* :class:`ModelStandIn`: an OpenAI-compatible chat-completions server (``POST /v1/chat/completions``) that
  answers from a script: a function of the inbox items (path, version) the request quoted.
* :class:`MetadataHost`: an HTTPS server (a throwaway CA the lab names in the server's config) that serves a
  hosted client's Client ID Metadata Document, as claude.ai or ChatGPT would.
* :class:`RedirectCatcher`: the loopback redirect URI of the phone's OAuth client.

Lifted from the suite's stand-ins (tests/support/standins.py, tests/auth/test_cimd.py) to what the lab needs:
the package never imports tests.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import re
import ssl
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from notegate.network import LOCALHOST, LOOPBACK_V4

#: An item as the reviewer quotes it: the fence's source line "path@version".
ITEM_RE = re.compile(r"(inbox/[A-Za-z0-9._/-]+\.md)@([0-9a-f]{40})")

#: The script: the items a request quoted -> the model's JSON answer (any value json.dumps accepts).
Script = Callable[[list[tuple[str, str]]], Any]


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # a client that went away
        pass


class _Served:
    server: ThreadingHTTPServer

    def __enter__(self):
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True, name=type(self).__name__)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def port(self) -> int:
        return self.server.server_address[1]


class ModelStandIn(_Served):
    """OpenAI chat completions on 127.0.0.1 playing ``script``; every request's quoted items are recorded."""

    def __init__(self, script: Script, *, api_key: str) -> None:
        self.script = script
        self.requests: list[list[tuple[str, str]]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                if self.headers.get("Authorization") != f"Bearer {api_key}":
                    return self._send(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
                request = json.loads(body)
                text = "\n".join(str(m.get("content", "")) for m in request.get("messages", []))
                items = list(dict.fromkeys(ITEM_RE.findall(text)))
                stand_in.requests.append(items)
                content = json.dumps(stand_in.script(items))
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-lab-{len(stand_in.requests)}",
                        "object": "chat.completion",
                        "created": 1_800_000_000,
                        "model": request.get("model", "lab-model"),
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content, "refusal": None},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": len(content) // 4},
                    },
                )

            def _send(self, status: int, value: Any) -> None:
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = _Quiet((LOOPBACK_V4, 0), Handler)

    @property
    def base_url(self) -> str:
        return f"http://{LOOPBACK_V4}:{self.port}/v1"


def make_ca(directory: Path, host: str = LOCALHOST) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for ``host`` (and 127.0.0.1): (ca.pem, cert.pem, key.pem)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "notegate lab CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName(host), x509.IPAddress(ipaddress.ip_address(LOOPBACK_V4))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    directory.mkdir(parents=True, exist_ok=True)
    paths = (directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return paths


class MetadataHost(_Served):
    """HTTPS on 127.0.0.1 (certificate for localhost from a lab CA) serving JSON documents by path."""

    def __init__(self, directory: Path) -> None:
        self.ca, cert, key = make_ca(directory)
        self.documents: dict[str, bytes] = {}
        self.hits: list[str] = []
        documents, hits = self.documents, self.hits

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                hits.append(self.path)
                body = documents.get(self.path)
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body or b"")))
                self.end_headers()
                self.wfile.write(body or b"")

        self.server = _Quiet((LOOPBACK_V4, 0), Handler)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(cert, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)

    def url(self, path: str) -> str:
        return f"https://{LOCALHOST}:{self.port}{path}"

    def serve(self, path: str, document: dict) -> str:
        self.documents[path] = json.dumps(document).encode()
        return self.url(path)


class RedirectCatcher(_Served):
    """A client's loopback redirect URI: records every URL the browser is sent to."""

    def __init__(self) -> None:
        self.landed: list[str] = []
        landed = self.landed

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                if self.path.startswith("/callback"):  # not the browser's own /favicon.ico after it
                    landed.append(f"http://{LOOPBACK_V4}:{self.server.server_address[1]}{self.path}")
                body = b"You may close this window."
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = _Quiet((LOOPBACK_V4, 0), Handler)

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK_V4}:{self.port}/callback"
