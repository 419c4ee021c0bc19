"""LangGraph's long-term memory store (``langgraph.store.base.BaseStore``) over agent memory.

``MetaStore(api, realm=None)`` serves ``put`` / ``get`` / ``search`` / ``delete`` /
``list_namespaces`` (and their ``a*`` forms) on any way into a runtime: the in-process handle
(``Meta.builder()...build()``), a :class:`~meta_memory.client.MetaClient` or an
:class:`~meta_memory.client.AsyncMetaClient`. The mapping, one rule each:

- **Namespace → identity.** A namespace ``(identity, *rest)`` names the Meta identity whose memory
  holds the item: its first label. Every item lives in ``realm`` (``None``: the runtime's default).
- **Item → one application record**, written by ``remember`` and replaced by ``update``, as any
  application write is: the store validator's caps and secret scan apply, and their errors
  (``InvalidParams``: ``body must be at most 65536 bytes``; ``WriteRefused``) reach the caller
  unchanged. Its body is the JSON ``{"namespace": [...], "key": ..., "value": {...}}`` (plus
  ``created_at_ms`` once the item has been updated, so ``created_at`` stays the first put's), from
  which ``get`` and ``search`` return the value as it was put; its title is derived from the value
  (``field: text; ...``, cut at 200 bytes) for recall and the console. ``created_at`` and
  ``updated_at`` come from the records.
- **Tags carry the names**, as digests because the runtime lowercases tags and caps them at 64
  bytes (``h(x)``: the first 32 hex digits of the SHA-256 of ``x`` as compact JSON): ``lg-store``
  on every item; ``lg-ns:<h(namespace[:i])>`` for each ``i`` from 2 to the namespace's length, so a
  prefix is one tag filter; ``lg-item:<h([namespace, key])>``, the item's identity: ``get`` lists
  it, ``put`` with the same key supersedes the record (an identical value writes nothing),
  ``put(..., None)`` and ``delete`` forget it. A namespace has at most 31 labels (32 tags a record).
- **Search.** With ``query``: contextual recall (``recall_agent_memory``) of the prefix's tag, best
  first, over recall's 64 best matches at most; ``score`` is recall's score (0 to 1, never rising
  down the list: the record's BM25 over the best, or hybrid recall's fused score). Without
  ``query``: a listing, newest updated first, ``score`` ``None``.
  ``filter`` applies to the value's keys: equality (a nested dict matches key by key, a list
  exactly), or an operator object with ``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte`` (the
  ordering ones on numbers only). ``offset`` and ``limit`` count what the filter keeps.
- **Every operation names its identity**: a search or a namespace listing whose prefix does not
  start with a concrete label raises ``InvalidNamespaceError`` (the application surface reads one
  identity's memory at a time).
- **Erasure.** ``delete`` forgets (a tombstone: the text stays until purged);
  ``purge_namespace(namespace)`` erases every item under a prefix for real, each record with its
  whole lineage, through ``meta/agent_memory/purge``.
- **TTL.** ``put(..., ttl=minutes)`` writes the record with ``ttl_ms`` (it expires that long after
  the put: never listed, searched or recalled afterwards, and deleted by the runtime's upkeep); a
  put without a ttl never expires, even over an item that did. Reads do not refresh a TTL (an
  item's record is never rewritten by a read): ``refresh_ttl`` is accepted and has no effect.
- A put's ``index`` is ignored: recall indexes every record.

Records quarantined by the memory firewall are neither listed nor recalled, so they never surface
as items. The operations of a batch run in order, each seeing the writes before it.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import takewhile
from typing import Any, Final, TypeAlias, TypeVar

from ..api import NO_EXPIRY, AgentMemoryPage, AgentMemoryRecord, AsyncMetaApi, MetaApi

try:
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        InvalidNamespaceError,
        Item,
        ListNamespacesOp,
        MatchCondition,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        validate_op_namespace,
    )
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError(
        "meta_memory.integrations.langgraph needs LangGraph: pip install 'meta-memory[langgraph]'"
    ) from exc

__all__ = ["ITEM_TAG_PREFIX", "NAMESPACE_TAG_PREFIX", "STORE_TAG", "MetaStore", "item_tag", "prefix_tag"]

T = TypeVar("T")

STORE_TAG: Final = "lg-store"
NAMESPACE_TAG_PREFIX: Final = "lg-ns:"
ITEM_TAG_PREFIX: Final = "lg-item:"

# The runtime's limits this module plans around (memory/params.py, memory/validator.py; pinned by
# the tests), restated so that a client process does not import the runtime.
LIST_PAGE_MAX: Final = 200  # meta/agent_memory/list's largest page
RECALL_MAX: Final = 64  # recall's max_entries ceiling
TITLE_MAX_BYTES: Final = 200
TAGS_MAX: Final = 32
NAMESPACE_MAX_LABELS: Final = TAGS_MAX - 1  # STORE_TAG, one tag per deeper prefix, the item tag

_DIGEST_HEX = 32
_NOT_TITLE = re.compile(r"[\s\x00-\x1f\x7f]+")
_NUMBER = (int, float)


@dataclass(frozen=True)
class _Request:
    """One call of the typed API, by the name its method has on both MetaApi and AsyncMetaApi."""

    method: str
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


# A store operation as a plan: it yields the API calls it needs, one at a time, and gets each
# result sent back. One plan serves both drivers, :func:`_run` and :func:`_arun`, so the sync and
# the async store share every line of their logic.
Plan: TypeAlias = Generator[_Request, Any, T]


# -- the mapping ----------------------------------------------------------------------------------


def _digest(parts: object) -> str:
    text = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:_DIGEST_HEX]


def prefix_tag(prefix: tuple[str, ...]) -> str:
    """The tag every item under a namespace prefix carries.

    Args:
        prefix: ``(identity, *labels)``; the identity alone is every item of that identity.

    Returns:
        ``lg-store`` for the identity alone, else ``lg-ns:<digest of the prefix>``.
    """
    return STORE_TAG if len(prefix) <= 1 else NAMESPACE_TAG_PREFIX + _digest(list(prefix))


def item_tag(namespace: tuple[str, ...], key: str) -> str:
    """The tag that names one item.

    Args:
        namespace: the item's whole namespace, identity first.
        key: the item's key.

    Returns:
        ``lg-item:<digest of the namespace and key>``.
    """
    return ITEM_TAG_PREFIX + _digest([list(namespace), key])


def _item_tags(namespace: tuple[str, ...], key: str) -> list[str]:
    prefixes = [prefix_tag(namespace[:depth]) for depth in range(1, len(namespace) + 1)]
    return [*prefixes, item_tag(namespace, key)]


def _identity(namespace: tuple[str, ...], what: str) -> str:
    if not namespace or namespace[0] == "*":
        raise InvalidNamespaceError(
            f"MetaStore {what} needs a namespace whose first label is the identity, got {namespace!r}"
        )
    if len(namespace) > NAMESPACE_MAX_LABELS:
        raise InvalidNamespaceError(
            f"MetaStore namespaces have at most {NAMESPACE_MAX_LABELS} labels, got {len(namespace)}"
        )
    return namespace[0]


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _title(namespace: tuple[str, ...], key: str, value: Mapping[str, Any]) -> str:
    """``field: text; ...`` of the value, on one line and within the title cap (the body keeps the
    value whole; a title is for ranking and for people)."""
    parts = (f"{k}: {v if isinstance(v, str) else _json(v)}" for k, v in value.items())
    text = _NOT_TITLE.sub(" ", "; ".join(parts)).strip() or key.strip() or "/".join(namespace)
    raw = text.encode("utf-8")
    if len(raw) <= TITLE_MAX_BYTES:
        return text
    return raw[: TITLE_MAX_BYTES - 3].decode("utf-8", errors="ignore").rstrip() + "…"


@dataclass(frozen=True)
class _Stored:
    """An item as its record holds it."""

    memory_id: str
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    created_at_ms: int
    updated_at_ms: int
    expires_at_ms: int | None = None

    def item(self) -> Item:
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=_time(self.created_at_ms),
            updated_at=_time(self.updated_at_ms),
        )

    def search_item(self, score: float | None) -> SearchItem:
        return SearchItem(
            self.namespace,
            self.key,
            self.value,
            _time(self.created_at_ms),
            _time(self.updated_at_ms),
            score,
        )


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


@dataclass(frozen=True)
class _Draft:
    """An item about to be written: its record's title and tags, and its body's parts."""

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    title: str
    tags: list[str]
    ttl_ms: int | None = None  # LangGraph's ttl (minutes), in milliseconds; None: never expires

    @classmethod
    def of(
        cls, namespace: tuple[str, ...], key: str, value: Mapping[str, Any], ttl_minutes: float | None = None
    ) -> _Draft:
        """Raises:
        TypeError, ValueError: the value is not JSON (a set, an object, NaN), or the ttl is not
        a positive number of minutes.
        """
        ttl_ms = None
        if ttl_minutes is not None:
            if (
                isinstance(ttl_minutes, bool)
                or not isinstance(ttl_minutes, int | float)
                or not ttl_minutes > 0
            ):
                raise ValueError(f"ttl must be a positive number of minutes, got {ttl_minutes!r}")
            ttl_ms = max(1, round(ttl_minutes * 60_000))
        draft = cls(
            namespace, key, dict(value), _title(namespace, key, value), _item_tags(namespace, key), ttl_ms
        )
        draft.body(None)  # a value that is not JSON is refused before the batch runs
        return draft

    def body(self, created_at_ms: int | None) -> str:
        """The record's body; ``created_at_ms``: the item's first put, once it has been updated."""
        envelope: dict[str, Any] = {"namespace": list(self.namespace), "key": self.key, "value": self.value}
        if created_at_ms is not None:
            envelope["created_at_ms"] = created_at_ms
        return _json(envelope)


def _decode(record: AgentMemoryRecord) -> _Stored | None:
    """The item a record holds; ``None`` for a record whose body is not an item's."""
    try:
        envelope = json.loads(record.body)
    except ValueError:
        return None
    if not isinstance(envelope, dict):
        return None
    namespace, key, value = envelope.get("namespace"), envelope.get("key"), envelope.get("value")
    created = envelope.get("created_at_ms", record.created_at_ms)
    if (
        not isinstance(namespace, list)
        or not all(isinstance(label, str) for label in namespace)
        or not isinstance(key, str)
        or not isinstance(value, dict)
        or not isinstance(created, int)
    ):
        return None
    return _Stored(
        record.memory_id, tuple(namespace), key, value, created, record.updated_at_ms, record.expires_at_ms
    )


# -- filters and namespace conditions -------------------------------------------------------------


def _compare(actual: Any, operator: str, operand: Any) -> bool:
    if operator == "$eq":
        return bool(actual == operand)
    if operator == "$ne":
        return bool(actual != operand)
    ordering: dict[str, Callable[[float, float], bool]] = {
        "$gt": lambda a, b: a > b,
        "$gte": lambda a, b: a >= b,
        "$lt": lambda a, b: a < b,
        "$lte": lambda a, b: a <= b,
    }
    if operator not in ordering:
        raise ValueError(f"MetaStore filters support $eq, $ne, $gt, $gte, $lt and $lte, not {operator!r}")
    numbers = all(isinstance(x, _NUMBER) and not isinstance(x, bool) for x in (actual, operand))
    return numbers and ordering[operator](actual, operand)


def _matches(value: Any, wanted: Any) -> bool:
    """Whether a stored ``value`` satisfies a search ``filter`` (or a nested part of one)."""
    if isinstance(wanted, dict):
        if any(isinstance(k, str) and k.startswith("$") for k in wanted):
            return all(_compare(value, op, operand) for op, operand in wanted.items())
        return isinstance(value, dict) and all(_matches(value.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(value, list)
            and len(value) == len(wanted)
            and all(_matches(v, w) for v, w in zip(value, wanted, strict=True))
        )
    return bool(value == wanted)


def _holds(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"unsupported namespace match type {condition.match_type!r}")
    return all(want == "*" or label == want for label, want in pairs)


def _listing_prefix(conditions: tuple[MatchCondition, ...]) -> tuple[str, ...]:
    """The concrete leading labels of the first prefix condition: whose memory to read."""
    for condition in conditions:
        if condition.match_type == "prefix" and condition.path and condition.path[0] != "*":
            return tuple(takewhile(lambda label: label != "*", condition.path))
    raise InvalidNamespaceError(
        "MetaStore list_namespaces needs prefix=(identity, ...): the first label names the identity"
    )


# -- the drivers ----------------------------------------------------------------------------------


def _ask(method: str, *args: Any, **kwargs: Any) -> Plan[Any]:
    return (yield _Request(method, args, kwargs))


def _run(api: MetaApi, plan: Plan[T]) -> T:
    try:
        request = next(plan)
        while True:
            request = plan.send(getattr(api, request.method)(*request.args, **request.kwargs))
    except StopIteration as done:
        result: T = done.value
        return result


async def _arun(api: AsyncMetaApi, plan: Plan[T]) -> T:
    try:
        request = next(plan)
        while True:
            request = plan.send(await getattr(api, request.method)(*request.args, **request.kwargs))
    except StopIteration as done:
        result: T = done.value
        return result


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


# -- the store ------------------------------------------------------------------------------------


class MetaStore(BaseStore):
    """LangGraph's ``BaseStore`` over a runtime's agent memory (the mapping: this module's docstring).

    Compile a graph with ``store=MetaStore(api)``; its nodes reach the store through a
    ``store: BaseStore`` parameter or ``langgraph.config.get_store()``. Over a sync ``api`` (the
    handle, a :class:`~meta_memory.client.MetaClient`) the async methods run the sync calls in a
    worker thread; over an :class:`~meta_memory.client.AsyncMetaClient` the sync methods are served
    from other threads on the client's event loop (a sync node of a graph run with ``ainvoke``).

    Args:
        api: The way into the runtime; it stays the caller's to close.
        realm: The realm every item lives in (``None``: the runtime's default realm).

    Raises:
        TypeError: ``api`` is neither a :class:`~meta_memory.api.MetaApi` nor an
            :class:`~meta_memory.api.AsyncMetaApi`. (What the operations raise: :meth:`batch`.)
    """

    supports_ttl = True

    def __init__(self, api: MetaApi | AsyncMetaApi, *, realm: str | None = None) -> None:
        if not isinstance(api, MetaApi | AsyncMetaApi):
            raise TypeError(f"MetaStore needs a MetaApi or an AsyncMetaApi, got {type(api).__name__}")
        self.api = api
        self.realm = realm
        # The loop an async client lives on, for sync calls arriving from worker threads.
        self._loop = _running_loop() if isinstance(api, AsyncMetaApi) else None

    # -- BaseStore ------------------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run ``ops`` in order.

        Args:
            ops: LangGraph store operations (``GetOp``, ``PutOp``, ``SearchOp``, ``ListNamespacesOp``).

        Returns:
            One result per operation, in order: an ``Item`` or ``None``, ``None``, a list of
            ``SearchItem``, a list of namespaces.

        Raises:
            InvalidNamespaceError: an operation's namespace cannot be mapped.
            TypeError, ValueError: a value that is not JSON, a negative limit or offset, or an
                unsupported filter operator.
            NotImplementedError: a put with a ``ttl``.
            MetaError: the runtime refused a call (its own error, unchanged: ``InvalidParams``,
                ``WriteRefused``, and on a client ``MetaConnectionError``).
            RuntimeError: over an async client, called on its event loop's thread, or while that
                loop is not running.

        Every operation is checked before the first one runs, so a bad one refuses the batch whole
        (an unsupported filter operator is found while searching).
        """
        api = self.api
        if isinstance(api, AsyncMetaApi):
            return self._on_client_loop(list(ops))
        return [_run(api, plan) for plan in self._plans(ops)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` as a coroutine.

        Args:
            ops: LangGraph store operations.

        Returns:
            One result per operation, in order.

        Raises:
            InvalidNamespaceError, TypeError, ValueError, NotImplementedError, MetaError: as
                :meth:`batch` raises them.
        """
        api = self.api
        if isinstance(api, MetaApi):
            return await asyncio.to_thread(self.batch, list(ops))
        self._loop = asyncio.get_running_loop()
        return [await _arun(api, plan) for plan in self._plans(ops)]

    def _on_client_loop(self, ops: list[Op]) -> list[Result]:
        loop = self._loop
        if loop is None or loop.is_closed() or not loop.is_running():
            raise RuntimeError(
                "MetaStore over an async client: use the async methods (aput, aget, asearch, ...), or "
                "call the sync ones from another thread while the client's event loop runs"
            )
        if _running_loop() is loop:
            raise RuntimeError(
                "MetaStore over an async client: a sync call on its event loop's thread would block "
                "that loop; use the async methods (aput, aget, asearch, ...)"
            )
        return asyncio.run_coroutine_threadsafe(self.abatch(ops), loop).result()

    # -- erasure (beyond BaseStore) ---------------------------------------------------------------

    def purge_namespace(self, namespace: tuple[str, ...]) -> list[str]:
        """Erase every item under ``namespace`` (a prefix, identity first) for real: each item's
        record with its whole lineage (its earlier values, a deleted item's forgotten record), so
        no file or table of the runtime keeps them afterwards (``meta/agent_memory/purge``). A
        ``delete`` only forgets. Needs ``agent.memory.admin`` on the console; an application key
        purges only within its realms.

        Args:
            namespace: the prefix; ``(identity,)`` is every item of that identity (records the
                identity holds outside this store are kept).

        Returns:
            The ids of the records erased.

        Raises:
            InvalidNamespaceError: the namespace cannot be mapped.
            MetaError: the runtime refused a call (``AccessDenied``, ``StorageRefused``).
        """
        api = self.api
        if isinstance(api, AsyncMetaApi):
            loop = self._loop
            if loop is None or not loop.is_running() or _running_loop() is loop:
                raise RuntimeError("MetaStore over an async client: use apurge_namespace")
            return asyncio.run_coroutine_threadsafe(self.apurge_namespace(namespace), loop).result()
        return _run(api, self._purge_namespace(namespace))

    async def apurge_namespace(self, namespace: tuple[str, ...]) -> list[str]:
        """:meth:`purge_namespace` as a coroutine.

        Args:
            namespace: the prefix, identity first.

        Returns:
            The ids of the records erased.

        Raises:
            InvalidNamespaceError, MetaError: as :meth:`purge_namespace` raises them.
        """
        api = self.api
        if isinstance(api, MetaApi):
            return await asyncio.to_thread(self.purge_namespace, namespace)
        self._loop = asyncio.get_running_loop()
        return await _arun(api, self._purge_namespace(namespace))

    def _purge_namespace(self, namespace: tuple[str, ...]) -> Plan[list[str]]:
        identity = _identity(namespace, "purge_namespace")
        erased: list[str] = []
        while True:  # every version of every item: the active, superseded and forgotten records
            page: AgentMemoryPage = yield from _ask(
                "list_agent_memory",
                identity,
                realm=self.realm,
                status="any",
                tags_all=[prefix_tag(namespace)],
                limit=LIST_PAGE_MAX,
            )
            if not page.records:
                return erased
            # A page at a time, in one purge each: its records' lineages go with them.
            receipt = yield from _ask(
                "purge_agent_memory",
                identity,
                memory_ids=[r.memory_id for r in page.records],
                realm=self.realm,
            )
            erased.extend(r.memory_id for r in receipt.records)

    # -- the operations as plans ----------------------------------------------------------------

    def _plans(self, ops: Iterable[Op]) -> list[Plan[Result]]:
        # Planning checks an operation, and a plan runs only when driven: a list checks them all first.
        return [self._plan(op) for op in ops]

    def _plan(self, op: Op) -> Plan[Result]:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            return self._get(_identity(op.namespace, "get"), op.namespace, op.key)
        if isinstance(op, PutOp):
            identity = _identity(op.namespace, "put")
            if op.value is None:
                return self._delete(identity, op.namespace, op.key)
            draft = _Draft.of(op.namespace, op.key, op.value, op.ttl)
            return self._put(identity, draft)
        if isinstance(op, SearchOp):
            if op.limit < 0 or op.offset < 0:
                raise ValueError("search limit and offset must not be negative")
            return self._search(_identity(op.namespace_prefix, "search"), op)
        if isinstance(op, ListNamespacesOp):
            if op.limit < 0 or op.offset < 0:
                raise ValueError("list_namespaces limit and offset must not be negative")
            conditions = op.match_conditions or ()
            prefix = _listing_prefix(conditions)
            return self._list_namespaces(_identity(prefix, "list_namespaces"), prefix, conditions, op)
        raise TypeError(f"MetaStore cannot run a {type(op).__name__}")

    def _scan(
        self,
        identity: str,
        tag: str,
        *,
        filter: dict[str, Any] | None = None,
        stop_after: int | None = None,
    ) -> Plan[list[_Stored]]:
        """The items of ``identity`` carrying ``tag`` whose value ``filter`` keeps, newest updated
        first, read page by page until ``stop_after`` of them are found."""
        found: list[_Stored] = []
        cursor: str | None = None
        while stop_after is None or len(found) < stop_after:
            page: AgentMemoryPage = yield from _ask(
                "list_agent_memory",
                identity,
                realm=self.realm,
                tags_all=[tag],
                limit=LIST_PAGE_MAX,
                cursor=cursor,
            )
            found.extend(
                s for r in page.records if (s := _decode(r)) is not None and _matches(s.value, filter or {})
            )
            if page.next_cursor is None:
                break
            cursor = page.next_cursor
        return found if stop_after is None else found[:stop_after]

    def _get(self, identity: str, namespace: tuple[str, ...], key: str) -> Plan[Item | None]:
        current = yield from self._scan(identity, item_tag(namespace, key))
        return current[0].item() if current else None

    def _put(self, identity: str, draft: _Draft) -> Plan[None]:
        current = yield from self._scan(identity, item_tag(draft.namespace, draft.key))
        if not current:
            yield from _ask(
                "remember_agent_memory",
                identity,
                title=draft.title,
                body=draft.body(None),
                tags=draft.tags,
                realm=self.realm,
                ttl_ms=draft.ttl_ms,
            )
            return None
        newest, *stale = current  # more than one: two writers raced; the newest wins, the rest go
        # An identical value that never expires, put without a ttl, writes nothing; a ttl always
        # writes (it counts from this put).
        if (
            _json(newest.value) != _json(draft.value)
            or draft.ttl_ms is not None
            or newest.expires_at_ms is not None
        ):
            yield from _ask(
                "update_agent_memory",
                identity,
                newest.memory_id,
                title=draft.title,
                body=draft.body(newest.created_at_ms),
                tags=draft.tags,
                realm=self.realm,
                ttl_ms=draft.ttl_ms,
                expires_at_ms=NO_EXPIRY if draft.ttl_ms is None else None,
            )
        for duplicate in stale:
            yield from _ask("forget_agent_memory", identity, duplicate.memory_id, realm=self.realm)
        return None

    def _delete(self, identity: str, namespace: tuple[str, ...], key: str) -> Plan[None]:
        current = yield from self._scan(identity, item_tag(namespace, key))
        for stored in current:
            yield from _ask("forget_agent_memory", identity, stored.memory_id, realm=self.realm)
        return None

    def _search(self, identity: str, op: SearchOp) -> Plan[list[SearchItem]]:
        tag, wanted = prefix_tag(op.namespace_prefix), op.offset + op.limit
        if op.limit == 0:
            return []
        if not op.query:
            found = yield from self._scan(identity, tag, filter=op.filter, stop_after=wanted)
            return [stored.search_item(None) for stored in found[op.offset :]]
        records: list[AgentMemoryRecord] = yield from _ask(
            "recall_agent_memory",
            identity,
            realm=self.realm,
            selection="contextual",
            query_text=op.query,
            max_entries=RECALL_MAX if op.filter else min(wanted, RECALL_MAX),
            tags=[tag],
        )
        ranked = [
            stored.search_item(record.score)
            for record in records
            if (stored := _decode(record)) is not None and _matches(stored.value, op.filter or {})
        ]
        return ranked[op.offset : wanted]

    def _list_namespaces(
        self,
        identity: str,
        prefix: tuple[str, ...],
        conditions: tuple[MatchCondition, ...],
        op: ListNamespacesOp,
    ) -> Plan[list[tuple[str, ...]]]:
        found = yield from self._scan(identity, prefix_tag(prefix))
        namespaces = {s.namespace for s in found if all(_holds(c, s.namespace) for c in conditions)}
        if op.max_depth is not None:
            namespaces = {namespace[: op.max_depth] for namespace in namespaces}
        return sorted(namespaces)[op.offset : op.offset + op.limit]
