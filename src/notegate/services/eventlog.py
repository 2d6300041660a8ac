"""The server's log: one line per event, in words or as JSON, never a note's contents or a token.

Events are named (``tool``, ``commit``, ``fetch``, ``refused``, ``start``) and carry only values code produced
or checked: a connector id, a tool name, a path, a rule, a count, milliseconds, a short commit id.  A value a
caller chose (a path, say) is quoted when it holds anything but plain characters, so no caller can forge a
second line or a field; values are cut at :data:`MAX_VALUE_CHARS`.

``notegate serve --log-format json`` makes every line (the SDK's and uvicorn's too) one JSON object for log
collectors; the default is ``time level logger: event key=value …``.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable

log = logging.getLogger("notegate.events")

#: Who else hears each event (the /metrics counters): called with (name, fields) after the line is logged.
Listener = Callable[[str, dict[str, object]], None]
_listeners: list[Listener] = []
_listeners_lock = threading.Lock()

MAX_VALUE_CHARS = 300
LOG_FORMATS = ("text", "json")
#: A value written bare in the text format: no spaces, quotes, = or control characters.
_PLAIN = re.compile(r"[A-Za-z0-9_.:/@+\-]+")
#: SDK loggers whose INFO lines are noise per request: "Terminating session: None" on every stateless call,
#: "Processing request of type …", and "Tool … failed" (our own ``tool`` line says it, with the rule).
QUIET_LOGGERS = (
    "mcp.server.streamable_http",
    "mcp.server.streamable_http_manager",
    "mcp.server.lowlevel.server",
    "mcp.server.mcpserver.server",
)


def _value(value: object) -> str:
    text = str(value)[:MAX_VALUE_CHARS]
    return text if _PLAIN.fullmatch(text) else json.dumps(text, ensure_ascii=True)


def event_line(event: str, fields: dict[str, object]) -> str:
    """``event key=value …`` (None fields are left out), the text form of one event."""
    parts = [event, *(f"{key}={_value(value)}" for key, value in fields.items() if value is not None)]
    return " ".join(parts)


def event(name: str, **fields: object) -> None:
    """Log one event. Callers pass only what the log may hold: never contents, never a token."""
    kept = {k: (str(v)[:MAX_VALUE_CHARS] if isinstance(v, str) else v) for k, v in fields.items() if v is not None}
    if log.isEnabledFor(logging.INFO):
        # The record is made here, not by ``log.info``: that walks the stack for the caller's file and line
        # (findCaller), which no format of ours prints, on every event -- two per write.  The line is the
        # same record ``log.info`` would make, passed to the same handlers and filters.
        record = log.makeRecord(
            log.name,
            logging.INFO,
            __file__,
            0,
            event_line(name, kept),
            (),
            None,
            "event",
            {"event": name, "fields": kept},
        )
        log.handle(record)
    for listener in tuple(_listeners):
        try:
            listener(name, kept)
        except Exception:  # a listener's bug must never fail the call that logged the event
            log.exception("event listener failed")


def listen(listener: Listener) -> Callable[[], None]:
    """Hear every event from now on (what the log hears, whatever its level); returns the way to stop."""
    with _listeners_lock:
        _listeners.append(listener)

    def stop() -> None:
        with _listeners_lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return stop


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, event and its fields (or the message of other loggers)."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
        }
        name = getattr(record, "event", None)
        if name is not None:
            out["event"] = name
            out.update(getattr(record, "fields", {}))
        else:
            out["message"] = record.getMessage()
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info).splitlines()[-1][:MAX_VALUE_CHARS]
        return json.dumps(out, ensure_ascii=True, default=str)


def configure(log_format: str = "text", level: int = logging.INFO) -> None:
    """Set up the process's log once: our format on stderr, the SDK's per-request chatter raised to WARNING."""
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
