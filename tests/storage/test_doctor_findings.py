"""The storage doctor's findings on crafted state dirs: every code, its severity, what it names, and
that what it says is true (the runtime then refuses, upgrades or imports exactly as reported)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.errors import StorageRefused, StoreCorrupt
from meta_memory.memory.legacy_markdown import LegacyRecord, render_legacy_markdown
from meta_memory.memory.sqlite.doctor import SqliteDoctor
from meta_memory.memory.sqlite.indexing import BackgroundIndexer
from meta_memory.memory.sqlite.migrations import MIGRATIONS, SCHEMA_VERSION
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle
from meta_memory.storage.doctor import FINDING_CODES, Diagnosis, Finding, diagnose
from meta_memory.storage.layout import StateLayout

SQLITE = SqliteDoctor()


def make_realm(state: Path, realm: str = "default") -> Path:
    """A real realm file with one record, written by a runtime that is then closed."""
    with MetaRuntime.open(state) as runtime:
        MetaHandle(runtime).remember_agent_memory(
            "alice", title="Deploys", body="Deploys on Tuesdays.", realm=realm
        )
        assert runtime.agent_memory is not None
        return runtime.layout.realm_db_path(realm, runtime.agent_memory.root)


def make_old_realm(state: Path) -> Path:
    """A realm file at the previous schema version, as the release before this one left it."""
    path = state / "agent-memory" / "default.sqlite3"
    path.parent.mkdir(parents=True)
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute(
            "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at_ms INTEGER NOT NULL)"
        )
        for version, name, step in MIGRATIONS[:-1]:
            step(db)
            db.execute("INSERT INTO schema_migrations VALUES (?, ?, 0)", (version, name))
    return path


def make_newer_realm(state: Path) -> Path:
    path = make_realm(state)
    with closing(sqlite3.connect(path, isolation_level=None)) as db:
        db.execute("INSERT INTO schema_migrations VALUES (?, 'from the future', 0)", (SCHEMA_VERSION + 1,))
    return path


def make_corrupt_realm(state: Path) -> Path:
    path = make_realm(state)
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[2 * page : 6 * page] = b"\xa5" * (4 * page)  # SQLite header intact, b-tree pages garbage
    path.write_bytes(bytes(data))
    return path


def write(path: Path, data: bytes = b"") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def mkdirs(*paths: Path) -> None:
    for path in paths:
        path.mkdir(parents=True)


def legacy_markdown() -> bytes:
    record = LegacyRecord(
        "legacy-1", "Coffee", "Alice takes it black.", ("pref",), 1_700_000_000_000, 1_700_000_000_000
    )
    return render_legacy_markdown([record]).encode()


def findings(state: Path, code: str, identity: str | None = None) -> list[Finding]:
    return [f for f in diagnose(state, identity, backend=SQLITE).findings if f.code == code]


def only(state: Path, code: str) -> Finding:
    found = findings(state, code)
    assert len(found) == 1, diagnose(state, backend=SQLITE).findings
    return found[0]


# Every code with a state dir that must produce it, and the severity it must carry.
CRAFTED: dict[str, tuple[Callable[[Path], object], str]] = {
    "state-dir-missing": (lambda state: None, "error"),
    "durability-census-unavailable": (lambda state: state.mkdir(), "info"),
    "file-name-twins": (
        lambda state: mkdirs(state / "agent-memory", state / "agent-memory-sqlite"),
        "error",
    ),
    "legacy-agent-memory-root": (lambda state: (state / "agent-memory-sqlite").mkdir(parents=True), "info"),
    "predecessor-ledger": (lambda state: write(state / "elephant-memory-state.json", b"{}"), "error"),
    "ledger-malformed": (lambda state: write(state / "memory-ledger-state.json", b"{not json"), "error"),
    "leftover-stage": (lambda state: write(state / "memory-ledger-state.tmp", b"{"), "warning"),
    "event-log-unreadable": (
        lambda state: write(state / "event_log.sqlite3", b"not a database at all" * 8),
        "error",
    ),
    "import-failed-file": (
        lambda state: write(state / "agent-memory" / "default" / "bad name.md.import-failed"),
        "warning",
    ),
    "legacy-markdown-pending": (
        lambda state: write(state / "agent-memory" / "default" / "alice.md", legacy_markdown()),
        "info",
    ),
    "realm-name-undecodable": (lambda state: write(state / "agent-memory" / "bad name.sqlite3"), "warning"),
    "realm-unreadable": (
        lambda state: write(state / "agent-memory" / "default.sqlite3", b"hello" * 40),
        "error",
    ),
    "realm-damaged": (lambda state: write(state / "agent-memory" / "default.sqlite3", b""), "error"),
    "realm-read-immutable": (
        lambda state: (make_realm(state), write(state / "agent-memory" / "default.sqlite3-wal")),
        "warning",
    ),
    "recall-index-unreadable": (
        lambda state: (
            make_realm(state),
            write(state / "agent-memory" / "default.sqlite3-index", b"not an index" * 64),
        ),
        "warning",
    ),
    "schema-newer-than-supported": (make_newer_realm, "error"),
    "schema-upgrade-pending": (make_old_realm, "info"),
    "realm-ok": (make_realm, "info"),
}
# Not craftable here: a directory we cannot list needs another user (these tests may run as root);
# the live census needs a runtime (test_doctor_rpc.py); the PostgreSQL doctor's findings need a
# server (tests/postgres/test_doctor.py crafts each).
NOT_CRAFTED = {"directory-unreadable", "durability-census"}


def test_every_finding_code_has_a_crafted_state_dir_or_a_stated_reason() -> None:
    from ..postgres.test_doctor import CRAFTED_ON_POSTGRES

    assert set(CRAFTED) | NOT_CRAFTED | CRAFTED_ON_POSTGRES == set(FINDING_CODES)
    assert all(code == code.lower() and " " not in code and "_" not in code for code in FINDING_CODES)


@pytest.mark.parametrize("code", sorted(CRAFTED))
def test_a_crafted_state_dir_yields_its_finding_with_its_severity(tmp_path: Path, code: str) -> None:
    craft, severity = CRAFTED[code]
    craft(tmp_path / "state")
    found = findings(tmp_path / "state", code)
    assert found, diagnose(tmp_path / "state", backend=SQLITE).findings
    assert {f.severity for f in found} == {severity}


def test_a_healthy_state_dir_has_only_info_findings_and_orders_errors_first(tmp_path: Path) -> None:
    state = tmp_path / "state"
    make_realm(state)
    healthy = diagnose(state, backend=SQLITE)
    assert not healthy.has_errors and {f.severity for f in healthy.findings} == {"info"}
    write(state / "elephant-memory-state.json", b"{}")
    write(state / "memory-ledger-state.tmp")
    severities = [f.severity for f in diagnose(state, backend=SQLITE).findings]
    assert severities == sorted(severities, key=["error", "warning", "info"].index)


def test_a_missing_state_dir_or_a_file_in_its_place_is_an_error_naming_it(tmp_path: Path) -> None:
    missing = only(tmp_path / "nowhere", "state-dir-missing")
    assert missing.path == tmp_path / "nowhere" and "does not exist" in missing.message
    write(tmp_path / "file")
    assert "is not a directory" in only(tmp_path / "file", "state-dir-missing").message


def test_file_name_twins_name_both_roots_and_match_the_boot_refusal(tmp_path: Path) -> None:
    state = tmp_path / "state"
    make_realm(state)
    (state / "agent-memory-sqlite").mkdir()
    twins = only(state, "file-name-twins")
    assert (
        str(state / "agent-memory") in twins.message and str(state / "agent-memory-sqlite") in twins.message
    )
    with pytest.raises(StorageRefused, match="file-name twins"):
        MetaRuntime.open(state)


def test_twins_of_a_store_this_runtime_does_not_use_are_a_warning(tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(state / "sessions.sqlite3")
    write(state / "sessions.db")
    twins = only(state, "file-name-twins")
    assert twins.severity == "warning" and "sessions" in twins.message
    MetaRuntime.open(state).close()


def test_a_legacy_only_agent_memory_root_is_inventoried_in_place(tmp_path: Path) -> None:
    state = tmp_path / "state"
    make_realm(state)
    (state / "agent-memory").rename(state / "agent-memory-sqlite")
    diagnosis = diagnose(state, backend=SQLITE)
    assert "legacy-agent-memory-root" in diagnosis.codes()
    assert [entry.path for entry in diagnosis.inventory] == [
        state / "agent-memory-sqlite" / "default.sqlite3"
    ]


def test_a_predecessor_ledger_finding_names_the_adoption_command_and_the_boot_refuses(tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(state / "elephant-memory-state.json", b'{"assertions": [], "conflicts": []}')
    finding = only(state, "predecessor-ledger")
    assert f"meta_gateway storage-adopt-predecessor --state-dir {state} --apply" in finding.message
    assert finding.path == state / "elephant-memory-state.json"
    with pytest.raises(StorageRefused, match="predecessor"):
        MetaRuntime.open(state)


@pytest.mark.parametrize(
    "document",
    [b"{not json", b"[]", b'{"assertions": {}}', b'{"assertions": [{"entity": "e"}]}'],
    ids=["not-json", "array", "assertions-not-array", "row-missing-fields"],
)
def test_a_malformed_ledger_is_reported_exactly_when_boot_refuses_it(tmp_path: Path, document: bytes) -> None:
    state = tmp_path / "state"
    write(state / "memory-ledger-state.json", document)
    assert only(state, "ledger-malformed").path == state / "memory-ledger-state.json"
    with pytest.raises(StorageRefused, match="memory ledger"):
        MetaRuntime.open(state)


def test_a_valid_ledger_is_not_reported(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with MetaRuntime.open(state) as runtime:
        MetaHandle(runtime).memory_index("deploy", "window", fact="Tuesdays only")
    assert (state / "memory-ledger-state.json").is_file()
    assert findings(state, "ledger-malformed") == []


@pytest.mark.parametrize(
    ("name", "severity"),
    [
        ("memory-ledger-state.tmp", "warning"),
        ("elephant-memory-state.tmp", "error"),
        ("agent-memory/default/alice.md.tmp", "warning"),
        ("agent-memory/scratch.tmp", "warning"),
    ],
)
def test_leftover_stages_are_reported_where_they_lie(tmp_path: Path, name: str, severity: str) -> None:
    state = tmp_path / "state"
    write(state / name, b"{")
    finding = only(state, "leftover-stage")
    assert (finding.severity, finding.path) == (severity, state / name)


def test_import_failed_files_and_pending_markdown_name_their_realm(tmp_path: Path) -> None:
    state = tmp_path / "state"
    realm_dir = state / "agent-memory" / "ops%20team"
    write(realm_dir / "bad name.md.import-failed")
    write(realm_dir / "alice.md", legacy_markdown())
    write(realm_dir / "bob.md", legacy_markdown())
    write(realm_dir / "carol.md.imported")
    failed = only(state, "import-failed-file")
    assert (failed.realm, failed.path) == ("ops team", realm_dir / "bad name.md.import-failed")
    pending = only(state, "legacy-markdown-pending")
    assert (pending.realm, pending.path) == ("ops team", realm_dir)
    assert (
        "2 legacy markdown file(s)" in pending.message and "import-legacy --realm ops team" in pending.message
    )


def test_pending_markdown_is_no_longer_reported_once_the_runtime_imported_it(tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(state / "agent-memory" / "default" / "alice.md", legacy_markdown())
    assert findings(state, "legacy-markdown-pending")
    with MetaRuntime.open(state) as runtime:
        [record] = MetaHandle(runtime).recall_agent_memory("alice", selection="always")
    assert record.memory_id == "legacy-1"
    assert findings(state, "legacy-markdown-pending") == []
    assert [e.records for e in diagnose(state, backend=SQLITE).inventory] == [
        {"active": 1, "quarantined": 0, "superseded": 0, "tombstoned": 0}
    ]


@pytest.mark.parametrize(
    "name", ["bad name.sqlite3", "%41.sqlite3", "%zz.sqlite3"], ids=["space", "non-canonical", "bad-escape"]
)
def test_realm_files_whose_stem_does_not_decode_are_warned_about_and_not_inventoried(
    tmp_path: Path, name: str
) -> None:
    state = tmp_path / "state"
    write(state / "agent-memory" / name)
    diagnosis = diagnose(state, backend=SQLITE)
    [finding] = [f for f in diagnosis.findings if f.code == "realm-name-undecodable"]
    assert finding.path == state / "agent-memory" / name and diagnosis.inventory == []


def test_a_legacy_directory_whose_name_does_not_decode_is_warned_about(tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(state / "agent-memory" / "bad name" / "alice.md", legacy_markdown())
    assert only(state, "realm-name-undecodable").path == state / "agent-memory" / "bad name"
    assert findings(state, "legacy-markdown-pending") == []


@pytest.mark.parametrize(
    ("craft", "words"),
    [
        (
            lambda state: write(state / "agent-memory" / "default.sqlite3", b"hello" * 40),
            "not an SQLite database",
        ),
        (
            lambda state: write(state / "agent-memory" / "default.sqlite3", b"SQLite format 3\x00"),
            "not an SQLite",
        ),
        (make_corrupt_realm, "corrupt"),
    ],
    ids=["not-sqlite", "truncated-header", "corrupt-pages"],
)
def test_unreadable_realm_files_are_errors_with_an_unknown_inventory_row(
    tmp_path: Path, craft: Callable[[Path], object], words: str
) -> None:
    state = tmp_path / "state"
    craft(state)
    diagnosis = diagnose(state, backend=SQLITE)
    [finding] = [f for f in diagnosis.findings if f.code == "realm-unreadable"]
    assert (finding.realm, finding.path) == ("default", state / "agent-memory" / "default.sqlite3")
    assert words in finding.message
    # SQLite's own wording stays off the wire; the finding says it in ours.
    assert "file is not a database" not in finding.message and "malformed" not in finding.message
    [entry] = diagnosis.inventory
    assert (entry.schema_version, entry.records, entry.pending_index, entry.unmerged_index) == (None,) * 4
    realm_file = state / "agent-memory" / "default.sqlite3"
    index_file = StateLayout.recall_index_path(realm_file)  # a corrupted realm may have one
    assert entry.bytes == realm_file.stat().st_size + (
        index_file.stat().st_size if index_file.exists() else 0
    )


def test_an_empty_realm_file_is_damage_that_the_runtime_refuses_too(tmp_path: Path) -> None:
    state = tmp_path / "state"
    write(state / "agent-memory" / "default.sqlite3")
    diagnosis = diagnose(state, backend=SQLITE)
    assert diagnosis.has_errors and "realm-damaged" in diagnosis.codes()
    assert {"schema-upgrade-pending", "realm-ok"}.isdisjoint(diagnosis.codes())
    assert diagnosis.inventory[0].schema_version is None
    with MetaRuntime.open(state) as runtime, pytest.raises(StoreCorrupt):
        MetaHandle(runtime).recall_agent_memory("alice", selection="always")
    assert (state / "agent-memory" / "default.sqlite3").read_bytes() == b""


def test_a_schema_newer_than_supported_is_an_error_and_the_runtime_refuses_the_realm(tmp_path: Path) -> None:
    state = tmp_path / "state"
    make_newer_realm(state)
    diagnosis = diagnose(state, backend=SQLITE)
    assert "schema-newer-than-supported" in diagnosis.codes() and "realm-ok" not in diagnosis.codes()
    assert diagnosis.inventory[0].schema_version == SCHEMA_VERSION + 1
    with MetaRuntime.open(state) as runtime, pytest.raises(StoreCorrupt):
        MetaHandle(runtime).recall_agent_memory("alice", selection="always")


def test_an_older_schema_is_reported_pending_and_is_current_after_the_runtime_opens_it(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    make_old_realm(state)
    pending = only(state, "schema-upgrade-pending")
    assert f"version {SCHEMA_VERSION - 1}" in pending.message and pending.realm == "default"
    assert diagnose(state, backend=SQLITE).inventory[0].schema_version == SCHEMA_VERSION - 1
    with MetaRuntime.open(state) as runtime:
        MetaHandle(runtime).recall_agent_memory("alice", selection="always")
    assert findings(state, "schema-upgrade-pending") == []
    assert diagnose(state, backend=SQLITE).inventory[0].schema_version == SCHEMA_VERSION


def test_a_wal_without_its_shm_is_read_immutable_and_says_the_wal_was_not_read(tmp_path: Path) -> None:
    state = tmp_path / "state"
    make_realm(state)
    wal = write(state / "agent-memory" / "default.sqlite3-wal")
    finding = only(state, "realm-read-immutable")
    assert (
        "immutable=1" in finding.message and "not counted" in finding.message and finding.realm == "default"
    )
    assert not (state / "agent-memory" / "default.sqlite3-shm").exists() and wal.read_bytes() == b""


def test_realm_ok_reports_schema_and_counts_for_every_realm(tmp_path: Path) -> None:
    state = tmp_path / "state"
    make_realm(state, "default")
    make_realm(state, "ops team")
    diagnosis: Diagnosis = diagnose(state, backend=SQLITE)
    oks = {f.realm: f.message for f in diagnosis.findings if f.code == "realm-ok"}
    assert set(oks) == {"default", "ops team"}
    assert f"schema version {SCHEMA_VERSION}" in oks["default"] and "1 active" in oks["default"]
    assert [e.realm for e in diagnosis.inventory] == ["default", "ops team"]


def test_paths_with_uri_characters_are_opened_as_the_files_they_name(tmp_path: Path) -> None:
    state = tmp_path / "odd ?#% dir&mode=rwc"
    make_realm(state, "what?#%")
    diagnosis = diagnose(state, backend=SQLITE)
    assert not diagnosis.has_errors
    assert [(e.realm, e.schema_version) for e in diagnosis.inventory] == [("what?#%", SCHEMA_VERSION)]
    assert sorted(p.name for p in (state / "agent-memory").iterdir()) == [
        "what%3F%23%25.sqlite3",
        "what%3F%23%25.sqlite3-index",  # its recall index, left as the runtime closed it
    ]


def test_file_names_that_are_not_utf8_are_reported_in_encodable_text(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "agent-memory").mkdir(parents=True)
    write(Path(os.fsdecode(os.fsencode(state / "agent-memory") + b"/\xff.sqlite3")))
    wire = diagnose(state, backend=SQLITE).to_wire()
    [finding] = [f for f in wire["diagnosis"]["findings"] if f["code"] == "realm-name-undecodable"]
    assert finding["path"] == f"{state / 'agent-memory'}/\ufffd.sqlite3"
    json.dumps(wire, ensure_ascii=False).encode("utf-8")


def test_the_inventory_counts_the_recall_index_backlog_and_its_unmerged_records(
    tmp_path: Path, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``pending_index``: records (and removals) the index file has not taken in yet;
    ``unmerged_index``: records it holds in its fresh tier, which a recall scans one by one.
    Diagnosed beside the live runtime, then cold."""
    monkeypatch.setattr(BackgroundIndexer, "QUIET_S", 3600.0)  # nothing catches up or merges meanwhile
    state = tmp_path / "state"

    def index_columns() -> tuple[int | None, int | None]:
        [entry] = diagnose(state, backend=SQLITE).inventory
        return entry.pending_index, entry.unmerged_index

    with MetaRuntime.open(state, clock=clock) as runtime:
        handle = MetaHandle(runtime)
        ids = [
            handle.remember_agent_memory("alice", title=f"Deploy {n}", body="Deploys on Tuesdays.").memory_id
            for n in range(6)
        ]
        assert runtime.agent_memory is not None
        store = runtime.agent_memory.store("default")
        assert isinstance(store, SqliteRealmStore)  # the embedded default
        assert index_columns() == (6, 0)
        store.flush_index()  # into the fresh tier
        assert index_columns() == (0, 6)
        assert store.merge_fresh(4) == 4
        assert index_columns() == (0, 2)
        assert handle.forget_agent_memory("alice", ids[0]).deleted
        assert index_columns() == (1, 2)  # a queued removal
        store.flush_index()
        assert store.merge_fresh(4) == 2
        assert index_columns() == (0, 0)
        realm_file = store.path

    index_file = StateLayout.recall_index_path(realm_file)
    index_file.write_bytes(b"not an index" * 64)
    assert index_columns() == (5, None)  # rebuilt at the next open: every active record is backlog
    index_file.unlink()
    assert index_columns() == (5, 0)
