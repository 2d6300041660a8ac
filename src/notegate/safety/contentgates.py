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
instruction gate additionally reads an *instruction view* of it (:func:`instruction_view`):
Cyrillic, Greek, Armenian and Latin look-alike letters mapped to the Latin letter they imitate (a small table drawn from
Unicode TR39 ``confusables.txt``), then lower-cased.  The mapping is one character to one
character, so its positions are view positions and findings still point into the original.

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
from collections.abc import Iterable, Iterator

from notegate.safety import secrets
from notegate.safety.names import fold_name
from notegate.safety.rules import PLACEHOLDER, Check, Finding, Hit, Rule, is_word_char, left_ok, right_ok, run_rules
from notegate.safety.textview import NormalisedText, derive, normalise, rendered
from notegate.safety.unicode_tables import READER_CONFUSABLES

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

#: Quotation marks folded for "you’re" (TR39 maps U+2018/U+2019/U+02BC to U+0027).
_APOSTROPHES = frozenset("\u2018\u2019\u02bc")


@functools.lru_cache(maxsize=8192)
def _instruction_char(ch: str) -> str:
    """One character as the instruction gate reads it: the floor's name fold, with ``m`` kept as ``m``.

    The floor folds ``m`` to ``rn`` (a name must match however it is drawn); here that would
    make every ``m`` two characters, so the pair is kept as ``m`` and the patterns are folded
    the same way (:func:`_fold_pattern`).  Whitespace stays whitespace (non-ASCII becomes a
    space) so a phrase spread over Unicode line separators still reads as words.
    """
    if ch.isspace():
        return ch if ch.isascii() else " "
    if ch in _APOSTROPHES:
        return "'"
    folded = fold_name(ch).replace("rn", "m")
    if folded == ch and ch in READER_CONFUSABLES:
        return READER_CONFUSABLES[ch]
    return folded


def instruction_view(view: NormalisedText) -> NormalisedText:
    """The view as the instruction gate reads it: every character through the floor's name fold.

    Look-alike letters (Cyrillic, Greek, Cherokee, small capitals, fullwidth, mathematical)
    become the Latin letter they imitate, case folds away, ``I``/``1``/``|`` read ``l`` and
    ``0`` reads ``o``, invisible characters and combining marks disappear.  Each distinct
    character is folded once; a translate handles 1:1 folds, and the rare characters that
    fold to nothing or to several become edits of a derived view, so positions still map back.
    """
    table: dict[int, str] = {}
    multi: dict[str, str] = {}
    for ch in set(view.text):
        folded = _instruction_char(ch)
        if folded == ch:
            continue
        if len(folded) == 1:
            table[ord(ch)] = folded
        else:
            multi[ch] = folded
    if multi:
        odd = re.compile("[" + "".join(re.escape(c) for c in multi) + "]")
        view = derive(view, ((m.start(), m.end(), multi[m.group()]) for m in odd.finditer(view.text)))
    if not table:
        return view
    return view.remapped(view.text.translate(table))


def _fold_pattern(pattern: str) -> str:
    """A pattern written in plain lower-case English, with its letters folded like the text."""
    return pattern.translate({ord(c): _instruction_char(c) for c in "abcdefghijklmnopqrstuvwxyz"})


#: Between two words: any run of non-letters (spaces, hyphens, underscores, punctuation).
_SEP = r"[^a-z0-9]{1,6}"
#: Inside a key word: at most one joiner between letters (``ig-nore``, ``in.struc.tions``).
_JOIN = r"[-_.*'`~\\/]?"


def _word(word: str) -> str:
    """A word whose letters may be split by single joiners."""
    return _JOIN.join(re.escape(c) for c in word)


def _words(*words: str) -> str:
    return "(?:" + "|".join(_word(w) for w in sorted(words, key=len, reverse=True)) + ")"


_VERB = rf"(?:{_words('ignore', 'disregard', 'forget', 'override', 'bypass', 'discard', 'overlook')}"
_VERB += rf"|pay{_SEP}no{_SEP}attention{_SEP}to)"
_FILL = rf"(?:(?:all|any|of|the|your|my|these|those|every|previous|prior|above|earlier){_SEP}){{0,4}}"
_QUAL = _words(
    "previous", "prior", "above", "earlier", "preceding", "foregoing", "system", "original", "initial", "existing",
    "former", "developer", "safety", "current",
)  # fmt: skip
_NOUN = _words(
    "instruction", "instructions", "prompt", "prompts", "directive", "directives", "guidelines", "guidance",
    "rules", "guardrails", "programming", "orders", "commands", "context",
)  # fmt: skip
#: Nouns that, with a verb of forgetting, need no "previous": a reader's instructions *are* earlier.
_STRONG_NOUN = _words("instructions", "instruction", "prompts", "prompt", "directives", "guardrails", "programming")
_EARLIER = (
    rf"(?:(?:that{_SEP}|which{_SEP})?(?:you|u){_SEP}(?:(?:were|have|had|'ve|got|just|been){_SEP}){{0,3}}"
    r"(?:given|received|told|shown|provided|loaded|read)"
    rf"|(?:given|provided|received|loaded)(?:{_SEP}(?:to{_SEP})?(?:you|u))?{_SEP}(?:earlier|before|previously|above)"
    rf"|above|before|earlier|previously|so{_SEP}far|until{_SEP}now|up{_SEP}to{_SEP}now)"
)
#: Who a planted note speaks to: the next reader of a memory is an agent.
_READER = r"(?:assistant|agent|ai|model|llm|instance|bot|claude|copilot|codex|gemini|chatgpt)s?"
_READS = (
    rf"(?:reads|opens|loads|sees|gets|receives|processes|finds|picks{_SEP}up|is{_SEP}reading|comes{_SEP}across"
    r"|reading|opening|loading|seeing|processing)"
)


def _word_bounded(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    if left_ok(view.text, m.start()) and right_ok(view.text, m.end()):
        yield kind, m.start(), m.end()


_NEGATION = re.compile(_fold_pattern(r"(?:don't|do not|never|not|nor|cannot|can't|won't|mustn't)[^a-z0-9]{1,3}\Z"))


def _not_negated(view: NormalisedText, m: re.Match[str], kind: str) -> Iterator[Hit]:
    """ "Don't forget the earlier rules" asks the opposite of an injection: not a finding."""
    if _NEGATION.search(view.text, max(0, m.start() - 12), m.start()) is None:
        yield from _word_bounded(view, m, kind)


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
}  # fmt: skip


def _instruction(kind: str, pattern: str, check: Check = _word_bounded) -> Rule:
    """An instruction rule over the instruction view, its pattern folded the same way."""
    return Rule(INSTRUCTION, kind, re.compile(_fold_pattern(pattern)), check)


#: Instruction rules read the instruction view (look-alikes folded, lower case).
_INSTRUCTION_FOLDED: tuple[Rule, ...] = (
    _instruction(
        "ignore-instructions",
        rf"{_VERB}{_SEP}(?:{_FILL}{_QUAL}{_SEP}(?:[a-z-]{{1,20}}{_SEP})?{_NOUN}"
        rf"|(?:all|everything|anything){_SEP}(?:(?:of|that|you|were|was|have|been|the|i){_SEP}){{0,4}}"
        r"(?:above|before|previously|prior|earlier|told|said)"
        rf"|(?:all{_SEP})?your{_SEP}(?:instructions|rules|guidelines|programming|guardrails)"
        rf"|(?:(?:the|all|any|your|these|those|of){_SEP}){{0,3}}{_STRONG_NOUN}{_SEP}{_EARLIER})\b",
        _not_negated,
    ),
    _instruction("system-prompt", r"system\s+prompts?"),
    _instruction("developer-message", r"developer\s+messages?"),
    _instruction(
        "role-reassignment",
        r"you(?:\s+are|'re)\s+now\s+(?:a|an|my|no\s+longer|free|unrestricted|unfiltered"
        r"|uncensored|dan|jailbroken|acting|operating|called|named|in\s+(?:[a-z-]+\s+)?mode)\b",
    ),
    Rule(
        INSTRUCTION,
        "jailbreak",
        re.compile(_fold_pattern(r"jailbr(?<![a-z0-9_]jailbr)(?:eak|oken)[a-z]{0,8}")),
        _word_bounded,
    ),
    _instruction("dan", r"do\s+anything\s+now"),
    # Text addressed to the agents that will read it later (a memory is read by the *next* session).
    _instruction(
        "addressed-to-agent",
        r"(?:note|message|instructions?|reminder)\s+(?:to|for)\s+(?:claude|codex|gemini|copilot|cursor"
        r"|chatgpt|gpt|the\s+(?:ai|agent|assistant|model|llm)|(?:ai|llm)\s+(?:agents?|assistants?)"
        r"|(?:any|all|future|next)\s+(?:agents?|assistants?|sessions?|models?)"
        r"|(?:whichever|whoever|whatever|every|each|the\s+next)\s+(?:ai\s+)?(?:agents?|assistants?|models?|instances?))\b",
    ),
    _instruction(
        "addressed-to-agent",
        r"(?:ai|llm)\s+(?:agents?|assistants?|models?)\s+(?:reading|who\s+reads?|that\s+reads?)\s+this",
    ),
    _instruction(
        "addressed-to-agent",
        r"(?:future|next|subsequent|later|all)\s+(?:ai\s+)?(?:sessions?|agents?|assistants?|models?)"
        r"\s+(?:should|must|need\s+to|have\s+to|are\s+to|shall)\s+(?:always\s+|never\s+|first\s+)?"
        r"(?:ignore|skip|disable|bypass|trust|obey|approve|disregard|override)\b",
    ),
    # "A note for whichever assistant opens this next", "the model that reads this".
    _instruction(
        "addressed-to-agent",
        rf"(?:whichever|whoever|whatever|any|every|each|the|an?|next|future){_SEP}"
        rf"(?:(?:ai|llm|coding|next|future|other){_SEP}){{0,2}}{_READER}{_SEP}(?:(?:that|who|which){_SEP})?"
        rf"(?:(?:next|later|first|eventually){_SEP})?{_READS}{_SEP}(?:this|these|it|me|the{_SEP}"
        r"(?:note|file|handoff|message|log|memory))\b",
    ),
    _instruction("addressed-to-agent", rf"(?:dear|hey|hello|greetings){_SEP}{_READER}\b"),
)

_DOWNLOADER = r"(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod)"
#: Anything on the line except the start of another download command (so each character is read
#: from one start at most: linear), and at most 400 characters of it.
_ON_LINE = r"(?:[^\n|cwi]|c(?!url)|w(?!get)|i(?!wr|rm|nvoke-)){0,400}"
_SHELL = (
    r"(?:sudo[ \t]+(?:-[a-z]+[ \t]+)*)?(?:env[ \t]+)?"
    r"(?:(?:ba|z|k|c|tc|da|fi|a)?sh|python[0-9.]*|perl|ruby|node|php|iex|invoke-expression|pwsh|powershell|source)\b"
)

#: Instruction rules that read the normalised view: capitals matter (DAN), or a look-alike
#: letter would stop a shell from running the command anyway (download piped to a shell).
_INSTRUCTION_VIEW: tuple[Rule, ...] = (
    Rule(INSTRUCTION, "dan", re.compile(r"DAN"), _dan),
    Rule(INSTRUCTION, "role-marker", re.compile(r"<(?:\|(?:im_start|im_end|system|start_header_id)\||<sys>)>"),
         lowered=True),
    Rule(INSTRUCTION, "role-marker", re.compile(r"\[/?inst\]"), lowered=True),
    # curl … | sh, wget -O- … | bash, iwr … | iex
    Rule(INSTRUCTION, "download-to-shell", re.compile(rf"{_DOWNLOADER}\b{_ON_LINE}\|[ \t]*{_SHELL}"),
         _word_bounded, lowered=True),
    # bash <(curl …), sh -c "$(wget -qO- …)", eval "$(curl …)"
    Rule(INSTRUCTION, "download-to-shell",
         re.compile(rf"(?<![a-z0-9_.-])(?:(?:ba|z|k)?sh|source|\.|python[0-9.]*|eval|iex)[ \t]+(?:-[a-z]+[ \t]+)*"
                    rf"(?:<\(|[\"']?\$\()[ \t]*{_DOWNLOADER}\b"), lowered=True),
    # iex (iwr …), Invoke-Expression (New-Object Net.WebClient).DownloadString(…)
    Rule(INSTRUCTION, "download-to-shell",
         re.compile(r"(?:iex|invoke-expression)[ \t]*(?:[($][ \t]*){0,3}"
                    r"(?:iwr|irm|invoke-webrequest|invoke-restmethod|new-object[ \t]+(?:system\.)?net\.webclient)\b"),
         _word_bounded, lowered=True),
)  # fmt: skip


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
        shown = rendered(view)
        for reading in (view, shown) if shown is not view else (view,):
            found.extend(run_rules(instruction_view(reading), _INSTRUCTION_FOLDED))
            found.extend(run_rules(reading, _INSTRUCTION_VIEW))
    order = {g: i for i, g in enumerate(ALL_GATES)}
    return sorted(set(found), key=lambda f: (f.start, f.end, order[f.gate], f.kind))


def scan_content(text: str, gates: Iterable[str] = ALL_GATES) -> list[Finding]:
    """Scan ``text`` with the named gates (all six by default).  Positions are in ``text``."""
    if not isinstance(text, str):
        raise TypeError("scan_content takes str")
    return scan_view(normalise(text), gates)
