"""``MetaStore``, LangGraph's ``BaseStore`` over agent memory, on a real runtime and state dir:
put / get / update / delete, search by query and by filter, namespace listings, the runtime's
limits and errors, and the memory firewall. Expectations come from the mapping the module
documents and from a plain dict model of what was put, never from the store itself."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime
from typing import Any

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp

from meta_memory import InvalidParams, MetaHandle, WriteRefused
from meta_memory.api import AsyncMetaApi
from meta_memory.clock import ManualClock
from meta_memory.integrations import langgraph as lg
from meta_memory.integrations.langgraph import STORE_TAG, MetaStore, item_tag, prefix_tag
from meta_memory.memory import params, validator

USER = "user-1"
PREFS = (USER, "prefs")


def at(clock: ManualClock) -> datetime:
    return datetime.fromtimestamp(clock.now_ms() / 1000, tz=UTC)


def records(meta: MetaHandle, identity: str, tag: str, status: str = "active") -> list[Any]:
    return list(meta.list_agent_memory(identity, tags_all=[tag], status=status, limit=200).records)


def test_the_planned_limits_are_the_runtimes() -> None:
    assert lg.LIST_PAGE_MAX == params.LIST_LIMIT_MAX
    assert lg.RECALL_MAX == params.MAX_ENTRIES_LIMIT
    assert lg.TITLE_MAX_BYTES == validator.TITLE_MAX_BYTES
    assert lg.TAGS_MAX == validator.TAGS_MAX
    assert len(item_tag(("x" * 500,), "k" * 500)) <= validator.TAG_MAX_BYTES


def test_put_then_get_returns_the_value_unchanged_with_the_records_times(
    store: MetaStore, clock: ManualClock
) -> None:
    value = {
        "text": "Prefers tea — « sans sucre » 🍵",
        "n": 3,
        "ratio": 0.1,
        "big": 2**60,
        "ok": True,
        "none": None,
        "nested": {"list": [1, "two", {"three": []}], "empty": {}},
        "Keys": "Case Kept",
    }
    store.put(PREFS, "Drinks", value)
    item = store.get(PREFS, "Drinks")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (PREFS, "Drinks", value)
    assert list(item.value) == list(value)  # key order kept too
    assert item.created_at == item.updated_at == at(clock)
    assert store.get(PREFS, "drinks") is None  # keys are case-sensitive, as LangGraph's are
    assert store.get((USER, "other"), "Drinks") is None


def test_an_item_is_an_application_record_of_the_namespaces_identity(
    store: MetaStore, meta: MetaHandle
) -> None:
    store.put((USER, "prefs", "food"), "diet", {"preference": "vegetarian", "strict": True})
    [record] = records(meta, USER, STORE_TAG)
    assert record.author == {"author": "application"}
    assert record.status == "active"
    assert record.title == "preference: vegetarian; strict: true"
    assert set(record.tags) == {
        STORE_TAG,
        prefix_tag((USER, "prefs")),
        prefix_tag((USER, "prefs", "food")),
        item_tag((USER, "prefs", "food"), "diet"),
    }
    assert records(meta, "user-2", STORE_TAG) == []  # another identity's memory holds nothing
    assert store.search(("user-2",)) == []


def test_put_with_the_same_key_supersedes_the_record(
    store: MetaStore, meta: MetaHandle, clock: ManualClock
) -> None:
    store.put(PREFS, "diet", {"preference": "vegetarian"})
    first = at(clock)
    clock.advance(5_000)
    store.put(PREFS, "diet", {"preference": "vegan"})
    item = store.get(PREFS, "diet")
    assert item is not None
    assert item.value == {"preference": "vegan"}
    assert (item.created_at, item.updated_at) == (first, at(clock))
    tag = item_tag(PREFS, "diet")
    [current] = records(meta, USER, tag)
    [old] = records(meta, USER, tag, status="superseded")
    assert old.superseded_by == current.memory_id and current.supersedes == old.memory_id
    assert [i.value for i in store.search(PREFS)] == [{"preference": "vegan"}]


def test_putting_the_same_value_again_writes_nothing(
    store: MetaStore, meta: MetaHandle, clock: ManualClock
) -> None:
    store.put(PREFS, "diet", {"preference": "vegetarian", "n": 1})
    clock.advance(1_000)
    store.put(PREFS, "diet", {"preference": "vegetarian", "n": 1})
    store.put(PREFS, "diet", {"preference": "vegetarian", "n": True})  # true is not 1 in JSON
    assert len(records(meta, USER, item_tag(PREFS, "diet"), status="any")) == 2


def test_delete_and_put_none_forget_the_item(store: MetaStore, meta: MetaHandle) -> None:
    store.put(PREFS, "a", {"v": 1})
    store.put(PREFS, "b", {"v": 2})
    store.delete(PREFS, "a")
    store.batch([PutOp(PREFS, "b", None)])
    assert store.get(PREFS, "a") is None and store.get(PREFS, "b") is None
    assert store.search(PREFS) == []
    assert {r.status for r in records(meta, USER, STORE_TAG, status="any")} == {"tombstoned"}
    store.delete(PREFS, "never-put")  # deleting nothing is not an error
    store.put(PREFS, "a", {"v": 1})  # and an item can come back
    assert store.get(PREFS, "a") is not None


def test_two_records_of_one_key_heal_on_the_next_put(
    store: MetaStore, meta: MetaHandle, clock: ManualClock
) -> None:
    """Two writers that both saw no item each remembered one: the newest wins, the next put forgets the other."""
    tag_args = {"tags": [STORE_TAG, prefix_tag(PREFS), item_tag(PREFS, "k")]}
    for n in (1, 2):
        body = f'{{"namespace":["{USER}","prefs"],"key":"k","value":{{"n":{n}}}}}'
        meta.remember_agent_memory(USER, title=f"n: {n}", body=body, **tag_args)
        clock.advance(10)
    item = store.get(PREFS, "k")
    assert item is not None and item.value == {"n": 2}
    store.put(PREFS, "k", {"n": 3})
    [only] = records(meta, USER, item_tag(PREFS, "k"))
    assert store.get(PREFS, "k") == store.search(PREFS)[0]
    assert only.body.endswith('"value":{"n":3},"created_at_ms":' + str(clock.now_ms() - 10) + "}")


def test_search_with_a_query_recalls_only_under_the_namespace_prefix(store: MetaStore) -> None:
    store.put((USER, "prefs"), "diet", {"text": "vegetarian food, no peanuts"})
    store.put((USER, "prefs", "kitchen"), "oven", {"text": "the oven runs hot, bake food lower"})
    store.put((USER, "notes"), "shop", {"text": "buy food for the weekend"})
    store.put((USER, "prefs"), "music", {"text": "likes jazz"})
    hits = store.search((USER, "prefs"), query="what food should I cook?", limit=10)
    assert {(h.namespace, h.key) for h in hits} == {
        ((USER, "prefs"), "diet"),
        ((USER, "prefs", "kitchen"), "oven"),
    }
    # Recall's own scores: the best 1.0, the next its BM25 over the best (both share "food").
    scores = [h.score for h in hits]
    assert scores[0] == 1.0 and scores[1] is not None and 0 < scores[1] < 1.0
    assert store.search((USER, "prefs", "kitchen"), query="food") == [
        store.search((USER, "prefs"), query="oven food", limit=1)[0]
    ]
    assert [h.key for h in store.search((USER,), query="food", limit=2, offset=1)] == [
        h.key for h in store.search((USER,), query="food", limit=3)[1:3]
    ]
    assert store.search(PREFS, query="submarine") == []


def test_search_with_a_query_and_a_filter(store: MetaStore) -> None:
    store.put(PREFS, "a", {"text": "spicy food", "meal": "dinner", "rating": 4})
    store.put(PREFS, "b", {"text": "sweet food", "meal": "lunch", "rating": 5})
    store.put(PREFS, "c", {"text": "salty food", "meal": "dinner", "rating": 2})
    keys = lambda **kw: sorted(h.key for h in store.search(PREFS, query="food", **kw))  # noqa: E731
    assert keys(filter={"meal": "dinner"}) == ["a", "c"]
    assert keys(filter={"meal": "dinner", "rating": {"$gte": 3}}) == ["a"]
    assert keys(filter={"rating": {"$ne": 5}}) == ["a", "c"]
    assert keys(filter={"meal": "breakfast"}) == []


@pytest.mark.parametrize(
    ("filter", "expected"),
    [
        ({"kind": "note"}, ["n1", "n2"]),
        ({"kind": "note", "n": 2}, ["n2"]),
        ({"meta": {"lang": "fr"}}, ["n1"]),  # a nested object matches key by key
        ({"meta": {"lang": "fr", "x": None}}, ["n1"]),  # a missing key matches None, as in LangGraph
        ({"tags": ["a", "b"]}, ["n2"]),  # a list matches exactly
        ({"tags": ["a"]}, ["n1"]),
        ({"tags": ["b"]}, []),  # not containment
        ({"n": {"$gt": 1}}, ["n2", "t1"]),
        ({"n": {"$gt": 1, "$lt": 3}}, ["n2"]),
        ({"n": {"$lte": 1}}, ["n1"]),
        ({"n": {"$eq": 3}}, ["t1"]),
        ({"kind": {"$ne": "note"}}, ["t1"]),
        ({"kind": {"$gt": 1}}, []),  # ordering compares numbers only
    ],
)
def test_filter_applies_to_the_values_keys(
    store: MetaStore, filter: dict[str, Any], expected: list[str]
) -> None:
    store.put(PREFS, "n1", {"kind": "note", "n": 1, "meta": {"lang": "fr", "by": "x"}, "tags": ["a"]})
    store.put(PREFS, "n2", {"kind": "note", "n": 2, "meta": {"lang": "en"}, "tags": ["a", "b"]})
    store.put(PREFS, "t1", {"kind": "todo", "n": 3})
    assert sorted(h.key for h in store.search(PREFS, filter=filter)) == expected


def test_an_unsupported_filter_operator_is_refused(store: MetaStore) -> None:
    store.put(PREFS, "a", {"n": 1})
    with pytest.raises(ValueError, match=r"\$in"):
        store.search(PREFS, filter={"n": {"$in": [1]}})


def test_store_matches_a_dict_model_of_what_was_put(store: MetaStore, clock: ManualClock) -> None:
    """A seeded run of puts, updates and deletes over nested namespaces; every read is checked
    against a plain dict of what should be stored (newest put first, as listings are)."""
    rng = random.Random(20240611)
    spaces = [(USER, "a"), (USER, "a", "x"), (USER, "a", "y"), (USER, "b"), (USER,)]
    model: dict[tuple[tuple[str, ...], str], tuple[dict[str, Any], int]] = {}
    for step in range(90):
        clock.advance(1_000)
        namespace, key = rng.choice(spaces), f"k{rng.randrange(6)}"
        if rng.random() < 0.25:
            store.delete(namespace, key)
            model.pop((namespace, key), None)
        else:
            value = {"colour": rng.choice(["red", "blue"]), "n": rng.randrange(4), "step": step}
            store.put(namespace, key, value)
            model[(namespace, key)] = (value, clock.now_ms())

    def expected(prefix: tuple[str, ...], flt: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
        kept = [
            (when, ns, key)
            for (ns, key), (value, when) in model.items()
            if ns[: len(prefix)] == prefix and all(value.get(k) == v for k, v in flt.items())
        ]
        return [(ns, key) for _, ns, key in sorted(kept, reverse=True)]

    for namespace in spaces:
        for n in range(6):
            item = store.get(namespace, f"k{n}")
            held = model.get((namespace, f"k{n}"))
            assert (item.value if item else None) == (held[0] if held else None)
    for prefix in [(USER,), (USER, "a"), (USER, "a", "x"), (USER, "b")]:
        for flt in [{}, {"colour": "red"}, {"colour": "blue", "n": 2}]:
            want = expected(prefix, flt)
            got = store.search(prefix, filter=flt, limit=100)
            assert [(i.namespace, i.key) for i in got] == want
            page = store.search(prefix, filter=flt, limit=3, offset=2)
            assert [(i.namespace, i.key) for i in page] == want[2:5]
    assert store.list_namespaces(prefix=(USER,)) == sorted({ns for ns, _ in model})


def test_list_namespaces_by_prefix_suffix_max_depth_limit_and_offset(store: MetaStore) -> None:
    for namespace in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]:
        store.put(namespace, "k", {"v": 1})
    store.put(("z", "b"), "k", {"v": 1})  # another identity
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(prefix=("a",), suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a",), max_depth=2) == [("a", "b"), ("a", "c")]
    assert store.list_namespaces(prefix=("a",), limit=2, offset=1) == [
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
    ]
    assert store.list_namespaces(prefix=("a", "b", "d")) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]
    assert store.list_namespaces(prefix=("z",)) == [("z", "b")]
    store.delete(("a", "c", "f"), "k")
    assert store.list_namespaces(prefix=("a", "c")) == []


def test_search_and_listing_need_the_identity(store: MetaStore) -> None:
    with pytest.raises(InvalidNamespaceError, match="identity"):
        store.search(())
    with pytest.raises(InvalidNamespaceError, match="identity"):
        store.list_namespaces()
    with pytest.raises(InvalidNamespaceError, match="identity"):
        store.list_namespaces(prefix=("*", "prefs"))
    with pytest.raises(InvalidNamespaceError, match="identity"):
        store.list_namespaces(suffix=("prefs",))


def test_a_namespace_deeper_than_the_tag_cap_is_refused_before_anything_runs(
    store: MetaStore, meta: MetaHandle
) -> None:
    deepest = (USER, *(f"l{i}" for i in range(lg.NAMESPACE_MAX_LABELS - 1)))
    store.put(deepest, "k", {"v": 1})
    assert store.get(deepest, "k") is not None
    with pytest.raises(InvalidNamespaceError, match="at most 31 labels"):
        store.batch([PutOp(PREFS, "first", {"v": 1}), PutOp((*deepest, "one-more"), "k", {"v": 1})])
    assert store.get(PREFS, "first") is None  # the batch was refused whole


def test_the_runtime_refuses_a_value_too_large_with_its_own_error(store: MetaStore, meta: MetaHandle) -> None:
    with pytest.raises(InvalidParams, match="body must be at most 65536 bytes"):
        store.put(PREFS, "essay", {"text": "word " * 14_000})
    assert records(meta, USER, STORE_TAG, status="any") == []
    store.put(PREFS, "essay", {"text": "word " * 12_000})  # under the cap it is stored whole
    item = store.get(PREFS, "essay")
    assert item is not None and item.value == {"text": "word " * 12_000}


def test_the_validator_refuses_a_secret_in_a_value(store: MetaStore, meta: MetaHandle) -> None:
    with pytest.raises(WriteRefused, match="secret") as refused:
        store.put(PREFS, "creds", {"note": "aws key AKIAIOSFODNN7EXAMPL3"})
    assert refused.value.rule == "secret-detected"
    assert records(meta, USER, STORE_TAG, status="any") == []


def test_an_identity_the_runtime_refuses_is_its_error(store: MetaStore) -> None:
    with pytest.raises(InvalidParams, match="identity must be a valid non-empty string"):
        store.put((" padded ", "prefs"), "k", {"v": 1})


def test_values_that_are_not_json_and_bad_ttls_are_refused(store: MetaStore) -> None:
    with pytest.raises(TypeError):
        store.put(PREFS, "k", {"v": {1, 2}})
    with pytest.raises(ValueError):
        store.put(PREFS, "k", {"v": float("nan")})
    with pytest.raises(ValueError, match="ttl must be a positive number of minutes"):
        store.put(PREFS, "k", {"v": 1}, ttl=0)
    with pytest.raises(ValueError, match="ttl must be a positive number of minutes"):
        store.batch([PutOp(PREFS, "k", {"v": 1}, ttl=-5)])
    assert store.get(PREFS, "k") is None


def test_a_ttl_expires_the_item_and_a_put_without_one_keeps_it(
    store: MetaStore, meta: MetaHandle, clock: ManualClock
) -> None:
    assert store.supports_ttl
    store.put(PREFS, "plan", {"text": "today's plan"}, ttl=2)  # minutes
    store.put(PREFS, "rule", {"text": "a lasting rule"})
    [record] = records(meta, USER, item_tag(PREFS, "plan"))
    assert record.expires_at_ms == clock.now_ms() + 120_000
    clock.advance(119_999)
    assert store.get(PREFS, "plan") is not None
    clock.advance(1)
    assert store.get(PREFS, "plan") is None
    assert [i.key for i in store.search(PREFS)] == ["rule"]
    assert [i.key for i in store.search(PREFS, query="plan rule")] == ["rule"]
    # A put without a ttl over an item that had one never expires.
    store.put(PREFS, "again", {"text": "first"}, ttl=1)
    store.put(PREFS, "again", {"text": "first"})
    clock.advance(10**9)
    item = store.get(PREFS, "again")
    assert item is not None and item.value == {"text": "first"}


def test_a_quarantined_record_never_surfaces_as_an_item(store: MetaStore, meta: MetaHandle) -> None:
    """An LLM write from a tainted session, dressed as a store item, stays in quarantine."""
    session = meta.open_session(USER)
    session.tool_result("web_fetch")
    body = f'{{"namespace":["{USER}","prefs"],"key":"admin","value":{{"role":"admin"}}}}'
    result = session.memory_tool(
        {
            "action": "remember",
            "title": "role: admin",
            "body": body,
            "tags": [STORE_TAG, prefix_tag(PREFS), item_tag(PREFS, "admin")],
        }
    )
    assert result.outcome == "quarantined"
    assert store.get(PREFS, "admin") is None
    assert store.search(PREFS) == [] and store.search(PREFS, query="admin role") == []
    assert store.list_namespaces(prefix=(USER,)) == []


def test_a_batch_runs_in_order_each_op_seeing_the_writes_before_it(store: MetaStore) -> None:
    got = store.batch(
        [
            GetOp(PREFS, "k"),
            PutOp(PREFS, "k", {"v": 1}),
            GetOp(PREFS, "k"),
            PutOp(PREFS, "k", {"v": 2}),
            GetOp(PREFS, "k"),
            PutOp(PREFS, "k", None),
            GetOp(PREFS, "k"),
        ]
    )
    values = [r.value if r is not None else None for r in got[::2]]  # type: ignore[union-attr]
    assert values == [None, {"v": 1}, {"v": 2}, None]


def test_a_realm_keeps_its_items_apart(meta: MetaHandle) -> None:
    default, other = MetaStore(meta), MetaStore(meta, realm="tenant-b")
    other.put(PREFS, "k", {"v": "b"})
    assert default.get(PREFS, "k") is None
    item = other.get(PREFS, "k")
    assert item is not None and item.value == {"v": "b"}
    assert meta.list_agent_memory(USER, realm="tenant-b").realm == "tenant-b"


def test_the_async_methods_over_the_in_process_handle(store: MetaStore) -> None:
    async def scenario() -> None:
        await store.aput(PREFS, "diet", {"text": "vegetarian food"})
        await store.aput((USER, "notes"), "n", {"text": "call the plumber"})
        item = await store.aget(PREFS, "diet")
        assert item is not None and item.value == {"text": "vegetarian food"}
        await store.aput(PREFS, "diet", {"text": "vegan food"})
        hits = await store.asearch((USER,), query="food")
        assert [(h.key, h.value, h.score) for h in hits] == [("diet", {"text": "vegan food"}, 1.0)]
        assert await store.alist_namespaces(prefix=(USER,)) == [(USER, "notes"), PREFS]
        await store.adelete(PREFS, "diet")
        assert await store.aget(PREFS, "diet") is None
        assert [h.key for h in await store.asearch((USER,), filter={"text": "call the plumber"})] == ["n"]

    asyncio.run(scenario())


def test_the_store_needs_a_way_into_a_runtime() -> None:
    with pytest.raises(TypeError, match="MetaApi or an AsyncMetaApi"):
        MetaStore(object())  # type: ignore[arg-type]


def test_sync_calls_over_an_async_api_need_its_running_loop() -> None:
    class NeverCalled(AsyncMetaApi):
        async def _invoke(self, call: Any) -> Any:
            raise AssertionError("nothing may be sent")

    store = MetaStore(NeverCalled())  # built outside any event loop
    with pytest.raises(RuntimeError, match="from another thread while the client's event loop runs"):
        store.get(PREFS, "k")


def test_purge_namespace_erases_every_version_of_every_item_under_the_prefix(
    store: MetaStore, meta: MetaHandle
) -> None:
    store.put((USER, "notes", "a"), "k1", {"text": "first qzlgpurge1"})
    store.put((USER, "notes", "a"), "k1", {"text": "second qzlgpurge2"})  # an update: two versions
    store.put((USER, "notes", "b"), "k2", {"text": "third qzlgpurge3"})
    store.delete((USER, "notes", "b"), "k2")  # forgotten: still a record until purged
    store.put(PREFS, "drink", {"text": "tea"})
    before = {r.memory_id for r in records(meta, USER, prefix_tag((USER, "notes")), status="any")}
    assert len(before) == 3

    erased = store.purge_namespace((USER, "notes"))

    assert set(erased) == before
    assert records(meta, USER, prefix_tag((USER, "notes")), status="any") == []
    assert store.search((USER, "notes")) == []
    item = store.get(PREFS, "drink")  # outside the prefix: kept
    assert item is not None and item.value == {"text": "tea"}
    assert store.purge_namespace((USER, "notes")) == []
    with pytest.raises(InvalidNamespaceError):
        store.purge_namespace(("*", "notes"))


def test_apurge_namespace_over_the_async_api(store: MetaStore, meta: MetaHandle) -> None:
    store.put((USER, "tmp"), "k", {"text": "scratch"})
    erased = asyncio.run(store.apurge_namespace((USER,)))
    assert len(erased) == 1 and store.get((USER, "tmp"), "k") is None
