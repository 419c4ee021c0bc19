"""Loading an embedding model by its id: the table entry, the runtime libraries, the pinned files.

:func:`load_embedder` is the one way in. It refuses, with :class:`EmbedderUnavailable` naming the
extra to install, an unknown model id, a missing extra (numpy, the wheels that carry the files;
onnxruntime when it is asked for by name) and any file that is not the pinned one, before a runtime
reads a byte of it.
"""

from __future__ import annotations

import dataclasses
import importlib

from .errors import EmbedderUnavailable
from .models import DEFAULT_MODEL, MODELS, ModelSpec, current_model
from .onnx_embedder import OnnxEmbedder, Runtime
from .pinning import Locate, installed_path, verified_files
from .protocol import Embedder
from .static_embedder import StaticEmbedder

__all__ = ["load_embedder"]

_RUNTIME = ("numpy",)


def load_embedder(
    model: str | ModelSpec = DEFAULT_MODEL,
    *,
    runtime: Runtime = "auto",
    intra_op_threads: int = 1,
    batch_size: int = 32,
    parallel: int = 1,
    parallel_nice: int = 0,
    locate: Locate = installed_path,
) -> Embedder:
    """The embedder for ``model``: an id from :data:`MODELS`, or a spec of one's own.

    Args:
        model: the model id (the key its vectors are stored under) or a :class:`ModelSpec`.
        runtime: ``numpy``, ``onnxruntime`` (the `semantic-fast` extra), or ``auto``: onnxruntime
            when it is installed, numpy otherwise (see :mod:`.onnx_embedder`).
        intra_op_threads: onnxruntime's threads inside one operator (1: one core); numpy's
            products use its BLAS library's threads.
        batch_size: texts run together (on onnxruntime, capped by the model's ``max_batch``).
        parallel: batches of one call run at once, each on a thread of its own.
        parallel_nice: the CPU niceness those threads run at, at least (0: the caller's).
        locate: where a packaged file is installed; the default asks ``importlib.metadata``.

    Raises:
        EmbedderUnavailable: the model is unknown (``unknown_model``), the extra is not installed
            (``not_installed``), a file fails its pin (``hash_mismatch``), or the runtime
            cannot load it (``unloadable``).
        ValueError: ``intra_op_threads``, ``batch_size`` or ``parallel`` is below 1.
    """
    for knob, value in (
        ("intra_op_threads", intra_op_threads),
        ("batch_size", batch_size),
        ("parallel", parallel),
    ):
        if value < 1:  # whatever the model (the static one runs its source with its own batches)
            raise ValueError(f"{knob} must be at least 1, not {value}")
    spec = model if isinstance(model, ModelSpec) else _spec(model)
    for name in _RUNTIME:
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise EmbedderUnavailable(
                spec.model_id,
                "not_installed",
                f"embedding model {spec.model_id!r} needs {name}, which is not installed; "
                f"install it with: {spec.install_hint}",
                distribution=name,
            ) from exc
    model_file, tokenizer_file = verified_files(spec, locate)
    if spec.derive == "static_tokens":
        # Pieces are distilled in batches of equal length: the source runs as it is, batched.
        source = OnnxEmbedder(
            dataclasses.replace(spec, derive=None),
            model_file,
            tokenizer_file,
            runtime=runtime,
            intra_op_threads=intra_op_threads,
            batch_size=256,
        )
        return StaticEmbedder(spec, source)
    return OnnxEmbedder(
        spec,
        model_file,
        tokenizer_file,
        runtime=runtime,
        intra_op_threads=intra_op_threads,
        batch_size=batch_size,
        parallel=parallel,
        parallel_nice=parallel_nice,
    )


def _spec(model_id: str) -> ModelSpec:
    spec = MODELS.get(current_model(model_id))
    if spec is None:
        raise EmbedderUnavailable(
            model_id,
            "unknown_model",
            f"unknown embedding model {model_id!r}; known: {', '.join(sorted(MODELS))}",
        )
    return spec
