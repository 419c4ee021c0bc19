"""A static embedding distilled from a sentence model: one vector per word piece, averaged.

The sentence model (all-MiniLM-L6-v2 here) is run once on each word piece alone (``[CLS] piece
[SEP]``, pooled as the model pools) and that vector is the piece's; a text's vector is the mean of
its pieces' vectors, each weighted by smooth inverse frequency, ``a / (a + p)`` with ``a`` =
1e-4 and ``p`` a piece's Zipf frequency estimated from its rank in the vocabulary (the WordPiece
vocabulary lists pieces by frequency after its reserved and single-character entries): "the"
weighs 0.62, "user" 0.81, "workout" 0.96; L2-normalized. The Model2Vec family
distils static embeddings the same way; nothing is downloaded, the table is derived from the
pinned model file. The weighting was chosen on the development sets of
``benchmarks/recall_quality`` (docs/benchmarks.md): ``a`` = 1e-4 against 3e-4, 3e-5, 1e-5 and the
log of the rank.

A piece is distilled the first time a text holds it (a batch of the call's unseen pieces, through
the source model), and kept for the life of the process; a thread at the idle CPU priority
distils the rest of the vocabulary after load (about half a minute of one core), so a call soon
costs only a tokenization and a weighted sum, tens of microseconds a text. Nothing is written to disk,
so there is no cache to trust or poison. A piece's vector does not depend on which other pieces
were distilled with it (the source model runs float activations, batch-invariant), so a text's
vector is the same whatever was embedded before it.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..priority import IDLE_NICE, lower_this_thread, start_background, stopping
from .models import ModelSpec
from .onnx_embedder import OnnxEmbedder, _texts
from .wordpiece import WordPiece

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["PieceReader", "StaticEmbedder", "piece_mean", "text_pieces"]

_DISTIL_BATCH = 256  # pieces run through the source model per graph call (all three tokens long)
SIF_A = 1e-4  # smooth inverse frequency's constant (the module docstring)
ZIPF_OFFSET = 10  # a piece's frequency taken as proportional to 1 / (its rank + this)


def sif_weights(size: int) -> npt.NDArray[np.float32]:
    """Each vocabulary id's weight in a text's mean: ``a / (a + p)``, ``p`` the Zipf estimate of
    its frequency from its rank (id + 1), normalized over the vocabulary."""
    import numpy as np

    frequency = 1.0 / (np.arange(1, size + 1, dtype=np.float64) + ZIPF_OFFSET)
    frequency /= frequency.sum()
    weights: npt.NDArray[np.float32] = (SIF_A / (SIF_A + frequency)).astype(np.float32)
    return weights


class PieceReader(NamedTuple):
    """How a text becomes the pieces a static model averages, for another process to read them
    as :class:`StaticEmbedder` does (a scan helper, recall/scan_process.py): the vocabulary file,
    the window, and the characters of a text read."""

    vocabulary: Path
    window: int
    max_chars: int

    def tokenizer(self) -> WordPiece:
        return WordPiece.from_file(self.vocabulary, window=self.window)


def text_pieces(tokenizer: WordPiece, text: str, max_chars: int) -> list[int]:
    """The piece ids of ``text`` a static model averages: the source model's, without [CLS] and
    [SEP]; a text of no pieces (empty, white space) is the one piece [UNK]."""
    return tokenizer.encode(text[:max_chars])[1:-1] or [tokenizer.unk_id]


def piece_mean(
    table: npt.NDArray[np.float32], weights: npt.NDArray[np.float32], ids: npt.NDArray[np.intp]
) -> npt.NDArray[np.float32]:
    """One text's vector from its piece ``ids``: their rows of ``table`` weighted by ``weights``,
    summed and L2-normalized (what :class:`StaticEmbedder` embeds a text as; a scan helper embeds a
    query with it too, recall/scan_process.py)."""
    import numpy as np

    # One text's weighted sum by einsum's own loop: the same whatever else is in the call
    # (np.add.reduceat over the whole call's pieces was 20 times slower), over its length.
    # A recall's query is one text, and there each numpy call counts: called cold, just
    # after the lexical ranking of the recall before, each took 3 to 7 times its cost in a
    # loop (5 to 10 us), and np.linalg.norm's steps were a third of the embedding.
    vector = np.einsum("i,ij->j", weights[ids], table[ids])
    normalized: npt.NDArray[np.float32] = vector / max(math.sqrt(float(np.dot(vector, vector))), 1e-12)
    return normalized


class StaticEmbedder:
    """An :class:`~meta_memory.memory.embedding.Embedder` of piece vectors distilled from ``source``."""

    def __init__(self, spec: ModelSpec, source: OnnxEmbedder) -> None:
        import numpy as np

        self.spec = spec
        self._source = source
        tokenizer = source._tokenizer
        self._tokenizer = tokenizer
        size = tokenizer.vocab_size
        self._table = np.zeros((size, spec.dim), dtype=np.float32)
        self._known = np.zeros(size, dtype=bool)
        self._complete = False  # every piece distilled (set once, by the vocabulary's thread)
        self._weights = sif_weights(size)
        self._moved: tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None = None
        specials = [tokenizer.token_to_id(t) for t in ("[CLS]", "[SEP]", "[UNK]")]
        if None in specials:
            raise source._failed("loading", ValueError("the tokenizer lacks [CLS], [SEP] or [UNK]"))
        self._cls, self._sep, self._unk = (int(i) for i in specials if i is not None)
        self._lock = threading.Lock()
        me = weakref.ref(self)
        start_background(lambda: _distil_vocabulary(me), "meta-static-distil")

    @property
    def model_id(self) -> str:
        return self.spec.model_id

    @property
    def runtime(self) -> str:
        """The runtime the pieces are distilled on (the source model's)."""
        return self._source.runtime

    @property
    def dim(self) -> int:
        return self.spec.dim

    @property
    def max_tokens(self) -> int:
        return self.spec.window

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(_texts(texts))

    def embed_queries(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(_texts(texts))

    def embed_documents(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return self._embed(_texts(texts))

    @property
    def pieces_known(self) -> int:
        """Word pieces distilled so far in this process."""
        return int(self._known.sum())

    @property
    def distilled(self) -> bool:
        """Whether every piece of the vocabulary is distilled (a call then only sums)."""
        return bool(self._known.all())

    def __repr__(self) -> str:
        return f"StaticEmbedder({self.model_id!r}, dim={self.dim})"

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        ids = [np.array(row, dtype=np.intp) for row in self._pieces(texts)]
        pieces = ids[0] if len(ids) == 1 else np.concatenate(ids)
        if not self._complete and not self._known[pieces].all():
            self._distil(pieces)
        table, weights = self._table, self._weights
        for i, row in enumerate(ids):
            out[i] = piece_mean(table, weights, row)
        return out

    def piece_reader(self) -> PieceReader | None:
        """How another process reads a text's pieces as this embedder does, once every piece is
        distilled (``None`` before): :func:`piece_mean` over :meth:`shared_table`'s arrays of
        :func:`text_pieces` of a text is then ``embed_queries([text])[0]``, bit for bit."""
        if not self._complete:
            return None
        source = self._source
        return PieceReader(source.tokenizer_file, source.spec.window, source._max_chars)

    def shared_table(
        self, move: Callable[[npt.NDArray[np.float32]], npt.NDArray[np.float32]]
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
        """The piece table and its weights once every piece is distilled (``None`` before), each
        moved once by ``move`` (a copy in memory another process maps, recall/shared.py) and
        read from there by this embedder too: the table is not written again once complete."""
        if not self._complete:
            return None
        with self._lock:
            if self._moved is None:
                self._table, self._weights = move(self._table), move(self._weights)
                self._moved = (self._table, self._weights)
            return self._moved

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """The token ids the source model reads for each text, [CLS] and [SEP] included, after
        truncation: the pieces between them are the ones averaged."""
        return self._source.token_ids(texts)

    def _pieces(self, texts: list[str]) -> list[list[int]]:
        """Each text's word pieces (:func:`text_pieces`)."""
        source = self._source
        return [text_pieces(source._tokenizer, text, source._max_chars) for text in texts]

    def _distil(self, ids: np.ndarray) -> None:
        """Run the source model on each piece of ``ids`` not distilled yet. The model runs outside
        the lock (two threads may distil one piece, to the same vector), so a call never waits on
        the idle-priority thread distilling the vocabulary."""
        import numpy as np

        unseen = np.unique(ids[~self._known[ids]]) if len(ids) else ids
        for start in range(0, len(unseen), _DISTIL_BATCH):
            chunk = unseen[start : start + _DISTIL_BATCH]
            vectors = self._source._run([[self._cls, int(i), self._sep] for i in chunk])
            with self._lock:  # the row before the flag: a piece marked known has its vector
                self._table[chunk] = vectors
                self._known[chunk] = True


def _distil_vocabulary(ref: weakref.ref[StaticEmbedder]) -> None:
    """Distil every piece not distilled yet, a batch at a time at the idle priority; stops when the
    embedder is gone or its source fails (a text's call distils its own pieces either way)."""
    import numpy as np

    lower_this_thread(IDLE_NICE)
    start = 0
    while not stopping():
        embedder = ref()
        if embedder is None:
            return
        size = len(embedder._known)
        if start >= size:
            embedder._complete = bool(embedder._known.all())
            return
        try:
            embedder._distil(np.arange(start, min(size, start + _DISTIL_BATCH), dtype=np.int64))
        except Exception:  # the model failed: calls will report it themselves
            return
        start += _DISTIL_BATCH
        del embedder
