"""The bundled embedder: a sentence-embedding model's ONNX file, run on the CPU.

Two runtimes run the same file (``runtime``):

- ``numpy`` (:mod:`.bert`): the BERT encoder computed with numpy from the file's weights, read
  without onnx (:mod:`.onnx_file`). It is what the `semantic` extra installs: nothing beyond numpy.
- ``onnxruntime``: the graph run by onnxruntime (the `semantic-fast` extra, about 80 MB more), which
  computes the int8 products with the CPU's integer instructions: three to four times the
  throughput, a quarter of the query latency (``docs/benchmarks.md``).

``auto`` takes onnxruntime when it is installed (with onnx, for a model derived at load), numpy
otherwise. The two give the same vectors for the float model (within float32 rounding) and vectors
within a cosine of 0.99 of each other for the dynamically quantized ones, whose rounding of each
activation to uint8 differs where the float inputs differ in their last bit; vectors of either
rank alike, and the vectors stored under one model id are compared with queries of either.

Texts are tokenized by :class:`~.wordpiece.WordPiece` from the model's vocabulary, cut to the
model's window, and run in groups of equal length, so no text is padded and a text's vector is the
same bit for bit whatever else is in the call. The last hidden state is pooled as the model was
trained (the mean over the tokens, or the [CLS] vector) and L2-normalized. With ``parallel`` above
one, the batches of one call run on that many threads at once (numpy and onnxruntime release the GIL
while they compute), at a lower CPU priority than the caller when asked (``parallel_nice``), so a
background embedder yields the cores to request threads.

numpy (and onnxruntime) are imported only when a model is loaded, so this module imports without them.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..priority import BACKGROUND_NICE, lower_this_thread
from .derive import Derivation, derived_graph
from .errors import EmbedderUnavailable
from .models import ModelSpec
from .wordpiece import WordPiece

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BACKGROUND_NICE", "OnnxEmbedder", "Runtime", "runtime_available"]

Runtime = Literal["auto", "numpy", "onnxruntime"]

_ID_INPUTS = ("input_ids", "attention_mask")
_OPTIONAL_INPUTS = ("token_type_ids",)
# A word piece is made of at least one character, and the WordPiece model turns any word longer than
# 100 characters into a single [UNK]: a text cut to this many characters per token of the window
# still fills the window unless it is almost all whitespace, and tokenizing a huge text costs no more
# than tokenizing a window's worth.
_CHARS_PER_TOKEN = 128
# Tokens in one numpy batch (texts x length): bounds the attention scores' memory (12 heads x
# length^2 floats a text) and keeps a batch in the CPU's caches.
_NUMPY_BATCH_TOKENS = 4096


def runtime_available(runtime: Literal["numpy", "onnxruntime"], spec: ModelSpec | None = None) -> bool:
    """Whether ``runtime`` can run ``spec`` here (onnxruntime, and onnx for a derived graph)."""
    import importlib

    names = ["numpy"]
    if runtime == "onnxruntime":
        names.append("onnxruntime")
        if spec is not None and spec.derive == "dynamic_int8":
            names.append("onnx")
    try:
        for name in names:
            importlib.import_module(name)
    except ImportError:
        return False
    return True


class OnnxEmbedder:
    """An :class:`~meta_memory.memory.embedding.Embedder` over one ONNX file and its tokenizer.

    Build it with :func:`~meta_memory.memory.embedding.load_embedder`, which checks the files'
    pinned hashes first; this constructor runs whatever files it is given.

    Raises:
        EmbedderUnavailable: the runtime cannot load the model, the vocabulary is unreadable, or the
            graph does not take the inputs / give the output this embedder feeds and reads
            (``unloadable``); ``runtime="onnxruntime"`` without it installed (``not_installed``).
        ValueError: ``intra_op_threads``, ``batch_size`` or ``parallel`` is below 1.
    """

    def __init__(
        self,
        spec: ModelSpec,
        model_file: Path,
        tokenizer_file: Path,
        *,
        runtime: Runtime = "auto",
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
        if runtime == "auto":
            runtime = "onnxruntime" if runtime_available("onnxruntime", spec) else "numpy"
        elif runtime == "onnxruntime" and not runtime_available("onnxruntime", spec):
            needs = (
                "onnxruntime and onnx, which are not installed; install them"
                if spec.derive == "dynamic_int8"
                else "onnxruntime, which is not installed; install it"
            )
            raise EmbedderUnavailable(
                spec.model_id,
                "not_installed",
                f"embedding model {spec.model_id!r} on onnxruntime needs {needs} with: "
                "pip install 'meta-memory[semantic-fast]'",
                distribution="onnxruntime",
                extra="semantic-fast",
            )
        elif runtime not in ("numpy", "onnxruntime"):
            raise ValueError(f"runtime must be auto, numpy or onnxruntime, not {runtime!r}")
        self.spec = spec
        self.runtime: Literal["numpy", "onnxruntime"] = runtime
        self.parallel = parallel
        self._parallel_nice = parallel_nice
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        # onnxruntime quantizes a dynamically quantized graph's activations over the whole batch, so
        # such a model runs one text per call there (``max_batch``); numpy quantizes each text alone.
        capped = runtime == "onnxruntime" and spec.max_batch is not None
        self.batch_size = min(batch_size, spec.max_batch or batch_size) if capped else batch_size
        self._max_chars = spec.window * _CHARS_PER_TOKEN
        self._tokenizer = _load_tokenizer(spec, tokenizer_file)
        self.tokenizer_file = tokenizer_file  # (a static model's scan helper loads it too)
        self._run_ids: Any
        if runtime == "numpy":
            self._run_ids = _load_numpy(spec, model_file).hidden
        else:
            session, inputs = _load_session(spec, model_file, intra_op_threads)
            self._run_ids = functools.partial(_run_session, self, session, inputs)

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
        return (
            f"OnnxEmbedder({self.model_id!r}, dim={self.dim}, max_tokens={self.max_tokens}, "
            f"runtime={self.runtime!r})"
        )

    # -- internals -------------------------------------------------------------------------------

    def _tokenize(self, texts: list[str], prefix: str) -> list[list[int]]:
        return [self._tokenizer.encode(prefix + text[: self._max_chars]) for text in texts]

    def _embed(self, texts: list[str], prefix: str) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = self._tokenize(texts, prefix)
        batches = self._batches(ids)
        if len(batches) == 1 or self.parallel == 1:
            for rows in batches:
                out[rows] = self._run([ids[i] for i in rows])
            return out
        runs = self._threads().map(lambda rows: self._run([ids[i] for i in rows]), batches)
        for rows, vectors in zip(batches, runs, strict=True):
            out[rows] = vectors
        return out

    def _batches(self, ids: list[list[int]]) -> list[list[int]]:
        """The texts' indexes in batches of equal token length (no padding), each at most
        ``batch_size`` texts and, on numpy, about _NUMPY_BATCH_TOKENS tokens."""
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        batches: list[list[int]] = []
        for i in order:
            length = len(ids[i])
            limit = self.batch_size
            if self.runtime == "numpy":
                limit = max(1, min(limit, _NUMPY_BATCH_TOKENS // length))
            last = batches[-1] if batches else None
            if last is not None and len(ids[last[0]]) == length and len(last) < limit:
                last.append(i)
            else:
                batches.append([i])
        return batches

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

        input_ids = np.array(batch, dtype=np.int64)  # one length: see _batches
        try:
            hidden = np.asarray(self._run_ids(input_ids), dtype=np.float32)
        except EmbedderUnavailable:
            raise
        except Exception as exc:  # the runtime's error text is not ours to show
            raise self._failed("running", exc) from exc
        pooled = hidden[:, 0, :] if self.spec.pooling == "cls" else hidden.mean(axis=1)
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


def _load_tokenizer(spec: ModelSpec, path: Path) -> WordPiece:
    try:
        return WordPiece.from_file(path, window=spec.window)
    except (OSError, UnicodeError, ValueError) as exc:
        raise _unloadable(spec, f"the vocabulary {path}", f"cannot be loaded ({type(exc).__name__})") from exc


@functools.lru_cache(maxsize=4)
def _numpy_encoder(path: Path, heads: int, derive_int8: bool) -> Any:
    """The encoder, once per process and file (a process loads its model once, tests many times);
    it holds only arrays it never writes, so every embedder of the file shares it."""
    from .bert import BertEncoder
    from .onnx_file import read_graph

    return BertEncoder(read_graph(path.read_bytes()), heads=heads, derive_int8=derive_int8)


def _load_numpy(spec: ModelSpec, path: Path) -> Any:
    from .bert import GraphNotUnderstood
    from .onnx_file import OnnxFileError

    try:
        encoder = _numpy_encoder(path, spec.heads, spec.derive == "dynamic_int8")
    except (OSError, OnnxFileError, GraphNotUnderstood) as exc:
        raise _unloadable(spec, f"the model {path}", f"cannot be loaded ({type(exc).__name__})") from exc
    if encoder.dim != spec.dim:
        raise _unloadable(spec, f"the model {path}", f"has hidden size {encoder.dim}, not {spec.dim}")
    if encoder.max_positions < spec.window:
        raise _unloadable(
            spec, f"the model {path}", f"reads {encoder.max_positions} positions, fewer than {spec.window}"
        )
    return encoder


def _run_session(
    embedder: OnnxEmbedder, session: Any, inputs: frozenset[str], input_ids: np.ndarray
) -> np.ndarray:
    import numpy as np

    feeds = {"input_ids": input_ids, "attention_mask": np.ones_like(input_ids)}
    if "token_type_ids" in inputs:
        feeds["token_type_ids"] = np.zeros_like(input_ids)
    (hidden,) = session.run([embedder.spec.output], feeds)
    return np.asarray(hidden)


@functools.lru_cache(maxsize=2)
def _derived(path: Path, derivation: Derivation) -> bytes:
    """The derived graph, once per process and file (a process loads its model once, tests many times)."""
    return derived_graph(path, derivation)


def _load_session(spec: ModelSpec, path: Path, intra_op_threads: int) -> tuple[Any, frozenset[str]]:
    import onnxruntime as ort  # type: ignore[import-untyped]  # onnxruntime ships no type information

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
