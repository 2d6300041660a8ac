"""Known-item search on a real multilingual vault: does the note a person means come in the top 10?

Why: people search for a note they know is there, by a name it goes by: the text of a link pointing at it,
one of its aliases, one of its headings.  Those names rarely equal the file name (word forms: *Financial
contributions* linked as "financially contribute"), and the note named must outrank long notes that merely
mention the words (issue 33).  This takes such queries from the vault itself and measures recall@10 and
MRR@10 of ``SearchIndex.search`` (in process, every note visible).

The vault: Obsidian's own help vault (github.com/obsidianmd/obsidian-help, ~6,300 notes in ~35 language
folders), checked out or unpacked anywhere; this script downloads nothing.  Its Markdown files are committed
into a throw-away git repository and indexed from there.

Queries (deterministic for ``--seed``; at most ``--per-kind`` of each kind):
  link     ``[[Target|text]]``: ``text`` -> Target, resolved in the linking note's top folder (its language)
           first, then anywhere if the name is unique; texts equal to the target's name are left out
           (they are the exact-name case, counted apart as ``name``);
  alias    each front matter alias -> its note (when no other note has that alias or file name);
  heading  a ``##`` heading that occurs in one note only and is no note's name -> that note;
  name     a target's file name as written in a link -> the target (names one note only);
  rare     a word (five letters or more, no digit) found in one note only -> that note: exact rare tokens
           must not be lost to word forms or field weights.

Variants (``--variant``): ``current`` (the code on PYTHONPATH), ``nostem`` (the same with stemming off:
the fields alone).  Run the code before a change with PYTHONPATH pointing at that checkout.

    python bench/bench_known_item.py VAULT [--per-kind 400] [--seed 1] [--variant current|nostem] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from notegate.vault.index import SearchIndex
from notegate.vault.store import VaultStore

TOP = 10
_LINK = re.compile(r"(?<!!)\[\[([^\[\]|#^]+)(?:#[^\[\]|]*)?\|([^\[\]]+)\]\]")
_BARE = re.compile(r"(?<!!)\[\[([^\[\]|#^]+)(?:#[^\[\]|]*)?\]\]")
_H2 = re.compile(r"^##\s+(.+?)\s*$", re.MULTILINE)
_RARE = re.compile(r"\b[^\W\d_]{5,}\b")
_ALIASES = re.compile(r"^aliases:[ \t]*(?:\[(.*)\]|\n((?:\s*-\s.*\n)+)|(.+))$", re.MULTILINE)


def _key(text: str) -> str:
    return " ".join(text.casefold().split())


def load(vault: Path) -> dict[str, str]:
    texts = {}
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if any(part.startswith(".") for part in rel.split("/")):
            continue
        texts[rel] = path.read_text(encoding="utf-8", errors="replace")
    return texts


def queries(texts: dict[str, str], per_kind: int, seed: int) -> dict[str, list[tuple[str, str]]]:
    by_name: dict[str, list[str]] = {}
    for path in texts:
        by_name.setdefault(_key(path.rsplit("/", 1)[-1].removesuffix(".md")), []).append(path)

    def resolve(target: str, source: str) -> str | None:
        candidates = by_name.get(_key(target.rsplit("/", 1)[-1]), [])
        top = source.split("/", 1)[0]
        local = [c for c in candidates if c.split("/", 1)[0] == top]
        if len(local) == 1:
            return local[0]
        return candidates[0] if len(candidates) == 1 else None

    kinds: dict[str, set[tuple[str, str]]] = {
        "link": set(),
        "alias": set(),
        "heading": set(),
        "name": set(),
        "rare": set(),
    }
    holders: dict[str, set[str]] = {}
    for path, text in texts.items():
        for word in set(_RARE.findall(text.casefold())):
            holders.setdefault(word, set()).add(path)
    kinds["rare"] = {(w, next(iter(p))) for w, p in holders.items() if len(p) == 1}
    heading_holders: dict[str, set[str]] = {}
    alias_holders: dict[str, set[str]] = {}
    for path, text in texts.items():
        for target, label in _LINK.findall(text):
            note = resolve(target.strip(), path)
            label = label.strip()
            if note is None or not label:
                continue
            if _key(label) == _key(target.rsplit("/", 1)[-1]):
                if len(by_name[_key(label)]) == 1:  # a name several notes share names none of them
                    kinds["name"].add((label, note))
            else:
                kinds["link"].add((label, note))
        for target in _BARE.findall(text):
            note = resolve(target.strip(), path)
            if note is not None and len(by_name[_key(target.strip().rsplit("/", 1)[-1])]) == 1:
                kinds["name"].add((target.strip().rsplit("/", 1)[-1], note))
        for heading in _H2.findall(text):
            heading_holders.setdefault(_key(heading), set()).add(path)
        if text.startswith("---\n"):
            head = text[: text.find("\n---", 4) + 1]
            for flow, block, scalar in _ALIASES.findall(head):
                raw = flow.split(",") if flow else [b.strip()[2:] for b in block.splitlines()] if block else [scalar]
                for alias in raw:
                    alias = alias.strip().strip("\"'")
                    if alias:
                        alias_holders.setdefault(_key(alias), set()).add(path)
                        kinds["alias"].add((alias, path))
    kinds["alias"] = {(a, p) for a, p in kinds["alias"] if len(alias_holders[_key(a)]) == 1}
    for path, text in texts.items():
        for heading in _H2.findall(text):
            # a heading that is also a note's name names that note, not the one holding the heading
            if len(heading_holders[_key(heading)]) == 1 and len(heading) >= 4 and _key(heading) not in by_name:
                kinds["heading"].add((heading, path))
    rng = random.Random(seed)
    chosen = {}
    for kind, pairs in kinds.items():
        ordered = sorted(pairs)
        rng.shuffle(ordered)
        chosen[kind] = ordered[:per_kind]
    return chosen


def build(texts: dict[str, str], work: Path) -> tuple[SearchIndex, VaultStore, float]:
    origin = work / "origin"
    for rel, text in texts.items():
        target = origin / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git = ["git", "-C", str(origin), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "vault"], check=True)
    store = VaultStore.create("bench", work / "repo.git", str(origin))
    index = SearchIndex(work / "index.sqlite", lambda _p: (False, False), "bench")
    start, cpu = time.perf_counter(), time.process_time()
    index.catch_up(store)
    print(f"build CPU in process {time.process_time() - cpu:.1f} s")
    return index, store, time.perf_counter() - start


def evaluate(index: SearchIndex, chosen: dict[str, list[tuple[str, str]]]) -> dict[str, dict]:
    results = {}
    for kind, pairs in chosen.items():
        ranks, times, misses = [], [], []
        for query, target in pairs:
            start = time.perf_counter()
            hits = index.search(query, limit=TOP, include_private=True, include_inbox=True)
            times.append((time.perf_counter() - start) * 1000)
            paths = [h.path for h in hits]
            rank = paths.index(target) + 1 if target in paths else None
            ranks.append(rank)
            if rank is None:
                misses.append((query, target, paths[:3]))
        n = len(ranks) or 1
        results[kind] = {
            "queries": len(ranks),
            "recall@10": round(sum(r is not None for r in ranks) / n, 3),
            "mrr@10": round(sum(1 / r for r in ranks if r) / n, 3),
            "p50_ms": round(statistics.median(times), 2) if times else 0,
            "misses": misses[:15],
        }
    every = [results[k] for k in ("link", "alias", "heading", "name") if k in results]  # known items; not rare
    total = sum(k["queries"] for k in every) or 1
    results["all"] = {
        "queries": total,
        "recall@10": round(sum(k["recall@10"] * k["queries"] for k in every) / total, 3),
        "mrr@10": round(sum(k["mrr@10"] * k["queries"] for k in every) / total, 3),
    }
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("vault", type=Path)
    parser.add_argument("--per-kind", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--variant", choices=("current", "nostem"), default="current")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--misses", action="store_true", help="print some misses of each kind")
    args = parser.parse_args()
    if args.variant == "nostem":
        from notegate.vault import query

        query.language_of = lambda *_a: None  # no forms in the index, none in the index's languages: fields alone
    texts = load(args.vault)
    chosen = queries(texts, args.per_kind, args.seed)
    work = Path(tempfile.mkdtemp(prefix="known-item-"))
    try:
        index, _store, seconds = build(texts, work)
        results = evaluate(index, chosen)
        size = (work / "index.sqlite").stat().st_size
        index.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(texts)} notes, build {seconds:.1f} s, index {size / 1e6:.1f} MB, variant {args.variant}")
    for kind, r in results.items():
        extra = f"  p50 {r['p50_ms']} ms" if "p50_ms" in r else ""
        print(f"{kind:8} n={r['queries']:4}  recall@10 {r['recall@10']:.3f}  MRR@10 {r['mrr@10']:.3f}{extra}")
        if args.misses:
            for miss in r.get("misses", []):
                print("    miss:", miss)
    if args.json:
        args.json.write_text(json.dumps({"build_s": seconds, "size": size, "results": results}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
