"""The indexing process (index_worker.py): a real helper process builds realms' recall-index
files while the store only writes records; it is restarted when it dies, the store indexes
inline when no helper can run, and the gateway's helper never outlives the gateway.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import ConfigError
from meta_memory.memory.params import parse_recall, parse_remember
from meta_memory.memory.recall.analyzer import query_terms
from meta_memory.memory.recall.scorer import rank
from meta_memory.memory.records import APPLICATION, Scope
from meta_memory.memory.sqlite import checkpoint, indexing
from meta_memory.memory.sqlite.index_worker import IndexWorkerProcess
from meta_memory.memory.sqlite.recall_index import read_marks
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.memory.validator import CreateOp, TombstoneOp, WriteBatch
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

REALM = "r"


def index_marks(realm_path: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(StateLayout.recall_index_path(realm_path))) as db:
        return read_marks(db)


def realm_extent(realm_path: Path) -> tuple[int, int]:
    with closing(sqlite3.connect(realm_path)) as db:
        (max_doc,) = db.execute("SELECT coalesce(max(doc), 0) FROM records").fetchone()
        row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'index_queue'").fetchone()
        return int(max_doc), int(row[0]) if row else 0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:  # a zombie is not running
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:  # reaped between the signal and the read
        return False


def children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        out.update(int(c) for c in (task / "children").read_text().split())
    return out


@pytest.fixture
def worker() -> Iterator[IndexWorkerProcess]:
    w = IndexWorkerProcess()
    yield w
    w.close()


@pytest.fixture
def worker_store(
    tmp_path: Path, clock: ManualClock, worker: IndexWorkerProcess
) -> Iterator[SqliteRealmStore]:
    store = SqliteRealmStore(tmp_path / "r.sqlite3", REALM, clock=clock, index_worker=worker)
    yield store
    store.close()


def remember(
    store: SqliteRealmStore, make_record: Callable[..., Any], n: int, identity: str = "alice"
) -> list[str]:
    records = [
        make_record(
            scope=Scope.identity(REALM, identity),
            title=f"Harbor note {i}",
            body=f"Espresso {i} by the harbor.",
        )
        for i in range(n)
    ]
    for record in records:  # one write each, as remember does
        store.commit(WriteBatch(REALM, APPLICATION, (CreateOp(record),)))
    return [r.id for r in records]


def hits(store: SqliteRealmStore, identity: str, text: str) -> set[str]:
    ranked = rank(store.term_index([Scope.identity(REALM, identity)]), query_terms(text), 10_000)
    return {r.id for r in store.records_by_doc([doc for doc, _ in ranked]).values()}


def test_the_helper_builds_the_index_while_the_store_only_writes_records(
    worker_store: SqliteRealmStore,
    worker: IndexWorkerProcess,
    make_record: Callable[..., Any],
    eventually: Callable[..., bool],
) -> None:
    path = worker_store.path
    ids = remember(worker_store, make_record, 300)
    pid = worker.pid()
    assert pid is not None and pid != os.getpid() and alive(pid)
    # Its BLAS runs products on the embedding threads (their idle priority), not threads of its own.
    environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    expected = os.environ.get("OPENBLAS_NUM_THREADS", "1").encode()
    assert b"OPENBLAS_NUM_THREADS=" + expected in environ
    # No read of the index and no inline catch-up (300 < the store's inline threshold): only the
    # helper can bring the index file up to the newest record.
    assert eventually(lambda: index_marks(path)[0] == realm_extent(path)[0], timeout_s=20)
    assert hits(worker_store, "alice", "harbor espresso") == set(ids)

    worker_store.forget(Scope.identity(REALM, "alice"), ids[0], APPLICATION)
    assert eventually(lambda: index_marks(path)[1] == realm_extent(path)[1], timeout_s=20)
    assert hits(worker_store, "alice", "harbor") == set(ids[1:])


def fresh_count(realm_path: Path) -> int:
    with closing(sqlite3.connect(StateLayout.recall_index_path(realm_path))) as db:
        (n,) = db.execute("SELECT count(*) FROM fresh_terms").fetchone()
        return int(n)


def test_a_reader_asks_the_helper_to_merge_a_long_fresh_tier_without_a_quiet_spell(
    tmp_path: Path,
    clock: ManualClock,
    make_record: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
    eventually: Callable[..., bool],
) -> None:
    """The real helper, told to wait an hour for quiet before merging: only a reader's request
    (its recalls found READS_MERGE_AT fresh records in their scope) gets the fresh tier merged."""
    monkeypatch.setattr(indexing, "READS_MERGE_AT", 50)
    patient = (
        "import sys; import meta_memory.memory.sqlite.index_worker as w; "
        "w.MERGE_QUIET_S = 3600.0; sys.exit(w.main())"
    )
    worker = IndexWorkerProcess([sys.executable, "-c", patient])
    store = SqliteRealmStore(tmp_path / "r.sqlite3", REALM, clock=clock, index_worker=worker)
    try:
        path = store.path
        ids = remember(store, make_record, 60)
        assert eventually(lambda: index_marks(path)[0] == realm_extent(path)[0], timeout_s=20)
        assert hits(store, "alice", "harbor") == set(ids)  # finds 60 fresh records
        assert not eventually(lambda: fresh_count(path) == 0, timeout_s=0.5)  # no quiet merge
        assert hits(store, "alice", "harbor") == set(ids)  # asks for the merge
        assert eventually(lambda: fresh_count(path) == 0, timeout_s=20)
        assert hits(store, "alice", "harbor") == set(ids)
    finally:
        store.close()
        worker.close()


def test_the_helper_merges_the_fresh_tier_once_writes_pause(
    worker_store: SqliteRealmStore,
    make_record: Callable[..., Any],
    eventually: Callable[..., bool],
) -> None:
    """New records reach the index through its fresh tier; in a quiet spell the helper merges
    them into the postings, including those the store's own read caught up, and the store's
    recall follows each move."""
    path = worker_store.path
    ids = remember(worker_store, make_record, 200)
    assert hits(worker_store, "alice", "harbor espresso") == set(ids)  # the read catches up first
    assert eventually(lambda: fresh_count(path) == 0, timeout_s=20)
    with closing(sqlite3.connect(StateLayout.recall_index_path(path))) as db:
        (merged,) = db.execute("SELECT count(DISTINCT doc) FROM postings").fetchone()
    assert merged == 200
    assert hits(worker_store, "alice", "harbor espresso") == set(ids)
    more = remember(worker_store, make_record, 20, identity="bob")
    assert hits(worker_store, "bob", "harbor") == set(more)
    assert eventually(lambda: fresh_count(path) == 0, timeout_s=20)
    assert hits(worker_store, "alice", "harbor espresso") == set(ids)
    assert hits(worker_store, "bob", "harbor") == set(more)


def test_a_recall_right_after_a_write_sees_it_whatever_the_helper_has_done(
    worker_store: SqliteRealmStore, make_record: Callable[..., Any]
) -> None:
    for n in range(30):
        record = make_record(
            scope=Scope.identity(REALM, "bob"), title=f"Kettle {n}", body=f"Kettle number k{n}."
        )
        worker_store.commit(WriteBatch(REALM, APPLICATION, (CreateOp(record),)))
        assert hits(worker_store, "bob", f"k{n}") == {record.id}  # read-your-writes
        if n % 3 == 0:
            worker_store.commit(WriteBatch(REALM, APPLICATION, (TombstoneOp(record.id, record.scope),)))
            assert hits(worker_store, "bob", f"k{n}") == set()


def test_a_helper_killed_mid_run_is_restarted_and_finishes_the_work(
    worker_store: SqliteRealmStore,
    worker: IndexWorkerProcess,
    make_record: Callable[..., Any],
    eventually: Callable[..., bool],
) -> None:
    path = worker_store.path
    remember(worker_store, make_record, 50)
    first = worker.pid()
    assert first is not None
    os.kill(first, signal.SIGKILL)
    assert eventually(lambda: not alive(first))
    ids = remember(worker_store, make_record, 50, identity="carol")  # the next nudges restart it
    # (a nudge that finds the pipe broken restarts it; so does the quiet-time re-nudge, later
    # on a loaded machine: the restart is not promised within the write that noticed)
    assert eventually(lambda: worker.pid() not in (None, first))
    assert eventually(lambda: index_marks(path)[0] == realm_extent(path)[0], timeout_s=20)
    assert hits(worker_store, "carol", "harbor") == set(ids)


def test_with_no_helper_able_to_run_the_store_indexes_inline(
    tmp_path: Path, clock: ManualClock, make_record: Callable[..., Any], eventually: Callable[..., bool]
) -> None:
    broken = IndexWorkerProcess([sys.executable, "-c", "import sys; sys.exit(3)"])
    store = SqliteRealmStore(tmp_path / "r.sqlite3", REALM, clock=clock, index_worker=broken)
    try:
        ids = remember(store, make_record, 40)
        # The helper exits at once each time; after a few restarts nudges report no helper, and
        # the quiet-time upkeep catches the index up in this process.
        assert eventually(lambda: index_marks(store.path)[0] == realm_extent(store.path)[0], timeout_s=20)
        assert hits(store, "alice", "harbor") == set(ids)
    finally:
        store.close()
        broken.close()


def test_the_gateway_starts_one_helper_and_it_exits_with_the_gateway(
    start_stdio_gateway: Callable[[list[str]], Any], state_dir: Path, eventually: Callable[..., bool]
) -> None:
    gateway = start_stdio_gateway(["--state-dir", str(state_dir)])
    for n in range(20):
        gateway.result(
            "meta/agent_memory/remember", {"identity": "dana", "title": f"Note {n}", "body": f"Harbor h{n}."}
        )
    helpers = children(gateway.proc.pid)
    assert len(helpers) == 1
    (helper,) = helpers
    realm_path = StateLayout.at(state_dir).realm_db_path("default")
    assert eventually(lambda: index_marks(realm_path)[0] == realm_extent(realm_path)[0], timeout_s=20)
    for n in (0, 7, 19):
        found = gateway.result("meta/agent_memory/recall", {"identity": "dana", "query_text": f"h{n}"})
        assert [r["title"] for r in found["records"]] == [f"Note {n}"]
    gateway.close()
    assert eventually(lambda: not alive(helper), timeout_s=10)


def test_a_gateway_killed_outright_leaves_no_helper_behind(
    start_stdio_gateway: Callable[[list[str]], Any], state_dir: Path, eventually: Callable[..., bool]
) -> None:
    gateway = start_stdio_gateway(["--state-dir", str(state_dir)])
    gateway.result("meta/agent_memory/remember", {"identity": "erin", "title": "Note", "body": "Harbor."})
    (helper,) = children(gateway.proc.pid)
    gateway.kill()
    gateway.close()  # reaps it and closes our ends of its pipes
    # The helper reads end-of-file on its stdin once its parent is gone, and exits.
    assert eventually(lambda: not alive(helper), timeout_s=10)


def test_a_library_runtime_indexes_inline_unless_configured(tmp_path: Path, clock: ManualClock) -> None:
    with MetaRuntime.open(tmp_path / "a", clock=clock) as rt:
        assert rt.agent_memory is not None and getattr(rt.agent_memory.stores, "index_worker", None) is None
    config = load_config_dict({"agent_memory": {"enabled": True, "index_worker": "process"}})
    with MetaRuntime.open(tmp_path / "b", config, clock=clock) as rt:
        assert (
            rt.agent_memory is not None and getattr(rt.agent_memory.stores, "index_worker", None) is not None
        )
    config = load_config_dict({"agent_memory": {"enabled": True, "index_worker": "inline"}})
    with MetaRuntime.open(tmp_path / "c", config, clock=clock, serving=True) as rt:
        assert rt.agent_memory is not None and getattr(rt.agent_memory.stores, "index_worker", None) is None
    with pytest.raises(ConfigError, match="index_worker"):
        load_config_dict({"agent_memory": {"enabled": True, "index_worker": "threads"}})


def test_the_realm_wal_stays_bounded_while_the_helper_reads_and_is_gone_after_close(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With another process reading the realm file every few milliseconds, the moment SQLite
    needs to restart the WAL from its start (every frame checkpointed, no reader inside) may
    never come: the WAL grew without bound. The writer checks the WAL's length every few
    transactions and checkpoints a long one itself; and at close the helper goes first, so the
    runtime's connections are the last and remove it."""
    monkeypatch.setattr(checkpoint, "WAL_LIMIT_BYTES", 1 << 20)  # 1 MiB instead of 32
    config = load_config_dict({"agent_memory": {"enabled": True, "index_worker": "process"}})
    state = tmp_path / "state"
    with MetaRuntime.open(state, config, clock=clock) as rt:
        memory = rt.agent_memory
        assert memory is not None
        wal = StateLayout.sqlite_sidecars(rt.layout.realm_db_path("default"))[0]
        largest = 0
        for n in range(2400):
            note = {"identity": "fay", "title": f"Note {n}", "body": f"Harbor espresso n{n}."}
            memory.remember(parse_remember(note, default_realm="default"))
            clock.advance(1)
            if n % 50 == 49:
                largest = max(largest, wal.stat().st_size)
        # Unbounded: 49 MB (the writer's check off). Looking itself, the writer keeps it to 1.06 MB
        # on a quick machine (2,400 writes in 0.6 s, 2026-12-04); before its restart waited for the
        # upkeep thread's checkpoint it reached 14-29 MB there, 9.3 MB at 1,200 writes in CI on
        # 56dd323. On a loaded machine, where the helper's reads make restarts fail and the
        # retries space out, it passed the 4 MiB a restarted WAL is cut back to (seen once in CI).
        assert largest < 8 << 20, f"the WAL reached {largest:,} bytes"
        query = parse_recall(
            {"identity": "fay", "query_text": "n2399"},
            default_realm="default",
            default_selection="contextual",
            default_max=8,
        )
        assert [r.title for r in memory.recall(query).records] == ["Note 2399"]
    assert not wal.exists()


def test_the_helper_imports_without_the_sdk_and_every_exported_name_still_resolves() -> None:
    """The package loads its SDK on first use, so the indexing process does not import the whole
    runtime at start-up (0.3 s of CPU beside the gateway's first writes, measured); every name the
    package exports still resolves."""
    probe = (
        "import sys, meta_memory.memory.sqlite.index_worker, meta_memory as m; "
        "assert 'meta_memory.sdk' not in sys.modules, 'the helper imported the SDK'; "
        "missing = [n for n in m.__all__ if getattr(m, n, None) is None]; "
        "assert not missing, missing"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
