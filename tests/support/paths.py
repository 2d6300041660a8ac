"""Hypothesis strategies for note path texts, shared by the tree walk's and the fast parser's tests."""

from __future__ import annotations

from hypothesis import strategies as st

# Pieces chosen to hit every rule: case and Unicode look-alikes (fullwidth, NFKC folds, a combining mark that
# composes only with the character before it, Kelvin sign, ligature), hidden segments, '..', reserved names
# and characters, control and invisible characters, percent-escapes, spaces and dots at segment ends.
_PIECES = [
    *"aZé.-_ #%41\\:?*~,()'+=&!",
    "\u0301",  # COMBINING ACUTE: NFC composes it with the letter before, never with '/'
    "\u0338",  # COMBINING LONG SOLIDUS OVERLAY: composes with '=' '<' '>' only
    "e\u0301",
    "\u212a",  # KELVIN SIGN: NFC maps it to 'K'
    "\uff0e",  # FULLWIDTH FULL STOP: NFKC '.'
    "\uff0f",  # FULLWIDTH SOLIDUS
    "\uff05",  # FULLWIDTH PERCENT SIGN: NFKC '%'
    "\u2215",  # DIVISION SLASH
    "\u200b",  # ZERO WIDTH SPACE
    "\u202e",  # RIGHT-TO-LEFT OVERRIDE
    "\x00",
    "\ud800",
    "ﬁ",
    "..",
    ".",
    "con",
    "COM1",
    "git~1",
    ".git",
    ".obsidian",
    "CLAUDE",
    "C:",
    "x://",
    "\u3000",  # IDEOGRAPHIC SPACE
]
SEGMENTS = st.lists(st.sampled_from(_PIECES), max_size=6).map("".join)
LEAVES = st.builds(
    lambda stem, ext: stem + ext,
    SEGMENTS,
    st.sampled_from([".md", ".MD", ".Md", ".png", ".canvas", "", ".", ".md.", ".md ", "..md"]),
)

PATH_TEXTS = st.one_of(
    st.builds(lambda folders, leaf: "/".join([*folders, leaf]), st.lists(SEGMENTS, max_size=4), LEAVES),
    st.builds(lambda head, leaf: f"/{head}/{leaf}", SEGMENTS, LEAVES),  # absolute
    st.text(max_size=12),  # anything at all
)
