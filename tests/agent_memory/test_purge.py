"""``meta/agent_memory/purge`` on both backends, black-box: after a record's lineage and then a
whole identity are purged, a byte search of every file under the state dir (the runtime closed)
or of a ``pg_dump`` of the schema finds none of their marker strings, while another identity's
markers are all still there (the search's own oracle); what remains is the receipt, with ids and
content hashes only. Hybrid recall is on, so the vectors and the recall index are in the search.
A purge racing with a stream of writes to the same identity leaves none of the writes
acknowledged before it began. Access: the reserved ``agent.memory.admin`` on the console, an
application key only within its realms."""

from __future__ import annotations

import hashlib
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from meta_memory.access import Principal
from meta_memory.errors import AccessDenied, InvalidParams, UnknownRecord

from ..conftest import Backend
from ..panel.conftest import REVIEWER, ROOT, Bench, access_config, open_bench

PURGE = "meta/agent_memory/purge"
GET = "meta/agent_memory/get"
RED = Principal("rex", frozenset({"red"}))  # read, view and review on team red: no admin

# One token each, as the analyzer keeps them: they reach the recall index's terms as they are.
ALICE = [f"qzalice{n}mark" for n in range(8)]
BOB = [f"qzbob{n}mark" for n in range(3)]


@pytest.fixture
def bench(tmp_path: Path, backend: Backend) -> Iterator[Bench]:
    made = open_bench(tmp_path / "state", access_config(), backend)
    yield made
    made.runtime.close()


def _hybrid(tmp_path: Path, backend: Backend) -> Bench:
    config = access_config()
    config["agent_memory"] = {**config["agent_memory"], "recall": "hybrid"}
    return open_bench(tmp_path / "state", config, backend)


def _wait_embedded(bench: Bench, eventually: Any) -> None:
    store = bench.store()

    def caught_up() -> bool:
        # A hybrid recall asks for what is behind (nudges the embedder, or embeds inline).
        bench.sdk("meta/agent_memory/recall", {"identity": "scout", "query_text": "notes"})
        progress = store.vector_progress()
        return progress is not None and progress[1] >= progress[0]

    assert eventually(caught_up, 60)


def _files_text(state: Path) -> bytes:
    """Every byte of every file under the state dir, lower-cased (the index keeps terms so)."""
    return b"\n".join(p.read_bytes() for p in sorted(state.rglob("*")) if p.is_file()).lower()


def _dump_text(dsn: str) -> bytes:
    query = parse_qs(urlsplit(dsn).query)
    schema = query["options"][0].split("search_path=")[1]
    base = dsn.split("?")[0]
    out = subprocess.run(
        ["pg_dump", "--schema", schema, "--data-only", base], capture_output=True, check=True, timeout=120
    )
    return out.stdout.lower()


def _stored(bench: Bench) -> bytes:
    if bench.backend.dsn is not None:
        return _dump_text(bench.backend.dsn)
    return _files_text(bench.runtime.layout.root)


def _purge(bench: Bench, principal: Principal = ROOT, **params: Any) -> dict[str, Any]:
    bench.tick()
    reply: dict[str, Any] = bench.call(PURGE, params, principal)
    return reply


def test_purged_text_is_in_no_file_or_table_and_the_receipt_holds_ids_and_hashes(
    tmp_path: Path, backend: Backend, eventually: Any
) -> None:
    bench = _hybrid(tmp_path, backend)
    closed = False
    try:
        first = bench.remember("lead", f"Deploys {ALICE[0]}", f"Deploys on Tuesdays {ALICE[0]}.")
        bench.tick()
        second = bench.sdk(
            "meta/agent_memory/update",
            {"identity": "lead", "memory_id": first, "title": "Deploys", "body": f"Wednesdays {ALICE[1]}."},
        )["memory_id"]
        # A quarantined update of it, released: the release derives from the quarantined record.
        held = bench.quarantine("lead", "Deploys", f"Thursdays {ALICE[2]}.", memory_id=second)
        released = bench.decide(held, "release", identity="lead")["successor"]["memory_id"]
        kept = bench.remember("lead", "Pager", f"The pager rotates weekly {ALICE[3]}.")
        forgotten = bench.remember("lead", "Old", f"An old note {ALICE[4]}.")
        bench.sdk("meta/agent_memory/forget", {"identity": "lead", "memory_id": forgotten})
        bench.quarantine("lead", "Rumour", f"Unreviewed {ALICE[5]}.")
        mob_session = bench.session("lead", mob="ops")
        proposed = bench.tool(mob_session, action="propose_to_mob", title="Ops", body=f"Ops rule {ALICE[7]}.")
        assert "Proposed to mob ops" in proposed["content"], proposed
        session = bench.session("lead")
        turn = bench.sdk(
            "meta/session/turn", {"session_key": session, "message": "how does the pager rotate?"}
        )
        assert kept in turn["injected"]
        bench.sdk("meta/session/close", {"session_key": session})
        others = [bench.remember("scout", f"Scout {marker}", f"Scout notes {marker}.") for marker in BOB]
        # Enough records around them that pages split and cells move, and (SQLite) everything in
        # the recall index's postings and terms, not only its fresh tier.
        fillers: list[str] = []
        for n in range(120):
            bench.remember("lead", f"Lead filler {n}", f"{ALICE[6]} filler {n} " + "lorem ipsum " * 30)
            fillers.append(
                bench.remember("scout", f"Scout filler {n}", f"{BOB[2]} filler {n} " + "lorem " * 30)
            )
        _wait_embedded(bench, eventually)
        if backend.dsn is None:
            store: Any = bench.store()
            store.flush_index()
            store.merge_fresh(10**6)
            # SQLite builds differ in whether deleted content is zeroed (SQLITE_SECURE_DELETE): the
            # purge must not depend on it, so these connections leave it in place.
            store._db.execute("PRAGMA secure_delete = OFF")
            store._keeper.index._db.execute("PRAGMA secure_delete = OFF")

        receipt = _purge(bench, identity="lead", memory_id=second)
        lineage = {first, second, held, released}
        assert {r["memory_id"] for r in receipt["records"]} == lineage
        assert receipt["receipt_id"].startswith("purge-") and receipt["by"] == {
            "kind": "console",
            "principal": "root",
        }
        for entry in receipt["records"]:
            assert set(entry) == {"memory_id", "content_hash", "status", "scope"}
            assert len(entry["content_hash"]) == 64
        for memory_id in lineage:
            with pytest.raises(UnknownRecord):
                bench.sdk(GET, {"identity": "lead", "memory_id": memory_id})
        assert bench.sdk(GET, {"identity": "lead", "memory_id": kept})["record"]["status"] == "active"

        everything = _purge(bench, identity="lead", all=True)
        assert kept in {r["memory_id"] for r in everything["records"]}
        assert forgotten in {r["memory_id"] for r in everything["records"]}
        assert everything["removed"]["injections"] >= 1 and everything["removed"]["proposals"] == 1
        recalled = bench.sdk("meta/agent_memory/recall", {"identity": "lead", "query_text": "pager"})
        assert recalled["records"] == []
        for memory_id in others:
            assert (
                bench.sdk(GET, {"identity": "scout", "memory_id": memory_id})["record"]["status"] == "active"
            )
        for memory_id in fillers:
            assert (
                bench.sdk(GET, {"identity": "scout", "memory_id": memory_id})["record"]["status"] == "active"
            )
        hits = bench.sdk("meta/agent_memory/recall", {"identity": "scout", "query_text": BOB[0]})
        assert hits["records"][0]["memory_id"] == others[0]

        # The receipt is kept as the realm's audit row: ids and hashes, no content.
        (audit,) = [r for r in bench.store().audit_rows() if r["op"] == "purge" and r["detail"]["memory_ids"]]
        assert {r["memory_id"] for r in audit["detail"]["records"]} == lineage
        # The vectors of the purged records are gone, the other identity's are there.
        if backend.dsn is None:
            import sqlite3

            from meta_memory.storage.layout import StateLayout

            vectors = StateLayout.vector_path(bench.runtime.layout.realm_db_path("default"))
            with sqlite3.connect(vectors) as db:
                (count,) = db.execute("SELECT count(*) FROM vectors").fetchone()
        else:
            ((count,),) = backend.stored(bench.runtime.layout.root, "SELECT count(*) FROM record_vectors")
        assert count == len(others) + len(fillers)

        bench.runtime.close()
        closed = True
        stored = _stored(bench)
        assert all(marker.encode() in stored for marker in BOB)  # the search sees what is there
        assert [m for m in ALICE if m.encode() in stored] == []
    finally:
        if not closed:
            bench.runtime.close()


def test_a_record_purge_names_a_record_of_the_identity_and_an_identity_purge_says_so(bench: Bench) -> None:
    mine = bench.remember("lead", "Mine", "Lead's note.")
    theirs = bench.remember("scout", "Theirs", "Scout's note.")
    with pytest.raises(UnknownRecord):
        _purge(bench, identity="lead", memory_id=theirs)
    with pytest.raises(UnknownRecord):
        _purge(bench, identity="lead", memory_id="mem-nonexistent")
    with pytest.raises(InvalidParams, match=r"one is required.*\(got none\)"):
        _purge(bench, identity="lead")
    with pytest.raises(InvalidParams, match=r"exclusive.*\(got memory_id, all\)"):
        _purge(bench, identity="lead", memory_id=mine, all=True)
    with pytest.raises(InvalidParams, match="memory_ids must be an array of 1 to 1000"):
        _purge(bench, identity="lead", memory_ids=[])
    with pytest.raises(InvalidParams, match="memory_ids must be an array of 1 to 1000"):
        _purge(bench, identity="lead", memory_ids=[mine] * 1001)
    with pytest.raises(UnknownRecord):  # one of them another identity's: nothing is purged
        _purge(bench, identity="lead", memory_ids=[mine, theirs])
    assert bench.sdk(GET, {"identity": "scout", "memory_id": theirs})["record"]["status"] == "active"
    assert bench.sdk(GET, {"identity": "lead", "memory_id": mine})["record"]["status"] == "active"
    # A realm that does not exist is not created by a purge: nothing of anyone's is there.
    empty = _purge(bench, identity="lead", all=True, realm="elsewhere")
    assert empty["receipt_id"] is None and empty["records"] == []
    assert "elsewhere" not in bench.runtime.agent_memory.realms()  # type: ignore[union-attr]


def test_purge_needs_the_admin_action_on_the_console(bench: Bench) -> None:
    target = bench.remember("lead", "Note", "A note.")
    with pytest.raises(AccessDenied) as denied:
        _purge(bench, RED, identity="lead", memory_id=target)
    assert denied.value.data["action"] == "agent.memory.admin"
    assert bench.sdk(GET, {"identity": "lead", "memory_id": target})["record"]["status"] == "active"
    receipt = _purge(bench, REVIEWER, identity="lead", memory_id=target)  # agent.memory.* covers it
    assert receipt["by"] == {"kind": "console", "principal": "rev"}


def test_a_purge_racing_with_writes_leaves_none_acknowledged_before_it_began(bench: Bench) -> None:
    """Every write acknowledged before the purge began is purged; every write sent after it ended
    survives. (A write sent before the purge ended may commit in time to be purged, and its reply
    reach the writer's thread after the purge's: when it was sent is what places it after.)"""
    acked: list[tuple[float, float, str]] = []  # (sent, acknowledged, memory id)
    stop = threading.Event()
    failures: list[BaseException] = []

    def write() -> None:
        n = 0
        try:
            while not stop.is_set():
                n += 1
                sent = time.monotonic()
                reply = bench.sdk(
                    "meta/agent_memory/remember",
                    {"identity": "lead", "title": f"Note {n}", "body": f"Note {n}."},
                )
                acked.append((sent, time.monotonic(), reply["memory_id"]))
        except BaseException as exc:  # pragma: no cover - reported below
            failures.append(exc)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        while len(acked) < 100:
            time.sleep(0.005)
        began = time.monotonic()
        receipt = bench.call(PURGE, {"identity": "lead", "all": True}, ROOT)
        ended = time.monotonic()
        while not [sent for sent, _, _ in acked if sent > ended]:
            time.sleep(0.005)
    finally:
        stop.set()
        writer.join(timeout=60)
    assert not failures
    before = {memory_id for _, at, memory_id in acked if at < began}
    after = {memory_id for sent, _, memory_id in acked if sent > ended}
    assert before and after
    assert before <= {r["memory_id"] for r in receipt["records"]}
    survivors = set()
    cursor = None
    while True:
        page = bench.sdk(
            "meta/agent_memory/list",
            {"identity": "lead", "status": "any", "limit": 200, **({"cursor": cursor} if cursor else {})},
        )
        survivors |= {r["memory_id"] for r in page["records"]}
        cursor = page.get("next_cursor")
        if not cursor:
            break
    assert not survivors & before
    assert after <= survivors


def test_the_receipt_hashes_are_the_records_content_hashes(bench: Bench) -> None:
    memory_id = bench.remember("lead", "Hashed", "The body whose hash the receipt keeps.")
    record = bench.sdk(GET, {"identity": "lead", "memory_id": memory_id})["record"]
    receipt = _purge(bench, identity="lead", memory_id=memory_id)
    (entry,) = receipt["records"]
    assert entry["content_hash"] == record["content_hash"]
    # REFERENCE 5.1: sha256 over the title's length (8 bytes, little-endian), the title, the body.
    title = b"Hashed"
    body = b"The body whose hash the receipt keeps."
    expected = hashlib.sha256(len(title).to_bytes(8, "little") + title + body).hexdigest()
    assert entry["content_hash"] == expected


def test_a_record_written_after_the_newest_records_were_purged_is_recalled(bench: Bench) -> None:
    """SQLite gives the next record max(doc) + 1: purging the newest records gives their docs
    again, and the recall index must take in the record that gets one."""
    old = bench.remember("lead", "Cello lessons", "Cello lessons on Thursdays.")
    assert bench.sdk("meta/agent_memory/recall", {"identity": "lead", "query_text": "cello"})["records"]
    _purge(bench, identity="lead", memory_id=old)
    new = bench.remember("scout", "Espresso grinder", "The espresso grinder is on 12.")
    found = bench.sdk("meta/agent_memory/recall", {"identity": "scout", "query_text": "espresso grinder"})
    assert [r["memory_id"] for r in found["records"]] == [new]
    assert bench.sdk("meta/agent_memory/recall", {"identity": "lead", "query_text": "cello"})["records"] == []


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a_rewrite_a_reader_held_up_is_owed_and_the_upkeep_finishes_it(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite: a reader holding the realm file's WAL makes the rewrite give up (purge_incomplete,
    the rows already gone); the rewrite stays owed in the realm file and the upkeep's sweep does it
    once the reader has gone, so no file keeps the text."""
    import sqlite3

    from meta_memory.errors import PurgeIncomplete
    from meta_memory.memory.sqlite import purge as sqlite_purge

    monkeypatch.setattr(sqlite_purge, "REWRITE_WAIT_S", 0.2)
    target = bench.remember("lead", "Secret plan", f"The plan is {ALICE[0]}.")
    for n in range(50):
        bench.remember("scout", f"Filler {n}", f"{BOB[0]} filler {n} " + "lorem " * 40)
    store: Any = bench.store()
    store._db.execute("PRAGMA secure_delete = OFF")  # as on SQLite builds without it
    owed = "SELECT count(*) FROM store_meta WHERE key = 'rewrite_pending'"
    reader = sqlite3.connect(bench.runtime.layout.realm_db_path("default"), isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM records").fetchone()  # holds its snapshot
        with pytest.raises(PurgeIncomplete):
            _purge(bench, identity="lead", memory_id=target)
        with pytest.raises(UnknownRecord):
            bench.sdk(GET, {"identity": "lead", "memory_id": target})
        assert store._db.execute(owed).fetchone() == (1,)
        # While the reader stays, a sweep leaves the rewrite owed without rewriting anything (a
        # rewrite would hold the realm's writes for its whole wait, at every sweep).
        rewrites: list[str] = []
        rewrite = sqlite_purge.rewrite
        monkeypatch.setattr(
            sqlite_purge, "rewrite", lambda db, name: rewrites.append(name) or rewrite(db, name)
        )
        memory = bench.runtime.agent_memory
        assert memory is not None
        memory.expiry.sweep()
        assert rewrites == [] and store._db.execute(owed).fetchone() == (1,)
    finally:
        reader.close()
    memory.expiry.sweep()
    assert rewrites, "the sweep rewrote the files once the reader had gone"
    assert store._db.execute(owed).fetchone() == (0,)
    bench.runtime.close()
    stored = _files_text(bench.runtime.layout.root)
    assert ALICE[0].encode() not in stored and BOB[0].encode() in stored
