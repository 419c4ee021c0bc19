"""A server's Prometheus metrics (``GET /metrics``, text exposition format), in a registry of its own.

Traffic is counted from one place, :meth:`GatewayMetrics.count`, which
:meth:`~meta_memory.gateway.telemetry.Telemetry.finish` calls once per request; session taint
transitions come from the runtime's timeline (the ``memory.taint.transition`` events); the
gauges are read when scraped, from the stores the runtime has opened.

Labels are bounded: a method is a name of the signature table or ``unknown``; outcomes, refusal
reasons, tool outcomes and taint kinds come from fixed sets (anything else is ``other``); a write
rule is the validator's kebab-case name. No label ever holds a record's text, an identity, a
realm, a token or a caller's input.

======================================  =========  ==============================================
metric                                  type       labels
======================================  =========  ==============================================
meta_requests_total                     counter    surface, method, outcome (``ok`` or the code)
meta_request_duration_seconds           histogram  method
meta_recall_duration_seconds            histogram  kind (``recall`` | ``injection``)
meta_recall_records_total               counter    kind: records recalled / injected
meta_memory_tool_calls_total            counter    outcome (stored | quarantined | none | error)
meta_write_refusals_total               counter    rule (``WriteRefused.rule``)
meta_boundary_refusals_total            counter    surface, reason (the guard, auth, body cap)
meta_session_taint_transitions_total    counter    kind (tainted | reset_boundary | rotated_clean)
meta_log_lines_dropped_total            counter    (log lines dropped: stderr was not read in time)
meta_quarantine_queue_depth             gauge      (quarantined records)
meta_index_pending_records              gauge      (SQLite: the recall indexes' backlog)
meta_index_unmerged_records             gauge      (SQLite: records in their fresh tiers)
meta_vectors_pending_records            gauge      (hybrid: active records not embedded yet)
meta_realms_open                        gauge      (realm stores open)
meta_build_info                         gauge      version, contract_version
======================================  =========  ==============================================
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from .. import CONTRACT_VERSION, __version__
from ..access import BearerAuthenticator, Principal
from ..config import MetaConfig
from ..logs import dropped_log_lines
from ..memory.sqlite.factory import SqliteStoreFactory
from ..memory.sqlite.gauges import SqliteGauges
from ..runtime import MetaRuntime
from ..trust.taint import TAINT_TRANSITION_EVENT
from .telemetry import RequestRecord

__all__ = ["CONTENT_TYPE", "REFUSAL_REASONS", "GatewayMetrics", "metrics_authenticator"]

log = logging.getLogger("meta_memory.gateway.metrics")

# The classic text format: every name here is a legacy one, so what generate_latest writes is it
# exactly, and every Prometheus release reads it.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

REFUSAL_REASONS = frozenset(
    {
        "host_not_allowed",  # the boundary guards (security.py)
        "origin_not_allowed",
        "cross_site",
        "unsupported_media_type",
        "missing_token",  # authentication (access/principal.py)
        "invalid_token",
        "invalid_request",
        "body_too_large",  # the request cap
        "request_timeout",  # [http] request_timeout_s (server.py)
    }
)
_SURFACES = frozenset({"rpc", "console", "stdio", "mcp", "in_process", "metrics", "health", "http"})
_TOOL_OUTCOMES = frozenset({"stored", "quarantined", "none", "error"})
_TAINT_KINDS = frozenset({"tainted", "reset_boundary", "rotated_clean"})
_RULE = re.compile(r"[a-z][a-z0-9-]{0,47}")
_OUTCOME = re.compile(r"ok|-?[0-9]{1,6}")
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


def metrics_authenticator(config: MetaConfig) -> BearerAuthenticator:
    """Who may scrape ``GET /metrics``: a holder of a console token or of ``[metrics]
    token_sha256``; anyone only while neither is configured and the console is anonymous (which
    ``serve`` allows on loopback alone, docs/security.md)."""
    tokens = [(t.token_sha256, Principal(t.subject, frozenset(t.groups))) for t in config.console.auth.tokens]
    own = config.metrics.token_sha256
    if own is not None and own not in {digest for digest, _ in tokens}:
        tokens.append((own, Principal("metrics")))
    return BearerAuthenticator(
        tokens,
        realm="meta-metrics",
        allow_anonymous=own is None and config.console.auth.anonymous_allowed,
        section="metrics.token_sha256",
    )


def _bounded(value: str | None, allowed: frozenset[str] | re.Pattern[str]) -> str:
    if value is None:
        return "other"
    ok = value in allowed if isinstance(allowed, frozenset) else allowed.fullmatch(value) is not None
    return value if ok else "other"


class GatewayMetrics:
    """The metrics of one server over one runtime. Close it with the server."""

    def __init__(self, runtime: MetaRuntime) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self._requests = Counter(
            "meta_requests",
            "JSON-RPC requests answered, by surface, method and outcome (ok, or the error code).",
            ["surface", "method", "outcome"],
            registry=r,
        )
        self._request_seconds = Histogram(
            "meta_request_duration_seconds",
            "Time the dispatcher took to answer a request, by method.",
            ["method"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._recall_seconds = Histogram(
            "meta_recall_duration_seconds",
            "Explicit recall (recall) and memory-block assembly (injection): time per call.",
            ["kind"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self._recall_records = Counter(
            "meta_recall_records",
            "Records returned by explicit recall (recall) and injected into memory blocks (injection).",
            ["kind"],
            registry=r,
        )
        self._tool_calls = Counter(
            "meta_memory_tool_calls",
            "Calls of the memory tool through a host session, by outcome.",
            ["outcome"],
            registry=r,
        )
        self._write_refusals = Counter(
            "meta_write_refusals",
            "Memory writes the validator refused, by rule.",
            ["rule"],
            registry=r,
        )
        self._refusals = Counter(
            "meta_boundary_refusals",
            "Requests refused before any call: the HTTP boundary guards, authentication, the body "
            "cap and the arrival deadline, by surface and reason.",
            ["surface", "reason"],
            registry=r,
        )
        self._taint = Counter(
            "meta_session_taint_transitions",
            "Host-session taint transitions (kind tainted: a session became tainted), as this "
            "gateway's timeline delivers them (on PostgreSQL: the fleet's).",
            ["kind"],
            registry=r,
        )
        Gauge(
            "meta_build_info", "This gateway's release.", ["version", "contract_version"], registry=r
        ).labels(__version__, CONTRACT_VERSION).set(1)
        r.register(_StoreGauges(runtime))
        r.register(_DroppedLogLines())
        self._unsubscribe: Callable[[], None] | None = (
            runtime.timeline.subscribe(self._event) if runtime.timeline is not None else None
        )

    def count(self, record: RequestRecord) -> None:
        """Count one finished request (telemetry.py calls this, once per request)."""
        surface = _bounded(record.surface, _SURFACES)
        if record.refusal is not None:
            self._refusals.labels(surface, _bounded(record.refusal, REFUSAL_REASONS)).inc()
        if record.method is None:
            return
        self._requests.labels(surface, record.method, _bounded(record.outcome, _OUTCOME)).inc()
        elapsed = record.call_s or 0.0
        self._request_seconds.labels(record.method).observe(elapsed)
        if record.returned is not None:
            kind, n = record.returned
            self._recall_seconds.labels(kind).observe(elapsed)
            self._recall_records.labels(kind).inc(n)
        if record.tool_outcome is not None:
            self._tool_calls.labels(_bounded(record.tool_outcome, _TOOL_OUTCOMES)).inc()
        if record.write_rule is not None:
            self._write_refusals.labels(_bounded(record.write_rule, _RULE)).inc()

    def refused(self, surface: str, reason: str) -> None:
        """Count a refusal that no request record carries (a request that never arrived whole)."""
        self._refusals.labels(_bounded(surface, _SURFACES), _bounded(reason, REFUSAL_REASONS)).inc()

    def _event(self, envelope: dict[str, Any]) -> None:
        if envelope.get("event_type") != TAINT_TRANSITION_EVENT:
            return
        data = envelope.get("data")
        kind = data.get("kind") if isinstance(data, dict) else None
        self._taint.labels(_bounded(kind if isinstance(kind, str) else None, _TAINT_KINDS)).inc()

    def render(self) -> bytes:
        """The exposition text (the gauges read now: call it off the event loop)."""
        return generate_latest(self.registry)

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None


class _DroppedLogLines:
    """The process's count of log lines dropped because stderr was not read fast enough
    (logs.py), read at scrape time."""

    _NAME = "meta_log_lines_dropped"
    _DOC = "Log lines dropped because stderr was not read fast enough (the writer never blocks a request)."

    def describe(self) -> Iterable[Metric]:
        return [CounterMetricFamily(self._NAME, self._DOC)]

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(self._NAME, self._DOC, value=dropped_log_lines())


class _ServerGauges(Protocol):
    """A database backend's scrape-time readings (memory/postgres/gauges.py)."""

    def open_realms(self) -> int: ...

    def quarantined(self) -> int | None: ...

    def pending_vectors(self) -> int | None: ...


class _StoreGauges:
    """The gauges read at scrape time, from the stores the runtime has opened."""

    _NAMES = (
        ("meta_quarantine_queue_depth", "Quarantined records, waiting for review."),
        ("meta_index_pending_records", "Recall-index work not done yet: new records and removals (SQLite)."),
        (
            "meta_index_unmerged_records",
            "Records in the recall indexes' fresh tiers, not merged yet (SQLite).",
        ),
        ("meta_realms_open", "Realm stores open (SQLite: holding their files open)."),
        (
            "meta_vectors_pending_records",
            "Active records hybrid recall's vectors do not cover yet (SQLite: the realms open here; "
            "PostgreSQL: the schema's, shared by the fleet). The doctor shows them per realm.",
        ),
    )

    def __init__(self, runtime: MetaRuntime) -> None:
        self._runtime = runtime
        self._lock = threading.Lock()
        self._reader: SqliteGauges | _ServerGauges | None = None
        self._reader_of: object = None

    def describe(self) -> Iterable[Metric]:
        return [GaugeMetricFamily(name, doc) for name, doc in self._NAMES]

    def collect(self) -> Iterator[Metric]:
        memory = self._runtime.agent_memory
        if memory is None:
            return
        values = self._read(memory.stores)
        for name, doc in self._NAMES:
            if values.get(name) is not None:
                yield GaugeMetricFamily(name, doc, value=values[name])

    def _read(self, stores: object) -> dict[str, int | None]:
        with self._lock:
            if self._reader_of is not stores:
                self._reader, self._reader_of = _reader_for(stores), stores
            reader = self._reader
        try:
            if isinstance(reader, SqliteGauges):
                realms = reader.realms()
                return {
                    "meta_quarantine_queue_depth": sum(g.quarantined for g in realms),
                    "meta_index_pending_records": sum(g.pending_index for g in realms),
                    "meta_index_unmerged_records": sum(g.unmerged_index for g in realms),
                    "meta_realms_open": reader.open_realms(),
                    "meta_vectors_pending_records": _total(g.pending_vectors for g in realms),
                }
            if reader is not None:
                return {
                    "meta_quarantine_queue_depth": reader.quarantined(),
                    "meta_realms_open": reader.open_realms(),
                    "meta_vectors_pending_records": reader.pending_vectors(),
                }
        except Exception:  # a scrape never fails for a gauge: the gauge is left out
            log.warning("metrics: the store gauges could not be read", exc_info=True)
        return {}


def _total(values: Iterable[int | None]) -> int | None:
    """The sum of the realms that have the reading (``None``: none has it)."""
    known = [v for v in values if v is not None]
    return sum(known) if known else None


def _reader_for(stores: object) -> SqliteGauges | _ServerGauges | None:
    if isinstance(stores, SqliteStoreFactory):
        return SqliteGauges(stores)
    try:
        from ..memory.postgres.factory import PostgresStoreFactory
        from ..memory.postgres.gauges import PostgresGauges
    except ImportError:  # the postgres extra is not installed, so these are not its stores
        return None
    return PostgresGauges(stores) if isinstance(stores, PostgresStoreFactory) else None
