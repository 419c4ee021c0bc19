"""Contextual recall: analyzing text into terms, the per-scope term-index seam, and ranking records by a
query.

``analyzer`` turns titles, bodies, tags and queries into stemmed terms plus paraphrase concepts and cues;
``index`` defines :class:`TermIndex`, the small batch-read protocol a store implements for one scope, with an
in-memory reference; ``scorer`` ranks a scope with field-weighted BM25, pruning and neighbor smoothing. The
``lexicon`` and ``stemmer`` modules hold the word lists and the Porter stemmer the analyzer uses.
"""

from __future__ import annotations

from meta_memory.memory.recall.analyzer import (
    ANALYZER_VERSION,
    AnalyzedRecord,
    analyze_record,
    index_terms,
    query_terms,
)
from meta_memory.memory.recall.index import (
    CollectionStats,
    InMemoryTermIndex,
    Opening,
    Posting,
    TermIndex,
    TieKey,
    compose_opening,
)
from meta_memory.memory.recall.scorer import DEFAULT_PARAMS, RankParams, rank

__all__ = [
    "ANALYZER_VERSION",
    "DEFAULT_PARAMS",
    "AnalyzedRecord",
    "CollectionStats",
    "InMemoryTermIndex",
    "Opening",
    "Posting",
    "RankParams",
    "TermIndex",
    "TieKey",
    "analyze_record",
    "compose_opening",
    "index_terms",
    "query_terms",
    "rank",
]
