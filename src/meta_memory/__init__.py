"""meta_memory: the memory runtime for LLM agents.

Agent memory (identity-scoped, per-realm SQLite, recalled and injected as quoted
observations), the assertion ledger (facts and conflict signals for approval gating),
and the memory firewall around them, reachable over JSON-RPC 2.0.

From Python: :class:`Meta` builds an in-process :class:`MetaHandle`; :class:`MetaClient` and
:class:`AsyncMetaClient` reach a running gateway with the same methods (:class:`MetaApi`,
:class:`AsyncMetaApi`), results (``AgentMemoryRecord``, ...) and errors (:class:`MetaError`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
CONTRACT_VERSION = "0.9.9"

from .errors import (  # noqa: E402
    AccessDenied,
    AuditVerdictRefused,
    CapabilityUnavailable,
    ConfigError,
    InternalError,
    InvalidParams,
    MemoryBackendUnavailable,
    MetaError,
    MethodNotFound,
    ProposalReviewRefused,
    ProtocolError,
    QuarantineReviewRefused,
    ReadOnly,
    SessionRefused,
    StorageRefused,
    StoreCorrupt,
    StoreUnavailable,
    UnknownRecord,
    WriteRefused,
)

if TYPE_CHECKING:
    from .api import AsyncConsole, AsyncMetaApi, AsyncSession, Console, MetaApi, Session
    from .client import (
        AsyncMetaClient,
        MetaAuthenticationError,
        MetaClient,
        MetaConnectionError,
        MetaTimeoutError,
    )
    from .results import (
        AgentMemoryEntry,
        AgentMemoryForgetResult,
        AgentMemoryLookup,
        AgentMemoryPage,
        AgentMemoryRecord,
        AgentMemoryUpdateResult,
        MemoryIndexResult,
        MemoryQueryResult,
        MemoryStoreInfo,
        MemoryToolResult,
    )
    from .sdk import Meta, MetaBuilder, MetaHandle, local_json

# Where each name not defined above lives. They load on first use, so a process that needs one
# corner of the package, such as the indexing process, does not pay for importing the runtime
# (the SDK) or httpx (the clients).
_LAZY = {
    **dict.fromkeys(("Meta", "MetaBuilder", "MetaHandle", "local_json"), "sdk"),
    **dict.fromkeys(("AsyncConsole", "AsyncMetaApi", "AsyncSession", "Console", "MetaApi", "Session"), "api"),
    **dict.fromkeys(
        (
            "AsyncMetaClient",
            "MetaAuthenticationError",
            "MetaClient",
            "MetaConnectionError",
            "MetaTimeoutError",
        ),
        "client",
    ),
    **dict.fromkeys(
        (
            "AgentMemoryEntry",
            "AgentMemoryForgetResult",
            "AgentMemoryLookup",
            "AgentMemoryPage",
            "AgentMemoryRecord",
            "AgentMemoryUpdateResult",
            "MemoryIndexResult",
            "MemoryQueryResult",
            "MemoryStoreInfo",
            "MemoryToolResult",
        ),
        "results",
    ),
}


def __getattr__(name: str) -> Any:
    # Called only for names not defined above.
    if name in _LAZY:
        module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "CONTRACT_VERSION",
    "AccessDenied",
    "AgentMemoryEntry",
    "AgentMemoryForgetResult",
    "AgentMemoryLookup",
    "AgentMemoryPage",
    "AgentMemoryRecord",
    "AgentMemoryUpdateResult",
    "AsyncConsole",
    "AsyncMetaApi",
    "AsyncMetaClient",
    "AsyncSession",
    "AuditVerdictRefused",
    "CapabilityUnavailable",
    "ConfigError",
    "Console",
    "InternalError",
    "InvalidParams",
    "MemoryBackendUnavailable",
    "MemoryIndexResult",
    "MemoryQueryResult",
    "MemoryStoreInfo",
    "MemoryToolResult",
    "Meta",
    "MetaApi",
    "MetaAuthenticationError",
    "MetaBuilder",
    "MetaClient",
    "MetaConnectionError",
    "MetaError",
    "MetaHandle",
    "MetaTimeoutError",
    "MethodNotFound",
    "ProposalReviewRefused",
    "ProtocolError",
    "QuarantineReviewRefused",
    "ReadOnly",
    "Session",
    "SessionRefused",
    "StorageRefused",
    "StoreCorrupt",
    "StoreUnavailable",
    "UnknownRecord",
    "WriteRefused",
    "__version__",
    "local_json",
]
