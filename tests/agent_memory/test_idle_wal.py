"""An idle realm's WAL files shrink to nothing (checkpoint.py ``_when_quiet``, index_worker.py): a
WAL only shrinks when a writer restarts it, so the one a burst of writes left stayed on disk while
the realm sat idle. Once no write came for QUIET_S, the upkeep thread runs one ``TRUNCATE``
checkpoint that waits for nobody, so a reader holding a snapshot makes it give up, and it is tried
again later without another write; the first write after a look schedules the next, so a burst
of any size is followed by one. The indexing process does the same for the realm's index and vector
files once it has merged their fresh tier.

Each wait polls the files' sizes with ``stat`` only: opening a connection to look would be a reader
in the truncation's way."""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.memory.params import parse_remember
from meta_memory.memory.records import APPLICATION
from meta_memory.memory.sqlite import checkpoint
from meta_memory.memory.sqlite.checkpoint import NUDGE_EVERY
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.memory.validator import CreateOp, WriteBatch
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

REALM = "r"
BURST = 2 * NUDGE_EVERY  # the upkeep thread is nudged every NUDGE_EVERY write transactions


@pytest.fixture
def quick_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoint, "QUIET_S", 0.2)


def wal_size(db_path: Path) -> int:
    """The WAL's length in bytes (0 when there is none), by ``stat`` alone."""
    try:
        return StateLayout.sqlite_sidecars(db_path)[0].stat().st_size
    except FileNotFoundError:
        return 0


def burst(store: SqliteRealmStore, make_record: Callable[..., Any], count: int = BURST) -> int:
    """``count`` one-record write transactions, as remember makes them; the largest WAL seen."""
    largest = 0
    for n in range(count):
        record = make_record(title=f"Harbor note {n}", body=f"Espresso {n} by the harbor. " * 20)
        store.commit(WriteBatch(REALM, APPLICATION, (CreateOp(record),)))
        largest = max(largest, wal_size(store.path))
    return largest


def records_in_main_file(realm_file: Path, tmp_path: Path) -> int:
    """Records the main file holds without its WAL, read from a copy (the live file untouched)."""
    copy = tmp_path / "main-file-copy" / realm_file.name
    copy.parent.mkdir(exist_ok=True)
    shutil.copyfile(realm_file, copy)
    with closing(sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True)) as db:
        return int(db.execute("SELECT count(*) FROM records").fetchone()[0])


def test_an_idle_realms_wal_is_cut_to_nothing_after_a_burst(
    store: SqliteRealmStore,
    make_record: Callable[..., Any],
    quick_quiet: None,
    eventually: Callable[..., bool],
    tmp_path: Path,
) -> None:
    largest = burst(store, make_record)
    assert largest > 100_000  # the burst left a WAL of its own
    assert eventually(lambda: wal_size(store.path) == 0, timeout_s=15), (
        f"the idle realm's WAL stayed at {wal_size(store.path):,} bytes"
    )
    # Cut only once checkpointed: the main file alone holds every record, and the store goes on.
    assert records_in_main_file(store.path, tmp_path) == BURST
    burst(store, make_record, 3)
    assert records_in_main_file(store.path, tmp_path) == BURST  # new writes go to a new WAL
    with closing(sqlite3.connect(store.path)) as db:
        assert db.execute("SELECT count(*) FROM records").fetchone()[0] == BURST + 3


@pytest.fixture
def truncations(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """Each truncation the upkeep thread tries: the real one runs; what it left is recorded."""
    seen: list[dict[str, Any]] = []
    real = checkpoint.truncate_wal

    def recorded(db: sqlite3.Connection, busy_timeout_ms: int) -> bool:
        (path,) = [Path(row[2]) for row in db.execute("PRAGMA database_list") if row[1] == "main"]
        started = time.monotonic()
        done = real(db, busy_timeout_ms)
        seen.append(
            {
                "path": path,
                "took_s": time.monotonic() - started,
                "wal_after": wal_size(path),
                "busy_timeout_after": db.execute("PRAGMA busy_timeout").fetchone()[0],
                "done": done,
            }
        )
        return done

    monkeypatch.setattr(checkpoint, "truncate_wal", recorded)
    yield seen


def test_a_burst_smaller_than_a_nudge_is_cut_too(
    store: SqliteRealmStore,
    make_record: Callable[..., Any],
    quick_quiet: None,
    eventually: Callable[..., bool],
) -> None:
    assert burst(store, make_record, 3) > 0  # fewer writes than NUDGE_EVERY: no nudge ran
    assert eventually(lambda: wal_size(store.path) == 0, timeout_s=15), (
        f"the idle realm's WAL stayed at {wal_size(store.path):,} bytes"
    )


def test_a_reader_holding_a_snapshot_makes_the_truncation_give_up_and_it_is_tried_again(
    store: SqliteRealmStore,
    make_record: Callable[..., Any],
    quick_quiet: None,
    truncations: list[dict[str, Any]],
    eventually: Callable[..., bool],
) -> None:
    with closing(sqlite3.connect(store.path, isolation_level=None)) as reader:
        reader.execute("BEGIN")
        (before,) = reader.execute("SELECT count(*) FROM records").fetchone()  # holds its snapshot
        burst(store, make_record)
        assert eventually(lambda: bool(truncations), timeout_s=15), "no truncation was tried"
        tried = truncations[0]
        assert tried["path"] == store.path and tried["done"] is False
        assert tried["wal_after"] > 0 and wal_size(store.path) > 0  # the reader's frames stay
        # It gave up at once rather than wait the busy timeout (5 s) for the reader, holding the
        # write lock meanwhile; and the connection's busy timeout is back for its next checkpoint.
        assert tried["took_s"] < 2.5, tried
        assert tried["busy_timeout_after"] == 5000
        assert reader.execute("SELECT count(*) FROM records").fetchone()[0] == before
        reader.execute("COMMIT")
    # No write since: the upkeep thread tries again by itself (QUIET_S, then twice as long each miss).
    assert eventually(lambda: any(t["wal_after"] == 0 for t in truncations[1:]), timeout_s=15), (
        f"the WAL stayed at {wal_size(store.path):,} bytes after the reader left: {truncations}"
    )
    assert wal_size(store.path) == 0


def test_the_indexing_process_cuts_the_index_and_vector_files_wals_once_it_has_merged(
    tmp_path: Path, clock: ManualClock, eventually: Callable[..., bool]
) -> None:
    config = load_config_dict(
        {
            "agent_memory": {
                "index_worker": "process",
                "recall": "hybrid",
                "embedding_model": "all-minilm-l6-v2-int8",  # loads in half a second
            }
        }
    )
    with MetaRuntime.open(tmp_path / "state", config, clock=clock) as rt:
        memory = rt.agent_memory
        assert memory is not None
        realm = rt.layout.realm_db_path("default")
        index, vectors = StateLayout.recall_index_path(realm), StateLayout.vector_path(realm)
        for n in range(40):
            note = {"identity": "fay", "title": f"Note {n}", "body": f"Harbor espresso n{n}. " * 10}
            memory.remember(parse_remember(note, default_realm="default"))
        assert eventually(lambda: vectors.exists() and wal_size(vectors) > 0, timeout_s=30)

        def cut() -> bool:
            return wal_size(index) == 0 and wal_size(vectors) == 0 and index.exists() and vectors.exists()

        assert eventually(cut, timeout_s=30), (
            f"the index WAL is {wal_size(index):,} bytes, the vectors WAL {wal_size(vectors):,}"
        )
        # Cut after the work was done, not instead of it: every record is merged and embedded.
        with closing(sqlite3.connect(index)) as db:
            assert db.execute("SELECT count(*) FROM fresh_terms").fetchone()[0] == 0
            assert db.execute("SELECT count(DISTINCT doc) FROM postings").fetchone()[0] == 40
        with closing(sqlite3.connect(vectors)) as db:
            assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 40
