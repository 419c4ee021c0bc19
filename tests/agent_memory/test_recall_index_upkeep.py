"""Upkeep of a realm file's recall index (indexing.py, checkpoint.py): the watermark rule, the
queued removals, applying the backlog in parts, across restarts, after an upgrade from schema 4,
on the quiet-time thread, and WAL checkpoints off the write path.

The index is derived data, so every check here recomputes it from the records themselves with
the analyzer and compares it with what the realm file holds, read on a connection of its own.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Collection, Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from meta_memory.clock import ManualClock
from meta_memory.memory.recall.analyzer import AnalyzedRecord, analyze_record, query_terms
from meta_memory.memory.recall.scorer import rank
from meta_memory.memory.records import (
    APPLICATION,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    content_hash,
)
from meta_memory.memory.sqlite.checkpoint import NUDGE_EVERY
from meta_memory.memory.sqlite.indexing import (
    WATERMARK_KEY,
    BackgroundIndexer,
    backlog_size,
    read_watermark,
)
from meta_memory.memory.sqlite.migrations import SCHEMA_VERSION, applied_versions
from meta_memory.memory.sqlite.store import INDEX_FLUSH_THRESHOLD, SqliteRealmStore
from meta_memory.memory.validator import CreateOp, TombstoneOp, WriteBatch

REALM = "r"

# -- reading the realm file on a connection of its own ------------------------------------------


@dataclass(frozen=True)
class FileRecord:
    memory_id: str
    scope_id: int
    status: str
    analysis: AnalyzedRecord


@dataclass(frozen=True)
class FileState:
    """One snapshot of a realm file's records and recall index."""

    records: dict[int, FileRecord]  # by doc
    postings: list[tuple[int, str | None, int, int, int, int, int]]  # (scope, term, doc, tfs..., length)
    scope_stats: dict[int, tuple[int, int]]  # scope_id -> (doc_count, total_len)
    scope_ids: dict[str, int]  # identity -> scope_id
    watermark: int | None  # None: no indexed_upto key
    queue: list[tuple[int, str]]  # (doc, op) in seq order

    def ids(self, docs: Iterable[int]) -> set[str]:
        return {self.records[doc].memory_id for doc in docs}

    def active_docs(self) -> set[int]:
        return {doc for doc, r in self.records.items() if r.status == "active"}


def read_file_state(path: Path) -> FileState:
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN")  # one snapshot for everything
        try:
            records = {
                doc: FileRecord(memory_id, scope_id, status, analyze_record(title, body, json.loads(tags)))
                for doc, memory_id, scope_id, status, title, body, tags in db.execute(
                    "SELECT doc, id, scope_id, status, title, body, tags FROM records"
                )
            }
            # LEFT JOIN: a posting whose term id has no term shows up as None and fails the comparison.
            postings = sorted(
                db.execute(
                    "SELECT p.scope_id, t.term, p.doc, p.tf_title, p.tf_body, p.tf_tags, p.length "
                    "FROM postings p LEFT JOIN terms t ON t.term_id = p.term_id"
                ).fetchall(),
                key=repr,
            )
            scope_stats = {
                sid: (count, total)
                for sid, count, total in db.execute("SELECT scope_id, doc_count, total_len FROM scopes")
            }
            scope_ids = {
                key: sid
                for sid, key in db.execute("SELECT scope_id, key FROM scopes WHERE kind = 'identity'")
            }
            row = db.execute("SELECT value FROM store_meta WHERE key = ?", (WATERMARK_KEY,)).fetchone()
            queue = db.execute("SELECT doc, op FROM index_queue ORDER BY seq").fetchall()
        finally:
            db.execute("COMMIT")
    return FileState(records, postings, scope_stats, scope_ids, int(row[0]) if row else None, queue)


def index_of(
    state: FileState, docs: Iterable[int]
) -> tuple[list[tuple[object, ...]], dict[int, tuple[int, int]]]:
    """The postings and per-scope (doc_count, total_len) the analyzer gives for exactly ``docs``."""
    postings: list[tuple[object, ...]] = []
    stats: dict[int, tuple[int, int]] = {}
    for doc in docs:
        r = state.records[doc]
        length = r.analysis.length
        postings.extend((r.scope_id, term, doc, *tfs, length) for term, tfs in r.analysis.fields.items())
        count, total = stats.get(r.scope_id, (0, 0))
        stats[r.scope_id] = (count + 1, total + length)
    return sorted(postings, key=repr), stats


def assert_index_is_exactly(state: FileState, docs: Collection[int]) -> None:
    """The file's postings and scope statistics are those of ``docs``: nothing missing, extra or doubled."""
    postings, stats = index_of(state, docs)
    assert state.postings == postings
    assert state.scope_stats == {sid: stats.get(sid, (0, 0)) for sid in state.scope_stats}


def assert_watermark_rule(state: FileState) -> None:
    """At every moment: the records at or below the watermark that are active are indexed, plus
    those with a queued removal (indexed, then left ``active``); nothing else is."""
    assert state.watermark is not None
    assert {op for _, op in state.queue} <= {"remove"}  # this release never queues an add
    removals = [doc for doc, _ in state.queue]
    assert len(removals) == len(set(removals))
    for doc in removals:
        assert doc <= state.watermark and state.records[doc].status != "active"
    below = {doc for doc in state.active_docs() if doc <= state.watermark}
    assert_index_is_exactly(state, below | set(removals))


def assert_fully_indexed(store: SqliteRealmStore, path: Path) -> FileState:
    """Nothing pending (no queued removal, no active record above the watermark), and the index
    is exactly the active records."""
    with store.reading() as db:  # under the store lock: the background indexer is not mid-apply
        assert store.backlog() == 0 == backlog_size(db)
    state = read_file_state(path)
    assert state.queue == []
    assert state.watermark is not None and all(doc <= state.watermark for doc in state.active_docs())
    assert_index_is_exactly(state, state.active_docs())
    return state


def contextual_hits(store: SqliteRealmStore, identity: str, text: str) -> set[int]:
    """Docs a contextual recall ranks for ``text`` (reading the index applies the backlog first)."""
    hits = rank(store.term_index(Scope.identity(REALM, identity)), query_terms(text), 10_000)
    docs = {doc for doc, _ in hits}
    assert len(docs) == len(hits)
    assert all(r.status is Status.ACTIVE for r in store.records_by_doc(list(docs)).values())
    return docs


def expected_hits(state: FileState, identity: str, text: str) -> set[int]:
    terms = {t for t in query_terms(text) if not t.startswith("#")}
    scope_id = state.scope_ids.get(identity)
    return {
        doc
        for doc in state.active_docs()
        if state.records[doc].scope_id == scope_id and terms & state.records[doc].analysis.fields.keys()
    }


def make(
    clock: ManualClock,
    memory_id: str,
    identity: str,
    title: str,
    body: str,
    tags: tuple[str, ...] = (),
    *,
    status: Status = Status.ACTIVE,
    supersedes: str | None = None,
) -> Record:
    return Record(
        id=memory_id,
        scope=Scope.identity(REALM, identity),
        kind=RecordKind.FACT,
        title=title,
        description="",
        body=body,
        tags=tags,
        provenance=Provenance(author=APPLICATION),
        trust=Trust.AGENT_OBSERVED,
        status=status,
        created_at_ms=clock.now_ms(),
        updated_at_ms=clock.now_ms(),
        content_hash=content_hash(title, body),
        supersedes=supersedes,
        quarantine_reason="held for review" if status is Status.QUARANTINED else None,
    )


def write(store: SqliteRealmStore, *ops: CreateOp | TombstoneOp) -> None:
    store.commit(WriteBatch(REALM, APPLICATION, ops))


# -- 1. the rules hold under any sequence of writes, partial applies and restarts -----------------

IDENTITIES = ("alice", "bob", "carol")
# Few words, so records share terms; "deploy"/"deploys" stem alike, "happy"/"running" add a
# ~concept term, "tuesday" a #when cue, and "the" is a stopword (a record may index no term at all).
VOCABULARY = (
    "espresso",
    "grinder",
    "deploy",
    "deploys",
    "tuesday",
    "kettle",
    "happy",
    "running",
    "harbor",
    "the",
)
texts = st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4).map(" ".join)
tag_sets = st.lists(st.sampled_from(VOCABULARY[:-1]), max_size=2, unique=True).map(tuple)
quarantined = st.sampled_from([False, False, False, True])


class RecallIndexUpkeep(RuleBasedStateMachine):
    """A real realm store under remember / forget / update, partial and full applies of the
    backlog, contextual recalls, and restarts that leave the backlog in the file.

    Pins: at every step the file obeys the watermark rule (indexed = active records at or below
    ``indexed_upto`` plus queued removals), the store never under-reports its backlog (a read
    skips applying it only when ``backlog()`` is 0); after ``flush_index()`` (or any read of the
    index) the postings and each scope's ``doc_count``/``total_len`` are exactly what the analyzer
    gives for the active records, and a contextual recall finds exactly the active records of the
    scope that hold a query term, never one that left ``active``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.dir = Path(tempfile.mkdtemp(prefix="recall-index-"))
        self.path = self.dir / "r.sqlite3"
        self.clock = ManualClock()
        self.store = SqliteRealmStore(self.path, REALM, clock=self.clock)
        self.model: dict[str, tuple[str, Status]] = {}  # id -> (identity, status)
        self.ids = (f"rec-{n}" for n in itertools.count(1))

    def teardown(self) -> None:
        try:
            self.store.close()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    def _ids(self, keep: Callable[[Status], bool]) -> list[str]:
        return sorted(i for i, (_, status) in self.model.items() if keep(status))

    def _record(
        self, identity: str, title: str, body: str, tags: tuple[str, ...], held: bool, **kw: str
    ) -> Record:
        self.clock.advance(1)
        status = Status.QUARANTINED if held else Status.ACTIVE
        return make(self.clock, next(self.ids), identity, title, body, tags, status=status, **kw)

    @rule(
        specs=st.lists(
            st.tuples(st.sampled_from(IDENTITIES), texts, texts, tag_sets, quarantined),
            min_size=1,
            max_size=3,
        )
    )
    def remember(self, specs: list[tuple[str, str, str, tuple[str, ...], bool]]) -> None:
        records = [self._record(*spec) for spec in specs]
        write(self.store, *map(CreateOp, records))  # one write, one to three records
        for record in records:
            self.model[record.id] = (record.scope.key, record.status)

    @rule(identity=st.sampled_from(IDENTITIES), title=texts, body=texts)
    def remember_and_forget_in_one_write(self, identity: str, title: str, body: str) -> None:
        record = self._record(identity, title, body, (), False)
        write(self.store, CreateOp(record), TombstoneOp(record.id, record.scope))
        self.model[record.id] = (identity, Status.TOMBSTONED)

    @precondition(lambda self: self._ids(lambda s: s is not Status.TOMBSTONED))
    @rule(pick=st.integers(min_value=0))
    def forget(self, pick: int) -> None:
        candidates = self._ids(lambda s: s is not Status.TOMBSTONED)  # active, quarantined or superseded
        memory_id = candidates[pick % len(candidates)]
        identity, _ = self.model[memory_id]
        assert self.store.forget(Scope.identity(REALM, identity), memory_id, APPLICATION)
        self.model[memory_id] = (identity, Status.TOMBSTONED)

    @precondition(lambda self: self._ids(lambda s: s is Status.ACTIVE))
    @rule(pick=st.integers(min_value=0), title=texts, body=texts, tags=tag_sets, held=quarantined)
    def update(self, pick: int, title: str, body: str, tags: tuple[str, ...], held: bool) -> None:
        candidates = self._ids(lambda s: s is Status.ACTIVE)
        old = candidates[pick % len(candidates)]
        identity, _ = self.model[old]
        record = self._record(identity, title, body, tags, held, supersedes=old)
        write(self.store, CreateOp(record))
        self.model[record.id] = (identity, record.status)
        if record.status is Status.ACTIVE:  # a quarantined update leaves the old version in place
            self.model[old] = (identity, Status.SUPERSEDED)

    @rule(limit=st.integers(min_value=1, max_value=4))
    def apply_part_of_the_backlog(self, limit: int) -> None:
        self.store.apply_backlog(limit)
        with self.store.reading() as db:
            assert self.store.backlog() == backlog_size(db)  # exact after every apply
            assert db.execute("SELECT count(*) FROM index_queue").fetchone() == (0,)  # removals: whole

    @rule()
    def flush(self) -> None:
        self.store.flush_index()
        state = assert_fully_indexed(self.store, self.path)
        assert state.watermark == max(state.records, default=0)  # a flush takes in every record

    @rule()
    def restart_with_the_backlog(self) -> None:
        self.store.close()
        self.store = SqliteRealmStore(self.path, REALM, clock=self.clock)
        with self.store.reading() as db:
            assert self.store.backlog() == backlog_size(db)

    @rule(identity=st.sampled_from(IDENTITIES), text=st.sampled_from(VOCABULARY))
    def contextual_recall(self, identity: str, text: str) -> None:
        hits = contextual_hits(self.store, identity, text)
        state = assert_fully_indexed(self.store, self.path)  # the read applied the whole backlog
        assert hits == expected_hits(state, identity, text)

    @invariant()
    def the_file_follows_the_watermark_rule(self) -> None:
        state = read_file_state(self.path)
        identity_of = {sid: key for key, sid in state.scope_ids.items()}
        assert {
            r.memory_id: (identity_of[r.scope_id], Status(r.status)) for r in state.records.values()
        } == self.model
        assert_watermark_rule(state)
        with self.store.reading() as db:
            assert self.store.backlog() >= backlog_size(db)


TestRecallIndexUpkeep = RecallIndexUpkeep.TestCase
TestRecallIndexUpkeep.settings = settings(
    max_examples=50,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# -- 2. upgrading a schema-4 file that was left with a backlog ------------------------------------


def test_a_schema_4_file_left_with_a_backlog_is_indexed_exactly_after_the_upgrade(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Schema 4 queued an ``add`` for every record not yet indexed and a ``remove`` for every
    record leaving ``active``. Migration 5 puts the watermark at the newest record, so those
    queued rows alone describe the remaining work: after the upgrade and one read the index is
    exactly the active records: the adds in, the removals out, no posting twice, none missing."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        # What schema 4 had indexed before the process stopped...
        write(store, CreateOp(make(clock, "a1", "alice", "Espresso grinder", "Grind the beans fine.")))
        write(store, CreateOp(make(clock, "a2", "alice", "Deploy window", "Deploys happen on Tuesday.")))
        write(store, CreateOp(make(clock, "b1", "bob", "Kettle", "The kettle sits by the harbor.")))
        write(
            store,
            CreateOp(make(clock, "b2", "bob", "Running deploys", "Deploys run on Tuesday.", ("deploy",))),
        )
        store.flush_index()
        # ...and what it had only queued.
        write(store, CreateOp(make(clock, "a3", "alice", "Harbor espresso", "Espresso by the harbor.")))
        write(
            store, CreateOp(make(clock, "b3", "bob", "Kettle spare", "A spare kettle in the harbor office."))
        )
        write(store, CreateOp(make(clock, "a4", "alice", "Deploy freeze", "No deploys this week.")))
        assert store.forget(Scope.identity(REALM, "alice"), "a4", APPLICATION)
        assert store.forget(Scope.identity(REALM, "alice"), "a2", APPLICATION)
        moved = make(
            clock, "b1v2", "bob", "Kettle moved", "The kettle now sits in the kitchen.", supersedes="b1"
        )
        write(store, CreateOp(moved))
        store.flush_index()  # every term is in `terms` now
    finally:
        store.close()
    indexed_by_v4 = ["a1", "a2", "b1", "b2"]
    v4_queue = [("a3", "add"), ("b3", "add"), ("a4", "add"), ("a4", "remove"), ("a2", "remove")]
    v4_queue += [("b1v2", "add"), ("b1", "remove")]

    with closing(sqlite3.connect(path, isolation_level=None)) as db:  # rewrite it as schema 4 left it
        db.execute("BEGIN")
        doc_of = {memory_id: doc for doc, memory_id in db.execute("SELECT doc, id FROM records")}
        db.execute("DELETE FROM postings")
        db.execute("UPDATE scopes SET doc_count = 0, total_len = 0")
        for memory_id in indexed_by_v4:
            scope_id, title, body, tags = db.execute(
                "SELECT scope_id, title, body, tags FROM records WHERE id = ?", (memory_id,)
            ).fetchone()
            analysis = analyze_record(title, body, json.loads(tags))
            for term, tfs in analysis.fields.items():
                (term_id,) = db.execute("SELECT term_id FROM terms WHERE term = ?", (term,)).fetchone()
                db.execute(
                    "INSERT INTO postings VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (scope_id, term_id, doc_of[memory_id], *tfs, analysis.length),
                )
            db.execute(
                "UPDATE scopes SET doc_count = doc_count + 1, total_len = total_len + ? WHERE scope_id = ?",
                (analysis.length, scope_id),
            )
        db.execute("DELETE FROM index_queue")
        db.executemany(
            "INSERT INTO index_queue (doc, op) VALUES (?, ?)", [(doc_of[i], op) for i, op in v4_queue]
        )
        db.execute("DELETE FROM store_meta WHERE key = ?", (WATERMARK_KEY,))
        db.execute("DELETE FROM schema_migrations WHERE version = 5")
        db.execute("COMMIT")
        assert applied_versions(db) == [1, 2, 3, 4]
    crafted = read_file_state(path)
    assert crafted.watermark is None
    assert_index_is_exactly(crafted, [doc_of[i] for i in indexed_by_v4])

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        with store.reading() as db:
            assert applied_versions(db) == list(range(1, SCHEMA_VERSION + 1))
            assert read_watermark(db) == max(doc_of.values())
            assert store.backlog() == backlog_size(db)
        state = read_file_state(path)
        assert state.ids(contextual_hits(store, "alice", "espresso")) == {"a1", "a3"}
        assert contextual_hits(store, "alice", "deploy") == set()  # a2 and a4 were forgotten
        assert state.ids(contextual_hits(store, "bob", "kettle")) == {"b3", "b1v2"}
        assert state.ids(contextual_hits(store, "bob", "harbor")) == {"b3"}  # not b1, superseded
        assert state.ids(contextual_hits(store, "bob", "deploy")) == {"b2"}
        state = assert_fully_indexed(store, path)
        assert state.ids(state.active_docs()) == {"a1", "a3", "b2", "b3", "b1v2"}
    finally:
        store.close()


# -- 3. the quiet-time indexer ---------------------------------------------------------------------


def test_the_background_indexer_applies_the_backlog_once_writes_go_quiet(
    tmp_path: Path, clock: ManualClock, eventually: Callable[..., bool]
) -> None:
    """With no read of the index and no flush, the upkeep thread applies the whole backlog (new
    records in several chunks, then a queued removal) once no write has come for a moment."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        notes = 2 * BackgroundIndexer.CHUNK + 22  # three chunks of new records
        write(
            store,
            *(CreateOp(make(clock, f"a{n}", "alice", f"Note {n}", "Harbor espresso.")) for n in range(notes)),
        )
        for n in range(3):
            write(store, CreateOp(make(clock, f"b{n}", "bob", f"Kettle {n}", "By the harbor.")))
        assert eventually(lambda: store.backlog() == 0), f"backlog still {store.backlog()} after 5 s"
        state = assert_fully_indexed(store, path)
        assert state.scope_stats[state.scope_ids["alice"]][0] == notes
        assert state.scope_stats[state.scope_ids["bob"]][0] == 3

        assert store.forget(Scope.identity(REALM, "alice"), "a7", APPLICATION)  # a queued removal
        assert eventually(lambda: store.backlog() == 0), f"backlog still {store.backlog()} after 5 s"
        state = assert_fully_indexed(store, path)
        assert state.scope_stats[state.scope_ids["alice"]][0] == notes - 1
    finally:
        store.close()


def test_closing_the_store_with_a_backlog_loses_none_of_it(tmp_path: Path, clock: ManualClock) -> None:
    """The backlog is rows in the realm file: a store closed before applying it (new records and
    a queued removal) reopens with it, and the first recall finds exactly the active records."""
    for attempt in range(5):  # the quiet-time thread may win the race to close; try again then
        path = tmp_path / f"r{attempt}.sqlite3"
        store = SqliteRealmStore(path, REALM, clock=clock)
        try:
            gone = make(clock, "gone", "alice", "Harbor", "The old harbor note.")
            write(store, CreateOp(gone))
            store.flush_index()
            # One transaction, so the backlog at close is all of it or (if the thread won) none.
            write(
                store,
                TombstoneOp("gone", gone.scope),
                *(
                    CreateOp(make(clock, f"a{n}", "alice", f"Harbor {n}", "At the harbor."))
                    for n in range(40)
                ),
            )
        finally:
            store.close()
        with closing(sqlite3.connect(path)) as db:
            left = backlog_size(db)
        store = SqliteRealmStore(path, REALM, clock=clock)
        try:
            state = read_file_state(path)
            assert state.ids(contextual_hits(store, "alice", "harbor")) == {f"a{n}" for n in range(40)}
            assert_fully_indexed(store, path)
        finally:
            store.close()
        if left:
            assert left == 41  # 40 new records and one removal
            break
    assert left, "the backlog was applied before every close: the closing path went untested"


def test_a_write_that_brings_the_backlog_to_the_threshold_applies_it_inline(
    tmp_path: Path, clock: ManualClock
) -> None:
    """Under sustained writes the backlog is bounded: the write that brings it to
    ``INDEX_FLUSH_THRESHOLD`` applies all of it in its own transaction."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        records = [
            make(clock, f"a{n}", "alice", f"Note {n}", "Harbor.") for n in range(INDEX_FLUSH_THRESHOLD)
        ]
        write(store, *map(CreateOp, records))
        with store.reading() as db:
            assert store.backlog() == 0 == backlog_size(db)
        assert_fully_indexed(store, path)
    finally:
        store.close()


# -- 4. WAL checkpoints off the write path -----------------------------------------------------


def records_in_main_file(realm_file: Path, tmp_path: Path) -> int:
    """Records the main file holds without its WAL, read from a copy (so the live file is untouched)."""
    copy = tmp_path / "main-file-copy" / realm_file.name
    copy.parent.mkdir(exist_ok=True)
    shutil.copyfile(realm_file, copy)
    with closing(sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True)) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return int(db.execute("SELECT count(*) FROM records").fetchone()[0]) if "records" in tables else 0


def test_the_checkpoint_thread_moves_writes_into_the_main_file_without_a_close(
    tmp_path: Path, clock: ManualClock, eventually: Callable[..., bool]
) -> None:
    """The writer never checkpoints inline (``wal_autocheckpoint = 0``): a WAL past SQLite's
    automatic 1,000 pages in fewer than ``NUDGE_EVERY`` transactions leaves the main file
    without any record. Once more than ``NUDGE_EVERY`` transactions have committed, the
    background thread's PASSIVE checkpoint copies them into the main file while the store is open."""
    path = tmp_path / "r.sqlite3"
    wal = path.with_name(path.name + "-wal")
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        big = " ".join(["harbor"] * 8000)  # about 55 KB a body: four a transaction
        heavy = 25  # well below NUDGE_EVERY, even with a background-indexer transaction after each
        for t in range(heavy):
            write(
                store,
                *(CreateOp(make(clock, f"big-{t}-{n}", "alice", f"Big {t} {n}", big)) for n in range(4)),
            )
        with store.reading() as db:
            (page_size,) = db.execute("PRAGMA page_size").fetchone()
        assert wal.stat().st_size > 1000 * (page_size + 24)  # past the automatic checkpoint's threshold
        assert records_in_main_file(path, tmp_path) == 0

        for n in range(NUDGE_EVERY):
            write(store, CreateOp(make(clock, f"small-{n}", "alice", f"Small {n}", "Kettle.")))
        seen: list[int] = []

        def checkpointed() -> bool:
            try:
                seen.append(records_in_main_file(path, tmp_path))
            except sqlite3.DatabaseError:  # copied while a checkpoint was writing: look again
                return False
            return seen[-1] > 0

        assert eventually(checkpointed), "no record reached the main file within 5 s"
        assert seen[-1] <= 4 * heavy + NUDGE_EVERY
        assert wal.exists()  # still open: it was the thread, not a close
    finally:
        store.close()
