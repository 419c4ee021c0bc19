"""meta_memory: the memory runtime for LLM agents.

Agent memory (identity-scoped, per-realm SQLite, recalled and injected as quoted
observations), the assertion ledger (facts and conflict signals for approval gating),
and the memory firewall around them, reachable over JSON-RPC 2.0.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from .sdk import (
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


def __getattr__(name: str) -> Any:
    # The SDK (and with it the whole runtime) loads on first use, so a process that needs one
    # corner of the package, such as the indexing process, does not pay for importing all of it.
    # Called only for names not defined above: the exported ones left are the SDK's.
    if name in __all__:
        from . import sdk

        return getattr(sdk, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
