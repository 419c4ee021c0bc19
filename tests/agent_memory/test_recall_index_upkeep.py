"""Upkeep of a realm's recall index (recall_index.py, indexing.py, checkpoint.py): the watermark
rule, the queued removals and their pruning, applying the backlog in parts, across restarts,
after an upgrade from schema 4 or 5 (adopting a schema-5 file's in-file index), an index file
that is missing, foreign or not SQLite at all, the quiet-time thread, and WAL checkpoints off
the write path.

The index is derived data in a file of its own beside the realm file
(``StateLayout.recall_index_path``), so every check here recomputes it from the records
themselves with the analyzer and compares it with what the index file holds, each file read on a
connection of its own.
"""

from __future__ import annotations

import itertools
import json
import logging
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from meta_memory.clock import ManualClock
from meta_memory.memory.recall.analyzer import ANALYZER_VERSION, AnalyzedRecord, analyze_record, query_terms
from meta_memory.memory.recall.provider import LexicalRecallProvider, RecallQuery
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
from meta_memory.memory.sqlite import checkpoint, indexing
from meta_memory.memory.sqlite.checkpoint import NUDGE_EVERY
from meta_memory.memory.sqlite.indexing import INDEX_FLUSH_THRESHOLD, BackgroundIndexer
from meta_memory.memory.sqlite.migrations import SCHEMA_VERSION, applied_versions
from meta_memory.memory.sqlite.recall_index import RecallIndexFile, backlog_size, read_marks
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.memory.validator import CreateOp, TombstoneOp, WriteBatch
from meta_memory.storage.layout import StateLayout

REALM = "r"

# -- reading the realm file and its index file, each on a connection of its own -------------------

# (scope_id, term, doc, tf_title, tf_body, tf_tags, length)
Posting = tuple[int, str | None, int, int, int, int, int]

# LEFT JOIN: a posting whose term id has no term shows up as None and fails the comparison.
POSTINGS_SQL = (
    "SELECT p.scope_id, t.term, p.doc, p.tf_title, p.tf_body, p.tf_tags, p.length "
    "FROM postings p LEFT JOIN terms t ON t.term_id = p.term_id"
)


@dataclass(frozen=True)
class FileRecord:
    memory_id: str
    scope_id: int
    status: str
    analysis: AnalyzedRecord


@dataclass(frozen=True)
class FileState:
    """One snapshot of a realm file (records, scopes, queue) and one of its recall index."""

    # The realm file.
    records: dict[int, FileRecord]  # by doc
    scope_ids: dict[str, int]  # identity -> scope_id
    queue: list[tuple[int, int, str]]  # (seq, doc, op) in seq order
    max_seq: int  # the newest index_queue seq ever handed out (sqlite_sequence), 0 when none
    store_meta: dict[str, str]
    # The recall index (the index file's, or a schema-4/5 realm file's own).
    postings: list[Posting]
    scope_stats: dict[int, tuple[int, int]]  # scope_id -> (doc_count, total_len); absent = (0, 0)
    index_meta: dict[str, str]
    indexed_upto: int
    queue_upto: int
    # The index file's (scope_id, doc) list of every record it holds (None: a realm file's own index).
    scope_docs: list[tuple[int, int]] | None = None

    def ids(self, docs: Iterable[int]) -> set[str]:
        return {self.records[doc].memory_id for doc in docs}

    def active_docs(self) -> set[int]:
        return {doc for doc, r in self.records.items() if r.status == "active"}

    def doc_of(self, memory_id: str) -> int:
        (doc,) = [doc for doc, r in self.records.items() if r.memory_id == memory_id]
        return doc


def index_path(realm_path: Path) -> Path:
    return StateLayout.recall_index_path(realm_path)


def remove_index_file(realm_path: Path) -> None:
    ix = index_path(realm_path)
    for stale in (ix, *StateLayout.sqlite_sidecars(ix)):
        stale.unlink(missing_ok=True)


@contextmanager
def snapshot(path: Path) -> Iterator[sqlite3.Connection]:
    """One read transaction on a connection of its own (the file must exist: connecting would create it)."""
    assert path.exists(), f"{path} does not exist"
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")


def _tables(db: sqlite3.Connection) -> set[str]:
    return {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _read_realm(
    db: sqlite3.Connection,
) -> tuple[dict[int, FileRecord], dict[str, int], list[tuple[int, int, str]], int, dict[str, str]]:
    records = {
        doc: FileRecord(memory_id, scope_id, status, analyze_record(title, body, json.loads(tags)))
        for doc, memory_id, scope_id, status, title, body, tags in db.execute(
            "SELECT doc, id, scope_id, status, title, body, tags FROM records"
        )
    }
    scope_ids = {
        key: sid for sid, key in db.execute("SELECT scope_id, key FROM scopes WHERE kind = 'identity'")
    }
    queue = db.execute("SELECT seq, doc, op FROM index_queue ORDER BY seq").fetchall()
    row = (
        db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'index_queue'").fetchone()
        if "sqlite_sequence" in _tables(db)
        else None
    )
    has_meta = "store_meta" in _tables(db)  # schema 4 added it
    store_meta = dict(db.execute("SELECT key, value FROM store_meta").fetchall()) if has_meta else {}
    return records, scope_ids, queue, int(row[0]) if row else 0, store_meta


def _read_postings(db: sqlite3.Connection) -> list[Posting]:
    return sorted(db.execute(POSTINGS_SQL).fetchall(), key=repr)


def _read_both_tiers(ix: sqlite3.Connection) -> tuple[list[Posting], dict[int, tuple[int, int]]]:
    """An index file's postings and scope statistics as readers see them: ``postings`` and
    ``scope_stats`` plus the records waiting in ``fresh_terms`` (a record must be in one tier only,
    or its postings show up twice)."""
    postings = ix.execute(POSTINGS_SQL).fetchall()
    stats = {
        sid: (count, total)
        for sid, count, total in ix.execute("SELECT scope_id, doc_count, total_len FROM scope_stats")
    }
    for doc, scope_id, length, terms in ix.execute("SELECT doc, scope_id, length, terms FROM fresh_terms"):
        for entry in terms.split():
            term, *tfs = entry.split(":")
            postings.append((scope_id, term, doc, *map(int, tfs), length))
        count, total = stats.get(scope_id, (0, 0))
        stats[scope_id] = (count + 1, total + length)
    return sorted(postings, key=repr), stats


def read_file_state(path: Path) -> FileState:
    """The realm file, then its index file (both must exist). Two snapshots: consistent whenever
    no write is in flight, since the quiet-time indexer changes no record and prunes only queue
    rows the index has already applied."""
    with snapshot(path) as db:
        records, scope_ids, queue, max_seq, store_meta = _read_realm(db)
    with snapshot(index_path(path)) as ix:
        postings, scope_stats = _read_both_tiers(ix)
        index_meta = dict(ix.execute("SELECT key, value FROM meta").fetchall())
        scope_docs = ix.execute("SELECT scope_id, doc FROM scope_docs ORDER BY scope_id, doc").fetchall()
    return FileState(
        records,
        scope_ids,
        queue,
        max_seq,
        store_meta,
        postings,
        scope_stats,
        index_meta,
        int(index_meta["indexed_upto"]),
        int(index_meta["queue_upto"]),
        scope_docs,
    )


def read_in_file_index(path: Path) -> FileState:
    """A schema-4/5 realm file with the recall index inside it (postings, terms, scopes' stats)."""
    with snapshot(path) as db:
        records, scope_ids, queue, max_seq, store_meta = _read_realm(db)
        postings = _read_postings(db)
        scope_stats = {
            sid: (count, total)
            for sid, count, total in db.execute("SELECT scope_id, doc_count, total_len FROM scopes")
        }
    indexed_upto = int(store_meta.get("indexed_upto", 0))
    return FileState(
        records, scope_ids, queue, max_seq, store_meta, postings, scope_stats, {}, indexed_upto, 0
    )


def read_index_marks(path: Path) -> tuple[int, int]:
    """The realm's index file's (indexed_upto, queue_upto)."""
    with snapshot(index_path(path)) as ix:
        return read_marks(ix)


def nonempty(stats: dict[int, tuple[int, int]]) -> dict[int, tuple[int, int]]:
    """Scope statistics without the scopes at (0, 0), which an index may hold or leave out."""
    return {sid: value for sid, value in stats.items() if value != (0, 0)}


def index_of(state: FileState, docs: Iterable[int]) -> tuple[list[Posting], dict[int, tuple[int, int]]]:
    """The postings and per-scope (doc_count, total_len) the analyzer gives for exactly ``docs``."""
    postings: list[Posting] = []
    stats: dict[int, tuple[int, int]] = {}
    for doc in docs:
        r = state.records[doc]
        length = r.analysis.length
        postings.extend((r.scope_id, term, doc, *tfs, length) for term, tfs in r.analysis.fields.items())
        count, total = stats.get(r.scope_id, (0, 0))
        stats[r.scope_id] = (count + 1, total + length)
    return sorted(postings, key=repr), stats


def assert_index_is_exactly(state: FileState, docs: Collection[int]) -> None:
    """The index's postings, scope statistics and (in an index file) list of records by scope are
    those of ``docs``: nothing missing, extra or doubled."""
    postings, stats = index_of(state, docs)
    assert state.postings == postings
    assert nonempty(state.scope_stats) == stats
    if state.scope_docs is not None:
        assert state.scope_docs == sorted((state.records[doc].scope_id, doc) for doc in docs)


def assert_index_rule(state: FileState) -> None:
    """At every moment: the index is this realm file's, by this analyzer, claims no more than the
    file holds, and holds exactly the active records at or below ``indexed_upto`` plus those at or
    below it whose queued removal is not applied yet (``seq > queue_upto``: indexed, then they left
    ``active``); records above ``indexed_upto`` never are. Queue rows at or below ``queue_upto``
    are applied ones not pruned yet."""
    assert state.index_meta["realm_uid"] == state.store_meta["realm_uid"]
    assert state.index_meta["analyzer_version"] == str(ANALYZER_VERSION)
    assert 0 <= state.indexed_upto <= max(state.records, default=0)
    assert 0 <= state.queue_upto <= state.max_seq
    assert all(seq <= state.max_seq for seq, _, _ in state.queue)
    # A removal is queued once a record has left ``active``, which it never re-enters.
    assert all(state.records[doc].status != "active" for _, doc, op in state.queue if op == "remove")
    pending = [(doc, op) for seq, doc, op in state.queue if seq > state.queue_upto]
    assert {op for _, op in pending} <= {"remove"}
    removed = [doc for doc, _ in pending]
    assert len(removed) == len(set(removed))
    indexed = {doc for doc in state.active_docs() | set(removed) if doc <= state.indexed_upto}
    assert_index_is_exactly(state, indexed)


def assert_fully_indexed(store: SqliteRealmStore, path: Path, *, pruned: bool = False) -> FileState:
    """Nothing pending (no queued removal beyond ``queue_upto``, no active record above
    ``indexed_upto``), and the index is exactly the active records. ``pruned``: the store queued
    a removal since it opened, so its catch-up also emptied the queue."""
    with store.reading() as db:  # under the store lock: the background indexer is not mid-apply
        assert store.backlog() == 0 == backlog_size(db, *read_index_marks(path))
    state = read_file_state(path)
    assert_index_rule(state)
    assert state.queue_upto == state.max_seq
    assert all(doc <= state.indexed_upto for doc in state.active_docs())
    assert_index_is_exactly(state, state.active_docs())
    if pruned:
        assert state.queue == []
    return state


def contextual_hits(store: SqliteRealmStore, identity: str, text: str) -> set[int]:
    """Docs a contextual recall ranks for ``text`` (reading the index applies the backlog first)."""
    hits = rank(store.term_index([Scope.identity(REALM, identity)]), query_terms(text), 10_000)
    docs = {doc for doc, _ in hits}
    assert len(docs) == len(hits)
    found = store.records_by_doc(list(docs))
    assert found.keys() == docs  # no posting of a record the realm file does not hold
    assert all(r.status is Status.ACTIVE for r in found.values())
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


@pytest.fixture
def no_quiet_time_indexing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The quiet-time indexer waits an hour for quiet: a test sees the index exactly as opening
    the store left it until it reads or flushes the index itself."""
    monkeypatch.setattr(BackgroundIndexer, "QUIET_S", 3600.0)


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
    backlog, contextual recalls, and restarts that leave the backlog in the realm file (and
    some that lose the index file too).

    Pins: at every step the index file obeys the watermark rule (indexed = active records at or
    below ``indexed_upto`` plus those with a removal queued beyond ``queue_upto``), the store never
    under-reports its backlog (a read skips applying it only when ``backlog()`` is 0) and reports
    it exactly after every apply; removals are always applied whole, and once this store has
    queued one, each catch-up prunes the queue empty; after ``flush_index()`` (or any read of the
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
        self.removed_since_open = False  # this store queued a removal (so its catch-ups prune)

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
        self.removed_since_open = True  # it left `active` inside the write: still queued

    @precondition(lambda self: self._ids(lambda s: s is not Status.TOMBSTONED))
    @rule(pick=st.integers(min_value=0))
    def forget(self, pick: int) -> None:
        candidates = self._ids(lambda s: s is not Status.TOMBSTONED)  # active, quarantined or superseded
        memory_id = candidates[pick % len(candidates)]
        identity, status = self.model[memory_id]
        assert self.store.forget(Scope.identity(REALM, identity), memory_id, APPLICATION)
        self.model[memory_id] = (identity, Status.TOMBSTONED)
        self.removed_since_open |= status is Status.ACTIVE

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
            self.removed_since_open = True

    @rule(limit=st.integers(min_value=1, max_value=4))
    def apply_part_of_the_backlog(self, limit: int) -> None:
        self.store.apply_backlog(limit)
        with self.store.reading() as db:
            indexed_upto, queue_upto = read_index_marks(self.path)
            assert self.store.backlog() == backlog_size(
                db, indexed_upto, queue_upto
            )  # exact after every apply
            (pending,) = db.execute(
                "SELECT count(*) FROM index_queue WHERE seq > ?", (queue_upto,)
            ).fetchone()
            assert pending == 0  # removals: always applied whole
            if self.removed_since_open:
                assert db.execute("SELECT count(*) FROM index_queue").fetchone() == (0,)  # and pruned

    @rule(limit=st.integers(min_value=1, max_value=4))
    def merge_part_of_the_fresh_tier(self, limit: int) -> None:
        """Records move from the fresh tier into the postings; what the index holds does not change."""
        # All of it under the store's lock: the quiet-time task cannot catch up meanwhile (once
        # the lock is released it may fill the fresh tier that this merge found empty).
        with self.store.reading():
            before = read_file_state(self.path)
            moved = self.store.merge_fresh(limit)
            after = read_file_state(self.path)
            with closing(sqlite3.connect(index_path(self.path))) as ix:
                (left,) = ix.execute("SELECT count(*) FROM fresh_terms").fetchone()
        assert (after.postings, nonempty(after.scope_stats)) == (
            before.postings,
            nonempty(before.scope_stats),
        )
        assert moved <= limit and (moved == limit or left == 0)

    @rule()
    def flush(self) -> None:
        self.store.flush_index()
        state = assert_fully_indexed(self.store, self.path, pruned=self.removed_since_open)
        assert state.indexed_upto == max(state.records, default=0)  # a flush takes in every record

    def _reopen(self) -> None:
        self.store = SqliteRealmStore(self.path, REALM, clock=self.clock)
        self.removed_since_open = False
        with self.store.reading() as db:
            assert self.store.backlog() == backlog_size(db, *read_index_marks(self.path))

    @rule()
    def restart_with_the_backlog(self) -> None:
        self.store.close()
        self._reopen()

    @rule()
    def restart_without_the_index_file(self) -> None:
        """The index is derived data: losing it between runs only means rebuilding it."""
        self.store.close()
        remove_index_file(self.path)
        self._reopen()

    @rule(identity=st.sampled_from(IDENTITIES), text=st.sampled_from(VOCABULARY))
    def contextual_recall(self, identity: str, text: str) -> None:
        hits = contextual_hits(self.store, identity, text)
        # The read applied the whole backlog.
        state = assert_fully_indexed(self.store, self.path, pruned=self.removed_since_open)
        assert hits == expected_hits(state, identity, text)

    @invariant()
    def the_files_follow_the_watermark_rule(self) -> None:
        state = read_file_state(self.path)
        identity_of = {sid: key for key, sid in state.scope_ids.items()}
        assert {
            r.memory_id: (identity_of[r.scope_id], Status(r.status)) for r in state.records.values()
        } == self.model
        assert {op for _, _, op in state.queue} <= {"remove"}  # this release never queues an add
        docs = [doc for _, doc, _ in state.queue]
        assert len(docs) == len(set(docs))  # a record leaves `active` once
        assert_index_rule(state)
        with self.store.reading() as db:
            assert self.store.backlog() >= backlog_size(db, *read_index_marks(self.path))


TestRecallIndexUpkeep = RecallIndexUpkeep.TestCase
TestRecallIndexUpkeep.settings = settings(
    max_examples=50,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# -- 2. upgrading a file that kept the recall index inside it (schema 4 and 5) ---------------------

# What schemas 1-5 had that schema 6 moved out or changed (the index, and the queue's numbering).
IN_FILE_INDEX_DDL = (
    "CREATE TABLE terms (term_id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE)",
    "CREATE TABLE postings (scope_id INTEGER NOT NULL, term_id INTEGER NOT NULL, doc INTEGER NOT NULL, "
    "tf_title INTEGER NOT NULL, tf_body INTEGER NOT NULL, tf_tags INTEGER NOT NULL, length INTEGER NOT NULL, "
    "PRIMARY KEY (scope_id, term_id, doc)) WITHOUT ROWID",
    "ALTER TABLE scopes ADD COLUMN doc_count INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE scopes ADD COLUMN total_len INTEGER NOT NULL DEFAULT 0",
    "CREATE TABLE index_queue_old (seq INTEGER PRIMARY KEY, doc INTEGER NOT NULL, op TEXT NOT NULL)",
    "DROP TABLE index_queue",
    "ALTER TABLE index_queue_old RENAME TO index_queue",
    "DELETE FROM sqlite_sequence WHERE name = 'index_queue'",
)


def rewrite_with_in_file_index(
    path: Path,
    *,
    version: int,
    indexed: Iterable[str],
    queue: Iterable[tuple[str, str]],
    watermark: str | None,
) -> dict[str, int]:
    """Rewrite a closed schema-6 realm file as schema ``version`` (3, 4 or 5) left it: the recall
    index inside it (``terms``, ``postings``, ``scopes.doc_count``/``total_len``) holding exactly
    ``indexed``, ``queue`` as its queued ``(id, op)`` rows in a queue without AUTOINCREMENT, the
    watermark at ``watermark``'s doc (schema 5 only), no ``realm_uid``, and no index file beside
    it. Returns each record's doc."""
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in IN_FILE_INDEX_DDL:
                db.execute(statement)
            doc_of: dict[str, int] = dict(db.execute("SELECT id, doc FROM records").fetchall())
            for memory_id in indexed:
                scope_id, title, body, tags = db.execute(
                    "SELECT scope_id, title, body, tags FROM records WHERE id = ?", (memory_id,)
                ).fetchone()
                analysis = analyze_record(title, body, json.loads(tags))
                for term, tfs in analysis.fields.items():
                    db.execute("INSERT INTO terms (term) VALUES (?) ON CONFLICT (term) DO NOTHING", (term,))
                    (term_id,) = db.execute("SELECT term_id FROM terms WHERE term = ?", (term,)).fetchone()
                    db.execute(
                        "INSERT INTO postings VALUES (?, ?, ?, ?, ?, ?, ?)",
                        (scope_id, term_id, doc_of[memory_id], *tfs, analysis.length),
                    )
                db.execute(
                    "UPDATE scopes SET doc_count = doc_count + 1, total_len = total_len + ? WHERE scope_id = ?",
                    (analysis.length, scope_id),
                )
            db.executemany(
                "INSERT INTO index_queue (doc, op) VALUES (?, ?)", [(doc_of[i], op) for i, op in queue]
            )
            db.execute("DELETE FROM store_meta")  # no realm_uid before schema 6
            meta = {"analyzer_version": str(ANALYZER_VERSION)}
            if watermark is not None:
                assert version >= 5
                meta["indexed_upto"] = str(doc_of[watermark])
            if version >= 4:
                db.executemany("INSERT INTO store_meta (key, value) VALUES (?, ?)", meta.items())
            else:
                db.execute("DROP TABLE store_meta")
            db.execute("DELETE FROM schema_migrations WHERE version > ?", (version,))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        assert applied_versions(db) == list(range(1, version + 1))
    remove_index_file(path)
    return doc_of


def raw_index(db: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """An index's ``terms`` and ``postings`` rows as stored (term ids included)."""
    terms = db.execute("SELECT term_id, term FROM terms ORDER BY term_id").fetchall()
    postings = db.execute(
        "SELECT scope_id, term_id, doc, tf_title, tf_body, tf_tags, length FROM postings "
        "ORDER BY scope_id, term_id, doc"
    ).fetchall()
    return terms, postings


def assert_schema_6_realm_file(db: sqlite3.Connection) -> None:
    """Migrated: no index left in the realm file, and a queue whose numbers are never reused."""
    assert applied_versions(db) == list(range(1, SCHEMA_VERSION + 1))
    assert not {"postings", "terms"} & _tables(db)
    assert not {"doc_count", "total_len"} & {row[1] for row in db.execute("PRAGMA table_info(scopes)")}
    (sql,) = db.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'index_queue'"
    ).fetchone()
    assert "AUTOINCREMENT" in sql.upper()


@pytest.mark.parametrize("version", [3, 4])
def test_a_schema_4_file_left_with_a_backlog_is_indexed_exactly_after_the_upgrade(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None, version: int
) -> None:
    """Schema 4 kept the index in the realm file, queued an ``add`` for every record not yet
    indexed and a ``remove`` for every record leaving ``active``, and had no watermark. The
    upgrade hands the in-file index to the index file with the watermark at the newest record (as
    migration 5 did), so the queued rows alone describe the remaining work: after one read the
    index is exactly the active records: the adds in, the removals out, no posting twice, none
    missing. Schema 3 is the same without ``store_meta`` at all (the analyzer was version 1)."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        write(store, CreateOp(make(clock, "a1", "alice", "Espresso grinder", "Grind the beans fine.")))
        write(store, CreateOp(make(clock, "a2", "alice", "Deploy window", "Deploys happen on Tuesday.")))
        write(store, CreateOp(make(clock, "b1", "bob", "Kettle", "The kettle sits by the harbor.")))
        write(
            store,
            CreateOp(make(clock, "b2", "bob", "Running deploys", "Deploys run on Tuesday.", ("deploy",))),
        )
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
    finally:
        store.close()
    # What schema 4 had indexed before the process stopped, and what it had only queued.
    indexed_by_v4 = ["a1", "a2", "b1", "b2"]
    v4_queue = [("a3", "add"), ("b3", "add"), ("a4", "add"), ("a4", "remove"), ("a2", "remove")]
    v4_queue += [("b1v2", "add"), ("b1", "remove")]
    doc_of = rewrite_with_in_file_index(
        path, version=version, indexed=indexed_by_v4, queue=v4_queue, watermark=None
    )
    crafted = read_in_file_index(path)
    # No watermark, no realm_uid (and before schema 4 no store_meta at all).
    assert crafted.store_meta.keys() == ({"analyzer_version"} if version == 4 else set())
    assert_index_is_exactly(crafted, [doc_of[i] for i in indexed_by_v4])
    assert [(doc, op) for _, doc, op in crafted.queue] == [(doc_of[i], op) for i, op in v4_queue]
    assert not index_path(path).exists()

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        with store.reading() as db:
            assert_schema_6_realm_file(db)
            marks = read_index_marks(path)
            assert marks == (max(doc_of.values()), 0)  # adopted: every queued row still to apply
            assert store.backlog() == backlog_size(db, *marks) == len(v4_queue)
        state = read_file_state(path)
        assert state.store_meta.keys() == {"realm_uid"}
        assert state.queue == crafted.queue  # kept, numbers and all, until applied
        assert_index_is_exactly(state, [doc_of[i] for i in indexed_by_v4])  # what schema 4 had

        assert state.ids(contextual_hits(store, "alice", "espresso")) == {"a1", "a3"}
        assert contextual_hits(store, "alice", "deploy") == set()  # a2 and a4 were forgotten
        assert state.ids(contextual_hits(store, "bob", "kettle")) == {"b3", "b1v2"}
        assert state.ids(contextual_hits(store, "bob", "harbor")) == {"b3"}  # not b1, superseded
        assert state.ids(contextual_hits(store, "bob", "deploy")) == {"b2"}
        state = assert_fully_indexed(store, path)
        assert state.ids(state.active_docs()) == {"a1", "a3", "b2", "b3", "b1v2"}
    finally:
        store.close()


def test_a_schema_5_file_hands_its_in_file_index_to_the_index_file_and_is_exact_after_a_read(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """Schema 5 kept the index in the realm file, with a watermark: the active records at or
    below it are indexed, so are those at or below it with a queued ``remove`` (removals of
    records above it were not queued), and the records above it are the backlog. Opening it
    copies that index into the index file as it is (the same terms, postings and scope
    statistics, ``indexed_upto`` = the watermark, ``queue_upto`` = 0: every queued removal still
    to apply) before the upgrade drops it from the realm file; the first read applies the rest."""
    path = tmp_path / "r.sqlite3"
    alice = Scope.identity(REALM, "alice")
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        # At or below the watermark (b2)...
        write(store, CreateOp(make(clock, "gone", "alice", "Espresso beans", "The old espresso beans.")))
        write(store, CreateOp(make(clock, "a1", "alice", "Espresso grinder", "Grind the beans fine.")))
        write(store, CreateOp(make(clock, "a2", "alice", "Deploy window", "Deploys happen on Tuesday.")))
        write(store, CreateOp(make(clock, "b1", "bob", "Kettle", "The kettle sits by the harbor.")))
        write(
            store,
            CreateOp(make(clock, "b2", "bob", "Running deploys", "Deploys run on Tuesday.", ("deploy",))),
        )
        # ...and above it.
        write(store, CreateOp(make(clock, "a3", "alice", "Harbor espresso", "Espresso by the harbor.")))
        write(store, CreateOp(make(clock, "a4", "alice", "Deploy freeze", "No deploys this week.")))
        spare = make(
            clock,
            "b3",
            "bob",
            "Kettle spare",
            "A spare kettle in the harbor office.",
            status=Status.QUARANTINED,
        )
        write(store, CreateOp(spare))
        moved = make(
            clock, "b1v2", "bob", "Kettle moved", "The kettle now sits in the kitchen.", supersedes="b1"
        )
        write(store, CreateOp(moved))
        assert store.forget(alice, "gone", APPLICATION)  # its removal was applied (and dequeued)
        assert store.forget(alice, "a2", APPLICATION)
        assert store.forget(alice, "a4", APPLICATION)
    finally:
        store.close()
    indexed_by_v5 = ["a1", "a2", "b1", "b2"]  # active at or below the watermark, or queued for removal
    doc_of = rewrite_with_in_file_index(
        path, version=5, indexed=indexed_by_v5, queue=[("a2", "remove"), ("b1", "remove")], watermark="b2"
    )
    crafted = read_in_file_index(path)
    assert crafted.store_meta == {
        "analyzer_version": str(ANALYZER_VERSION),
        "indexed_upto": str(doc_of["b2"]),
    }
    assert_index_is_exactly(crafted, [doc_of[i] for i in indexed_by_v5])
    with snapshot(path) as db:
        crafted_raw = raw_index(db)

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        with store.reading() as db:
            assert_schema_6_realm_file(db)
            with snapshot(index_path(path)) as ix:
                assert raw_index(ix) == crafted_raw  # copied as it was, term ids and all
            marks = read_index_marks(path)
            assert marks == (doc_of["b2"], 0)
            # The two queued removals, and a3 and b1v2 (active, above the watermark).
            assert store.backlog() == backlog_size(db, *marks) == 4
        state = read_file_state(path)
        assert state.store_meta.keys() == {"realm_uid"}  # the watermark moved to the index file
        assert state.queue == crafted.queue
        assert state.postings == crafted.postings
        assert nonempty(state.scope_stats) == nonempty(crafted.scope_stats)
        assert_index_rule(state)

        assert state.ids(contextual_hits(store, "alice", "espresso")) == {"a1", "a3"}  # not `gone`
        assert contextual_hits(store, "alice", "deploy") == set()  # a2 and a4 were forgotten
        assert state.ids(contextual_hits(store, "bob", "kettle")) == {"b1v2"}  # b3 is quarantined
        assert contextual_hits(store, "bob", "harbor") == set()  # not b1, superseded
        assert state.ids(contextual_hits(store, "bob", "deploy")) == {"b2"}
        state = assert_fully_indexed(store, path)
        assert state.ids(state.active_docs()) == {"a1", "a3", "b2", "b1v2"}
        assert state.indexed_upto == max(state.records)
    finally:
        store.close()

    store = SqliteRealmStore(path, REALM, clock=clock)  # and it stays adopted: nothing to redo
    try:
        with store.reading() as db:
            assert store.backlog() == 0 == backlog_size(db, *read_index_marks(path))
        assert read_file_state(path).postings == state.postings
        assert state.ids(contextual_hits(store, "alice", "espresso")) == {"a1", "a3"}
    finally:
        store.close()


# -- 3. the index file: one realm file's own, rebuilt when it is not, its queue pruned -------------


def harbor_notes(store: SqliteRealmStore, clock: ManualClock, numbers: Iterable[int]) -> None:
    for n in numbers:
        write(store, CreateOp(make(clock, f"a{n}", "alice", f"Harbor {n}", "Espresso at the harbor.")))


def assert_reset(path: Path) -> FileState:
    """The index file is this realm file's again, empty, with every record still to index."""
    state = read_file_state(path)
    assert state.index_meta["realm_uid"] == state.store_meta["realm_uid"]
    assert state.index_meta["analyzer_version"] == str(ANALYZER_VERSION)
    assert (state.indexed_upto, state.queue_upto) == (0, state.max_seq)
    assert state.postings == [] and nonempty(state.scope_stats) == {}
    assert_index_rule(state)
    return state


@pytest.mark.parametrize(
    "foreign", ["another realm file's", "another analyzer's", "ahead of a restored realm file"]
)
def test_an_index_file_that_does_not_belong_to_the_realm_file_is_reset_and_rebuilt(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None, foreign: str
) -> None:
    """An index is used only if it is this realm file's (``realm_uid``), built by this analyzer,
    and claims no more than the realm file holds (a realm file restored from a backup is behind
    its index); otherwise opening resets it and the first read rebuilds it from the records."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(3))
    finally:
        store.close()
    backup = tmp_path / "backup.sqlite3"
    shutil.copyfile(path, backup)  # closed: the WAL is checkpointed into the main file
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(3, 6))
        assert store.forget(Scope.identity(REALM, "alice"), "a1", APPLICATION)
        store.flush_index()
    finally:
        store.close()
    own = read_file_state(path)
    assert_index_rule(own)
    assert (own.indexed_upto, own.queue_upto) == (6, 1)

    if foreign == "another realm file's":
        # Fewer records and no removal: only its realm_uid tells it apart. Its postings name docs
        # 1 and 2 (a1 here is forgotten), so used as it is it would answer with the wrong records.
        other = tmp_path / "other.sqlite3"
        other_store = SqliteRealmStore(other, REALM, clock=clock)
        try:
            write(
                other_store, CreateOp(make(clock, "o1", "alice", "Harbor kettle", "A kettle at the harbor."))
            )
            write(other_store, CreateOp(make(clock, "o2", "alice", "Harbor grinder", "A harbor grinder.")))
            other_store.flush_index()
        finally:
            other_store.close()
        assert read_index_marks(other) == (2, 0)
        remove_index_file(path)
        shutil.copyfile(index_path(other), index_path(path))
    elif foreign == "another analyzer's":
        with closing(sqlite3.connect(index_path(path))) as ix, ix:
            ix.execute(
                "UPDATE meta SET value = ? WHERE key = 'analyzer_version'", (str(ANALYZER_VERSION + 1),)
            )
    else:
        for stale in (path, *StateLayout.sqlite_sidecars(path)):
            stale.unlink(missing_ok=True)
        shutil.copyfile(backup, path)  # three records, no removal: behind its index's (6, 1)

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        state = assert_reset(path)
        if foreign != "another realm file's":
            assert state.store_meta["realm_uid"] == own.store_meta["realm_uid"]  # the same realm file
        with store.reading() as db:
            assert store.backlog() == backlog_size(db, 0, state.queue_upto) == len(state.active_docs())
        assert contextual_hits(store, "alice", "harbor") == state.active_docs()
        assert_fully_indexed(store, path)
    finally:
        store.close()
    assert state.ids(state.active_docs()) == (
        {"a0", "a1", "a2"} if foreign == "ahead of a restored realm file" else {"a0", "a2", "a3", "a4", "a5"}
    )


def _scribble_pages(data: bytes) -> bytes:
    """Every page but the first overwritten at its start: the header reads, the tables do not."""
    out = bytearray(data)
    for offset in range(4096, len(out), 4096):
        out[offset : offset + 64] = bytes(range(64))
    return bytes(out)


@pytest.mark.parametrize(
    "mangle",
    [
        lambda data: b"this is not a database, only bytes. " * 256,
        lambda data: b"SQLite format 3\x00" + bytes(range(256)) * 32,
        lambda data: data[: len(data) // 3],
        _scribble_pages,
        lambda data: b"",
    ],
    ids=["garbage", "header-then-garbage", "truncated", "corrupt-pages", "empty"],
)
def test_an_index_file_that_cannot_be_read_is_rebuilt_without_an_error(
    tmp_path: Path, clock: ManualClock, mangle: Callable[[bytes], bytes]
) -> None:
    """The index is derived data: an index file that cannot be read is replaced, not reported."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(4))
        assert store.forget(Scope.identity(REALM, "alice"), "a2", APPLICATION)
        store.flush_index()
    finally:
        store.close()
    index = index_path(path)
    index.write_bytes(mangle(index.read_bytes()))

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        state = read_file_state(path)
        assert state.ids(contextual_hits(store, "alice", "harbor")) == {"a0", "a1", "a3"}
        state = assert_fully_indexed(store, path)
        assert state.index_meta["realm_uid"] == state.store_meta["realm_uid"]
    finally:
        store.close()
    assert index_path(path).read_bytes().startswith(b"SQLite format 3\x00")


def test_deleting_the_index_file_between_runs_loses_nothing(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """Everything the index holds comes from the realm file: with the index file gone (after a
    run that left a backlog of new records and queued removals, too), the next run rebuilds it
    and recall finds exactly the active records."""
    path = tmp_path / "r.sqlite3"
    alice, bob = Scope.identity(REALM, "alice"), Scope.identity(REALM, "bob")
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(5))
        write(store, CreateOp(make(clock, "b0", "bob", "Harbor kettle", "The kettle by the harbor.")))
        store.flush_index()
        assert store.forget(alice, "a1", APPLICATION)
        write(
            store,
            CreateOp(make(clock, "a3v2", "alice", "Harbor moved", "Espresso by the pier.", supersedes="a3")),
        )
        harbor_notes(store, clock, range(5, 7))
        write(store, CreateOp(make(clock, "b1", "bob", "Harbor grinder", "A grinder at the harbor.")))
        assert store.forget(bob, "b0", APPLICATION)
        assert store.backlog() > 0
    finally:
        store.close()
    remove_index_file(path)

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        state = assert_reset(path)
        assert state.ids(contextual_hits(store, "alice", "harbor")) == {"a0", "a2", "a4", "a3v2", "a5", "a6"}
        assert state.ids(contextual_hits(store, "alice", "pier")) == {"a3v2"}
        assert state.ids(contextual_hits(store, "bob", "harbor")) == {"b1"}
        state = assert_fully_indexed(store, path)
        assert state.ids(state.active_docs()) == {"a0", "a2", "a4", "a3v2", "a5", "a6", "b1"}
    finally:
        store.close()


def test_a_catch_up_prunes_the_applied_removals_and_the_queue_never_reuses_a_number(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """Every record leaving ``active`` queues a removal in the realm file, whether the index took
    it in yet or not (it is the index's to know: an indexing process may be taking it in right
    then); once the index has applied them the store deletes them from the queue, and the next
    removal is numbered past ``queue_upto`` all the same (AUTOINCREMENT), so the index cannot
    take it for applied."""
    path = tmp_path / "r.sqlite3"
    alice = Scope.identity(REALM, "alice")
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(4))
        store.flush_index()
        assert store.forget(alice, "a0", APPLICATION)
        assert store.forget(alice, "a1", APPLICATION)
        write(
            store,
            CreateOp(make(clock, "a2v2", "alice", "Harbor moved", "Espresso by the pier.", supersedes="a2")),
        )
        harbor_notes(store, clock, [4])
        assert store.forget(alice, "a4", APPLICATION)  # above indexed_upto: queued all the same
        fleeting = make(clock, "a5", "alice", "Harbor 5", "Espresso at the harbor.")
        write(store, CreateOp(fleeting), TombstoneOp("a5", alice))  # so is one that never saw the index
        state = read_file_state(path)
        assert state.queue == [
            (seq, state.doc_of(i), "remove") for seq, i in enumerate(("a0", "a1", "a2", "a4", "a5"), 1)
        ]
        assert (state.indexed_upto, state.queue_upto) == (4, 0)
        assert_index_rule(state)  # a0, a1 and a2 still indexed, their removals pending

        store.flush_index()
        state = assert_fully_indexed(store, path, pruned=True)
        assert (state.queue_upto, state.max_seq) == (5, 5)
        assert state.ids(state.active_docs()) == {"a2v2", "a3"}

        assert store.forget(alice, "a3", APPLICATION)
        state = read_file_state(path)
        assert state.queue == [(6, state.doc_of("a3"), "remove")]  # not 1 again
        assert_index_rule(state)  # a3 still indexed, its removal pending
        assert state.ids(contextual_hits(store, "alice", "harbor")) == {"a2v2"}
        state = assert_fully_indexed(store, path, pruned=True)
        assert (state.queue_upto, state.max_seq) == (6, 6)
    finally:
        store.close()


# -- 4. the quiet-time indexer, closing with a backlog, the inline threshold -----------------------


def test_the_background_indexer_applies_the_backlog_once_writes_go_quiet(
    tmp_path: Path, clock: ManualClock, eventually: Callable[..., bool]
) -> None:
    """With no read of the index and no flush, the upkeep thread applies the whole backlog (new
    records in several chunks, then a queued removal, which it prunes) once no write has come for
    a moment."""
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
        assert eventually(lambda: store.backlog() == 0), f"backlog still {store.backlog()} after waiting"
        state = assert_fully_indexed(store, path)
        assert state.scope_stats[state.scope_ids["alice"]][0] == notes
        assert state.scope_stats[state.scope_ids["bob"]][0] == 3

        assert store.forget(Scope.identity(REALM, "alice"), "a7", APPLICATION)  # a queued removal
        assert eventually(lambda: store.backlog() == 0), f"backlog still {store.backlog()} after waiting"
        state = assert_fully_indexed(store, path, pruned=True)
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
        with closing(sqlite3.connect(path)) as db, closing(sqlite3.connect(index_path(path))) as ix:
            left = backlog_size(db, *read_marks(ix))
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
            assert store.backlog() == 0 == backlog_size(db, *read_index_marks(path))
        state = assert_fully_indexed(store, path)
        assert state.indexed_upto == INDEX_FLUSH_THRESHOLD
    finally:
        store.close()


# -- 5. WAL checkpoints off the write path -----------------------------------------------------


def records_in_main_file(realm_file: Path, tmp_path: Path) -> int:
    """Records the main file holds without its WAL, read from a copy (so the live file is untouched)."""
    copy = tmp_path / "main-file-copy" / realm_file.name
    copy.parent.mkdir(exist_ok=True)
    shutil.copyfile(realm_file, copy)
    with closing(sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True)) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return int(db.execute("SELECT count(*) FROM records").fetchone()[0]) if "records" in tables else 0


def test_the_checkpoint_thread_moves_writes_into_the_main_file_without_a_close(
    tmp_path: Path, clock: ManualClock, eventually: Callable[..., bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer never checkpoints inline (``wal_autocheckpoint = 0``): a WAL past SQLite's
    automatic 1,000 pages in fewer than ``NUDGE_EVERY`` transactions leaves the main file
    without any record. Once more than ``NUDGE_EVERY`` transactions have committed, the
    background thread's PASSIVE checkpoint copies them into the main file while the store is open.
    The quiet-time truncation (a wall-clock ``QUIET_S`` without a write) is put off: on a loaded
    machine a pause between two of the writes below ran it and moved them early."""
    monkeypatch.setattr(checkpoint, "QUIET_S", 3600.0)
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

        assert eventually(checkpointed), "no record reached the main file while the store was open"
        assert seen[-1] <= 4 * heavy + NUDGE_EVERY
        assert wal.exists()  # still open: it was the thread, not a close
    finally:
        store.close()


def expected_neighbours(state: FileState, identity: str) -> dict[int, list[int]]:
    """Each active record of ``identity``: its previous and next active record in creation order."""
    docs = sorted(d for d in state.active_docs() if state.records[d].scope_id == state.scope_ids[identity])
    return {doc: [*docs[max(0, i - 1) : i], *docs[i + 1 : i + 2]] for i, doc in enumerate(docs)}


def test_neighbours_come_from_the_index_file_in_either_tier_and_in_files_made_before_them(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """Recall's neighbours (the records next to a match in creation order, within its scope) are
    read from the index file's ``scope_docs``, which lists every record the index holds, fresh or
    merged, and no record it has removed; an index file made before that list existed gets it
    filled from the realm file when it is opened, a removal not yet applied included."""
    path = tmp_path / "r.sqlite3"
    alice = Scope.identity(REALM, "alice")

    def neighbours(store: SqliteRealmStore) -> dict[int, list[int]]:
        state = read_file_state(path)
        docs = [d for d in state.active_docs() if state.records[d].scope_id == state.scope_ids["alice"]]
        found = store.term_index([alice]).neighbors(docs)  # catches the index up first
        assert {d: list(ns) for d, ns in found.items()} == expected_neighbours(read_file_state(path), "alice")
        return {d: list(ns) for d, ns in found.items()}

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        for n in range(12):  # alice and bob interleaved; some of alice's index no term at all
            body = "and the of" if n % 5 == 0 else f"Espresso note {n}."
            write(store, CreateOp(make(clock, f"a{n}", "alice", f"Note {n}" if n % 5 else "The", body)))
            write(store, CreateOp(make(clock, f"b{n}", "bob", f"Kettle {n}", "Kettle by the harbor.")))
        first = neighbours(store)  # every record still in the fresh tier
        assert store.merge_fresh(9) == 9
        assert neighbours(store) == first  # part merged, part fresh
        assert store.forget(alice, "a3", APPLICATION)
        assert store.forget(alice, "a4", APPLICATION)
        after = neighbours(store)
        a2, a5 = (read_file_state(path).doc_of(i) for i in ("a2", "a5"))
        assert a5 in after[a2] and a2 in after[a5]  # the gap closes over the forgotten records
        assert store.forget(alice, "a7", APPLICATION)  # queued: the index has not applied it
    finally:
        store.close()
    with closing(sqlite3.connect(index_path(path), isolation_level=None)) as ix:  # before scope_docs
        ix.execute("DROP TABLE scope_docs")
        ix.execute("DELETE FROM meta WHERE key = 'scope_docs'")
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        state = read_file_state(path)
        assert state.index_meta["scope_docs"] == "1"
        assert_index_rule(state)  # the list holds a7, whose removal is still to apply
        assert state.doc_of("a7") in {doc for _, doc in state.scope_docs or ()}
        neighbours(store)
    finally:
        store.close()


def test_a_recall_reads_the_index_file_in_one_read_transaction(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """Statistics, document frequencies, postings and neighbours of one ranking come from one
    state of the index file: one read transaction per recall, not one per read (each costs a
    few system calls; a recall made about ten)."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        for n in range(40):
            write(store, CreateOp(make(clock, f"a{n}", "alice", f"Harbor {n}", f"Espresso kettle note {n}.")))
        store.flush_index()
        assert store.merge_fresh(25) == 25  # both tiers hold records
        provider = LexicalRecallProvider()
        query = RecallQuery((Scope.identity(REALM, "alice"),), "contextual", "harbor espresso kettle", (), 10)
        statements: list[str] = []
        index_db = store._keeper.index._db
        index_db.set_trace_callback(statements.append)
        try:
            found = provider.recall(store, query)
        finally:
            index_db.set_trace_callback(None)
        assert len(found) == 10
        begins = [sql for sql in statements if sql.lstrip().upper().startswith("BEGIN")]
        assert len(begins) == 1, statements
        with (
            store.reading_index([Scope.identity(REALM, "alice")]),
            pytest.raises(AssertionError, match="write"),
        ):
            store.merge_fresh(5)  # no write inside a reading: it would end the snapshot
    finally:
        store.close()


def test_a_long_wal_restarts_once_readers_leave_and_is_cut_back_to_its_bound(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past its bound the writer checkpoints the WAL in RESTART mode. While a reader holds a
    snapshot it cannot restart: the writer then tries less and less often (each miss waits up to
    RESTART_WAIT_MS), and once the reader leaves, the WAL restarts and is cut back to WAL_KEEP_BYTES."""
    limit = 256 << 10
    monkeypatch.setattr(checkpoint, "WAL_LIMIT_BYTES", limit)
    monkeypatch.setattr(checkpoint, "WAL_KEEP_BYTES", limit)  # what a restarted WAL is cut back to
    attempts: list[int] = []
    restart = checkpoint.Checkpointer._restart

    def counted(self: checkpoint.Checkpointer, writer: sqlite3.Connection) -> None:
        attempts.append(written)
        restart(self, writer)

    monkeypatch.setattr(checkpoint.Checkpointer, "_restart", counted)
    path = tmp_path / "r.sqlite3"
    wal = StateLayout.sqlite_sidecars(path)[0]
    store = SqliteRealmStore(path, REALM, clock=clock)
    written = 0
    try:
        with closing(sqlite3.connect(path, isolation_level=None)) as reader:
            reader.execute("BEGIN")
            reader.execute("SELECT count(*) FROM records").fetchone()  # holds its snapshot
            for written in range(1, 401):
                write(
                    store, CreateOp(make(clock, f"n{written}", "alice", f"Note {written}", "Harbor kettle."))
                )
            assert wal.stat().st_size > 2 * limit  # it could not restart
            gaps = [b - a for a, b in itertools.pairwise(attempts)]
            assert gaps and gaps == sorted(gaps) and gaps[-1] >= 8 * gaps[0], attempts
            reader.execute("COMMIT")
        for written in range(401, 401 + 1024 + 16):
            write(store, CreateOp(make(clock, f"n{written}", "alice", f"Note {written}", "Harbor kettle.")))
            if wal.stat().st_size <= limit:
                break
        assert wal.stat().st_size <= limit, f"the WAL stayed at {wal.stat().st_size:,} bytes"
    finally:
        store.close()


def test_the_upgrade_gives_the_old_in_file_index_pages_back_to_the_file_system(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """Migration 6 drops the in-file index; when its pages are a large part of the file (postings
    are as big as the records), the store vacuums once, so the upgrade does not leave the realm
    file carrying an index it no longer has beside the index file that now has it."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        for n in range(200):
            body = " ".join(f"word{n}x{k} harbor espresso" for k in range(12))
            write(store, CreateOp(make(clock, f"a{n}", "alice", f"Harbor {n}", body)))
    finally:
        store.close()
    doc_of = rewrite_with_in_file_index(
        path, version=5, indexed=[f"a{n}" for n in range(200)], queue=[], watermark="a199"
    )
    with closing(sqlite3.connect(path)) as db:
        (pages_before,) = db.execute("PRAGMA page_count").fetchone()
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        with store.reading() as db:
            assert db.execute("PRAGMA freelist_count").fetchone() == (0,)
            (pages_after,) = db.execute("PRAGMA page_count").fetchone()
        assert pages_after * 3 < pages_before * 2  # at least a third of the file was the index
        state = read_file_state(path)
        assert_index_is_exactly(state, doc_of.values())  # adopted, nothing rebuilt
        assert state.ids(contextual_hits(store, "alice", "word7x3")) == {"a7"}
    finally:
        store.close()


def test_a_long_backlog_is_caught_up_whole_by_one_read_in_bounded_transactions(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read catches the whole backlog up (read-your-writes), but a rebuild of a large realm
    must not hold all of its postings in memory at once: it runs in chunks of CATCH_UP_CHUNK new
    records, each its own transaction on the index file."""
    monkeypatch.setattr(indexing, "CATCH_UP_CHUNK", 8)
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    chunks: list[int] = []
    catch_up = RecallIndexFile.catch_up

    def counting(self: RecallIndexFile, realm: sqlite3.Connection, limit: int | None = None) -> int:
        chunks.append(catch_up(self, realm, limit))
        return chunks[-1]

    monkeypatch.setattr(RecallIndexFile, "catch_up", counting)
    try:
        write(
            store, *(CreateOp(make(clock, f"a{n}", "alice", f"Harbor {n}", "Espresso.")) for n in range(50))
        )
        assert store.backlog() == 50
        assert len(contextual_hits(store, "alice", "harbor")) == 50
        assert chunks == [8, 8, 8, 8, 8, 8, 2]
        assert_fully_indexed(store, path)
    finally:
        store.close()


def test_a_rebuild_does_not_hold_the_realm_recall_serves_what_is_indexed_meanwhile(
    tmp_path: Path,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    eventually: Callable[..., bool],
) -> None:
    """An index file lost from a large realm is a rebuild of every record: minutes for a million.
    Past REBUILD_AFTER records behind, neither a read nor a write waits for it (the realm stays
    usable); recall finds what is indexed so far, a warning says so, and the background catches
    the index up (here the quiet-time task: no indexing process)."""
    monkeypatch.setattr(indexing, "REBUILD_AFTER", 20)
    monkeypatch.setattr(indexing, "INDEX_FLUSH_THRESHOLD", 5)
    monkeypatch.setattr(BackgroundIndexer, "QUIET_S", 3600.0)  # no background until the end
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(30))  # caught up inline every 5 writes
        assert store.backlog() == 0
    finally:
        store.close()
    remove_index_file(path)

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        assert store.backlog() == 30
        with caplog.at_level(logging.WARNING, logger="meta_memory.memory.sqlite.indexing"):
            assert contextual_hits(store, "alice", "harbor") == set()  # nothing indexed yet
        assert "is rebuilding" in caplog.text
        harbor_notes(store, clock, range(30, 40))  # past the inline threshold: still no catch-up
        assert read_index_marks(path)[0] == 0
        assert contextual_hits(store, "alice", "harbor") == set()

        monkeypatch.setattr(BackgroundIndexer, "QUIET_S", 0.02)
        harbor_notes(store, clock, range(40, 41))  # a write asks the background to catch up
        assert eventually(lambda: store.backlog() == 0, timeout_s=20)
        state = read_file_state(path)
        assert state.ids(contextual_hits(store, "alice", "harbor")) == {f"a{n}" for n in range(41)}
        assert_fully_indexed(store, path)
    finally:
        store.close()


# -- 5. the two tiers: new records go to ``fresh_terms``, merges move them into ``postings`` ------


def fresh_docs(path: Path) -> set[int]:
    with snapshot(index_path(path)) as ix:
        return {doc for (doc,) in ix.execute("SELECT doc FROM fresh_terms")}


def test_new_records_wait_in_the_fresh_tier_and_a_merge_moves_them_without_changing_recall(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """A catch-up of a few records writes one ``fresh_terms`` row each, not postings; merging them in
    parts changes neither what recall finds nor the statistics it ranks by."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(10))
        write(store, CreateOp(make(clock, "b0", "bob", "Harbor", "Espresso at noon.")))
        assert contextual_hits(store, "alice", "harbor espresso")  # the read catches up first
        state = assert_fully_indexed(store, path)
        assert fresh_docs(path) == state.active_docs()  # all eleven wait in the fresh tier
        with snapshot(index_path(path)) as ix:
            assert ix.execute("SELECT count(*) FROM postings").fetchone() == (0,)
        ranked = rank(store.term_index([Scope.identity(REALM, "alice")]), query_terms("harbor espresso"), 100)

        assert store.merge_fresh(4) == 4
        assert len(fresh_docs(path)) == 7
        assert (
            rank(store.term_index([Scope.identity(REALM, "alice")]), query_terms("harbor espresso"), 100)
            == ranked
        )
        assert store.merge_fresh(100) == 7
        assert fresh_docs(path) == set()
        assert_fully_indexed(store, path)
        assert (
            rank(store.term_index([Scope.identity(REALM, "alice")]), query_terms("harbor espresso"), 100)
            == ranked
        )
    finally:
        store.close()


def test_a_reader_follows_another_process_moving_and_removing_fresh_records(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """The store keeps the fresh records of a scope in memory once read. When another connection
    (the indexing process) merges them or applies a removal, the store's next read sees it: no
    record counted twice, none missed, none that left ``active``."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    other = RecallIndexFile(index_path(path))
    realm = sqlite3.connect(path, isolation_level=None)
    try:
        harbor_notes(store, clock, range(6))
        alice = Scope.identity(REALM, "alice")
        assert len(contextual_hits(store, "alice", "harbor")) == 6  # now held in memory
        assert store.term_index([alice]).collection_stats().doc_count == 6

        assert other.merge(3) == 3  # another process moves three into the postings
        assert len(contextual_hits(store, "alice", "harbor")) == 6
        assert store.term_index([alice]).collection_stats().doc_count == 6
        assert store.term_index([alice]).document_frequencies(["harbor"]) == {"harbor": 6}

        # A removal, applied by the other process: of a fresh record, then of a merged one.
        state = read_file_state(path)
        fresh_id, merged_id = (state.records[max(fresh_docs(path))].memory_id, state.records[1].memory_id)
        write(store, TombstoneOp(fresh_id, alice), TombstoneOp(merged_id, alice))
        assert other.catch_up(realm) == 2
        store.term_index([alice])  # the store sees the index caught up: nothing left to do itself
        assert store.backlog() == 0
        hits = contextual_hits(store, "alice", "harbor")
        assert state.ids(hits) == {f"a{n}" for n in range(6)} - {fresh_id, merged_id}
        assert store.term_index([alice]).collection_stats().doc_count == 4
        assert_fully_indexed(store, path)  # (the queue is pruned by the quiet-time task, off here)
    finally:
        realm.close()
        other.close()
        store.close()


def test_a_long_catch_up_writes_straight_into_the_postings(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, no_quiet_time_indexing: None
) -> None:
    """More than FRESH_BATCH_MAX new records at once (a rebuild, a long backlog) skip the fresh
    tier: one big sorted batch is where postings writes are cheapest."""
    from meta_memory.memory.sqlite import recall_index

    monkeypatch.setattr(recall_index, "FRESH_BATCH_MAX", 5)
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(3))
        store.flush_index()
        assert len(fresh_docs(path)) == 3
        harbor_notes(store, clock, range(3, 12))
        store.flush_index()
        assert len(fresh_docs(path)) == 3  # the nine new ones went straight to the postings
        assert_fully_indexed(store, path)
        assert len(contextual_hits(store, "alice", "harbor")) == 12
    finally:
        store.close()


def test_postings_read_for_some_docs_give_each_docs_rows_once_whatever_the_lists_length(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, no_quiet_time_indexing: None
) -> None:
    """A read of some docs' postings names them in an IN list padded to a power of two with
    repeats (recall_index._padded: its statement stays prepared); each doc's row comes once, as
    the whole posting list holds it."""
    from meta_memory.memory.sqlite import recall_index

    monkeypatch.setattr(recall_index, "FRESH_BATCH_MAX", 5)  # straight into the postings
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(12))
        store.flush_index()
        assert fresh_docs(path) == set()
        index = store.term_index([Scope.identity(REALM, "alice")])
        whole = {row[0]: tuple(row) for row in index.postings(["harbor"])["harbor"]}
        assert len(whole) == 12
        docs = sorted(whole)
        for wanted in (docs[:1], docs[:3], docs[2:7], docs[:9], [docs[5], docs[1], docs[11]]):
            padded = len(recall_index._padded(wanted))
            assert padded >= len(wanted) and padded & (padded - 1) == 0  # a power of two
            rows = [tuple(row) for row in index.postings_for_docs(["harbor"], wanted)["harbor"]]
            assert sorted(rows) == sorted(whole[doc] for doc in wanted)
        # Past a ranking's candidates (1,024) a list is read as it is.
        assert len(recall_index._padded(list(range(1025)))) == 1025
    finally:
        store.close()


@pytest.mark.parametrize(("batch", "rounds"), [(1, 60), (9, 20)])
def test_under_writes_that_never_pause_the_fresh_tier_stays_bounded(
    tmp_path: Path,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    no_quiet_time_indexing: None,
    batch: int,
    rounds: int,
) -> None:
    """Without a quiet spell nothing would ever be merged: a catch-up that leaves FRESH_MAX records
    waiting merges then and there. A catch-up can take in a whole batch write (up to
    FRESH_BATCH_MAX records; here 9 against a merge chunk of 6): merging one chunk after each let
    the tier grow by the difference every time (the benchmark fixture, written in batches of
    1,000 against chunks of 512, was left with 272,467 fresh records), so it merges what exceeds
    the bound too."""
    monkeypatch.setattr(indexing, "INDEX_FLUSH_THRESHOLD", 4)
    monkeypatch.setattr(indexing, "FRESH_MAX", 10)
    monkeypatch.setattr(indexing, "MERGE_CHUNK", 6)
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        for round_ in range(rounds):
            numbers = range(round_ * batch, round_ * batch + batch)
            write(
                store, *(CreateOp(make(clock, f"a{n}", "alice", f"Harbor {n}", "Espresso.")) for n in numbers)
            )
            assert len(fresh_docs(path)) < 10 + max(batch, 4), f"after round {round_}"
        assert_fully_indexed(store, path)
        assert len(contextual_hits(store, "alice", "harbor")) == batch * rounds
    finally:
        store.close()


def test_the_quiet_time_task_merges_the_fresh_tier_once_writes_pause_also_after_a_restart(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, eventually: Callable[..., bool]
) -> None:
    """Library runtimes (no indexing process): the upkeep thread merges the fresh tier in a quiet
    spell; records a previous run left there are merged after the next open."""
    monkeypatch.setattr(indexing, "MERGE_QUIET_S", 0.05)
    monkeypatch.setattr(BackgroundIndexer, "MERGE_CHUNK", 4)
    path = tmp_path / "r.sqlite3"
    monkeypatch.setattr(indexing, "MERGE_QUIET_S", 3600.0)
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(10))
        store.flush_index()
        assert len(fresh_docs(path)) == 10
    finally:
        store.close()
    assert len(fresh_docs(path)) == 10  # closing does not merge: the records are safe where they are

    monkeypatch.setattr(indexing, "MERGE_QUIET_S", 0.05)
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        assert eventually(lambda: not fresh_docs(path), timeout_s=20)
        state = assert_fully_indexed(store, path)
        assert len(state.postings) > 0
        harbor_notes(store, clock, range(10, 15))
        assert len(contextual_hits(store, "alice", "harbor")) == 15
        assert eventually(lambda: not fresh_docs(path), timeout_s=20)
        assert len(contextual_hits(store, "alice", "harbor")) == 15
    finally:
        store.close()


def test_an_index_file_with_a_development_builds_fresh_table_is_rebuilt(
    tmp_path: Path, clock: ManualClock, no_quiet_time_indexing: None
) -> None:
    """A development build kept fresh records in a table ``fresh`` of another format; records in
    it would be below the watermark and in neither tier, so such a file is reset and rebuilt."""
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(5))
        store.flush_index()
    finally:
        store.close()
    with closing(sqlite3.connect(index_path(path), isolation_level=None)) as ix:
        ix.execute(
            "CREATE TABLE fresh (doc INTEGER PRIMARY KEY, scope_id INTEGER, length INTEGER, fields TEXT)"
        )
        ix.execute("INSERT INTO fresh SELECT doc, scope_id, length, '{}' FROM fresh_terms")
        ix.execute("DELETE FROM fresh_terms")

    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        assert_reset(path)
        with snapshot(index_path(path)) as ix:
            assert ix.execute("SELECT name FROM sqlite_master WHERE name = 'fresh'").fetchall() == []
        assert len(contextual_hits(store, "alice", "harbor")) == 5
        assert_fully_indexed(store, path)
    finally:
        store.close()


def test_recalls_that_scan_a_long_fresh_tier_have_it_merged_without_waiting_for_quiet(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, eventually: Callable[..., bool]
) -> None:
    """A recall scans its scope's fresh records; once a read finds READS_MERGE_AT of them, the
    next one asks for a merge (here the quiet-time task's, which would otherwise wait for an hour
    of quiet)."""
    monkeypatch.setattr(indexing, "MERGE_QUIET_S", 3600.0)
    monkeypatch.setattr(indexing, "READS_MERGE_AT", 5)
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    try:
        harbor_notes(store, clock, range(4))
        assert len(contextual_hits(store, "alice", "harbor")) == 4
        assert len(contextual_hits(store, "alice", "harbor")) == 4  # 4 fresh: below the mark
        assert not eventually(lambda: not fresh_docs(path), timeout_s=0.5)
        harbor_notes(store, clock, range(4, 8))
        assert len(contextual_hits(store, "alice", "harbor")) == 8  # this read finds 8 fresh
        assert len(contextual_hits(store, "alice", "harbor")) == 8  # and this one asks
        assert eventually(lambda: not fresh_docs(path), timeout_s=20)
        assert len(contextual_hits(store, "alice", "harbor")) == 8
        assert_fully_indexed(store, path)
    finally:
        store.close()


def test_merges_are_paced_to_hold_the_index_file_briefly(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch, no_quiet_time_indexing: None
) -> None:
    """A merge holds the index file's write lock; each full chunk sizes the next to take about
    MERGE_TARGET_S, between MERGE_CHUNK_MIN and the pacer's most, and the last one reports the
    fresh tier empty."""
    monkeypatch.setattr(indexing, "MERGE_CHUNK_MIN", 8)
    path = tmp_path / "r.sqlite3"
    store = SqliteRealmStore(path, REALM, clock=clock)
    index = RecallIndexFile(index_path(path))
    try:
        harbor_notes(store, clock, range(100))
        store.flush_index()
        assert len(fresh_docs(path)) == 100

        monkeypatch.setattr(indexing, "MERGE_TARGET_S", 3600.0)  # any chunk is quick enough
        roomy = indexing.MergePacer(40)
        assert roomy.merge(index) == (40, False) and roomy.chunk == 40  # never past its most

        monkeypatch.setattr(indexing, "MERGE_TARGET_S", 1e-9)  # every chunk is too slow
        tight = indexing.MergePacer(40)
        assert tight.merge(index) == (40, False) and tight.chunk == 8  # down to the least
        assert tight.merge(index) == (8, False)
        moved = []
        while True:
            n, empty = tight.merge(index)
            moved.append(n)
            if empty:
                break
        assert sum(moved) == 100 - 40 - 40 - 8 and moved[-1] < 8
        assert fresh_docs(path) == set()
        assert len(contextual_hits(store, "alice", "harbor")) == 100
        assert_fully_indexed(store, path)
    finally:
        index.close()
        store.close()
