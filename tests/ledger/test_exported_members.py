from __future__ import annotations

import meta_memory.ledger as ledger_package


def test_the_ledger_package_exports_exactly_its_public_surface() -> None:
    assert sorted(ledger_package.__all__) == [
        "ASSERTION_ID_PREFIX",
        "Assertion",
        "ConflictSignal",
        "DEFAULT_STORE",
        "FIRST_ASSERTION_SEQUENCE",
        "HEALTHCHECK_TIMEOUT_S",
        "HealthCheck",
        "HealthEndpoint",
        "IndexRequest",
        "IndexResult",
        "Ledger",
        "LedgerBackend",
        "LedgerSnapshot",
        "LocalJsonBackend",
        "MAX_RETAINED_ASSERTIONS",
        "QueryRequest",
        "QueryResult",
        "STORES",
        "StoreInfo",
        "StoresResult",
        "canonical_store",
        "canonical_token",
        "parse_health_endpoint",
        "parse_index_params",
        "parse_query_params",
        "parse_stores_params",
    ]
    assert all(hasattr(ledger_package, name) for name in ledger_package.__all__)


def test_the_retention_cap_id_prefix_and_first_sequence_are_the_reference_values() -> None:
    assert ledger_package.MAX_RETAINED_ASSERTIONS == 4096
    assert ledger_package.ASSERTION_ID_PREFIX == "memory-assert-"
    assert ledger_package.FIRST_ASSERTION_SEQUENCE == 0
    assert ledger_package.HEALTHCHECK_TIMEOUT_S == 2.0
