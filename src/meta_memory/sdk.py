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
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

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
from .keywords import accepts_aliases, camel_case, did_you_mean, snake_case, snake_case_keys
from .runtime import MetaRuntime

if TYPE_CHECKING:
    from .client import MetaClient

R = TypeVar("R")
# What a builder's build() returns: the in-process handle, or a client of a spawned gateway.
H = TypeVar("H", bound=MetaApi)

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


@accepts_aliases
def local_json(health_check_endpoint: str | None = None) -> dict[str, Any]:
    """The ledger backend for :meth:`MetaBuilder.memory`: one local JSON file under the state dir.

    Args:
        health_check_endpoint: a URL whose ``GET /v1/health`` must answer 2xx before each persist.

    Returns:
        The ``[memory]`` table for it.
    """
    cfg: dict[str, Any] = {"kind": "local_json"}
    if health_check_endpoint is not None:
        cfg["health_check_endpoint"] = health_check_endpoint
    return cfg


class MetaBuilder(Generic[H]):
    """Collects a runtime's options; :meth:`build` validates them exactly as a TOML config is
    validated, and boots the runtime: in process (a :class:`MetaHandle`), or, after
    :meth:`gateway`, in a ``meta_gateway stdio`` child (a :class:`~meta_memory.client.MetaClient`).
    Each method returns the builder, so calls chain.

    Keywords are snake_case (``max_entries=8``) or the camelCase the spec's examples use
    (``maxEntries=8``); both spellings of one in a call are refused with ``TypeError``.
    """

    def __init__(self) -> None:
        self._state: str | os.PathLike[str] | None = None
        self._config: dict[str, Any] = {}
        self._clock: Clock | None = None
        self._roster_provider: RosterProvider | None = None
        self._spawn = False
        self._command: str | Sequence[str] | None = None

    @accepts_aliases
    def persistent_state(self, path: str | os.PathLike[str]) -> MetaBuilder[H]:
        """Serve the state directory ``path`` (created if missing); :meth:`build` requires it.

        Args:
            path: the state directory. The runtime holds it alone while it runs.

        Returns:
            This builder.
        """
        self._state = path
        return self

    def memory(self, backend: dict[str, Any] | None = None, **unsupported: Any) -> MetaBuilder[H]:
        """Persist the assertion ledger (without this call it is held in memory only).

        Args:
            backend: the ledger backend, ``local_json(...)`` (the default and the only kind).
            **unsupported: refused: the ledger takes no other option (``stores=...``).

        Returns:
            This builder.

        Raises:
            ValueError: an unsupported option (the message names it).
        """
        if unsupported:
            raise ValueError(f"memory got unsupported option(s): {', '.join(sorted(unsupported))}")
        self._config["memory"] = dict(backend) if backend is not None else local_json()
        return self

    def agent_memory(self, config: bool | Mapping[str, Any] | None = True, **options: Any) -> MetaBuilder[H]:
        """Enable agent memory with ``[agent_memory]``'s options (without this call it is off).

        Args:
            config: ``True`` for the defaults, ``False`` or ``None`` for off, or a mapping of options.
            **options: options as keywords, over the mapping's (``max_entries=8``,
                ``llm_writes="quarantined"``); snake_case or camelCase (``maxEntries=8``), in
                nested tables too (``contentTrust={"trustedMcpServers": [...]}``).

        Returns:
            This builder.

        Raises:
            TypeError: one mapping gives two spellings of one option (``max_entries`` and
                ``maxEntries``).
            ConfigError: an option ``[agent_memory]`` does not have (named as given, with the
                nearest one it has), or a value it refuses (the message names key and range).
        """
        if config is None or config is False:
            self._config["agent_memory"] = {"enabled": False}
            return self
        given = {**(config if isinstance(config, Mapping) else {})}
        where = "MetaBuilder.agent_memory"
        merged = {**snake_case_keys(given, where), **snake_case_keys(options, where)}
        known = AgentMemoryConfig.model_fields
        unknown = [key for key in [*given, *options] if snake_case(key) not in known]
        if unknown:
            spellings = [*known, *(camel_case(name) for name in known)]
            named = ", ".join(f"{key!r}{did_you_mean(key, spellings)}" for key in unknown)
            raise ConfigError(f"agent_memory got unsupported option(s): {named}")
        load_config_dict({"agent_memory": merged}, source="builder")  # refuse bad values at the call
        self._config["agent_memory"] = merged
        return self

    def roster(self, *entries: dict[str, Any]) -> MetaBuilder[H]:
        """Declare identities as ``[[roster]]`` entries do; the access rules read them.

        Args:
            *entries: one mapping per identity: ``identity``, and ``mob``, ``role``, ``labels``.

        Returns:
            This builder.
        """
        self._config["roster"] = [*self._config.get("roster", []), *entries]
        return self

    @accepts_aliases
    def access_control(self, path: str | os.PathLike[str]) -> MetaBuilder[H]:
        """Load the access rules from a TOML file: an ``[access]`` table, as in a gateway config
        (``enabled``, ``admins``, ``[[access.rules]]``), validated here.

        Args:
            path: the TOML file.

        Returns:
            This builder.

        Raises:
            ConfigError: the file cannot be read, is not TOML, holds no ``[access]`` table or
                holds anything else, or its rules are invalid (the message names the file and key).
        """
        import tomllib

        shown = os.fspath(path)
        try:
            with open(path, "rb") as f:
                data = tomllib.load(f)
        except OSError as exc:
            raise ConfigError(f"{shown}: cannot be read ({exc.strerror or exc})") from None
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{shown}: not TOML ({exc})") from None
        if set(data) != {"access"} or not isinstance(data["access"], dict):
            raise ConfigError(f"{shown}: an access-control file holds one [access] table and nothing else")
        load_config_dict({"access": data["access"]}, source=shown)  # refuse bad rules at the call
        self._config["access"] = data["access"]
        return self

    def console_read_only(self) -> MetaBuilder[H]:
        """Make the console surface read-only: its mutating methods (decide, remember, forget, ...)
        are refused (-32010) and left out of its capabilities.

        Returns:
            This builder.
        """
        self._config["console"] = {**self._config.get("console", {}), "read_only": True}
        return self

    @accepts_aliases
    def roster_provider(self, provider: RosterProvider) -> MetaBuilder[H]:
        """A callback the access rules ask about an identity the roster entries do not name.

        Args:
            provider: called with the identity; returns its roster entry, or ``None``.

        Returns:
            This builder.
        """
        self._roster_provider = provider
        return self

    @accepts_aliases
    def clock(self, clock: Clock) -> MetaBuilder[H]:
        """The clock the runtime reads time from (default: the system clock).

        Args:
            clock: a :class:`~meta_memory.clock.Clock` (tests use a manual one).

        Returns:
            This builder.
        """
        self._clock = clock
        return self

    @accepts_aliases
    def gateway(
        self, command: str | os.PathLike[str] | Sequence[str] | None = None
    ) -> MetaBuilder[MetaClient]:
        """Run the runtime in a ``meta_gateway stdio`` child instead of in process: :meth:`build`
        then spawns it on the state dir with this builder's config and returns a
        :class:`~meta_memory.client.MetaClient` over its stdio, with the handle's methods.

        Args:
            command: the gateway's command line (``"meta_gateway"``, ``["uv", "run",
                "meta_gateway"]``); default: the ``meta_gateway`` beside this interpreter, else
                the one on ``PATH``.

        Returns:
            This builder, now building a client.
        """
        self._spawn = True
        self._command = os.fspath(command) if isinstance(command, os.PathLike) else command
        # One builder all along: only what build() returns changes, which the type says.
        return cast("MetaBuilder[MetaClient]", self)

    @overload
    def build(self: MetaBuilder[MetaClient]) -> MetaClient: ...

    @overload
    def build(self: MetaBuilder[MetaHandle]) -> MetaHandle: ...

    def build(self) -> MetaHandle | MetaClient:
        """Validate the options and boot the runtime: in process, or in a child after :meth:`gateway`.

        Returns:
            The running handle (a :class:`MetaHandle`, or after :meth:`gateway` a
            :class:`~meta_memory.client.MetaClient` over the child); close it (or use ``with``)
            to release the state dir.

        Raises:
            ValueError: :meth:`persistent_state` was not called, or :meth:`gateway` was called
                beside :meth:`roster_provider` or :meth:`clock` (a callable cannot cross into the
                child; the message names them).
            ConfigError: an option is invalid (the message names it).
            StorageRefused: the state dir cannot be served: another runtime holds it, a
                predecessor's ledger waits to be adopted, a store is damaged (``StoreCorrupt``).
            CapabilityUnavailable: ``recall = "hybrid"`` and the embedding model is missing or
                fails its pinned hash (``EmbedderUnavailable``, naming the extra to install).
            MetaConnectionError: after :meth:`gateway`, the child could not start or exited
                (its refusal is in the message); ``MetaTimeoutError`` if it did not answer in time.
        """
        if self._state is None:
            raise ValueError("persistent_state(path) is required")
        config = load_config_dict(self._config, source="builder")
        if not self._spawn:
            return MetaHandle(
                MetaRuntime.open(
                    self._state, config, clock=self._clock, roster_provider=self._roster_provider
                )
            )
        local = [
            name
            for name, value in (("roster_provider", self._roster_provider), ("clock", self._clock))
            if value is not None
        ]
        if local:
            calls = " and ".join(f"{name}(...)" for name in local)
            them = "them" if len(local) > 1 else "it"
            raise ValueError(
                f"{calls} cannot cross into the gateway(...) child process: leave {them} out "
                "(roster(...) entries declare identities)"
            )
        from .client import MetaClient  # the clients' httpx, loaded only by a builder that spawns

        # The client writes the config to a private temporary file, removed when it closes.
        return MetaClient.spawn(state_dir=self._state, config=self._config, command=self._command)


class Meta:
    """The entry point of the in-process API: ``Meta.builder()...build()`` gives a
    :class:`MetaHandle`."""

    @staticmethod
    def builder() -> MetaBuilder[MetaHandle]:
        """A new builder, with no options set; it builds an in-process :class:`MetaHandle`, or
        after :meth:`MetaBuilder.gateway` a client of a spawned gateway.

        Returns:
            The builder.
        """
        return MetaBuilder()


class _AsPrincipal(MetaApi):
    """The console surface of a handle's dispatcher for one principal."""

    def __init__(self, dispatcher: Dispatcher, principal: Principal) -> None:
        self._dispatcher = dispatcher
        self._ctx = CallContext(surface=CONSOLE, principal=principal)

    def _invoke(self, call: Call[R]) -> R:
        return call.read(self._dispatcher.call(call.method, call.params, self._ctx))


class MetaHandle(MetaApi):
    """A running in-process runtime, from :meth:`MetaBuilder.build`. Close it (or use ``with``)
    to release the state dir.

    Its methods are :class:`~meta_memory.api.MetaApi`'s, the same as a
    :class:`~meta_memory.client.MetaClient`'s, with the same errors; here they run the gateway's
    dispatcher in process (the parent process's own channel: trusted, like stdio).

    Attributes:
        runtime: the runtime it serves (its subsystems, for code that reaches past the API).
    """

    def __init__(self, runtime: MetaRuntime) -> None:
        self.runtime = runtime
        self._dispatcher = build_dispatcher(runtime)
        self._contexts = {SDK: CallContext(surface=SDK), CONSOLE: CallContext(surface=CONSOLE)}

    def _invoke(self, call: Call[R]) -> R:
        return call.read(self._dispatcher.call(call.method, call.params, self._contexts[call.surface]))

    @accepts_aliases
    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """Call any application-surface method by name in process, with its wire params.

        Args:
            method: the JSON-RPC method (``meta/agent_memory/recall``).
            params: its params by name, as on the wire.

        Returns:
            The method's wire result.

        Raises:
            MethodNotFound: no such method on the application surface.
            InvalidParams: a param broke a rule, or the method does not take it.
        """
        return self._dispatcher.call(method, params, self._contexts[SDK])

    @property
    def console(self) -> Console:
        """The console surface, in process: its calls run under the console's access rules with
        no authenticated principal (anonymous, when ``[access]`` is on)."""
        return Console(self)

    @accepts_aliases
    def console_as(self, subject: str) -> Console:
        """The console surface as ``subject`` calls it.

        Args:
            subject: the principal: the access rules for it apply, and a quarantine decision
                records it as the reviewer.

        Returns:
            The console surface for that subject.
        """
        return Console(_AsPrincipal(self._dispatcher, Principal(subject)))

    def close(self) -> None:
        """Stop the runtime: close its stores and release the state dir's lock. Safe to call twice."""
        self.runtime.close()

    def __enter__(self) -> MetaHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
