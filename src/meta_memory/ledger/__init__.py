"""The assertion ledger (``meta/memory/*``): facts and conflict signals the runtime owns in memory,
persisted whole to ``memory-ledger-state.json`` by the ``local_json`` backend, optionally gated by an
HTTP health check. ``model`` holds the vocabulary and the one request validator, ``ledger`` the
algorithm, ``local_json`` the file, ``health`` the probe.
"""

from __future__ import annotations

from .health import HEALTHCHECK_TIMEOUT_S, HealthCheck, HealthEndpoint, parse_health_endpoint
from .ledger import Ledger, LedgerBackend
from .local_json import LocalJsonBackend
from .model import (
    ASSERTION_ID_PREFIX,
    DEFAULT_STORE,
    FIRST_ASSERTION_SEQUENCE,
    MAX_RETAINED_ASSERTIONS,
    STORES,
    Assertion,
    ConflictSignal,
    IndexRequest,
    IndexResult,
    LedgerSnapshot,
    QueryRequest,
    QueryResult,
    StoreInfo,
    StoresResult,
    canonical_store,
    canonical_token,
    parse_index_params,
    parse_query_params,
    parse_stores_params,
)

__all__ = [
    "ASSERTION_ID_PREFIX",
    "DEFAULT_STORE",
    "FIRST_ASSERTION_SEQUENCE",
    "HEALTHCHECK_TIMEOUT_S",
    "MAX_RETAINED_ASSERTIONS",
    "STORES",
    "Assertion",
    "ConflictSignal",
    "HealthCheck",
    "HealthEndpoint",
    "IndexRequest",
    "IndexResult",
    "Ledger",
    "LedgerBackend",
    "LedgerSnapshot",
    "LocalJsonBackend",
    "QueryRequest",
    "QueryResult",
    "StoreInfo",
    "StoresResult",
    "canonical_store",
    "canonical_token",
    "parse_health_endpoint",
    "parse_index_params",
    "parse_query_params",
    "parse_stores_params",
]
