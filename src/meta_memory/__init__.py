"""meta_memory: the memory runtime for LLM agents.

Agent memory (identity-scoped, per-realm SQLite, recalled and injected as quoted
observations), the assertion ledger (facts and conflict signals for approval gating),
and the memory firewall around them, reachable over JSON-RPC 2.0.
"""

from __future__ import annotations

__version__ = "0.1.0"
CONTRACT_VERSION = "0.9.9"

from .errors import (  # noqa: E402
    AccessDenied,
    CapabilityUnavailable,
    ConfigError,
    InternalError,
    InvalidParams,
    MemoryBackendUnavailable,
    MetaError,
    QuarantineReviewRefused,
    ReadOnly,
    StorageRefused,
    StoreCorrupt,
    WriteRefused,
)
from .sdk import (  # noqa: E402
    AgentMemoryForgetResult,
    AgentMemoryRecord,
    AgentMemoryUpdateResult,
    MemoryIndexResult,
    MemoryQueryResult,
    MemoryStoreInfo,
    Meta,
    MetaBuilder,
    MetaHandle,
    local_json,
)

__all__ = [
    "CONTRACT_VERSION",
    "AccessDenied",
    "AgentMemoryForgetResult",
    "AgentMemoryRecord",
    "AgentMemoryUpdateResult",
    "CapabilityUnavailable",
    "ConfigError",
    "InternalError",
    "InvalidParams",
    "MemoryBackendUnavailable",
    "MemoryIndexResult",
    "MemoryQueryResult",
    "MemoryStoreInfo",
    "Meta",
    "MetaBuilder",
    "MetaError",
    "MetaHandle",
    "QuarantineReviewRefused",
    "ReadOnly",
    "StorageRefused",
    "StoreCorrupt",
    "WriteRefused",
    "__version__",
    "local_json",
]
