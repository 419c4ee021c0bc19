"""The in-process Python API: ``Meta.builder()...build()`` and the handle it returns.

The handle runs the same dispatcher as the gateways, in process, so every rule and every
error message is the one the wire gives; results come back as typed values and errors as
:class:`~meta_memory.errors.MetaError` subclasses carrying their wire ``code``::

    from meta_memory import Meta, local_json

    with Meta.builder().persistent_state(".meta/state").memory(local_json()).agent_memory().build() as meta:
        rec = meta.remember_agent_memory("lead:main", title="Deploys", body="Deploys need approval.")
        meta.recall_agent_memory("lead:main", query_text="how do deploys work?")
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

from .access import RosterProvider
from .clock import Clock
from .config import AgentMemoryConfig, load_config_dict
from .errors import ConfigError
from .gateway.dispatch import SDK, CallContext
from .gateway.methods import build_dispatcher
from .runtime import MetaRuntime

__all__ = [
    "AgentMemoryForgetResult",
    "AgentMemoryRecord",
    "AgentMemoryUpdateResult",
    "MemoryIndexResult",
    "MemoryQueryResult",
    "MemoryStoreInfo",
    "MemoryToolResult",
    "Meta",
    "MetaBuilder",
    "MetaHandle",
    "Session",
    "local_json",
]


def local_json(health_check_endpoint: str | None = None) -> dict[str, Any]:
    """The ledger backend: one local JSON file under the state dir, optionally health-checked."""
    cfg: dict[str, Any] = {"kind": "local_json"}
    if health_check_endpoint is not None:
        cfg["health_check_endpoint"] = health_check_endpoint
    return cfg


@dataclass(frozen=True)
class AgentMemoryRecord:
    memory_id: str
    title: str
    body: str
    tags: tuple[str, ...]
    created_at_ms: int
    updated_at_ms: int

    @classmethod
    def from_wire(cls, w: dict[str, Any]) -> AgentMemoryRecord:
        return cls(
            w["memory_id"], w["title"], w["body"], tuple(w["tags"]), w["created_at_ms"], w["updated_at_ms"]
        )


@dataclass(frozen=True)
class AgentMemoryForgetResult:
    memory_id: str
    deleted: bool


@dataclass(frozen=True)
class AgentMemoryUpdateResult:
    memory_id: str
    supersedes: str


@dataclass(frozen=True)
class MemoryIndexResult:
    entity: str
    topic: str
    store: str
    assertion_id: str | None
    conflict_active: bool


@dataclass(frozen=True)
class MemoryQueryResult:
    assertions: list[dict[str, Any]]
    conflicts: list[dict[str, Any]]


@dataclass(frozen=True)
class MemoryStoreInfo:
    store: str
    record_count: int


_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def _snake_keys(options: dict[str, Any]) -> dict[str, Any]:
    return {
        _CAMEL.sub("_", k).lower(): (_snake_keys(v) if isinstance(v, dict) else v) for k, v in options.items()
    }


class MetaBuilder:
    """Collects options; :meth:`build` validates them exactly like a TOML config."""

    def __init__(self) -> None:
        self._state: str | os.PathLike[str] | None = None
        self._config: dict[str, Any] = {}
        self._clock: Clock | None = None
        self._roster_provider: RosterProvider | None = None

    def persistent_state(self, path: str | os.PathLike[str]) -> MetaBuilder:
        self._state = path
        return self

    def memory(self, backend: dict[str, Any] | None = None, **unsupported: Any) -> MetaBuilder:
        """Persist the ledger (``local_json(...)``). Unsupported options (``stores=...``) are refused."""
        if unsupported:
            raise ValueError(f"memory got unsupported option(s): {', '.join(sorted(unsupported))}")
        self._config["memory"] = dict(backend) if backend is not None else local_json()
        return self

    def agent_memory(self, config: bool | dict[str, Any] | None = True, **options: Any) -> MetaBuilder:
        """Enable agent memory; options in snake_case or camelCase (``maxEntries=8``)."""
        if config is None or config is False:
            self._config["agent_memory"] = {"enabled": False}
        else:
            merged = _snake_keys({**(config if isinstance(config, dict) else {}), **options})
            unknown = sorted(set(merged) - set(AgentMemoryConfig.model_fields))
            if unknown:
                raise ConfigError(f"agent_memory got unsupported option(s): {', '.join(unknown)}")
            load_config_dict({"agent_memory": merged}, source="builder")  # refuse bad values at the call
            self._config["agent_memory"] = merged
        return self

    def roster(self, *entries: dict[str, Any]) -> MetaBuilder:
        """Declare identities (``identity``, ``mob``, ``role``, ``labels``) as ``[[roster]]`` does."""
        self._config["roster"] = [*self._config.get("roster", []), *entries]
        return self

    def roster_provider(self, provider: RosterProvider) -> MetaBuilder:
        """A callback the access rules ask for an identity the roster entries do not name."""
        self._roster_provider = provider
        return self

    def clock(self, clock: Clock) -> MetaBuilder:
        self._clock = clock
        return self

    def build(self) -> MetaHandle:
        """Boot the runtime in process.

        Raises:
            ConfigError: an option is invalid (the message names it).
            StorageRefused: the state dir cannot be served.
        """
        if self._state is None:
            raise ValueError("persistent_state(path) is required")
        config = load_config_dict(self._config, source="builder")
        return MetaHandle(
            MetaRuntime.open(self._state, config, clock=self._clock, roster_provider=self._roster_provider)
        )


@dataclass(frozen=True)
class MemoryToolResult:
    content: str
    is_error: bool
    outcome: str  # "stored" | "quarantined" | "none"


class Session:
    """A host session: the same calls as ``meta/session/*``, bound to one session key.

    :meth:`reset` moves this object to the new, clean session key.
    """

    def __init__(self, handle: MetaHandle, key: str) -> None:
        self._handle = handle
        self.key = key

    def _call(self, verb: str, **params: Any) -> Any:
        return self._handle.call(f"meta/session/{verb}", {"session_key": self.key, **params})

    def build_context(self) -> tuple[str | None, list[str]]:
        result = self._call("build_context")
        return result["text"], result["injected"]

    def turn(self, message: str) -> tuple[str, list[str]]:
        result = self._call("turn", message=message)
        return result["text"], result["injected"]

    def tool_result(
        self,
        tool_name: str,
        *,
        provenance: dict[str, Any] | None = None,
        server_tool: bool = False,
        is_error: bool = False,
    ) -> dict[str, bool]:
        """Report a tool result before the LLM request that consumes it; returns {trusted, tainted}."""
        params = _drop_none(tool_name=tool_name, provenance=provenance)
        return dict(self._call("tool_result", server_tool=server_tool, is_error=is_error, **params))

    def memory_tool(self, arguments: dict[str, Any] | str) -> MemoryToolResult:
        """Run the LLM's ``memory`` tool call; bad arguments come back as ``is_error`` text."""
        return MemoryToolResult(**self._call("memory_tool", arguments=arguments))

    def reset(self) -> str:
        self.key = self._call("reset")["session_key"]
        return self.key

    def compact(self) -> None:
        self._call("compact")

    def close(self) -> None:
        self._call("close")


class Meta:
    @staticmethod
    def builder() -> MetaBuilder:
        return MetaBuilder()


def _drop_none(**params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if v is not None}


class MetaHandle:
    """A running in-process runtime. Close it (or use ``with``) to release the state dir."""

    def __init__(self, runtime: MetaRuntime) -> None:
        self.runtime = runtime
        self._dispatcher = build_dispatcher(runtime)
        self._ctx = CallContext(surface=SDK)

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call any JSON-RPC method in process; raises the typed error the wire would carry."""
        return self._dispatcher.call(method, params, self._ctx)

    # -- the assertion ledger ---------------------------------------------------------------
    def memory_index(
        self,
        entity: str,
        topic: str,
        *,
        store: str | None = None,
        fact: str | None = None,
        metadata: dict[str, Any] | None = None,
        conflict: bool | None = None,
        conflict_reason: str | None = None,
    ) -> MemoryIndexResult:
        params = _drop_none(
            entity=entity,
            topic=topic,
            store=store,
            fact=fact,
            metadata=metadata,
            conflict=conflict,
            conflict_reason=conflict_reason,
        )
        return MemoryIndexResult(**self.call("meta/memory/index", params))

    def memory_query(
        self,
        query: str | dict[str, Any] | None = None,
        *,
        entity: str | None = None,
        topic: str | None = None,
        store: str | None = None,
    ) -> MemoryQueryResult:
        params = dict(query) if isinstance(query, dict) else _drop_none(query=query)
        params.update(_drop_none(entity=entity, topic=topic, store=store))
        return MemoryQueryResult(**self.call("meta/memory/query", params))

    def memory_stores(self) -> list[MemoryStoreInfo]:
        return [MemoryStoreInfo(**s) for s in self.call("meta/memory/stores")["stores"]]

    # -- agent memory --------------------------------------------------------------------------
    def remember_agent_memory(
        self, identity: str, *, title: str, body: str, tags: list[str] | None = None, realm: str | None = None
    ) -> AgentMemoryRecord:
        params = _drop_none(identity=identity, title=title, body=body, tags=tags, realm=realm)
        return AgentMemoryRecord.from_wire(self.call("meta/agent_memory/remember", params))

    def recall_agent_memory(
        self,
        identity: str,
        *,
        realm: str | None = None,
        selection: str | None = None,
        query_text: str | None = None,
        query_terms: list[str] | None = None,
        max_entries: int | None = None,
    ) -> list[AgentMemoryRecord]:
        params = _drop_none(
            identity=identity,
            realm=realm,
            selection=selection,
            query_text=query_text,
            query_terms=query_terms,
            max_entries=max_entries,
        )
        return [
            AgentMemoryRecord.from_wire(r) for r in self.call("meta/agent_memory/recall", params)["records"]
        ]

    def forget_agent_memory(
        self, identity: str, memory_id: str, *, realm: str | None = None
    ) -> AgentMemoryForgetResult:
        result = self.call(
            "meta/agent_memory/forget", _drop_none(identity=identity, memory_id=memory_id, realm=realm)
        )
        return AgentMemoryForgetResult(**result)

    def update_agent_memory(
        self,
        identity: str,
        memory_id: str,
        *,
        title: str,
        body: str,
        tags: list[str] | None = None,
        realm: str | None = None,
    ) -> AgentMemoryUpdateResult:
        params = _drop_none(
            identity=identity, memory_id=memory_id, title=title, body=body, tags=tags, realm=realm
        )
        return AgentMemoryUpdateResult(**self.call("meta/agent_memory/update", params))

    def open_session(self, identity: str, *, realm: str | None = None, mob: str | None = None) -> Session:
        """Open a host session for ``identity`` (a fresh, clean context)."""
        key = self.call("meta/session/open", _drop_none(identity=identity, realm=realm, mob=mob))[
            "session_key"
        ]
        return Session(self, key)

    def memory_tool_definitions(self, format: str = "json_schema") -> list[dict[str, Any]]:
        """The ``memory`` tool for the LLM: ``json_schema`` (MCP shape), ``openai``,
        ``openai_responses`` or ``anthropic``; empty when the recorder tool is off."""
        return list(self.call("meta/session/tool_definitions", {"format": format})["tools"])

    def status(self) -> dict[str, Any]:
        return dict(self.call("meta/status"))

    def close(self) -> None:
        self.runtime.close()

    def __enter__(self) -> MetaHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
