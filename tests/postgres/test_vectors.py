"""``recall = "hybrid"`` on PostgreSQL, with the real model: two gateways share one realm's vectors
(embedded once, by whichever gateway holds the realm's embedding lock), a gateway's recall sees
vectors another embedded, what was just written is found lexically before it is embedded, the
sweep removes the vectors of forgotten records and of a model left unused for a week, a model
switch never mixes two models in one ranking, and the doctor shows how far each realm has come."""

from __future__ import annotations

import json
import struct
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.memory.embedding import DEFAULT_MODEL
from meta_memory.memory.postgres import vectors as pg_vectors
from meta_memory.memory.recall.neighbours import decode_vectors, record_text
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

from ..conftest import Backend, gateway_command

DIET = ("Diet", "Sam is vegetarian and allergic to peanuts.")
QUESTION = "what food should I avoid cooking for them?"
FILLER = [(f"Plant {i}", f"The office plant number {i} needs water on Mondays.") for i in range(12)]
MINILM, BGE = "all-minilm-l6-v2-int8", "bge-small-en-v1.5-int8"


@pytest.fixture
def gateways(pg: Backend, tmp_path: Path) -> Iterator[Callable[..., MetaHandle]]:
    """``open(name, model=MINILM)``: a runtime of its own (its own state dir) on the test's schema."""
    opened: list[MetaRuntime] = []
    clock = ManualClock()

    def open_one(name: str, model: str = MINILM) -> MetaHandle:
        config = {
            "memory": {"kind": "local_json"},
            "agent_memory": {"recall": "hybrid", "embedding_model": model, **pg.store_config()},
        }
        runtime = MetaRuntime.open(tmp_path / name, load_config_dict(config), clock=clock)
        opened.append(runtime)
        return MetaHandle(runtime)

    open_one.clock = clock  # type: ignore[attr-defined]
    yield open_one
    for runtime in reversed(opened):
        runtime.close()


def _fill(meta: MetaHandle, identity: str = "lead") -> dict[str, str]:
    return {
        title: meta.remember_agent_memory(identity, title=title, body=body).memory_id
        for title, body in [DIET, *FILLER]
    }


def _vector_rows(admin: psycopg.Connection, model: str | None = None) -> dict[int, bytes]:
    sql = "SELECT doc, v FROM record_vectors" + (" WHERE model_id = %s" if model else "")
    return {int(doc): bytes(v) for doc, v in admin.execute(sql, (model,) if model else ())}


def _embedded(admin: psycopg.Connection, model: str, count: int) -> Callable[[], bool]:
    return lambda: len(_vector_rows(admin, model)) == count


def _titles(meta: MetaHandle, **params: Any) -> list[str]:
    return [r.title for r in meta.recall_agent_memory("lead", query_text=QUESTION, **params)]


def test_a_paraphrase_is_recalled_through_the_gateway_that_did_not_embed_it(
    gateways: Callable[..., MetaHandle], admin: psycopg.Connection, eventually: Callable[..., bool]
) -> None:
    a, b = gateways("a"), gateways("b")
    _fill(a)
    assert eventually(_embedded(admin, MINILM, 1 + len(FILLER)))
    # b wrote nothing and its embedding thread never ran: what it ranks by is what a embedded.
    assert b.runtime.agent_memory is not None
    factory = b.runtime.agent_memory.stores
    assert _titles(b, max_entries=1) == ["Diet"]
    assert factory.embedding is not None and factory.embedding._thread is None  # type: ignore[attr-defined]
    # Each record embedded once, of its realm and scope.
    rows = admin.execute(
        "SELECT r.doc, r.scope_id, v.scope_id FROM records r JOIN record_vectors v USING (doc)"
    )
    assert all(record_scope == vector_scope for _, record_scope, vector_scope in rows)


def test_each_vector_is_stored_as_a_scale_and_one_int8_a_dimension(
    gateways: Callable[..., MetaHandle], admin: psycopg.Connection, eventually: Callable[..., bool]
) -> None:
    a = gateways("a")
    _fill(a)
    assert eventually(_embedded(admin, MINILM, 1 + len(FILLER)))
    stored = _vector_rows(admin, MINILM)
    assert {len(v) for v in stored.values()} == {384 + 4}
    # Each is the model's own vector of its record's text: read back by hand (a little-endian
    # float32 scale, then 384 signed bytes), it points where the model's float32 vector does.
    texts = {
        int(doc): record_text(title, body, json.loads(tags))
        for doc, title, body, tags in admin.execute("SELECT doc, title, body, tags FROM records")
    }
    assert set(texts) == set(stored)
    assert a.runtime.agent_memory is not None
    embedder = a.runtime.agent_memory.provider.embedder  # type: ignore[attr-defined]
    docs = sorted(stored)
    for doc, vector in zip(docs, embedder.embed_documents([texts[d] for d in docs]), strict=True):
        (scale,) = struct.unpack_from("<f", stored[doc], 0)
        q = np.array(struct.unpack_from("<384b", stored[doc], 4), dtype=np.float64) * scale
        assert float(q @ vector) / float(np.linalg.norm(q)) >= 0.999, doc


def test_what_was_just_written_is_found_lexically_while_another_gateway_holds_the_embedding_lock(
    gateways: Callable[..., MetaHandle],
    pg: Backend,
    admin: psycopg.Connection,
    eventually: Callable[..., bool],
) -> None:
    a = gateways("a")
    key = pg_vectors.embedding_lock_key(_schema(admin), "default", MINILM)
    with psycopg.connect(pg.dsn or "", autocommit=True) as holder:  # another gateway mid-chunk
        holder.execute("SELECT pg_advisory_lock(%s)", (key,))
        ids = _fill(a)
        fresh = a.remember_agent_memory("lead", title="Deploys", body="Deploys need ops approval.")
        assert [r.memory_id for r in a.recall_agent_memory("lead", query_text="deploys approval")] == [
            fresh.memory_id
        ]
        assert not eventually(lambda: bool(_vector_rows(admin)), timeout_s=1.0)  # left to the holder
        assert _titles(a, max_entries=1) == []  # the paraphrase needs the vectors
        holder.execute("SELECT pg_advisory_unlock(%s)", (key,))
    # The holder went away without embedding: this gateway's reads find the realm behind and
    # nudge its own thread, which now takes the lock.
    assert eventually(lambda: _titles(a, max_entries=1) == ["Diet"])
    assert len(_vector_rows(admin)) == len(ids) + 1


def test_a_recall_reports_vectors_behind_and_waits_for_them_when_asked(
    gateways: Callable[..., MetaHandle],
    pg: Backend,
    admin: psycopg.Connection,
    eventually: Callable[..., bool],
) -> None:
    a = gateways("a")

    def recall(**extra: Any) -> dict[str, Any]:
        params = {"identity": "lead", "query_text": QUESTION, "max_entries": 1, **extra}
        reply: dict[str, Any] = a.call("meta/agent_memory/recall", params)
        return reply

    key = pg_vectors.embedding_lock_key(_schema(admin), "default", MINILM)
    with psycopg.connect(pg.dsn or "", autocommit=True) as holder:  # another gateway mid-chunk
        holder.execute("SELECT pg_advisory_lock(%s)", (key,))
        _fill(a)
        assert recall() == {"records": [], "vectors_behind": True}
        # Waiting is bounded by recall_timeout_ms: the holder never lets go, so the recall answers
        # with what is embedded, and says so.
        assert recall(wait_for_vectors=True) == {"records": [], "vectors_behind": True}
        holder.execute("SELECT pg_advisory_unlock(%s)", (key,))
    answers: list[dict[str, Any]] = []
    assert eventually(
        lambda: answers.append(recall(wait_for_vectors=True)) or not answers[-1]["vectors_behind"]
    )
    assert [r["title"] for r in answers[-1]["records"]] == ["Diet"]


def test_the_sweep_removes_forgotten_records_vectors_and_readers_reload_the_scope(
    gateways: Callable[..., MetaHandle],
    admin: psycopg.Connection,
    eventually: Callable[..., bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pg_vectors, "SWEEP_GAP_S", 0.0)
    a, b = gateways("a"), gateways("b")
    ids = _fill(a)
    assert eventually(_embedded(admin, MINILM, 1 + len(FILLER)))
    assert _titles(b, max_entries=1) == ["Diet"]  # b caches the scope's matrix
    (diet_doc,) = admin.execute("SELECT doc FROM records WHERE id = %s", (ids["Diet"],)).fetchone() or ()
    a.forget_agent_memory("lead", ids["Diet"])  # the write nudges a's thread, which sweeps
    assert eventually(lambda: diet_doc not in _vector_rows(admin))
    (generation,) = admin.execute("SELECT generation FROM vector_marks").fetchone() or ()
    assert generation == 1
    assert "Diet" not in _titles(b, max_entries=8)
    store = b.runtime.agent_memory.stores.open_realm("default")  # type: ignore[union-attr]
    (cached,) = store._vectors._cache.values()  # type: ignore[union-attr]
    assert diet_doc not in cached.docs and len(cached.docs) == len(FILLER)


def test_a_model_switch_never_mixes_two_models_and_a_model_unused_for_a_week_is_removed(
    gateways: Callable[..., MetaHandle],
    admin: psycopg.Connection,
    eventually: Callable[..., bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pg_vectors, "SWEEP_GAP_S", 0.0)
    a = gateways("a")
    _fill(a)
    assert eventually(_embedded(admin, MINILM, 1 + len(FILLER)))
    minilm = _vector_rows(admin, MINILM)
    # A gateway on another model (a fleet mid-switch): its reads rebuild the realm for its model,
    # the first gateway's vectors stay, and each ranks by its own model's alone.
    b = gateways("b", BGE)
    assert eventually(lambda: _titles(b, max_entries=1) == ["Diet"] and len(_vector_rows(admin, BGE)) == 13)
    assert _vector_rows(admin, MINILM) == minilm
    bge = _vector_rows(admin, BGE)
    assert all(bge[doc] != v for doc, v in minilm.items())
    store = b.runtime.agent_memory.stores.open_realm("default")  # type: ignore[union-attr]
    (ranked,) = store._vectors._cache.values()  # type: ignore[union-attr]
    # What b ranks by is its model's stored vectors, row for row (decoded from their int8 form).
    assert sorted(int(doc) for doc in ranked.docs) == sorted(bge)
    assert np.array_equal(ranked.matrix, decode_vectors([bge[int(doc)] for doc in ranked.docs], 384))
    assert _titles(a, max_entries=1) == ["Diet"]
    # A week on with no gateway embedding with MiniLM: the next sweep removes its vectors.
    gateways.clock.advance(pg_vectors.OTHER_MODEL_KEEP_MS + 1)  # type: ignore[attr-defined]
    b.remember_agent_memory("lead", title="Deploys", body="Deploys need ops approval.")
    assert eventually(lambda: not _vector_rows(admin, MINILM))
    assert [row[0] for row in admin.execute("SELECT model_id FROM vector_marks")] == [BGE]


def test_the_doctor_shows_how_far_each_realms_vectors_have_come(
    gateways: Callable[..., MetaHandle],
    pg: Backend,
    admin: psycopg.Connection,
    eventually: Callable[..., bool],
    tmp_path: Path,
) -> None:
    a = gateways("a")
    _fill(a)
    assert eventually(_embedded(admin, MINILM, 1 + len(FILLER)))
    (tmp_path / "d").mkdir()
    config = tmp_path / "doctor.toml"
    config.write_text(
        f'[agent_memory]\nstore = "postgres"\nrecall = "hybrid"\nembedding_model = "{MINILM}"\n'
        f'[agent_memory.postgres]\ndsn = "{pg.dsn}"\n'
    )
    report = subprocess.run(
        [gateway_command(), "doctor", "--state-dir", str(tmp_path / "d"), "--config", str(config), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    (realm,) = json.loads(report.stdout)["diagnosis"]["inventory"]
    assert realm["vectors"] == {"model_id": MINILM, "embedded": 13, "active": 13}


def test_a_model_fault_in_the_embedding_thread_is_logged_once_and_recall_stays_lexical(
    gateways: Callable[..., MetaHandle],
    admin: psycopg.Connection,
    eventually: Callable[..., bool],
    caplog: pytest.LogCaptureFixture,
) -> None:
    a = gateways("a")
    assert a.runtime.agent_memory is not None
    worker = a.runtime.agent_memory.stores.embedding  # type: ignore[attr-defined]

    def broken(texts: Any) -> Any:
        raise RuntimeError("the model failed to run")

    worker.embedder = type("Broken", (), {"model_id": MINILM, "dim": 384, "embed_documents": broken})()
    with caplog.at_level("WARNING", logger="meta_memory.postgres"):
        fresh = a.remember_agent_memory("lead", title="Deploys", body="Deploys need ops approval.")
        a.remember_agent_memory("lead", title="Backups", body="Backups run nightly.")
        assert eventually(lambda: any("embedding records failed" in r.getMessage() for r in caplog.records))
        assert [r.memory_id for r in a.recall_agent_memory("lead", query_text="deploys approval")] == [
            fresh.memory_id
        ]
    assert sum("embedding records failed" in r.getMessage() for r in caplog.records) == 1
    assert not _vector_rows(admin)


def _schema(admin: psycopg.Connection) -> str:
    (schema,) = admin.execute("SELECT current_schema()").fetchone() or ()
    return str(schema)


def test_a_lexical_realm_on_the_previous_schema_is_migrated_and_embedded_by_reads_alone(
    pg: Backend,
    tmp_path: Path,
    admin: psycopg.Connection,
    eventually: Callable[..., bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from meta_memory.memory.postgres import migrations

    config = {"memory": {"kind": "local_json"}, "agent_memory": pg.store_config()}
    with MetaRuntime.open(tmp_path / "old", load_config_dict(config)) as runtime:
        _fill(MetaHandle(runtime))
    # The schema of a release from before vectors: migration 2's tables and its row gone (the
    # records keep what later migrations added, which that release's code never wrote).
    admin.execute("DROP TABLE record_vectors, vector_marks")
    admin.execute("DROP INDEX records_by_realm_doc")
    admin.execute("DELETE FROM meta_schema_migrations WHERE version = 2")
    switched = {"memory": {"kind": "local_json"}, "agent_memory": {"recall": "hybrid", **pg.store_config()}}
    with MetaRuntime.open(tmp_path / "new", load_config_dict(switched)) as runtime:
        meta = MetaHandle(runtime)
        assert [v for (v,) in admin.execute("SELECT version FROM meta_schema_migrations ORDER BY 1")] == list(
            range(1, migrations.SCHEMA_VERSION + 1)
        )
        # No write: the reads find the realm behind and nudge the embedding thread; they rank
        # lexically meanwhile (the paraphrase is found once the vectors are there).
        assert eventually(lambda: _titles(meta, max_entries=1) == ["Diet"])
        assert len(_vector_rows(admin, DEFAULT_MODEL)) == 1 + len(FILLER)


def test_vectors_of_the_retired_static_model_are_embedded_again_by_its_replacement(
    gateways: Callable[..., MetaHandle], admin: psycopg.Connection, eventually: Callable[..., bool]
) -> None:
    """``all-minilm-l6-v2-static`` (log-rank weights) is read as ``all-minilm-l6-v2-static-sif``;
    a realm's vectors kept under the retired id are never ranked beside the new model's."""
    static, retired = "all-minilm-l6-v2-static-sif", "all-minilm-l6-v2-static"
    a = gateways("a", static)
    _fill(a)
    assert eventually(_embedded(admin, static, 1 + len(FILLER)))
    # As a release up to e85f6cd left the schema: every vector and mark under the retired id.
    with admin.transaction():
        admin.execute("UPDATE record_vectors SET model_id = %s", (retired,))
        admin.execute("UPDATE vector_marks SET model_id = %s", (retired,))
    b = gateways("b", retired)
    assert eventually(
        lambda: _titles(b, max_entries=1) == ["Diet"] and len(_vector_rows(admin, static)) == 13
    )
    assert len(_vector_rows(admin, retired)) == 13  # left for the sweep of unused models, never ranked
    store = b.runtime.agent_memory.stores.open_realm("default")  # type: ignore[union-attr]
    (ranked,) = store._vectors._cache.values()  # type: ignore[union-attr]
    fresh = _vector_rows(admin, static)
    assert np.array_equal(ranked.matrix, decode_vectors([fresh[int(doc)] for doc in ranked.docs], 384))
