"""One way to assert a refusal: by its exact rule, whatever door it came through.

Why one helper: three copies of the same ``pytest.raises`` block (and the MCP and CLI variants) each checked
a little more or less; a test that accepts any rule of an exception class lets a refusal by the wrong rule
pass.  Every refusal reads "Refused [rule]: what and why. What to do instead." -- so this checks both the
rule and that shape, and returns what was refused for the test's further checks.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from typing import Any

import pytest

from notegate.errors import NotegateError


def assert_refused(rule: str, outcome: Callable[..., Any] | Any, *args: Any, **kwargs: Any) -> Any:
    """Assert that ``outcome`` was refused by exactly ``rule``.

    ``outcome`` is a callable (called with ``args`` and ``kwargs``; it must raise a :class:`NotegateError`,
    which is returned), an MCP tool result (it must be an error whose text holds ``Refused [rule]: ``; the
    text is returned) or a finished process (a non-zero exit with ``Refused [rule]: `` on stderr, returned)."""
    if isinstance(outcome, subprocess.CompletedProcess):
        assert outcome.returncode != 0, (outcome.stdout, outcome.stderr)
        assert f"Refused [{rule}]: " in outcome.stderr, outcome.stderr
        return outcome.stderr
    if hasattr(outcome, "is_error") and hasattr(outcome, "content"):
        text = "\n".join(getattr(part, "text", "") for part in outcome.content)
        assert outcome.is_error and f"Refused [{rule}]" in text, text
        return text
    with pytest.raises(NotegateError) as info:
        outcome(*args, **kwargs)
    assert info.value.rule == rule, info.value.explain()
    assert info.value.explain().startswith(f"Refused [{rule}]: "), info.value.explain()
    return info.value
