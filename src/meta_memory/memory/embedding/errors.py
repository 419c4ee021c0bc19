"""The one error of the embedder: a model that cannot be had or cannot run.

``EmbedderUnavailable`` sits under :class:`~meta_memory.errors.CapabilityUnavailable` (-32004), so it
crosses the wire as "feature not available" with ``data.kind == "embedder_unavailable"``. Its
message says what to install (``pip install 'meta-memory[semantic]'``, or ``[semantic-fast]`` for
onnxruntime), and ``data.extra`` names that extra; the text of a runtime's own exceptions never
reaches it (they stay chained as ``__cause__``).
"""

from __future__ import annotations

from typing import Any

from ...errors import CapabilityUnavailable

__all__ = ["INSTALL_HINT", "EmbedderUnavailable"]

INSTALL_HINT = "pip install 'meta-memory[semantic]'"


class EmbedderUnavailable(CapabilityUnavailable):
    """The embedding model is unknown, not installed, fails its pinned hash, or failed to run.

    ``reason`` is one of ``unknown_model``, ``not_installed``, ``hash_mismatch``, ``unloadable``,
    ``failed``; ``model`` is the model id.
    """

    def __init__(self, model: str, reason: str, message: str, **extra: Any) -> None:
        super().__init__(
            message,
            data={
                "kind": "embedder_unavailable",
                "model": model,
                "reason": reason,
                "extra": "semantic",
                **extra,
            },
        )
        self.model = model
        self.reason = reason
