"""Line boundaries and one-line identifiers, shared by the fence and the formats (pure).

"Line start" means after *every* boundary Python or Unicode knows (``\\r\\n``, ``\\r``, ``\\n``, ``\\v``,
``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, U+2028, U+2029), not only ``\\n``: a text must not be able to hide a
line break that some other reader honours.
"""

from __future__ import annotations

import re
import unicodedata

from notegate.vault.frontmatter import FormatError

# Every line boundary str.splitlines() honours; CommonMark's (\r\n, \r, \n) are a subset.
BOUNDARY = "\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]"
BOUNDARY_RE = re.compile(BOUNDARY)


def check_inline(value: object, what: str, *, forbid: str = "") -> str:
    """A one-line identifier: non-empty, trimmed, only assigned characters, no line break or control/format one.

    Unassigned code points (category Cn, which includes U+FFFE/U+FFFF) and lone
    surrogates are refused too: YAML and UTF-8 cannot carry them.
    """
    if not isinstance(value, str) or not value or value != value.strip():
        raise FormatError(f"{what} must be a non-empty string without surrounding whitespace.", rule="format-value")
    if value.isprintable() and not any(ch in value for ch in forbid):
        return value  # C-speed: no printable character is in Cc, Cf, Cn, Cs, Zl or Zp
    for ch in value:
        if unicodedata.category(ch) in ("Cc", "Cf", "Cn", "Cs", "Zl", "Zp") or ch in forbid:
            raise FormatError(f"{what} must not contain {ch!r}.", rule="format-value")
    return value
