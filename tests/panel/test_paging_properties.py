"""Paging through ``records`` across several realms, with any limit, filter and caller, returns each
row the caller may read exactly once, in order, and never one it may not; pages exceed ``limit`` only
to keep two realms' rows with one id and update time together, and ``next_cursor`` comes exactly when
more readable rows follow. The expectation is computed independently, from the stored rows and the
access engine."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory.access import ANONYMOUS, Principal
from meta_memory.memory.records import OPERATOR, Scope, ScopeKind, Status

from ..conftest import BACKENDS, make_backend
from .conftest import AUDITOR, BLIND, LEADS, OUTSIDER, RED, REVIEWER, ROOT, Bench, access_config, open_bench

REALMS = ("alpha", "beta", "gamma")
SCOPES = [
    (ScopeKind.IDENTITY, "lead"),
    (ScopeKind.IDENTITY, "scout"),
    (ScopeKind.IDENTITY, "analyst"),
    (ScopeKind.IDENTITY, "ghost"),
    (ScopeKind.MOB, "ops"),
    (ScopeKind.OPERATOR, "acme"),
    (ScopeKind.REALM, ""),
]
PRINCIPALS = [ROOT, LEADS, RED, AUDITOR, REVIEWER, OUTSIDER, BLIND, ANONYMOUS]


def _populate(bench: Bench) -> None:
    """Per realm: records over a few milliseconds (so update times tie), some ids shared across realms
    at one time, some quarantined, some tombstoned later."""
    rng = random.Random(20_240_601)
    for realm in REALMS:
        for n in range(3):  # the same id and update time in every realm
            bench.put(realm, ScopeKind.REALM, "", f"Shared {n}", memory_id=f"mem-shared-{n}", at_ms=1_005)
        for n in rng.sample(range(80), 36):
            kind, key = rng.choice(SCOPES)
            status = Status.QUARANTINED if rng.random() < 0.25 else Status.ACTIVE
            made = bench.put(
                realm,
                kind,
                key,
                f"Note {n}",
                memory_id=f"mem-{n:03}",
                status=status,
                at_ms=1_000 + rng.randrange(12),
            )
            if rng.random() < 0.2:
                bench.clock.set(1_000 + rng.randrange(12))
                assert bench.store(realm).forget(Scope(kind, realm, key), made.id, OPERATOR)


@pytest.fixture(scope="module", params=BACKENDS)
def dataset(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[Bench]:
    for backend in make_backend(request.param, request):
        bench = open_bench(tmp_path_factory.mktemp("paging") / "state", access_config(), backend)
        _populate(bench)
        yield bench
        bench.runtime.close()


def _expected(bench: Bench, principal: Principal, params: dict[str, Any]) -> list[tuple[str, str, int]]:
    engine = bench.runtime.access
    assert engine is not None
    rows: list[tuple[str, str, int]] = []
    for realm in REALMS:
        if params.get("realm") not in (None, realm):
            continue
        # A realm file holds one realm; the PostgreSQL schema holds them all.
        of_realm, args = (" WHERE r.realm = ?", (realm,)) if bench.backend.is_postgres else ("", ())
        with bench.db(realm) as conn:
            stored = conn.execute(
                "SELECT r.id, s.kind, s.key, r.status, r.ever_quarantined, r.updated_at_ms "
                "FROM records r JOIN scopes s ON s.scope_id = r.scope_id" + of_realm,
                args,
            ).fetchall()
        for memory_id, kind, key, status, ever, updated in stored:
            if params.get("scope") not in (None, kind) or params.get("status") not in (None, status):
                continue
            if engine.can_read_record(
                principal, scope_kind=kind, scope_key=key, status=status, ever_quarantined=bool(ever)
            ):
                rows.append((realm, memory_id, updated))
    rows.sort(key=lambda r: r[0])
    rows.sort(key=lambda r: (r[2], r[1]), reverse=True)
    return rows


def _page_through(
    bench: Bench, principal: Principal, params: dict[str, Any], limit: int
) -> list[list[tuple[str, str, int]]]:
    pages: list[list[tuple[str, str, int]]] = []
    cursor = None
    for _ in range(500):
        result = bench.panel("records", {**params, "limit": limit, "cursor": cursor}, principal)
        page = [(r["realm"], r["memory_id"], r["updated_at_ms"]) for r in result["records"]]
        pages.append(page)
        cursor = result["next_cursor"]
        if cursor is None:
            return pages
        assert page and cursor == f"{page[-1][2]}:{page[-1][1]}"
    raise AssertionError("paging did not end")


@settings(max_examples=80, deadline=None)
@given(
    principal=st.sampled_from(PRINCIPALS),
    limit=st.integers(min_value=1, max_value=14),
    realm=st.sampled_from([None, "alpha", "gamma"]),
    scope=st.sampled_from([None, "identity", "mob", "realm"]),
    status=st.sampled_from([None, "active", "quarantined", "tombstoned"]),
)
def test_paging_returns_each_readable_row_once_in_order_and_never_an_unreadable_one(
    dataset: Bench, principal: Principal, limit: int, realm: str | None, scope: str | None, status: str | None
) -> None:
    params = {k: v for k, v in {"realm": realm, "scope": scope, "status": status}.items() if v is not None}
    expected = _expected(dataset, principal, params)

    pages = _page_through(dataset, principal, params, limit)

    assert [row for page in pages for row in page] == expected
    served = 0
    for page in pages:
        served += len(page)
        if len(page) > limit:  # only a tie group of one id and update time may run past the limit
            assert len({(memory_id, at) for _, memory_id, at in page[limit - 1 :]}) == 1
        more = served < len(expected)
        assert more == (page is not pages[-1])


def test_the_dataset_holds_ties_shared_ids_and_rows_hidden_from_some_callers(dataset: Bench) -> None:
    everything = _expected(dataset, ROOT, {})
    keys = [(memory_id, at) for _, memory_id, at in everything]

    assert len(keys) != len(set(keys))  # rows of several realms under one id and time
    assert len({at for _, _, at in everything}) < len(everything) // 4  # many update-time ties
    assert 0 < len(_expected(dataset, AUDITOR, {})) < len(everything)
