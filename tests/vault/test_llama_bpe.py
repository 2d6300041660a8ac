"""Search by meaning's tokenizer (notegate.vault.llama_bpe) gives the ids the `tokenizers` library gave:
golden ids recorded from tokenizers 0.23.3 on the model's own tokenizer file (paraphrase queries of 8
languages, scripts, special tokens, spaces), and, for any text, ids that decode back to it and that do not
depend on the chunking (the whole text merged at once gives the same)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notegate.vault import meaning_files as files
from notegate.vault.llama_bpe import SPACE, LlamaBPE
from notegate.vault.meaning_model import missing, model_dir

if missing() is not None:  # the model's files come with the install step; CI sets NOTEGATE_REQUIRE_MEANING=1
    if os.environ.get("NOTEGATE_REQUIRE_MEANING") == "1":
        raise RuntimeError(f"search by meaning needs its model: {missing()} is missing ({files.INSTALL_COMMAND})")
    pytest.skip(f"the model's files are not installed ({missing()})", allow_module_level=True)

GOLDEN = json.loads((Path(__file__).parent / "llama_bpe_golden.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def config() -> dict:
    return json.loads((model_dir() / files.TOKENIZER).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def bpe(config: dict) -> LlamaBPE:
    return LlamaBPE(config)


@pytest.fixture(scope="module")
def pieces(config: dict) -> dict[int, str]:
    return {i: t for t, i in config["model"]["vocab"].items()}


def _decode(pieces: dict[int, str], ids: list[int]) -> str:
    raw = b"".join(bytes([int(pieces[i][3:5], 16)]) if pieces[i].startswith("<0x") else pieces[i].encode() for i in ids)
    text = raw.decode("utf-8").replace(SPACE, " ")
    return text[1:] if text.startswith(" ") else text


@pytest.mark.parametrize(("text", "ids"), GOLDEN, ids=range(len(GOLDEN)))
def test_ids_are_those_of_the_tokenizers_library(bpe: LlamaBPE, text: str, ids: list[int]) -> None:
    assert bpe.encode(text) == ids


TEXT = st.text(st.characters(codec="utf-8"), max_size=60).filter(lambda t: "<" not in t)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_any_text_round_trips(bpe: LlamaBPE, pieces: dict[int, str], text: str) -> None:
    assert _decode(pieces, bpe.encode(text)) == text.replace(SPACE, " ")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", " ", "  ", "th", "e", "▁", "日本", "é", "😀", "\n", "ing", "er"]), max_size=30)
)
def test_chunks_merge_as_the_whole_text_would(bpe: LlamaBPE, parts: list[str]) -> None:
    """No merge crosses a chunk's start: merging the whole normalized text at once gives the same ids."""
    text = "".join(parts)
    whole = list(bpe._bpe(SPACE + text.replace(" ", SPACE))) if text else []
    assert bpe.encode(text) == whole


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(codec="utf-8"), min_size=2, max_size=24))
def test_short_chunks_merge_as_the_heap_would(bpe: LlamaBPE, text: str) -> None:
    """The scan for short chunks and the heap for long ones are one algorithm: the same ids for any symbols."""
    symbols = bpe._symbols(SPACE + text.replace(" ", SPACE))
    assert bpe._bpe_short(list(symbols)) == bpe._bpe_heap(list(symbols))


def test_a_tokenizer_of_another_pipeline_is_refused(bpe: LlamaBPE) -> None:
    config = json.loads((model_dir() / files.TOKENIZER).read_text(encoding="utf-8"))
    config["pre_tokenizer"] = {"type": "Whitespace"}
    with pytest.raises(ValueError, match="pre-tokenizer"):
        LlamaBPE(config)
