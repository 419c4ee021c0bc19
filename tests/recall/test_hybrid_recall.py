"""``recall = "hybrid"`` end to end with the real embedding model: a paraphrase the lexical ranking
cannot see is found, what was just written is found lexically before it is embedded, a forgotten
record never comes back through its vector, tags still filter, and a realm's vectors are of one
model only (a switch rebuilds them). The tests of what recall answers run on both backends; those
of the realm file's vector file and its indexing process on SQLite (tests/postgres/test_vectors.py
has PostgreSQL's embedding thread)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from meta_memory import Meta
from meta_memory.client import MetaClient
from meta_memory.config import load_config_dict
from meta_memory.errors import ConfigError
from meta_memory.memory.embedding import DEFAULT_MODEL, load_embedder
from meta_memory.memory.params import parse_recall
from meta_memory.memory.recall import rank
from meta_memory.memory.recall.analyzer import query_terms as analyze_query
from meta_memory.memory.recall.fusion import DEFAULT_HYBRID, hybrid_scored, near_enough
from meta_memory.memory.recall.hybrid import HybridRecallProvider
from meta_memory.memory.recall.provider import LexicalRecallProvider, RecallQuery
from meta_memory.memory.sqlite.vectors import INLINE_EMBED_MAX
from meta_memory.storage.layout import StateLayout

from ..conftest import BACKENDS, Backend, gateway_command, make_backend

DIET = ("Diet", "Sam is vegetarian and allergic to peanuts.")
QUESTION = "what food should I avoid cooking for them?"
FILLER = [(f"Plant {i}", f"The office plant number {i} needs water on Mondays.") for i in range(12)]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from make_backend(request.param, request)


def _handle(state: Path, backend: Backend | None = None, **agent_memory: Any) -> Any:
    stored = backend.store_config() if backend is not None else {}
    return Meta.builder().persistent_state(state).memory().agent_memory(**agent_memory, **stored).build()


def _settled(backend: Backend, state: Path, count: int, eventually: Callable[..., bool]) -> None:
    """Wait until ``count`` records are embedded on PostgreSQL (its embedding thread works in the
    background); a realm file's reads embed inline in a library runtime."""
    if backend.is_postgres:
        assert eventually(lambda: backend.stored(state, "SELECT count(*) FROM record_vectors")[0][0] == count)


def _fill(meta: Any, identity: str = "lead") -> dict[str, str]:
    ids = {}
    for title, body in [DIET, *FILLER]:
        ids[title] = meta.remember_agent_memory(identity, title=title, body=body).memory_id
    return ids


def _vectors(state: Path) -> sqlite3.Connection:
    return sqlite3.connect(StateLayout.vector_path(StateLayout.at(state).realm_db_path("default")))


def test_a_paraphrase_the_lexical_ranking_misses_is_recalled(tmp_path: Path) -> None:
    with _handle(tmp_path / "lexical") as meta:
        _fill(meta)
        assert [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION)] == []
    with _handle(tmp_path / "hybrid", recall="hybrid") as meta:
        _fill(meta)
        assert [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)] == [
            "Diet"
        ]


def test_hybrid_scores_never_rise_and_score_the_paraphrase_by_its_cosine(
    tmp_path: Path, backend: Backend, eventually: Callable[..., bool]
) -> None:
    with _handle(tmp_path / "state", backend, recall="hybrid") as meta:
        _fill(meta)
        meta.remember_agent_memory("lead", title="Class", body="The cooking class is on Thursday evening.")
        _settled(backend, tmp_path / "state", len(FILLER) + 2, eventually)
        question = QUESTION
        records = meta.call("meta/agent_memory/recall", {"identity": "lead", "query_text": question})[
            "records"
        ]
        scores = [r["score"] for r in records]
        assert all(0.0 <= s <= 1.0 for s in scores) and scores == sorted(scores, reverse=True), scores
        titles = [r["title"] for r in records]
        # The lexical match first (the protected head); the paraphrase, no query word in it, next,
        # scored by its cosine alone: above zero, and not above the head.
        assert titles[:2] == ["Class", "Diet"], titles
        assert 0.0 < scores[1] <= scores[0]
        kept = meta.call(
            "meta/agent_memory/recall", {"identity": "lead", "query_text": question, "min_score": scores[1]}
        )["records"]
        assert kept == [r for r in records if r["score"] >= scores[1]]


def test_either_store_embeds_on_the_numpy_runtime_and_says_so(
    tmp_path: Path, backend: Backend, eventually: Callable[..., bool]
) -> None:
    state = tmp_path / "state"
    with _handle(state, backend, recall="hybrid", embedding_runtime="numpy") as meta:
        _fill(meta)
        _settled(backend, state, len(FILLER) + 1, eventually)
        found = meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)
        assert [r.title for r in found] == ["Diet"]
        features = meta.status()["features"]["agent_memory"]
        assert features["embedding"] == {"model": DEFAULT_MODEL, "runtime": "numpy"}


def test_tags_filter_and_forgotten_records_stay_out(
    tmp_path: Path, backend: Backend, eventually: Callable[..., bool]
) -> None:
    with _handle(tmp_path / "state", backend, recall="hybrid") as meta:
        ids = _fill(meta)
        meta.remember_agent_memory(
            "lead", title="Guests", body="Ana eats no meat and no nuts.", tags=["guests"]
        )
        _settled(backend, tmp_path / "state", len(ids) + 1, eventually)
        tagged = meta.recall_agent_memory("lead", query_text=QUESTION, tags=["guests"])
        assert [r.title for r in tagged] == ["Guests"]
        meta.forget_agent_memory("lead", ids["Diet"])
        titles = [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=8)]
        assert "Diet" not in titles and "Guests" in titles


def test_records_dropped_from_the_first_places_are_replaced_from_deeper_in_the_fusion(
    tmp_path: Path, backend: Backend, eventually: Callable[..., bool]
) -> None:
    """The fusion is cut at its first max_entries places (at least one past the protected head)
    and reads the neighbours' lexical scores for those places only; when superseded records (whose
    vectors stay until the sweep) take them, it is fused again as deep as it reads, over a deeper
    lexical head, and recall still answers max_entries live records, each once."""
    with _handle(tmp_path / "state", backend, recall="hybrid") as meta:
        ids = _fill(meta)
        meals = [  # near the question by meaning, holding none of its words
            meta.remember_agent_memory(
                "lead", title=f"Guest {i}", body=f"Guest {i} is vegetarian and allergic to peanuts."
            )
            for i in range(12)
        ]
        _settled(backend, tmp_path / "state", len(ids) + len(meals), eventually)
        first = [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=2)]
        for meal in meals[:10]:  # superseded: their old vectors stay in the neighbours
            meta.update_agent_memory(
                "lead", meal.memory_id, title="Groceries", body="The grocery list is on the fridge."
            )
        found = meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=2)
        titles = [r.title for r in found]
        assert len(titles) == 2 and len(set(titles)) == 2, (first, titles)
        assert all(r.body != "The grocery list is on the fridge." for r in found)


def test_the_first_places_are_the_fusion_over_the_whole_lexical_ranking(
    tmp_path: Path, backend: Backend
) -> None:
    """The oracle: the lexical ranking as deep as the realm (rank, every matching record) fused
    with the neighbours (fusion.hybrid_scored over both whole): recall's first places hold records
    of the same fused scores, each scored as the oracle scores it, however shallow the lexical head
    it reads and however few of the neighbours' lexical scores it asks for. Records share words
    (a few dozen match each query), so the lexical ranking runs far past its head; a third of them
    have expired by the time half the queries are asked (not swept yet: they drop out at the
    fetch), and recall answers the oracle's first live records."""
    rng = random.Random(11)
    day = 86_400_000
    now = int(time.time() * 1000)
    words = ["garden", "tomato", "water", "kitchen", "basil", "pepper", "sunlight", "window", "soil"]
    words += ["harvest", "recipe", "sauce", "morning", "evening", "compost", "seed", "market", "salad"]
    with _handle(tmp_path / "state", backend, recall="hybrid") as meta:
        for i in range(240):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
            expires = now + day if i % 3 == 0 else None
            meta.remember_agent_memory("lead", title=f"Note {i}", body=body, expires_at_ms=expires)
        memory = meta.runtime.agent_memory
        provider, store = memory.provider, memory.store("default")
        scopes = memory.scopes_of(store, "lead")
        assert provider.vectors_behind(store, 60.0) is False  # every record embedded
        checked = 0
        for q in range(30):
            text = " ".join(rng.sample(words, rng.randint(1, 3))) + " " + rng.choice(["today", "please", ""])
            max_entries = rng.choice([1, 3, 5, 8, 10])
            query = RecallQuery(
                scopes=scopes,
                selection="contextual",
                query_text=text,
                query_terms=(),
                max_entries=max_entries,
                now_ms=now + 2 * day if q % 2 else None,
            )
            got = provider.recall_scored(store, query)
            terms = analyze_query(text, [])
            with store.reading_index(scopes) as index:
                lexical = rank(index, terms, 10_000)
            near = store.searcher(scopes, provider.embedder)(
                provider._query_vector(text), DEFAULT_HYBRID.depth
            )
            semantic, params = near_enough(near, provider.min_similarity)
            deep = replace(params, depth=max(params.depth, len(lexical)))
            fused = hybrid_scored(lexical, semantic, limit=len(lexical) + len(semantic), params=deep)
            records = store.records_by_doc([d for d, _ in fused])
            oracle = [(doc, score) for doc, score in fused if query.live(records[doc])]
            by_doc = dict(oracle)
            docs = {r.id: doc for doc, r in records.items()}
            assert [score for _, score in got] == [round(score, 6) for _, score in oracle[: len(got)]], text
            assert all(score == round(by_doc[docs[r.id]], 6) for r, score in got), text
            assert len(got) == min(max_entries, len(oracle))
            checked += len(lexical) > 13
        assert checked >= 10  # most queries ranked lexically past any head recall reads


def test_a_write_after_a_read_is_seen_behind_the_vectors_at_once(tmp_path: Path) -> None:
    """A record written after a read that found the vectors complete makes them behind on the
    next read, before anything embeds it (a library runtime embeds on reads that ask, and this
    one does not ask)."""
    with _handle(tmp_path / "state", recall="hybrid") as meta:
        _fill(meta)
        memory = meta.runtime.agent_memory
        provider, store = memory.provider, memory.store("default")
        assert provider.vectors_behind(store, 60.0) is False
        assert provider.vectors_behind(store) is False  # read again: the same
        meta.remember_agent_memory("lead", title="Later", body="Written after the vectors were complete.")
        assert provider.vectors_behind(store) is True
        assert provider.vectors_behind(store, 60.0) is False


def test_a_recall_reports_the_vectors_it_ranked_by_read_with_them(tmp_path: Path, backend: Backend) -> None:
    """Explicit recall's ``vectors_behind`` is read with the vectors its search reads (one read
    of the realm's progress, not one before the recall and another in it): it agrees with
    vectors_behind read on its own, false once everything is embedded, true while a record
    written after is not; a realm file read by a library runtime embeds a few records inline
    as it reads, and the recall then says it ranked by complete vectors (behind after a burst
    larger than that). A provider subclass
    that answers vectors_behind itself is asked."""
    with _handle(tmp_path / "state", backend, recall="hybrid") as meta:
        _fill(meta)
        memory = meta.runtime.agent_memory
        provider, store = memory.provider, memory.store("default")
        assert provider.vectors_behind(store, 60.0) is False
        params = parse_recall(
            {"identity": "lead", "query_text": "what do I eat?"},
            default_realm="default",
            default_selection="contextual",
            default_max=5,
        )
        assert memory.recall(params).vectors_behind is False
        if backend.is_postgres:  # the embedding thread would embed it before the read: stopped
            vectors = memory.store("default")._vectors  # type: ignore[attr-defined]
            vectors._worker.close()
            vectors._worker = None
        meta.remember_agent_memory("lead", title="Later", body="Written after the vectors were complete.")
        behind = memory.recall(params).vectors_behind
        if backend.is_postgres:
            assert behind is True and provider.vectors_behind(store) is True
        else:  # the read embedded it (no indexing process): ranked by complete vectors
            assert behind is False and provider.vectors_behind(store) is False
            for i in range(INLINE_EMBED_MAX + 8):  # more than a read embeds
                meta.remember_agent_memory("lead", title=f"Later {i}", body="Written in a burst.")
            assert memory.recall(params).vectors_behind is True

        class Asked(HybridRecallProvider):
            def vectors_behind(self, store: Any, wait_s: float = 0.0) -> bool | None:
                return True

        memory.provider = Asked(provider.embedder)
        try:
            assert memory.recall(params).vectors_behind is True
        finally:
            memory.provider.close()
            memory.provider = provider


def test_records_dropped_from_a_lexical_head_without_neighbours_are_replaced_from_deeper(
    tmp_path: Path, backend: Backend
) -> None:
    """Without neighbours (a realm with no vectors) the lexical provider ranks as deep as the places
    wanted and the hybrid one one past the protected head; when the records there drop out at the
    fetch (40 strongest matches expired by the query's time, not swept yet), each ranks deeper,
    again and again, and answers the best live records, as the whole lexical ranking does."""
    with _handle(tmp_path / "state", backend) as meta:  # lexical: no vectors
        day = 86_400_000
        now = int(time.time() * 1000)
        for i in range(40):
            meta.remember_agent_memory(
                "lead", title=f"Harbor {i}", body="harbor harbor harbor ferry", expires_at_ms=now + day
            )
        for i in range(6):
            meta.remember_agent_memory("lead", title=f"Note {i}", body=f"The harbor opens at {i} o'clock.")
        memory = meta.runtime.agent_memory
        store = memory.store("default")
        query = RecallQuery(
            scopes=memory.scopes_of(store, "lead"),
            selection="contextual",
            query_text="harbor",
            query_terms=(),
            max_entries=3,
            now_ms=now + 2 * day,
        )
        with store.reading_index(query.scopes) as index:
            ranked = rank(index, analyze_query("harbor", []), 100)
        by_doc = store.records_by_doc([doc for doc, _ in ranked])
        best = ranked[0][1]
        oracle = [
            (by_doc[doc].id, round(score / best, 6)) for doc, score in ranked if query.live(by_doc[doc])
        ]
        assert len(ranked) == 46 and len(oracle) == 6
        hybrid = HybridRecallProvider(load_embedder(DEFAULT_MODEL))
        try:
            for provider in (LexicalRecallProvider(), hybrid):
                got = provider.recall_scored(store, query)
                assert [(r.id, score) for r, score in got] == oracle[:3], provider
        finally:
            hybrid.close()


def test_another_identitys_records_are_never_neighbours(
    tmp_path: Path, backend: Backend, eventually: Callable[..., bool]
) -> None:
    with _handle(tmp_path / "state", backend, recall="hybrid") as meta:
        ids = _fill(meta, "someone-else")
        meta.remember_agent_memory("lead", title="Plants", body="Water the ficus.")
        _settled(backend, tmp_path / "state", len(ids) + 1, eventually)
        titles = [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=8)]
        assert "Diet" not in titles


def test_switching_the_model_rebuilds_the_vectors_and_never_mixes_two(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with _handle(state, recall="hybrid") as meta:
        _fill(meta)
        meta.recall_agent_memory("lead", query_text=QUESTION)
    assert DEFAULT_MODEL != "bge-small-en-v1.5-int8"  # the switch below is to another model
    with _vectors(state) as db:
        assert dict(db.execute("SELECT key, value FROM meta"))["model_id"] == DEFAULT_MODEL
        before = dict(db.execute("SELECT doc, v FROM vectors"))
    assert len(before) == 1 + len(FILLER)
    with _handle(state, recall="hybrid", embedding_model="bge-small-en-v1.5-int8") as meta:
        assert [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)] == [
            "Diet"
        ]
        with _vectors(state) as db:
            meta_rows = dict(db.execute("SELECT key, value FROM meta"))
            after = dict(db.execute("SELECT doc, v FROM vectors"))
    assert meta_rows["model_id"] == "bge-small-en-v1.5-int8" and meta_rows["dim"] == "384"
    # Every vector is the new model's: the file was emptied, then each record embedded again.
    assert set(after) == set(before) and all(after[doc] != before[doc] for doc in before)


def test_the_indexing_process_embeds_while_what_was_just_written_is_found_lexically(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = {"memory": {"kind": "local_json"}, "agent_memory": {"recall": "hybrid"}}
    with MetaClient.spawn(state_dir=state, config=config) as meta:
        for title, body in FILLER:
            meta.remember_agent_memory("lead", title=title, body=body)
        fresh = meta.remember_agent_memory("lead", title="Deploys", body="Deploys need ops approval.")
        # Read-your-writes, whatever the embedding's progress: the lexical half finds it at once.
        assert fresh in meta.recall_agent_memory("lead", query_text="deploys approval")
        meta.remember_agent_memory("lead", title=DIET[0], body=DIET[1])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with _vectors(state) as db:
                if db.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(FILLER) + 2:
                    break
            time.sleep(0.1)
        else:
            raise AssertionError("the indexing process did not embed the records")
        assert [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)] == [
            "Diet"
        ]
        # The doctor (read-only, beside the live gateway) shows how far the vectors have come.
        report = subprocess.run(
            [gateway_command(), "doctor", "--state-dir", str(state), "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        (realm,) = json.loads(report.stdout)["diagnosis"]["inventory"]
        active = len(FILLER) + 2
        assert realm["vectors"] == {"model_id": DEFAULT_MODEL, "embedded": active, "active": active}


def test_a_recall_that_asks_waits_for_the_vectors_of_everything_written_before_it(tmp_path: Path) -> None:
    config = {
        "memory": {"kind": "local_json"},
        "agent_memory": {"recall": "hybrid", "recall_timeout_ms": 30_000},
    }
    with MetaClient.spawn(state_dir=tmp_path / "state", config=config) as meta:
        for title, body in [*FILLER, DIET]:
            meta.remember_agent_memory("lead", title=title, body=body)
        # Straight after the writes: read-your-writes by meaning, the indexing process still at work.
        waited = meta.call(
            "meta/agent_memory/recall",
            {"identity": "lead", "query_text": QUESTION, "max_entries": 1, "wait_for_vectors": True},
        )
        assert waited["vectors_behind"] is False
        assert [r["title"] for r in waited["records"]] == ["Diet"]
        plain = meta.call("meta/agent_memory/recall", {"identity": "lead", "query_text": "plant"})
        assert plain["vectors_behind"] is False
    with _handle(tmp_path / "lexical") as lexical:
        lexical.remember_agent_memory("lead", title=DIET[0], body=DIET[1])
        reply = lexical.call("meta/agent_memory/recall", {"identity": "lead", "query_text": "diet"})
        assert reply["vectors_behind"] is None  # lexical recall ranks by no vectors


def test_the_same_query_text_is_embedded_once(tmp_path: Path) -> None:
    with _handle(tmp_path / "state", recall="hybrid") as meta:
        _fill(meta)
        memory = meta.runtime.agent_memory
        assert memory is not None
        provider = memory.provider
        embedder = provider.embedder
        calls: list[list[str]] = []

        class Counting:  # the real model, with its query calls counted
            model_id, dim, max_tokens = embedder.model_id, embedder.dim, embedder.max_tokens
            embed, embed_documents = embedder.embed, embedder.embed_documents

            def embed_queries(self, texts: list[str]) -> Any:
                calls.append(list(texts))
                return embedder.embed_queries(texts)

        provider.embedder = Counting()
        first = meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)
        again = meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)
        other = meta.recall_agent_memory("lead", query_text="which plant needs water?", max_entries=1)
        assert [r.title for r in first] == [r.title for r in again] == ["Diet"]
        assert other and other[0].title.startswith("Plant")
        assert calls == [[QUESTION], ["which plant needs water?"]]


def test_hybrid_takes_either_store_and_needs_a_known_model() -> None:
    for store in ({}, {"store": "postgres", "postgres": {"dsn": "postgresql://h/db"}}):
        assert (
            load_config_dict({"agent_memory": {"recall": "hybrid", **store}}).agent_memory.recall == "hybrid"
        )
    with pytest.raises(ConfigError, match=r"agent_memory\.embedding_model must be one of"):
        load_config_dict({"agent_memory": {"recall": "hybrid", "embedding_model": "gpt-embed"}})
    with pytest.raises(ConfigError, match=r"agent_memory\.recall must be one of"):
        load_config_dict({"agent_memory": {"recall": "semantic"}})
    assert load_config_dict({"agent_memory": {}}).agent_memory.embedding_runtime == "auto"
    with pytest.raises(ConfigError, match=r"agent_memory\.embedding_runtime must be one of"):
        load_config_dict({"agent_memory": {"recall": "hybrid", "embedding_runtime": "torch"}})


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in map(int, (task / "children").read_text().split()):
            found.extend([child, *_descendants(child)])
    return found


def _loaded(pid: int, library: str) -> bool:
    return library in Path(f"/proc/{pid}/maps").read_text()


@pytest.mark.parametrize("runtime", ["numpy", "onnxruntime"])
def test_a_gateway_and_its_indexing_process_embed_on_the_runtime_configured(
    tmp_path: Path, runtime: str
) -> None:
    state = tmp_path / "state"
    config = {
        "memory": {"kind": "local_json"},
        # A recall waits for the vectors at most this long: the indexing process loads the model first.
        "agent_memory": {"recall": "hybrid", "embedding_runtime": runtime, "recall_timeout_ms": 30_000},
    }
    with MetaClient.spawn(state_dir=state, config=config) as meta:
        for title, body in [DIET, *FILLER]:
            meta.remember_agent_memory("lead", title=title, body=body)
        recalled = meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1, wait_for_vectors=True)
        assert [r.title for r in recalled] == ["Diet"]
        # The status says which model hybrid recall runs, and on what.
        features = meta.status()["features"]["agent_memory"]
        assert (features["recall"], features["embedding"]) == (
            "hybrid",
            {"model": DEFAULT_MODEL, "runtime": runtime},
        )
        with _vectors(state) as db:
            assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(FILLER) + 1
        spawned = {pid: Path(f"/proc/{pid}/cmdline").read_bytes() for pid in _descendants(os.getpid())}
        (gateway,) = [pid for pid, argv in spawned.items() if str(state).encode() in argv]
        (worker,) = _descendants(gateway)
        assert b"index_worker" in spawned[worker]
        # Both processes loaded the model (numpy's BLAS is in both either way); only the
        # onnxruntime ones loaded onnxruntime.
        for pid in (gateway, worker):
            assert _loaded(pid, "numpy"), pid
            assert _loaded(pid, "onnxruntime") == (runtime == "onnxruntime"), pid


def test_when_the_model_fails_injection_falls_back_to_lexical_and_explicit_recall_reports_it(
    tmp_path: Path, backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    from meta_memory.memory.embedding import EmbedderUnavailable

    with _handle(tmp_path / "state", backend, recall="hybrid") as meta:
        meta.remember_agent_memory("lead", title="Deploys", body="Deploys need ops approval.")
        embedder = meta.runtime.agent_memory.provider.embedder

        def broken(texts: Any) -> Any:  # the model faulting at run time (onnxruntime, a bad file)
            raise EmbedderUnavailable(embedder.model_id, "failed", "the model failed to run")

        embedder.embed_queries = broken
        session = meta.open_session("lead")
        with caplog.at_level("WARNING", logger="meta_memory.recall"):
            for _ in range(3):
                text, injected = session.turn("how do deploys get approved?")
                assert "Deploys need ops approval." in text and len(injected) == 1
                session.compact()
        assert sum("embedding recall failed" in r.getMessage() for r in caplog.records) == 1
        with pytest.raises(EmbedderUnavailable):
            meta.recall_agent_memory("lead", query_text="how do deploys get approved?")


def test_a_realm_switched_to_another_model_is_rebuilt_in_the_background_without_new_writes(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"

    def config(model: str) -> dict[str, Any]:
        return {
            "memory": {"kind": "local_json"},
            "agent_memory": {"recall": "hybrid", "embedding_model": model},
        }

    def embedded(model: str, count: int) -> bool:
        with _vectors(state) as db:
            meta = dict(db.execute("SELECT key, value FROM meta"))
            return (
                meta.get("model_id") == model
                and db.execute("SELECT count(*) FROM vectors").fetchone()[0] == count
            )

    def wait_for(model: str, count: int, meta: Any) -> None:
        deadline = time.monotonic() + 60
        while not embedded(model, count):
            assert time.monotonic() < deadline, f"the vectors of {model} were not rebuilt"
            meta.recall_agent_memory("lead", query_text="deploys")  # a read, as an agent's would be
            time.sleep(0.2)

    with MetaClient.spawn(state_dir=state, config=config("all-minilm-l6-v2-int8")) as meta:
        for title, body in [DIET, *FILLER]:
            meta.remember_agent_memory("lead", title=title, body=body)
        wait_for("all-minilm-l6-v2-int8", 1 + len(FILLER), meta)
        # Until the recall index has merged its fresh tier, its own upkeep would visit the realm
        # after the restart anyway; once it has, only the reads' nudges bring the rebuild.
        deadline = time.monotonic() + 60
        while _unmerged(state):
            assert time.monotonic() < deadline, "the recall index did not merge its fresh tier"
            time.sleep(0.2)
    with MetaClient.spawn(state_dir=state, config=config("bge-small-en-v1.5-int8")) as meta:
        wait_for("bge-small-en-v1.5-int8", 1 + len(FILLER), meta)
        assert [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, max_entries=1)] == [
            "Diet"
        ]


def _unmerged(state: Path) -> int:
    report = subprocess.run(
        [gateway_command(), "doctor", "--state-dir", str(state), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (realm,) = json.loads(report.stdout)["diagnosis"]["inventory"]
    return int(realm["unmerged_index"] or 0) + int(realm["pending_index"] or 0)


def test_a_model_file_that_fails_its_pin_refuses_the_boot_naming_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from meta_memory.memory.embedding import MODELS, EmbedderUnavailable
    from meta_memory.runtime import MetaRuntime

    real = MODELS["all-minilm-l6-v2-int8"]
    tampered = dataclasses.replace(
        real, model_id="pinned-elsewhere", onnx=dataclasses.replace(real.onnx, sha256="0" * 64)
    )
    monkeypatch.setitem(MODELS, tampered.model_id, tampered)  # a pin the installed file does not match
    config = load_config_dict({"agent_memory": {"recall": "hybrid", "embedding_model": tampered.model_id}})
    with pytest.raises(EmbedderUnavailable) as refused:
        MetaRuntime.open(tmp_path / "state", config)
    assert refused.value.code == -32004
    assert "meta-memory[semantic]" in refused.value.message and "0" * 64 in refused.value.message
    assert not (tmp_path / "state" / "agent-memory").exists() or not any(
        (tmp_path / "state" / "agent-memory").iterdir()
    )


def test_a_gateway_switched_to_lexical_recall_leaves_the_vectors_alone_until_it_switches_back(
    tmp_path: Path,
) -> None:
    """The indexing process would otherwise load the model and embed every write of a lexical
    gateway into a vector file no recall reads; switched back, what was written meanwhile is
    embedded."""
    state = tmp_path / "state"

    def config(recall: str) -> dict[str, Any]:
        return {
            "memory": {"kind": "local_json"},
            "agent_memory": {"recall": recall, "embedding_model": "all-minilm-l6-v2-static-sif"},
        }

    def vectors() -> tuple[int, dict[str, str]]:
        with _vectors(state) as db:
            return db.execute("SELECT count(*) FROM vectors").fetchone()[0], dict(
                db.execute("SELECT * FROM meta")
            )

    def wait(what: Callable[[], bool], why: str) -> None:
        deadline = time.monotonic() + 60
        while not what():
            assert time.monotonic() < deadline, why
            time.sleep(0.2)

    with MetaClient.spawn(state_dir=state, config=config("hybrid")) as meta:
        meta.remember_agent_memory("lead", title=DIET[0], body=DIET[1])
        wait(lambda: vectors()[0] == 1, "the first record was not embedded")
    with MetaClient.spawn(state_dir=state, config=config("lexical")) as meta:
        for title, body in FILLER:
            meta.remember_agent_memory("lead", title=title, body=body)
        assert vectors()[1].get("paused") == "1"  # since the realm was opened
        # The writes' nudges reached the indexing process, which merged them into the recall
        # index: by then a vector file it followed would have been filled too.
        wait(lambda: _unmerged(state) == 0, "the recall index did not merge the writes")
        time.sleep(1.0)
        assert vectors()[0] == 1
    with MetaClient.spawn(state_dir=state, config=config("hybrid")) as meta:
        meta.remember_agent_memory(
            "lead", title="Nudge", body="One more write, to wake the indexing process."
        )
        assert "paused" not in vectors()[1]
        wait(lambda: vectors()[0] == len(FILLER) + 2, "what was written while lexical was not embedded")
