"""The configuration reference, from the settings rows the loader itself checks a ``notegate.toml`` against
(``notegate.config``'s tables, ``notegate.policyfile.POLICY_SETTINGS`` and ``notegate.models.config``): each
key's type, default, help line and, for the policy, the functions that enforce it."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from docsgen import GENERATED_NOTE, code, text

#: Every table of settings rows, as (module, attribute). ``tests/docs/test_reference.py`` finds every
#: module-level table of ``Setting`` rows in the source and fails when one is missing here.
TABLES = (
    ("notegate.config", "SERVER_SETTINGS"),
    ("notegate.config", "STATE_SETTINGS"),
    ("notegate.config", "ENVIRONMENT_SETTINGS"),
    ("notegate.config", "DEVICE_SETTINGS"),
    ("notegate.policyfile", "POLICY_SETTINGS"),
    ("notegate.models.config", "MODEL_SETTINGS"),
    ("notegate.livesync.settings", "LIVESYNC_SETTINGS"),
    ("notegate.tools.settings", "TOOLS_SETTINGS"),
    ("notegate.oidcconfig", "OIDC_SETTINGS"),
)

#: What each TOML table is for: one line of prose per section (the rows say the rest).
SECTIONS = {
    "server": "How the server listens and what a connection, a request and a stranger may cost.",
    "state": "Where the state database lives (tokens, OAuth clients and grants, sessions, inbox authorship, "
    "holds, the audit).",
    "environments.NAME": "One table per environment (one vault with one owner). Other environments are simply "
    "not there for a credential of this one.",
    "devices.NAME": "One table per trusted device (its name is the device header's `kid`: lowercase letters, "
    "digits, `-`, `_`). Deleting a table revokes that device at once.",
    "policy": "The one rule source every enforcer reads: the server, the git hook, `notegate sync` and the "
    "doctor. Each row names the functions that enforce it (`notegate doctor` imports each).",
    "livesync": "The LiveSync gate (Obsidian on every device): where CouchDB is, which database holds the "
    "notes, and what one device's request may cost.",
    "tools": "The tools gateway: where the tools process listens and what one upstream call may cost.",
    "oidc.NAME": "One table per OpenID Connect provider people may log in with instead of a passkey: who "
    "it is, which environments it serves, and which amr/acr values prove a second factor for a step-up.",
    "models": "The model providers the scheduled jobs ask (review, reflect, the hooks' write-back). API keys "
    "come from the environment only, never from this file.",
}


@dataclass(frozen=True)
class Section:
    name: str
    rows: tuple  # of notegate.settings.Setting


def sections() -> list[Section]:
    found = []
    for module, attribute in TABLES:
        table = getattr(import_module(module), attribute)
        if isinstance(table, dict):
            found += [Section(name, tuple(rows)) for name, rows in table.items()]
        else:
            name = {"SERVER": "server", "STATE": "state", "ENVIRONMENT": "environments.NAME"}.get(
                attribute.removesuffix("_SETTINGS"), attribute.removesuffix("_SETTINGS").lower()
            )
            name = {"device": "devices.NAME", "oidc": "oidc.NAME"}.get(name, name)
            found.append(Section(name, tuple(table)))
    return found


#: Python's types as TOML names them (the reader writes TOML, not Python).
_TOML_KINDS = {str: "string", int: "integer", float: "float", bool: "boolean", list: "array", dict: "table"}


def kind_text(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_TOML_KINDS.get(k, k.__name__) for k in kinds)


def default_text(setting) -> str:
    """The default as the TOML a config would hold; ``required`` when the row's own check refuses it."""
    from notegate.vault.layout import _toml, render_toml

    if setting.check is not None and setting.check(setting.default):
        return "required"
    if isinstance(setting.default, dict):
        return "\n".join(render_toml({setting.name: setting.default}).splitlines()[1:])
    return _toml(setting.default)


def page() -> str:
    out = [
        "# Configuration",
        "",
        GENERATED_NOTE.format(source="the settings rows `notegate.toml` is checked against at start"),
        "`notegate.toml` is the deployment config and the policy file in one. Every key is listed here; a key "
        "that is not, or a value of the wrong type, stops start-up with a message naming the key and what it "
        "expects (a misspelt `privte = [...]` must never expose private notes by being ignored). "
        "`notegate init` writes a config whose every policy key holds its default, commented.",
        "",
    ]
    for section in sections():
        out += [f"## [{section.name}]", ""]
        intro = SECTIONS.get(section.name)
        if intro:
            out += [intro, ""]
        for setting in section.rows:
            out += [f"### {section.name}.{setting.name}", ""]
            default = default_text(setting)
            facts = [f"type {code(kind_text(setting.kind))}"]
            if "\n" in default:
                facts.append("default below")
            else:
                facts.append("**required**" if default == "required" else f"default {code(default)}")
            out += [text(setting.help), "", "- " + ", ".join(facts)]
            if setting.enforced_by:
                out.append("- enforced by " + ", ".join(code(f) for f in setting.enforced_by))
            out.append("")
            if "\n" in default:
                out += ["```toml", f"[{section.name}.{setting.name}]", default, "```", ""]
    return "\n".join(out)


def facts() -> list[tuple[str, list[str]]]:
    found = []
    for section in sections():
        for setting in section.rows:
            default = default_text(setting)
            strings = [setting.help, kind_text(setting.kind), *setting.enforced_by]
            strings += default.splitlines() if "\n" in default else [default]
            found.append((f"{section.name}.{setting.name}", strings))
    return found
