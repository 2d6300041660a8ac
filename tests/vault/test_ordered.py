"""The listing's sorted paths (notegate.vault.ordered): each version's equal a fresh sort of its paths however
it was made (derived from an earlier version or built), published ones never change, and the walks return
exactly what filtering the sorted paths by brute force would."""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault import ordered
from notegate.vault.store import Listing

# Segments that sort around "/" (0x2F) and "0" (0x30): "-" and "." sort before "/", "0" right after it, and
# non-ASCII after everything ASCII; "a" is a prefix of all the a-names.
SEGMENTS = ["a", "a-", "a-b", "a.b", "a0", "a b", "ab", "b", "0", "é", "ä", "Z", "日本"]
LEAVES = ["x.md", "x-y.md", "é.md", "0.md", "a.md", "a0.md", "a-b.md", "x.png", "a0.pdf", "x.bin"]

segment = st.sampled_from(SEGMENTS)
path = st.builds(lambda up, leaf: "/".join([*up, leaf]), st.lists(segment, max_size=3), st.sampled_from(LEAVES))
paths = st.sets(path, max_size=40)


def _brute(all_paths: set[str]) -> ordered.Ordered:
    folders = {p[:i] for p in all_paths for i, c in enumerate(p) if c == "/"}
    return ordered.Ordered(sorted(all_paths), sorted(folders))


def _add(listing: Listing, p: str) -> None:
    (listing.add if p.endswith(".md") else listing.add_attachment)(p, "blob")


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), path),
        st.tuples(st.just("remove"), path),
        st.tuples(st.just("next"), st.just("")),  # publish this version, start the next
        st.tuples(st.just("order"), st.just("")),  # a reader asks this version for its sorted paths
    ),
    max_size=80,
)


@settings(max_examples=400, deadline=None)
@given(paths, OPS, st.booleans())
def test_each_version_orders_exactly_its_paths(start, ops, tiny_bound) -> None:
    """Derived or built (the bound patched to 0 forces a build each time), a version's sorted paths are its
    own; what older versions handed out never changes."""
    listing = Listing(commit="v0")
    for p in start:
        _add(listing, p)
    model = set(start)
    handed: list[tuple[ordered.Ordered, ordered.Ordered]] = []  # (what a version gave, a copy at the time)
    bound = (lambda _changed, _size: False) if tiny_bound else ordered.derivable
    with mock.patch("notegate.vault.ordered.derivable", bound):
        for step, (op, p) in enumerate(ops):
            if op == "add":
                listing.remove(p)  # as the store advances: remove, then add what is there now
                _add(listing, p)
                model.add(p)
            elif op == "remove":
                listing.remove(p)
                model.discard(p)
            elif op == "next":
                listing = listing.copy(f"v{step}")
            else:
                made = listing.order()
                assert made == _brute(model)
                handed.append((made, ordered.Ordered(list(made.paths), list(made.folders))))
                listing = listing.copy(f"v{step}")  # asked means published: the next write starts a new one
        assert listing.order() == _brute(model)
    for made, snapshot in handed:
        assert made == snapshot


def test_a_small_change_is_derived_not_sorted_again() -> None:
    listing = Listing(commit="a")
    for i in range(5_000):
        listing.add(f"f{i % 40}/n{i}.md", "b")
    first = listing.order()
    nxt = listing.copy("b")
    nxt.remove("f3/n3.md")
    nxt.add("f3/new.md", "c")
    nxt.add_attachment("new-folder/pic.png", "d")
    with mock.patch("notegate.vault.ordered.built", side_effect=AssertionError("sorted again")):
        derived = nxt.copy("c").order()  # two versions on, nobody asked in between: still derived
    assert "f3/new.md" in derived.paths and "f3/n3.md" not in derived.paths
    assert "new-folder" in derived.folders and derived == _brute({*nxt.notes, *nxt.attachments})
    assert "f3/n3.md" in first.paths and "new-folder" not in first.folders  # the first version's are untouched


def test_past_the_bound_it_is_built_afresh() -> None:
    listing = Listing(commit="a")
    for i in range(1_000):
        listing.add(f"f/n{i}.md", "b")
    listing.order()
    nxt = listing.copy("b")
    for i in range(200):  # over the bound (64 at this size)
        nxt.add(f"g/n{i}.md", "c")
    with mock.patch("notegate.vault.ordered.advanced", side_effect=AssertionError("derived")):
        assert nxt.order() == _brute({*nxt.notes})


# ------------------------------------------------------------------ the walks
def _shown(hidden: frozenset[str]):
    return lambda p: p not in hidden


prefixes = st.one_of(st.just(""), st.lists(segment, min_size=1, max_size=2).map(lambda s: "/".join(s) + "/"))
cursors = st.one_of(st.none(), st.just(""), path, prefixes, st.text(alphabet="a-./0éb", max_size=6))


@settings(max_examples=500, deadline=None)
@given(paths, st.data())
def test_the_walks_equal_brute_force(all_paths, data) -> None:
    made = ordered.built(all_paths)
    hidden = frozenset(data.draw(st.sets(st.sampled_from(sorted(all_paths))))) if all_paths else frozenset()
    shown = _shown(hidden)
    prefix, after = data.draw(prefixes), data.draw(cursors)
    count = data.draw(st.integers(0, 12))
    under = [p for p in made.paths if p.startswith(prefix) and shown(p)]
    assert ordered.first(made.paths, prefix, shown) == (under[0] if under else None)
    for direct in (False, True):
        expected = [p for p in under if not (direct and "/" in p[len(prefix) :]) and (not after or p > after)]
        assert ordered.page(made.paths, prefix, after, count, shown, direct=direct) == expected[:count]
    folders = sorted({prefix + p[len(prefix) :].split("/", 1)[0] for p in under if "/" in p[len(prefix) :]})
    assert ordered.subfolders(made, prefix, shown) == folders
