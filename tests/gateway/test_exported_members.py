"""The package's public surface: exactly the names ``meta_memory.__all__`` lists, each resolving."""

from __future__ import annotations

import subprocess
import sys

import meta_memory


def test_the_package_exports_exactly_its_public_surface() -> None:
    assert sorted(meta_memory.__all__) == sorted(
        [
            "CONTRACT_VERSION",
            "__version__",
            # the in-process handle
            "Meta",
            "MetaBuilder",
            "MetaHandle",
            "local_json",
            # the typed API every way in shares, and its sessions and console
            "MetaApi",
            "AsyncMetaApi",
            "Session",
            "AsyncSession",
            "Console",
            "AsyncConsole",
            # the clients
            "MetaClient",
            "AsyncMetaClient",
            "MetaConnectionError",
            "MetaTimeoutError",
            "MetaAuthenticationError",
            # the results
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
            # the errors
            "MetaError",
            "ProtocolError",
            "MethodNotFound",
            "InvalidParams",
            "ConfigError",
            "WriteRefused",
            "InternalError",
            "UnknownRecord",
            "CapabilityUnavailable",
            "ReadOnly",
            "MemoryBackendUnavailable",
            "SessionRefused",
            "StorageRefused",
            "StoreCorrupt",
            "StoreUnavailable",
            "AccessDenied",
            "QuarantineReviewRefused",
            "ProposalReviewRefused",
            "AuditVerdictRefused",
        ]
    )


def test_each_exported_name_is_the_object_its_home_module_defines() -> None:
    """The package's names are the same objects the submodules use, so an ``isinstance`` or an
    ``except`` against ``meta_memory.X`` matches what the handle and the clients return and raise."""
    from meta_memory import api, client, errors, results, sdk

    homes = (sdk, api, results, client, errors)
    for name in meta_memory.__all__:
        if name in ("CONTRACT_VERSION", "__version__"):
            continue
        home = [module for module in homes if name in getattr(module, "__all__", ())]
        assert home, f"{name} is in no home module's __all__"
        assert getattr(meta_memory, name) is getattr(home[0], name), name


def test_importing_the_package_loads_neither_the_runtime_nor_httpx() -> None:
    probe = (
        "import sys, meta_memory; "
        "heavy = sorted(m for m in ('meta_memory.sdk', 'meta_memory.runtime', 'meta_memory.client', 'httpx') "
        "if m in sys.modules); "
        "assert not heavy, heavy"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_every_exported_name_resolves_and_every_exported_error_derives_from_meta_error() -> None:
    for name in meta_memory.__all__:
        value = getattr(meta_memory, name)
        if isinstance(value, type) and issubclass(value, Exception):
            assert issubclass(value, meta_memory.MetaError), name
            assert isinstance(value.code, int) and value.code < 0, name
