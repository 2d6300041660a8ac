"""Every refusal says what to do once: the message says what was refused and why, the remedy what to do
instead. A message that already holds its remedy reads it twice ("… hold it, or move it by hand. Hold it, or
move it by hand."), so this walks every raise site in the source and checks its message against the remedy
it is explained with: its own ``remedy=``, else the registry's (which a denial's conversion and the import
report both append)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from notegate.errors import AUDIENCE_REMEDIES, RULES, remedy_for

PACKAGE = Path(__file__).parents[1] / "src" / "notegate"
HOLE = " hole "  # where an f-string's value goes: no clause runs across it


@dataclass(frozen=True)
class Site:
    where: str
    rule: str
    message: str  # the literal words of the message, HOLE where a value goes
    own_remedy: bool  # it passes remedy= (then the registry's is not appended)
    remedy: str | None  # the literal words of that remedy (None when it is computed)
    path_rejected: bool  # a PathRejected: its message is also explained with the registry's remedy


def _constants(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = "…"`` strings, so a message built from a named constant is read whole."""
    found: dict[str, ast.expr] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            found[stmt.targets[0].id] = stmt.value
    return found


def _words(node: ast.expr | None, names: dict[str, ast.expr]) -> str | None:
    """The literal text of a message expression (None when it is not built from literals at all)."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else HOLE for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _words(node.left, names), _words(node.right, names)
        return None if left is None and right is None else (left or HOLE) + (right or HOLE)
    if isinstance(node, ast.Name) and node.id in names:
        return _words(names[node.id], names)
    return None


def _class_rules(trees: list[ast.Module]) -> dict[str, str]:
    """Exception classes that carry their rule as a class attribute (``GateRejected`` -> ``gate-rejected``)."""
    rules: dict[str, str] = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for stmt in node.body:
                    target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
                    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                        target = stmt.targets[0]
                    value = getattr(stmt, "value", None)
                    if isinstance(target, ast.Name) and target.id == "rule" and isinstance(value, ast.Constant):
                        rules[node.name] = value.value
    return rules


def _sites() -> list[Site]:
    parsed = {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(PACKAGE.rglob("*.py"))}
    class_rules = _class_rules(list(parsed.values()))
    sites: list[Site] = []
    for path, tree in parsed.items():
        names = _constants(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            keywords = {kw.arg: kw.value for kw in node.keywords}
            rule_node: ast.expr | None = keywords.get("rule")
            message_node = node.args[0] if node.args else keywords.get("message")
            if name == "deny" and len(node.args) >= 2:
                rule_node, message_node = node.args[0], node.args[1]
            elif name == "PathRejected" and len(node.args) >= 3:
                rule_node, message_node = node.args[1], node.args[2]
            elif rule_node is None and name in class_rules:
                rule_node = ast.Constant(class_rules[name])
            elif rule_node is None or name == "HoldReason":
                continue
            if not (isinstance(rule_node, ast.Constant) and isinstance(rule_node.value, str)):
                continue
            message = _words(message_node, names)
            if message is None:
                continue
            where = f"{path.relative_to(PACKAGE)}:{node.lineno}"
            own = _words(keywords.get("remedy"), names)
            sites.append(Site(where, rule_node.value, message, "remedy" in keywords, own, name == "PathRejected"))
    return sites


SITES = _sites()


def _clauses(text: str) -> list[str]:
    """The instructions a remedy gives, one per clause, case-folded: those of three words or more, and those
    naming a tool (``use inbox_write``) -- a shorter clause ("hold it") says too little to count as a repeat."""
    found = []
    for clause in re.split(r"[.;:,()!?\u2014]|\bhole\b", text.casefold()):
        words = re.findall(r"[\w'/<>-]+", clause)
        if len(words) >= 3 or (len(words) == 2 and any("_" in w for w in words)):
            found.append(" ".join(words))
    return found


def repeats(message: str, remedy: str) -> list[str]:
    """The remedy's instructions the message already gives, word for word (ignoring case and punctuation)."""
    said = " " + " ".join(re.findall(r"[\w'/<>-]+", message.casefold())) + " "
    return [clause for clause in _clauses(remedy) if f" {clause} " in said]


def test_the_walk_finds_the_raise_sites() -> None:
    rules = {site.rule for site in SITES}
    assert {"no-route", "instruction-file-name", "restricted-outside-inbox", "path-reserved-name"} <= rules
    assert len(SITES) > 200


@pytest.mark.parametrize(
    ("message", "remedy", "expected"),
    [
        (
            "capture items have no route; hold it, or move it by hand as a trusted session.",
            "Hold it, or move it by hand as a trusted session.",
            ["or move it by hand as a trusted session"],
        ),
        (
            "… Choose another name: for an inbox item, another project name or title.",
            "Choose another name (another project name or title for an inbox item).",
            ["choose another name"],
        ),
        (
            "x is outside the inbox. … use inbox_write(kind, text, project) with kind log.",
            "Use inbox_write(kind, text, project); a reviewer promotes it.",
            ["use inbox_write"],
        ),
        ("capture items have no route.", "Hold it, or move it by hand as a trusted session.", []),
    ],
)
def test_a_repeat_is_found_word_for_word(message: str, remedy: str, expected: list[str]) -> None:
    assert repeats(message, remedy) == expected


@pytest.mark.parametrize("site", SITES, ids=lambda s: f"{s.rule}@{s.where}")
def test_no_message_repeats_its_remedy(site: Site) -> None:
    """Its own remedy, else the registry's; a path refusal's message meets the registry's remedy too, when a
    denial (``deny(exc.rule, exc.message)``) or the import report carries it on."""
    remedies = [site.remedy or ""] if site.own_remedy else []
    if not site.own_remedy or site.path_rejected:
        remedies.append(remedy_for(site.rule) or "")
    for remedy in remedies:
        assert not repeats(site.message, remedy), (site.where, site.rule, repeats(site.message, remedy))


def test_every_rule_registered_is_checked_somewhere() -> None:
    """The walk reaches the rules raised with a literal message; the rest build theirs from values."""
    checked = {site.rule for site in SITES}
    assert len(checked & set(RULES)) > len(RULES) // 2


def _normal(text: str) -> str:
    return " ".join(re.findall(r"[\w'/<>-]+", text.casefold()))


@pytest.mark.parametrize("site", [s for s in SITES if s.own_remedy and s.remedy], ids=lambda s: s.where)
def test_no_raise_site_restates_the_registered_remedy(site: Site) -> None:
    """A raise site that passes ``remedy=`` in the registry's own words keeps a second copy of the remedy, which
    drifts from the first: pass facts only, and the registry says what to do."""
    registered = remedy_for(site.rule)
    assert registered is None or _normal(site.remedy or "") != _normal(registered), (site.where, site.rule)


def test_a_restated_remedy_is_found() -> None:
    """The check above catches a remedy passed word for word, whatever its case and punctuation."""
    rule = "token-name-taken"
    restated = Site("x.py:1", rule, "taken", True, RULES[rule].upper().replace(",", ""), False)
    with pytest.raises(AssertionError):
        test_no_raise_site_restates_the_registered_remedy(restated)


@pytest.mark.parametrize(
    ("audience", "rule"), [(a, r) for a, rows in AUDIENCE_REMEDIES.items() for r in rows], ids=lambda x: str(x)
)
def test_an_audience_remedy_names_a_registered_rule_in_other_words(audience: str, rule: str) -> None:
    """The registry's fourth column only rewords registered rules (errors.AUDIENCE_REMEDIES): a row that says
    what the registry says is a second copy, and one for an unknown rule is dead."""
    assert rule in RULES
    assert _normal(AUDIENCE_REMEDIES[audience][rule]) != _normal(RULES[rule])
