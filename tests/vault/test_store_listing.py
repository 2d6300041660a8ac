"""The listing's copy-on-write maps: each version answers exactly as a dict copied at that version would,
readers of an old version are never disturbed by newer ones, and a version costs O(changes), not O(vault)."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault.store import Listing, _CowMap, _overlay_bound

_KEYS = st.sampled_from([f"k{i}" for i in range(12)])
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), _KEYS, st.integers(0, 3)),
        st.tuples(st.just("del"), _KEYS, st.just(0)),
        st.tuples(st.just("pop"), _KEYS, st.just(0)),
        st.tuples(st.just("setdefault"), _KEYS, st.integers(0, 3)),
        st.tuples(st.just("next"), _KEYS, st.just(0)),  # publish this version, start the next
    ),
    max_size=60,
)


def _same(cow: _CowMap, model: dict) -> None:
    assert dict(cow) == model and len(cow) == len(model)
    assert list(cow) == list(dict(cow.items())) and sorted(cow) == sorted(model)
    assert sorted(cow.values()) == sorted(model.values())
    for key in [f"k{i}" for i in range(12)]:
        assert (key in cow) == (key in model)
        assert cow.get(key, "none") == model.get(key, "none")


@settings(max_examples=400, deadline=None)
@given(_OPS, st.booleans())
def test_each_version_is_a_dict_at_that_version(ops, tiny_bound) -> None:
    cow: _CowMap[int] = _CowMap()
    model: dict[str, int] = {}
    published: list[tuple[_CowMap, dict]] = []
    for op, key, value in ops:
        if op == "set":
            cow[key] = value
            model[key] = value
        elif op == "del":
            if key in model:
                del cow[key]
                del model[key]
        elif op == "pop":
            assert cow.pop(key, "none") == model.pop(key, "none")
        elif op == "setdefault":
            assert cow.setdefault(key, value) == model.setdefault(key, value)
        else:
            published.append((cow, dict(model)))
            cow = cow.derived()
        _same(cow, model)
    for old, snapshot in published:  # what readers of old versions hold never changed
        _same(old, snapshot)


def test_the_overlay_is_compacted_past_its_bound() -> None:
    cow: _CowMap[int] = _CowMap({f"k{i}": i for i in range(10_000)})
    bound = _overlay_bound(10_000)
    first = cow
    for i in range(bound + 5):
        cow = cow.derived()
        cow[f"new{i}"] = i
        del cow[f"k{i}"]
    assert len(cow._over) <= bound + 2  # folded into a fresh base on the way
    assert len(cow) == 10_000 and "k0" not in cow and cow["new0"] == 0
    assert len(first) == 10_000 and first["k0"] == 0 and "new0" not in first


def test_a_reader_iterating_an_old_listing_is_not_disturbed() -> None:
    """Newer versions are built (and compacted, past the bound) while a reader is half way through."""
    old = Listing(commit="a")
    for i in range(200):
        old.add(f"notes/n{i}.md", f"blob{i}")
    newest = old
    seen = []
    for i, path in enumerate(old.notes):
        newest = newest.copy(f"c{i}")
        newest.remove(f"notes/n{199 - i}.md")
        newest.add(f"notes/extra{i}.md", "x")
        seen.append((path, old.notes[path]))
    assert seen == [(f"notes/n{i}.md", f"blob{i}") for i in range(200)]
    assert len(old.notes) == 200 and old.folders["notes"] == 200
    assert len(newest.notes) == 200 and set(newest.notes) == {f"notes/extra{i}.md" for i in range(200)}
    assert newest.collision("NOTES/extra1.md") == "notes/extra1.md" and old.collision("Notes/n1.md") == "notes/n1.md"


def _version_cost(n: int, versions: int = 200) -> float:
    listing = Listing(commit="base")
    for i in range(n):
        listing.add(f"folder-{i // 50}/n{i}.md", f"b{i}")
    started = time.process_time()
    for v in range(versions):
        listing = listing.copy(f"c{v}")
        listing.remove(f"folder-0/n{v % 50}.md")
        listing.add(f"folder-0/n{v % 50}.md", f"b{v}")
    return (time.process_time() - started) / versions


def test_a_version_costs_the_changes_not_the_vault() -> None:
    """Ten times the notes: a one-note version costs far less than ten times as much (a copy would be ~10x).
    A ratio of CPU times under one load, never an absolute time; best of three against noise."""
    small = min(_version_cost(2_000) for _ in range(3))
    large = min(_version_cost(20_000) for _ in range(3))
    assert large / small < 4, (small, large)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, st.integers(0, 3)), _OPS)
def test_a_fold_is_the_version_it_folds_in_the_same_order(base, ops) -> None:
    """_folded (the base copied in C, the overlay applied) gives exactly the pairs, in the order, that the
    version it folds iterates; and a version folded on every step (bound patched to 0) still answers like a
    dict of that version, old versions untouched."""
    from unittest import mock

    cow: _CowMap[int] = _CowMap(dict(base)).derived()  # not owned: changes go to the overlay
    model = dict(base)
    published: list[tuple[_CowMap, dict]] = []
    with mock.patch("notegate.vault.listing._overlay_bound", lambda _n: 0):
        for op, key, value in ops:
            if op in ("set", "setdefault"):
                cow[key] = value
                model[key] = value
            elif op in ("del", "pop") and key in model:
                del cow[key]
                del model[key]
            else:
                assert list(cow._folded().items()) == list(cow.items())
                published.append((cow, dict(model)))
                cow = cow.derived()
                assert not cow._over  # folded
            _same(cow, model)
    assert list(cow._folded().items()) == list(cow.items())
    for old, snapshot in published:
        _same(old, snapshot)


@given(st.text(max_size=30))
def test_the_listings_caseless_key_is_the_caseless_key(text: str) -> None:
    """_caseless only saves a str: it is equal to caseless_key, and is ``text`` itself when they are equal."""
    from notegate.vault.paths import caseless_key
    from notegate.vault.store import _caseless

    key = _caseless(text)
    assert key == caseless_key(text)
    assert (key is text) == (key == text)
