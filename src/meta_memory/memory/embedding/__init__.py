"""Local text embedding for hybrid recall: sentence-embedding models that ship inside PyPI wheels.

``protocol`` defines :class:`Embedder`, what recall asks of a model; ``models`` is the table of
supported models, each pinned to its files by sha256; ``pinning`` finds those files in the installed
distributions and refuses any that is not the pinned one; ``onnx_embedder`` runs one on the CPU,
with numpy (``bert``, over the weights ``onnx_file`` reads) or onnxruntime; ``loader`` puts them
together behind :func:`load_embedder`. Nothing here reaches a network or a model hub. The runtime
libraries come with ``pip install 'meta-memory[semantic]'`` (numpy) or ``[semantic-fast]`` (and
onnxruntime), and are imported only when a model is loaded.
"""

from __future__ import annotations

from .errors import INSTALL_HINT, EmbedderUnavailable
from .loader import load_embedder
from .models import DEFAULT_MODEL, MODELS, ModelSpec, PackagedFile
from .onnx_embedder import BACKGROUND_NICE, OnnxEmbedder, Runtime, runtime_available
from .pinning import Locate, installed_path
from .protocol import Embedder

__all__ = [
    "BACKGROUND_NICE",
    "DEFAULT_MODEL",
    "INSTALL_HINT",
    "MODELS",
    "Embedder",
    "EmbedderUnavailable",
    "Locate",
    "ModelSpec",
    "OnnxEmbedder",
    "PackagedFile",
    "Runtime",
    "installed_path",
    "load_embedder",
    "runtime_available",
]
