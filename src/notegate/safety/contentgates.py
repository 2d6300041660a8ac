"""Content gates beyond credentials: auth links, meeting links, contact data, money, instructions.

Theory of operation
-------------------
Everything a model returns, and every note rendered for a commit, is scanned by six gates:

============  ================================================================================
gate          what it refuses
============  ================================================================================
credential    tokens, keys, passwords (``secrets.py``)
auth-link     URLs carrying an auth code, token, key or signature in a query/fragment parameter
meeting-link  joinable meeting URLs (Zoom, Meet, Teams, Webex, Jitsi, GoTo, FaceTime)
contact       e-mail addresses and phone numbers
financial     IBANs that pass the ISO 13616 mod-97 check; card numbers that pass Luhn and an IIN
instruction   phrasing aimed at the next agent ("ignore previous instructions", "system prompt" …)
============  ================================================================================

All gates read the same normalised view as the credential scanner (NFKC per character,
default-ignorables removed), so fullwidth and zero-width-split variants are caught.  The
instruction gate additionally reads a *skeleton* of that view: Cyrillic, Greek, Armenian and
Latin look-alike letters mapped to the Latin letter they imitate (a small table drawn from
Unicode TR39 ``confusables.txt``), then lower-cased.  The mapping is one character to one
character, so skeleton positions are view positions and findings still point into the original.

Numbers are where false positives live (this gate runs on every inbox write), so the contact
and financial rules demand structure, not just digits: a phone number needs a ``+`` country
code, a North-American grouping with consistent separators, a trunk ``0`` grouping, or a
"phone:"-style label; a card needs 13–19 digits in card grouping, a known IIN and a valid Luhn
digit; an IBAN needs its country's exact length and a valid mod-97.  Dates, times, versions,
hashes, UUIDs and issue numbers fail those structures by construction, and every numeric rule
refuses to start or end inside a longer token (``[A-Za-z0-9_]`` on either side).

Invariants
1. Pure: no I/O, no mutable global state.
2. Findings carry gate, kind and original positions; never the matched value.
3. ``scan_content`` never raises for a ``str`` and an iterable of known gate names; an unknown
   gate name is a programming error (``ValueError``), not a silent pass.
4. Deterministic: one sorted, de-duplicated list for any input.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Iterator

from notegate.safety import secrets
from notegate.safety.secrets import (
    PLACEHOLDER,
    Finding,
    Hit,
    NormalisedText,
    Rule,
    is_word_char,
    left_ok,
    normalise,
    right_ok,
    run_rules,
)

CREDENTIAL = "credential"
AUTH_LINK = "auth-link"
MEETING_LINK = "meeting-link"
CONTACT = "contact"
FINANCIAL = "financial"
INSTRUCTION = "instruction"

#: Every gate, in the order findings are reported when they tie on position.
ALL_GATES: tuple[str, ...] = (CREDENTIAL, AUTH_LINK, MEETING_LINK, CONTACT, FINANCIAL, INSTRUCTION)


# --------------------------------------------------------------------------------------------
# auth-link
# --------------------------------------------------------------------------------------------

_AUTH_PARAMS: dict[str, tuple[str, ...]] = {
    "auth-code-in-url": ("code", "auth_code", "authorization_code"),
    "token-in-url": (
        "token",
        "access_token",
        "id_token",
        "refresh_token",
        "auth_token",
        "authtoken",
        "oauth_token",
        "oauth_verifier",
        "jwt",
        "session",
        "sessionid",
        "session_id",
        "sid",
        "ticket",
        "login_token",
        "reset_token",
        "magic_token",
        "otp",
    ),
    "key-in-url": ("key", "api_key", "apikey", "api-key", "access_key", "client_secret", "secret"),
    "signed-url": (
        "sig",
        "signature",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
    ),
    "password-in-url": ("password", "passwd", "pwd", "pass"),
}
_PARAM_KIND = {name: kind for kind, names in _AUTH_PARAMS.items() for name in names}
_PARAM_ALT = "|".join(sorted((re.escape(n) for n in _PARAM_KIND), key=lambda n: (-len(n), n)))


def _auth_param(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    value = view.text[m.start("v") : m.end("v")]
    if len(value) < 6 or value[0] in "{$<:%" or PLACEHOLDER.search(value):
        return
    digit = any(c.isdigit() for c in value)
    alpha = any(c.isalpha() for c in value)
    if (digit and alpha) or len(value) >= 16:
        yield _PARAM_KIND[m.group("p")], m.start("p"), m.end("v")


# --------------------------------------------------------------------------------------------
# meeting-link
# --------------------------------------------------------------------------------------------


def _host_start(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    if left_ok(view.text, m.start()):
        yield kind, m.start(), m.end()


# --------------------------------------------------------------------------------------------
# contact
# --------------------------------------------------------------------------------------------

_LOCAL_TAIL = re.compile(r"[A-Za-z0-9._%+-]{1,64}\Z")
_RESERVED_DOMAINS = ("example.com", "example.org", "example.net")
_RESERVED_SUFFIXES = (".example", ".test", ".invalid", ".localhost", ".local", ".internal", ".lan", ".home.arpa")
_NOREPLY_LOCALS = frozenset({"noreply", "no-reply", "donotreply", "do-not-reply"})
#: Last labels that are file extensions, not TLDs people mail (``logo@2x.png``, ``a@b.md``).
_FILE_TLDS = frozenset(
    {"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "md", "py", "js", "ts", "tsx", "jsx", "css", "html"}
    | {"json", "yaml", "yml", "txt", "pdf", "zip", "gz", "lock", "toml", "rs", "go"}
)


def _email(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    at = m.start()
    local_match = _LOCAL_TAIL.search(s, max(0, at - 64), at)
    if local_match is None:
        return
    start = local_match.start()
    while start < at and s[start] == ".":
        start += 1
    if start == at or not left_ok(s, start):
        return
    local = s[start:at]
    domain = m.group(1).lower()
    labels = domain.split(".")
    tld = labels[-1]
    if not (tld.isalpha() and 2 <= len(tld) <= 24) or any(not lab or lab[0] == "-" or lab[-1] == "-" for lab in labels):
        return
    if tld in _FILE_TLDS or domain in _RESERVED_DOMAINS or domain.endswith(_RESERVED_SUFFIXES):
        return
    if domain.endswith(tuple("." + d for d in _RESERVED_DOMAINS)):
        return
    if local.lower() in _NOREPLY_LOCALS or domain.endswith("noreply.github.com"):
        return
    end = m.end()
    if end + 1 < len(s) and s[end] == ":" and not s[end + 1].isspace():
        return  # scp-style git remote: git@host:org/repo.git
    floor = max(0, start - 512)
    token_start = max(s.rfind(" ", floor, start), s.rfind("\n", floor, start), s.rfind("\t", floor, start)) + 1
    token = s[max(token_start, floor) : start]
    scheme = token.rfind("://")
    if scheme >= 0 and "/" not in token[scheme + 3 :]:
        return  # URL user-info (ssh://git@host/…); passwords there are the credential gate's job
    yield kind, start, end


def _digits(s: str) -> str:
    return "".join(c for c in s if c.isdigit())


def _num_left_ok(s: str, i: int) -> bool:
    """A number may not continue a token, a version, a date or a path on its left."""
    if i == 0:
        return True
    c = s[i - 1]
    if is_word_char(c) or c in "+/#":
        return False
    return not (c in ".-:" and i >= 2 and s[i - 2].isdigit())


def _num_right_ok(s: str, i: int) -> bool:
    if i >= len(s):
        return True
    c = s[i]
    if is_word_char(c):
        return False
    return not (c in ".-:/" and i + 1 < len(s) and s[i + 1].isdigit())


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DOUBLE_SEPARATOR = re.compile(r"[ .-]{2,}|[.-][ ]|[ ][.-]")
_LABELLED_NUMBER = r"\+?[0-9][0-9 ().-]{5,20}[0-9]"


def _phone_intl(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    text = m.group()
    if not (_num_left_ok(s, m.start()) and _num_right_ok(s, m.end())):
        return
    if _DOUBLE_SEPARATOR.search(text) or text.count("(") != text.count(")"):
        return
    if 8 <= len(_digits(text)) <= 15:
        yield kind, m.start(), m.end()


def _phone_nanp(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    if _num_left_ok(s, m.start()) and _num_right_ok(s, m.end()):
        yield kind, m.start(), m.end()


def _phone_trunk(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    if not (_num_left_ok(s, m.start()) and _num_right_ok(s, m.end())):
        return
    groups = re.split(r"[ /-]", m.group())
    if len({c for c in m.group() if not c.isdigit()}) > 1 and "/" not in m.group():
        return  # mixed separators: a list of numbers, not one number
    if all(g.startswith("0") for g in groups):
        return  # 0755 0644 0600, zero-padded ids
    if 9 <= len(_digits(m.group())) <= 12:
        yield kind, m.start(), m.end()


def _phone_labelled(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    number = s[m.start("n") : m.end("n")]
    if not left_ok(s, m.start()) or not _num_right_ok(s, m.end("n")):
        return
    if _ISO_DATE.fullmatch(number) or not 7 <= len(_digits(number)) <= 15:
        return
    yield kind, m.start("n"), m.end("n")


# --------------------------------------------------------------------------------------------
# financial
# --------------------------------------------------------------------------------------------

#: IBAN length per country, from the SWIFT IBAN Registry (ISO 13616).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
    "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
    "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
    "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27,
    "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25,
    "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18,
    "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33,
    "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip


def iban_valid(compact: str) -> bool:
    """ISO 13616 / ISO 7064 mod 97-10: move the first four characters to the end, letters to 10..35."""
    if len(compact) != IBAN_LENGTHS.get(compact[:2], -1) or not compact.isalnum() or not compact.isascii():
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in rearranged)) % 97 == 1


def _iban(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    if not left_ok(s, m.start()):
        return
    length = IBAN_LENGTHS.get(m.group()[:2])
    if length is None:
        return
    # The pattern may run on into following capitals ("… 00 IBAN"): take exactly the country's
    # length of characters and require the IBAN to end there.
    count = 0
    i = m.start()
    end = m.end()
    while i < end and count < length:
        if s[i] != " ":
            count += 1
        i += 1
    if count != length or not right_ok(s, i):
        return
    if iban_valid(s[m.start() : i].replace(" ", "")):
        yield kind, m.start(), i


def luhn_valid(digits: str) -> bool:
    """The Luhn (mod 10) check digit used by every payment card."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


#: (first digits range, allowed lengths) per scheme; the ranges are the schemes' published IIN
#: ranges (ISO/IEC 7812 issuer identification numbers).  1 (airlines) and 7–9 are left out:
#: that is where most timestamps and order numbers live.
_CARD_SCHEMES: tuple[tuple[int, int, int, frozenset[int]], ...] = (
    # (prefix length, low, high, lengths)
    (1, 4, 4, frozenset({13, 16, 19})),  # Visa
    (2, 51, 55, frozenset({16})),  # Mastercard
    (4, 2221, 2720, frozenset({16})),  # Mastercard 2-series
    (4, 2200, 2204, frozenset({16, 17, 18, 19})),  # Mir
    (2, 34, 34, frozenset({15})),  # American Express
    (2, 37, 37, frozenset({15})),  # American Express
    (3, 300, 305, frozenset({14, 15, 16, 17, 18, 19})),  # Diners Club
    (2, 36, 36, frozenset({14, 15, 16, 17, 18, 19})),  # Diners Club
    (2, 38, 39, frozenset({16, 17, 18, 19})),  # Diners Club
    (4, 3528, 3589, frozenset({16, 17, 18, 19})),  # JCB
    (4, 6011, 6011, frozenset({16, 17, 18, 19})),  # Discover
    (3, 644, 649, frozenset({16, 17, 18, 19})),  # Discover
    (2, 65, 65, frozenset({16, 17, 18, 19})),  # Discover
    (2, 62, 62, frozenset({16, 17, 18, 19})),  # UnionPay
    (2, 50, 50, frozenset({13, 14, 15, 16, 17, 18, 19})),  # Maestro
    (2, 56, 69, frozenset({13, 14, 15, 16, 17, 18, 19})),  # Maestro and others
)


def card_prefix_known(digits: str) -> bool:
    """Whether a digit string has a known scheme's IIN prefix *and* that scheme's length."""
    return any(
        len(digits) in lengths and low <= int(digits[:width]) <= high for width, low, high, lengths in _CARD_SCHEMES
    )


def _card(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    s = view.text
    if not (_num_left_ok(s, m.start()) and _num_right_ok(s, m.end())):
        return
    digits = _digits(m.group())
    if 13 <= len(digits) <= 19 and card_prefix_known(digits) and luhn_valid(digits):
        yield kind, m.start(), m.end()


# --------------------------------------------------------------------------------------------
# instruction
# --------------------------------------------------------------------------------------------

#: Look-alike letters → the Latin letter they imitate.  Source: Unicode TR39 ``confusables.txt``
#: (prototype column), restricted to single letters whose prototype is a Latin letter.  NFKC
#: already folds fullwidth, mathematical, circled and superscript forms before this runs.
CONFUSABLES: dict[str, str] = {
    # Cyrillic small
    "\u0430": "a", "\u0435": "e", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0443": "y",
    "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0458": "j", "\u04bb": "h", "\u04cf": "l",
    "\u0501": "d", "\u051b": "q", "\u051d": "w",
    # Cyrillic capital
    "\u0410": "A", "\u0412": "B", "\u0415": "E", "\u041a": "K", "\u041c": "M", "\u041d": "H",
    "\u041e": "O", "\u0420": "P", "\u0421": "C", "\u0422": "T", "\u0423": "Y", "\u0425": "X",
    "\u0405": "S", "\u0406": "I", "\u0408": "J", "\u04c0": "l", "\u04ba": "H", "\u051a": "Q",
    "\u051c": "W",
    # Greek small
    "\u03b1": "a", "\u03b3": "y", "\u03b9": "i", "\u03bd": "v", "\u03bf": "o", "\u03c1": "p",
    "\u03c3": "o", "\u03c5": "u",
    # Greek capital
    "\u0391": "A", "\u0392": "B", "\u0395": "E", "\u0396": "Z", "\u0397": "H", "\u0399": "I",
    "\u039a": "K", "\u039c": "M", "\u039d": "N", "\u039f": "O", "\u03a1": "P", "\u03a4": "T",
    "\u03a5": "Y", "\u03a7": "X",
    # Armenian small
    "\u0585": "o", "\u057d": "u", "\u0578": "n", "\u0570": "h",
    # Latin look-alikes outside ASCII
    "\u0131": "i", "\u0237": "j", "\u0251": "a", "\u0261": "g", "\u01c0": "l", "\u0269": "i",
}  # fmt: skip
#: Separators NFKC leaves alone but a phrase may be spread over (Zl, Zp, NEL, Ogham space).
_SEPARATORS = frozenset("\u0085\u1680\u2028\u2029")
#: Quotation marks folded for "you’re" (TR39 maps U+2018/U+2019/U+02BC to U+0027).
_APOSTROPHES = frozenset("\u2018\u2019\u02bc")
_NON_ASCII_RUN = re.compile(r"[^\x00-\x7f]+")


@functools.lru_cache(maxsize=4096)
def _skeleton_char(ch: str) -> str:
    """One character's skeleton: confusable → Latin, separator → space, accented Latin → base letter."""
    if ch in CONFUSABLES:
        return CONFUSABLES[ch]
    if ch in _SEPARATORS:
        return " "
    if ch in _APOSTROPHES:
        return "'"
    decomposed = unicodedata.normalize("NFD", ch)
    base = decomposed[0]
    if len(decomposed) > 1 and base.isascii() and all(unicodedata.combining(c) for c in decomposed[1:]):
        return base
    return ch


def skeleton(view: NormalisedText) -> NormalisedText:
    """The view with look-alike letters replaced by Latin ones (same length, same positions).

    Only the distinct non-ASCII characters present are looked at, so ASCII-heavy text is cheap.
    """
    if view.text.isascii():
        return view
    table = {}
    for ch in set("".join(_NON_ASCII_RUN.findall(view.text))):
        folded = _skeleton_char(ch)
        if folded != ch:
            table[ord(ch)] = folded
    if not table:
        return view
    # Translating run by run: str.translate over a whole wide string costs ~40 ns a character.
    return view.remapped(_NON_ASCII_RUN.sub(lambda run: run.group().translate(table), view.text))


_VERB = r"(?:ignore|disregard|forget|override|bypass)"
_FILL = r"(?:(?:all|any|of|the|your|my|these|those|every|previous|prior|above|earlier)\s+){0,4}"
_QUAL = (
    r"(?:previous|prior|above|earlier|preceding|foregoing|system|original|initial|existing|former"
    r"|developer|safety|current)"
)
_NOUN = (
    r"(?:instructions?|prompts?|directives?|guidelines|guidance|rules|guardrails|programming|orders|commands|context)"
)


def _word_bounded(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    if left_ok(view.text, m.start()) and right_ok(view.text, m.end()):
        yield kind, m.start(), m.end()


_DAN_BEFORE = re.compile(r"(?:you\s+are|you're|act\s+as|acting\s+as|pretend\s+to\s+be|become|enable|activate|as)\s+$")
_DAN_AFTER = re.compile(r"\s*(?:mode|prompt|jailbreak|persona|,?\s*(?:which\s+stands\s+for\s+)?\"?do\s+anything)")


def _dan(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    # "DAN" ("Do Anything Now") only counts in capitals, as a word, in a jailbreak construction
    # ("you are DAN", "enable DAN mode"): "Dan" is a name and DAN an acronym for other things.
    s = view.text
    if not (left_ok(s, m.start()) and right_ok(s, m.end())):
        return
    low = view.lower
    if _DAN_BEFORE.search(low, max(0, m.start() - 24), m.start()) or _DAN_AFTER.match(low, m.end(), m.end() + 40):
        yield kind, m.start(), m.end()


# --------------------------------------------------------------------------------------------
# Rule tables
# --------------------------------------------------------------------------------------------

_RULES: dict[str, tuple[Rule, ...]] = {
    AUTH_LINK: (
        Rule(
            AUTH_LINK,
            "token-in-url",
            re.compile(rf"[?&#;](?P<p>{_PARAM_ALT})=(?P<v>[^&#\s\"'<>()\[\]\\]{{1,4096}})"),
            _auth_param,
            lowered=True,
        ),
    ),
    MEETING_LINK: (
        Rule(MEETING_LINK, "zoom", re.compile(r"zoom(?:gov)?\.(?:us|com)/(?:j|w|s|my|wc(?:/join)?)/[a-z0-9._-]{3,}"),
             _host_start, lowered=True),
        Rule(MEETING_LINK, "google-meet",
             re.compile(r"meet\.google\.com/(?:[a-z]{3}-[a-z]{4}-[a-z]{3}|lookup/[a-z0-9_-]+|_meet/[a-z0-9_-]+)"),
             _host_start, lowered=True),
        Rule(MEETING_LINK, "teams", re.compile(r"teams\.(?:microsoft|live)\.com/(?:_#/)?(?:l/meetup-join|meet)/"),
             _host_start, lowered=True),
        Rule(MEETING_LINK, "webex",
             re.compile(r"webex\.com/(?:meet/|join/|wbxmjs/|[a-z0-9._-]+/[je]\.php|webappng/sites/[a-z0-9._-]+/meeting)"),
             _host_start, lowered=True),
        Rule(MEETING_LINK, "jitsi", re.compile(r"meet\.jit\.si/[a-z0-9_-]{3,}"), _host_start, lowered=True),
        Rule(MEETING_LINK, "gotomeeting", re.compile(r"gotomeet\.me/[a-z0-9_-]{3,}"), _host_start, lowered=True),
        Rule(MEETING_LINK, "gotomeeting", re.compile(r"gotomeeting\.com/join/[a-z0-9_-]{3,}"), lowered=True),
        Rule(MEETING_LINK, "facetime", re.compile(r"facetime\.apple\.com/join"), _host_start, lowered=True),
    ),
    CONTACT: (
        Rule(CONTACT, "email", re.compile(r"@([A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8})"), _email),
        Rule(CONTACT, "phone", re.compile(r"\+[1-9][0-9 ().-]{6,22}[0-9]"), _phone_intl),
        Rule(CONTACT, "phone",
             re.compile(r"(?:\([2-9][0-9]{2}\)[ ]?|[2-9][0-9]{2}([-.]))[0-9]{3}(?(1)\1|[-. ])[0-9]{4}"),
             _phone_nanp),
        Rule(CONTACT, "phone", re.compile(r"0[1-9][0-9]{0,3}(?:[ /-][0-9]{2,8}){1,4}"), _phone_trunk),
        *(
            Rule(CONTACT, "phone",
                 re.compile(rf"{label}[ \t]*(?:no\.?|number|#)?[ \t]*[:=]?[ \t]*(?P<n>{_LABELLED_NUMBER})"),
                 _phone_labelled, lowered=True)
            for label in ("telephone", "phone", "mobile", "cell", "fax", "whatsapp", "tel")
        ),
    ),
    FINANCIAL: (
        Rule(FINANCIAL, "iban", re.compile(r"[A-Z]{2}[0-9]{2}(?:[ ]?[A-Z0-9]){11,32}"), _iban),
        Rule(FINANCIAL, "payment-card",
             re.compile(r"[0-9](?:[0-9]{12,18}|[0-9]{3}([ -])[0-9]{4}\1[0-9]{4}(?:\1[0-9]{1,4}){1,2}"
                        r"|[0-9]{3}([ -])[0-9]{6}\2[0-9]{4,5})"),
             _card),
    ),
    INSTRUCTION: (
        Rule(INSTRUCTION, "ignore-instructions",
             re.compile(rf"{_VERB}\s+(?:{_FILL}{_QUAL}\s+(?:[a-z-]{{1,20}}\s+)?{_NOUN}"
                        r"|(?:all|everything|anything)\s+(?:(?:of|that|you|were|was|have|been|the|i)\s+){0,4}"
                        r"(?:above|before|previously|prior|earlier|told|said)"
                        r"|(?:all\s+)?your\s+(?:instructions|rules|guidelines|programming|guardrails))\b"),
             _word_bounded, lowered=True),
        Rule(INSTRUCTION, "system-prompt", re.compile(r"system\s+prompts?"), _word_bounded, lowered=True),
        Rule(INSTRUCTION, "developer-message", re.compile(r"developer\s+messages?"), _word_bounded, lowered=True),
        Rule(INSTRUCTION, "role-reassignment",
             re.compile(r"you(?:\s+are|'re)\s+now\s+(?:a|an|my|no\s+longer|free|unrestricted|unfiltered"
                        r"|uncensored|dan|jailbroken|acting|operating|called|named|in\s+(?:[a-z-]+\s+)?mode)\b"),
             _word_bounded, lowered=True),
        Rule(INSTRUCTION, "jailbreak", re.compile(r"jailbr(?<![a-z0-9_]jailbr)(?:eak|oken)[a-z]{0,8}"), _word_bounded,
             lowered=True),
        Rule(INSTRUCTION, "dan", re.compile(r"do\s+anything\s+now"), _word_bounded, lowered=True),
        Rule(INSTRUCTION, "dan", re.compile(r"DAN"), _dan),
        Rule(INSTRUCTION, "role-marker",
             re.compile(r"<(?:\|(?:im_start|im_end|system|start_header_id)\||<sys>)>"), lowered=True),
        Rule(INSTRUCTION, "role-marker", re.compile(r"\[/?inst\]"), lowered=True),
        # Text addressed to the agents that will read it later (a memory is read by the *next* session).
        Rule(INSTRUCTION, "addressed-to-agent",
             re.compile(r"(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:claude|codex|gemini|copilot|cursor"
                        r"|chatgpt|gpt|the\s+(?:ai|agent|assistant|model|llm)|(?:ai|llm)\s+(?:agents?|assistants?)"
                        r"|(?:any|all|future|next)\s+(?:agents?|assistants?|sessions?|models?))\b"),
             _word_bounded, lowered=True),
        Rule(INSTRUCTION, "addressed-to-agent",
             re.compile(r"(?:ai|llm)\s+(?:agents?|assistants?|models?)\s+(?:reading|who\s+reads?|that\s+reads?)\s+"
                        r"this"),
             _word_bounded, lowered=True),
        Rule(INSTRUCTION, "addressed-to-agent",
             re.compile(r"(?:future|next|subsequent|later|all)\s+(?:ai\s+)?(?:sessions?|agents?|assistants?|models?)"
                        r"\s+(?:should|must|need\s+to|have\s+to|are\s+to|shall)\s+(?:always\s+|never\s+|first\s+)?"
                        r"(?:ignore|skip|disable|bypass|trust|obey|approve|disregard|override)\b"),
             _word_bounded, lowered=True),
    ),
}  # fmt: skip


def _check_gates(gates: Iterable[str]) -> tuple[str, ...]:
    wanted = (gates,) if isinstance(gates, str) else tuple(gates)
    unknown = [g for g in wanted if g not in ALL_GATES]
    if unknown:
        raise ValueError(f"unknown content gate(s): {', '.join(sorted(map(str, unknown)))}")
    return wanted


def scan_view(view: NormalisedText, gates: Iterable[str] = ALL_GATES) -> list[Finding]:
    """Run the chosen gates over one normalised view; sorted by position, then gate order."""
    wanted = _check_gates(gates)
    found: list[Finding] = []
    if CREDENTIAL in wanted:
        found.extend(secrets.scan_view(view))
    for gate in (AUTH_LINK, MEETING_LINK, CONTACT, FINANCIAL):
        if gate in wanted:
            found.extend(run_rules(view, _RULES[gate]))
    if INSTRUCTION in wanted:
        found.extend(run_rules(skeleton(view), _RULES[INSTRUCTION]))
    order = {g: i for i, g in enumerate(ALL_GATES)}
    return sorted(set(found), key=lambda f: (f.start, f.end, order[f.gate], f.kind))


def scan_content(text: str, gates: Iterable[str] = ALL_GATES) -> list[Finding]:
    """Scan ``text`` with the named gates (all six by default).  Positions are in ``text``."""
    if not isinstance(text, str):
        raise TypeError("scan_content takes str")
    return scan_view(normalise(text), gates)
