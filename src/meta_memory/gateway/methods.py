"""The method table: every JSON-RPC method name, its surfaces, and the runtime call behind it.

Handlers are thin: they hand ``params`` to the subsystem's own parser (the one validator
shared with the Python API) and shape the result for the wire.
"""

from __future__ import annotations

from typing import Any

from ..errors import CapabilityUnavailable, InvalidParams
from ..ledger.model import parse_index_params, parse_query_params, parse_stores_params
from ..memory.service import AgentMemory
from ..runtime import MetaRuntime
from .dispatch import SDK, CallContext, Method

__all__ = ["build_methods"]


def _no_params(params: Any) -> None:
    if params is not None and not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")


def build_methods(runtime: MetaRuntime) -> dict[str, Method]:
    """The whole method table for one runtime."""

    def agent_memory() -> AgentMemory:
        if runtime.agent_memory is None:
            raise CapabilityUnavailable("agent memory is not enabled (configure [agent_memory])")
        return runtime.agent_memory

    def status(params: Any, ctx: CallContext) -> dict[str, Any]:
        _no_params(params)
        return runtime.status()

    def capabilities(params: Any, ctx: CallContext) -> dict[str, Any]:
        _no_params(params)
        return {
            "contract_version": runtime.status()["contract_version"],
            "methods": [
                name
                for name, m in sorted(table.items())
                if ctx.surface in m.surfaces and (m.available is None or m.available())
            ],
        }

    def memory_index(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.ledger.index(parse_index_params(params)).to_wire()

    def memory_query(params: Any, ctx: CallContext) -> dict[str, Any]:
        return runtime.ledger.query(parse_query_params(params)).to_wire()

    def memory_stores(params: Any, ctx: CallContext) -> dict[str, Any]:
        parse_stores_params(params)
        return runtime.ledger.stores().to_wire()

    def remember(params: Any, ctx: CallContext) -> dict[str, Any]:
        return agent_memory().remember(params).to_api()

    def recall(params: Any, ctx: CallContext) -> dict[str, Any]:
        return {"records": [r.to_api() for r in agent_memory().recall(params)]}

    def forget(params: Any, ctx: CallContext) -> dict[str, Any]:
        memory_id, deleted = agent_memory().forget(params)
        return {"memory_id": memory_id, "deleted": deleted}

    def update(params: Any, ctx: CallContext) -> dict[str, Any]:
        record, supersedes = agent_memory().update(params)
        return {"memory_id": record.id, "supersedes": supersedes}

    has_agent_memory = lambda: runtime.agent_memory is not None  # noqa: E731
    table: dict[str, Method] = {
        m.name: m
        for m in (
            Method("meta/status", status),
            Method("meta/capabilities", capabilities),
            Method("meta/memory/index", memory_index, surfaces=frozenset({SDK}), mutating=True),
            Method("meta/memory/query", memory_query, surfaces=frozenset({SDK})),
            Method("meta/memory/stores", memory_stores, surfaces=frozenset({SDK})),
            Method("meta/agent_memory/remember", remember, mutating=True, available=has_agent_memory),
            Method("meta/agent_memory/recall", recall, available=has_agent_memory),
            Method("meta/agent_memory/forget", forget, mutating=True, available=has_agent_memory),
            Method("meta/agent_memory/update", update, mutating=True, available=has_agent_memory),
        )
    }
    return table
