"""meta_memory: the memory runtime for LLM agents.

Agent memory (identity-scoped, per-realm SQLite, recalled and injected as quoted
observations), the assertion ledger (facts and conflict signals for approval gating),
and the memory firewall around them, reachable over JSON-RPC 2.0.
"""

from __future__ import annotations

__version__ = "0.1.0"
CONTRACT_VERSION = "0.9.9"

__all__ = ["CONTRACT_VERSION", "__version__"]
