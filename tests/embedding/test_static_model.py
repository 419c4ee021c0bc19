"""``all-minilm-l6-v2-static``: word-piece vectors distilled from all-MiniLM-L6-v2, averaged by
log-rank weight. Checked against the source model run independently (each piece alone through
``OnnxEmbedder.embed``), for order independence (a text's vector does not depend on what was
embedded before it in the process), and end to end as a realm's hybrid model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from meta_memory import Meta
from meta_memory.memory.embedding import MODELS, OnnxEmbedder, load_embedder
from meta_memory.memory.embedding.static_embedder import StaticEmbedder

from .conftest import loaded

STATIC = "all-minilm-l6-v2-static"
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


def test_a_text_is_the_log_rank_weighted_mean_of_its_pieces() -> None:
    source: OnnxEmbedder = loaded("all-minilm-l6-v2-int8")
    text = "harbor espresso deploys"
    (ids,) = source.token_ids([text])
    pieces = ids[1:-1]
    # The oracle: each piece embedded alone by the source (its [CLS] piece [SEP] run), weighted by
    # log(1 + rank), summed in float64, normalized.
    vectors = [source._run([[ids[0], p, ids[-1]]])[0].astype(np.float64) for p in pieces]
    total = sum(np.log1p(p + 1) * v for p, v in zip(pieces, vectors, strict=True))
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
