"""Is search by meaning installed?  The one answer, asked by the start-up check of ``[server] search_meaning =
true``, by its default ``"auto"`` (on where installed) and by the tests that need it.

Installed means: the ``meaning`` extra's packages can be imported (:data:`meaning_files.MEANING_PACKAGES`)
and the model's files are where its install step puts them (:data:`meaning_files.FILES` under
:data:`meaning_files.PARTS`).  Looks only: a few stat calls and import-system lookups; numpy is not imported.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from notegate.vault import meaning_files as files


def missing_parts() -> list[str]:
    """Everything search by meaning lacks, in order: the extra's packages, then the model's files."""
    packages = [name for name in files.MEANING_PACKAGES if not _findable(name)]
    return packages + [name for name in files.FILES if not Path(sys.prefix, *files.PARTS, name).is_file()]


def _findable(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a finder refused it (a broken install): as good as absent
        return False


def install_hint(parts: list[str]) -> str:
    """What to run when ``parts`` (:func:`missing_parts`) are missing."""
    return f"pip install 'notegate[meaning]', then {files.INSTALL_COMMAND}; missing: {', '.join(parts)}"


def off_reason(setting: bool | str) -> str | None:
    """Why search by meaning is off under ``[server] search_meaning = setting``; None when it is on.  Why
    ``"auto"`` is the default: on wherever it is installed (``make`` installs it), while ``pip install
    notegate`` without the extra and the container image keep working, keyword search only, said once in
    the log and in /healthz."""
    if setting is False:
        return "off in the config ([server] search_meaning = false)"
    parts = missing_parts()
    return f"not installed ({install_hint(parts)})" if parts else None
