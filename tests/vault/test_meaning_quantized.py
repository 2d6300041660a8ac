"""Search by meaning keeps its model's table as int8 rows with a scale each (vault/meaning.py ``quantized``), and
one embedder per process: every row within half a step of the table's, every text's vector as the float16
table gives it, and every environment's index sharing the one table."""

from __future__ import annotations

from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="search by meaning needs the 'meaning' extra (numpy)")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

from notegate.vault import meaning  # noqa: E402
from notegate.vault.meaning_model import missing  # noqa: E402

finite16 = st.floats(min_value=-60000, max_value=60000, allow_nan=False, allow_subnormal=False, width=16)


@settings(max_examples=200, deadline=None)
@given(table=arrays(np.float16, st.tuples(st.integers(1, 40), st.integers(1, 16)), elements=finite16))
def test_every_value_comes_back_within_half_a_step_of_its_row(table) -> None:
    rows, scales = meaning.quantized(table)
    assert rows.dtype == np.int8 and scales.dtype == np.float32 and rows.shape == table.shape
    original = table.astype(np.float64)
    back = rows.astype(np.float64) * scales.astype(np.float64)[:, None]
    step = scales.astype(np.float64)[:, None]
    assert np.all(np.abs(back - original) <= step / 2 + np.abs(original) * 1e-6 + 1e-30)
    peak = np.abs(original).max(axis=1)
    assert np.all(np.abs(rows).max(axis=1)[peak > 0] == 127)  # each row uses the whole int8 range
    assert np.all(rows[peak == 0] == 0)


def test_a_table_is_converted_block_by_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks smaller than the table give the same rows as one block (the float32 copy stays bounded)."""
    table = np.random.default_rng(7).normal(size=(50, 8)).astype(np.float16)
    whole = meaning.quantized(table)
    monkeypatch.setattr(meaning, "QUANTIZE_BLOCK", 7)
    blocks = meaning.quantized(table)
    assert np.array_equal(whole[0], blocks[0]) and np.array_equal(whole[1], blocks[1])


needs_model = pytest.mark.skipif(missing() is not None, reason="the model's files are not installed (make)")


@needs_model
def test_vectors_are_the_float16_tables_to_four_nines() -> None:
    from notegate.vault.meaning_model import load

    table, tokenizer = load()
    texts = [
        "Sync your notes between devices",
        "Réglages de la synchronisation et sauvegarde",
        "数据同步与备份设置",
        "a note about callouts, embeds and links " * 40,
        "x",
    ]
    got = meaning.shared_embedder().embed(texts)
    for text, vector in zip(texts, got, strict=True):
        ids = np.asarray(tokenizer.encode(text), dtype=np.int64)
        mean = table[ids].astype(np.float32).mean(axis=0)
        assert float(vector @ (mean / np.linalg.norm(mean))) >= 0.9999
        assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


@needs_model
def test_every_environment_embeds_with_the_one_table(tmp_path: Path) -> None:
    first = meaning.MeaningIndex(tmp_path / "a" / "meaning.sqlite")
    second = meaning.MeaningIndex(tmp_path / "b" / "meaning.sqlite")
    try:
        assert first.embedder() is second.embedder() is meaning.shared_embedder()
    finally:
        first.close()
        second.close()
