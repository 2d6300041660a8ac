"""One exception family (issue 29 §3): every public notegate exception derives from ``NotegateError`` and is
drawn in :mod:`notegate.errors`' docstring, so the whole family is read in one place (as httpx's
``_exceptions.py`` draws its own).

Why: public exception classes were spread over about ten modules and the hooks had a second root
(``HookError(Exception)``), so an ``except NotegateError`` at a door or in the CLI missed some anticipated
refusals and nothing listed what a caller may have to catch.  Private helpers (``_Halt``) stay out.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import notegate
from notegate import errors
from notegate.errors import NotegateError

#: Modules that need something a test machine may lack (a browser); they are checked when they import.
OPTIONAL = ("notegate.lab.browser",)


def _public_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(notegate.__path__, "notegate."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:
            if info.name in OPTIONAL:
                continue
            raise
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and not name.startswith("_")
            ):
                found.append(value)
    return found


PUBLIC = _public_exceptions()


def test_the_family_is_found() -> None:
    assert len(PUBLIC) > 20


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_public_exception_derives_from_the_one_root(cls: type[BaseException]) -> None:
    assert issubclass(cls, NotegateError)


@pytest.mark.parametrize("cls", PUBLIC, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_every_public_exception_is_drawn_in_the_family_tree(cls: type[BaseException]) -> None:
    """Drawn as ``+-- Name`` (the root as the tree's first line), with its module unless it is errors'."""
    drawn = re.search(rf"^\s*(?:[|+ -]*-- )?{cls.__qualname__}\s+(.*)$", errors.__doc__ or "", re.M)
    assert drawn is not None, f"draw {cls.__qualname__} ({cls.__module__}) in notegate.errors' docstring"
    if cls.__module__ != "notegate.errors":
        assert drawn.group(1).startswith(cls.__module__.removeprefix("notegate.") + ":"), drawn.group(0)
    for base in cls.__bases__:
        if issubclass(base, NotegateError) and base is not NotegateError:
            assert base.__qualname__ in (errors.__doc__ or ""), base
