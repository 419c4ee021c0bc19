"""What recall needs of an embedder: texts in, unit vectors of one model out.

An :class:`Embedder` names its model (``model_id``, the key vectors are stored under, so vectors of
two models are never ranked together), the vectors' dimension and the window of tokens it reads; a
longer text is truncated to the window, never refused. Retrieval models may embed a question and
a stored record differently (e5's ``query:``/``passage:``, bge's query instruction), so callers
use :meth:`Embedder.embed_queries` and :meth:`Embedder.embed_documents` and need not know.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """A sentence-embedding model. Every ``embed*`` method returns a C-contiguous float32 array of
    shape ``(len(texts), dim)`` whose rows have L2 norm 1 (``(0, dim)`` for no texts), the same
    vector for a text whatever else is in the call (within a float32 rounding where the products
    are a BLAS library's: bert.py).

    Raises (each ``embed*``):
        EmbedderUnavailable: the model failed to run (``reason == "failed"``).
        TypeError: ``texts`` is a ``str`` or holds something that is not one.
    """

    @property
    def model_id(self) -> str: ...

    @property
    def dim(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """The window, in the model's tokens including its special tokens."""
        ...

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The texts as they are, for symmetric similarity (text against text)."""
        ...

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Questions to search with, prefixed as the model was trained to see them."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Records to be found, prefixed as the model was trained to see them."""
        ...
