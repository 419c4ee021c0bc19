"""An export imported into a fresh state dir exports again byte for byte, with its history and
lineage, except that a record released from quarantine arrives quarantined again (nothing in a
file proves a release); importing it twice changes nothing (real ``meta_gateway`` runs, on both
backends)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from meta_memory.clock import ManualClock
from meta_memory.memory.params import RecallParams
from meta_memory.memory.records import Status
from meta_memory.runtime import MetaRuntime

from ..conftest import Backend, make_backend
from .conftest import (
    RELEASED_ON_ARRIVAL,
    UNICODE_BODY,
    History,
    Run,
    as_arrived,
    export_file,
    lines_of,
    memory_of,
    write_history,
)


def _exported(
    tmp_path: Path,
    backend: Backend,
    open_runtime: Callable[[Path, Backend], MetaRuntime],
    clock: ManualClock,
) -> tuple[Path, History]:
    state = tmp_path / "source"
    runtime = open_runtime(state, backend)
    history = write_history(runtime, clock)
    runtime.close()
    return state, history


def test_an_export_with_history_round_trips_byte_for_byte_but_its_released_record_awaits_review(
    tmp_path: Path, backend: Backend, target: Backend, open_runtime, clock, cli: Callable[..., Run]
) -> None:
    source, history = _exported(tmp_path, backend, open_runtime, clock)
    first = cli(backend, "export", "--state-dir", str(source), "--include-history")
    assert first.status == 0, first.stderr
    export = tmp_path / "export.jsonl"
    export.write_bytes(first.stdout)

    loaded = cli(target, "import", str(export), "--state-dir", str(tmp_path / "fresh"))
    assert loaded.status == 0, loaded.stderr
    again = cli(target, "export", "--state-dir", str(tmp_path / "fresh"), "--include-history")

    assert again.status == 0, again.stderr
    assert again.stdout == as_arrived(first.stdout, {history.released.id: RELEASED_ON_ARRIVAL})
    lines = lines_of(first.stdout)
    assert lines[0] == {
        "format": "meta-memory-export",
        "version": 1,
        "include_history": True,
        "realm": None,
        "identity": None,
    }
    assert loaded.text.startswith(f"imported {len(lines) - 1}, skipped 0, refused 0 ")
    assert "; 1 arrived quarantined, for review" in loaded.text
    assert loaded.stderr.splitlines() == [
        f"meta_gateway: export.jsonl line {_line_of(lines, history.released.id)} ({history.released.id}): "
        f"imported quarantined, for a reviewer: {RELEASED_ON_ARRIVAL.removeprefix('import: ')}"
    ]


def test_an_export_without_quarantine_round_trips_byte_for_byte(
    tmp_path: Path, backend: Backend, target: Backend, open_runtime, clock, cli: Callable[..., Run]
) -> None:
    source, history = _exported(tmp_path, backend, open_runtime, clock)
    quarantine = {history.released_origin.id, history.released.id, history.quarantined.id}
    lines = lines_of(cli(backend, "export", "--state-dir", str(source), "--include-history").stdout)
    clean = export_file(
        [line for line in lines[1:] if line["record"]["id"] not in quarantine], header=lines[0]
    )
    export = tmp_path / "clean.jsonl"
    export.write_bytes(clean)

    loaded = cli(target, "import", str(export), "--state-dir", str(tmp_path / "fresh"))
    again = cli(target, "export", "--state-dir", str(tmp_path / "fresh"), "--include-history")

    assert loaded.status == 0 and loaded.stderr == "", loaded.stderr
    assert again.stdout == clean
    assert {line["record"]["trust"] for line in lines_of(clean)[1:]} == {"agent_observed", "operator"}


def _line_of(lines: list[dict[str, Any]], memory_id: str) -> int:
    """The file line number of ``memory_id``'s record (the header is line 1)."""
    return [line["record"]["id"] for line in lines[1:]].index(memory_id) + 2


def test_the_export_holds_every_status_and_lineage_link(
    tmp_path: Path, backend: Backend, open_runtime, clock, cli: Callable[..., Run]
) -> None:
    state = tmp_path / "source"
    runtime = open_runtime(state, backend)
    history = write_history(runtime, clock)
    runtime.close()

    run = cli(backend, "export", "--state-dir", str(state), "--include-history")
    assert run.status == 0, run.stderr
    by_id = {line["record"]["id"]: line for line in lines_of(run.stdout)[1:]}

    assert by_id[history.updated.id]["record"]["status"] == {"status": "superseded", "by": history.update.id}
    assert by_id[history.update.id]["record"]["supersedes"] == history.updated.id
    assert by_id[history.forgotten.id]["record"]["status"] == {"status": "tombstoned"}
    origin = by_id[history.released_origin.id]["record"]
    assert origin["status"] == {"status": "tombstoned", "reason": "written in a tainted session"}
    assert origin["ever_quarantined"] is True
    assert by_id[history.released.id]["record"]["derived_from"] == [history.released_origin.id]
    assert by_id[history.quarantined.id]["record"]["status"]["status"] == "quarantined"
    assert by_id[history.updated.id]["record"]["body"] == UNICODE_BODY
    assert by_id[history.updated.id]["record"]["tags"] == ["pref", "日本語"]
    assert by_id[history.other_realm.id]["realm"] == "second"
    assert "usage" not in by_id[history.update.id]["record"]
    # Unicode is written as itself, and only "\n" ends a line.
    assert "Zürich café ☕".encode() in run.stdout
    assert run.stdout.count(b"\n") == len(by_id) + 1


def test_records_come_in_realm_then_creation_order(
    tmp_path: Path, backend: Backend, open_runtime, clock, cli: Callable[..., Run]
) -> None:
    state, _ = _exported(tmp_path, backend, open_runtime, clock)

    run = cli(backend, "export", "--state-dir", str(state), "--include-history")

    keys = [
        (line["realm"], line["record"]["created_at_ms"], line["record"]["id"])
        for line in lines_of(run.stdout)[1:]
    ]
    assert keys == sorted(keys, key=lambda k: (k[0].encode(), k[1], k[2].encode()))
    assert len({k[0] for k in keys}) == 2


def test_a_default_export_holds_current_records_and_round_trips(
    tmp_path: Path, backend: Backend, target: Backend, open_runtime, clock, cli: Callable[..., Run]
) -> None:
    state = tmp_path / "source"
    runtime = open_runtime(state, backend)
    history = write_history(runtime, clock)
    runtime.close()

    first = cli(backend, "export", "--state-dir", str(state))
    export = tmp_path / "current.jsonl"
    export.write_bytes(first.stdout)
    statuses = {line["record"]["status"]["status"] for line in lines_of(first.stdout)[1:]}
    loaded = cli(target, "import", str(export), "--state-dir", str(tmp_path / "fresh"))
    again = cli(target, "export", "--state-dir", str(tmp_path / "fresh"))

    assert statuses == {"active", "quarantined"}
    ids = {line["record"]["id"] for line in lines_of(first.stdout)[1:]}
    assert history.updated.id not in ids and history.forgotten.id not in ids
    # The current versions name predecessors the file does not hold; nothing minds.
    assert loaded.status == 0, loaded.stderr
    assert again.stdout == as_arrived(first.stdout, {history.released.id: RELEASED_ON_ARRIVAL})


def test_imported_records_keep_their_status_and_are_recallable(
    tmp_path: Path, backend: Backend, target: Backend, open_runtime, clock, cli: Callable[..., Run]
) -> None:
    state = tmp_path / "source"
    runtime = open_runtime(state, backend)
    history = write_history(runtime, clock)
    runtime.close()
    export = tmp_path / "export.jsonl"
    export.write_bytes(cli(backend, "export", "--state-dir", str(state), "--include-history").stdout)
    assert cli(target, "import", str(export), "--state-dir", str(tmp_path / "fresh")).status == 0

    fresh = open_runtime(tmp_path / "fresh", target)
    memory = memory_of(fresh)
    store = memory.store("default")
    recalled = memory.recall(RecallParams("alice", "default", "contextual", "flat white", (), 10)).records

    assert [r.id for r in recalled] == [history.update.id]
    pending = store.get(history.quarantined.id)
    assert pending is not None and pending.status is Status.QUARANTINED
    released = store.get(history.released.id)
    assert released is not None and released.quarantine_reason == RELEASED_ON_ARRIVAL
    assert {r.memory_id for r in store.quarantined(10)} == {history.quarantined.id, history.released.id}
    imported = [row for row in store.audit_rows(history.update.id) if row["op"] == "import"]
    assert imported and imported[0]["author"] == {"author": "operator"}
    assert imported[0]["detail"]["rationale"].startswith("import export.jsonl line ")


def test_importing_an_export_again_skips_every_record(
    tmp_path: Path, backend: Backend, target: Backend, open_runtime, clock, cli: Callable[..., Run]
) -> None:
    state, history = _exported(tmp_path, backend, open_runtime, clock)
    export = tmp_path / "export.jsonl"
    export.write_bytes(cli(backend, "export", "--state-dir", str(state), "--include-history").stdout)
    lines = lines_of(export.read_bytes())
    count = len(lines) - 1
    fresh = str(tmp_path / "fresh")
    assert cli(target, "import", str(export), "--state-dir", fresh).status == 0

    again = cli(target, "import", str(export), "--state-dir", fresh)

    assert again.status == 0, again.stderr
    assert again.text.startswith(f"imported 0, skipped {count}, refused 0 of {count} records")
    assert again.stderr.splitlines() == [
        f"meta_gateway: export.jsonl line {_line_of(lines, history.released.id)} ({history.released.id}): "
        "already present (status is quarantined here, active in the file)"
    ]
    assert cli(target, "export", "--state-dir", fresh, "--include-history").stdout == as_arrived(
        export.read_bytes(), {history.released.id: RELEASED_ON_ARRIVAL}
    )


def test_an_export_moves_from_sqlite_to_postgres_as_between_two_state_dirs(
    tmp_path: Path, open_runtime, clock, cli: Callable[..., Run], request
) -> None:
    sqlite = Backend("sqlite")
    state, history = _exported(tmp_path, sqlite, open_runtime, clock)
    first = cli(sqlite, "export", "--state-dir", str(state), "--include-history")
    export = tmp_path / "export.jsonl"
    export.write_bytes(first.stdout)

    for postgres in make_backend("postgres", request):
        assert cli(postgres, "import", str(export), "--state-dir", str(tmp_path / "pg")).status == 0
        again = cli(postgres, "export", "--state-dir", str(tmp_path / "pg"), "--include-history")
        assert again.stdout == as_arrived(first.stdout, {history.released.id: RELEASED_ON_ARRIVAL})
