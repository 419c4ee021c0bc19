from __future__ import annotations

import meta_memory


def test_the_package_exports_exactly_its_public_surface() -> None:
    assert sorted(meta_memory.__all__) == sorted(
        [
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
    )


def test_every_exported_name_resolves_and_every_exported_error_derives_from_meta_error() -> None:
    for name in meta_memory.__all__:
        value = getattr(meta_memory, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, meta_memory.MetaError), name
            assert isinstance(value.code, int) and value.code < 0, name
