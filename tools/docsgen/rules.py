"""The refusal reference, from the one registry every door looks rules up in (``notegate.errors.RULES`` and
``RULE_FAMILIES``): each rule's name and what the caller can do instead, grouped as the registry's own
``# -- heading`` comments group them."""

from __future__ import annotations

import ast
import io
import tokenize
from pathlib import Path

from docsgen import GENERATED_NOTE, code, text


def groups() -> list[tuple[str, list[str]]]:
    """(heading, rule names) in registry order. The headings are the ``# -- …`` comments inside ``RULES``'s
    literal; a rule before any heading falls under "General", one added to the registry at run time last."""
    import notegate.errors.rules as errors

    source = Path(errors.__file__).read_text(encoding="utf-8")
    tree = ast.parse(source)
    literal = next(
        node.value
        for node in tree.body
        if isinstance(node, ast.AnnAssign | ast.Assign)
        and any(
            getattr(t, "id", None) == "RULES"
            for t in ([node.target] if isinstance(node, ast.AnnAssign) else node.targets)
        )
    )
    headings = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        inside = literal.lineno <= token.start[0] <= literal.end_lineno
        if token.type == tokenize.COMMENT and token.string.startswith("# --") and inside:
            headings[token.start[0]] = token.string.removeprefix("# --").strip().rstrip(":")
    found: list[tuple[str, list[str]]] = [("General", [])]
    lines = sorted(headings)
    for key in literal.keys:
        name = ast.literal_eval(key)
        above = [line for line in lines if line < key.lineno]
        heading = headings[above[-1]] if above else "General"
        if found[-1][0] != heading:
            found.append((heading, []))
        found[-1][1].append(name)
    walked = {name for _, names in found for name in names}
    found.append(("Registered elsewhere", [name for name in errors.RULES if name not in walked]))
    return [group for group in found if group[1]]


def page() -> str:
    from notegate.errors import RULE_FAMILIES, RULES

    out = [
        "# Refusals",
        "",
        GENERATED_NOTE.format(source="the refusal registry `notegate.errors.RULES`"),
        "Every refusal, from every door, reads **Refused [rule]: what and why. What to do instead.** The rule "
        "is one of the names below; the door adds what happened, and the remedy comes from this registry "
        "unless the refusal itself names a better one. Scripts match the rule, never the prose.",
        "",
    ]
    for heading, names in groups():
        out += [f"## {heading[0].upper() + heading[1:]}", "", "| rule | what to do instead |", "| --- | --- |"]
        out += [f"| {code(name)} | {text(RULES[name])} |" for name in names]
        out.append("")
    out += [
        "## Rule families",
        "",
        "Some rules are a family and a detail (a schema pointer, a gate, a floor rule): "
        "`schema-invalid:/items/0/text`, say. The family is registered:",
        "",
        "| family | what it means |",
        "| --- | --- |",
    ]
    out += [f"| {code(family + '…')} | {text(remedy)} |" for family, remedy in RULE_FAMILIES.items()]
    return "\n".join(out) + "\n"


def facts() -> list[tuple[str, list[str]]]:
    from notegate.errors import RULE_FAMILIES, RULES

    return [(name, [name, remedy]) for name, remedy in {**RULES, **RULE_FAMILIES}.items()]
