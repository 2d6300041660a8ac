"""`notegate doctor`: checks a deployment and a workstation and says, red and loud, what is wrong.

One module per group of checks (``policycheck``, ``devices``, ``origins``, ``scopes`` over the pure
``syncers`` table, ``integrity``, ``workstation``), a runner and a renderer.  Every check returns a
:class:`~notegate.doctor.result.CheckResult`: a stable name, ok/warn/fail, what it found and what to do
instead, never a secret or a note's contents.
"""

from __future__ import annotations

from notegate.doctor.render import render_json, render_text
from notegate.doctor.result import CheckResult, Status, exit_status
from notegate.doctor.runner import run_doctor

__all__ = ["CheckResult", "Status", "exit_status", "render_json", "render_text", "run_doctor"]
