"""free_bytes answers for the nearest folder that exists, as before it stopped spelling out every parent first."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.services.diskspace import free_bytes


def _nearest_statvfs(path: Path) -> int | None:
    """The definition: the first of ``path`` and its parents that statvfs answers for."""
    for candidate in (path, *path.parents):
        try:
            st = os.statvfs(candidate)
        except FileNotFoundError:
            continue
        except OSError:
            return None
        return st.f_bavail * st.f_frsize
    return None


@settings(max_examples=60, deadline=None)
@given(made=st.integers(0, 3), missing=st.lists(st.sampled_from(["a", "b", "x.md"]), max_size=4))
def test_free_bytes_is_the_nearest_existing_folders(tmp_path_factory, made: int, missing: list[str]) -> None:
    root = tmp_path_factory.mktemp("disk")
    existing = root.joinpath(*["d"] * made)
    existing.mkdir(parents=True, exist_ok=True)
    path = existing.joinpath(*missing)
    # free space moves with other writers on the disk: compare the block size and the nearest folder's answer
    assert (free_bytes(path) is None) == (_nearest_statvfs(path) is None)
    assert abs((free_bytes(path) or 0) - (_nearest_statvfs(path) or 0)) < 64 * 1024 * 1024


def test_free_bytes_of_an_existing_path_is_its_own(tmp_path: Path) -> None:
    st = os.statvfs(tmp_path)
    assert abs(free_bytes(tmp_path) - st.f_bavail * st.f_frsize) < 64 * 1024 * 1024
