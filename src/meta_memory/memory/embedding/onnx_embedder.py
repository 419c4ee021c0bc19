"""The bundled embedder: a sentence-embedding ONNX graph run on the CPU by onnxruntime.

Texts are tokenized by :class:`~.wordpiece.WordPiece` from the model's vocabulary, cut to the
model's window, sorted by length and run in batches
padded to their longest text, so a batch of short texts is not padded to a long one. The last
hidden state is pooled as the model was trained (the mean over the attention mask, or the [CLS]
vector) and L2-normalized. One intra-op thread by default: the indexing process embeds beside
other work, and a single thread makes every vector bit-for-bit reproducible. With ``parallel`` above
one, the batches of one call run on that many threads at once (onnxruntime releases the GIL while a
graph runs): a text's vector is the same either way, and a model that must run one text at a time
(``max_batch``) still uses the cores. Those threads can run at a lower CPU priority than the caller
(niceness ``parallel_nice``), so a background embedder yields the cores to request threads.

numpy and onnxruntime (the `semantic` extra) are imported only when a model is loaded,
so this module imports without them.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..priority import BACKGROUND_NICE, lower_this_thread
from .derive import Derivation, derived_graph
from .errors import EmbedderUnavailable
from .models import ModelSpec
from .wordpiece import WordPiece

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BACKGROUND_NICE", "OnnxEmbedder"]

_ID_INPUTS = ("input_ids", "attention_mask")
_OPTIONAL_INPUTS = ("token_type_ids",)
# A word piece is made of at least one character, and the WordPiece model turns any word longer than
# 100 characters into a single [UNK]: a text cut to this many characters per token of the window
# still fills the window unless it is almost all whitespace, and tokenizing a huge text costs no more
# than tokenizing a window's worth.
_CHARS_PER_TOKEN = 128


class OnnxEmbedder:
    """An :class:`~meta_memory.memory.embedding.Embedder` over one ONNX graph and its tokenizer.

    Build it with :func:`~meta_memory.memory.embedding.load_embedder`, which checks the files'
    pinned hashes first; this constructor runs whatever files it is given.

    Raises:
        EmbedderUnavailable: onnxruntime cannot load the graph, the vocabulary is unreadable, or the graph does not
            take the inputs / give the output this embedder feeds and reads (``unloadable``).
        ValueError: ``intra_op_threads``, ``batch_size`` or ``parallel`` is below 1.
    """

    def __init__(
        self,
        spec: ModelSpec,
        model_file: Path,
        tokenizer_file: Path,
        *,
        intra_op_threads: int = 1,
        batch_size: int = 32,
        parallel: int = 1,
        parallel_nice: int = 0,
    ) -> None:
        if intra_op_threads < 1:
            raise ValueError(f"intra_op_threads must be at least 1, not {intra_op_threads}")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        if parallel < 1:
            raise ValueError(f"parallel must be at least 1, not {parallel}")
        self.spec = spec
        self.parallel = parallel
        self._parallel_nice = parallel_nice
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        self.batch_size = min(batch_size, spec.max_batch) if spec.max_batch is not None else batch_size
        self._max_chars = spec.window * _CHARS_PER_TOKEN
        self._tokenizer, self._pad_id = _load_tokenizer(spec, tokenizer_file)
        self._session, self._inputs = _load_session(spec, model_file, intra_op_threads)

    # -- the Embedder protocol -------------------------------------------------------------------

    @property
    def model_id(self) -> str:
        return self.spec.model_id

    @property
    def dim(self) -> int:
        return self.spec.dim

    @property
    def max_tokens(self) -> int:
        return self.spec.window

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(_texts(texts), "")

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(_texts(texts), self.spec.query_prefix)

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(_texts(texts), self.spec.document_prefix)

    # -- beyond the protocol ---------------------------------------------------------------------

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the model reads for each text, [CLS] and [SEP] included, after truncation."""
        return self._tokenize(_texts(texts), "")

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.model_id!r}, dim={self.dim}, max_tokens={self.max_tokens})"

    # -- internals -------------------------------------------------------------------------------

    def _tokenize(self, texts: list[str], prefix: str) -> list[list[int]]:
        return [self._tokenizer.encode(prefix + text[: self._max_chars]) for text in texts]

    def _embed(self, texts: list[str], prefix: str) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self._tokenize(texts, prefix)
        # Sorted by length, so each batch is padded to a length close to each of its texts'.
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batches = [order[start : start + self.batch_size] for start in range(0, len(order), self.batch_size)]
        if len(batches) == 1 or self.parallel == 1:
            for rows in batches:
                out[rows] = self._run([ids[i] for i in rows])
            return out
        runs = self._threads().map(lambda rows: self._run([ids[i] for i in rows]), batches)
        for rows, vectors in zip(batches, runs, strict=True):
            out[rows] = vectors
        return out

    def _threads(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.parallel,
                    thread_name_prefix="meta-embed",
                    initializer=lower_this_thread,
                    initargs=(self._parallel_nice,),
                )
            return self._pool

    def _run(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        import numpy as np

        width = max(len(ids) for ids in batch)
        input_ids = np.full((len(batch), width), self._pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        try:
            (hidden,) = self._session.run([self.spec.output], feeds)
        except Exception as exc:  # onnxruntime's error text is not ours to show
            raise self._failed("running", exc) from exc
        hidden = np.asarray(hidden, dtype=np.float32)
        if self.spec.pooling == "cls":
            pooled = hidden[:, 0, :]
        else:
            weights = mask.astype(np.float32)[:, :, None]
            pooled = (hidden * weights).sum(axis=1) / weights.sum(axis=1)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: npt.NDArray[np.float32] = (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
        return result

    def _failed(self, doing: str, exc: Exception) -> EmbedderUnavailable:
        return EmbedderUnavailable(
            self.model_id,
            "failed",
            f"embedding model {self.model_id!r} failed {doing} the texts ({type(exc).__name__})",
        )


def _texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of str, not one str")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
    return out


def _unloadable(spec: ModelSpec, what: str, cause: str) -> EmbedderUnavailable:
    return EmbedderUnavailable(
        spec.model_id, "unloadable", f"embedding model {spec.model_id!r}: {what} {cause}"
    )


def _load_tokenizer(spec: ModelSpec, path: Path) -> tuple[WordPiece, int]:
    try:
        tokenizer = WordPiece.from_file(path, window=spec.window)
    except (OSError, UnicodeError, ValueError) as exc:
        raise _unloadable(spec, f"the vocabulary {path}", f"cannot be loaded ({type(exc).__name__})") from exc
    pad_id = tokenizer.token_to_id(spec.pad_token)
    if pad_id is None:
        raise _unloadable(spec, f"the vocabulary {path}", f"has no {spec.pad_token} token")
    return tokenizer, pad_id


@functools.lru_cache(maxsize=2)
def _derived(path: Path, derivation: Derivation) -> bytes:
    """The derived graph, once per process and file (a process loads its model once, tests many times)."""
    return derived_graph(path, derivation)


def _load_session(spec: ModelSpec, path: Path, intra_op_threads: int) -> tuple[Any, frozenset[str]]:
    import onnxruntime as ort  # type: ignore[import-untyped]  # onnxruntime ships no type information

    if spec.derive == "dynamic_int8":
        try:
            import onnx  # noqa: F401  # the quantizer reads and writes graphs with it
        except ImportError as exc:
            raise EmbedderUnavailable(
                spec.model_id,
                "not_installed",
                f"embedding model {spec.model_id!r} needs onnx, which is not installed; "
                f"install it with: {spec.install_hint}",
                distribution="onnx",
            ) from exc
    try:
        options = ort.SessionOptions()
        options.intra_op_num_threads = intra_op_threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: its warnings are about graph rewrites, not ours
        graph: str | bytes = _derived(path, spec.derive) if spec.derive == "dynamic_int8" else str(path)
        session = ort.InferenceSession(graph, sess_options=options, providers=["CPUExecutionProvider"])
        inputs = frozenset(str(i.name) for i in session.get_inputs())
        outputs = {str(o.name): o.shape for o in session.get_outputs()}
    except Exception as exc:
        raise _unloadable(spec, f"the model {path}", f"cannot be loaded ({type(exc).__name__})") from exc
    missing = [name for name in _ID_INPUTS if name not in inputs]
    unknown = sorted(inputs - {*_ID_INPUTS, *_OPTIONAL_INPUTS})
    if missing or unknown:
        raise _unloadable(
            spec,
            f"the model {path}",
            f"takes inputs {sorted(inputs)}, not input_ids/attention_mask[/token_type_ids]",
        )
    shape = outputs.get(spec.output)
    if shape is None:
        raise _unloadable(
            spec, f"the model {path}", f"has no output {spec.output!r} (it has {sorted(outputs)})"
        )
    if len(shape) != 3 or (isinstance(shape[-1], int) and shape[-1] != spec.dim):
        raise _unloadable(
            spec,
            f"the model {path}",
            f"gives {spec.output!r} of shape {shape}, not (batch, tokens, {spec.dim})",
        )
    return session, inputs
