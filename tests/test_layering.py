"""The layout shows the architecture: one table says which layer may import which, and a test holds every
module of the package to it (shared/DESIGN.md §4: doors call services; services call the store, index,
state and policy; policy and the safety gates are pure).

This is the only purity test: the pure layer (policy, the safety gates, the vault's paths, fence, lines,
front matter and formats) imports only the allow-listed standard library and the pure third-party parsers,
never uses a relative import, calls no I/O or dynamic code, and reads no clock or environment. The Unicode
tables sit below everything: they import nothing of the package."""

from __future__ import annotations

import ast
import functools
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).parents[1] / "src" / "notegate"

#: Which layer each module belongs to: the longest matching prefix wins.
LAYER_OF: dict[str, str] = {
    "notegate.errors": "pure",
    "notegate.settings": "pure",
    "notegate.globs": "pure",
    "notegate.network": "pure",  # the default host and port, the loopback names: constants only
    "notegate.strictjson": "pure",  # strict JSON (no repeated key, no NaN): the gate, contracts, the backup manifest
    "notegate.asgibody": "pure",  # a body read once, handed on: the middlewares that read a body first
    "notegate.policyfile": "pure",
    "notegate.policy": "pure",  # the package: every decision, re-exported by its __init__
    "notegate.policy.decision": "pure",  # Decision, allow, deny, Action
    "notegate.policy.vocab": "pure",  # Tier and ClientClass, declared once
    "notegate.policy.names": "pure",  # instruction-file and hidden names, folded
    "notegate.policy.settings": "pure",  # the Policy values and the doctor's questions about them
    "notegate.policy.caller": "pure",  # Caller, fixed connectors, tiers, hosts, metrics, connections
    "notegate.policy.notes": "pure",  # the note door: decide(), inbox, two-step, quotas
    "notegate.policy.oauth": "pure",  # redirect URIs, registration, elevation, grants
    "notegate.policy.gitdoor": "pure",  # incoming commits, pushes, provenance, the server's fetch
    "notegate.policy.contracts": "pure",  # machine contracts, health values, backups and restores
    "notegate.policy.console": "pure",  # which console actions need a fresh passkey step-up
    "notegate.policy.livesync": "pure",  # the LiveSync gate: routes, bodies, device tokens
    "notegate.policy.tools": "pure",  # the tools gateway: pins, mount fields, which mounted tools a caller sees
    "notegate.policy.container": "pure",  # the argument vector that runs a pinned container image
    "notegate.tools.settings": "config",  # the [tools] rows and their resolved values
    "notegate.policy.members": "pure",  # membership: seed and rows, invite, removal, a caller's person
    "notegate.policy.oidc": "pure",  # the ID token's azp, the step-up through the provider
    "notegate.policy.files": "pure",  # one file (mode, path, size, content) and one change's counts, every door
    "notegate.policy.plan": "pure",  # the commit planner: a change -> a Plan (verdicts, bookkeeping) or a Refusal
    "notegate.policy.tally": "pure",  # the planner fed one path at a time (the git door, and plan() itself)
    "notegate.safety": "pure",
    "notegate.safety.unicode_tables": "tables",  # the one copy of the Unicode data: depends on nothing
    "notegate.vault.paths": "pure",
    "notegate.vault.fence": "pure",
    "notegate.vault.frontmatter": "pure",
    "notegate.vault.formats": "pure",
    "notegate.vault.lines": "pure",
    "notegate.vault.linediff": "pure",  # the unified diff of a pure append, without difflib's matcher
    "notegate.vault.held": "pure",
    "notegate.vault.ordered": "pure",  # the listing's sorted paths and the walks that page through them
    "notegate.vault.query": "pure",  # search's query language, row columns and snippets (string work)
    "notegate.vault.marks": "pure",  # search: words written with marks the index folds, kept as written
    "notegate.vault.fusion": "pure",  # search by meaning: the rank fusion of the keyword and the meaning lists
    "notegate.vault.meaning_files": "pure",  # search by meaning: the model files' names, digests and place
    "notegate.vault.llama_bpe": "pure",  # search by meaning: the model's tokenizer (byte-fallback BPE)
    "notegate.vault.notefields": "pure",  # a note's title, aliases, headings, tags, language (search's parts)
    "notegate.vault.wordforms": "pure",  # word forms: Snowball stems, a note's language
    "notegate.vault.commits": "pure",  # the server's commit messages and trailers, built in one place
    "notegate.vault.listing": "pure",  # the store's listing of main in memory (copy-on-write maps, ranges)
    "notegate.vault.baseparse": "pure",  # Bases' expression language: text to a tree (linear, bounded)
    "notegate.vault.basexpr": "pure",  # Bases' values and the bounded evaluator over one file's facts
    "notegate.vault.basefuncs": "pure",  # Bases' functions and fields over the evaluator's values
    "notegate.vault.basesummary": "pure",  # a view's summaries: the help's defaults and the base's own
    "notegate.vault.bases": "pure",  # a .base file read (bounded safe YAML) and a view planned to rows
    "notegate.vault": "pure",  # the package itself
    "notegate.sqlite": "storage",
    "notegate.postgres": "storage",
    "notegate.state": "storage",
    "notegate.vault.store": "storage",
    "notegate.vault.storebase": "storage",  # the store's refs, limits, records and refusals (logs)
    "notegate.vault.history": "storage",  # the store's reads and history (a VaultStore mixin)
    "notegate.vault.commit": "storage",  # the write lock, group commit and pushes (a VaultStore mixin)
    "notegate.vault.fetching": "storage",  # the vetted fetch and convergence (a VaultStore mixin)
    "notegate.vault.maintenance": "storage",  # repacks, roll-ups, fsck (a VaultStore mixin)
    "notegate.vault.trees": "storage",  # git trees read and built (reads git objects)
    "notegate.vault.bundles": "storage",  # backups as git bundles (runs git)
    "notegate.vault.index": "storage",
    "notegate.vault.indexrows": "storage",  # the index's rows read back: paths at their blobs, last commits (SQL)
    "notegate.vault.rowreader": "storage",  # a big catch-up's rows read in a child process (runs one)
    "notegate.vault.meaning": "storage",  # search by meaning: the vectors file, the model, the background embedder
    "notegate.vault.meaning_rows": "storage",  # search by meaning: the vectors in memory (numpy), their snapshots
    "notegate.vault.meaning_installed": "config",  # search by meaning: is it installed (stat calls only)
    "notegate.vault.meaning_model": "storage",  # search by meaning: the model read from its files, their install
    "notegate.vault.names": "storage",  # exact naming: the names table of the search index
    "notegate.vault.ranked": "storage",  # the ranked statements of a search (a SearchIndex mixin)
    "notegate.vault.hits": "storage",  # a search's hits: snippets and parts of those kept (a SearchIndex mixin)
    "notegate.vault.bulk": "storage",  # the importer's pack of blobs (writes git objects)
    "notegate.vault.objects": "storage",  # a group commit's objects as bytes (reads git trees)
    "notegate.vault.filepool": "storage",  # empty files made ahead for the packs (makes files)
    "notegate.vault.converge": "storage",  # what the origin lost of main, re-applied on its tip (reads git trees)
    "notegate.vault.durable": "storage",  # what a write flushes before it is acknowledged (fsync, libgit2 option)
    "notegate.vault.refwrite": "storage",  # a ref moved with git's lock-file protocol (writes ref files)
    "notegate.config": "config",
    "notegate.models.config": "config",
    "notegate.oidcconfig": "config",  # the [oidc.NAME] tables
    "notegate.models": "models",
    "notegate.auth": "auth",
    "notegate.services": "services",
    "notegate.services.results": "pure",  # the notes service's answers: plain frozen values
    "notegate.contracts": "services",  # the built-in machine contracts: plans run by services/contracts.py
    "notegate.vault.layout": "config",  # the default layout and the config `notegate init` writes
    "notegate.doors": "doors",
    "notegate.livesync": "doors",  # the LiveSync door: the gate (ASGI), device keys, the Setup URI
    "notegate.livesync.settings": "config",  # the [livesync] table, read by load_config
    "notegate.livesync.documents": "pure",  # LiveSync's document format, read and written (the bridge's codec)
    "notegate.tools": "services",  # the tools gateway: sealing, tokens, installs, upstreams (issue 32)
    "notegate.tools.app": "doors",  # the tools process's ASGI app
    "notegate.tools.proxy": "doors",  # the MCP door's proxy to the tools process
    "notegate.hooks": "hooks",
    "notegate.sync": "services",
    "notegate.cli": "cli",
    "notegate.doctor": "cli",  # a side program like the CLI: it looks at every layer's files
    "notegate.doctor.syncers": "pure",  # what a syncer's marker is: data and two pure functions
    "notegate.doctor.result": "pure",
    "notegate": "cli",  # the package's __init__
}

#: Layer -> the layers it may import (its own included).
MAY_IMPORT: dict[str, set[str]] = {
    "tables": {"tables"},
    "pure": {"tables", "pure"},
    "storage": {"tables", "pure", "storage"},
    "config": {"tables", "pure", "config"},
    "models": {"tables", "pure", "config", "models"},
    "auth": {"tables", "pure", "storage", "config", "auth"},
    "services": {"tables", "pure", "storage", "config", "models", "auth", "services"},
    "doors": {"tables", "pure", "config", "auth", "services", "doors"},
    "hooks": {"tables", "pure", "config", "models", "hooks"},
    "cli": {"tables", "pure", "storage", "config", "models", "auth", "services", "doors", "hooks", "cli"},
}
#: Layers held to the pure rules below (no I/O, no clock, allow-listed imports only).
PURE_LAYERS = {"tables", "pure"}

#: The few edges across the table, each with its reason.
EXCEPTIONS: dict[tuple[str, str], str] = {
    # The reflector reads Claude Code / Codex transcripts with the hooks' pure parser (no I/O in it).
    ("notegate.services.reflect", "notegate.hooks.transcript"): "pure transcript parser",
}

#: What pure modules may import from outside the package: no file system, process, network or database.
PURE_STDLIB = {
    "__future__",
    "base64",
    "binascii",
    "bisect",
    "calendar",  # month lengths for Bases' date arithmetic (monthrange: pure)
    "collections",
    "copy",
    "dataclasses",
    "difflib",  # the diff a write is answered with (vault/linediff.py): string work
    "datetime",
    "enum",
    "functools",
    "heapq",
    "html",
    "itertools",
    "json",
    "math",
    "operator",
    "re",
    "string",
    "typing",
    "unicodedata",
    "hashlib",
    "hmac",
    "textwrap",
    "importlib.resources",  # the output gate's shipped schemas (package data); not import_module
}
#: yaml: the safe loader only (notegate.vault.bases bounds it), a parser with no I/O of its own. Stemmer:
#: PyStemmer's Snowball stemmers (word forms), pure string work.
PURE_THIRD_PARTY = {
    "jsonschema",
    "markdown_it",
    "mdit_py_plugins",
    "re2",
    "unicodedata2",
    "pydantic",
    "yaml",
    "Stemmer",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    name = ".".join(parts)
    return name.removesuffix(".__init__")


def _layer(module: str) -> str:
    best = max((p for p in LAYER_OF if module == p or module.startswith(p + ".")), key=len)
    return LAYER_OF[best]


@functools.cache
def _tree(path: Path) -> ast.Module:
    """Each module is parsed once per run: the three checks below walk the same tree."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> set[str]:
    tree = _tree(path)
    found: set[str] = set()
    package = _module_name(path).rsplit(".", 0 if path.name == "__init__.py" else 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                found.add(".".join([*base, node.module] if node.module else base))
            else:
                found.add(node.module or "")
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def _pure_import_allowed(imported: str) -> bool:
    top = imported.split(".")[0]
    return top in PURE_THIRD_PARTY or any(imported == m or imported.startswith(m + ".") for m in PURE_STDLIB)


def _layer_violations(module: str, imports: set[str]) -> list[str]:
    layer = _layer(module)
    found = []
    for imported in sorted(imports):
        if imported.startswith("notegate"):
            target = _layer(imported)
            if target not in MAY_IMPORT[layer] and (module, imported) not in EXCEPTIONS:
                found.append(f"{module} ({layer}) may not import {imported} ({target})")
        elif layer in PURE_LAYERS and not _pure_import_allowed(imported):
            found.append(f"pure module {module} imports {imported}")
    return found


@pytest.mark.parametrize("path", MODULES, ids=lambda p: _module_name(p))
def test_every_import_follows_the_layer_table(path: Path) -> None:
    assert _layer_violations(_module_name(path), _imports(path)) == []


FORBIDDEN_IN_PURE = {"open", "eval", "exec", "compile", "__import__", "globals", "input", "breakpoint", "print"}
#: Attributes that read a clock or the environment (``datetime.now()``, ``time.time()``, ``os.environ``...):
#: pure code takes ``now`` as a parameter instead.
CLOCK_AND_ENVIRONMENT = {"now", "utcnow", "today", "time", "monotonic", "perf_counter", "environ", "getenv"}


def _impurities(source: str | ast.Module) -> list[str]:
    """What makes a module impure, beyond its imports: I/O or dynamic-code names, clock or environment
    reads, and relative imports (they hide what is imported)."""
    found = []
    for node in ast.walk(ast.parse(source) if isinstance(source, str) else source):
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_IN_PURE:
            found.append(f"line {node.lineno}: uses {node.id}")
        elif isinstance(node, ast.Attribute) and node.attr in CLOCK_AND_ENVIRONMENT:
            found.append(f"line {node.lineno}: reads .{node.attr}")
        elif isinstance(node, ast.ImportFrom) and node.level:
            found.append(f"line {node.lineno}: relative import")
    return found


PURE_MODULES = [p for p in MODULES if _layer(_module_name(p)) in PURE_LAYERS]


@pytest.mark.parametrize("path", PURE_MODULES, ids=_module_name)
def test_pure_modules_call_no_io_or_dynamic_code(path: Path) -> None:
    assert _impurities(_tree(path)) == [], _module_name(path)


@pytest.mark.parametrize(
    "module",
    [
        "notegate.policy",
        "notegate.policy.decision",
        "notegate.policy.names",
        "notegate.policy.settings",
        "notegate.policy.caller",
        "notegate.policy.notes",
        "notegate.policy.oauth",
        "notegate.policy.gitdoor",
        "notegate.policy.contracts",
        "notegate.policy.console",
        "notegate.policy.livesync",
        "notegate.policy.files",
        "notegate.policy.plan",
        "notegate.policy.tally",
        "notegate.safety.floor",
        "notegate.safety.outputgate",
        "notegate.safety.secrets",
        "notegate.safety.unicode_tables",
        "notegate.vault.paths",
        "notegate.vault.fence",
        "notegate.vault.lines",
        "notegate.vault.frontmatter",
        "notegate.vault.formats",
        "notegate.vault.formats.sections",
    ],
)
def test_the_pure_core_is_in_the_pure_layers(module: str) -> None:
    """The modules the five hand-written purity tests used to cover are all held to the pure rules."""
    assert _layer(module) in PURE_LAYERS
    assert any(_module_name(p) == module for p in PURE_MODULES)


def test_the_table_names_only_existing_modules_and_layers() -> None:
    names = {_module_name(p) for p in MODULES}
    for prefix in LAYER_OF:
        assert any(n == prefix or n.startswith(prefix + ".") for n in names), prefix
    assert set(LAYER_OF.values()) == set(MAY_IMPORT)
    for module, imported in EXCEPTIONS:
        assert module in names and imported in names


def test_the_checker_catches_a_forbidden_edge(tmp_path: Path) -> None:
    """The test above can fail: a door importing the store directly is caught."""
    assert _layer("notegate.doors.mcp") == "doors" and _layer("notegate.vault.store") == "storage"
    assert "storage" not in MAY_IMPORT["doors"]
    assert "os" not in PURE_STDLIB and "subprocess" not in PURE_STDLIB and "sqlite3" not in PURE_STDLIB
    assert sys.version_info >= (3, 11)
    assert _layer_violations("notegate.doors.mcp", {"notegate.vault.store"}) != []


@pytest.mark.parametrize(
    ("module", "imported"),
    [
        ("notegate.vault.formats.log", "os"),  # file system
        ("notegate.vault.formats", "subprocess"),
        ("notegate.safety.floor", "sqlite3"),
        ("notegate.safety.outputgate", "importlib"),  # import_module: dynamic code
        ("notegate.policy", "notegate.state"),  # pure -> storage
        ("notegate.safety.unicode_tables", "notegate.errors"),  # the tables depend on nothing
        ("notegate.vault.lines", "notegate.services.notes"),
    ],
)
def test_the_checker_catches_an_impure_import(module: str, imported: str) -> None:
    assert _layer_violations(module, {imported}) != []


@pytest.mark.parametrize(
    "source",
    [
        "from datetime import datetime\nx = datetime.now()\n",
        "import time\nx = time.time()\n",
        "import os\nx = os.environ\n",
        "x = open('f')\n",
        "print('x')\n",
        "from . import y\n",
    ],
)
def test_the_checker_catches_impure_code(source: str) -> None:
    assert _impurities(source) != []


#: The recipe's commit steps, and who may ask for them: the server's recipe (``commit_as``) and ``notegate sync``.
_RECIPE_STEPS = {"run_plan", "trial_commit"}


@functools.cache
def _calls_by_function(path: Path) -> tuple[tuple[str, ast.Call], ...]:
    """Every call of ``path`` with the function holding it (``Class.method`` or ``function``; a nested function's
    calls are its outer function's), read in one walk and kept: the commit tests ask each module several times."""
    found: list[tuple[str, ast.Call]] = []
    for node in _tree(path).body:
        methods = node.body if isinstance(node, ast.ClassDef) else [node]
        for fn in methods:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                name = f"{node.name}.{fn.name}" if fn is not node else fn.name
                found.extend((name, call) for call in ast.walk(fn) if isinstance(call, ast.Call))
    return tuple(found)


def _where_called(path: Path, wanted) -> set[str]:
    """Each function of ``path`` (``Class.method`` or ``function``) holding a call that ``wanted(call)`` picks."""
    return {name for name, call in _calls_by_function(path) if wanted(call)}


def _method_call(*names: str, min_args: int = 0):
    def wanted(call: ast.Call) -> bool:
        return (
            isinstance(call.func, ast.Attribute)
            and call.func.attr in names
            and len(call.args) + len(call.keywords) >= min_args
        )

    return wanted


def test_every_commit_goes_through_the_one_recipe() -> None:
    """The recipe is the only place a commit is made (DESIGN.md §4), for every door and for ``notegate sync``.
    Raw git makes one in two modules only -- the store's group commit (as bytes for its pack,
    ``objects.commit_bytes``) and a workstation clone's ``create_commit`` -- and their commit methods (the store's
    ``commit``, the clone's ``commit_changes``) are called from services/recipe.py only: by the two targets of
    :func:`run_plan`, one for each place a commit lands, and by ``run_plan`` itself (``target.commit``)."""
    raw = {
        _module_name(p): _where_called(p, _method_call("create_commit", "commit_bytes"))
        for p in MODULES
        if _where_called(p, _method_call("create_commit", "commit_bytes"))
    }
    assert raw == {
        "notegate.vault.commit": {"GroupCommits._build_chain"},
        "notegate.sync.workclone": {"WorkClone.commit_changes"},
    }, raw
    makers = {
        _module_name(p): found
        for p in MODULES
        if (
            found := _where_called(p, _method_call("commit", min_args=3))
            | _where_called(p, _method_call("commit_changes"))
        )
    }
    assert makers == {
        "notegate.services.recipe": {"WriteRecipe._commit_checked", "CloneTarget.commit", "run_plan", "trial_commit"}
    }, makers


#: The whole-change decisions: how many files a change deletes, empties and adds, and the verdict on them.
_CHANGE_DECISIONS = {"count_deletions", "decide_change_size", "decide_commit_size", "decide_range_size"}


def _calls(path: Path, names: set[str], *, bare: bool = False) -> list[int]:
    """Lines where ``path`` calls one of ``names`` (as a bare name, or also as an attribute)."""
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else ""
            if not bare and isinstance(func, ast.Attribute):
                name = func.attr
            if name in names:
                found.append(node.lineno)
    return found


def test_a_commit_is_decided_only_by_the_planner() -> None:
    """The planner (policy/plan.py and its ``Tally``, policy/tally.py, over policy/files.py) decides whether a
    change may be committed, for every door: the recipe asks it (``plan_commit``), sync asks it for
    credentials and the git door's validator for the rest, and that validator (sync/incoming.py: the
    pre-receive hook, the fetch, sync) only reads facts from git and hands them to the planner's ``Tally``
    -- every file's decision, every count and its verdict; ``plan`` counts with the same ``Tally``.
    Nothing else decides a file of a change, counts a change or judges its size.  (The recipe's
    ``decide_content``, a per-file pre-check some doors ask before they state a change, still calls
    ``decide_file`` itself; it is the recipe's to route through the planner.)"""
    deciders = {_module_name(p) for p in MODULES if _calls(p, _CHANGE_DECISIONS)}
    assert deciders == {"notegate.policy.files", "notegate.policy.tally"}, deciders
    file_deciders = {_module_name(p) for p in MODULES if _calls(p, {"decide_file"})}
    assert file_deciders <= {"notegate.policy.tally", "notegate.services.recipe"}, file_deciders
    planners = {_module_name(p) for p in MODULES if _calls(p, {"plan", "credential_refusals", "Tally"}, bare=True)}
    assert planners <= {
        "notegate.policy.plan",
        "notegate.services.recipe",
        "notegate.sync.daemon",
        "notegate.sync.incoming",
    }, planners


def test_sync_makes_a_commit_only_where_it_was_judged() -> None:
    """``notegate sync`` makes its commits with the recipe, never by itself: ``plan_local`` runs the planner's
    plan (``run_plan``; a change the planner refused becomes a trial commit the validator reads and that never
    lands), and the replay of commits already judged runs the plan of their net change, judged whole again
    before it is pushed.  The server's recipe (``commit_as``) is the only other caller of ``run_plan``."""
    callers = {
        _module_name(p): found
        for p in MODULES
        if (found := {f"{step}:{fn}" for step in _RECIPE_STEPS for fn in _where_called(p, _bare_call(step))})
    }
    assert callers == {
        "notegate.services.recipe": {"run_plan:WriteRecipe.commit_as"},
        "notegate.sync.daemon": {
            "run_plan:Syncer.plan_local",
            "trial_commit:Syncer.plan_local",
            "run_plan:Syncer._replay_planned",
        },
    }, callers
    daemon = PACKAGE / "sync" / "daemon.py"
    assert not _where_called(daemon, _method_call("commit_changes", "create_commit", "commit"))


def _bare_call(name: str):
    return lambda call: isinstance(call.func, ast.Name) and call.func.id == name


#: The one pair of modules that import each other, on purpose: a Bases expression's evaluator calls its
#: functions, and the functions evaluate their arguments (mutual recursion, split in two modules of one job
#: each; basexpr binds basefuncs last, at the end of the module).
KNOWN_CYCLES = [{"notegate.vault.basexpr", "notegate.vault.basefuncs"}]


def _runtime_edges(path: Path) -> set[str]:
    """The notegate modules ``path`` imports when it runs (at its top or inside a function), with the names
    ``from a import b`` brings resolved to the module ``a.b`` where one exists; imports only a type checker
    reads (``if TYPE_CHECKING:``) are left out: they never run."""
    names = {_module_name(p) for p in MODULES}
    typing_only = {
        id(child)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"
        for child in ast.walk(node)
    }
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in names else node.module)
    return found & names


def _cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan's, iterative: no recursion limit)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(group)
    return groups


def test_no_modules_import_each_other() -> None:
    """No circle of imports in src/, even through a function-local import (the lab's runner and its scenario
    were one: the stack they share is lab/stack.py now; the runtime and the disk-space check were another:
    where an environment's files live is services/envdirs.py).  A circle hides which module is the lower."""
    edges = {_module_name(p): _runtime_edges(p) - {_module_name(p)} for p in MODULES}
    assert sorted(map(sorted, _cycles(edges))) == sorted(map(sorted, KNOWN_CYCLES))


def test_the_cycle_check_finds_a_circle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert _cycles(edges) == [{"a", "b", "c"}]
