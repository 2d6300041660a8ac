"""Obsidian Bases' functions and fields (Obsidian help, "Functions"), over :mod:`notegate.vault.basexpr`'s
values (pure).

Every function is in one of the tables below; a name outside them is :class:`Unsupported` (found before any
file is evaluated by :func:`check`, so a view says which function it could not run).  Functions that would
put markup or a picture on the page (``html()``, ``image()``, ``icon()``), regular expressions (a pattern
from a note could backtrack for minutes) and ``random()`` (this layer has no randomness) are unsupported on
purpose.  Everything that builds a string or a list checks :data:`MAX_VALUE_LEN`; list methods pay one step
per element.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable
from datetime import datetime

from notegate.vault.basexpr import (
    MAX_VALUE_LEN,
    Context,
    DateValue,
    ExprError,
    FileFacts,
    FileValue,
    LinkValue,
    Node,
    Unsupported,
    _as_date,
    _bounded,
    _duration,
    _equal,
    _eval,
    _number,
    display,
    truthy,
)

__all__ = ["GLOBALS", "METHODS", "call_global", "call_method", "check", "get_field"]

#: Functions Obsidian has that this page refuses to evaluate, with the reason a view shows.
REFUSED = {
    "html": "html() would put markup from the base on the page",
    "image": "image() is not shown on this page",
    "icon": "icons are not shown on this page",
    "random": "random() is not evaluated on this page",
    "matches": "regular expressions are not evaluated on this page",
}
_WORD = re.compile(r"\w+", re.UNICODE)
_MOMENT = re.compile(r"\[[^\]]*\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|m|ss|s|SSS|A|a|.", re.DOTALL)


def _args(ctx: Context, nodes: list[Node]) -> list[object]:
    return [_eval(n, ctx) for n in nodes]


def _text(value: object, what: str) -> str:
    if not isinstance(value, str):
        raise ExprError(f"{what} needs text")
    return value


def _int(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ExprError(f"{what} needs a number")
    return int(value)


def _contains(ctx: Context, hay: object, needle: object) -> bool:
    if isinstance(hay, str):
        return isinstance(needle, str) and needle in hay
    if isinstance(hay, list):
        ctx.step(len(hay))
        return any(_equal(ctx, item, needle) for item in hay)
    return False


def _format(value: DateValue, pattern: str) -> str:
    m = value.moment
    hour12 = m.hour % 12 or 12
    table = {
        "YYYY": f"{m.year:04d}", "YY": f"{m.year % 100:02d}", "MMMM": m.strftime("%B"), "MMM": m.strftime("%b"),
        "MM": f"{m.month:02d}", "M": str(m.month), "DD": f"{m.day:02d}", "D": str(m.day),
        "dddd": m.strftime("%A"), "ddd": m.strftime("%a"), "HH": f"{m.hour:02d}", "H": str(m.hour),
        "hh": f"{hour12:02d}", "h": str(hour12), "mm": f"{m.minute:02d}", "m": str(m.minute),
        "ss": f"{m.second:02d}", "s": str(m.second), "SSS": f"{m.microsecond // 1000:03d}",
        "A": "AM" if m.hour < 12 else "PM", "a": "am" if m.hour < 12 else "pm",
    }  # fmt: skip
    out = []
    for token in _MOMENT.findall(pattern[:200]):
        out.append(token[1:-1] if token.startswith("[") else table.get(token, token))
    return "".join(out)


def _relative(ctx: Context, value: DateValue) -> str:
    seconds = (ctx.at - value.moment).total_seconds()
    ago = seconds >= 0
    seconds = abs(seconds)
    for size, unit in ((31_536_000, "year"), (2_592_000, "month"), (86_400, "day"), (3600, "hour"), (60, "minute")):
        if seconds >= size:
            n = int(seconds // size)
            words = f"{n} {unit}{'s' if n != 1 else ''}"
            return f"{words} ago" if ago else f"in {words}"
    return "just now"


def _is_type(value: object, name: str) -> bool:
    kinds: dict[str, Callable[[object], bool]] = {
        "string": lambda v: isinstance(v, str),
        "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "date": lambda v: isinstance(v, DateValue),
        "list": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
        "link": lambda v: isinstance(v, LinkValue),
        "file": lambda v: isinstance(v, FileValue),
        "null": lambda v: v is None,
    }
    return kinds.get(name.lower(), lambda _v: False)(value)


def _empty(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, str | list | dict):
        return len(value) == 0
    return False


def _sort_key(value: object) -> tuple:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, value, "")
    if isinstance(value, DateValue):
        return (1, value.moment.timestamp() if value.moment.year > 1 else 0, "")
    return (2, 0, display(value).casefold())


def _lambda(ctx: Context, items: list, body: Node, extra: dict[str, object] | None = None) -> list[object]:
    saved = dict(ctx.locals)
    out = []
    try:
        for i, item in enumerate(items):
            ctx.locals.update({"value": item, "index": i, **(extra or {})})
            out.append(_eval(body, ctx))
    finally:
        ctx.locals.clear()
        ctx.locals.update(saved)
    return out


def _reduce(ctx: Context, items: list, nodes: list[Node]) -> object:
    if not nodes:
        raise ExprError("reduce needs an expression")
    acc = _eval(nodes[1], ctx) if len(nodes) > 1 else None
    saved = dict(ctx.locals)
    try:
        for i, item in enumerate(items):
            ctx.locals.update({"value": item, "index": i, "acc": acc})
            acc = _eval(nodes[0], ctx)
    finally:
        ctx.locals.clear()
        ctx.locals.update(saved)
    return acc


def _flat(ctx: Context, items: list) -> list:
    out: list = []
    for item in items:
        ctx.step()
        out.extend(item if isinstance(item, list) else [item])
        _bounded(out)
    return out


def _unique(ctx: Context, items: list) -> list:
    out: list = []
    for item in items:
        ctx.step(len(out) + 1)
        if not any(_equal(ctx, item, kept) for kept in out):
            out.append(item)
    return out


def _round(value: float, digits: int = 0) -> float | int:
    digits = max(0, min(digits, 15))
    scaled = math.floor(value * 10**digits + 0.5) / 10**digits  # JavaScript's Math.round: halves go up
    return int(scaled) if digits == 0 else scaled


def _slice(value: str | list, args: list[object]) -> str | list:
    start = _int(args[0], "slice") if args else 0
    end = _int(args[1], "slice") if len(args) > 1 else None
    return value[start:end]


def _file(ctx: Context, value: object) -> FileValue | None:
    if isinstance(value, FileValue):
        return value
    target = value.target if isinstance(value, LinkValue) else value if isinstance(value, str) else None
    path = ctx.resolve(target) if target else None
    if path is None:
        return None
    if ctx.file.path == path:
        return FileValue(ctx.file)
    if ctx.this is not None and ctx.this.path == path:
        return FileValue(ctx.this)
    return FileValue(FileFacts(path))


def _has_tag(facts_tags: tuple[str, ...], wanted: list[object]) -> bool:
    tags = [t.casefold().lstrip("#") for t in facts_tags]
    for want in wanted:
        w = display(want).casefold().lstrip("#")
        if any(t == w or t.startswith(w + "/") for t in tags):
            return True
    return False


def _in_folder(path: str, folder: object) -> bool:
    name = display(folder).strip("/")
    return not name or path.startswith(name + "/")


def _has_link(ctx: Context, links: tuple[str, ...], other: object) -> bool:
    target = _file(ctx, other)
    wanted = target.facts.path if target is not None else display(other)
    return wanted in links


# -- fields: (type test, name) -> value
def get_field(ctx: Context, value: object, name: str) -> object:
    if isinstance(value, FileValue):
        f = value.facts
        fields: dict[str, Callable[[], object]] = {
            "name": lambda: f.name,
            "basename": lambda: f.basename,
            "path": lambda: f.path,
            "folder": lambda: f.folder,
            "ext": lambda: f.ext,
            "size": lambda: f.size,
            "properties": lambda: dict(f.properties),
            "tags": lambda: list(f.tags),
            "links": lambda: [LinkValue(t) for t in f.links],
            "embeds": lambda: [LinkValue(t) for t in f.embeds],
            "mtime": lambda: DateValue(f.mtime) if f.mtime else None,
            "ctime": lambda: None,  # git keeps no creation time this page reads: shown empty, never guessed
            "file": lambda: value,
        }
        if name not in fields:
            raise Unsupported(f"file.{name} is not known on this page")
        return fields[name]()
    if isinstance(value, DateValue):
        m = value.moment
        parts = {"year": m.year, "month": m.month, "day": m.day, "hour": m.hour, "minute": m.minute}
        parts |= {"second": m.second, "millisecond": m.microsecond // 1000}
        return parts.get(name)
    if isinstance(value, str | list) and name == "length":
        return len(value)
    if isinstance(value, dict):
        return value.get(name)
    if isinstance(value, LinkValue) and name in ("target", "path"):
        return value.target
    return None


def _string_method(ctx: Context, s: str, name: str, a: list[object]) -> object:
    if name == "contains":
        return _contains(ctx, s, a[0] if a else None)
    if name == "containsAll":
        return all(_contains(ctx, s, x) for x in a)
    if name == "containsAny":
        return any(_contains(ctx, s, x) for x in a)
    if name == "startsWith":
        return s.startswith(_text(a[0] if a else None, name))
    if name == "endsWith":
        return s.endswith(_text(a[0] if a else None, name))
    if name in ("lower", "upper", "trim", "reverse", "title"):
        return {"lower": s.lower, "upper": s.upper, "trim": s.strip, "reverse": lambda: s[::-1]}.get(
            name, lambda: _WORD.sub(lambda m: m.group(0)[:1].upper() + m.group(0)[1:].lower(), s)
        )()
    if name == "repeat":
        count = _int(a[0] if a else None, name)
        if count < 0 or count * len(s) > MAX_VALUE_LEN:
            raise ExprError(f"repeat beyond {MAX_VALUE_LEN} characters")
        return s * count
    if name == "replace":
        if len(a) < 2 or not isinstance(a[0], str):
            raise ExprError("replace needs two strings")
        return _bounded(s.replace(a[0], display(a[1])) if a[0] else s)
    if name == "slice":
        return _slice(s, a)
    if name == "split":
        sep = _text(a[0] if a else None, name)
        parts = s.split(sep) if sep else list(s)
        return parts[: _int(a[1], name)] if len(a) > 1 else parts
    raise KeyError(name)


def _list_method(ctx: Context, items: list, name: str, nodes: list[Node]) -> object:
    ctx.step(len(items))
    if name == "filter":
        keep = _lambda(ctx, items, nodes[0]) if nodes else []
        return [item for item, ok in zip(items, keep, strict=False) if truthy(ok)]
    if name == "map":
        return _lambda(ctx, items, nodes[0]) if nodes else []
    if name == "reduce":
        return _reduce(ctx, items, nodes)
    a = _args(ctx, nodes)
    if name == "contains":
        return _contains(ctx, items, a[0] if a else None)
    if name == "containsAll":
        return all(_contains(ctx, items, x) for x in a)
    if name == "containsAny":
        return any(_contains(ctx, items, x) for x in a)
    if name == "join":
        return _bounded((display(a[0]) if a else ",").join(display(v) for v in items))
    if name == "flat":
        return _flat(ctx, items)
    if name == "reverse":
        return items[::-1]
    if name == "slice":
        return _slice(items, a)
    if name == "sort":
        return sorted(items, key=_sort_key)
    if name == "unique":
        return _unique(ctx, items)
    numbers = [n for n in (_number(v) for v in items if not isinstance(v, str)) if n is not None]
    if name in ("sum", "mean", "average", "min", "max"):
        if name == "sum":
            return sum(numbers)
        if not numbers:
            return None
        return {"min": min, "max": max}.get(name, lambda ns: sum(ns) / len(ns))(numbers)
    raise KeyError(name)


def call_method(ctx: Context, value: object, name: str, nodes: list[Node]) -> object:
    if name in REFUSED:
        raise Unsupported(REFUSED[name])
    if name not in METHODS:
        raise Unsupported(f"{name}() is not a Bases function this page knows")
    if isinstance(value, list) and name not in ("isTruthy", "isType", "toString", "isEmpty"):
        return _list_method(ctx, value, name, nodes)
    a = _args(ctx, nodes)
    if name == "isTruthy":
        return truthy(value)
    if name == "isType":
        return _is_type(value, display(a[0]) if a else "")
    if name == "toString":
        return display(value)
    if name == "isEmpty":
        return _empty(value)
    try:
        if isinstance(value, str):
            ctx.step(len(value) >> 10)  # a long string's scan costs in proportion
            return _string_method(ctx, value, name, a)
        if isinstance(value, int | float) and not isinstance(value, bool):
            return _number_method(value, name, a)
        if isinstance(value, DateValue):
            return _date_method(ctx, value, name, a)
        if isinstance(value, FileValue):
            return _file_method(ctx, value, name, a)
        if isinstance(value, LinkValue):
            return _link_method(ctx, value, name, a)
        if isinstance(value, dict):
            return {"keys": lambda: list(value), "values": lambda: list(value.values())}[name]()
    except (KeyError, IndexError):
        pass
    raise ExprError(f"{name}() does not apply to {type(value).__name__}")


def _number_method(n: float | int, name: str, a: list[object]) -> object:
    if name == "abs":
        return abs(n)
    if name in ("ceil", "floor"):
        return int(math.ceil(n) if name == "ceil" else math.floor(n))
    if name == "round":
        return _round(n, _int(a[0], name) if a else 0)
    if name == "toFixed":
        digits = max(0, min(_int(a[0], name) if a else 0, 100))
        return f"{n:.{digits}f}"
    raise KeyError(name)


def _date_method(ctx: Context, d: DateValue, name: str, a: list[object]) -> object:
    if name == "date":
        return DateValue(datetime(d.moment.year, d.moment.month, d.moment.day), False)
    if name == "format":
        return _format(d, display(a[0]) if a else "YYYY-MM-DD")
    if name == "time":
        return d.moment.strftime("%H:%M:%S")
    if name == "relative":
        return _relative(ctx, d)
    raise KeyError(name)


def _file_method(ctx: Context, f: FileValue, name: str, a: list[object]) -> object:
    facts = f.facts
    if name == "asLink":
        return LinkValue(facts.path, display(a[0]) if a else "")
    if name == "hasTag":
        return _has_tag(facts.tags, a)
    if name == "inFolder":
        return _in_folder(facts.path, a[0] if a else "")
    if name == "hasProperty":
        return display(a[0] if a else None) in facts.properties
    if name == "hasLink":
        return _has_link(ctx, facts.links, a[0] if a else None)
    raise KeyError(name)


def _link_method(ctx: Context, link: LinkValue, name: str, a: list[object]) -> object:
    if name == "asFile":
        return _file(ctx, link)
    if name == "linksTo":
        target = _file(ctx, link)
        return target is not None and target.facts.path == ctx.file.path and _has_link(ctx, ctx.file.links, a[0])
    raise KeyError(name)


METHODS = frozenset(
    {
        "isTruthy", "isType", "toString", "isEmpty",
        "contains", "containsAll", "containsAny", "startsWith", "endsWith", "lower", "upper", "trim", "reverse",
        "title", "repeat", "replace", "slice", "split",
        "abs", "ceil", "floor", "round", "toFixed",
        "filter", "map", "reduce", "join", "flat", "sort", "unique", "sum", "mean", "average", "min", "max",
        "date", "format", "time", "relative",
        "asLink", "hasTag", "inFolder", "hasProperty", "hasLink", "asFile", "linksTo", "keys", "values",
    }
)  # fmt: skip


# -- global functions
def _g_if(ctx: Context, nodes: list[Node]) -> object:
    if not nodes:
        raise ExprError("if needs a condition")
    if truthy(_eval(nodes[0], ctx)):
        return _eval(nodes[1], ctx) if len(nodes) > 1 else None
    return _eval(nodes[2], ctx) if len(nodes) > 2 else None


def _g_date(ctx: Context, a: list[object]) -> object:
    found = _as_date(a[0]) if a else None
    if found is None:
        raise ExprError("date() needs YYYY-MM-DD [HH:mm:ss]")
    return found


def _g_number(ctx: Context, a: list[object]) -> object:
    value = a[0] if a else None
    n = _number(value)
    if n is None:
        raise ExprError("not a number")
    return n


def _g_minmax(which: Callable) -> Callable[[Context, list[object]], object]:
    def run(ctx: Context, a: list[object]) -> object:
        numbers = [n for n in (_number(v) for v in a if not isinstance(v, str)) if n is not None]
        return which(numbers) if numbers else None

    return run


def _g_link(ctx: Context, a: list[object]) -> object:
    if not a:
        raise ExprError("link() needs a path")
    target = a[0]
    if isinstance(target, FileValue):
        return LinkValue(target.facts.path, display(a[1]) if len(a) > 1 else "")
    if isinstance(target, LinkValue):
        return LinkValue(target.target, display(a[1]) if len(a) > 1 else target.display)
    text = display(target).strip()
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0]
    return LinkValue(text, display(a[1]) if len(a) > 1 else "")


def _g_contains(ctx: Context, a: list[object]) -> object:
    return len(a) >= 2 and _contains(ctx, a[0], a[1])


_EAGER: dict[str, Callable[[Context, list[object]], object]] = {
    "date": _g_date,
    "duration": lambda ctx, a: _duration(a[0] if a else None) or (_ for _ in ()).throw(ExprError("bad duration")),
    "now": lambda ctx, a: DateValue(ctx.at, True),
    "today": lambda ctx, a: DateValue(datetime(ctx.at.year, ctx.at.month, ctx.at.day), False),
    "number": _g_number,
    "list": lambda ctx, a: a[0] if a and isinstance(a[0], list) else a[:1],
    "link": _g_link,
    "file": lambda ctx, a: _file(ctx, a[0] if a else None),
    "min": _g_minmax(min),
    "max": _g_minmax(max),
    "escapeHTML": lambda ctx, a: html.escape(display(a[0] if a else None)),
    "contains": _g_contains,  # the early beta's global form, still in real vaults: contains(file.path, "x")
    "not": lambda ctx, a: not truthy(a[0] if a else None),
    "empty": lambda ctx, a: _empty(a[0] if a else None),
}
GLOBALS = frozenset({"if", *_EAGER})


def call_global(ctx: Context, name: str, nodes: list[Node]) -> object:
    if name in REFUSED:
        raise Unsupported(REFUSED[name])
    if name == "if":
        return _g_if(ctx, nodes)
    if name not in _EAGER:
        raise Unsupported(f"{name}() is not a Bases function this page knows")
    return _EAGER[name](ctx, _args(ctx, nodes))


def check(node: Node) -> None:
    """Raise :class:`Unsupported` when ``node`` names a function this page does not evaluate (iteratively:
    the tree's nodes once each)."""
    stack = [node]
    while stack:
        current = stack.pop()
        kind = current[0]
        if kind == "call":
            if current[1] in REFUSED:
                raise Unsupported(REFUSED[current[1]])
            if current[1] not in GLOBALS:
                raise Unsupported(f"{current[1]}() is not a Bases function this page knows")
            stack.extend(current[2])
        elif kind == "chain":
            stack.append(current[1])
            for step in current[2]:
                if step[0] == "method":
                    if step[1] in REFUSED:
                        raise Unsupported(REFUSED[step[1]])
                    if step[1] not in METHODS:
                        raise Unsupported(f"{step[1]}() is not a Bases function this page knows")
                    stack.extend(step[2])
                elif step[0] == "index":
                    stack.append(step[1])
        elif kind == "binary":
            stack.append(current[2])
            stack.extend(n for _op, n in current[3])
        elif kind == "unary":
            stack.append(current[2])
        elif kind == "list":
            stack.extend(current[1])
        elif kind == "object":
            stack.extend(n for _k, n in current[1])
