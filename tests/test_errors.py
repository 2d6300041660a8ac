"""One error family with one registry of rule names: every rule raised anywhere is registered (with what to
do instead), nothing registered is dead, and every refusal reads "Refused [rule]: what. What to do"."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from notegate import errors
from notegate.errors import RULE_FAMILIES, RULES, NotegateError, no_such_note, remedy_for, sentence

PACKAGE = Path(__file__).parents[1] / "src" / "notegate"
RAISERS = {"OutputGateError": 0, "PathRejected": 1}  # exception -> the position of its rule argument


def _rules_in_source() -> dict[str, str]:
    """Every refusal rule the source can raise: rule= keywords, deny(...), class rule attributes, and the
    positional rule of the two exceptions that take one. f-strings count by their literal prefix."""
    found: dict[str, str] = {}
    for path in PACKAGE.rglob("*.py"):
        where = str(path.relative_to(PACKAGE))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            values: list[ast.expr] = []
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name != "HoldReason":  # a floor hold's reason names a floor rule, not a refusal
                    values += [kw.value for kw in node.keywords if kw.arg == "rule"]
                if name == "deny" and node.args:
                    values.append(node.args[0])
                if name in RAISERS and len(node.args) > RAISERS[name]:
                    values.append(node.args[RAISERS[name]])
            elif isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
                    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                        target = stmt.targets[0]
                    if isinstance(target, ast.Name) and target.id == "rule" and stmt.value is not None:
                        values.append(stmt.value)
            for value in values:
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    found.setdefault(value.value, where)
                elif isinstance(value, ast.JoinedStr) and value.values and isinstance(value.values[0], ast.Constant):
                    found.setdefault("prefix:" + value.values[0].value, where)
                elif isinstance(value, ast.JoinedStr):  # f"{stage}-floor:…": its literal parts name the family
                    literal = "".join(v.value for v in value.values if isinstance(v, ast.Constant))
                    found.setdefault("parts:" + literal, where)
    return found


RAISED = _rules_in_source()


@pytest.mark.parametrize("rule", sorted(RAISED))
def test_every_rule_raised_is_registered(rule: str) -> None:
    if rule.startswith("prefix:"):
        assert any(rule[len("prefix:") :].startswith(f) for f in RULE_FAMILIES), (rule, RAISED[rule])
    elif rule.startswith("parts:"):
        literal = rule[len("parts:") :]
        assert any(f.split("-", 1)[-1].rstrip(":") in literal for f in RULE_FAMILIES), (rule, RAISED[rule])
    else:
        assert rule in RULES, f"{rule} (raised in {RAISED[rule]}) is not in errors.RULES"


def test_nothing_registered_is_dead() -> None:
    literal = {r for r in RAISED if not r.startswith(("prefix:", "parts:"))}
    dead = set(RULES) - literal
    assert not dead, f"registered but never raised: {sorted(dead)}"


def test_every_registered_rule_says_what_to_do() -> None:
    for rule, remedy in {**RULES, **RULE_FAMILIES}.items():
        assert remedy.strip() and remedy.rstrip().endswith((".", ")")), rule
    assert remedy_for("schema-invalid:/x") == RULE_FAMILIES["schema-invalid:"]
    assert remedy_for("no-such-rule") is None


def test_a_refusal_without_its_own_remedy_gets_the_registered_one() -> None:
    refusal = NotegateError("the note is too big", rule="note-too-large")
    assert refusal.explain() == "Refused [note-too-large]: the note is too big. " + RULES["note-too-large"]
    own = NotegateError("x", rule="note-too-large", remedy="Do this instead.")
    assert own.explain().endswith("Do this instead.")


def test_no_such_note_has_one_shape() -> None:
    refusal = no_such_note("private/x.md")
    assert refusal.rule == "no-such-note"
    assert refusal.explain() == "Refused [no-such-note]: no such note: private/x.md. " + RULES["no-such-note"]


#: "Refused [rule]: what and why. What to do instead." -- the two parts are sentences, joined by one space.
SHAPE = re.compile(r"Refused \[[a-z0-9:/_.-]+\]: \S.*?[.!?] \S.*[.!?]", re.DOTALL)

DOUBLED = re.compile(
    r"(?<=\w)[.:;,]\.(?=\s|$)"
)  # "refused.." or "refused:." -- punctuation added on top of punctuation


@pytest.mark.parametrize("rule", sorted({**RULES, **RULE_FAMILIES}))
@pytest.mark.parametrize("message", ["the write was refused", "the write was refused.", "it ends in a colon:"])
def test_every_registered_rule_explains_in_one_shape(rule: str, message: str) -> None:
    text = NotegateError(message, rule=rule + ("x" if rule.endswith(":") else "")).explain()
    assert SHAPE.fullmatch(text), text
    assert not DOUBLED.search(text), text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("no such note", "no such note."),
        ("no such note.", "no such note."),
        ("is it there?", "is it there?"),
        ("over the limit (1 MiB)", "over the limit (1 MiB)."),
        ("  trailing space ", "trailing space."),
        ("a list:", "a list."),
        ("", ""),
    ],
)
def test_sentence_adds_one_period_and_never_doubles_it(raw: str, expected: str) -> None:
    assert sentence(raw) == expected


@given(st.text(max_size=80))
def test_sentence_is_idempotent(raw: str) -> None:
    once = sentence(raw)
    assert sentence(once) == once
    assert not once or once.endswith((".", "!", "?"))


def test_one_exception_family() -> None:
    """Every exception class in the package that a caller can meet derives from NotegateError."""
    roots = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                family = any(
                    b.endswith(("Error", "Rejected", "Denied", "Revision", "Note", "Unavailable"))
                    and b not in {"ValueError", "KeyError", "OSError", "RuntimeError", "TypeError"}
                    for b in bases
                )
                if bases & {"Exception", "RuntimeError", "ValueError", "KeyError", "OSError"} and not family:
                    roots.append(f"{path.relative_to(PACKAGE)}:{node.name}")
    assert set(roots) <= ALLOWED_ROOTS | {"errors/__init__.py:NotegateError"}, roots
    assert errors.NotegateError.__mro__[1] is Exception


#: Internal signals that never leave their module (each is caught and turned into a refusal right there).
ALLOWED_ROOTS = {
    "hooks/__init__.py:_OutOfTime",  # a hook's own deadline: the hook exits quietly
    "hooks/writeback.py:_OutOfTime",
    "hooks/settings.py:SettingsError",  # hooks import no server code: their own small family
    "hooks/mcpclient.py:HookError",
    "sync/daemon.py:_Halt",  # carries a sync stop out of the tick; the tick turns it into its report
    "sync/daemon.py:_Postpone",  # the origin's changes wait for the next tick; reported, not refused
    "doors/mcp/surface.py:_Recursive",  # a self-referring schema: listed as pydantic wrote it, caught right there
    "vault/index.py:_OldRowUnreadable",  # a row's old blob is gone: caught in SearchIndex._apply, which rebuilds
    "vault/commit.py:_OriginMoved",  # a push's negotiation found the origin moved: caught in _push_remote (retry)
    "lab/people.py:_Removed",  # the lab's removed person asked to log in again: caught by the lab's own check
    "services/backup_partial.py:_NoLocks",  # a folder that cannot be locked: caught by the sweep, left alone
    "strictjson.py:_NotStrict",  # a ValueError to the caller by design: each door wraps it in its own refusal
}
