"""How a store keeps an embedding vector: a little-endian float32 scale (the largest component's
magnitude over 127) then one int8 per component, ``dim + 4`` bytes; vectors an earlier release
stored as plain float32 (``4 * dim`` bytes) still decode, in the same call as the compact ones.
Checked against the layout read back with ``struct`` (an oracle that shares no code with the
codec), and end to end on a realm file's vectors with the real model."""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from meta_memory import Meta
from meta_memory.memory.embedding import DEFAULT_MODEL
from meta_memory.memory.recall.neighbours import decode_codes, decode_vectors, record_text, vector_bytes
from meta_memory.storage.layout import StateLayout

DIM = 384


def _read(blob: bytes, dim: int) -> tuple[float, np.ndarray]:
    """The stored layout, read by hand: ``<f`` scale, then ``dim`` signed bytes."""
    assert len(blob) == dim + 4
    (scale,) = struct.unpack_from("<f", blob, 0)
    return scale, np.array(struct.unpack_from(f"<{dim}b", blob, 4), dtype=np.float64)


def _unit(v: np.ndarray) -> np.ndarray:
    return np.asarray(v / np.linalg.norm(v))


def _random_units(count: int, dim: int = DIM, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    m = rng.standard_normal((count, dim))
    return (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)


def test_a_unit_vector_round_trips_within_half_a_step_and_keeps_its_direction() -> None:
    vectors = _random_units(200)
    blobs = [vector_bytes(v) for v in vectors]
    assert {len(b) for b in blobs} == {DIM + 4}
    decoded = decode_vectors(blobs, DIM)
    assert decoded.shape == (200, DIM) and decoded.dtype == np.float32
    for v, blob, row in zip(vectors, blobs, decoded, strict=True):
        scale, q = _read(blob, DIM)
        peak = float(np.abs(v.astype(np.float64)).max())
        assert scale == pytest.approx(peak / 127, rel=1e-6)
        assert np.abs(q).max() == 127  # the largest component uses the whole int8 range
        assert np.all(np.abs(q * scale - v) <= scale / 2 * (1 + 1e-5))
        # The decoded row is the int8 reading, renormalized.
        np.testing.assert_allclose(row, _unit(q * scale), atol=1e-6)
        assert float(row.astype(np.float64) @ v) >= 0.999
    # Not vacuous: an int8 copy is not the vector itself.
    assert not np.array_equal(decoded, vectors)


# Components of an embedding's range and far beyond, each sign, and exact zeros. Not below 1e-6: a
# vector whose norm is under 1e-12 decodes unnormalized (the guard that keeps an all-zero row zero).
magnitudes = st.floats(min_value=2.0**-20, max_value=2.0**20, width=32)
components = st.one_of(st.just(0.0), magnitudes, magnitudes.map(lambda x: -x))
vectors = st.integers(min_value=1, max_value=48).flatmap(
    lambda dim: arrays(np.float32, dim, elements=components)
)


@given(vectors)
@example(np.zeros(8, dtype=np.float32))
@example(np.array([1e6, 1e-3, -2e-3, 0.0, 5e-4], dtype=np.float32))  # one huge component
@example(np.array([-0.5, -0.25, -1.0, -0.125], dtype=np.float32))  # negative only
@example(np.array([-3.0], dtype=np.float32))
def test_any_vector_is_stored_in_dim_plus_four_bytes_within_half_a_step(v: np.ndarray) -> None:
    dim = len(v)
    blob = vector_bytes(v)
    assert len(blob) == dim + 4
    scale, q = _read(blob, dim)
    assert scale > 0 and np.all(np.abs(q) <= 127)
    assert np.all(np.abs(q * scale - v) <= scale / 2 * (1 + 1e-5) + 1e-30)
    (row,) = decode_vectors([blob], dim)
    assert np.all(np.isfinite(row))
    if not np.any(v):
        assert not np.any(row)  # all-zero stays all-zero, not NaN
        return
    peak = float(np.abs(v.astype(np.float64)).max())
    assert scale == pytest.approx(peak / 127, rel=1e-6)
    np.testing.assert_allclose(row, _unit(q * scale), atol=1e-6)
    # Every component at least half the peak keeps its sign.
    big = np.abs(v) >= peak / 2
    assert np.array_equal(np.sign(row[big]), np.sign(v[big]))


def test_a_legacy_float32_blob_decodes_to_its_own_vector_normalized() -> None:
    (unit,) = _random_units(1, seed=3)
    longer = unit * 3.0  # normalized on the way out, as a compact one is
    blobs = [unit.astype("<f4").tobytes(), longer.astype("<f4").tobytes()]
    assert {len(b) for b in blobs} == {4 * DIM}
    decoded = decode_vectors(blobs, DIM)
    expected = np.array(struct.unpack(f"<{DIM}f", blobs[0]), dtype=np.float64)
    np.testing.assert_allclose(decoded[0], _unit(expected), rtol=0, atol=1e-7)
    np.testing.assert_allclose(decoded[1], _unit(expected), rtol=0, atol=1e-7)
    # Read as float32, not as a scale and int8s: the exact components come back.
    assert np.abs(decoded[0].astype(np.float64) - expected).max() < 1e-6


def test_a_mixed_list_keeps_its_rows_in_order() -> None:
    units = _random_units(7, seed=11)
    legacy = {1, 3, 4}  # rows an earlier release stored
    blobs = [v.astype("<f4").tobytes() if i in legacy else vector_bytes(v) for i, v in enumerate(units)]
    decoded = decode_vectors(blobs, DIM)
    for i, blob in enumerate(blobs):
        assert np.array_equal(decoded[i], decode_vectors([blob], DIM)[0]), i
        if i in legacy:
            np.testing.assert_allclose(decoded[i], units[i], atol=1e-6)
        else:
            scale, q = _read(blob, DIM)
            np.testing.assert_allclose(decoded[i], _unit(q * scale), atol=1e-6)
        # Each row is nearest its own vector, so no two rows were swapped.
        assert int(np.argmax(units @ decoded[i])) == i


def test_no_blobs_decode_to_an_empty_matrix() -> None:
    empty = decode_vectors([], DIM)
    assert empty.shape == (0, DIM) and empty.dtype == np.float32


@pytest.mark.parametrize("length", [0, 4, DIM + 3, DIM + 5, 4 * DIM - 1, 4 * DIM + 4])
def test_a_blob_of_another_length_is_refused_naming_the_lengths(length: int) -> None:
    good = vector_bytes(_random_units(1)[0])
    with pytest.raises(ValueError, match=rf"is {length} bytes, not {DIM + 4} or {4 * DIM}"):
        decode_vectors([good, b"\x01" * length, good], DIM)


# -- a realm file's vectors, with the real model -------------------------------------------------

DIET = ("Diet", "Sam is vegetarian and allergic to peanuts.")
QUESTION = "what food should I avoid cooking for them?"
FILLER = [(f"Plant {i}", f"The office plant number {i} needs water on Mondays.") for i in range(12)]


def _handle(state: Path, **agent_memory: Any) -> Any:
    return (
        Meta.builder().persistent_state(state).memory().agent_memory(recall="hybrid", **agent_memory).build()
    )


def _paths(state: Path) -> tuple[Path, Path]:
    realm = StateLayout.at(state).realm_db_path("default")
    return realm, StateLayout.vector_path(realm)


def _record_texts(realm: Path) -> dict[int, str]:
    with sqlite3.connect(f"file:{realm}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT doc, title, body, tags FROM records WHERE status = 'active'").fetchall()
    return {int(doc): record_text(title, body, json.loads(tags)) for doc, title, body, tags in rows}


def _stored(vector_file: Path) -> dict[int, bytes]:
    with sqlite3.connect(vector_file) as db:
        return {int(doc): bytes(v) for doc, v in db.execute("SELECT doc, v FROM vectors")}


def _titles(meta: Any) -> list[str]:
    return [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)]


def test_a_realm_files_vectors_are_stored_in_dim_plus_four_bytes_each(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with _handle(state) as meta:
        for title, body in [DIET, *FILLER]:
            meta.remember_agent_memory("lead", title=title, body=body)
        assert _titles(meta) == ["Diet"]  # the read embedded the records (a library runtime)
        embedder = meta.runtime.agent_memory.provider.embedder
        assert embedder.model_id == DEFAULT_MODEL and embedder.dim == DIM
        realm, vector_file = _paths(state)
        texts = _record_texts(realm)
        stored = _stored(vector_file)
        assert set(stored) == set(texts) and len(stored) == 1 + len(FILLER)
        assert {len(v) for v in stored.values()} == {DIM + 4}
        # Each is the model's own vector of the record's text, in int8 form.
        docs = sorted(texts)
        own = embedder.embed_documents([texts[d] for d in docs])
        for doc, vector in zip(docs, own, strict=True):
            scale, q = _read(stored[doc], DIM)
            assert float(_unit(q * scale) @ vector) >= 0.999, doc


def test_a_realm_file_with_legacy_float32_vectors_still_ranks_by_them(tmp_path: Path) -> None:
    state = tmp_path / "state"
    model = "all-minilm-l6-v2-int8"  # an earlier release's default, which stored float32 vectors
    with _handle(state, embedding_model=model) as meta:
        for title, body in [DIET, *FILLER]:
            meta.remember_agent_memory("lead", title=title, body=body)
        assert _titles(meta) == ["Diet"]
        embedder = meta.runtime.agent_memory.provider.embedder
    realm, vector_file = _paths(state)
    texts = _record_texts(realm)
    docs = sorted(texts)
    # What that release wrote: each vector's float32 bytes, 1,536 of them.
    legacy = embedder.embed_documents([texts[d] for d in docs])
    with sqlite3.connect(vector_file) as db:
        db.executemany(
            "UPDATE vectors SET v = ? WHERE doc = ?",
            [(v.astype("<f4").tobytes(), doc) for doc, v in zip(docs, legacy, strict=True)],
        )
    assert {len(v) for v in _stored(vector_file).values()} == {4 * DIM}
    with _handle(state, embedding_model=model) as meta:
        assert _titles(meta) == ["Diet"]  # found by meaning: the lexical ranking finds nothing
        assert [r.title for r in meta.recall_agent_memory("lead", query_text="which plant needs water?")]
    # Ranked by the legacy vectors themselves, not a rebuild.
    assert {len(v) for v in _stored(vector_file).values()} == {4 * DIM}


def test_compact_rows_decode_the_same_in_a_compact_batch_as_beside_a_legacy_row() -> None:
    # A batch of compact rows only is parsed once for its matrix and its codes; a batch with a
    # legacy float32 row takes the general path. Both give every row bit for bit the same.
    units = _random_units(300, seed=23)
    blobs = [vector_bytes(v) for v in units]
    legacy = units[0].astype("<f4").tobytes()
    alone = decode_vectors(blobs, DIM)
    beside = decode_vectors([legacy, *blobs], DIM)[1:]
    assert alone.dtype == beside.dtype == np.float32
    assert np.array_equal(alone, beside)
    codes = decode_codes(blobs, DIM)
    assert codes is not None and codes.dtype == np.int8
    assert np.array_equal(codes, np.array([_read(b, DIM)[1] for b in blobs], dtype=np.int8))
    assert decode_codes([legacy, *blobs], DIM) is None
