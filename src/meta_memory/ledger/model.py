"""The assertion ledger's vocabulary: token canonicalization, the five stores, the immutable
records (:class:`Assertion`, :class:`ConflictSignal`), the request and result types of the three
``meta/memory/*`` methods, and the request parsers that are the one validator shared by the JSON-RPC
dispatcher and the in-process Python API. Nothing here touches a file, a socket or a lock.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeAlias

from ..errors import InvalidParams

__all__ = [
    "ASSERTION_ID_PREFIX",
    "DEFAULT_STORE",
    "FIRST_ASSERTION_SEQUENCE",
    "MAX_RETAINED_ASSERTIONS",
    "STORES",
    "Assertion",
    "ConflictKey",
    "ConflictSignal",
    "IndexRequest",
    "IndexResult",
    "LedgerSnapshot",
    "QueryRequest",
    "QueryResult",
    "StoreInfo",
    "StoresResult",
    "ascii_lower",
    "canonical_store",
    "canonical_token",
    "encode_metadata",
    "format_assertion_id",
    "next_sequence",
    "parse_assertion_sequence",
    "parse_index_params",
    "parse_query_params",
    "parse_stores_params",
    "parse_unsigned",
    "restore_snapshot",
    "split_whitespace",
    "trim",
]

STORES: tuple[str, ...] = ("knowledge_graph", "vector", "timeline", "todo", "top_of_mind")
DEFAULT_STORE = "knowledge_graph"
ASSERTION_ID_PREFIX = "memory-assert-"
# Upstream's counter starts at 0 on an empty ledger, so the first id is memory-assert-000000
# (REFERENCE §10.2 keeps that; this is the one place to change it).
FIRST_ASSERTION_SEQUENCE = 0
MAX_RETAINED_ASSERTIONS = 4096
_U64_MAX = 2**64 - 1

# Rust's str::trim strips Unicode White_Space, which is not Python's str.isspace()
# (that one also strips U+001C..U+001F); tokens must canonicalize exactly as upstream's do.
_WHITESPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)
_WHITESPACE_RUN = re.compile(f"[{re.escape(_WHITESPACE)}]+")
_ASCII_LOWER = {code: code + 32 for code in range(ord("A"), ord("Z") + 1)}
_UNSIGNED_TEXT = re.compile(r"\+?[0-9]+")
_UNSUPPORTED_STORE = "store '{}' is unsupported (allowed: " + ", ".join(STORES) + ")"

JsonObject: TypeAlias = dict[str, Any]
ConflictKey: TypeAlias = tuple[str, str, str]


def trim(value: str) -> str:
    """Strip leading and trailing Unicode White_Space, as Rust's ``str::trim`` does."""
    return value.strip(_WHITESPACE)


def split_whitespace(value: str) -> list[str]:
    """The non-empty runs between Unicode White_Space, as Rust's ``str::split_whitespace``."""
    return [part for part in _WHITESPACE_RUN.split(value) if part]


def parse_unsigned(text: str, maximum: int) -> int | None:
    """``text`` as an unsigned integer by Rust's ``parse::<uN>`` rules (optional ``+``, ASCII
    digits only, at most ``maximum``), else ``None``. Python's ``int()`` is laxer (``_``, spaces,
    non-ASCII digits)."""
    if _UNSIGNED_TEXT.fullmatch(text) is None:
        return None
    value = int(text)
    return value if value <= maximum else None


def next_sequence(sequence: int) -> int:
    """The sequence after ``sequence``; saturates at the u64 maximum as upstream's counter does."""
    return min(sequence + 1, _U64_MAX)


def ascii_lower(value: str) -> str:
    """Lowercase A-Z only; other letters (``İ``, ``Σ``, ``Ä``) are left exactly as they are."""
    return value.lower() if value.isascii() else value.translate(_ASCII_LOWER)


def canonical_token(raw: str) -> str | None:
    """Trim, then ASCII-lowercase; ``None`` when nothing is left."""
    token = ascii_lower(trim(raw))
    return token or None


def canonical_store(raw: str) -> str | None:
    """The canonical store name, or ``None`` when blank or not one of :data:`STORES`."""
    token = canonical_token(raw)
    return token if token in STORES else None


def format_assertion_id(sequence: int) -> str:
    return f"{ASSERTION_ID_PREFIX}{sequence:06d}"


def parse_assertion_sequence(assertion_id: str) -> int | None:
    """The numeric suffix of ``memory-assert-<n>`` as a u64 (Rust ``parse::<u64>`` rules), else ``None``."""
    if not assertion_id.startswith(ASSERTION_ID_PREFIX):
        return None
    return parse_unsigned(assertion_id[len(ASSERTION_ID_PREFIX) :], _U64_MAX)


def encode_metadata(value: object) -> str:
    """Compact JSON text of a metadata value; raises ``ValueError``/``TypeError`` if not JSON."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


# -- records ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Assertion:
    """One indexed fact. Immutable: metadata is kept as JSON text and decoded afresh on each read,
    so no caller can mutate a stored assertion through a returned dict."""

    assertion_id: str
    entity: str
    topic: str
    store: str
    fact: str
    metadata_json: str | None
    indexed_at_ms: int

    @property
    def metadata(self) -> Any:
        return None if self.metadata_json is None else json.loads(self.metadata_json)

    def to_wire(self) -> JsonObject:
        return {
            "assertion_id": self.assertion_id,
            "entity": self.entity,
            "topic": self.topic,
            "store": self.store,
            "fact": self.fact,
            "metadata": self.metadata,
            "indexed_at_ms": self.indexed_at_ms,
        }


@dataclass(frozen=True, slots=True)
class ConflictSignal:
    """The one conflict signal for an (entity, topic, store) key; a later upsert replaces it whole."""

    entity: str
    topic: str
    store: str
    reason: str | None
    updated_at_ms: int

    @property
    def key(self) -> ConflictKey:
        return (self.entity, self.topic, self.store)

    def to_wire(self) -> JsonObject:
        return {
            "entity": self.entity,
            "topic": self.topic,
            "store": self.store,
            "reason": self.reason,
            "updated_at_ms": self.updated_at_ms,
        }


@dataclass(frozen=True, slots=True)
class LedgerSnapshot:
    """A ledger's whole state: assertions oldest first, conflicts in key order, the next sequence."""

    assertions: tuple[Assertion, ...] = ()
    conflicts: tuple[ConflictSignal, ...] = ()
    next_sequence: int = FIRST_ASSERTION_SEQUENCE


def restore_snapshot(assertions: Iterable[Assertion], conflicts: Iterable[ConflictSignal]) -> LedgerSnapshot:
    """Normalize rows read back from storage into a snapshot (REFERENCE §2.6).

    Rows whose entity/topic canonicalize empty, whose store is not supported, or (assertions) whose
    fact is blank are dropped without a diagnostic; case and whitespace alone are normalized. Among
    conflicts with the same key the last one wins. The retention cap applies before the sequence is
    computed: the largest numeric id suffix + 1, else the number of retained assertions.
    """
    kept: list[Assertion] = []
    for row in assertions:
        entity, topic = canonical_token(row.entity), canonical_token(row.topic)
        store, fact = canonical_store(row.store), trim(row.fact)
        if entity is None or topic is None or store is None or not fact:
            continue
        kept.append(
            Assertion(row.assertion_id, entity, topic, store, fact, row.metadata_json, row.indexed_at_ms)
        )
    del kept[: max(0, len(kept) - MAX_RETAINED_ASSERTIONS)]

    by_key: dict[ConflictKey, ConflictSignal] = {}
    for signal in conflicts:
        entity, topic = canonical_token(signal.entity), canonical_token(signal.topic)
        store = canonical_store(signal.store)
        if entity is None or topic is None or store is None:
            continue
        reason = None if signal.reason is None else (trim(signal.reason) or None)
        by_key[(entity, topic, store)] = ConflictSignal(entity, topic, store, reason, signal.updated_at_ms)

    suffixes = [s for s in (parse_assertion_sequence(a.assertion_id) for a in kept) if s is not None]
    sequence = next_sequence(max(suffixes)) if suffixes else len(kept)
    ordered = tuple(by_key[key] for key in sorted(by_key))
    return LedgerSnapshot(tuple(kept), ordered, sequence)


# -- requests -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexRequest:
    """A validated ``meta/memory/index`` request, already canonical. Build it with
    :func:`parse_index_params`, the one validator."""

    entity: str
    topic: str
    store: str = DEFAULT_STORE
    fact: str | None = None
    metadata_json: str | None = None
    conflict: bool = False
    conflict_reason: str | None = None


@dataclass(frozen=True, slots=True)
class QueryRequest:
    """A validated ``meta/memory/query`` request; ``None`` means "no such filter"."""

    entity: str | None = None
    topic: str | None = None
    store: str | None = None
    query: str | None = None


def _require_object(params: object) -> JsonObject:
    if not isinstance(params, dict):
        raise InvalidParams("params must be a JSON object")
    return params


def _required_token(params: JsonObject, key: str) -> str:
    value = params.get(key)
    token = canonical_token(value) if isinstance(value, str) else None
    if token is None:
        raise InvalidParams(f"{key} must be a non-empty string")
    return token


def parse_index_params(params: object) -> IndexRequest:
    """Validate ``meta/memory/index`` params, in upstream's order, into a canonical request.

    A key that is present is validated even when its value is ``null``: upstream treats only an
    absent key as "not provided". Unknown keys are ignored.

    Raises:
        InvalidParams: with the exact REFERENCE §1.3 message.
    """
    obj = _require_object(params)
    entity = _required_token(obj, "entity")
    topic = _required_token(obj, "topic")

    store = DEFAULT_STORE
    if "store" in obj:
        raw_store = obj["store"]
        token = canonical_token(raw_store) if isinstance(raw_store, str) else None
        if token is None:
            raise InvalidParams("store must be a non-empty string when provided")
        if token not in STORES:
            raise InvalidParams(_UNSUPPORTED_STORE.format(token))
        store = token

    fact: str | None = None
    if "fact" in obj:
        raw_fact = obj["fact"]
        fact = trim(raw_fact) if isinstance(raw_fact, str) else ""
        if not fact:
            raise InvalidParams("fact must be a non-empty string when provided")

    metadata_json: str | None = None
    if "metadata" in obj:
        raw_metadata = obj["metadata"]
        if not isinstance(raw_metadata, dict):
            raise InvalidParams("metadata must be a JSON object when provided")
        try:
            # In-process callers can hand over anything; JSON text is the proof it will persist.
            metadata_json = encode_metadata(raw_metadata)
        except (TypeError, ValueError) as exc:
            raise InvalidParams("metadata must be a JSON object when provided") from exc

    conflict = False
    if "conflict" in obj:
        raw_conflict = obj["conflict"]
        if not isinstance(raw_conflict, bool):  # `1` is an int, not a JSON boolean
            raise InvalidParams("conflict must be a boolean when provided")
        conflict = raw_conflict

    conflict_reason: str | None = None
    if "conflict_reason" in obj:
        raw_reason = obj["conflict_reason"]
        if not isinstance(raw_reason, str):
            raise InvalidParams("conflict_reason must be a string when provided")
        conflict_reason = trim(raw_reason) or None

    if fact is None and not conflict:
        raise InvalidParams("fact is required unless conflict=true")
    return IndexRequest(entity, topic, store, fact, metadata_json, conflict, conflict_reason)


def _filter(obj: JsonObject, key: str, message: str) -> str | None:
    if key not in obj:
        return None
    value = obj[key]
    if not isinstance(value, str):
        raise InvalidParams(message)
    return canonical_token(value)


def parse_query_params(params: object) -> QueryRequest:
    """Validate ``meta/memory/query`` params. ``null`` params mean no filters.

    Filters that are empty after canonicalization, and (0.9.9) a ``store`` that is not one of the
    five, are treated as absent. Non-string values are still refused.

    Raises:
        InvalidParams: ``params must be a JSON object``, ``entity filter must be a string``,
            ``topic filter must be a string``, ``store must be a non-empty string when provided``
            or ``query filter must be a string``.
    """
    if params is None:
        return QueryRequest()
    obj = _require_object(params)
    entity = _filter(obj, "entity", "entity filter must be a string")
    topic = _filter(obj, "topic", "topic filter must be a string")
    store = _filter(obj, "store", "store must be a non-empty string when provided")
    query = _filter(obj, "query", "query filter must be a string")
    return QueryRequest(entity, topic, store if store in STORES else None, query)


def parse_stores_params(params: object) -> None:
    """``meta/memory/stores`` takes no parameters: ``null`` or any object.

    Raises:
        InvalidParams: ``params must be a JSON object``.
    """
    if params is not None:
        _require_object(params)


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexResult:
    entity: str
    topic: str
    store: str
    assertion_id: str | None
    conflict_active: bool

    def to_wire(self) -> JsonObject:
        return {
            "entity": self.entity,
            "topic": self.topic,
            "store": self.store,
            "assertion_id": self.assertion_id,
            "conflict_active": self.conflict_active,
        }


@dataclass(frozen=True, slots=True)
class QueryResult:
    assertions: tuple[Assertion, ...]
    conflicts: tuple[ConflictSignal, ...]

    def to_wire(self) -> JsonObject:
        return {
            "assertions": [assertion.to_wire() for assertion in self.assertions],
            "conflicts": [signal.to_wire() for signal in self.conflicts],
        }


@dataclass(frozen=True, slots=True)
class StoreInfo:
    store: str
    record_count: int

    def to_wire(self) -> JsonObject:
        return {"store": self.store, "record_count": self.record_count}


@dataclass(frozen=True, slots=True)
class StoresResult:
    stores: tuple[StoreInfo, ...]

    def to_wire(self) -> JsonObject:
        return {"stores": [info.to_wire() for info in self.stores]}
