"""What a reviewer's browser shows of untrusted text: every character that would act instead of show.

Autoescaping stops markup; it does not stop a right-to-left override that makes ``evil`` read ``live``, a
zero-width space, a tag character or an ANSI escape from hiding in plain sight inside a ``<pre>``. So the
owner's pages pass item text through :func:`visible` before the template escapes it: each such character is
replaced by a visible ``⟨U+XXXX⟩`` marker. Newline and tab stay (the diff's layout). One pass, linear time.

Which characters: the general categories that never render as themselves (Unicode's Cc control, Cf format —
bidi controls, zero-width characters, tag characters —, Co private use, Cs surrogates, Cn unassigned, Zl
and Zp line and paragraph separators) and the variation selectors (FE00–FE0F, E0100–E01EF), the same
families the floor holds an item for (``notegate.safety.floor``).
"""

from __future__ import annotations

import unicodedata

_KEEP = frozenset("\n\t")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})


def _hidden(ch: str) -> bool:
    if ch in _KEEP:
        return False
    cp = ord(ch)
    return unicodedata.category(ch) in _HIDDEN_CATEGORIES or 0xFE00 <= cp <= 0xFE0F or 0xE0100 <= cp <= 0xE01EF


def visible(text: object) -> str:
    """``text`` with every hiding character shown as ``⟨U+XXXX⟩``."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    return "".join(f"⟨U+{ord(ch):04X}⟩" if _hidden(ch) else ch for ch in text)
