"""The read-ahead of new vectors: once a realm's records are embedded up to its newest (by the
indexing process, which says so: index_worker.py's reports, SqliteRealmStore._read_ahead; on
PostgreSQL by the gateway's embedding thread, RealmVectors.read_ahead), the store brings the
scopes' vector copies it keeps up to the new mark, so that the recall after a write reads no
vectors. The oracle for what was read ahead is the scope's stored vectors, read on a connection
of the test's own."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.memory.embedding import DEFAULT_MODEL, MODELS, load_embedder
from meta_memory.memory.params import parse_recall, parse_remember
from meta_memory.memory.recall.neighbours import (
    READ_AHEAD_DOCS,
    ScopeVectors,
    decode_vectors,
    read_ahead_copies,
)
from meta_memory.memory.records import APPLICATION, Scope
from meta_memory.memory.sqlite import index_worker
from meta_memory.memory.sqlite.index_worker import IndexWorkerProcess
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.memory.sqlite.vectors import VectorFile, VectorSpec
from meta_memory.memory.validator import CreateOp, WriteBatch
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

from ..conftest import BACKENDS, Backend, make_backend

REALM = "r"
ALICE, BOB = Scope.identity(REALM, "alice"), Scope.identity(REALM, "bob")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from make_backend(request.param, request)


@pytest.fixture
def hybrid_store(tmp_path: Path, clock: ManualClock) -> Iterator[tuple[SqliteRealmStore, IndexWorkerProcess]]:
    worker = IndexWorkerProcess()
    spec = MODELS[DEFAULT_MODEL]
    store = SqliteRealmStore(
        tmp_path / "r.sqlite3",
        REALM,
        clock=clock,
        index_worker=worker,
        vectors=VectorSpec(spec.model_id, spec.dim, None),
    )
    yield store, worker
    store.close()
    worker.close()


def _write(store: SqliteRealmStore, make_record: Callable[..., Any], scope: Scope, *texts: str) -> None:
    for text in texts:  # one write each, as remember does
        record = make_record(scope=scope, title=text.split()[0], body=text)
        store.commit(WriteBatch(REALM, APPLICATION, (CreateOp(record),)))


def _embedded(store: SqliteRealmStore) -> bool:
    progress = store.vector_progress()
    return progress is not None and progress[1] >= progress[0] > 0


def _fresh(store: SqliteRealmStore, scope: Scope) -> tuple[np.ndarray, np.ndarray]:
    """The scope's docs and matrix read afresh by another reader of the vector file (the oracle)."""
    (uid,) = store._db.execute("SELECT value FROM store_meta WHERE key = 'realm_uid'").fetchone()
    spec = MODELS[DEFAULT_MODEL]
    reader = VectorFile(store.path, realm_uid=uid, model_id=spec.model_id, dim=spec.dim)
    try:
        scope_id = store._scope_id(scope, create=False)
        assert scope_id is not None
        fresh = reader.scope(scope_id)
        return fresh.docs, fresh.matrix
    finally:
        reader.close()


def test_the_vectors_of_a_write_are_read_before_the_recall_after_it_asks(
    hybrid_store: tuple[SqliteRealmStore, IndexWorkerProcess],
    make_record: Callable[..., Any],
    eventually: Callable[..., bool],
) -> None:
    store, _ = hybrid_store
    embedder = load_embedder(DEFAULT_MODEL)
    _write(store, make_record, ALICE, "Kayaking on the lake at dawn", "Espresso by the harbor")
    _write(store, make_record, BOB, "Bob keeps bees on the roof")
    assert eventually(lambda: _embedded(store), timeout_s=60)
    store.searcher([ALICE, BOB], embedder)  # the recall that keeps both scopes' copies here
    statements: list[str] = []
    vectors = store._vectors
    assert vectors is not None
    vectors._db.set_trace_callback(statements.append)

    _write(store, make_record, ALICE, "Alice moved to Lisbon in March")
    # Once the indexing process has embedded it, its report brings the copies up to the new mark.
    assert eventually(lambda: _embedded(store), timeout_s=60)
    assert eventually(lambda: any("SELECT doc, v FROM vectors" in s for s in statements), timeout_s=20)
    statements.clear()
    search = store.searcher([ALICE, BOB], embedder)
    scoped = search._read()
    # The recall after the write read none: Alice's copy holds the new row, Bob's took the mark.
    assert not [s for s in statements if "FROM vectors" in s]
    assert search.progress is not None and search.progress[0] == search.progress[1]
    for scope, copy in zip((ALICE, BOB), scoped, strict=True):
        docs, matrix = _fresh(store, scope)
        assert copy.mark == (search.progress[1],)
        assert np.array_equal(copy.docs, docs) and np.array_equal(copy.matrix, matrix)
    assert len(scoped[0].docs) == 3 and len(scoped[1].docs) == 1


def test_a_read_ahead_brings_up_only_copies_of_the_same_vectors_a_bounded_way_behind() -> None:
    """Which copies a read-ahead to a new mark reads into: on SQLite a mark is (up to,), on
    PostgreSQL (generation, up to); a copy already there, ahead, of another generation or more
    than READ_AHEAD_DOCS behind is left to its next read."""
    empty = np.zeros((0, 4), dtype=np.float32)

    def copies(*marks: tuple[int, ...]) -> dict[int, ScopeVectors]:
        return {i: ScopeVectors(np.zeros(0, dtype=np.int64), empty, mark) for i, mark in enumerate(marks)}

    upto, edge = 10_000, 10_000 - READ_AHEAD_DOCS
    sqlite = copies((upto,), (upto - 1,), (edge,), (edge - 1,), (upto + 5,), (0,))
    assert sorted(read_ahead_copies(sqlite, (upto,))) == [1, 2]
    postgres = copies((3, upto - 1), (2, upto - 1), (3, upto), (3, edge), (3, edge - 1), (4, upto - 1))
    assert sorted(read_ahead_copies(postgres, (3, upto))) == [0, 3]
    assert read_ahead_copies({}, (upto,)) == {}


def test_reports_reach_each_realm_s_listener_once_and_one_that_fails_stops_none(
    tmp_path: Path, eventually: Callable[..., bool]
) -> None:
    """The gateway's reader of the helper's reports, against a helper that reports two realms
    (one of them twice at once), writes a line that is no report, and then reports again."""
    first, second = tmp_path / "a.sqlite3", tmp_path / "b.sqlite3"
    report = {path: json.dumps({"embedded": str(path)}) + "\n" for path in (first, second)}
    lines = [report[first] * 2 + "not a report\n[1]\n", report[second]]
    helper = (
        "import os, sys, time\n"
        f"for chunk in {lines!r}:\n"
        "    os.write(1, chunk.encode()); time.sleep(0.3)\n"
        "sys.stdin.read()\n"
    )
    heard: list[str] = []
    worker = IndexWorkerProcess([sys.executable, "-c", helper])

    def failing() -> None:
        heard.append("a")
        raise RuntimeError("a read-ahead that fails")

    worker.listen(first, failing)
    worker.listen(second, lambda: heard.append("b"))
    try:
        worker.start()
        assert eventually(lambda: "b" in heard, timeout_s=20)
        assert heard == ["a", "b"]
    finally:
        worker.close()


def test_a_closed_store_stops_listening_without_silencing_the_one_opened_after_it(
    tmp_path: Path, eventually: Callable[..., bool]
) -> None:
    realm = tmp_path / "a.sqlite3"
    report = json.dumps({"embedded": str(realm)}) + "\n"
    helper = f"import os, sys, time\ntime.sleep(0.5)\nos.write(1, {report.encode()!r})\nsys.stdin.read()\n"
    heard: list[str] = []

    def closed() -> None:
        heard.append("closed")

    def opened() -> None:
        heard.append("opened")

    worker = IndexWorkerProcess([sys.executable, "-c", helper])
    worker.listen(realm, closed)
    worker.listen(realm, opened)  # the store opened on the file since
    worker.unlisten(realm, closed)  # the first store closes after it
    try:
        worker.start()
        assert eventually(lambda: heard == ["opened"], timeout_s=20)
    finally:
        worker.close()


def test_the_helper_s_stdout_is_dev_null_and_its_reports_go_down_a_pipe_of_their_own(
    hybrid_store: tuple[SqliteRealmStore, IndexWorkerProcess], eventually: Callable[..., bool]
) -> None:
    """Whatever the indexing process or a library in it prints is dropped, never mixed with the
    reports nor raised where it was printed (a print into a full non-blocking pipe would be)."""
    _, worker = hybrid_store
    worker.start()
    pid = worker.pid()
    assert pid is not None
    fds = Path(f"/proc/{pid}/fd")
    assert eventually(lambda: os.readlink(fds / "1") == os.devnull, timeout_s=20)
    proc = worker._proc
    assert proc is not None and proc.stdout is not None
    reports = os.readlink(f"/proc/self/fd/{proc.stdout.fileno()}")  # the pipe the gateway reads
    assert reports.startswith("pipe:")
    assert [fd.name for fd in fds.iterdir() if os.readlink(fd) == reports] not in ([], ["1"])


def test_a_report_the_pipe_has_no_room_for_is_dropped_not_waited_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    read, write = os.pipe()
    os.set_blocking(write, False)
    monkeypatch.setattr(index_worker, "_REPORTS_FD", write)
    try:
        while True:  # fill the pipe
            try:
                os.write(write, b"x" * 4096)
            except BlockingIOError:
                break
        done = threading.Event()
        threading.Thread(target=lambda: (index_worker._report(tmp_path / "r.sqlite3"), done.set())).start()
        assert done.wait(10)
    finally:
        os.close(read)
        os.close(write)


def _stored(backend: Backend, state: Path, scope_id: int) -> tuple[list[int], np.ndarray]:
    """The scope's stored vectors, by doc, decoded (the oracle: what a read of them all gives)."""
    if backend.is_postgres:
        rows = backend.stored(
            state, "SELECT doc, v FROM record_vectors WHERE scope_id = ? ORDER BY doc", (scope_id,)
        )
    else:
        path = StateLayout.vector_path(StateLayout.at(state).realm_db_path("default"))
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute(
                "SELECT doc, v FROM vectors WHERE scope_id = ? ORDER BY doc", (scope_id,)
            ).fetchall()
    return [int(doc) for doc, _ in rows], decode_vectors(
        [bytes(v) for _, v in rows], MODELS[DEFAULT_MODEL].dim
    )


def test_a_runtime_reads_a_write_s_vectors_before_the_recall_after_it(
    backend: Backend, tmp_path: Path, eventually: Callable[..., bool]
) -> None:
    state = tmp_path / "state"
    config = {
        "memory": {"kind": "local_json"},
        "agent_memory": {"recall": "hybrid", "index_worker": "process", **backend.store_config()},
    }
    with MetaRuntime.open(state, load_config_dict(config)) as runtime:
        memory = runtime.agent_memory
        assert memory is not None

        def remember(identity: str, title: str, body: str) -> None:
            memory.remember(
                parse_remember({"identity": identity, "title": title, "body": body}, default_realm="default")
            )

        def recall(identity: str) -> None:
            memory.recall(
                parse_recall(
                    {"identity": identity, "query_text": "where does the harbor cafe roast"},
                    default_realm="default",
                    default_selection="contextual",
                    default_max=4,
                )
            )

        def embedded() -> bool:
            progress = store.vector_progress()
            return progress is not None and progress[1] >= progress[0]

        remember("alice", "Kayaks", "Kayaking on the lake at dawn.")
        remember("alice", "Coffee", "The harbor cafe roasts its own beans.")
        remember("bob", "Bees", "Bob keeps bees on the roof.")
        store = memory.store("default")
        assert eventually(embedded, timeout_s=60)
        recall("alice")
        recall("bob")  # each scope's copy kept by the store
        copies: dict[int, ScopeVectors] = store._vectors._cache  # type: ignore[attr-defined]
        before = dict(copies)
        assert len(before) == 2

        remember("alice", "Lisbon", "Alice moved to Lisbon in March.")
        # No recall: once embedded, the store brings both copies to the new mark by itself.
        newest = store.vector_progress()[0]  # type: ignore[index]
        assert eventually(lambda: all(c.mark[-1] == newest for c in copies.values()), timeout_s=60)
        for scope_id, copy in copies.items():
            docs, matrix = _stored(backend, state, scope_id)
            assert [int(d) for d in copy.docs] == docs and np.array_equal(copy.matrix, matrix)
            grew = len(docs) - len(before[scope_id].docs)
            assert grew == (1 if len(docs) == 3 else 0)  # alice's copy read the new row, bob's took the mark
