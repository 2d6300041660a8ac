"""Generate a deterministic, realistic Obsidian-style vault for benchmarks.

Why generated: benchmarks must be repeatable on any machine and must not depend on anyone's private notes.
The same ``--notes`` and ``--seed`` always give the same bytes.  The shape follows a real personal vault:
a folder tree (projects/, areas/, daily/YYYY-MM/, people/, topics/, resources/, archive/), YAML front
matter, headings, lists, wikilinks between notes, a Zipf-like vocabulary (so a few words are in nearly
every note and most are rare), sizes mostly 0.5-4 KB with a long tail, and a ``.obsidian/`` folder that
an import must skip.  A handful of planted rare terms occur in a known, small number of notes, so search
benchmarks can query "rare", "common", "no hit" and "two words" with known answers.

    python bench/genvault.py OUT_DIR --notes 10000 --seed 1
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import sys
import time
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from pathlib import Path

VOCAB_SIZE = 5000
ZIPF_EXPONENT = 1.07
RARE_TERMS = 12  # planted words, each in 1-5 notes
NO_HIT_TERMS = ("zyxquorbnohit", "qqvexlattice")


def _words(text: str) -> list[str]:
    return text.split()


# The head of the vocabulary is real English (the most frequent words in any note); the rest is
# pronounceable pseudo-words, so no real-language stemming or stop-word list changes the results.
ENGLISH_HEAD = _words(
    "the of and to a in is it that for on with as was be this are by not or from at have an but "
    "which they one you all were we when there can been has more if will would their what so about "
    "up out them some could into only other then time these two may first new like use our work "
    "should because each how also after over any most where see need make note project plan review "
    "meeting idea task design issue fix release data server client team change test build deploy "
    "user memory session agent config search index write read commit branch merge docs api model"
)
ONSETS = ("b", "br", "c", "ch", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "pl", "r", "s")
ONSETS += ("sh", "st", "t", "tr", "v", "w", "z", "th", "sk", "sp")
VOWELS = ("a", "e", "i", "o", "u", "ai", "ea", "ou", "io", "y")
CODAS = ("", "", "", "n", "r", "l", "s", "t", "m", "nd", "rk", "st", "x", "ng")
FIRST_NAMES = _words("Ada Alan Barbara Carl Dana Edsger Frances Grace Hedy Ivan Joan Ken Linus Margaret Niklaus Olga")
FIRST_NAMES += _words("Pat Quinn Radia Sophie Tim Ursula Vint Whitfield Xiao Yukihiro Zelda")
LAST_NAMES = _words("Lovelace Turing Liskov Kay Scott Dijkstra Allen Hopper Lamarr Sutherland Clarke Thompson")
LAST_NAMES += _words("Torvalds Hamilton Wirth Perlman Wilson Berners-Lee Goldwasser Cerf Diffie Matsumoto Fitzgerald")

# Folder families and their share of the notes (the rest go to the vault root and private/).
FAMILIES: tuple[tuple[str, float], ...] = (
    ("projects", 0.28),
    ("areas", 0.12),
    ("daily", 0.16),
    ("people", 0.05),
    ("topics", 0.25),
    ("resources", 0.06),
    ("archive", 0.06),
    ("private", 0.01),
)


@dataclass
class VaultSpec:
    """What a benchmark needs to know about a generated vault (returned by :func:`generate`)."""

    out_dir: str
    notes: int
    seed: int
    total_bytes: int
    paths: list[str]
    rare_terms: dict[str, int]  # planted word -> number of notes holding it
    common_terms: list[str]  # words in (nearly) every note
    mid_terms: list[str]  # words in a few percent of the notes
    no_hit_terms: list[str]
    two_word_queries: list[str]
    list_folder: str  # a folder with a realistic number of notes (a project), for list_notes
    list_folder_notes: int
    skipped_files: list[str] = field(default_factory=list)  # files import must skip (.obsidian/...)
    seconds: float = 0.0


def _pseudo_word(rng: random.Random) -> str:
    syllables = rng.choice((2, 2, 2, 3, 3, 4))
    return "".join(rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS) for _ in range(syllables))


def build_vocabulary(rng: random.Random, size: int = VOCAB_SIZE) -> list[str]:
    """English head, then unique pseudo-words; rank order is frequency order."""
    words = list(dict.fromkeys(ENGLISH_HEAD))
    seen = set(words) | set(NO_HIT_TERMS)
    while len(words) < size:
        word = _pseudo_word(rng)
        if 4 <= len(word) <= 14 and word not in seen:
            seen.add(word)
            words.append(word)
    return words


def _rare_words(rng: random.Random, taken: set[str], count: int) -> list[str]:
    """Planted words from a distinct pattern (double 'q' ending) so they never occur by chance."""
    out: list[str] = []
    while len(out) < count:
        word = _pseudo_word(rng) + "qq" + rng.choice("aeiou") + "x"
        if word not in taken and len(word) <= 20:
            taken.add(word)
            out.append(word)
    return out


class _Writer:
    """Text from the Zipf vocabulary; batches random draws because per-word calls are the slow part."""

    def __init__(self, rng: random.Random, vocab: list[str]) -> None:
        self.rng = rng
        self.vocab = vocab
        self.cum = list(itertools.accumulate(1.0 / (rank**ZIPF_EXPONENT) for rank in range(1, len(vocab) + 1)))

    def words(self, n: int) -> list[str]:
        return self.rng.choices(self.vocab, cum_weights=self.cum, k=n)

    def sentence(self, n: int) -> str:
        words = self.words(n)
        return words[0].capitalize() + " " + " ".join(words[1:]) + "."

    def paragraph(self, target_chars: int) -> str:
        rng = self.rng
        out: list[str] = []
        size = 0
        while size < target_chars:
            s = self.sentence(rng.randint(6, 22))
            out.append(s)
            size += len(s) + 1
        return " ".join(out)


def _note_size(rng: random.Random) -> int:
    """Bytes of body: log-normal around 1.6 KB (most notes 0.5-4 KB), plus a 1 % tail of 20-150 KB."""
    if rng.random() < 0.01:
        return rng.randint(20_000, 150_000)
    return int(min(max(rng.lognormvariate(7.35, 0.55), 350), 12_000))


def _slug_title(rng: random.Random, vocab: list[str], low: int, high: int) -> str:
    words = [rng.choice(vocab[60:1500]) for _ in range(rng.randint(low, high))]
    style = rng.random()
    if style < 0.5:
        return " ".join(w.capitalize() for w in words)  # Obsidian style: "Graxon Plinder"
    if style < 0.85:
        return "-".join(words)  # slug style: "graxon-plinder"
    return "_".join(words)


def _plan_paths(rng: random.Random, vocab: list[str], n: int) -> list[str]:
    """Unique (case-insensitively) note paths spread over a realistic folder tree."""
    projects = [_slug_title(rng, vocab, 1, 2) for _ in range(max(4, n // 160))]
    areas = [w.capitalize() for w in rng.sample(vocab[100:800], max(3, min(14, n // 700)))]
    topics = {
        t: [_slug_title(rng, vocab, 1, 1) for _ in range(rng.randint(2, 6))] for t in rng.sample(vocab[60:600], 12)
    }
    project_cum = list(itertools.accumulate(1.0 / rank for rank in range(1, len(projects) + 1)))
    people = [f"{f} {last}" for f in FIRST_NAMES for last in LAST_NAMES]
    rng.shuffle(people)
    day = date(2025, 12, 31)
    out: list[str] = []
    seen: set[str] = set()

    def add(path: str) -> bool:
        key = path.casefold()
        if key in seen:
            return False
        seen.add(key)
        out.append(path)
        return True

    weights = [w for _, w in FAMILIES]
    families = [f for f, _ in FAMILIES]
    root_quota = max(3, n // 200)
    for _ in range(root_quota):
        while not add(f"{_slug_title(rng, vocab, 1, 3)}.md"):
            pass
    while len(out) < n:
        family = rng.choices(families, weights=weights)[0]
        title = _slug_title(rng, vocab, 1, 4)
        if family == "projects":
            # Skewed (1/rank): a few big projects, many small ones.
            project = rng.choices(projects, cum_weights=project_cum)[0]
            sub = rng.choice(("", "", "", "meetings/", "design/", "notes/"))
            path = f"projects/{project}/{sub}{title}.md"
        elif family == "areas":
            path = f"areas/{rng.choice(areas)}/{title}.md"
        elif family == "daily":
            path = f"daily/{day:%Y-%m}/{day:%Y-%m-%d}.md"
            day -= timedelta(days=1)
        elif family == "people":
            name = people.pop() if people else title
            path = f"people/{name}.md"
        elif family == "topics":
            topic = rng.choice(list(topics))
            path = f"topics/{topic}/{rng.choice(topics[topic])}/{title}.md"
        elif family == "resources":
            path = f"resources/{rng.choice(('books', 'articles', 'talks', 'tools'))}/{title}.md"
        elif family == "archive":
            path = f"archive/{rng.randint(2015, 2024)}/{title}.md"
        else:
            path = f"private/{title}.md"
        add(path)
    return out


def _front_matter(rng: random.Random, path: str, vocab: list[str], created: date) -> str:
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    tags = sorted(set(rng.choices(vocab[60:400], k=rng.randint(1, 4))))
    return f"---\ntitle: {title}\ntags: [{', '.join(tags)}]\ncreated: {created.isoformat()}\n---\n\n"


def _body(rng: random.Random, w: _Writer, path: str, target: int, links: list[str], planted: list[str]) -> str:
    title = path.rsplit("/", 1)[-1].removesuffix(".md")
    parts = [f"# {title}\n"]
    size = len(parts[0])
    section = 0
    while size < target:
        if section and rng.random() < 0.5:
            heading = f"## {w.sentence(rng.randint(2, 5)).rstrip('.')}\n"
            parts.append(heading)
            size += len(heading)
        kind = rng.random()
        if kind < 0.7:
            block = w.paragraph(rng.randint(180, 700))
        elif kind < 0.9:
            block = "\n".join(f"- {w.sentence(rng.randint(3, 10))}" for _ in range(rng.randint(2, 6)))
        elif kind < 0.95:
            block = "- [ ] " + w.sentence(rng.randint(3, 8)) + "\n- [x] " + w.sentence(rng.randint(3, 8))
        else:
            block = "```python\n" + "\n".join(f"{a} = {b}({c})" for a, b, c in (w.words(3) for _ in range(3))) + "\n```"
        if links and rng.random() < 0.35:
            block += f" See [[{rng.choice(links)}]]."
        parts.append(block + "\n")
        size += len(block) + 1
        section += 1
    if planted:
        parts.insert(min(2, len(parts)), " ".join(planted) + " " + w.sentence(8) + "\n")
    if links:
        parts.append("Related: " + ", ".join(f"[[{link}]]" for link in links[:3]) + "\n")
    return "\n".join(parts)


def generate(out_dir: Path, notes: int = 10_000, seed: int = 1) -> VaultSpec:
    """Write the vault under ``out_dir`` (which must not exist or be empty) and describe it."""
    started = time.perf_counter()
    rng = random.Random(seed)
    vocab = build_vocabulary(rng)
    writer = _Writer(rng, vocab)
    paths = _plan_paths(rng, vocab, notes)
    rare = _rare_words(rng, set(vocab), RARE_TERMS)
    # Each planted word goes into 1..5 chosen notes (never private/, which restricted callers cannot see).
    public = [i for i, p in enumerate(paths) if not p.startswith("private/")]
    planted: dict[int, list[str]] = {}
    rare_counts: dict[str, int] = {}
    for k, word in enumerate(rare):
        holders = rng.sample(public, min(len(public), 1 + k % 5))
        rare_counts[word] = len(holders)
        for i in holders:
            planted.setdefault(i, []).append(word)
    stems = [p.rsplit("/", 1)[-1].removesuffix(".md") for p in paths]
    out_dir.mkdir(parents=True, exist_ok=True)
    if any(out_dir.iterdir()):
        raise SystemExit(f"{out_dir} is not empty")
    made_dirs: set[Path] = set()
    total = 0
    day0 = date(2019, 1, 1)
    for i, path in enumerate(paths):
        links = [stems[j] for j in rng.sample(range(len(paths)), k=min(len(paths), rng.randint(0, 4))) if j != i]
        created = day0 + timedelta(days=rng.randint(0, 7 * 365))
        text = _front_matter(rng, path, vocab, created) + _body(
            rng, writer, path, _note_size(rng), links, planted.get(i, [])
        )
        data = text.encode("utf-8")
        target = out_dir / path
        if target.parent not in made_dirs:
            target.parent.mkdir(parents=True, exist_ok=True)
            made_dirs.add(target.parent)
        target.write_bytes(data)
        total += len(data)
    obsidian = out_dir / ".obsidian"
    obsidian.mkdir()
    (obsidian / "app.json").write_text(json.dumps({"alwaysUpdateLinks": True, "newFileLocation": "folder"}))
    (obsidian / "workspace.json").write_text(json.dumps({"main": {"type": "split", "children": []}}))
    project_dirs: dict[str, int] = {}
    for p in paths:
        if p.startswith("projects/"):
            folder = "/".join(p.split("/")[:2])
            project_dirs[folder] = project_dirs.get(folder, 0) + 1
    # A mid-sized project: big enough to page through, small enough to be a typical listing.
    ranked = sorted(project_dirs.items(), key=lambda kv: (-kv[1], kv[0]))
    list_folder, list_count = ranked[min(1, len(ranked) - 1)]
    mid = vocab[300:305]
    return VaultSpec(
        out_dir=str(out_dir),
        notes=len(paths),
        seed=seed,
        total_bytes=total,
        paths=paths,
        rare_terms=rare_counts,
        common_terms=["the", vocab[5]],
        mid_terms=mid,
        no_hit_terms=list(NO_HIT_TERMS),
        two_word_queries=[f"{vocab[150]} {vocab[400]}", f"{rare[0]} {vocab[0]}", f"{vocab[900]} {vocab[1800]}"],
        list_folder=list_folder,
        list_folder_notes=list_count,
        skipped_files=[".obsidian/app.json", ".obsidian/workspace.json"],
        seconds=time.perf_counter() - started,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", action="store_true", help="print the whole spec (with every path) as JSON")
    args = parser.parse_args(argv)
    spec = generate(args.out_dir, args.notes, args.seed)
    if args.json:
        json.dump(asdict(spec), sys.stdout, indent=1)
        print()
        return 0
    print(f"{spec.notes} notes, {spec.total_bytes / 1e6:.1f} MB in {spec.out_dir} ({spec.seconds:.2f} s)")
    print("rare terms (word: notes):", ", ".join(f"{w}: {n}" for w, n in spec.rare_terms.items()))
    print("common terms:", ", ".join(spec.common_terms))
    print("mid terms:", ", ".join(spec.mid_terms))
    print("no-hit terms:", ", ".join(spec.no_hit_terms))
    print("two-word queries:", " | ".join(spec.two_word_queries))
    print(f"list folder: {spec.list_folder} ({spec.list_folder_notes} notes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
