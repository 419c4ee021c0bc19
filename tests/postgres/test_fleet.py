"""Several gateways on one database: real ``meta_gateway serve`` processes, each with a state dir of
its own, sharing one PostgreSQL schema. What one remembers, updates or forgets the others recall at
once; concurrent writes through all of them are all kept, each once, and each findable; two
reviewers deciding one record on two gateways apply it once; an event on one reaches the other's
console stream; a gateway killed mid-burst loses nothing it acknowledged."""

from __future__ import annotations

import json
import queue
import signal
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from ..conftest import Backend
from ..security.conftest import DEADLINE_S, Served
from .conftest import toml_for

QUARANTINED = 'llm_writes = "quarantined"\n'


@pytest.fixture
def fleet(pg: Backend, serve: Callable[..., Served]) -> Callable[[int], list[Served]]:
    """``fleet(n)``: n gateways on ``pg``'s schema (loopback, no tokens: the console is open)."""
    assert pg.dsn is not None
    dsn = pg.dsn

    def start(n: int) -> list[Served]:
        return [serve(toml_for(dsn, QUARANTINED)) for _ in range(n)]

    return start


def ok(reply: dict[str, Any]) -> Any:
    assert "result" in reply, reply
    return reply["result"]


def remember(gateway: Served, title: str, body: str, identity: str = "alice") -> str:
    params = {"identity": identity, "title": title, "body": body}
    return str(ok(gateway.rpc("meta/agent_memory/remember", params))["memory_id"])


def recall(gateway: Served, text: str, identity: str = "alice", n: int = 8) -> list[dict[str, Any]]:
    params = {"identity": identity, "query_text": text, "max_entries": n}
    records: list[dict[str, Any]] = ok(gateway.rpc("meta/agent_memory/recall", params))["records"]
    return records


def test_what_one_gateway_remembers_updates_or_forgets_the_other_sees_at_once(
    fleet: Callable[[int], list[Served]],
) -> None:
    a, b = fleet(2)

    made = remember(a, "Deploy window", "Deploys happen on Tuesdays after the standup.")
    assert [r["memory_id"] for r in recall(b, "when do deploys happen")] == [made]

    update = {
        "identity": "alice",
        "memory_id": made,
        "title": "Deploy window",
        "body": "Deploys moved to Thursdays.",
    }
    revised = ok(b.rpc("meta/agent_memory/update", update))["memory_id"]
    assert [(r["memory_id"], r["body"]) for r in recall(a, "deploys")] == [
        (revised, "Deploys moved to Thursdays.")
    ]

    assert (
        ok(a.rpc("meta/agent_memory/forget", {"identity": "alice", "memory_id": revised}))["deleted"] is True
    )
    assert recall(b, "deploys") == []


def test_concurrent_writes_through_both_gateways_are_all_kept_once_and_each_is_recalled(
    pg: Backend, fleet: Callable[[int], list[Served]], tmp_path: Path
) -> None:
    gateways = fleet(2)
    writers, each = 8, 20

    def write(w: int) -> list[tuple[str, str]]:
        made = []
        with httpx.Client(timeout=DEADLINE_S) as http:
            for n in range(each):
                gateway = gateways[(w + n) % 2]
                token = f"zq{w}x{n}k"  # a term no other record has
                body = {
                    "identity": "alice",
                    "title": f"Note {w}-{n}",
                    "body": f"Marker {token} for the test.",
                }
                reply = http.post(
                    f"{gateway.url}/rpc",
                    json={"jsonrpc": "2.0", "id": 1, "method": "meta/agent_memory/remember", "params": body},
                ).json()
                made.append((ok(reply)["memory_id"], token))
        return made

    with ThreadPoolExecutor(max_workers=writers) as pool:
        written = [pair for batch in pool.map(write, range(writers)) for pair in batch]

    ids = [memory_id for memory_id, _ in written]
    assert len(set(ids)) == writers * each
    stored = pg.stored(tmp_path, "SELECT id FROM records WHERE status = 'active'")
    assert sorted(i for (i,) in stored) == sorted(ids)
    # The recall index, kept in each write's transaction, agrees with the records.
    [(docs,)] = pg.stored(tmp_path, "SELECT sum(doc_count) FROM scope_stats")
    assert docs == writers * each
    for memory_id, token in written[:: len(written) // 16]:
        for gateway in gateways:
            assert [r["memory_id"] for r in recall(gateway, token)] == [memory_id]


def _quarantine(gateway: Served, title: str, body: str) -> str:
    session = ok(gateway.rpc("meta/session/open", {"identity": "alice"}))["session_key"]
    arguments = {"action": "remember", "title": title, "body": body}
    result = ok(gateway.rpc("meta/session/memory_tool", {"session_key": session, "arguments": arguments}))
    assert result["outcome"] == "quarantined", result
    return next(w.strip(".,") for w in reversed(result["content"].split()) if w.startswith("mem-"))


def _content_hash(gateway: Served, memory_id: str) -> str:
    record = ok(gateway.rpc("meta/memory/panel/record", {"memory_id": memory_id}, path="/console/rpc"))
    return str(record["record"]["content_hash"])


def _decide(
    gateway: Served, origin: str, verdict: str, expected: str, start: threading.Barrier
) -> dict[str, Any]:
    params = {"identity": "alice", "memory_id": origin, "verdict": verdict, "expected_content_hash": expected}
    start.wait(timeout=DEADLINE_S)
    reply: dict[str, Any] = gateway.rpc("meta/memory/quarantine/decide", params, path="/console/rpc")
    return reply


APPLIED = ("released", "tombstoned")


def test_two_reviewers_on_two_gateways_deciding_one_record_apply_it_once(
    pg: Backend, fleet: Callable[[int], list[Served]], tmp_path: Path
) -> None:
    a, b = fleet(2)
    for n in range(6):
        origin = _quarantine(a, f"Fact {n}", f"Fact number {n} holds for the fleet.")
        expected = _content_hash(b, origin)
        verdicts = ("release", "release") if n % 2 == 0 else ("release", "tombstone")
        start = threading.Barrier(2)
        with ThreadPoolExecutor(max_workers=2) as pool:
            racing = [
                pool.submit(_decide, g, origin, v, expected, start)
                for g, v in zip((a, b), verdicts, strict=True)
            ]
            replies = [f.result(timeout=DEADLINE_S) for f in racing]

        applied = [r["result"]["outcome"] for r in replies if r.get("result", {}).get("outcome") in APPLIED]
        assert len(applied) == 1, replies
        [other] = [r for r in replies if r.get("result", {}).get("outcome") not in APPLIED]
        # The one that lost: the replay of the same verdict, or a refusal (the record was decided).
        if "result" in other:
            assert other["result"]["outcome"] == f"already_{applied[0]}"
        else:
            assert other["error"]["code"] == -32043 and other["error"]["data"]["reason"] == "not_quarantined"
        successors = pg.stored(tmp_path, "SELECT count(*) FROM records WHERE id = ?", (f"{origin}-released",))
        assert successors == [(1 if applied == ["released"] else 0,)]
        [(reviews,)] = pg.stored(
            tmp_path, "SELECT count(*) FROM audit WHERE detail->'review'->>'origin' = ?", (origin,)
        )
        assert reviews == (2 if applied == ["released"] else 1)  # one decision's rows, never two


def _stream(gateway: Served, into: queue.Queue[dict[str, Any]], stop: threading.Event) -> None:
    try:
        _read_stream(gateway, into, stop)
    except httpx.HTTPError:
        return  # the gateway stopped (the test is over)


def _read_stream(gateway: Served, into: queue.Queue[dict[str, Any]], stop: threading.Event) -> None:
    with (
        httpx.Client(timeout=httpx.Timeout(DEADLINE_S, read=None)) as http,
        http.stream("GET", f"{gateway.url}/console/timeline/stream") as stream,
    ):
        event: dict[str, Any] = {}
        for line in stream.iter_lines():
            if stop.is_set():
                return
            if line == ": connected":
                into.put({"connected": True})
            elif line.startswith("id: "):
                event = {"id": line[4:]}
            elif line.startswith("event: "):
                event["event"] = line[7:]
            elif line.startswith("data: "):
                event["data"] = json.loads(line[6:])
                into.put(event)


@pytest.fixture
def streams() -> Iterator[Callable[[Served], queue.Queue[dict[str, Any]]]]:
    stop = threading.Event()

    def open_stream(gateway: Served) -> queue.Queue[dict[str, Any]]:
        into: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=_stream, args=(gateway, into, stop), daemon=True).start()
        assert into.get(timeout=DEADLINE_S) == {"connected": True}
        return into

    yield open_stream
    stop.set()


def test_an_event_on_one_gateway_reaches_the_console_stream_of_the_other(
    fleet: Callable[[int], list[Served]], streams: Callable[[Served], queue.Queue[dict[str, Any]]]
) -> None:
    a, b = fleet(2)
    on_b = streams(b)

    origin = _quarantine(a, "Shared gotcha", "The VPN drops idle links after ten minutes.")

    event = on_b.get(timeout=DEADLINE_S)
    assert event["event"] == "memory.write.quarantined" and event["data"]["data"]["realm"] == "default"
    assert event["id"] == event["data"]["event_id"]
    assert origin.startswith("mem-")
    # The same event, by the same id, in either gateway's stored timeline.
    for gateway in (a, b):
        stored = ok(gateway.rpc("meta/timeline/query", {"limit": 50}))["events"]
        assert event["id"] in [e["event_id"] for e in stored]


def test_a_gateway_killed_mid_burst_loses_nothing_it_acknowledged(
    pg: Backend, fleet: Callable[[int], list[Served]], tmp_path: Path
) -> None:
    a, b = fleet(2)
    acknowledged: list[str] = []
    started = threading.Event()

    def burst() -> None:
        with httpx.Client(timeout=DEADLINE_S) as http:
            for n in range(100_000):
                try:
                    reply = http.post(
                        f"{a.url}/rpc",
                        json={
                            "jsonrpc": "2.0",
                            "id": n,
                            "method": "meta/agent_memory/remember",
                            "params": {
                                "identity": "alice",
                                "title": f"Burst {n}",
                                "body": f"Burst write {n}.",
                            },
                        },
                    ).json()
                except httpx.HTTPError:
                    return  # the gateway is gone
                acknowledged.append(ok(reply)["memory_id"])
                if len(acknowledged) == 40:
                    started.set()

    writer = threading.Thread(target=burst)
    writer.start()
    assert started.wait(timeout=DEADLINE_S)
    a.proc.send_signal(signal.SIGKILL)
    writer.join(timeout=DEADLINE_S)
    a.proc.wait(timeout=DEADLINE_S)

    stored = {i for (i,) in pg.stored(tmp_path, "SELECT id FROM records")}
    assert set(acknowledged) <= stored and len(acknowledged) >= 40
    # The survivor serves on, and finds what the dead gateway acknowledged.
    assert [r["memory_id"] for r in recall(b, f"burst write {len(acknowledged) - 1}", n=1)] == [
        acknowledged[-1]
    ]
    remember(b, "After", "Written after the other gateway died.")
