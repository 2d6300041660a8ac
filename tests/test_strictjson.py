"""The one strict JSON reader (notegate/strictjson.py) that the LiveSync gate, the machine contracts and the
backup manifest share: it agrees with ``json.loads`` wherever JSON is strict, and refuses, naming what it
found, exactly where Python's reader would quietly keep the last of two keys or read a constant JSON lacks."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate import strictjson
from notegate.errors import NotegateError
from notegate.livesync.gate import parse_json_body
from notegate.services.backup_manifest import ManifestInvalid, _load
from notegate.services.contracts import parse_body

values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(values)
def test_strict_json_reads_what_json_writes(value: object) -> None:
    text = json.dumps(value)
    assert strictjson.loads(text) == json.loads(text)
    assert strictjson.loads(text.encode()) == json.loads(text)


@given(st.text(max_size=8), st.integers(), st.integers())
def test_a_repeated_key_is_refused_and_named_at_any_depth(key: str, first: int, second: int) -> None:
    name = json.dumps(key)
    doubled = f'{{"outer": [{{{name}: {first}, {name}: {second}}}]}}'
    with pytest.raises(ValueError) as refused:
        strictjson.loads(doubled)
    assert strictjson.repeated_key(refused.value) == key
    assert strictjson.constant_named(refused.value) is None


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_constant_json_lacks_is_refused_and_named(constant: str) -> None:
    with pytest.raises(ValueError) as refused:
        strictjson.loads(f'{{"x": [{constant}]}}')
    assert strictjson.constant_named(refused.value) == constant


def test_each_door_refuses_with_its_own_rule_and_words() -> None:
    doubled = b'{"_id": "a", "_id": "b"}'
    with pytest.raises(NotegateError) as gate:
        parse_json_body(doubled)
    assert gate.value.rule == "livesync-body-not-json"
    with pytest.raises(NotegateError) as contract:
        parse_body(b'{"n": NaN}')
    assert contract.value.rule == "contract-body-not-json"
    with pytest.raises(ManifestInvalid, match="the key '_id' appears twice"):
        _load(doubled, 1000, "manifest")
    with pytest.raises(ManifestInvalid, match="the manifest holds Infinity, which is not JSON"):
        _load(b'{"n": Infinity}', 1000, "manifest")
    with pytest.raises(ManifestInvalid, match=r"the manifest is not JSON \(UnicodeDecodeError\)"):
        _load(b'{"n": "\xff"}', 1000, "manifest")
