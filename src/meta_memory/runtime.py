"""The runtime: owns the state dir, the config, the clock and the subsystems it wires.

Boot order is the order of refusals a user meets: create the state dir, take the
single-runtime lock, refuse a predecessor ledger, refuse file-name twins, load the ledger
(health check first), open agent memory. Any refusal releases what was taken and raises;
nothing is served from a half-booted runtime.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import CONTRACT_VERSION, __version__, backends
from .access import AccessEngine, BearerAuthenticator, Roster, RosterProvider
from .access.reading import RosterScopes
from .clock import Clock, SystemClock
from .config import DEFAULT_CONFIG, AgentMemoryConfig, MetaConfig, load_config_dict
from .errors import StorageRefused
from .events import EventSink
from .gating import Gating
from .ledger.ledger import Ledger
from .ledger.local_json import LocalJsonBackend
from .memory.recall.provider import RecallProvider
from .memory.service import AgentMemory
from .review import QuarantineReview
from .sessions import SessionManager
from .steward import Reviewer, Steward, StewardScheduler, parse_cadence, reviewer_from_config
from .storage.layout import StateLayout
from .storage.lock import StateDirLock
from .timeline import Timeline

if TYPE_CHECKING:
    from .memory.embedding import Embedder

__all__ = ["MetaRuntime"]

log = logging.getLogger("meta_memory.runtime")


def recall_provider(config: AgentMemoryConfig) -> RecallProvider | None:
    """``recall = "hybrid"``: the hybrid provider over the configured model (loaded and checked
    against its pinned hashes now); ``None``: the lexical default.

    Raises:
        EmbedderUnavailable: the model's files are missing (the message names the extra) or not
            the pinned ones.
    """
    if config.recall != "hybrid":
        return None
    from .memory.embedding import load_embedder
    from .memory.priority import BACKGROUND_NICE
    from .memory.recall.hybrid import HybridRecallProvider

    # Queries embed one text each, on the caller's thread. Records embedded in this process (the
    # PostgreSQL store's embedding thread, a library's inline catch-up, which a read waits for) run
    # on every core, below the request threads' priority but not at the idle one.
    embedder = load_embedder(
        config.embedding_model,
        runtime=config.embedding_runtime,  # type: ignore[arg-type]  # the config allows only a Runtime
        parallel=os.cpu_count() or 1,
        parallel_nice=BACKGROUND_NICE,
    )
    return HybridRecallProvider(embedder)


def _embedder_of(provider: RecallProvider | None) -> Embedder | None:
    from .memory.recall.hybrid import HybridRecallProvider

    return provider.embedder if isinstance(provider, HybridRecallProvider) else None


@dataclass
class MetaRuntime:
    layout: StateLayout
    config: MetaConfig
    clock: Clock
    ledger: Ledger
    gating: Gating
    agent_memory: AgentMemory | None
    events: EventSink
    sessions: SessionManager | None = None
    review: QuarantineReview | None = None
    timeline: Timeline | None = None
    access: AccessEngine | None = None
    console_auth: BearerAuthenticator | None = None
    rpc_auth: BearerAuthenticator | None = None
    _lock: StateDirLock | None = field(default=None, repr=False)
    steward: Steward | None = None
    scheduler: StewardScheduler | None = None
    storage: backends.StorageBackend | None = None

    @classmethod
    def open(
        cls,
        state_dir: str | os.PathLike[str],
        config: MetaConfig | None = None,
        *,
        clock: Clock | None = None,
        events: EventSink | None = None,
        roster_provider: RosterProvider | None = None,
        steward_reviewer: Reviewer | None = None,
        serving: bool = False,
    ) -> MetaRuntime:
        """Boot a runtime on ``state_dir`` (created if absent). ``serving``: a gateway's runtime
        (its recall indexes are built by a helper process unless configured otherwise).

        Raises:
            StorageRefused: the state dir cannot be served (lock, predecessor, twins, ledger).
            ConfigError: the config is invalid.
        """
        config = config if config is not None else load_config_dict(DEFAULT_CONFIG)
        config.refuse_unservable()
        clock = clock or SystemClock()
        # Built before the state dir is touched: a bad roster or token table refuses cleanly.
        access = AccessEngine(config.access, Roster(config.roster, roster_provider))
        console_auth = BearerAuthenticator.for_console(config.console)
        rpc_auth = BearerAuthenticator.for_rpc(config.rpc)
        steward_config = config.agent_memory.steward
        if steward_config.enabled:
            parse_cadence(steward_config.cadence)  # a bad cadence refuses boot, like any bad key
        layout = StateLayout.at(state_dir)
        try:
            layout.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StorageRefused(f"cannot create state dir {layout.root}: {exc.strerror or exc}") from exc
        lock = StateDirLock.acquire(layout)
        timeline: Timeline | None = None
        storage: backends.StorageBackend | None = None
        try:
            layout.refuse_predecessor()
            memory_root = layout.agent_memory_root()  # refuses file-name twins
            if config.memory is not None:
                ledger_file = LocalJsonBackend.for_layout(
                    layout, health_check_endpoint=config.memory.health_check_endpoint
                )
                ledger = Ledger.open(ledger_file, clock=clock)
            else:
                ledger = Ledger(clock=clock)
            # After every refusal of the state dir: a refused boot creates no file.
            storage = backends.open_backend(config, layout, clock=clock)
            if events is None:
                timeline = Timeline(storage.event_log(), clock=clock)
                events = timeline
            agent_memory = None
            if config.agent_memory.enabled:
                # Before any store opens: a missing or tampered model refuses the boot, naming the extra.
                provider = recall_provider(config.agent_memory)
                stores = storage.realm_stores(
                    config, memory_root, serving=serving, embedder=_embedder_of(provider)
                )
                agent_memory = AgentMemory(
                    layout,
                    memory_root,
                    config.agent_memory,
                    stores=stores,
                    clock=clock,
                    events=events,
                    provider=provider,
                    shared=RosterScopes(access, operator_scope=config.agent_memory.operator_scope != "off"),
                )
        except BaseException:
            if timeline is not None:
                timeline.close()
            if storage is not None:
                storage.close()
            lock.release()
            raise
        sessions = review = None
        if agent_memory is not None:
            sessions = SessionManager(agent_memory, config.agent_memory, events, clock)
            review = QuarantineReview(agent_memory, events)
        steward = scheduler = None
        if agent_memory is not None:
            steward = Steward(
                agent_memory,
                ledger=ledger,
                events=events,
                clock=clock,
                config=steward_config,
                reviewer=steward_reviewer or reviewer_from_config(steward_config, os.environ),
                roster=access.roster,
                mobs=[entry.mob for entry in config.roster if entry.mob],
                operator_scope_active=config.agent_memory.operator_scope != "off",
            )
        gating = Gating(ledger, clock, on_resolution=steward.on_resolution if steward is not None else None)
        if steward is not None:
            steward.attach(gating)
            if steward_config.enabled:
                scheduler = StewardScheduler(steward, clock=clock)
                scheduler.start()
        log.info("runtime ready on %s", layout.root)
        return cls(
            layout,
            config,
            clock,
            ledger,
            gating,
            agent_memory,
            events,
            sessions,
            review,
            timeline,
            access,
            console_auth,
            rpc_auth,
            lock,
            steward=steward,
            scheduler=scheduler,
            storage=storage,
        )

    @property
    def state_dir(self) -> Path:
        return self.layout.root

    def features(self) -> dict[str, Any]:
        am = self.config.agent_memory
        return {
            "ledger": {
                "persisted": self.config.memory is not None,
                "health_check": bool(self.config.memory and self.config.memory.health_check_endpoint),
            },
            "agent_memory": {
                "enabled": self.agent_memory is not None,
                "store": am.store if self.agent_memory is not None else None,
                "realm": am.realm if self.agent_memory is not None else None,
                "selection": am.selection if self.agent_memory is not None else None,
                "llm_writes": am.llm_writes if self.agent_memory is not None else None,
                "recall": am.recall if self.agent_memory is not None else None,
                "embedding": self._embedding(),
            },
        }

    def _embedding(self) -> dict[str, Any] | None:
        """The embedding model hybrid recall runs and what runs it (``numpy`` / ``onnxruntime``);
        ``None`` for lexical recall."""
        embedder = _embedder_of(self.agent_memory.provider) if self.agent_memory is not None else None
        if embedder is None:
            return None
        return {"model": embedder.model_id, "runtime": getattr(embedder, "runtime", None)}

    def status(self) -> dict[str, Any]:
        return {
            "contract_version": CONTRACT_VERSION,
            "version": __version__,
            "state_dir": str(self.layout.root),
            "features": self.features(),
        }

    def close(self) -> None:
        """Stop the steward's scheduler, close stores and release the state-dir lock. Safe to call twice."""
        if self.scheduler is not None:
            self.scheduler.close()
            self.scheduler = None
        if self.agent_memory is not None:
            self.agent_memory.close()
        if self.timeline is not None:
            self.timeline.close()
            self.timeline = None
        if self.storage is not None:
            self.storage.close()  # last: the stores and the event log are closed
            self.storage = None
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> MetaRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
