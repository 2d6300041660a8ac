"""Throughput of the floor on ~10 MB of realistic vault text.

Run from the repository root: ``.venv/bin/python bench/bench_floor.py``

The text is generated here (nothing is downloaded): Markdown notes in English with headings, lists, tables,
code fences, wikilinks and ``.md`` links (which exercise the instruction-file anchor), ISO dates, and a share
of Chinese, Japanese, Korean, Arabic, Hindi and Russian lines plus emoji (ZWJ families, flags, keycaps,
VS16), i.e. the legitimate cases the floor must let through. MB/s counts UTF-8 bytes of input.
The floor must manage at least 20 MB/s on the project's 2-core machine; the script exits 1 below that.
"""

from __future__ import annotations

import random
import sys
import time

from notegate.safety.floor import check_item

TARGET_BYTES = 10_000_000
REQUIRED_MB_S = 20.0

_ENGLISH = (
    "The migration finished at 02:14 and the index was rebuilt from the journal without loss.",
    "We agreed to keep the retention window at thirty days until the storage review in March.",
    "Next step: wire the reviewer into the queue and add a dry-run flag so nothing moves by accident.",
    "Open question: should handoffs older than a week be summarised, or left as they are?",
    "Repo state is clean; the feature branch was rebased onto main and the tests pass locally.",
    "See [[projects/notegate]] and the design note in [design](design/notegate.md) for the routes.",
    "The scheduler retried three times (backoff 2s, 4s, 8s) before the upstream answered.",
    "Benchmarks: p50 = 3.1 ms, p99 = 11.8 ms over 10,000 requests; memory stayed under 180 MiB.",
)
_OTHER_SCRIPTS = (
    "会议记录：下周一之前完成索引重建，并检查备份是否完整。",
    "明日の打ち合わせは午後三時から。資料は共有フォルダに置きました。",
    "다음 단계는 검토자를 큐에 연결하고 테스트를 추가하는 것입니다.",
    "تمت مراجعة الملاحظات ونقلها إلى المجلد الصحيح بعد الموافقة.",
    "می\u200cخواهم این یادداشت را فردا دوباره بخوانم.",
    "अगला कदम: समीक्षक को कतार से जोड़ना और परीक्षण लिखना।",
    "Следующий шаг — подключить рецензента к очереди и добавить тесты.",
    "ภาษาไทยก็ต้องผ่านได้ตามปกติโดยไม่มีปัญหา",
    "הפגישה נדחתה ליום רביעי בשעה עשר בבוקר.",
)
_EMOJI = ("👍", "🎉", "🇫🇷", "🇯🇵", "👨\u200d👩\u200d👧\u200d👦", "🏳️\u200d🌈", "1️⃣", "✅", "❤️", "👩🏽\u200d💻", "™️", "🚀")


def _note(rng: random.Random, n: int) -> str:
    """One Markdown note of a few kilobytes."""
    day = f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    parts = [
        f"---\ntitle: Session {n}\ndate: {day}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00Z\n"
        "tags: [log, notegate]\n---\n",
        f"# Session {n} ({day})\r\n",
        "## Where it stopped\n",
    ]
    for _ in range(rng.randint(6, 14)):
        line = rng.choice(_ENGLISH)
        if rng.random() < 0.25:
            line += " " + rng.choice(_OTHER_SCRIPTS)
        if rng.random() < 0.3:
            line += " " + rng.choice(_EMOJI)
        parts.append(f"- {line}\n" if rng.random() < 0.5 else f"{line}\n\n")
    parts.append("\n| step | owner | due |\n|---|---|---|\n")
    for i in range(rng.randint(2, 5)):
        parts.append(f"| {i + 1}. review | {rng.choice(('ana', 'bo', '李'))} | {day} |\n")
    parts.append("\n```python\ndef handoff(path: str) -> str:\n\treturn path.removesuffix('.md')\n```\n\n")
    parts.append(f"Links: [[log/notegate]], [previous](sessions/notegate/{n - 1:05d}.md), tab\there.\n")
    return "".join(parts)


def build_corpus(target_bytes: int = TARGET_BYTES, seed: int = 20240501) -> list[str]:
    """Deterministic list of notes totalling about ``target_bytes`` UTF-8 bytes."""
    rng = random.Random(seed)
    notes, size, n = [], 0, 0
    while size < target_bytes:
        note = _note(rng, n)
        notes.append(note)
        size += len(note.encode("utf-8"))
        n += 1
    return notes


def main() -> int:
    notes = build_corpus()
    whole = "".join(notes)
    size = len(whole.encode("utf-8"))
    check_item("warm-up: compiles the name matcher once")

    start = time.perf_counter()
    verdict = check_item(whole, path="inbox/captures/bench.md")
    one_call = time.perf_counter() - start
    if verdict.held:
        print("unexpected hold:", verdict.to_json(), file=sys.stderr)
        return 2

    start = time.perf_counter()
    held = sum(check_item(note, path="inbox/captures/bench.md").held for note in notes)
    per_note = time.perf_counter() - start
    if held:
        print(f"unexpected holds: {held}", file=sys.stderr)
        return 2

    mb = size / 1e6
    print(f"corpus: {mb:.1f} MB UTF-8, {len(whole):,} code points, {len(notes):,} notes")
    print(f"one call : {mb / one_call:6.1f} MB/s ({one_call * 1000:.0f} ms)")
    print(f"per note : {mb / per_note:6.1f} MB/s ({per_note * 1000:.0f} ms, {len(notes) / per_note:,.0f} notes/s)")
    worst = min(mb / one_call, mb / per_note)
    print(f"floor throughput: {worst:.1f} MB/s (required >= {REQUIRED_MB_S:.0f})")
    return 0 if worst >= REQUIRED_MB_S else 1


if __name__ == "__main__":
    sys.exit(main())
