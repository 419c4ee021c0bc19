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
from typing import Any, TypeVar

from .access import Principal, RosterProvider
from .api import (
    AgentMemoryEntry,
    AgentMemoryForgetResult,
    AgentMemoryLookup,
    AgentMemoryPage,
    AgentMemoryRecord,
    AgentMemoryUpdateResult,
    Call,
    Console,
    MemoryIndexResult,
    MemoryQueryResult,
    MemoryStoreInfo,
    MemoryToolResult,
    MetaApi,
    Session,
)
from .clock import Clock
from .config import AgentMemoryConfig, load_config_dict
from .errors import ConfigError
from .gateway.dispatch import CONSOLE, SDK, CallContext, Dispatcher
from .gateway.methods import build_dispatcher
from .runtime import MetaRuntime

R = TypeVar("R")

__all__ = [
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
    "Meta",
    "MetaApi",
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


class Meta:
    @staticmethod
    def builder() -> MetaBuilder:
        return MetaBuilder()


class _AsPrincipal(MetaApi):
    """The console surface of a handle's dispatcher for one principal."""

    def __init__(self, dispatcher: Dispatcher, principal: Principal) -> None:
        self._dispatcher = dispatcher
        self._ctx = CallContext(surface=CONSOLE, principal=principal)

    def _invoke(self, call: Call[R]) -> R:
        return call.read(self._dispatcher.call(call.method, call.params, self._ctx))


class MetaHandle(MetaApi):
    """A running in-process runtime. Close it (or use ``with``) to release the state dir.

    Its methods are :class:`~meta_memory.api.MetaApi`'s, the same as a
    :class:`~meta_memory.client.MetaClient`'s; here they run the gateway's dispatcher in process
    (the parent process's own channel: trusted, like stdio).
    """

    def __init__(self, runtime: MetaRuntime) -> None:
        self.runtime = runtime
        self._dispatcher = build_dispatcher(runtime)
        self._contexts = {SDK: CallContext(surface=SDK), CONSOLE: CallContext(surface=CONSOLE)}

    def _invoke(self, call: Call[R]) -> R:
        return call.read(self._dispatcher.call(call.method, call.params, self._contexts[call.surface]))

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call any JSON-RPC method in process; raises the typed error the wire would carry."""
        return self._dispatcher.call(method, params, self._contexts[SDK])

    @property
    def console(self) -> Console:
        """The console surface, in process: its calls run under the console's access rules with
        no authenticated principal (anonymous, when ``[access]`` is on)."""
        return Console(self)

    def console_as(self, subject: str) -> Console:
        """The console surface as ``subject`` calls it: under the access rules for that subject,
        which a quarantine decision records as its reviewer."""
        return Console(_AsPrincipal(self._dispatcher, Principal(subject)))

    def close(self) -> None:
        self.runtime.close()

    def __enter__(self) -> MetaHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
