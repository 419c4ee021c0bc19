"""A sketched scope's scan in a helper process (recall/scan_process.py, recall/shared.py): real
helper processes over real shared memory. The oracle is the same search run in this process
(``neighbours.nearest``): a helper's answer must be it exactly, and a helper that dies, stalls or
is closed must leave the answer to this process, never change it."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meta_memory import Meta
from meta_memory.memory.embedding import load_embedder
from meta_memory.memory.embedding.static_embedder import StaticEmbedder
from meta_memory.memory.recall import hybrid, neighbours, scan_process, shared
from meta_memory.memory.recall.handoff import Handoff
from meta_memory.memory.recall.neighbours import (
    PiecesQuery,
    ScopeVectors,
    begin_nearest,
    extended,
    nearest,
    vector_bytes,
)
from meta_memory.memory.recall.scan_process import ScanJob, ScanOffload, ScanProcesses

from ..conftest import BACKENDS, Backend, make_backend

DIM = 192
LIMIT = 20

pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="shared memory needs memfd (Linux)")


@pytest.fixture(autouse=True)
def small_sketches(monkeypatch: pytest.MonkeyPatch) -> None:
    # A helper's reply is waited for long enough that a busy test machine never makes it late
    # (the tests count the scans helpers answered); the stalled helper's test waits less.
    monkeypatch.setattr(scan_process, "REPLY_GRACE_S", 5.0)
    monkeypatch.setattr(neighbours, "SKETCH_MIN", 64)
    monkeypatch.setattr(neighbours, "SKETCH_SAMPLE", 256)
    monkeypatch.setattr(neighbours, "SKETCH_DEPTH_MIN", 40)


@pytest.fixture
def helpers() -> Iterator[ScanProcesses]:
    pool = ScanProcesses(1)
    yield pool
    pool.close()


@pytest.fixture
def threads() -> Iterator[Handoff]:
    handoff = Handoff(2, "test-scan")
    yield handoff
    handoff.close()


def _rows(n: int, seed: int = 3, start: int = 1, dim: int = DIM) -> list[tuple[int, bytes]]:
    """``n`` stored vectors of docs ``start``.. whose variance lies in 6 directions (sketched)."""
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(n, 6)) @ rng.normal(size=(6, dim)) + 0.05 * rng.normal(size=(n, dim))
    return [(start + i, vector_bytes(v)) for i, v in enumerate(m)]


def _queries(count: int, seed: int = 9) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    m = rng.normal(size=(count, 6)) @ np.random.default_rng(3).normal(size=(6, DIM))
    return [(v / np.linalg.norm(v)).astype(np.float32) for v in m]


def _ready(pool: ScanProcesses, vectors: ScopeVectors, offload: ScanOffload) -> None:
    """Offer scans until a helper is ready (they start at the first one offered)."""
    deadline = time.monotonic() + 60
    query = np.zeros(vectors.matrix.shape[1], dtype=np.float32)
    query[0] = 1.0
    while not pool.ready():
        assert time.monotonic() < deadline, "no scan helper started"
        begin_nearest(vectors, query, LIMIT, None, offload)()
        time.sleep(0.05)


STATIC = "all-minilm-l6-v2-static-sif"
WORDS = [
    "garden",
    "budget",
    "travel",
    "cooking",
    "music",
    "fitness",
    "reading",
    "weather",
    "harbor",
    "deploy",
]
TEXTS = [f"what about {a} and {b}?" for a in WORDS for b in WORDS[:3] if a != b]


def _static_model(texts: list[str]) -> StaticEmbedder:
    """The static model with ``texts``' pieces distilled and taken as complete: its thread distils
    the rest of the vocabulary for a minute, and these texts read no other piece."""
    model = load_embedder(STATIC)
    assert isinstance(model, StaticEmbedder)
    model.embed_queries(texts)
    model._complete = True
    return model


def _pieces_query(model: StaticEmbedder, text: str, embed: Callable[[], np.ndarray]) -> PiecesQuery:
    moved = model.shared_table(shared.copy)
    reader = model.piece_reader()
    assert moved is not None and reader is not None
    return PiecesQuery(text, reader, *moved, embed)


def _not_here() -> np.ndarray:
    raise AssertionError("the query was embedded in this process")


def _helper_pids(pool: ScanProcesses) -> list[int]:
    return [h.process.pid for h in [*pool._idle, *pool._busy]]


def test_a_helper_answers_each_scan_exactly_as_this_process_does(
    helpers: ScanProcesses, threads: Handoff
) -> None:
    vectors = extended(None, _rows(500), DIM, (1,))
    assert vectors.sketch is not None and vectors.sketch.rows is not None
    assert vectors.codes is not None
    assert all(
        shared.locate(a) is not None
        for a in (vectors.matrix, vectors.codes, vectors.sketch.rows, vectors.sketch.scales)
    )
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    before = helpers.served
    for query in _queries(30):
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
    assert helpers.served - before == 30


def test_a_helper_embeds_a_query_from_its_text_exactly_as_this_process_does(
    helpers: ScanProcesses, threads: Handoff
) -> None:
    model = _static_model(TEXTS)
    vectors = extended(None, _rows(600, dim=model.dim), model.dim, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    assert model.shared_table(shared.copy) is not None and shared.locate(model._table) is not None
    before = helpers.served
    for text in TEXTS:
        expected = model.embed_queries([text])[0]
        query = _pieces_query(model, text, _not_here)
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, expected, LIMIT)
        assert query.answered is not None and np.array_equal(query.answered, expected)
    assert helpers.served - before == len(TEXTS)


def test_a_query_told_with_the_wake_is_embedded_exactly_and_one_not_told_as_asked(
    helpers: ScanProcesses, threads: Handoff
) -> None:
    """A helper told the coming query's text embeds it while the scan's request comes: the answer
    and the vector are this process's, and a request for another text than the one told (or
    after a plain wake) embeds the text it asks."""
    model = _static_model(TEXTS)
    vectors = extended(None, _rows(600, dim=model.dim), model.dim, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    moved, reader = model.shared_table(shared.copy), model.piece_reader()
    assert moved is not None and reader is not None
    # A first query maps the table and loads the reader: a wake names only what its helper has.
    begin_nearest(vectors, _pieces_query(model, TEXTS[0], _not_here), LIMIT, None, offload)()
    served = helpers.served
    told = [(TEXTS[1], TEXTS[1]), (TEXTS[2], TEXTS[3]), (None, TEXTS[4]), (TEXTS[5], TEXTS[5])]
    for text, asked in told:
        helpers.wake(text, (*moved, reader))
        expected = model.embed_queries([asked])[0]
        query = _pieces_query(model, asked, _not_here)
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, expected, LIMIT)
        assert query.answered is not None and np.array_equal(query.answered, expected)
    assert helpers.served == served + len(told)


def test_a_query_a_stalled_helper_was_to_embed_is_embedded_and_searched_here(
    helpers: ScanProcesses, threads: Handoff, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_process, "REPLY_GRACE_S", 0.05)
    helpers.scan_s = 0.0
    model = _static_model(TEXTS[:2])
    vectors = extended(None, _rows(600, dim=model.dim), model.dim, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    (pid,) = _helper_pids(helpers)
    text = TEXTS[0]
    expected = model.embed_queries([text])[0]
    query = _pieces_query(model, text, lambda: model.embed_queries([text])[0])
    os.kill(pid, signal.SIGSTOP)
    try:
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, expected, LIMIT)
        assert query.answered is None  # (no answer from the helper: embedded here)
    finally:
        os.kill(pid, signal.SIGCONT)
    _ready(helpers, vectors, offload)
    query = _pieces_query(model, TEXTS[1], _not_here)
    served = helpers.served
    found = begin_nearest(vectors, query, LIMIT, None, offload)()
    assert found == nearest(vectors, model.embed_queries([TEXTS[1]])[0], LIMIT)
    assert helpers.served == served + 1


def test_a_helper_told_a_scan_is_coming_answers_it_and_the_ones_after(
    helpers: ScanProcesses, threads: Handoff
) -> None:
    vectors = extended(None, _rows(500), DIM, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    served = helpers.served
    queries = _queries(4, seed=6)
    helpers.wake()
    helpers.wake()  # told twice, asked once
    for i, query in enumerate(queries):
        if i == 2:
            helpers.wake()
            time.sleep(0.01)  # past its wait awake: asleep again when the scan comes
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
    assert helpers.served == served + len(queries)


@pytest.mark.parametrize("after_s", [0.0, 0.0002, 0.02])
def test_a_reply_is_seen_whether_it_comes_while_looked_for_awake_or_asleep(after_s: float) -> None:
    """scan_process._arrives: a message in at once, during the awake looks, or after them (while
    asleep) is seen; none within the wait is not."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    timer = threading.Timer(after_s, lambda: theirs.send(b"reply"))
    timer.start()
    try:
        assert scan_process._arrives(ours, 5.0, 0.001)
        assert ours.recv(64) == b"reply"
        timer.join()
        assert not scan_process._arrives(ours, 0.01, 0.001)
    finally:
        timer.join()
        ours.close()
        theirs.close()


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="keeping a helper off a CPU needs two")
def test_a_helper_is_kept_off_the_cpu_of_the_caller_that_wakes_it_or_sends_it_a_scan(
    helpers: ScanProcesses, threads: Handoff
) -> None:
    """Woken by a caller, a helper was placed on the caller's own CPU and ran there instead of on
    an idle one: each wake and each request first takes the caller's CPU out of the helper's."""
    vectors = extended(None, _rows(500), DIM, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    (pid,) = _helper_pids(helpers)
    allowed = os.sched_getaffinity(0)
    first, second = sorted(allowed)[:2]
    try:
        os.sched_setaffinity(0, {first})  # this thread, on one CPU
        helpers.wake()
        assert os.sched_getaffinity(pid) == allowed - {first}
        os.sched_setaffinity(0, {second})
        query = _queries(1)[0]
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
        assert os.sched_getaffinity(pid) == allowed - {second}
    finally:
        os.sched_setaffinity(0, allowed)


def test_rows_appended_in_place_after_a_helper_mapped_them_are_scanned(
    helpers: ScanProcesses, threads: Handoff
) -> None:
    rows = _rows(700)
    first = extended(None, rows[:500], DIM, (1,))
    grown = extended(first, rows[500:520], DIM, (2,))  # a new room (shared), then in place
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, grown, offload)
    latest = extended(grown, rows[520:], DIM, (3,))
    assert shared.locate(latest.matrix)[0] == shared.locate(grown.matrix)[0]  # type: ignore[index]
    served = helpers.served
    for doc in (690, 600, 521):
        query = latest.matrix[doc - 1]
        found = begin_nearest(latest, query, LIMIT, None, offload)()
        assert found == nearest(latest, query, LIMIT) and found[0][0] == doc
    assert helpers.served - served == 3


def test_a_helper_that_dies_leaves_its_scans_here_and_is_replaced(
    helpers: ScanProcesses, threads: Handoff, monkeypatch: pytest.MonkeyPatch
) -> None:
    vectors = extended(None, _rows(500), DIM, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    (helper,) = [*helpers._idle, *helpers._busy]
    pid = helper.process.pid
    os.kill(pid, signal.SIGKILL)
    helper.process.wait(timeout=10)  # dead before the scans below (a kill is not instant)
    served = helpers.served
    for query in _queries(5):
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
    assert helpers.served == served  # none of those by the dead helper
    monkeypatch.setattr(scan_process, "RESTART_GAP_S", 0.0)
    _ready(helpers, vectors, offload)
    assert _helper_pids(helpers) != [pid]
    query = _queries(1, seed=4)[0]
    assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
    assert helpers.served == served + 1


def test_a_stalled_helper_is_late_its_scan_runs_here_and_its_late_reply_is_dropped(
    helpers: ScanProcesses, threads: Handoff, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scan_process, "REPLY_GRACE_S", 0.05)
    helpers.scan_s = 0.0
    vectors = extended(None, _rows(500), DIM, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    (pid,) = _helper_pids(helpers)
    queries = _queries(3, seed=5)
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        assert begin_nearest(vectors, queries[0], LIMIT, None, offload)() == nearest(
            vectors, queries[0], LIMIT
        )
        assert time.monotonic() - started < 5.0
    finally:
        os.kill(pid, signal.SIGCONT)
    _ready(helpers, vectors, offload)  # once its late reply is in (read and dropped)
    served = helpers.served
    # The next scans go to the same helper, each answered with its own query's neighbours.
    for query in queries[1:]:
        assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
    assert _helper_pids(helpers) == [pid] and helpers.served == served + 2


def _memfd_maps(pid: int) -> int:
    maps = Path(f"/proc/{pid}/maps").read_text()
    return sum(1 for line in maps.splitlines() if "meta-vectors" in line)


def test_a_scope_freed_here_is_unmapped_by_the_helpers(helpers: ScanProcesses, threads: Handoff) -> None:
    offload = ScanOffload(threads.submit, helpers.submit)
    kept = extended(None, _rows(300, seed=4), DIM, (1,))
    _ready(helpers, kept, offload)
    (pid,) = _helper_pids(helpers)
    dropped = extended(None, _rows(400, seed=5), DIM, (1,))
    for vectors in (kept, dropped):
        begin_nearest(vectors, _queries(1)[0], LIMIT, None, offload)()
    mapped = _memfd_maps(pid)
    assert mapped >= 8  # each scope's rows, scales, matrix and stored components
    del dropped, vectors
    gc.collect()
    begin_nearest(kept, _queries(1)[0], LIMIT, None, offload)()  # the helper is told first
    assert _memfd_maps(pid) == mapped - 4


def test_closing_stops_the_helpers_and_scans_run_here(threads: Handoff) -> None:
    pool = ScanProcesses(1)
    vectors = extended(None, _rows(500), DIM, (1,))
    offload = ScanOffload(threads.submit, pool.submit)
    _ready(pool, vectors, offload)
    processes = [h.process for h in pool._idle]
    pool.close()
    assert processes and all(p.poll() is not None for p in processes)
    served = pool.served
    query = _queries(1)[0]
    assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
    assert pool.served == served


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from make_backend(request.param, request)


def test_hybrid_recall_through_the_helpers_is_recall_without_them(
    tmp_path: Path, backend: Backend, eventually: Callable[..., bool], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(neighbours, "SKETCH_DEPTH_FACTOR", 1)  # a sketch scan 100 deep of 120 records
    state = tmp_path / "state"
    stored = backend.store_config()
    topics = ["garden", "budget", "travel", "cooking", "music", "fitness", "reading", "weather"]
    with (
        Meta.builder()
        .persistent_state(state)
        .memory()
        .agent_memory(recall="hybrid", **stored)
        .build() as meta
    ):
        for i in range(120):
            topic = topics[i % len(topics)]
            meta.remember_agent_memory("lead", title=f"{topic} note {i}", body=f"Notes on {topic}, item {i}.")
        if backend.is_postgres:
            assert eventually(
                lambda: backend.stored(state, "SELECT count(*) FROM record_vectors")[0][0] == 120
            )
        memory = meta.runtime.agent_memory
        provider = memory.provider
        questions = [f"what did I write about {t} lately?" for t in topics]

        def answers() -> list[list[tuple[str, float | None]]]:
            return [
                [(r.title, r.score) for r in meta.recall_agent_memory("lead", query_text=q, max_entries=6)]
                for q in questions
            ]

        deadline = time.monotonic() + 60
        while not provider._helpers.ready():  # the first sketched scan starts them
            assert time.monotonic() < deadline
            answers()
            time.sleep(0.05)
        served = provider._helpers.served
        through = answers()
        assert provider._helpers.served - served == len(questions)
        # The questions' pieces are distilled (asked above): the model taken as complete, each
        # question (not cached) goes to a helper as its text, which the helper embeds.
        provider.embedder._complete = True
        provider._queries.clear()
        served = provider._helpers.served
        assert answers() == through
        assert provider._helpers.served - served == len(questions) and provider._table is not None
        assert len(provider._queries) == len(questions)  # each helper's embedding kept
        # An answer not in when the lexical ranking ends (a helper late): the head's records are
        # read meanwhile, in the ranking's read, and the answers are the same.
        store = memory.store("default")
        inside: list[bool] = []
        reading, by_doc = store.reading_index, store.records_by_doc

        @contextlib.contextmanager
        def reading_index(scopes: Any) -> Iterator[Any]:
            with reading(scopes) as index:
                inside.append(True)
                try:
                    yield index
                finally:
                    inside.pop()

        def records_by_doc(docs: Any) -> Any:
            asked.append(bool(inside))
            return by_doc(docs)

        asked: list[bool] = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(store, "reading_index", reading_index)
            patch.setattr(store, "records_by_doc", records_by_doc)
            for answer_in in (True, False):
                patch.setattr(hybrid._Begun, "ready", lambda self, answer_in=answer_in: answer_in)
                provider._queries.clear()
                asked.clear()
                assert answers() == through
                assert asked.count(True) == (0 if answer_in else len(questions))
        provider._helpers.close()  # from here each scan runs on a thread of this process
        provider._queries.clear()
        assert answers() == through


def test_a_helper_that_cannot_answer_leaves_the_scan_here(helpers: ScanProcesses, threads: Handoff) -> None:
    vectors = extended(None, _rows(500), DIM, (1,))
    offload = ScanOffload(threads.submit, helpers.submit)
    _ready(helpers, vectors, offload)
    sketch = vectors.sketch
    assert sketch is not None and sketch.rows is not None and sketch.scales is not None
    query = _queries(1)[0]
    q8 = np.ones(sketch.rows.shape[1], dtype=np.int8)
    # Rows to rescore fewer than the sketch's: the helper's rescoring fails, and so says.
    job = ScanJob(sketch.rows, sketch.scales, q8, vectors.matrix[:10], None, query, 100, LIMIT)
    here = (np.arange(3), np.zeros(3, dtype=np.float32))
    reply = helpers.submit(job, lambda: here)
    assert reply is not None
    served = helpers.served
    assert reply.result() is here and helpers.served == served


def test_past_the_shared_buffers_a_scope_is_scanned_here(
    helpers: ScanProcesses, threads: Handoff, monkeypatch: pytest.MonkeyPatch
) -> None:
    offload = ScanOffload(threads.submit, helpers.submit)
    first = extended(None, _rows(300, seed=4), DIM, (1,))
    _ready(helpers, first, offload)
    monkeypatch.setattr(shared, "MAX_BUFFERS", len(shared._by_owner))
    vectors = extended(None, _rows(400, seed=5), DIM, (1,))
    assert vectors.sketch is not None and shared.locate(vectors.matrix) is None
    served = helpers.served
    query = _queries(1)[0]
    assert begin_nearest(vectors, query, LIMIT, None, offload)() == nearest(vectors, query, LIMIT)
    assert helpers.served == served


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(min_value=2, max_value=3000),
    depth_share=st.floats(min_value=0.0, max_value=1.0),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    levels=st.sampled_from([None, 3, 50]),
)
def test_the_helpers_sampled_selection_takes_the_deepest_rows(
    n: int, depth_share: float, seed: int, levels: int | None
) -> None:
    """A helper's selection of a sketch's deepest rows (neighbours._deepest_sampled) against a
    full sort: the same rows, where the depth-th score is not tied with the next; with ties
    there, rows of the tied score make up the rest (few score levels force them)."""
    rng = np.random.default_rng(seed)
    products = rng.normal(size=n) if levels is None else rng.integers(0, levels, size=n).astype(np.float64)
    scales = rng.uniform(0.5, 1.5, size=n).astype(np.float32) if levels is None else np.ones(n, np.float32)
    depth = max(1, min(n - 1, round(depth_share * n)))
    scores = products * scales
    chosen = neighbours._deepest_sampled(products, scales, depth)
    assert len(chosen) == depth == len(set(chosen.tolist()))
    ranked = np.sort(scores)[::-1]
    edge = ranked[depth - 1]
    above = set(np.flatnonzero(scores > edge).tolist())
    assert above <= set(chosen.tolist())
    assert all(scores[i] >= edge for i in chosen)
    if ranked[depth] != edge:
        assert set(chosen.tolist()) == set(np.flatnonzero(scores >= edge).tolist())


@pytest.mark.parametrize("bad_row", [-1, 50, 1 << 40])
def test_a_reply_naming_rows_the_scope_does_not_have_is_refused_and_scanned_here(bad_row: int) -> None:
    """A helper never decides what is recalled: an embed reply whose kept rows fall outside the
    scope (negative, or past its rows) is refused, the helper stopped, and the scan runs here."""
    import struct
    import subprocess
    import sys

    pool = ScanProcesses(0)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    # The helper's side is played here (a forged reply); its process is one that only waits.
    helper = scan_process._Helper.__new__(scan_process._Helper)
    helper.sock, helper.late, helper.late_since = ours, 0, 0.0
    helper.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        rows, count, kept, dim = 50, 4, 3, 8
        here = (np.arange(2), np.zeros(2, dtype=np.float32))

        def reply_with(kept_rows: list[int]) -> Any:
            reply = scan_process._Reply(
                pool, helper, 7, lambda: here, time.monotonic() + 1.0, rows, count, dim
            )
            found = [*kept_rows, 0][:count] + [0] * (count - len(kept_rows) - 1)
            theirs.send(
                struct.pack("<qqqd", 7, count, kept, 0.001)
                + np.array(found, dtype=np.int64).tobytes()
                + np.linspace(0.9, 0.6, count, dtype=np.float32).tobytes()
                + np.ones(dim, dtype=np.float32).tobytes()
            )
            return reply.result()

        good = reply_with([4, 9, 49])
        assert good[0] == [4, 9, 49] and good[1] == pytest.approx([0.9, 0.8, 0.7])
        assert pool.served == 1
        assert reply_with([4, bad_row, 9]) is here  # refused: scanned here
        assert pool.served == 1 and helper.process.poll() is not None  # and the helper stopped
    finally:
        with contextlib.suppress(OSError):
            helper.process.kill()
        helper.process.wait()
        ours.close()
        theirs.close()
