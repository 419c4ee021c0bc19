"""The public surface of the recall package is pinned."""

from __future__ import annotations

import meta_memory.memory.recall as recall


def test_recall_package_exports_exactly_its_public_api() -> None:
    assert sorted(recall.__all__) == [
        "ANALYZER_VERSION",
        "AnalyzedRecord",
        "CollectionStats",
        "DEFAULT_PARAMS",
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
    assert all(hasattr(recall, name) for name in recall.__all__)
