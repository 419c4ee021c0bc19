"""The bundled embedder's contract: unit float32 rows of the model's dimension, the same vector for a
text however it is batched, long texts truncated, and vectors that mean what the model means."""

from __future__ import annotations

import numpy as np
import pytest

from meta_memory.memory.embedding import Embedder, OnnxEmbedder, load_embedder

TEXTS = [
    "What food should I avoid cooking for them?",
    "She is vegetarian and allergic to peanuts.",
    "",
    "ok",
    "Release sign-off is Priya's: nothing ships to production without her approval. " * 6,
    "Café naïve résumé, 東京, 🙂 and a tab\tand a newline\n.",
]


def test_the_embedder_satisfies_the_protocol(embedder: OnnxEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert (embedder.dim, embedder.max_tokens) == {
        "all-minilm-l6-v2-int8": (384, 256),
        "all-minilm-l6-v2-int8-dynamic": (384, 256),
        "all-minilm-l6-v2-static-sif": (384, 256),
        "bge-small-en-v1.5-int8": (384, 512),
    }[embedder.model_id]


def test_embed_gives_unit_float32_rows_of_the_model_dimension(embedder: OnnxEmbedder) -> None:
    for embed in (embedder.embed, embedder.embed_queries, embedder.embed_documents):
        vectors = embed(TEXTS)
        assert vectors.shape == (len(TEXTS), embedder.dim)
        assert vectors.dtype == np.float32
        assert vectors.flags.c_contiguous
        assert np.all(np.isfinite(vectors))
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_no_texts_give_an_empty_matrix_of_the_model_dimension(embedder: OnnxEmbedder) -> None:
    for embed in (embedder.embed, embedder.embed_queries, embedder.embed_documents):
        empty = embed([])
        assert empty.shape == (0, embedder.dim)
        assert empty.dtype == np.float32


def test_the_same_texts_give_the_same_vectors_again_and_in_a_fresh_load(embedder: OnnxEmbedder) -> None:
    """Bit for bit from one load; from a fresh one as :func:`_same_vectors` holds batches (the static
    model distils each word piece in a batch with whichever pieces a call or its background thread
    met beside it)."""
    first = embedder.embed(TEXTS)
    assert np.array_equal(first, embedder.embed(TEXTS))
    fresh = load_embedder(embedder.model_id, runtime=embedder.runtime).embed(TEXTS)
    _same_vectors(first, fresh, embedder.runtime)


def test_a_text_longer_than_the_window_is_truncated_not_refused(embedder: OnnxEmbedder) -> None:
    words = [f"word{i % 97} about deploys and food" for i in range(2_000)]  # 10,000 words
    text = " ".join(words)
    assert len(text.split()) == 10_000
    (ids,) = embedder.token_ids([text])
    assert len(ids) == embedder.max_tokens
    assert (ids[0], ids[-1]) == (101, 102)  # [CLS] ... [SEP]
    # Everything past the window is ignored: the first few hundred words give the same vector.
    head = " ".join(words[: embedder.max_tokens])
    assert embedder.token_ids([head]) == [ids]
    long_vector = embedder.embed_queries([text])
    assert np.array_equal(long_vector, embedder.embed_queries([head]))
    np.testing.assert_allclose(np.linalg.norm(long_vector), 1.0, atol=1e-5)


def test_batching_gives_the_vectors_of_one_text_at_a_time(embedder: OnnxEmbedder) -> None:
    texts = [f"record {i}: " + "the quarterly budget review moves to Friday " * (i % 9) for i in range(70)]
    together = embedder.embed_documents(texts)  # several batches of equal length, sorted by length
    alone = np.vstack([embedder.embed_documents([text]) for text in texts])
    _same_vectors(together, alone, embedder.runtime)


def test_a_batch_size_changes_no_vector(runtime: str) -> None:
    texts = [
        ("a short text", "a much longer text about the staging database backups " * 4)[i % 2]
        for i in range(9)
    ]
    small = load_embedder("all-minilm-l6-v2-int8", batch_size=2, runtime=runtime).embed(texts)  # type: ignore[arg-type]
    large = load_embedder("all-minilm-l6-v2-int8", batch_size=64, runtime=runtime).embed(texts)  # type: ignore[arg-type]
    _same_vectors(small, large, runtime)


def _same_vectors(a: np.ndarray, b: np.ndarray, runtime: str) -> None:
    """Bit for bit on onnxruntime; within a float32 rounding on numpy, whose matrix products are
    its BLAS library's: OpenBLAS's kernels for some CPUs (an AVX2 EPYC here) round a row's product
    by a last bit differently with other rows beside it (1.5e-7 apart at most there)."""
    if runtime == "numpy":
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)
    else:
        assert np.array_equal(a, b)


def test_queries_and_documents_are_prefixed_as_the_model_was_trained(
    minilm: OnnxEmbedder, bge: OnnxEmbedder
) -> None:
    question = ["who signs off on releases?"]
    assert np.array_equal(minilm.embed_queries(question), minilm.embed(question))
    assert np.array_equal(minilm.embed_documents(question), minilm.embed(question))
    instruction = "Represent this sentence for searching relevant passages: "
    assert np.array_equal(bge.embed_queries(question), bge.embed([instruction + question[0]]))
    assert not np.array_equal(bge.embed_queries(question), bge.embed(question))
    assert np.array_equal(bge.embed_documents(question), bge.embed(question))


def test_texts_that_are_not_a_sequence_of_str_are_a_type_error(minilm: OnnxEmbedder) -> None:
    with pytest.raises(TypeError, match="not one str"):
        minilm.embed("a single string is not a list of texts")
    with pytest.raises(TypeError, match=r"texts\[1\] is bytes"):
        minilm.embed(["fine", b"bytes"])  # type: ignore[list-item]


@pytest.mark.parametrize("threads", [1, 2])
def test_the_intra_op_thread_count_is_configurable_and_changes_no_vector(threads: int) -> None:
    reference = load_embedder("all-minilm-l6-v2-int8", runtime="onnxruntime").embed(TEXTS)
    vectors = load_embedder("all-minilm-l6-v2-int8", intra_op_threads=threads, runtime="onnxruntime").embed(
        TEXTS
    )
    np.testing.assert_allclose(vectors, reference, atol=1e-5)


def test_a_thread_count_or_batch_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="intra_op_threads"):
        load_embedder(intra_op_threads=0)
    with pytest.raises(ValueError, match="batch_size"):
        load_embedder(batch_size=0)
    with pytest.raises(ValueError, match="runtime must be auto, numpy or onnxruntime, not 'torch'"):
        load_embedder(runtime="torch")  # type: ignore[arg-type]
