"""A small relevance test set: a generated ~200-note corpus and queries whose first results are named.

Why: "search works" is a ranking claim, and a ranking claim needs known answers.  The corpus is filler
text (deterministic pseudo-words) with a few planted notes per query, and rivals built to beat a naive
ranking: short notes that repeat both words of a phrase far apart (bm25 loves them), and notes that repeat
one word many times.  The right answers are long notes that hold the phrase once.  Each query names the
notes that must come first; the last test measures recall@10 over the whole set.  Measured once against
the ranking before the tiers (all words, else any word, by bm25): recall@10 0.38, the right notes first
for 7 of the 18 queries; now 1.0 and 18 of 18.

Searches go through the notes service (the path every door takes) on a real git vault and FTS5 index.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from notegate.config import load_config
from notegate.policy import Caller
from notegate.services.notes import NotesService
from notegate.services.runtime import Runtime
from notegate.services.vaultinit import init_directory
from notegate.vault.store import Author, Change

TRUSTED = Caller(login="owner", display_name="Owner", client="laptop", client_class="workstation", tier="trusted")
RESTRICTED = Caller(login="phone", display_name="Phone", client="chat", client_class="hosted", tier="restricted")
FILLER_NOTES = 162
RIVALS = 12  # more than a top 10: a ranking that prefers them loses the right answers altogether
SYLLABLES = ("ka", "lo", "mi", "nu", "pe", "ro", "si", "tu", "va", "ze", "bo", "da", "fi", "gu", "ha")


def _filler_vocabulary(rng: random.Random) -> list[str]:
    return sorted({"".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))) for _ in range(600)})


def _filler(rng: random.Random, vocab: list[str], words: int) -> str:
    out = []
    for _ in range(words // 12 + 1):
        out.append(" ".join(rng.choice(vocab) for _ in range(12)).capitalize() + ".")
    return " ".join(out)


def corpus() -> dict[str, str]:
    """The notes: filler, then the planted answers and their rivals (see the module docstring)."""
    rng = random.Random(12)
    vocab = _filler_vocabulary(rng)
    notes: dict[str, str] = {}
    for i in range(FILLER_NOTES):
        folder = ("projects/alpha", "projects/beta", "areas/home", "daily/2026-11", "topics/misc")[i % 5]
        notes[f"{folder}/note-{i:03d}.md"] = f"# Note {i}\n\n{_filler(rng, vocab, rng.randint(60, 400))}\n"

    def long(*middle: str) -> str:  # a long note holding its planted text once, in the middle
        return f"{_filler(rng, vocab, 500)}\n\n{' '.join(middle)}\n\n{_filler(rng, vocab, 500)}\n"

    # 1. a two-word phrase: two long notes hold it; short rivals hold both words apart, many times.
    notes["projects/alpha/q3.md"] = "# Q3\n\n" + long("We agreed the release plan for the quarter.")
    notes["projects/beta/roadmap.md"] = "# Roadmap\n\n" + long("The release plan slips a week.")
    for k in range(RIVALS):
        notes[f"topics/misc/rival-{k}.md"] = f"# Rival {k}\n\nrelease {_filler(rng, vocab, 8)} plan. " * 3
    for k in range(3):
        notes[f"topics/misc/release-only-{k}.md"] = "# Changelog\n\n" + "release notes release " * 6
    # 2. a three-word phrase, with a note that holds the three words apart.
    notes["areas/home/deploy.md"] = "# Deploy\n\n" + long("We switched to blue green deployment last spring.")
    notes["areas/home/colours.md"] = "# Colours\n\nblue walls, green door; deployment of paint next week.\n"
    # 3. an exact phrase (quoted): only the notes with the words together.
    notes["daily/2026-11/2026-11-02.md"] = "# 2026-11-02\n\n" + long("Spent the day on a merge conflict in main.")
    notes["daily/2026-11/2026-11-03.md"] = "# 2026-11-03\n\nmerge the branch; no conflict today. merge merge.\n"
    # 4. a title outranks the body.
    notes["topics/misc/lighthouse.md"] = "# Lighthouse\n\n" + long("keeper logs")
    notes["topics/misc/coast.md"] = "# Coast\n\n" + long("we walked to the lighthouse at dusk")
    # 5. a prefix: the words starting with 'hand'.
    notes["handoffs/notegate.md"] = "# Handoff\n\nWhere it stopped: search tiers.\n"
    notes["topics/misc/tools.md"] = "# Tools\n\n" + long("a handbook on how to handle a handsaw")
    # 6. diacritics fold: 'cafe menu' finds 'Café menu'.
    notes["areas/home/café.md"] = "# Café\n\n" + long("The Café menu changes on Mondays.")
    # 7. words joined by punctuation are a phrase: 'e-mail' finds 'e-mail' and 'e mail'.
    notes["areas/home/contact.md"] = "# Contact\n\n" + long("Send an e-mail to the office.")
    # 8. a path and title that hold the phrase, the body does not.
    notes["daily/standup-notes.md"] = "# Standup Notes\n\n" + long("who did what")
    notes["topics/misc/meeting.md"] = "# Meeting\n\nstandup at nine; notes later. standup. notes.\n"
    # 9. no note holds both words: any-word fallback.
    notes["topics/misc/kangaroo.md"] = "# Kangaroo\n\nA kangaroo hops.\n"
    notes["topics/misc/submarine.md"] = "# Submarine\n\nA yellow submarine.\n"
    # 10. a private note holding the phrase: trusted callers only; an inbox item: only when asked.
    notes["private/diary.md"] = "# Diary\n\n" + long("my release plan is secret")
    notes["inbox/captures/idea.md"] = "# Idea\n\nA release plan idea from the phone.\n"
    return notes


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory):
    cfg = init_directory(tmp_path_factory.mktemp("relevance") / "vault")
    rt = Runtime(load_config(cfg))
    env = rt.environment(None)
    files = corpus()
    env.store.commit(
        [Change(p, t.encode()) for p, t in files.items()],
        {p: env.store.blob_id(p) for p in files},
        Author("Test", "owner"),
        "relevance corpus",
        on_advance=env.on_advance,
    )
    yield NotesService(rt)
    rt.close()


@dataclass(frozen=True)
class Case:
    query: str
    first: tuple[str, ...]  # these notes, in any order, are the first hits
    matched: str | None = None  # the tier of the first hit
    caller: Caller = TRUSTED
    args: dict = field(default_factory=dict)
    only: bool = False  # the first notes are the only hits
    absent: tuple[str, ...] = ()  # never among the hits


INBOX = {"include_inbox": True}
PHRASE = ("projects/alpha/q3.md", "projects/beta/roadmap.md")
CASES = [
    Case("release plan", (*PHRASE, "private/diary.md"), "phrase"),  # the phrase beats short rivals
    Case("release plan", PHRASE, "phrase", caller=RESTRICTED, absent=("private/diary.md",)),
    Case("RELEASE   Plan", (*PHRASE, "private/diary.md"), "phrase"),  # case and spacing do not matter
    Case("release plan", ("projects/beta/roadmap.md",), "phrase", args={"folder": "projects/beta"}),
    Case(
        "release plan", ("inbox/captures/idea.md", *PHRASE), "phrase", caller=RESTRICTED, args={"include_inbox": True}
    ),
    Case("release pl*", (*PHRASE, "private/diary.md"), "phrase"),  # a prefix inside the phrase
    Case("release -plan", (*PHRASE, "private/diary.md"), "phrase"),  # '-' is no NOT operator
    Case("blue green deployment", ("areas/home/deploy.md",), "phrase"),
    Case('"merge conflict"', ("daily/2026-11/2026-11-02.md",), "phrase", only=True),  # exact phrase only
    Case("lighthouse", ("topics/misc/lighthouse.md",), "all-words"),  # the title outranks the body
    Case("title:lighthouse", ("topics/misc/lighthouse.md",), "any-word"),  # no column filter: two words
    Case("hand*", ("handoffs/notegate.md",), "all-words"),  # ranked: the name and title first
    Case("cafe menu", ("areas/home/café.md",), "phrase"),
    Case("e-mail", ("areas/home/contact.md",), "phrase"),
    Case("standup notes", ("daily/standup-notes.md",), "phrase"),
    Case("kangaroo submarine", ("topics/misc/kangaroo.md", "topics/misc/submarine.md"), "any-word", only=True),
    Case('blue (green) "deployment"^ *', ("areas/home/deploy.md",), "phrase"),  # FTS5 syntax is just words
    Case('NEAR("release plan")', (*PHRASE, "private/diary.md"), "any-word"),  # NEAR is a word, not an operator
]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.query}|{c.caller.tier}|{sorted(c.args)}" for c in CASES])
def test_the_named_notes_come_first(svc: NotesService, case: Case) -> None:
    result = svc.search_notes(case.caller, case.query, limit=10, **case.args)
    paths = [h.path for h in result.hits]
    assert set(paths[: len(case.first)]) == set(case.first), paths
    assert result.hits[0].matched == case.matched
    if case.only:
        assert len(paths) == len(case.first), paths
    assert not set(case.absent) & set(paths)
    assert all(h.score > 0 for h in result.hits), [h.score for h in result.hits]


def test_hits_come_tier_by_tier_and_each_note_once(svc: NotesService) -> None:
    result = svc.search_notes(TRUSTED, "release plan", limit=50)
    tiers = [h.matched for h in result.hits]
    assert tiers == sorted(tiers, key=["phrase", "all-words", "any-word"].index)
    assert len({h.path for h in result.hits}) == len(result.hits)
    by_tier = {t: {h.path for h in result.hits if h.matched == t} for t in set(tiers)}
    assert by_tier["phrase"] == {*PHRASE, "private/diary.md"}
    assert by_tier["all-words"] == {f"topics/misc/rival-{k}.md" for k in range(RIVALS)}
    # notes with only 'release' are not shown next to notes holding both words: no fallback was needed
    assert "any-word" not in by_tier and result.matched == "all-words" and result.fallback is None


def test_a_filled_limit_never_falls_back(svc: NotesService) -> None:
    result = svc.search_notes(TRUSTED, "release plan", limit=3)
    assert {h.path for h in result.hits} == {*PHRASE, "private/diary.md"}
    assert result.matched == "phrase" and result.fallback is None


def test_no_note_with_every_word_says_so(svc: NotesService) -> None:
    result = svc.search_notes(TRUSTED, "kangaroo submarine")
    assert result.matched == "any-word"
    assert result.fallback == "no note holds every word; these hold only some of them."
    assert svc.search_notes(TRUSTED, "zzqqxx").matched is None


def test_a_phrase_hit_snippet_shows_the_phrase(svc: NotesService) -> None:
    hit = svc.search_notes(TRUSTED, "release plan", folder="projects/alpha").hits[0]
    assert "the **release** **plan** for the quarter" in hit.snippet


def test_recall_at_10_over_the_set(svc: NotesService) -> None:
    """Every named note is in its query's top 10: recall@10 is 1.0 over the whole set."""
    found = wanted = 0
    for case in CASES:
        top = {h.path for h in svc.search_notes(case.caller, case.query, limit=10, **case.args).hits}
        wanted += len(case.first)
        found += len(top & set(case.first))
    assert found / wanted == 1.0


def test_the_corpus_is_the_size_it_claims() -> None:
    assert 190 <= len(corpus()) <= 210


def write_corpus(out: Path) -> None:  # pragma: no cover - for looking at the corpus by hand
    for path, text in corpus().items():
        (out / path).parent.mkdir(parents=True, exist_ok=True)
        (out / path).write_text(text, encoding="utf-8")
