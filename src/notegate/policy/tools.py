"""The tools gateway's decisions (issue 32): is this pin immutable, are these mount fields typed values that
can never become a command line, and may this caller see and call this mounted tool.

Pure: no I/O. The tools process and the knowledge service's proxy both ask here, so the two cannot disagree
about what a caller may reach; the proxy hides what is denied here and the tools process refuses it again.
"""

from __future__ import annotations

import re

from notegate.network import LOOPBACK_URL_HOSTS
from notegate.policy.decision import Decision, allow, deny
from notegate.policy.vocab import Tier

#: Upstream packages a catalog entry may name, by kind. ``remote``: an MCP server elsewhere, reached over
#: Streamable HTTP at one fixed URL and authorized with an OAuth grant per mount (nothing installed here).
#: ``container``: an image by digest, run with the host's container engine (policy/container.py).
CATALOG_KINDS = ("pypi", "npm", "remote", "container")
#: What network a container entry may ask for (its ``program`` field; '' is none): none, or the engine's
#: default bridge. Never the host's network, never another container's.
CONTAINER_NETWORKS = ("none", "bridge")

# An exact PEP 440 release (no operator, no wildcard, no local label): 1.2.3, 2026.10.19, 1.0rc1, 1.0.post2.
_PYPI_VERSION = re.compile(r"[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?")
# PEP 508 names (case-insensitive), at most 100 characters.
_PYPI_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]{0,98}[A-Za-z0-9])?")
# An image's repository as a reference names it (the OCI distribution grammar): an optional registry host
# (a name or an address, optional port) then lowercase path components. No tag (no ':' after the host), no
# digest here (the digest is its own field), at most 255 characters (checked apart).
_IMAGE = re.compile(
    r"([A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?(:[0-9]{1,5})?/)?"
    r"[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*"
)
# An exact semver (https://semver.org, item 2, 9 and 10): no range, no tag (latest, next, a branch's name).
_NPM_VERSION = re.compile(r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]{1,64})?")
# npm's package names: lowercase, an optional @scope/, URL-safe characters, at most 214 characters.
_NPM_NAME = re.compile(r"(@[a-z0-9][a-z0-9._-]{0,100}/)?[a-z0-9][a-z0-9._-]{0,100}")
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
# scheme, host (a name, an IPv4 address or a bracketed IPv6 one), optional port, then a path of URL-safe
# characters: no userinfo (no @), no query, no fragment, no spaces; at most 500 characters in all.
_REMOTE_URL = re.compile(
    r"(https|http)://([A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?(/[A-Za-z0-9._~/%-]{0,400})?"
)
# npm's integrity field (Subresource Integrity): sha512 of the tarball, standard base64 with padding.
_SRI_SHA512 = re.compile(r"sha512-[A-Za-z0-9+/]{86}==")
# The program the package itself installs (a console script, an npm "bin" name), run without a shell.
_PROGRAM = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
#: Names of catalog entries and mounts: lowercase, no ``_`` (the namespace separator), at most 32.
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")
#: An upstream account's label (an e-mail address, a user name): printable, no spaces or quotes.
_ACCOUNT = re.compile(r"[A-Za-z0-9@._+-]{1,128}")
_VARIABLE = re.compile(r"[A-Z][A-Z0-9_]{0,63}")
#: Variables a credential may never fill: each makes a value the loader or the interpreter acts on
#: (a library to preload, options a runtime parses, a search path), so a credential there could run code.
_RESERVED_VARIABLE_PREFIXES = ("LD_", "DYLD_", "PYTHON", "NODE_", "NPM_", "BASH_", "GIT_")
_RESERVED_VARIABLES = frozenset(
    {"PATH", "HOME", "IFS", "ENV", "SHELL", "PERL5OPT", "PERL5LIB", "RUBYOPT", "JAVA_TOOL_OPTIONS", "TMPDIR"}
)
#: What a tool's upstream name may be (the MCP specification's tool-name characters, 2025-11-25).
_TOOL = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: Between a mount's name and its tool's name in the one connector's list: mount names never hold it.
SEPARATOR = "__"


def decide_remote_url(url: str) -> Decision:
    """A remote MCP server's URL: https (any host), or http on this host's loopback only (the same host's
    own servers); no user or password in it, no query or fragment (the URL is the OAuth resource)."""
    parts = _REMOTE_URL.fullmatch(url)
    if parts is None:
        return deny(
            "tools-pin-invalid", "a remote entry's URL is https://HOST[:PORT]/PATH (no user, query or fragment)"
        )
    scheme, host = parts.group(1), parts.group(2).lower()
    if scheme == "http" and host not in LOOPBACK_URL_HOSTS:
        return deny("tools-pin-invalid", "a remote entry's URL is https, or http on this host's loopback only")
    return allow("tools-pin")


def decide_pin(kind: str, package: str, version: str, digest: str, program: str) -> Decision:
    """A catalog entry's pin: an exact version of a named package with the digest of its artifact. A range,
    a tag naming a branch or a missing or malformed digest is refused: the pin must name one artifact. A
    ``remote`` entry names its server's URL as ``package`` and nothing else (no artifact: nothing runs here)."""
    if kind not in CATALOG_KINDS:
        return deny("tools-pin-invalid", f"the catalog kind '{kind}' is not one of {', '.join(CATALOG_KINDS)}")
    if kind == "remote":
        if version or digest or program:
            return deny("tools-pin-invalid", "a remote entry names its URL only (no version, digest or program)")
        return decide_remote_url(package)
    if kind == "container":
        return _decide_container_pin(package, version, digest, program)
    if not _PROGRAM.fullmatch(program):
        return deny("tools-pin-invalid", "the program must be the name of a program the package installs")
    if kind == "pypi":
        if not _PYPI_NAME.fullmatch(package):
            return deny("tools-pin-invalid", "the PyPI package name is not a package name")
        if not _PYPI_VERSION.fullmatch(version):
            return deny("tools-pin-invalid", "the version is not one exact release (no range, no wildcard)")
        if not _SHA256.fullmatch(digest):
            return deny("tools-pin-invalid", "a PyPI pin needs its wheel's digest as sha256:<64 hex digits>")
        return allow("tools-pin")
    if not _NPM_NAME.fullmatch(package):
        return deny("tools-pin-invalid", "the npm package name is not a package name")
    if not _NPM_VERSION.fullmatch(version):
        return deny("tools-pin-invalid", "the version is not one exact semver version (no range, no tag)")
    if not _SRI_SHA512.fullmatch(digest):
        return deny("tools-pin-invalid", "an npm pin needs its tarball's integrity as sha512-<base64>")
    return allow("tools-pin")


def _decide_container_pin(image: str, version: str, digest: str, network: str) -> Decision:
    """A container entry: the image's repository, no tag, its manifest digest, and the network it needs in
    ``program`` ('' or none, or bridge). A tag names whatever was pushed last, so it is refused as a range is."""
    if version:
        return deny("tools-pin-invalid", "a container is pinned by its digest alone (no tag, no version)")
    if len(image) > 255 or not _IMAGE.fullmatch(image):
        return deny("tools-pin-invalid", "the image is registry/name, without a tag (:latest) or a digest")
    if not _SHA256.fullmatch(digest):
        return deny("tools-pin-invalid", "a container pin needs the image's digest as sha256:<64 hex digits>")
    if network and network not in CONTAINER_NETWORKS:
        return deny("tools-pin-invalid", f"a container's network is one of {', '.join(CONTAINER_NETWORKS)}")
    return allow("tools-pin")


def decide_mount(
    name: str, catalog: str, account: str, environment: str, variables: tuple[str, ...], write_tools: tuple[str, ...]
) -> Decision:
    """A mount's fields: names, an account label, variable names and tool names, each from a closed
    alphabet; none can carry a space, a quote or a shell metacharacter, and none reaches a command line."""
    if not _NAME.fullmatch(name) or not _NAME.fullmatch(catalog):
        return deny("tools-mount-invalid", "mount and catalog names are lowercase letters, digits and -")
    if not _ACCOUNT.fullmatch(account):
        return deny("tools-mount-invalid", "the account is a plain label (letters, digits, @ . _ + -)")
    if not _NAME.fullmatch(environment):
        return deny("tools-mount-invalid", "the environment is not an environment's name")
    for variable in variables:
        if not _VARIABLE.fullmatch(variable):
            return deny("tools-mount-invalid", "a variable's name is uppercase letters, digits and _")
        if variable in _RESERVED_VARIABLES or variable.startswith(_RESERVED_VARIABLE_PREFIXES):
            return deny("tools-mount-invalid", f"the variable {variable} changes how programs load or run")
    for tool in write_tools:
        if not _TOOL.fullmatch(tool):
            return deny("tools-mount-invalid", "a write tool's name is not a tool name")
    return allow("tools-mount")


def namespaced(mount: str, tool: str) -> str:
    """The name a mounted tool has in the one connector's list."""
    return f"{mount}{SEPARATOR}{tool}"


def split_namespaced(name: str) -> tuple[str, str] | None:
    """(mount, tool) of a namespaced name, or None: a name without the separator is not a mounted tool."""
    mount, sep, tool = name.partition(SEPARATOR)
    if not sep or not _NAME.fullmatch(mount) or not _TOOL.fullmatch(tool):
        return None
    return mount, tool


def decide_mount_tool(
    *,
    caller_environment: str,
    tier: str,
    mount_environment: str,
    tool: str,
    write_tools: tuple[str, ...],
    approved: bool,
    calling: bool,
) -> Decision:
    """May a caller see (``calling`` False) or call a mounted tool?

    Out of the caller's environment, or a listing the owner has not approved: hidden and, when called by
    name, refused as an unknown tool (``tools-hidden``: the door answers exactly as for a name it never had).
    A tool the mount declares as writing is listed to a restricted caller but refused when called without
    the trust a grant gives (as a note write is)."""
    if caller_environment != mount_environment:
        return deny("tools-hidden", "not in the caller's environment")
    if not approved:
        return deny("tools-hidden", "its listing waits for the owner's approval")
    if tier == Tier.TRUSTED:
        return allow("tools-call")
    if tier == Tier.RESTRICTED:
        if calling and tool in write_tools:
            return deny("tools-write-restricted", f"the mount declares '{tool}' as a tool that writes")
        return allow("tools-call")
    return deny("tools-hidden", "machines call contracts, not tools")
