"""What a process pays for the instruction-file names at start, and that the cheaper check decides the same.

``validate_instruction_files`` runs in every ``load_config`` (each hook, push and CLI start). It used to
build the whole inverse fold (~0.1 s of CPU); it now accepts a skeleton of self-folding printable ASCII
characters at once and builds the inverse only for anything else. The reference below is the check as it
was, over names_reference's inverse computed one character at a time.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notegate.safety import names
from support import names_reference

PROPERTIES = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
REFERENCE_INVERSE, _ = names_reference._fold_inverse()
#: Characters folding to something (every fold class), to nothing, ASCII, and anything at all.
ALPHABET = st.one_of(
    st.sampled_from(sorted(ch for chars in REFERENCE_INVERSE.values() for ch in chars)),
    st.sampled_from(sorted(names_reference._fold_inverse()[1])),
    st.characters(min_codepoint=0, max_codepoint=0x7F),
    st.characters(),
)


def reference_usable(name: str) -> bool:
    skel = names.fold_name(name)
    return bool(skel) and all(c in REFERENCE_INVERSE for c in skel)


@PROPERTIES
@given(name=st.text(ALPHABET, max_size=12))
def test_usable_skeleton_equals_the_reference(name: str) -> None:
    assert names._usable_skeleton(names.fold_name(name)) == reference_usable(name)


@PROPERTIES
@given(listed=st.lists(st.text(ALPHABET, max_size=8), max_size=4))
def test_validate_accepts_and_refuses_exactly_as_before(listed: list[str]) -> None:
    expected_ok = all(reference_usable(n) for n in listed)
    if expected_ok:
        assert names.validate_instruction_files(listed) == tuple(dict.fromkeys(listed))
    else:
        with pytest.raises(ValueError, match="does not fold to a usable ASCII skeleton"):
            names.validate_instruction_files(listed)


@pytest.mark.parametrize(
    "name",
    [
        "",  # empty fold
        "\u200b",  # folds to nothing
        "\u4e00.md",  # a character folding to itself, not ASCII
        "\x01CLAUDE.md",  # a control character is deleted: still usable
        "m.md",  # m folds to rn: a multi-character token, not the fast path
        "\uff23LAUDE.md",  # fullwidth: folds to ASCII by NFKD
    ],
)
def test_edge_names_decide_as_the_reference(name: str) -> None:
    assert names._usable_skeleton(names.fold_name(name)) == reference_usable(name)


def test_loading_the_default_names_builds_no_inverse() -> None:
    """A fresh interpreter validating the default list never builds the inverse nor compiles the matcher."""
    code = (
        "from notegate.safety import names\n"
        "names.validate_instruction_files(names.DEFAULT_INSTRUCTION_FILES)\n"
        "print(names._fold_inverse.cache_info().currsize, names._name_matcher.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "0"]


def test_importing_the_floor_compiles_no_pattern() -> None:
    """The floor's character and flood expressions are compiled on first scan, not at import (~0.1 s CPU
    that every git hook and CLI start paid even when nothing reached the floor); the first scan builds them."""
    code = (
        "from notegate.safety import floor, floor_chars\n"
        "print(floor_chars._patterns.cache_info().currsize)\n"
        "floor_chars.scan_chars('a\\u200bb', 0, 5)\n"
        "print(floor_chars._patterns.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "1"]
