"""Search by meaning (issue 33): recall of keyword-only vs hybrid search on a real multilingual vault, and the
cost of the meaning part at 10,000 notes.

Two parts:

- ``relevance``: a real public vault (the Obsidian help vault: 6,289 notes in 37 language folders), read from
  a git directory you fetched (``--repo``; blobs missing from a partial copy are skipped), imported with
  ``notegate import``.  Four query sets, each run keyword-only and hybrid (the same ``NotesService`` call,
  the environment's meaning index taken away for the first), recall@10 and MRR@10:
  known-item (link texts of the vault that differ from the target's name, ``[[Target|text]]``, the target
  resolved in the linking note's language folder), paraphrase (``meaning_queries.py``: other words than the
  note's, 8 languages), exact-title (a note's file name) and rare-token (a word found in 1-2 notes).
- ``scale``: a generated 10,000-note vault (genvault): the time to embed every note (the background
  catch-up, timed to idle), then ``notegate serve`` with the meaning on: search p50 over MCP (the SDK client,
  bench_notes' query mix: rare, common, mid, no-hit and two-word terms) and the server's peak RSS (VmHWM);
  the same with the meaning off, for comparison.

    python bench/bench_meaning.py relevance --repo PATH/TO/obsidian-help.git [--known 300] [--json OUT]
    python bench/bench_meaning.py scale [--notes 10000] [--calls 200] [--json OUT]

The machine is shared: every figure is one run on a busy 2-core machine; read them as noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_notes  # sibling scripts, not a package
import genvault
from meaning_queries import PARAPHRASES
from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory

CALLER = Caller(login="owner", display_name="Owner", client="bench", client_class="workstation", tier="trusted")
TOP = 10
LINK = re.compile(r"\[\[([^\]|#^]+)(?:[#^][^\]|]*)?\|([^\]]+)\]\]")
PERMALINK = re.compile(r"^permalink:\s*(\S+)", re.M)
WORD = re.compile(r"[^\W\d_]{6,}", re.UNICODE)


# ------------------------------------------------------------ the vault and its query sets
def extract(repo_dir: Path, out: Path) -> dict[str, str]:
    """Every ``.md`` file of the repository's HEAD tree, written under ``out``; blobs or trees missing from
    the copy (a partial clone) are skipped."""
    import pygit2

    repo = pygit2.Repository(str(repo_dir))
    texts: dict[str, str] = {}

    def walk(tree, prefix: str) -> None:
        for entry in tree:
            path = prefix + entry.name
            if entry.type_str == "tree":
                try:
                    walk(repo[entry.id], path + "/")
                except KeyError:
                    continue
            elif entry.name.endswith(".md"):
                try:
                    data = repo[entry.id].data
                except KeyError:
                    continue
                (out / path).parent.mkdir(parents=True, exist_ok=True)
                (out / path).write_bytes(data)
                texts[path] = data.decode("utf-8", errors="replace")

    walk(repo.revparse_single("HEAD").peel(pygit2.Tree), "")
    return texts


def stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".md")


def known_items(texts: dict[str, str], count: int, seed: int) -> list[tuple[str, set[str]]]:
    """Link texts that differ from their target's name, with the target (see the module docstring)."""
    by_stem: dict[str, list[str]] = collections.defaultdict(list)
    for path in texts:
        by_stem[stem(path).casefold()].append(path)
    seen: set[tuple[str, str]] = set()
    items: list[tuple[str, set[str]]] = []
    for source, text in sorted(texts.items()):
        top = source.split("/")[0]
        for target, label in LINK.findall(text):
            name = target.strip().rsplit("/", 1)[-1].removesuffix(".md").casefold()
            candidates = by_stem.get(name, [])
            same = [c for c in candidates if c.split("/")[0] == top]
            goal = same[0] if len(same) == 1 else candidates[0] if len(candidates) == 1 else None
            label = label.strip()
            if goal is None or label.casefold() == name or len(label) < 3 or (label.casefold(), goal) in seen:
                continue
            seen.add((label.casefold(), goal))
            items.append((label, {goal}))
    random.Random(seed).shuffle(items)
    return items[:count]


def paraphrases(texts: dict[str, str]) -> list[tuple[str, set[str]]]:
    by_link: dict[tuple[str, str], str] = {}
    for path, text in texts.items():
        found = PERMALINK.search(text[:600])
        if found:
            by_link[(path.split("/")[0], found.group(1))] = path
    out = []
    for lang, query, links in PARAPHRASES:
        goals = {by_link[(lang, link)] for link in links if (lang, link) in by_link}
        if goals:
            out.append((query, goals))
    return out


def exact_titles(texts: dict[str, str], count: int, seed: int) -> list[tuple[str, set[str]]]:
    paths = sorted(texts)
    random.Random(seed).shuffle(paths)
    return [(stem(p), {p}) for p in paths[:count]]


def rare_tokens(texts: dict[str, str], count: int, seed: int) -> list[tuple[str, set[str]]]:
    holders: dict[str, set[str]] = collections.defaultdict(set)
    for path, text in texts.items():
        for word in set(WORD.findall(text.casefold())):
            holders[word].add(path)
    rare = sorted(w for w, h in holders.items() if 1 <= len(h) <= 2)
    random.Random(seed).shuffle(rare)
    return [(w, holders[w]) for w in rare[:count]]


def score(ranked: list[str], truth: set[str]) -> tuple[float, float]:
    """(recall@10, reciprocal rank within the top 10) of one query."""
    top = ranked[:TOP]
    rank = next((i for i, p in enumerate(top) if p in truth), None)
    return (len(set(top) & truth) / min(TOP, len(truth)), 0.0 if rank is None else 1 / (rank + 1))


# ------------------------------------------------------------ the two parts
def enable_meaning(cfg: Path, on: bool = True) -> None:
    text = cfg.read_text()
    text = re.sub(r"(?m)^search_meaning = .*$", f"search_meaning = {'true' if on else 'false'}", text)
    cfg.write_text(text)


def import_dir(cfg: Path, src: Path, paths: list[str]) -> list[str]:
    """``notegate import`` (bench_notes.import_vault): the paths it took (the floor refuses a few names,
    e.g. an ``AGENTS.md``)."""
    spec = types.SimpleNamespace(paths=list(paths))
    bench_notes.import_vault(cfg, src, spec)
    return spec.paths


def embed_all(cfg: Path) -> tuple[int, float]:
    """Open the environment with the meaning on, and time its background catch-up to idle."""
    runtime = Runtime(load_config(cfg))
    try:
        started = time.perf_counter()
        env = runtime.environment(None)
        assert env.meaning is not None
        env.meaning.wait_idle(3600)
        return len(env.meaning.vectors), time.perf_counter() - started
    finally:
        runtime.close()


def relevance(args: argparse.Namespace) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="notegate-bench-meaning-"))
    try:
        texts = extract(args.repo, workdir / "src")
        cfg = init_directory(workdir / "vault")
        taken = set(import_dir(cfg, workdir / "src", list(texts)))
        texts = {p: t for p, t in texts.items() if p in taken}
        enable_meaning(cfg)
        embedded, seconds = embed_all(cfg)
        sets = {
            "known-item": known_items(texts, args.known, args.seed),
            "paraphrase": paraphrases(texts),
            "exact-title": exact_titles(texts, args.titles, args.seed),
            "rare-token": rare_tokens(texts, args.rare, args.seed),
        }
        runtime = Runtime(load_config(cfg))
        try:
            svc = NotesService(runtime)
            env = runtime.environment(None)
            meaning = env.meaning
            rows = {}
            for name, queries in sets.items():
                row = {"queries": len(queries)}
                for mode in ("keyword", "hybrid"):
                    env.meaning = meaning if mode == "hybrid" else None
                    scores = [
                        score([h.path for h in svc.search_notes(CALLER, q, limit=TOP).hits], t) for q, t in queries
                    ]
                    row[mode] = {
                        "recall@10": statistics.fmean(s[0] for s in scores),
                        "mrr@10": statistics.fmean(s[1] for s in scores),
                    }
                rows[name] = row
            env.meaning = meaning
        finally:
            runtime.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"part": "relevance", "notes": len(texts), "embedded": embedded, "embed_seconds": seconds, "sets": rows}


def _paths(svc: NotesService, query: str) -> list[str]:
    return [h.path for h in svc.search_notes(CALLER, query, limit=TOP).hits]


async def _mcp_p50(url: str, token: str, queries: list[str], calls: int) -> float:
    samples = []
    async with bench_notes.McpClient(url, token) as client:
        for query in queries[:10]:  # warm
            await client.call("search_notes", {"query": query, "limit": TOP})
        for i in range(calls):
            started = time.perf_counter()
            await client.call("search_notes", {"query": queries[i % len(queries)], "limit": TOP})
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def scale(args: argparse.Namespace) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="notegate-bench-meaning-"))
    try:
        spec = genvault.generate(workdir / "src", args.notes, args.seed)
        cfg = init_directory(workdir / "vault")
        spec.paths[:] = import_dir(cfg, workdir / "src", spec.paths)
        enable_meaning(cfg)
        embedded, seconds = embed_all(cfg)
        kinds = bench_notes.search_queries(spec)  # bench_notes' mix: rare, common, mid, no-hit, two-word
        queries = [q for i in range(10) for qs in kinds.values() for q in qs[i : i + 1]]
        token = bench_notes.bench_token(cfg, workdir / "token")
        out: dict = {"part": "scale", "notes": args.notes, "embedded": embedded, "embed_seconds": seconds}
        for mode in ("hybrid", "keyword"):
            enable_meaning(cfg, mode == "hybrid")
            server = bench_notes.ServerProcess(cfg, workdir / f"serve-{mode}.log").spawn()
            try:
                deadline = time.monotonic() + 120
                while time.monotonic() < deadline and not bench_notes._port_open(server.port):
                    time.sleep(0.05)
                out[f"{mode}_mcp_search_p50_ms"] = asyncio.run(_mcp_p50(server.url, token, queries, args.calls))
                out[f"{mode}_peak_rss_mb"] = server.peak_rss_mb()
            finally:
                server.stop()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="part", required=True)
    rel = sub.add_parser("relevance")
    rel.add_argument("--repo", type=Path, required=True, help="a git directory of the Obsidian help vault")
    rel.add_argument("--known", type=int, default=300)
    rel.add_argument("--titles", type=int, default=200)
    rel.add_argument("--rare", type=int, default=100)
    sc = sub.add_parser("scale")
    sc.add_argument("--notes", type=int, default=10_000)
    sc.add_argument("--calls", type=int, default=200)
    for p in (rel, sc):
        p.add_argument("--seed", type=int, default=1)
        p.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "true")
    report = relevance(args) if args.part == "relevance" else scale(args)
    text = json.dumps(report, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
