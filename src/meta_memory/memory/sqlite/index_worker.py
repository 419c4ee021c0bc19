"""The indexing process: builds realms' recall-index files beside the process that writes them.

Applying the recall index costs about as much CPU as the rest of a ``remember`` (analysis,
then dozens of postings per record), and in one interpreter it competes with the request
thread for the GIL: a background thread applying it under sustained writes slowed both
(measured). So the gateway starts one helper process (:class:`IndexWorkerProcess`) that serves
every realm it opens. After each write that leaves index work the store sends the realm file's
path down the helper's stdin (a non-blocking pipe write of one line); the helper follows the
realm file on a read-only connection and catches its index file up in short transactions
(:meth:`RecallIndexFile.catch_up`), so it never touches the realm file's write lock. New records
go to the index's fresh tier, one row each; once no nudge has come for MERGE_QUIET_S it merges
the fresh tiers of the realms it indexed into their postings, a chunk per transaction, looking
for nudges between chunks. It runs at a lower CPU priority than the gateway: it uses what the
request path leaves idle.

Nothing depends on the helper for correctness: a read of the index catches it up first either
way (under the index file's write lock, so the two never apply the same work twice), the store
still applies the backlog inline once it is long, and a helper that dies is restarted (a few
times a minute at most; after that the store indexes inline, as the library does by default).
When the gateway exits, the helper reads end-of-file and exits too.

Once it has embedded a realm's records up to its newest (``recall = "hybrid"``), the helper says
so down the pipe the gateway gave it as stdout (one line naming the realm file, written without
blocking; a report the pipe has no room for is dropped, the next one says the same; stdout itself
points at /dev/null, so nothing else printed reaches the pipe) and the gateway's reader of those
lines hands
it to the realm's store, which reads the new vectors into the matrices of the scopes it keeps
(``SqliteRealmStore``'s read-ahead): the recall after a write finds them read, where it would
otherwise decode and project them itself.

    python -c "from meta_memory.memory.sqlite.index_worker import main; main()"  # paths on stdin
"""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import select
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ...storage.layout import StateLayout
from ..priority import IDLE_NICE
from ..recall.analyzer import ANALYZER_VERSION
from .budget import fd_capped
from .indexing import MERGE_CHUNK, MERGE_QUIET_S, MergePacer, fresh_overflow
from .recall_index import RecallIndexFile, connect_readonly
from .vectors import VectorFile

__all__ = ["IndexWorkerProcess", "main"]

_log = logging.getLogger(__name__)

# New records per catch-up transaction: long enough to amortize a commit, short enough that a
# recall waiting on the index file's write lock waits a few tens of milliseconds at most.
CHUNK = 128
# Realm files the helper keeps connections to (least recently nudged closed first), fewer when the
# open-files limit is low: each holds six descriptors (the realm file's read-only connection and
# the index file's, with their WAL and shared memory).
OPEN_REALMS = 32
FDS_PER_REALM = 6
NICE = 5
# Records embedded per turn: a model call on a batch takes tens of milliseconds per record, so
# small turns keep the other realms' index catch-ups flowing.
VECTOR_CHUNK = 32
RESTARTS_PER_MINUTE = 5
# The gateway reads the helper's reports at most this often: those that come meanwhile are handed
# on together, one read-ahead per realm (a realm written to steadily is read ahead of its recalls
# about fifty times a second at most, not once per write).
REPORT_GAP_S = 0.02


_ENTRY = "import sys; from meta_memory.memory.sqlite.index_worker import main; sys.exit(main())"


class IndexWorkerProcess:
    """The gateway's side: starts, nudges, restarts and stops one helper process."""

    def __init__(self, argv: list[str] | None = None, *, embedding_runtime: str = "auto") -> None:
        # The runtime the helper embeds with (``[agent_memory] embedding_runtime``), its argument.
        self._argv = argv or [sys.executable, "-c", _ENTRY, embedding_runtime]
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._starts: collections.deque[float] = collections.deque(maxlen=RESTARTS_PER_MINUTE)
        self._closed = False
        self._lines: dict[Path, bytes] = {}  # the line that nudges each realm path
        # Who hears that a realm's records are embedded up to its newest (listen), by realm path.
        self._listeners: dict[Path, Callable[[], None]] = {}

    def nudge(self, realm_path: Path) -> bool:
        """Ask the helper to catch ``realm_path``'s index up; False when no helper can take it.

        One non-blocking pipe write: a helper that died shows up as a broken pipe (and is
        restarted, once per nudge), not by polling it on every write.
        """
        line = self._lines.get(realm_path)
        if line is None:
            line = self._lines[realm_path] = json.dumps(str(realm_path)).encode() + b"\n"
        return self._send(line)

    def request_merge(self, realm_path: Path) -> bool:
        """Ask the helper to merge ``realm_path``'s fresh tier now, writes or not (reads are
        paying for it); False when no helper can take it."""
        return self._send(json.dumps({"merge": str(realm_path)}).encode() + b"\n")

    def listen(self, realm_path: Path, embedded: Callable[[], None]) -> None:
        """Call ``embedded`` (on the thread that reads the helper's reports) when the helper has
        embedded ``realm_path``'s records up to its newest; one listener per realm path."""
        with self._lock:
            self._listeners[realm_path] = embedded

    def unlisten(self, realm_path: Path, embedded: Callable[[], None]) -> None:
        """Stop calling ``embedded`` for ``realm_path`` (a store that has closed; one opened on
        the same file since keeps its own)."""
        with self._lock:
            if self._listeners.get(realm_path) == embedded:
                del self._listeners[realm_path]

    def _read_reports(self, stdout: IO[bytes]) -> None:
        """The helper's reports, until it exits (end-of-file): each realm it names is handed to
        its listener, those that came together once each."""
        fd = stdout.fileno()
        buffer = b""
        try:
            while chunk := os.read(fd, 1 << 16):
                *lines, buffer = (buffer + chunk).split(b"\n")
                # Under steady writes a realm is reported after nearly every one: parsed once.
                for path in dict.fromkeys(_reported(line) for line in dict.fromkeys(lines)):
                    with self._lock:
                        listener = self._listeners.get(path) if path is not None else None
                    if listener is None:
                        continue
                    try:
                        listener()
                    except Exception:  # a read-ahead is an optimisation: the next recall reads
                        _log.warning("reading ahead the vectors of %s failed", path, exc_info=True)
                time.sleep(REPORT_GAP_S)
        except OSError:  # closed beneath us: the helper is gone
            pass
        finally:
            stdout.close()

    def _send(self, line: bytes) -> bool:
        with self._lock:
            for _ in range(2):
                proc = self._proc if self._proc is not None else self._start()
                if proc is None:
                    return False
                assert proc.stdin is not None
                try:
                    os.write(proc.stdin.fileno(), line)
                    return True
                except BlockingIOError:
                    return True  # the pipe is full of nudges the helper has yet to read: it will
                except OSError:
                    self._reap()
            return False

    def start(self) -> None:
        """Start the helper now rather than at the first nudge."""
        with self._lock:
            if self._proc is None:
                self._start()

    def pid(self) -> int | None:
        with self._lock:
            proc = self._proc
            return proc.pid if proc is not None and proc.poll() is None else None

    def _start(self) -> subprocess.Popen[bytes] | None:
        if self._closed:
            return None
        now = time.monotonic()
        if len(self._starts) == self._starts.maxlen and now - self._starts[0] < 60:
            return None  # restarting in a loop: leave the index to the stores (inline)
        self._starts.append(now)
        try:
            # numpy's BLAS runs each product on the calling thread: the embedding threads carry the
            # idle priority and their own parallelism, and BLAS threads of its own (created at the
            # priority of whichever thread imported numpy) would neither yield nor fit the cores.
            env = {**os.environ}
            env.setdefault("OPENBLAS_NUM_THREADS", "1")
            proc = subprocess.Popen(self._argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        except OSError as exc:
            _log.warning("cannot start the indexing process (%s); indexing inline", exc)
            return None
        assert proc.stdin is not None and proc.stdout is not None
        os.set_blocking(proc.stdin.fileno(), False)
        threading.Thread(
            target=self._read_reports, args=(proc.stdout,), name="meta-index-reports", daemon=True
        ).start()
        self._proc = proc
        return proc

    def _reap(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdin is not None:
            with contextlib.suppress(OSError):  # a pipe already broken
                proc.stdin.close()
        _log.warning("indexing process %d exited with %s; restarting it", proc.pid, proc.returncode)

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop the helper: end-of-file on its stdin, then wait (kill if it does not exit)."""
        with self._lock:
            self._closed = True
            proc, self._proc = self._proc, None
        if proc is None:
            return
        assert proc.stdin is not None
        with contextlib.suppress(OSError):  # the helper already gone
            proc.stdin.close()
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:  # pragma: no cover - a wedged helper
            proc.kill()
            proc.wait()


# -- the helper process ------------------------------------------------------------------------


class _Realm:
    """A realm file followed read-only, and its index file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = connect_readonly(path)
        self.db.execute("PRAGMA busy_timeout = 5000")
        self.index = RecallIndexFile(StateLayout.recall_index_path(path))
        self.pacer = MergePacer(MERGE_CHUNK)
        self.merged = False  # merged or embedded everything just now: its WALs are to be cut back
        row = self.db.execute("SELECT value FROM store_meta WHERE key = 'realm_uid'").fetchone()
        meta = self.index.meta()
        # The gateway verifies (and if need be resets) the index file when it opens the realm;
        # this process only ever extends an index that is already this realm file's.
        self.usable = (
            row is not None
            and meta.get("realm_uid") == row[0]
            and meta.get("analyzer_version") == str(ANALYZER_VERSION)
        )
        # recall = "hybrid": the store made a vector file for its model; this process fills it.
        self.vectors = VectorFile.follow(path, row[0]) if self.usable and row is not None else None

    def embed_step(self) -> bool:
        """Embed a chunk of the records not embedded yet; whether more remain."""
        if self.vectors is None:
            return False
        embedder = _embedder(self.vectors.model_id)
        if embedder is None:
            return False
        try:
            embedded = self.vectors.catch_up(self.db, embedder, VECTOR_CHUNK)
        except Exception as exc:  # a model fault must not stop the indexing of every realm
            _log.warning("embedding records of %s failed, stopped for it: %s", self.path, type(exc).__name__)
            self.vectors.close()
            self.vectors = None
            return False
        behind = self.vectors.behind(self.db)
        if embedded and not behind:
            self.merged = True  # caught up: once its fresh tier is merged too, its WALs are cut back
            _report(self.path)
        return behind

    def trim_wals(self) -> bool:
        """Cut the index file's and the vector file's WALs to nothing (an idle realm's); whether
        both were (a reader in the way makes it give up at once), or there is no point trying again."""
        try:
            trimmed = self.index.truncate_wal()
            if self.vectors is not None:
                trimmed = self.vectors.truncate_wal() and trimmed
        except (sqlite3.Error, OSError) as exc:  # the next merge tries again
            _log.warning("cutting back the WALs of %s failed: %s", self.path, exc)
            return True
        return trimmed

    def close(self) -> None:
        self.index.close()
        if self.vectors is not None:
            self.vectors.close()
        self.db.close()


def _report(path: Path) -> None:
    """Tell the gateway that ``path``'s records are embedded up to its newest (a line down the
    reports' pipe, never waited for: dropped when the pipe is full, or when no gateway reads it)."""
    with contextlib.suppress(OSError):  # BlockingIOError included
        os.write(_REPORTS_FD, json.dumps({"embedded": str(path)}).encode() + b"\n")


def _reported(line: bytes) -> Path | None:
    """The realm path a report line names (:func:`_report`); ``None`` for anything else."""
    try:
        item = json.loads(line)
    except ValueError:
        return None
    path = item.get("embedded") if isinstance(item, dict) else None
    return Path(path) if isinstance(path, str) else None


_REPORTS_FD = 1  # the gateway's pipe (main moves it off stdout and makes its writes non-blocking)
_embedders: dict[str, Any] = {}
_runtime = "auto"  # the embedding runtime the gateway passed (main's argument)


def _embedder(model_id: str) -> Any:
    """The model, loaded once per process; ``None`` (logged once) when it cannot be."""
    if model_id not in _embedders:
        from ...errors import MetaError
        from ..embedding import load_embedder

        try:
            # Every core, at the lowest priority: the embedding uses what the gateway leaves idle.
            _embedders[model_id] = load_embedder(
                model_id,
                runtime=_runtime,  # type: ignore[arg-type]  # checked by main
                parallel=os.cpu_count() or 1,
                parallel_nice=IDLE_NICE,
            )
        except MetaError as exc:
            _log.warning("cannot embed with %s: %s", model_id, exc.message)
            _embedders[model_id] = None
    return _embedders[model_id]


def _serve(fd: int) -> None:
    open_realms = fd_capped(OPEN_REALMS, per_realm=FDS_PER_REALM, reserve=16)
    realms: collections.OrderedDict[str, _Realm] = collections.OrderedDict()
    pending: dict[str, None] = {}  # insertion-ordered set of realm paths with work
    unmerged: dict[str, None] = {}  # realm paths whose fresh tier may hold records
    merging = False  # no nudge came for MERGE_QUIET_S: merge fresh records until one does
    wanted: dict[str, None] = {}  # realm paths whose readers asked for a merge: merged between nudges
    untrimmed: dict[str, None] = {}  # idle realm paths whose WALs were not cut back yet (a reader was in)
    buffer = b""
    while True:
        if pending or wanted or (merging and unmerged):
            timeout: float | None = 0
        else:
            timeout = MERGE_QUIET_S if unmerged or untrimmed else None
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            merging = False
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break  # the gateway closed our stdin: it is shutting down
            *lines, buffer = (buffer + chunk).split(b"\n")
            for line in lines:
                if line.strip():
                    item = json.loads(line)
                    if isinstance(item, dict):
                        wanted[item["merge"]] = unmerged[item["merge"]] = None
                    else:
                        pending[item] = None
        elif not pending:
            merging = True
            for path in list(untrimmed):  # a quiet spell: try again what a reader was in the way of
                realm = realms.get(path)
                if realm is None or path in unmerged or realm.trim_wals():
                    del untrimmed[path]
        if pending:
            path = next(iter(pending))
            del pending[path]
            _step(realms, path, pending, unmerged, merge=False, open_realms=open_realms)
        if wanted:  # one chunk per turn, between catch-ups
            path = next(iter(wanted))
            _step(realms, path, pending, unmerged, merge=True, open_realms=open_realms)
            if path not in unmerged:
                del wanted[path]
        elif not pending and merging and unmerged:
            _step(realms, next(iter(unmerged)), pending, unmerged, merge=True, open_realms=open_realms)
        for path in [p for p in realms if p not in unmerged and p not in untrimmed and realms[p].merged]:
            realms[path].merged = False
            if not realms[path].trim_wals():
                untrimmed[path] = None
    for realm in realms.values():
        realm.close()


def _step(
    realms: collections.OrderedDict[str, _Realm],
    path: str,
    pending: dict[str, None],
    unmerged: dict[str, None],
    *,
    merge: bool,
    open_realms: int = OPEN_REALMS,
) -> None:
    """One unit of work on one realm: catch its index up by a chunk (then, if its fresh tier is
    full, merge a chunk of it), or, in a quiet spell, merge a chunk of its fresh tier."""
    realm = realms.pop(path, None)
    try:
        if realm is None:
            realm = _Realm(Path(path))
        realms[path] = realm  # most recently used last
        if len(realms) > open_realms:
            realms.popitem(last=False)[1].close()
        if not realm.usable:
            realms.pop(path).close()  # looked at again on the next nudge
            unmerged.pop(path, None)
            return
        if merge:
            if realm.pacer.merge(realm.index)[1]:
                del unmerged[path]  # the fresh tier is empty: the realm is idle, its WALs need not stay
                realm.merged = True
            return
        realm.index.catch_up(realm.db, CHUNK)
        unmerged[path] = None
        if realm.index.behind(realm.db) or realm.embed_step():
            pending[path] = None  # more to do: after the other realms' turns
        elif overflow := fresh_overflow(realm.index.fresh_size()):
            realm.index.merge(overflow)
    except (sqlite3.Error, OSError) as exc:
        _log.warning("indexing %s failed: %s", path, exc)
        unmerged.pop(path, None)
        stale = realms.pop(path, None)
        if stale is not None:
            stale.close()


def main() -> int:
    global _runtime, _REPORTS_FD
    logging.basicConfig(level=logging.WARNING, format="meta-index-worker: %(levelname)s %(message)s")
    if len(sys.argv) > 1 and sys.argv[1] in ("auto", "numpy", "onnxruntime"):
        _runtime = sys.argv[1]
    with contextlib.suppress(OSError):  # not permitted here: run at normal priority
        os.nice(NICE)
    with contextlib.suppress(OSError):  # no stdout: reports are dropped (_report)
        # The gateway's pipe carries reports only, written without blocking; whatever else this
        # process or a library in it prints to stdout goes to /dev/null (a print into a full
        # non-blocking pipe would raise where it was printed).
        _REPORTS_FD = os.dup(1)
        os.set_blocking(_REPORTS_FD, False)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.close(devnull)
    with contextlib.suppress(KeyboardInterrupt):  # the gateway's terminal got ^C too
        _serve(sys.stdin.fileno())
    return 0
