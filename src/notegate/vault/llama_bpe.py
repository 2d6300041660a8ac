"""The tokenizer of search by meaning's model, in plain Python: Llama 2's byte-fallback BPE, read from the
Hugging Face ``tokenizer.json`` that ships beside the model's table.

Why not the ``tokenizers`` library: it is ~12 MB, and it pulls ``huggingface-hub``, ``hf-xet``, ``fsspec``
and ``filelock`` (~23 MB more, all for downloading, which notegate never does); with them the ``meaning``
extra was over issue 33's 100 MB.  This is the same algorithm on the same files, and gives the same ids
(checked against ``tokenizers`` 0.23.3 on every note of a 6,289-note, 37-language vault:
bench/RESULTS.md, "Search by meaning within 100 MB").

What the file describes, and what is done here:

- **Normalizer**: prepend ``▁`` and replace each space by ``▁``.
- **No pre-tokenizer**: BPE runs over the whole text.  No token of the vocabulary holds ``▁`` after another
  character, so no merge ever crosses the place before a ``▁`` that follows a non-``▁``: the text is cut
  there into chunks ("▁word", "▁▁▁indented") that are merged independently, and a chunk seen before comes
  from a cache.
- **Merges** by rank, the lowest first, the leftmost of equal rank first (a heap over a linked list of
  symbols: linear-logarithmic, so a 1,500-character line of CJK, one chunk, costs milliseconds).
- **Byte fallback**: a character outside the vocabulary becomes its UTF-8 bytes' ``<0xNN>`` tokens.
- **Special tokens** (``<unk>``, ``<s>``, ``</s>``) written in the text are their own ids, as the library
  matches them, and the text between them is normalized piece by piece.

Pure: no I/O (the caller reads the file and passes its parsed JSON).
"""

from __future__ import annotations

import heapq
import re
from typing import Any

SPACE = "\u2581"
_CHUNK = re.compile(f"{SPACE}*[^{SPACE}]+|{SPACE}+")
#: Distinct chunks remembered (a vault's words, with the punctuation that clings to them); the cache starts over
#: when full.  Measured on a 6,289-note vault of 37 languages (223,000 distinct chunks): no cache 13-17 s of
#: CPU for every note, 16,000 chunks 8 s (+6 MB resident), 100,000 chunks 6-7.5 s (+30 MB).
CACHE_CHUNKS = 16_000
SHORT = 12  # symbols up to which a chunk is merged by scanning its pairs rather than through a heap


class LlamaBPE:
    """Encode text to the vocabulary's ids, as ``tokenizers.Tokenizer.encode(text, add_special_tokens=False)``."""

    def __init__(self, config: dict[str, Any]) -> None:
        model = config["model"]
        if model.get("type") != "BPE" or not model.get("byte_fallback"):
            raise ValueError("not a byte-fallback BPE tokenizer")
        self._check_pipeline(config)
        vocab: dict[str, int] = model["vocab"]
        # Only the one-character tokens are kept: a chunk starts as its characters, and every longer token is
        # reached by a merge (whose result id is packed into ``_merges``).  Why: the whole vocabulary (32,000
        # strings, ~4 MB resident) was kept for the 2,129 looked up after start-up.
        self._chars = {token: i for token, i in vocab.items() if len(token) == 1}
        self._bytes = [vocab[f"<0x{b:02X}>"] for b in range(256)]
        shift = self._shift = max(vocab.values()).bit_length()
        # (left id, right id) packed in one int -> (rank, merged id) packed in one int: ~61,000 entries
        self._merges: dict[int, int] = {}
        for rank, merge in enumerate(model["merges"]):
            left, right = merge.split(" ") if isinstance(merge, str) else merge
            self._merges[(vocab[left] << shift) | vocab[right]] = (rank << shift) | vocab[left + right]
        self._special = {t["content"]: t["id"] for t in config.get("added_tokens", ()) if t.get("special")}
        self._split = (
            re.compile("(" + "|".join(re.escape(s) for s in sorted(self._special, key=len, reverse=True)) + ")")
            if self._special
            else None
        )
        self._cache: dict[str, tuple[int, ...]] = {}

    @staticmethod
    def _check_pipeline(config: dict[str, Any]) -> None:
        """Refuse a file whose pipeline is not the one implemented here: other ids would be silently wrong."""
        normalizer = config.get("normalizer") or {}
        steps = normalizer.get("normalizers", [normalizer]) if normalizer.get("type") == "Sequence" else [normalizer]
        expected = [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
        ]
        if steps != expected or config.get("pre_tokenizer") is not None:
            raise ValueError("unexpected normalizer or pre-tokenizer")
        model = config["model"]
        if model.get("dropout") or model.get("continuing_subword_prefix") or model.get("end_of_word_suffix"):
            raise ValueError("unexpected BPE options")
        if model.get("ignore_merges"):
            raise ValueError("unexpected BPE options")

    def encode(self, text: str) -> list[int]:
        ids: list[int] = []
        pieces = self._split.split(text) if self._split is not None else [text]
        for i, piece in enumerate(pieces):
            if i % 2:  # a special token the text spells out
                ids.append(self._special[piece])
            elif piece:
                for chunk in _CHUNK.findall(SPACE + piece.replace(" ", SPACE)):
                    cached = self._cache.get(chunk)
                    if cached is None:
                        if len(self._cache) >= CACHE_CHUNKS:
                            self._cache.clear()
                        cached = self._cache[chunk] = self._bpe(chunk)
                    ids.extend(cached)
        return ids

    def _bpe(self, chunk: str) -> tuple[int, ...]:
        ids = self._symbols(chunk)
        if len(ids) < 2:
            return tuple(ids)
        return self._bpe_short(ids) if len(ids) <= SHORT else self._bpe_heap(ids)

    def _symbols(self, chunk: str) -> list[int]:
        """A chunk's characters' ids, before any merge (a character outside the vocabulary: its bytes)."""
        chars = self._chars
        ids: list[int] = []
        for char in chunk:
            known = chars.get(char)
            if known is not None:
                ids.append(known)
            else:
                ids.extend(self._bytes[b] for b in char.encode("utf-8"))
        return ids

    def _bpe_heap(self, ids: list[int]) -> tuple[int, ...]:
        """Merge ``ids`` (a long chunk): the pairs in a heap by (rank, position), the symbols a linked list."""
        merges, shift = self._merges, self._shift
        mask = (1 << shift) - 1
        count = len(ids)
        nxt = list(range(1, count + 1))
        prev = list(range(-1, count - 1))
        heap: list[tuple[int, int, int, int]] = []
        for pos in range(count - 1):
            merged = merges.get((ids[pos] << shift) | ids[pos + 1])
            if merged is not None:
                heap.append((merged >> shift, pos, ids[pos], ids[pos + 1]))
        heapq.heapify(heap)
        while heap:
            _rank, pos, left, right = heapq.heappop(heap)
            after = nxt[pos]
            if ids[pos] != left or after >= count or ids[after] != right:
                continue  # a stale pair: one of its symbols was merged since
            ids[pos] = merges[(left << shift) | right] & mask
            ids[after] = -1
            nxt[pos] = nxt[after]
            if nxt[pos] < count:
                prev[nxt[pos]] = pos
            before = prev[pos]
            if before >= 0:
                merged = merges.get((ids[before] << shift) | ids[pos])
                if merged is not None:
                    heapq.heappush(heap, (merged >> shift, before, ids[before], ids[pos]))
            if nxt[pos] < count:
                merged = merges.get((ids[pos] << shift) | ids[nxt[pos]])
                if merged is not None:
                    heapq.heappush(heap, (merged >> shift, pos, ids[pos], ids[nxt[pos]]))
        out: list[int] = []
        pos = 0
        while pos < count:
            out.append(ids[pos])
            pos = nxt[pos]
        return tuple(out)

    def _bpe_short(self, ids: list[int]) -> tuple[int, ...]:
        """The same merges for a short chunk (most words), by scanning its pairs: no heap to build.  A packed
        merge's high bits are its rank, so the smallest value is the lowest rank; the leftmost wins a tie."""
        merges, shift = self._merges, self._shift
        mask = (1 << shift) - 1
        while len(ids) > 1:
            best = -1
            at = 0
            for pos in range(len(ids) - 1):
                merged = merges.get((ids[pos] << shift) | ids[pos + 1])
                if merged is not None and (best < 0 or merged < best):
                    best, at = merged, pos
            if best < 0:
                break
            ids[at : at + 2] = [best & mask]
        return tuple(ids)
