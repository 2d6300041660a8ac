"""Measurement plugin: keep only test ids listed in $SUITEPROBE_IDS; write per-phase durations to $SUITEPROBE_OUT."""

import json
import os
import time
from pathlib import Path

_ids = None
_rows = {}
_t0 = None


def pytest_configure(config):
    global _ids, _t0
    _t0 = time.monotonic()
    p = os.environ.get("SUITEPROBE_IDS")
    if p:
        _ids = set(Path(p).read_text().split("\n")) - {""}


def pytest_collection_modifyitems(session, config, items):
    if _ids is None:
        return
    keep = [i for i in items if i.nodeid in _ids]
    drop = [i for i in items if i.nodeid not in _ids]
    items[:] = keep
    config.hook.pytest_deselected(items=drop)


def pytest_runtest_logreport(report):
    r = _rows.setdefault(report.nodeid, {})
    r[report.when] = round(report.duration, 4)
    if report.failed:
        r["failed"] = True


def pytest_sessionfinish(session):
    if hasattr(session.config, "workerinput"):
        return
    out = os.environ.get("SUITEPROBE_OUT")
    if out:
        Path(out).write_text(json.dumps({"wall": time.monotonic() - _t0, "tests": _rows}, indent=0))
