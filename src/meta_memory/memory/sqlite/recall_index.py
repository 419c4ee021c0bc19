"""A realm's recall index, in a SQLite file of its own beside the realm file.

The index (``postings``: one row per scope, term and active record; ``scope_stats``: each scope's
active-record count and total indexed length; ``terms``; ``fresh_terms``, the newest records
waiting to be merged into ``postings``, one row each: see :class:`RecallIndexFile`; and
``scope_docs``, every record it holds by scope and creation order, for neighbour reads) is derived
data: everything in it can be rebuilt from the realm file. It lives in its own file
(``StateLayout.recall_index_path``) so that another process can build it without contending for the realm file's one writer (measured:
a helper writing postings into the realm file itself halved remember throughput; into a file of
its own, it cost the writer nothing). Whoever applies the backlog (the realm store inline, its
quiet-time upkeep task, or the indexing process, index_worker.py) runs the same
:meth:`RecallIndexFile.catch_up`, in one write transaction on this file, so they can never apply
the same work twice.

Two watermarks in ``meta`` say how far the index goes:

- ``indexed_upto`` over ``records.doc`` (creation order): every record at or below it was
  indexed exactly when it was active in the realm snapshot that indexed it; records above it are
  the backlog, indexed by their status when it is applied. Records only ever become active when
  they are created, so what follows can only be a removal.
- ``queue_upto`` over the realm file's ``index_queue``: every record that leaves ``active``
  appends a ``remove`` there, in the write's own transaction (``add`` rows are honoured for files
  written by earlier releases). A removal of a record above ``indexed_upto`` is skipped: the
  new-records pass reads its status.

The file also records which realm file (``realm_uid``) and which analyzer built it; an index that
is not this realm file's, was built by another analyzer, or claims more than the realm holds is
reset and rebuilt (:meth:`RecallIndexFile.verify`).
"""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from ...errors import StoreCorrupt
from ...storage.layout import StateLayout
from ..recall.analyzer import ANALYZER_VERSION, AnalyzedRecord, analyze_record
from ..recall.scorer import DEFAULT_PARAMS
from .checkpoint import WAL_KEEP_BYTES, truncate_wal

__all__ = [
    "RecallIndexFile",
    "adopt_in_file_index",
    "backlog_size",
    "connect_readonly",
    "open_index_file",
    "read_marks",
    "realm_extent",
]

_log = logging.getLogger(__name__)

INDEXED_UPTO = "indexed_upto"
QUEUE_UPTO = "queue_upto"
# Set once ``scope_docs`` lists every record the index holds: index files made before it existed
# get it filled from the realm file when they are opened (RecallIndexFile.verify).
SCOPE_DOCS = "scope_docs"
TERMS_EPOCH = "terms_epoch"
# A purge checks whether its terms are still used by probing postings once per (scope, term) up
# to this many times; past it, one pass over postings is cheaper.
_PROBES_MAX = 2_000_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS {p}meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS {p}terms (term_id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS {p}postings (
    scope_id INTEGER NOT NULL,
    term_id INTEGER NOT NULL,
    doc INTEGER NOT NULL,
    tf_title INTEGER NOT NULL,
    tf_body INTEGER NOT NULL,
    tf_tags INTEGER NOT NULL,
    length INTEGER NOT NULL,                -- the record's indexed length, for BM25
    PRIMARY KEY (scope_id, term_id, doc)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {p}scope_stats (
    scope_id INTEGER PRIMARY KEY,
    doc_count INTEGER NOT NULL,
    total_len INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS {p}fresh_terms (
    doc INTEGER PRIMARY KEY,
    scope_id INTEGER NOT NULL,
    length INTEGER NOT NULL,
    terms TEXT NOT NULL                     -- ' term:tf_title:tf_body:tf_tags term:... ' (see _entries)
);
CREATE INDEX IF NOT EXISTS {p}fresh_terms_by_scope ON fresh_terms (scope_id, doc);
CREATE TABLE IF NOT EXISTS {p}scope_docs (
    scope_id INTEGER NOT NULL,
    doc INTEGER NOT NULL,                   -- every record the index holds, in either tier
    PRIMARY KEY (scope_id, doc)
) WITHOUT ROWID;
"""

# A catch-up that takes in more new records than this at once (a rebuild, a long backlog) writes
# them straight into ``postings``: one big sorted batch is where postings writes are cheapest.
FRESH_BATCH_MAX = 1024

# (doc, scope_id, analysis) of one record to add to the index.
Analyzed = tuple[int, int, AnalyzedRecord]
# (doc, scope_id, length, {term: (tf_title, tf_body, tf_tags)}): one record's postings.
DocPostings = tuple[int, int, int, Mapping[str, Sequence[int]]]
# (doc, tf_title, tf_body, tf_tags, length): one posting as the ranker reads it.
PostingRow = tuple[int, int, int, int, int]


def connect_readonly(path: Path, *options: str) -> sqlite3.Connection:
    """A read-only connection to ``path`` (any characters in it are the file's, not URI syntax),
    with more URI ``options`` such as ``"immutable=1"``."""
    uri = f"file:{quote(str(path), safe='/')}?" + "&".join(("mode=ro", *options))
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def realm_extent(realm: sqlite3.Connection) -> tuple[int, int]:
    """The realm file's newest record ``doc`` and newest ``index_queue`` seq (0 when none)."""
    (max_doc,) = realm.execute("SELECT coalesce(max(doc), 0) FROM records").fetchone()
    row = realm.execute("SELECT seq FROM sqlite_sequence WHERE name = 'index_queue'").fetchone()
    return int(max_doc), int(row[0]) if row else 0


def read_marks(index: sqlite3.Connection) -> tuple[int, int]:
    """An index file's (indexed_upto, queue_upto); (0, 0) for one without them yet."""
    try:
        meta = dict(
            index.execute("SELECT key, value FROM meta WHERE key IN (?, ?)", (INDEXED_UPTO, QUEUE_UPTO))
        )
    except sqlite3.OperationalError:  # no meta table: an empty index
        return 0, 0
    return int(meta.get(INDEXED_UPTO, 0)), int(meta.get(QUEUE_UPTO, 0))


def read_fresh_size(index: sqlite3.Connection) -> int:
    """How many records wait in an index file's fresh tier for a merge; 0 for one without it."""
    try:
        (n,) = index.execute("SELECT count(*) FROM fresh_terms").fetchone()
    except sqlite3.OperationalError:  # no fresh tier yet: an empty index
        return 0
    return int(n)


def backlog_size(realm: sqlite3.Connection, indexed_upto: int, queue_upto: int) -> int:
    """Queued removals plus active records above the watermark: what the next catch-up does."""
    (queued,) = realm.execute("SELECT count(*) FROM index_queue WHERE seq > ?", (queue_upto,)).fetchone()
    (new,) = realm.execute(
        "SELECT count(*) FROM records WHERE doc > ? AND status = 'active'", (indexed_upto,)
    ).fetchone()
    return int(queued) + int(new)


def _analyze(rows: Iterable[tuple[int, int, str, str, str]]) -> list[Analyzed]:
    return [
        (doc, scope_id, analyze_record(title, body, json.loads(tags)))
        for doc, scope_id, title, body, tags in rows
    ]


def adopt_in_file_index(realm: sqlite3.Connection, index_path: Path) -> None:
    """Move the in-file recall index of a realm file from schemas 1-5 into ``index_path``
    (C-speed copies), so an upgrade rebuilds nothing.

    Run before migration 6 drops the in-file tables. Schema 5 records its watermark; before it,
    every record was indexed or had an ``add`` queued, so the watermark is the newest record (as
    migration 5 set it) and the queued rows say what remains. A file without a recorded analyzer
    version was built by this analyzer (version 1, the only one before versions were recorded).
    Safe to repeat: the index file is created afresh each time, and a crash before the
    migration commits leaves the in-file index in place.
    """
    for stale in (index_path, *StateLayout.sqlite_sidecars(index_path)):
        stale.unlink(missing_ok=True)
    realm.execute("ATTACH DATABASE ? AS ix", (str(index_path),))
    try:
        realm.execute("PRAGMA ix.journal_mode = WAL").fetchone()
        realm.executescript(_SCHEMA.format(p="ix."))
        realm.execute("BEGIN IMMEDIATE")
        try:
            realm.execute("INSERT INTO ix.terms SELECT term_id, term FROM main.terms")
            realm.execute(
                "INSERT INTO ix.postings SELECT scope_id, term_id, doc, tf_title, tf_body, tf_tags, length "
                "FROM main.postings"
            )
            realm.execute(
                "INSERT INTO ix.scope_stats SELECT scope_id, doc_count, total_len FROM main.scopes "
                "WHERE doc_count > 0"
            )
            realm.execute(
                "CREATE TABLE IF NOT EXISTS main.store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            meta = dict(realm.execute("SELECT key, value FROM main.store_meta").fetchall())
            if INDEXED_UPTO not in meta:
                (newest,) = realm.execute("SELECT coalesce(max(doc), 0) FROM main.records").fetchone()
                meta[INDEXED_UPTO] = str(newest)
            realm.execute(
                "INSERT INTO main.store_meta (key, value) VALUES ('realm_uid', lower(hex(randomblob(16)))) "
                "ON CONFLICT (key) DO NOTHING"
            )
            (uid,) = realm.execute("SELECT value FROM main.store_meta WHERE key = 'realm_uid'").fetchone()
            realm.executemany(
                "INSERT INTO ix.meta (key, value) VALUES (?, ?)",
                [
                    ("realm_uid", uid),
                    ("analyzer_version", meta.get("analyzer_version", "1")),
                    (INDEXED_UPTO, meta.get(INDEXED_UPTO, "0")),
                    (QUEUE_UPTO, "0"),  # every queued operation is still to apply
                ],
            )
            realm.execute("COMMIT")
        except BaseException:
            realm.execute("ROLLBACK")
            raise
    finally:
        realm.execute("DETACH DATABASE ix")


def _entries(fields: Mapping[str, Sequence[int]]) -> str:
    """A record's postings as one ``fresh_terms.terms`` string: a space, then ``term:tf_title:
    tf_body:tf_tags`` and a space for each term. Index terms are ``[a-z0-9]`` words, optionally
    after ``~`` or ``#`` (analyzer.py; a property test pins it), so ``instr(terms, ' term:')``
    finds exactly the records holding ``term``, in C."""
    return " " + " ".join(f"{term}:{a}:{b}:{c}" for term, (a, b, c) in fields.items()) + " "


def _parse_entries(terms: str) -> dict[str, tuple[int, int, int]]:
    out: dict[str, tuple[int, int, int]] = {}
    for entry in terms.split():
        term, a, b, c = entry.split(":")
        out[term] = (int(a), int(b), int(c))
    return out


class RecallIndexFile:
    """One realm's recall-index file: its connection, watermarks, term ids and reads.

    The index has two tiers. ``postings`` holds one row per (scope, term, record), keyed for
    reading: a record's few dozen rows land on as many b-tree pages, so writing them costs
    about one page per posting unless many records go in at once (measured: 1.5 ms a record in
    batches of 16, 0.3 ms in batches of 4,096). So new records first go into ``fresh_terms``,
    one row each (the record's analyzed terms as one string, appended in ``doc`` order: a
    fraction of a page), and :meth:`merge` moves them into ``postings`` in large sorted batches,
    when the realm is quiet or the fresh tier is long. A record is in exactly one tier. Reads
    see both, in one read transaction: the fresh tier (a few thousand rows at most) is searched
    per term with ``instr`` in C, and what that finds is memoized until the file changes.

    Not thread-safe by itself: the realm store calls it under its lock, the indexing process
    from its one thread.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        try:
            self._db.execute("PRAGMA busy_timeout = 5000")
            # Postings are many small random-key b-tree writes and reads: keep hot pages cached.
            self._db.execute("PRAGMA cache_size = -65536")
            self._db.execute("PRAGMA mmap_size = 1073741824")
            self._db.execute("PRAGMA journal_mode = WAL").fetchone()
            self._db.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
            # Derived data: a commit need not reach the disk before the next one.
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.executescript(_SCHEMA.format(p=""))
        except BaseException:
            self._db.close()
            raise
        self._term_ids: dict[str, int] = {}
        self._new_terms: list[str] = []
        # ``terms`` only grows, except that a purge deletes the terms only purged records used
        # and moves ``terms_epoch``: a connection that sees it move drops its term ids.
        self._terms_epoch = self._read_terms_epoch()
        # Read-side memos, valid while no other connection has written the file since they were
        # filled (PRAGMA data_version) and dropped on this connection's own writes:
        # scope_id -> term_id -> df in ``postings``; (scope_id, term) -> its fresh postings;
        # scope_id -> (count, total length) of its fresh records.
        self._df: dict[int, dict[int, int]] = {}
        self._fresh_postings: dict[tuple[int, str], list[PostingRow]] = {}
        self._fresh_stats: dict[int, tuple[int, int]] = {}
        self._data_version = -1
        self._reading = False  # inside a read transaction (see reading())
        # The most fresh records a read found in one scope since the file last changed.
        self.fresh_seen = 0

    # -- state ------------------------------------------------------------------------------

    def marks(self) -> tuple[int, int]:
        """(indexed_upto, queue_upto)."""
        return read_marks(self._db)

    def lag(self, realm: sqlite3.Connection) -> tuple[int, int]:
        """How far behind the realm file the index is, from four small reads: (records created
        past ``indexed_upto``, removals queued past ``queue_upto``). Upper bounds: a record
        created and left ``active`` before the index got to it counts, though there is nothing to do."""
        max_doc, max_seq = realm_extent(realm)
        indexed, queued = self.marks()
        return max(0, max_doc - indexed), max(0, max_seq - queued)

    def behind(self, realm: sqlite3.Connection) -> bool:
        """Whether the realm file holds records or removals this index has not applied."""
        return any(self.lag(realm))

    def backlog(self, realm: sqlite3.Connection) -> int:
        return backlog_size(realm, *self.marks())

    def fresh_size(self) -> int:
        """How many records wait in the fresh tier for :meth:`merge`."""
        return read_fresh_size(self._db)

    def meta(self) -> dict[str, str]:
        return dict(self._db.execute("SELECT key, value FROM meta"))

    def verify(self, realm: sqlite3.Connection, realm_uid: str) -> bool:
        """Reset the index unless it is this realm file's, by this analyzer, and claims no more
        than the file holds (a realm file restored from a backup); returns whether it reset an
        index that had been built (a new, empty file is only stamped)."""
        meta = self.meta()
        max_doc, max_seq = realm_extent(realm)
        # A development build kept the fresh tier in a table named ``fresh``, in another format.
        legacy = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'fresh'")
        if (
            legacy.fetchone() is None
            and meta.get("realm_uid") == realm_uid
            and meta.get("analyzer_version") == str(ANALYZER_VERSION)
            and int(meta.get(INDEXED_UPTO, 0)) <= max_doc
            and int(meta.get(QUEUE_UPTO, 0)) <= max_seq
        ):
            if SCOPE_DOCS not in meta:
                self._fill_scope_docs(realm)
            return False
        with self._writing():
            db = self._db
            db.execute("DELETE FROM postings")
            db.execute("DELETE FROM scope_stats")
            db.execute("DELETE FROM fresh_terms")
            db.execute("DELETE FROM scope_docs")
            db.execute("DROP TABLE IF EXISTS fresh")
            db.execute("DELETE FROM meta")
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?)",
                [
                    ("realm_uid", realm_uid),
                    ("analyzer_version", str(ANALYZER_VERSION)),
                    (INDEXED_UPTO, "0"),
                    (QUEUE_UPTO, str(max_seq)),  # everything is re-indexed from its status now
                    (SCOPE_DOCS, "1"),
                ],
            )
        return bool(meta)

    def _fill_scope_docs(self, realm: sqlite3.Connection) -> None:
        """List in ``scope_docs`` what an index file made before that table holds: the records at
        or below ``indexed_upto`` that are active, or left ``active`` by a removal the index has
        not applied yet (what catch-ups put in, less what they took out), except those whose
        queued ``add`` (files of schema 4 and before) it has not applied yet. One snapshot of the
        realm file."""
        with self._writing() as db:
            indexed, queued = self.marks()
            realm.execute("BEGIN")
            try:
                rows = realm.execute(
                    "SELECT scope_id, doc FROM records WHERE doc <= ?1 "
                    "AND doc NOT IN (SELECT doc FROM index_queue WHERE seq > ?2 AND op = 'add') "
                    "AND (status = 'active' OR doc IN (SELECT doc FROM index_queue WHERE seq > ?2 AND op = 'remove')) "
                    "ORDER BY scope_id, doc",
                    (indexed, queued),
                ).fetchall()
            finally:
                realm.execute("COMMIT")
            self._list_docs(rows)
            db.execute(
                "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT (key) DO NOTHING", (SCOPE_DOCS,)
            )

    # -- applying the backlog ---------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction on the index file; on rollback, forget the term ids it handed
        out. Either way the read memos are dropped (this connection's own commits do not move
        ``data_version``)."""
        assert not self._reading, "a write inside a read transaction of the index file"
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            self._check_terms_epoch()
            yield db
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            # Term ids handed out inside the rolled-back transaction do not exist.
            for term in self._new_terms:
                self._term_ids.pop(term, None)
            raise
        finally:
            self._new_terms = []
            self._forget_reads()

    def catch_up(self, realm: sqlite3.Connection, limit: int | None = None) -> int:
        """Apply what the realm file holds beyond the watermarks; returns the records it touched.

        ``realm`` is read in one snapshot (its open read transaction's, if it is in one). ``limit``: take
        in at most this many new records (by ``doc``) so a long backlog can be applied in short
        transactions; queued removals are always applied whole. New records go to the fresh
        tier, unless there are more than FRESH_BATCH_MAX of them.
        """
        with self._writing() as db:
            indexed, queued = self.marks()
            own_snapshot = not realm.in_transaction  # else: the caller's read transaction's
            if own_snapshot:
                realm.execute("BEGIN")
            try:
                queue = realm.execute(
                    "SELECT q.seq, q.doc, q.op, r.scope_id, r.title, r.body, r.tags "
                    "FROM index_queue q JOIN records r ON r.doc = q.doc WHERE q.seq > ? ORDER BY q.seq",
                    (queued,),
                ).fetchall()
                max_doc, max_seq = realm_extent(realm)
                upto = max_doc if limit is None else min(max_doc, indexed + limit)
                new = (
                    realm.execute(
                        "SELECT doc, scope_id, title, body, tags FROM records "
                        "WHERE doc > ? AND doc <= ? AND status = 'active'",
                        (indexed, upto),
                    ).fetchall()
                    if upto > indexed
                    else []
                )
            finally:
                if own_snapshot:
                    realm.execute("COMMIT")
            done = 0
            for _seq, doc, op, scope_id, title, body, tags in queue:
                if doc > indexed:
                    continue  # never indexed: the new-records pass reads its status
                if op == "add":
                    self._add_fresh(_analyze([(doc, scope_id, title, body, tags)]))
                    self._list_docs([(scope_id, doc)])
                else:
                    if not db.execute("DELETE FROM fresh_terms WHERE doc = ?", (doc,)).rowcount:
                        self._delete(doc, scope_id, analyze_record(title, body, json.loads(tags)))
                    db.execute("DELETE FROM scope_docs WHERE scope_id = ? AND doc = ?", (scope_id, doc))
                done += 1
            batch = _analyze(new)
            if len(batch) > FRESH_BATCH_MAX:
                self._insert((doc, scope_id, a.length, a.fields) for doc, scope_id, a in batch)
            else:
                self._add_fresh(batch)
            self._list_docs(sorted((scope_id, doc) for doc, scope_id, _ in batch))
            done += len(batch)
            db.executemany(
                "INSERT INTO meta (key, value) VALUES (?, ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [(INDEXED_UPTO, str(max(indexed, upto))), (QUEUE_UPTO, str(max(queued, max_seq)))],
            )
        return done

    def _read_terms_epoch(self) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (TERMS_EPOCH,)).fetchone()
        return row[0] if row else None

    def _check_terms_epoch(self) -> None:
        epoch = self._read_terms_epoch()
        if epoch != self._terms_epoch:
            self._terms_epoch = epoch
            self._term_ids.clear()

    def purge_docs(self, texts: Sequence[tuple[int, int, str, str, str]], newest_doc: int) -> None:
        """Take purged records out of the index, whichever tier holds them, with the terms no
        other record uses (``texts``: (doc, scope_id, title, body, tags JSON) of each, read before
        the realm file deleted them; the caller rewrites the file afterwards), and bring
        ``indexed_upto`` down to ``newest_doc``, the realm's newest doc left (the next record
        takes the doc after it, which may be a purged one's)."""
        from .purge import lower_mark

        terms: set[str] = set()
        with self._writing() as db:
            lower_mark(db, INDEXED_UPTO, newest_doc)
            for doc, scope_id, title, body, tags in texts:
                analysis = analyze_record(title, body, json.loads(tags))
                terms.update(analysis.fields)
                held = db.execute(
                    "DELETE FROM scope_docs WHERE scope_id = ? AND doc = ?", (scope_id, doc)
                ).rowcount
                if held and not db.execute("DELETE FROM fresh_terms WHERE doc = ?", (doc,)).rowcount:
                    self._delete(doc, scope_id, analysis)
            ids = list(self.lookup_term_ids(terms).values())
            unused = self._unused_terms(ids)
            if unused:
                marks = json.dumps(unused)
                db.execute("DELETE FROM terms WHERE term_id IN (SELECT value FROM json_each(?))", (marks,))
                epoch = str(int(self._terms_epoch or 0) + 1)
                db.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (TERMS_EPOCH, epoch),
                )
                self._terms_epoch = epoch
                self._term_ids.clear()

    def _unused_terms(self, term_ids: Sequence[int]) -> list[int]:
        """Which of ``term_ids`` no posting uses. ``postings`` is keyed (scope, term, doc): probed
        once per scope and term while that is cheap, else read through once."""
        if not term_ids:
            return []
        (scopes,) = self._db.execute("SELECT count(*) FROM scope_stats").fetchone()
        ids = json.dumps(list(term_ids))
        if len(term_ids) * max(1, int(scopes)) <= _PROBES_MAX:
            used = {
                t
                for (t,) in self._db.execute(
                    "SELECT t.value FROM json_each(?) t WHERE EXISTS (SELECT 1 FROM scope_stats s CROSS "
                    "JOIN postings p ON p.scope_id = s.scope_id AND p.term_id = t.value)",
                    (ids,),
                )
            }
        else:
            used = {
                t
                for (t,) in self._db.execute(
                    "SELECT DISTINCT term_id FROM postings WHERE term_id IN (SELECT value FROM json_each(?))",
                    (ids,),
                )
            }
        return [t for t in term_ids if t not in used]

    def merge(self, limit: int) -> int:
        """Move up to ``limit`` of the oldest fresh records into ``postings``, in one
        transaction; returns how many it moved (fewer than ``limit``: the fresh tier is now empty)."""
        with self._writing() as db:
            rows = db.execute(
                "SELECT doc, scope_id, length, terms FROM fresh_terms ORDER BY doc LIMIT ?", (limit,)
            ).fetchall()
            if rows:
                self._insert(
                    (doc, scope_id, length, _parse_entries(terms)) for doc, scope_id, length, terms in rows
                )
                db.execute("DELETE FROM fresh_terms WHERE doc <= ?", (rows[-1][0],))
        return len(rows)

    def _list_docs(self, rows: Sequence[tuple[int, int]]) -> None:
        # OR IGNORE: a record an index file made before scope_docs lists may be there already.
        self._db.executemany("INSERT OR IGNORE INTO scope_docs (scope_id, doc) VALUES (?, ?)", rows)

    def _add_fresh(self, batch: Sequence[Analyzed]) -> None:
        self._db.executemany(
            "INSERT INTO fresh_terms (doc, scope_id, length, terms) VALUES (?, ?, ?, ?)",
            [(doc, scope_id, a.length, _entries(a.fields)) for doc, scope_id, a in batch],
        )

    def _term_id(self, term: str) -> int:
        term_id = self._term_ids.get(term)
        if term_id is None:
            row = self._db.execute("SELECT term_id FROM terms WHERE term = ?", (term,)).fetchone()
            if row is None:
                term_id = self._db.execute("INSERT INTO terms (term) VALUES (?)", (term,)).lastrowid
                self._new_terms.append(term)
            else:
                term_id = row[0]
            assert term_id is not None
            self._term_ids[term] = term_id
        return term_id

    def _insert(self, batch: Iterable[DocPostings]) -> None:
        term_id = self._term_id
        rows: list[tuple[int, int, int, int, int, int, int]] = []
        deltas: dict[int, list[int]] = {}
        for doc, scope_id, length, fields in batch:
            for term, (tf_title, tf_body, tf_tags) in fields.items():
                rows.append((scope_id, term_id(term), doc, tf_title, tf_body, tf_tags, length))
            delta = deltas.setdefault(scope_id, [0, 0])
            delta[0] += 1
            delta[1] += length
        if not deltas:
            return
        rows.sort()  # key order: each b-tree page is visited once per batch
        self._db.executemany(
            "INSERT INTO postings (scope_id, term_id, doc, tf_title, tf_body, tf_tags, length) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        self._db.executemany(
            "INSERT INTO scope_stats (scope_id, doc_count, total_len) VALUES (?, ?, ?) ON CONFLICT (scope_id) "
            "DO UPDATE SET doc_count = doc_count + excluded.doc_count, total_len = total_len + excluded.total_len",
            [(scope_id, count, length) for scope_id, (count, length) in deltas.items()],
        )

    def _delete(self, doc: int, scope_id: int, analysis: AnalyzedRecord) -> None:
        # Postings are keyed (scope, term, doc): the doc's terms come from re-analyzing its text.
        ids = self.lookup_term_ids(analysis.fields)
        self._db.executemany(
            "DELETE FROM postings WHERE scope_id = ? AND term_id = ? AND doc = ?",
            [(scope_id, term_id, doc) for term_id in ids.values()],
        )
        self._db.execute(
            "UPDATE scope_stats SET doc_count = doc_count - 1, total_len = total_len - ? WHERE scope_id = ?",
            (analysis.length, scope_id),
        )

    # -- reads ----------------------------------------------------------------------------------

    def _forget_reads(self) -> None:
        self.fresh_seen = 0
        self._df.clear()
        self._fresh_postings.clear()
        self._fresh_stats.clear()

    @contextmanager
    def _snapshot(self) -> Iterator[sqlite3.Connection]:
        """One read transaction, so both tiers are read as of the same commit (a merge moves
        records between them), with the memos dropped if another connection wrote the file.
        Inside :meth:`reading`, the reading's own."""
        db = self._db
        if self._reading:
            yield db
            return
        db.execute("BEGIN")
        self._reading = True
        try:
            (version,) = db.execute("PRAGMA data_version").fetchone()
            if version != self._data_version:
                self._data_version = version
                self._forget_reads()
                self._check_terms_epoch()
            yield db
        finally:
            self._reading = False
            db.execute("COMMIT")

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Every read until the block ends in one read transaction: a recall's statistics,
        postings and neighbours agree, and it starts one transaction, not one per read (each a
        few system calls: measured, 22 statements a recall before). No write may start on this
        connection meanwhile: the caller holds the realm store's lock, and has caught up first."""
        with self._snapshot():
            yield

    def _fresh_stats_of(self, scope_id: int) -> tuple[int, int]:
        """(count, total length) of the scope's fresh records (inside :meth:`_snapshot`)."""
        stats = self._fresh_stats.get(scope_id)
        if stats is None:
            count, total = self._db.execute(
                "SELECT count(*), coalesce(sum(length), 0) FROM fresh_terms WHERE scope_id = ?", (scope_id,)
            ).fetchone()
            stats = self._fresh_stats[scope_id] = (int(count), int(total))
            self.fresh_seen = max(self.fresh_seen, stats[0])
        return stats

    def _fresh_postings_of(self, scope_id: int, terms: Collection[str]) -> dict[str, list[PostingRow]]:
        """The scope's fresh postings of each of ``terms`` (inside :meth:`_snapshot`). One pass
        over the scope's fresh rows finds, in C, those holding any term not memoized yet; only
        those reach Python."""
        memo = self._fresh_postings
        missing = [term for term in terms if (scope_id, term) not in memo]
        if missing:
            if len(memo) > 50_000:  # a bound, not an eviction policy
                memo.clear()
            found: dict[str, list[PostingRow]] = {term: [] for term in missing}
            if self._fresh_stats_of(scope_id)[0]:
                needles = [f" {term}:" for term in missing]
                rows = self._db.execute(
                    "SELECT doc, length, terms FROM fresh_terms WHERE scope_id = ? AND ("
                    + " OR ".join(["instr(terms, ?) > 0"] * len(needles))
                    + ")",
                    (scope_id, *needles),
                )
                for doc, length, entries in rows:
                    for term, needle in zip(missing, needles, strict=True):
                        at = entries.find(needle)
                        if at >= 0:
                            start = at + len(needle)
                            tf_title, tf_body, tf_tags = entries[start : entries.index(" ", start)].split(":")
                            found[term].append((doc, int(tf_title), int(tf_body), int(tf_tags), length))
            for term, postings in found.items():
                memo[(scope_id, term)] = postings
        return {term: memo[(scope_id, term)] for term in terms}

    def lookup_term_ids(self, terms: Iterable[str]) -> dict[str, int]:
        """Ids of the terms ``postings`` knows (terms it never took in are absent)."""
        out: dict[str, int] = {}
        missing: list[str] = []
        for term in terms:
            term_id = self._term_ids.get(term)
            if term_id is None:
                missing.append(term)
            else:
                out[term] = term_id
        if missing:
            marks = ",".join("?" * len(missing))
            for term, term_id in self._db.execute(
                f"SELECT term, term_id FROM terms WHERE term IN ({marks})", missing
            ):
                self._term_ids[term] = term_id
                out[term] = term_id
        return out

    def collection_stats(self, scope_id: int) -> tuple[int, int]:
        with self._snapshot() as db:
            row = db.execute(
                "SELECT doc_count, total_len FROM scope_stats WHERE scope_id = ?", (scope_id,)
            ).fetchone()
            count, total = (int(row[0]), int(row[1])) if row else (0, 0)
            fresh_count, fresh_total = self._fresh_stats_of(scope_id)
        return count + fresh_count, total + fresh_total

    def document_frequencies(self, scope_id: int, terms: Collection[str]) -> dict[str, int]:
        # Counted from the postings range itself (C-speed, no per-write df upkeep: a df table
        # would double the index's random page writes), memoized until the file changes.
        out: dict[str, int] = {}
        with self._snapshot() as db:
            cache = self._df.setdefault(scope_id, {})
            if len(cache) > 50_000:  # a bound, not an eviction policy: refill on demand
                cache.clear()
            for term, term_id in self.lookup_term_ids(terms).items():
                df = cache.get(term_id)
                if df is None:
                    (df,) = db.execute(
                        "SELECT count(*) FROM postings WHERE scope_id = ? AND term_id = ?",
                        (scope_id, term_id),
                    ).fetchone()
                    cache[term_id] = df
                if df:
                    out[term] = df
            for term, fresh in self._fresh_postings_of(scope_id, terms).items():
                if fresh:
                    out[term] = out.get(term, 0) + len(fresh)
        return out

    def postings(
        self, scope_ids: Sequence[int], terms: Collection[str], docs: Sequence[int] | None
    ) -> dict[str, list[PostingRow]]:
        """``(doc, tf_title, tf_body, tf_tags, length)`` rows per term, over the scopes (a
        document is in one), of ``docs`` only if given: one statement per term, whatever the
        number of scopes (a seek per scope in the primary key)."""
        out: dict[str, list[PostingRow]] = {}
        where = f"scope_id IN ({','.join('?' * len(scope_ids))})" if len(scope_ids) > 1 else "scope_id = ?"
        listed = () if docs is None else _padded(docs)
        with self._snapshot() as db:
            for term, term_id in self.lookup_term_ids(terms).items():
                sql = f"SELECT doc, tf_title, tf_body, tf_tags, length FROM postings WHERE {where} AND term_id = ?"
                args: list[int] = [*scope_ids, term_id]
                if docs is not None:
                    sql += f" AND doc IN ({','.join('?' * len(listed))})"
                    args.extend(listed)
                rows = db.execute(sql, args).fetchall()
                if rows:
                    out[term] = rows
            wanted = None if docs is None else set(docs)
            for scope_id in scope_ids:
                for term, fresh in self._fresh_postings_of(scope_id, terms).items():
                    extra = fresh if wanted is None else [row for row in fresh if row[0] in wanted]
                    if extra:
                        out.setdefault(term, []).extend(extra)
        return out

    def neighbors(self, scope_id: int, docs: Collection[int]) -> dict[int, list[int]]:
        """Each doc's previous and next record in the scope, in creation order (zero, one or
        two docs), among those the index holds: one statement of two seeks per doc."""
        out: dict[int, list[int]] = {}
        with self._snapshot() as db:
            for doc in docs:
                row = db.execute(
                    "SELECT (SELECT max(doc) FROM scope_docs WHERE scope_id = ?1 AND doc < ?2), "
                    "(SELECT min(doc) FROM scope_docs WHERE scope_id = ?1 AND doc > ?2)",
                    (scope_id, doc),
                ).fetchone()
                out[doc] = [d for d in row if d is not None]
        return out

    def truncate_wal(self) -> bool:
        """Cut the file's WAL to nothing if nobody is in the way (the indexing process, idle); whether it did."""
        return truncate_wal(self._db, 5000)

    def scrub(self) -> bool:
        """Rewrite the file from its live rows and cut its WAL (after :meth:`purge_docs`)."""
        from .purge import rewrite

        return rewrite(self._db, self.path.name)

    def close(self) -> None:
        self._db.close()


def _padded(docs: Sequence[int]) -> Sequence[int]:
    """``docs`` with its last repeated up to a power of two long: a ranking's IN lists (1 to 1,024
    docs) then take one of a few statements, which stay prepared (the connection keeps 128; a new
    one for a 162-doc list cost a third of its 0.33 ms read). IN is a set: a repeat adds nothing.
    A list longer than a ranking's (RankParams.candidate_cap) is left as it is: far from SQLite's
    limit on a statement's parameters either way."""
    size = 1 << max(len(docs) - 1, 0).bit_length()
    if not docs or size == len(docs) or len(docs) > _PADDED_MAX:
        return docs
    return [*docs, *[docs[-1]] * (size - len(docs))]


_PADDED_MAX = DEFAULT_PARAMS.candidate_cap


def open_index_file(index_path: Path, realm: sqlite3.Connection, realm_path: Path) -> RecallIndexFile:
    """The realm's recall-index file, verified against the realm file (``realm``, at schema 6).

    It is derived data: one that cannot be read (not SQLite, truncated, corrupt pages) is deleted
    and rebuilt, which is backlog work.

    Raises:
        StoreCorrupt: not even a new index file can be created there.
    """
    (realm_uid,) = realm.execute("SELECT value FROM store_meta WHERE key = 'realm_uid'").fetchone()
    try:
        return _open_verified(index_path, realm, realm_uid, realm_path)
    except sqlite3.DatabaseError as exc:
        _log.warning("recall index %s is unreadable (%s); rebuilding it from %s", index_path, exc, realm_path)
    for stale in (index_path, *StateLayout.sqlite_sidecars(index_path)):
        stale.unlink(missing_ok=True)
    try:
        return _open_verified(index_path, realm, realm_uid, realm_path)
    except sqlite3.Error as exc:
        _log.error("cannot create recall index file %s: %s", index_path, exc)
        raise StoreCorrupt(
            f"the recall index file {index_path.name} cannot be created (see the server log)",
            data={"kind": "realm_refused", "file": index_path.name},
        ) from exc


def _open_verified(
    index_path: Path, realm: sqlite3.Connection, realm_uid: str, realm_path: Path
) -> RecallIndexFile:
    index = RecallIndexFile(index_path)
    try:
        if index.verify(realm, realm_uid):
            _log.info("recall index %s rebuilds from %s", index_path, realm_path)
    except BaseException:
        index.close()
        raise
    return index
