"""Credential scanner: finds credentials and tokens in text and says where, never what.

Theory of operation
-------------------
Every write from a restricted or hosted caller, every string a model returns and every rendered
note about to be committed passes through :func:`scan_credentials`.  It must be fast (a regex
per rule, each starting with a literal so ``re`` skips ahead with a substring search) and it
must not be fooled by presentation tricks.  So the rules never read the caller's text directly:
they read the normalised views of :mod:`notegate.safety.textview` (NFKC-folded, invisible
characters removed, rendered, joined across line breaks), and run through the shared engine of
:mod:`notegate.safety.rules`.  ``g<ZWSP>hp_…`` and ``ｇｈｐ＿…`` both read as ``ghp_…``.  Each hit
is mapped back to a span of the original text.

A regex alone over-reports (``sk-learn-compatible-wrapper``, ``password: required``), so each
rule has a small check: word boundaries, "looks random" (letters *and* digits, enough length),
and an explicit placeholder list (``<token>``, ``${VAR}``, ``YOUR_API_KEY``, ``****``).
False positives matter: this runs on every inbox write.

Invariants
1. Pure: no I/O and no mutable global state.
2. A :class:`Finding` carries gate, kind and positions in the ORIGINAL text (plus 1-based
   line/column there), never the matched value.  Nothing in this module returns, formats or
   logs a matched value; :func:`describe` prints kind and position only.
3. :func:`scan_credentials` never raises for any ``str`` and its patterns are linear: every
   repetition is bounded or runs over a class disjoint from what follows it.
4. Deterministic: findings are de-duplicated and sorted by (start, end, gate, kind).
5. A value is waved through as a placeholder only when it matches an explicit placeholder
   form (:data:`PLACEHOLDER`: ``EXAMPLE``, ``xxxx``, ``<…>``, ``${…}`` …).  Provider-format
   tokens (``ghp_``, ``sk-ant-`` …) get no other leniency than that and "a random body has a
   digit and at least five distinct characters" — words a random body never spells.
6. Every rule starts with a literal (``re`` then skips ahead with a substring search) and,
   where the literal could recur inside one long word, rejects a mid-word start with a
   look-behind placed after the literal (:func:`_start`): scanning stays linear.

The rules follow the public formats documented by each provider and collected by gitleaks
(``config/gitleaks.toml``) and Yelp's detect-secrets plugins; they are re-implemented here as
plain regexes so the module stays pure, fast and free of detect-secrets' global settings.
"""

from __future__ import annotations

import base64
import binascii
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator

from notegate.safety.rules import (
    PLACEHOLDER,
    Check,
    Finding,
    Hit,
    Rule,
    is_word_char,
    left_ok,
    right_ok,
    run_rules,
)
from notegate.safety.textview import NormalisedText, joined, normalise, rendered

__all__ = [
    "GATE",
    "JOINABLE_KINDS",
    "RULES",
    "looks_secret",
    "scan_credentials",
    "scan_joined",
    "scan_view",
]

GATE = "credential"

# --------------------------------------------------------------------------------------------
# Credential value tests
# --------------------------------------------------------------------------------------------

_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*")
_DOTTED_REF = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+(?:\(\)?)?")
_LOWER_PATH = re.compile(r"[a-z0-9_.-]+(?:/[a-z0-9_.-]+)+/?")
_REF_PREFIXES = ("http://", "https://", "file:", "env:", "vault:", "op://", "arn:", "secret://", "ssm:", "sm://")


def looks_secret(value: str, *, min_len: int = 8) -> bool:
    """Whether an assigned value could be a real secret rather than a word, name or reference.

    Random secrets mix classes; words and identifiers do not.  So: long enough, not a
    placeholder/reference/path, and letters with digits (or symbols), or long mixed-case.
    """
    v = value.strip()
    if len(v) < min_len or PLACEHOLDER.search(v):
        return False
    if v[0] in "<{[$%(~/.@&*#`" or v.lower().startswith(_REF_PREFIXES):
        return False
    if _ENV_NAME.fullmatch(v) or _DOTTED_REF.fullmatch(v) or _LOWER_PATH.fullmatch(v):
        return False
    if v.lower() in ("true", "false", "null", "none", "required", "optional"):
        return False
    lower = any(c.islower() for c in v)
    upper = any(c.isupper() for c in v)
    digit = any(c.isdigit() for c in v)
    symbol = any(not c.isalnum() and c not in "-_." for c in v)
    letters = lower or upper
    if letters and digit:
        return True
    if letters and symbol and (lower and upper):
        return True
    return lower and upper and len(v) >= 16


def _has_digit_and_letter(s: str) -> bool:
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


# --------------------------------------------------------------------------------------------
# Rule checks
# --------------------------------------------------------------------------------------------


def _random_token(prefix_len: int, *, need_digit: bool = True) -> Check:
    """Provider token: bounded on both sides; the body is not a placeholder fill."""

    def check(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
        s = view.text
        if not left_ok(s, m.start()):
            return
        body = m.group()[prefix_len:]
        if need_digit and not _has_digit_and_letter(body):
            return
        if len(set(body)) < 5 or PLACEHOLDER.search(body):
            return  # a real random body never spells EXAMPLE or xxxx
        yield kind, m.start(), m.end()

    return check


def _openai(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    # "sk-" is also the tail of task-, disk-, desk- …: the left boundary matters most here.
    s = view.text
    if not left_ok(s, m.start()):
        return
    body = m.group().split("-", 1)[1]
    for scope in ("proj-", "svcacct-", "admin-"):
        body = body.removeprefix(scope)
    if _has_digit_and_letter(body) and len(set(body)) >= 8 and any(c.isupper() for c in body):
        yield kind, m.start(), m.end()


_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+=])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")


def _aws_key_id(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    body = m.group()[4:]
    if not (left_ok(s, m.start()) and right_ok(s, m.end())) or len(set(body)) < 5 or PLACEHOLDER.search(body):
        return  # AKIAIOSFODNN7EXAMPLE is AWS's documentation key
    yield kind, m.start(), m.end()
    # An access key id is usually pasted next to its secret: look a little further on.
    window_end = min(len(s), m.end() + 200)
    for sm in _AWS_SECRET.finditer(s, m.end(), window_end):
        value = sm.group()
        mixed = any(c.isupper() for c in value) and any(c.islower() for c in value)
        if _has_digit_and_letter(value) and mixed and not PLACEHOLDER.search(value):
            yield "aws-secret-key", sm.start(), sm.end()


_PEM_END = re.compile(r"-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----")


def _pem(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    # END lines are found once per view: a search per BEGIN would rescan 64 KiB for each of a
    # flood of BEGIN lines.
    ends = view._cache.get("pem-ends")
    if not isinstance(ends, list):
        ends = [e.end() for e in _PEM_END.finditer(view.text)]
        view._cache["pem-ends"] = ends
    i = bisect_right(ends, m.end())
    end = ends[i] if i < len(ends) and ends[i] <= m.end() + 65536 else m.end()
    yield kind, m.start(), end


def _bounded_left(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    if left_ok(view.text, m.start()):
        yield kind, m.start(), m.end()


def _url_password(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    password = m.group(2)
    if len(password) < 4 or PLACEHOLDER.search(password) or password[0] in "$%{<*":
        return
    if password.lower() in ("pass", "password", "passwd", "secret", "pwd", "token"):
        return
    if len(set(password)) < 3:
        return
    yield kind, m.start(1), m.end(2)


def _curl_user(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    if left_ok(view.text, m.start()) and looks_secret(m.group(2), min_len=6):
        yield kind, m.start(1), m.end(2)


def _header_value(min_len: int) -> Check:
    """Authorization-style value: read in the original case, must look random."""

    def check(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
        if not left_ok(view.text, m.start()):
            return
        value = view.text[m.start(1) : m.end(1)]
        if looks_secret(value, min_len=min_len):
            yield kind, m.start(), m.end()

    return check


def _basic_auth(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    # "Basic" is an ordinary word; only flag it when what follows decodes to "user:password".
    if not left_ok(view.text, m.start()):
        return
    value = view.text[m.start(1) : m.end(1)]
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return
    user, sep, password = decoded.partition(b":")
    if sep and user and len(password) >= 3 and decoded.isascii() and decoded.decode("ascii").isprintable():
        yield kind, m.start(), m.end()


_SECRET_NAME = re.compile(
    r"password|passwd|passphrase|secret|token|credential"
    r"|(?:api|access|private|signing|auth|master|encryption|license|client)[_.-]?key"
    r"|(?:^|[_.-])(?:pass|pwd|pw)$"
)
#: Names that merely mention a secret (its length, file, type, id ...) rather than hold one.
_NOT_SECRET_NAME = re.compile(
    r"tokeniz|tokens|(?:^|[_.-])(?:count|limit|type|url|uri|endpoint|file|path|name|ttl|expiry|expires|header"
    r"|field|param|prefix|length|size|budget|usage|format|policy|rotation|store|provider|manager|scope|kind"
    r"|hash|ref|id|env|var)(?:$|[_.-])"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_AWS_SECRET_VALUE = re.compile(r"[A-Za-z0-9/+]{40}")


def _assignment(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    low = view.lower
    start = m.start()
    # The keyword may be the tail of a longer name (db_password, GITHUB_TOKEN): walk back to its start.
    while start > 0 and start > m.start() - 40 and (is_word_char(low[start - 1]) or low[start - 1] in ".-"):
        start -= 1
    # Split camelCase before lower-casing so "secretName" reads as secret_name, not secretname.
    name = _CAMEL.sub("_", view.text[start : m.end("name")]).lower()
    if not _SECRET_NAME.search(name) or _NOT_SECRET_NAME.search(name):
        return
    vstart, vend = next((m.span(g) for g in ("dq", "sq", "bare") if m.start(g) >= 0), (m.end(), m.end()))
    value = view.text[vstart:vend]
    if not looks_secret(value):
        return
    if "secret" in name and ("aws" in name or "access" in name) and _AWS_SECRET_VALUE.fullmatch(value):
        kind = "aws-secret-key"
    yield kind, start, vend


def _block_assignment(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    """``password: |`` / ``password: >-`` / ``password:`` with the value indented on the next line.

    A nested mapping (``secrets:`` then ``  name: …``) or a list is structure, not a value.
    """
    value = view.text[m.start("bare") : m.end("bare")] if m.start("bare") >= 0 else ""
    if value.endswith(":") or value.startswith(("-", "#")):
        return
    yield from _assignment(view, m, kind)


_W = "A-Za-z0-9"


def _start(prefix: str) -> str:
    """A fixed-width literal prefix that may not continue a word.

    The look-behind sits *after* the literal so ``re`` keeps its fast literal-prefix search,
    and a prefix repeated inside one long word (``eyJeyJeyJ…``) is rejected at once instead of
    each occurrence re-scanning the rest of the word (which would be quadratic).
    """
    return f"{prefix}(?<![A-Za-z0-9_]{prefix})"


_VALUE = r"""(?:"(?P<dq>[^"\n]{1,512})"|'(?P<sq>[^'\n]{1,512})'|(?P<bare>[^\s"'`,;)\]}<>]{1,512}))"""

#: The credential rules.  Kinds are stable identifiers: callers and tests match on them.
RULES: tuple[Rule, ...] = (
    Rule(GATE, "anthropic-key", re.compile(rf"{_start('sk-ant-')}[{_W}_-]{{20,300}}"), _random_token(7)),
    Rule(
        GATE,
        "openai-key",
        re.compile(rf"{_start('sk-')}(?!ant-)(?:proj-|svcacct-|admin-)?[{_W}_-]{{20,300}}"),
        _openai,
    ),
    Rule(GATE, "aws-access-key-id", re.compile(rf"{_start('A(?:KIA|SIA|BIA|CCA)')}[A-Z0-9]{{16}}"), _aws_key_id),
    # notegate's own credentials: bearer tokens (ngt_<16 hex>_<43>), session handles (ngs_<43>) and elevation
    # grants (ngg_<43>: a model holds one for hours; written into a note it would outlive the conversation).
    Rule(GATE, "notegate-token", re.compile(rf"{_start('ngt_')}[0-9a-f]{{16}}_[{_W}_-]{{43}}"), _random_token(4)),
    Rule(
        GATE,
        "notegate-session-handle",
        re.compile(rf"{_start('ngs_')}[{_W}_-]{{43}}"),
        _random_token(4, need_digit=False),
    ),
    Rule(
        GATE,
        "notegate-grant",
        re.compile(rf"{_start('ngg_')}[{_W}_-]{{43}}"),
        _random_token(4, need_digit=False),
    ),
    Rule(GATE, "github-token", re.compile(rf"{_start('gh[pousr]_')}[{_W}]{{36,251}}"), _random_token(4)),
    Rule(GATE, "github-token", re.compile(rf"{_start('github_pat_')}[{_W}_]{{22,255}}"), _random_token(11)),
    *(
        Rule(GATE, "gitlab-token", re.compile(rf"{_start(prefix)}[{_W}_-]{{20,64}}"), _random_token(len(prefix)))
        for prefix in ("glpat-", "glptt-", "gldt-", "glrt-")
    ),
    Rule(GATE, "slack-token", re.compile(rf"{_start('xox[abposre]-')}[{_W}-]{{10,250}}"), _random_token(5)),
    Rule(
        GATE,
        "slack-webhook",
        re.compile(rf"hooks\.slack\.com/services/T[{_W}_]{{6,32}}/B[{_W}_]{{6,32}}/[{_W}_]{{16,64}}"),
    ),
    Rule(GATE, "stripe-key", re.compile(rf"{_start('sk_(?:live|test)_')}[{_W}]{{16,247}}"), _random_token(8)),
    Rule(GATE, "stripe-key", re.compile(rf"{_start('rk_(?:live|test)_')}[{_W}]{{16,247}}"), _random_token(8)),
    Rule(GATE, "google-api-key", re.compile(rf"{_start('AIza')}[{_W}_-]{{35}}"), _random_token(4, need_digit=False)),
    Rule(GATE, "private-key", re.compile(r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"), _pem),
    Rule(
        GATE,
        "jwt",
        re.compile(rf"eyJ(?<![{_W}_-]eyJ)[{_W}_-]{{10,8192}}\.eyJ[{_W}_-]{{10,8192}}\.[{_W}_-]{{0,8192}}"),
        _bounded_left,
    ),
    Rule(GATE, "npm-token", re.compile(rf"{_start('npm_')}[{_W}]{{36}}"), _random_token(4)),
    Rule(GATE, "pypi-token", re.compile(rf"{_start('pypi-AgE')}[{_W}_-]{{50,4096}}"), _bounded_left),
    Rule(GATE, "huggingface-token", re.compile(rf"{_start('hf_')}[{_W}]{{34,40}}"), _random_token(3, need_digit=False)),
    Rule(GATE, "sendgrid-key", re.compile(_start(r"SG\.") + rf"[{_W}_-]{{22}}\.[{_W}_-]{{43}}"), _bounded_left),
    Rule(
        GATE,
        "url-credentials",
        re.compile(r"://([^\s/?#@:'\"<>\[\]]{0,128}):([^\s/?#@'\"<>]{1,256})@[A-Za-z0-9\[]"),
        _url_password,
    ),
    Rule(GATE, "curl-credentials", re.compile(r"-u[ \t]+[\"']?([^\s:\"'@]{1,128}):([^\s\"'@]{1,256})"), _curl_user),
    Rule(
        GATE,
        "authorization-header",
        re.compile(
            r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|token|digest|sso-key)[ \t]+([a-z0-9._~+/=:-]{8,4096})"
        ),
        _header_value(8),
        lowered=True,
    ),
    Rule(GATE, "bearer-token", re.compile(r"bearer[ \t]+([a-z0-9._~+/-]{16,4096}=*)"), _header_value(16), lowered=True),
    Rule(GATE, "basic-auth", re.compile(r"basic[ \t]+([a-z0-9+/]{8,4096}={0,2})"), _basic_auth, lowered=True),
    *(
        Rule(
            GATE,
            "secret-assignment",
            re.compile(rf"(?P<name>{kw}[a-z0-9_.-]{{0,40}})[\"']?[ \t]*(?:=>|:=|==?|:)[ \t]*{_VALUE}"),
            _assignment,
            lowered=True,
        )
        for kw in ("pass", "pwd", "secret", "token", "key", "credential")
    ),
    *(
        Rule(
            GATE,
            "secret-assignment",
            re.compile(
                rf"(?P<name>{kw}[a-z0-9_.-]{{0,40}})[\"']?[ \t]*:[ \t]*"
                rf"(?:[|>][+-]?[0-9]?[+-]?[ \t]*)?\r?\n[ \t]+{_VALUE}"
            ),
            _block_assignment,
            lowered=True,
        )
        for kw in ("pass", "pwd", "secret", "token", "key", "credential")
    ),
    # An END line without its BEGIN line still closes a private key someone pasted.
    Rule(GATE, "private-key", _PEM_END),
)

#: Kinds whose prefix is distinctive enough to be looked for across line breaks (:func:`joined`).
JOINABLE_KINDS = frozenset(
    {
        "anthropic-key", "openai-key", "aws-access-key-id", "notegate-token", "notegate-session-handle",
        "github-token", "gitlab-token", "slack-token", "slack-webhook", "stripe-key", "google-api-key",
        "jwt", "npm-token", "pypi-token", "huggingface-token", "sendgrid-key",
    }
)  # fmt: skip
_JOINABLE_RULES = tuple(rule for rule in RULES if rule.kind in JOINABLE_KINDS)


# --------------------------------------------------------------------------------------------
# Encoded runs: base64 / hex, decoded once and scanned with the same rules
# --------------------------------------------------------------------------------------------

#: A run of base64 (standard or URL-safe) characters; hex is a subset.  Shorter runs are words.
_B64_PIECE = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
#: What may separate the lines of one encoded block: a break, indentation, quote markers.
_PIECE_GAP = re.compile(r"[ \t]*\r?\n[ \t>]*")
_B64_TAIL = re.compile(r"[ \t]*\r?\n[ \t>]*([A-Za-z0-9+/_-]{1,15}={0,2})(?=[ \t]*(?:\r?\n|\Z))")
_HEX = re.compile(r"(?:[0-9a-fA-F]{2})+")
#: Shortest encoded run worth decoding (a 16-byte secret is 24 base64 or 32 hex characters).
MIN_ENCODED = 24
_OPENSSH_MAGIC = b"openssh-key-v1\x00"


#: The ASCII projection of a view (:attr:`NormalisedText.lower`) with each character of a base64 piece as ``a``
#: and every other as a space; lower-casing keeps the class (it has both cases) and non-ASCII is never in it.
_PIECE_MASK = str.maketrans(
    {c: ("a" if c.isascii() and (c.isalnum() or c in "+/_-") else " ") for c in map(chr, range(128))}
)
_PIECE_RUN = "a" * 16


def _pieces(view: NormalisedText) -> Iterator[re.Match[str]]:
    """``_B64_PIECE.finditer(view.text)``, found with ``str.find`` on a mask instead of a regex at every position.

    Why: the piece pattern has no literal to skip ahead with, so ``re`` tried it at every character (a
    quarter of a write's credential scan).  The first run of 16 piece characters at or after ``pos`` starts a
    run (the character before it is not a piece character), which is exactly where the pattern's look-behind
    lets a match start; the pattern then matches there as ``finditer`` would, and the search resumes at its end.
    """
    text = view.text
    find = view.lower.translate(_PIECE_MASK).find
    pos = find(_PIECE_RUN)
    while pos >= 0:
        m = _B64_PIECE.match(text, pos)
        if m is None:  # not reachable (see above); kept so a mistake costs speed, never a missed piece
            pos = find(_PIECE_RUN, pos + 1)
            continue
        yield m
        pos = find(_PIECE_RUN, m.end())


def _encoded_blocks(view: NormalisedText) -> Iterator[tuple[int, int, str]]:
    """(start, end, compact run) for every encoded block: runs on consecutive lines are one block."""
    text = view.text
    start = end = -1
    parts: list[str] = []
    for m in _pieces(view):
        if parts and _PIECE_GAP.fullmatch(text, end, m.start()) and not parts[-1].endswith("="):
            parts.append(m.group())
            end = m.end()
            continue
        if parts:
            yield start, end, "".join(parts)
        start, end, parts = m.start(), m.end(), [m.group()]
    if parts:
        tail = _B64_TAIL.match(text, end)
        if tail is not None and not parts[-1].endswith("="):
            parts.append(tail.group(1))
            end = tail.end(1)
        yield start, end, "".join(parts)


def _der_private_key(data: bytes) -> bool:
    """DER that opens like a private key: SEQUENCE { INTEGER 0|1, … } (PKCS#1, PKCS#8, SEC 1).

    Certificates and public keys open with a nested SEQUENCE instead, so they pass.
    """
    if len(data) < 8 or data[0] != 0x30:
        return False
    width = 1 if data[1] < 0x80 else 1 + (data[1] & 0x7F)
    body = data[1 + width :]
    return body[:3] in (b"\x02\x01\x00", b"\x02\x01\x01") and len(body) > 3 and body[3] in (0x02, 0x04, 0x30)


def _decodings(run: str) -> Iterator[tuple[str, bytes]]:
    """("hex" | "base64", bytes) for each way the run decodes."""
    if _HEX.fullmatch(run) and len(run) >= 32:
        yield "hex", bytes.fromhex(run)
    body = run.rstrip("=")
    alphabet = b"-_" if ("-" in body or "_" in body) else None
    if alphabet is not None and ("+" in body or "/" in body):
        return
    if len(body) % 4 == 1:
        body = body[:-1]  # a stray character at the end of a wrapped block
    try:
        yield "base64", base64.b64decode(body + "=" * (-len(body) % 4), altchars=alphabet, validate=True)
    except (binascii.Error, ValueError):
        return


def _printable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return text if text.replace("\n", "").replace("\r", "").replace("\t", "").isprintable() else None


def _encoded_findings(view: NormalisedText) -> list[Finding]:
    """Credentials inside base64/hex runs: decoded once (never recursively) and scanned with :data:`RULES`.

    Private keys are also recognised by their DER or OpenSSH header, so a PEM body pasted
    without its BEGIN line is still found.  All decoded texts are scanned as one string, so a
    flood of short runs costs one scan, not one per run.  Findings span the encoded run.
    """
    found: list[Finding] = []
    spans: list[tuple[int, int, str]] = []
    decoded: list[str] = []
    offsets: list[int] = []
    size = 0
    for start, end, run in _encoded_blocks(view):
        if len(run) < MIN_ENCODED:
            continue
        for label, data in _decodings(run):
            if _der_private_key(data) or data.startswith(_OPENSSH_MAGIC):
                found.append(_finding(view, "private-key", start, end))
                continue
            plain = _printable(data)
            if plain is not None and len(plain) >= 16:
                offsets.append(size)
                spans.append((start, end, label))
                decoded.append(plain)
                size += len(plain) + 1
    if decoded:
        for inner in run_rules(normalise("\n".join(decoded)), RULES):
            start, end, label = spans[bisect_right(offsets, inner.start) - 1]
            found.append(_finding(view, f"{label}:{inner.kind}", start, end))
    return found


def _finding(view: NormalisedText, kind: str, start: int, end: int) -> Finding:
    first, last = view.span(start, end)
    line, col = view.line_col(first)
    return Finding(GATE, kind, first, last, line, col)


def _drop_nested(findings: Iterable[Finding]) -> list[Finding]:
    """Unique findings, sorted; one lying inside another of the same gate and kind is dropped.

    The views overlap (rendered, joined), and a PEM END line lies inside its BEGIN…END block.
    """
    out: list[Finding] = []
    reach: dict[tuple[str, str], int] = {}
    for f in sorted(set(findings), key=lambda f: (f.start, -f.end, f.gate, f.kind)):
        key = (f.gate, f.kind)
        if reach.get(key, -1) >= f.end:
            continue
        reach[key] = f.end
        out.append(f)
    return sorted(out, key=lambda f: (f.start, f.end, f.gate, f.kind))


def _read(view: NormalisedText, rules: tuple[Rule, ...]) -> tuple[list[Finding], NormalisedText]:
    """``rules`` over the view as sent and as rendered, and the provider formats over the rendered view joined
    across line breaks. Returns the findings and the rendered view (the decoded runs are read from it)."""
    found = run_rules(view, rules)
    shown = rendered(view)
    if shown is not view:
        found.extend(run_rules(shown, rules))
    whole = joined(shown)
    if whole is not shown:
        found.extend(run_rules(whole, _JOINABLE_RULES))
    return found, shown


def scan_view(view: NormalisedText) -> list[Finding]:
    """Credential findings for an already normalised view (the content gates share one view).

    Four readings of the same text: as sent (normalised), as rendered (escapes, entities and
    comments resolved), joined across line breaks (provider formats only), and decoded runs.
    """
    found, shown = _read(view, RULES)
    found.extend(_encoded_findings(shown))
    return _drop_nested(found)


def scan_joined(parts: Iterable[str]) -> list[tuple[int, Finding]]:
    """Provider-format tokens split across several strings (fields of one model answer).

    The strings are read back to back with nothing between them, the way a renderer may put
    them; each hit is returned with the index of the string it starts in.  Positions in the
    finding are in the concatenation.
    """
    texts = list(parts)
    starts: list[int] = []
    size = 0
    for part in texts:
        starts.append(size)
        size += len(part)
    view = normalise("".join(texts))
    hits, _ = _read(view, _JOINABLE_RULES)
    return [(bisect_right(starts, f.start) - 1, f) for f in _drop_nested(hits)]


def scan_credentials(text: str) -> list[Finding]:
    """Find credentials and tokens in ``text``.

    Returns findings with positions in ``text`` itself (not the folded view), sorted by
    position.  Never raises for a ``str``; never returns the secret.
    """
    if not isinstance(text, str):
        raise TypeError("scan_credentials takes str")
    return scan_view(normalise(text))
