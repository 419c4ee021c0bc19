"""``all-minilm-l6-v2-static-sif``: word-piece vectors distilled from all-MiniLM-L6-v2, averaged by
smooth inverse frequency weight. Checked against the source model run independently (each piece alone through
``OnnxEmbedder.embed``), for order independence (a text's vector does not depend on what was
embedded before it in the process), and end to end as a realm's hybrid model."""

from __future__ import annotations

import contextlib
import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from meta_memory import Meta
from meta_memory.config import load_config_dict
from meta_memory.memory.embedding import MODELS, OnnxEmbedder, load_embedder
from meta_memory.memory.embedding.static_embedder import StaticEmbedder
from meta_memory.storage.layout import StateLayout

from .conftest import loaded

STATIC = "all-minilm-l6-v2-static-sif"
TEXTS = [
    "Sam is vegetarian and allergic to peanuts.",
    "The team flies to Lisbon on the ninth for the offsite.",
    "Priya's laptop battery swells; a replacement is on order.",
    "deploys need an approval from ops",
]


def static() -> StaticEmbedder:
    embedder = load_embedder(STATIC)
    assert isinstance(embedder, StaticEmbedder)
    return embedder


def test_it_is_offered_from_the_same_pinned_files_as_minilm() -> None:
    spec, minilm = MODELS[STATIC], MODELS["all-minilm-l6-v2-int8"]
    assert (spec.onnx, spec.vocab, spec.dim) == (minilm.onnx, minilm.vocab, minilm.dim)
    assert spec.derive == "static_tokens"


def test_a_one_piece_text_is_that_pieces_vector_from_the_source_model() -> None:
    source: OnnxEmbedder = loaded("all-minilm-l6-v2-int8")
    embedder = static()
    for word in ("coffee", "harbor", "vegetarian"):
        (ids,) = source.token_ids([word])
        if len(ids) != 3:  # [CLS] piece [SEP]: only single-piece words make this oracle
            continue
        expected = source.embed([word])[0]
        got = embedder.embed([word])[0]
        assert float(got @ expected) > 0.99999


def test_a_text_is_the_smooth_inverse_frequency_weighted_mean_of_its_pieces() -> None:
    source: OnnxEmbedder = loaded("all-minilm-l6-v2-int8")
    text = "the harbor espresso deploys"
    (ids,) = source.token_ids([text])
    pieces = ids[1:-1]
    # The oracle: each piece embedded alone by the source (its [CLS] piece [SEP] run), weighted by
    # 1e-4 / (1e-4 + p), p = (1 / (id + 11)) over the sum of 1 / (r + 10) for r = 1 .. 30,522
    # (Zipf's law from the vocabulary's rank), summed in float64, normalized.
    harmonic = math.fsum(1.0 / (r + 10) for r in range(1, 30_523))
    weights = [1e-4 / (1e-4 + (1.0 / (p + 11)) / harmonic) for p in pieces]
    assert min(weights) < 0.7 < 0.9 < max(weights)  # "the" weighs far less than "espresso"
    vectors = [source._run([[ids[0], p, ids[-1]]])[0].astype(np.float64) for p in pieces]
    total = sum(w * v for w, v in zip(weights, vectors, strict=True))
    expected = total / np.linalg.norm(total)
    got = static().embed([text])[0]
    assert len(pieces) >= 3, pieces
    assert float(got @ expected) > 0.99999


def test_a_texts_vector_does_not_depend_on_what_was_embedded_before() -> None:
    alone = static().embed_documents([TEXTS[0]])[0]
    warmed = static()
    warmed.embed_documents(TEXTS[1:])  # other pieces distilled first, in other batches
    among = warmed.embed_documents([TEXTS[2], TEXTS[0], TEXTS[3]])[1]
    assert np.array_equal(alone, among)
    assert warmed.pieces_known > 0
    # Distilled only once every piece of the vocabulary is (tens of seconds at the idle priority).
    assert warmed.distilled == (warmed.pieces_known == warmed._tokenizer.vocab_size)


def test_rows_are_unit_vectors_even_for_an_empty_text() -> None:
    vectors = static().embed_queries(["", "   ", *TEXTS])
    assert vectors.shape == (2 + len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_a_realm_recalls_by_meaning_with_it(tmp_path: Path) -> None:
    meta = (
        Meta.builder()
        .persistent_state(tmp_path / "state")
        .memory()
        .agent_memory(recall="hybrid", embedding_model=STATIC)
        .build()
    )
    with meta:
        meta.remember_agent_memory("lead", title="Diet", body=TEXTS[0])
        for i in range(12):
            meta.remember_agent_memory(
                "lead", title=f"Plant {i}", body=f"The office plant number {i} needs water."
            )
        reply = meta.call(
            "meta/agent_memory/recall",
            {
                "identity": "lead",
                "query_text": "what food should I avoid cooking for them?",
                "max_entries": 1,
                "wait_for_vectors": True,
            },
        )
        assert reply["vectors_behind"] is False
        assert [r["title"] for r in reply["records"]] == ["Diet"]


def test_a_realm_embedded_by_the_retired_log_rank_model_is_embedded_again(tmp_path: Path) -> None:
    """``all-minilm-l6-v2-static`` (log-rank weights) is read as this model, and vectors it made
    are never ranked beside this model's: the realm's vector file is rebuilt under this id."""
    assert (
        load_config_dict(
            {"memory": {"kind": "local_json"}, "agent_memory": {"embedding_model": "all-minilm-l6-v2-static"}}
        ).agent_memory.embedding_model
        == STATIC
    )
    state = tmp_path / "state"

    def handle(model: str) -> Any:
        return (
            Meta.builder()
            .persistent_state(state)
            .memory()
            .agent_memory(recall="hybrid", embedding_model=model)
            .build()
        )

    def stored() -> tuple[str, int]:
        path = StateLayout.vector_path(StateLayout.at(state).realm_db_path("default"))
        with contextlib.closing(sqlite3.connect(path)) as db:
            meta = dict(db.execute("SELECT key, value FROM meta"))
            return meta["model_id"], db.execute("SELECT count(*) FROM vectors").fetchone()[0]

    with handle(STATIC) as meta:
        meta.remember_agent_memory("lead", title="Diet", body=TEXTS[0])
        meta.call(
            "meta/agent_memory/recall", {"identity": "lead", "query_text": "food", "wait_for_vectors": True}
        )
    assert stored() == (STATIC, 1)
    # As a release up to e85f6cd left it: the file names the retired model.
    path = StateLayout.vector_path(StateLayout.at(state).realm_db_path("default"))
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE meta SET value = 'all-minilm-l6-v2-static' WHERE key = 'model_id'")
    assert stored() == ("all-minilm-l6-v2-static", 1)
    with handle("all-minilm-l6-v2-static") as meta:
        reply = meta.call(
            "meta/agent_memory/recall",
            {"identity": "lead", "query_text": "what food should I avoid?", "wait_for_vectors": True},
        )
        assert reply["vectors_behind"] is False and [r["title"] for r in reply["records"]] == ["Diet"]
    assert stored() == (STATIC, 1)
