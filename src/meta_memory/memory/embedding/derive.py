"""Graphs derived at load time from a pinned model file, never downloaded.

The numpy runtime derives its weights itself (:mod:`.bert`); this module derives the graph the
onnxruntime runtime runs. ``dynamic_int8``: the graph with every matrix product's weights quantized to int8 per output channel
and its activations quantized per call (onnxruntime's dynamic quantization, u8 x s8 products). A
MiniLM run this way costs about half the CPU of the same graph with float products (its weights
are stored as int8 but computed in float32). The source file is the pinned one (checked before this
runs); the derivation is deterministic for one onnxruntime release, and takes about two seconds,
once per process that loads the model.

Activations are quantized with one scale for the whole input tensor, so a text's vector depends on
what else is in its batch: a model derived this way runs one text per graph call (``max_batch = 1``)
and gets its throughput from running texts in parallel instead.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

__all__ = ["Derivation", "derived_graph"]

Derivation = Literal["dynamic_int8", "static_tokens"]
"""``static_tokens`` is not a graph: static_embedder.py distils word-piece vectors from the model."""


def derived_graph(source: Path, derivation: Derivation) -> bytes:
    """The serialized graph ``derivation`` makes of the ONNX file ``source``.

    Raises:
        ImportError: onnx (which onnxruntime's quantizer reads graphs with) is not installed.
        Exception: onnxruntime or onnx could not read or rewrite the graph (its own error).
    """
    if derivation != "dynamic_int8":
        raise ValueError(f"unknown derivation {derivation!r}")
    import onnxruntime as ort  # type: ignore[import-untyped]  # onnxruntime ships no type information
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped]

    with tempfile.TemporaryDirectory(prefix="meta-embedder-") as tmp:
        folded, quantized = Path(tmp, "folded.onnx"), Path(tmp, "quantized.onnx")
        # Fold the graph's constant subgraphs (the int8 weights' Cast and Mul back to float) so the
        # quantizer sees float weights; the basic level rewrites nothing specific to this CPU.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        options.log_severity_level = 3
        ort.InferenceSession(str(source), sess_options=options, providers=["CPUExecutionProvider"])
        with _quiet_quantizer():
            quantize_dynamic(folded, quantized, weight_type=QuantType.QInt8, per_channel=True)
        return quantized.read_bytes()


@contextlib.contextmanager
def _quiet_quantizer() -> Iterator[None]:
    """The quantizer logs advice through the root logger (``logging.warning``), which would also
    configure logging for a process that has not: a handler that drops everything stands in while
    it runs, and its advice is filtered out of the handlers a process configured itself."""
    root = logging.getLogger()
    placeholder = logging.NullHandler()
    quiet = _DropAdvice()
    root.addHandler(placeholder)
    root.addFilter(quiet)
    try:
        yield
    finally:
        root.removeFilter(quiet)
        root.removeHandler(placeholder)


class _DropAdvice(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "root" and "pre-process" in record.getMessage())
