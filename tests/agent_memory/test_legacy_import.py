"""Importing legacy per-identity markdown (REFERENCE 3.6) on the first access of a realm."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from meta_memory import MetaHandle
from meta_memory.memory.legacy_markdown import LegacyRecord, render_legacy_markdown
from meta_memory.memory.records import Status
from meta_memory.memory.sqlite.store import SqliteRealmStore

OpenHandle = Callable[[], MetaHandle]
AWS_KEY = "AK" + "IA" + "IOSFODNN7EXAMPLE"


def _legacy(
    memory_id: str, title: str, body: str, *, tags: tuple[str, ...] = (), at: int = 1_600_000_000_000
) -> LegacyRecord:
    return LegacyRecord(memory_id, title, body, tags, at, at + 500)


def _place(state_dir: Path, realm_dir: str, stem: str, text: str) -> Path:
    path = state_dir / "agent-memory" / realm_dir / f"{stem}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _store(handle: MetaHandle, realm: str = "default") -> SqliteRealmStore:
    assert handle.runtime.agent_memory is not None
    return handle.runtime.agent_memory.store(realm)


def test_first_access_imports_keeping_ids_tags_and_timestamps(
    state_dir: Path, open_handle: OpenHandle
) -> None:
    records = [
        _legacy(
            "legacy-1", "Deploys", "Deploys need approval.", tags=("ops", "release"), at=1_600_000_000_000
        ),
        _legacy(
            "legacy-2",
            "Standup",
            "Standup at nine.\n<!-- /mobkit-agent-memory -->\nstill body",
            at=1_600_000_100_000,
        ),
    ]
    path = _place(state_dir, "team%2F%CE%B1", "lead%3Amain", render_legacy_markdown(records))

    handle = open_handle()
    recalled = handle.recall_agent_memory("lead:main", realm="team/α", selection="always")

    assert [(r.memory_id, r.title, r.body, r.tags, r.created_at_ms, r.updated_at_ms) for r in recalled] == [
        ("legacy-2", "Standup", records[1].body, (), 1_600_000_100_000, 1_600_000_100_500),
        (
            "legacy-1",
            "Deploys",
            "Deploys need approval.",
            ("ops", "release"),
            1_600_000_000_000,
            1_600_000_000_500,
        ),
    ]
    assert not path.exists() and path.with_name("lead%3Amain.md.imported").exists()
    stored = _store(handle, "team/α").get("legacy-1")
    assert stored is not None and stored.provenance.author.to_wire() == {
        "author": "agent",
        "identity": "lead:main",
    }
    assert [row["op"] for row in _store(handle, "team/α").audit_rows()] == ["import", "import"]
    assert (
        handle.recall_agent_memory("lead:main", realm="team/α", query_text="deploys approval")[0].memory_id
        == "legacy-1"
    )


def test_malformed_and_secret_records_are_skipped_with_an_audit_row(
    state_dir: Path, open_handle: OpenHandle
) -> None:
    good = render_legacy_markdown([_legacy("good", "Good", "Fine body.")])
    leaky = render_legacy_markdown([_legacy("leaky", "Keys", f"prod key {AWS_KEY}")])
    too_long = render_legacy_markdown([_legacy("long", "t" * 201, "Title over the cap.")])
    no_metadata = "## Orphan\nA body without its metadata line.\n<!-- /mobkit-agent-memory -->\n\n"
    empty_body = render_legacy_markdown([_legacy("empty", "Empty", "x")]).replace("\nx\n", "\n\n")
    text = good + no_metadata + leaky.removeprefix("# MobKit Agent Memory\n\n") + too_long.split("\n\n", 1)[1]
    _place(state_dir, "default", "alice", text + empty_body.split("\n\n", 1)[1])

    handle = open_handle()

    assert [r.memory_id for r in handle.recall_agent_memory("alice", selection="always")] == ["good"]
    store = _store(handle)
    assert store.get("leaky") is None and store.get("long") is None and store.get("empty") is None
    skipped = [row for row in store.audit_rows() if row["op"] == "import_skipped"]
    reasons = {row["record_id"]: row["detail"]["reason"] for row in skipped}
    assert reasons.keys() == {None, "leaky", "long", "empty"}
    assert reasons["leaky"] == "secret-detected" and reasons["long"] == "field-too-large"
    assert all(row["detail"]["file"] == "alice.md" for row in skipped)
    assert AWS_KEY not in str(skipped)


def test_a_record_with_an_out_of_range_timestamp_is_skipped_not_fatal(
    state_dir: Path, open_handle: OpenHandle
) -> None:
    far_future = LegacyRecord("far", "Far", "From the far future.", (), 2**63, 2**63)
    _place(
        state_dir, "default", "alice", render_legacy_markdown([_legacy("near", "Near", "Today."), far_future])
    )
    handle = open_handle()
    assert [r.memory_id for r in handle.recall_agent_memory("alice", selection="always")] == ["near"]
    assert [row["record_id"] for row in _store(handle).audit_rows() if row["op"] == "import_skipped"] == [
        "far"
    ]


def test_a_stem_that_is_not_an_encoded_identity_is_renamed_import_failed(
    state_dir: Path, open_handle: OpenHandle
) -> None:
    text = render_legacy_markdown([_legacy("x-1", "Stray", "Whose is this?")])
    bad = [_place(state_dir, "default", stem, text) for stem in ("bad%zz", "%41lice", "sp ace")]
    good = _place(state_dir, "default", "bob", render_legacy_markdown([_legacy("b-1", "Bob", "Bob's note.")]))

    handle = open_handle()
    handle.recall_agent_memory("bob", selection="always")

    for path in bad:
        assert not path.exists() and path.with_name(path.name + ".import-failed").exists()
    assert good.with_name("bob.md.imported").exists()
    assert _store(handle).get("x-1") is None
    assert [r.memory_id for r in handle.recall_agent_memory("bob", selection="always")] == ["b-1"]


def test_an_import_interrupted_before_the_rename_is_safe_to_run_again(
    state_dir: Path, open_handle: OpenHandle
) -> None:
    records = [_legacy(f"legacy-{i}", f"Fact {i}", f"Body {i}.", at=1_600_000_000_000 + i) for i in range(5)]
    path = _place(state_dir, "default", "alice", render_legacy_markdown(records))
    handle = open_handle()
    first = handle.recall_agent_memory("alice", selection="always", max_entries=64)
    handle.close()
    # The crash: the import committed, but the process died before renaming the file.
    path.with_name("alice.md.imported").rename(path)

    handle = open_handle()
    again = handle.recall_agent_memory("alice", selection="always", max_entries=64)

    assert again == first and len(again) == 5
    assert [row["op"] for row in _store(handle).audit_rows()].count("import") == 5
    assert not path.exists() and path.with_name("alice.md.imported").exists()


def test_an_import_runs_once_and_later_writes_are_not_disturbed(
    state_dir: Path, open_handle: OpenHandle
) -> None:
    _place(state_dir, "default", "alice", render_legacy_markdown([_legacy("legacy-1", "Old", "Old body.")]))
    handle = open_handle()
    assert handle.forget_agent_memory("alice", "legacy-1").deleted
    handle.close()
    handle = open_handle()
    assert handle.recall_agent_memory("alice", selection="always") == []
    assert _store(handle).get("legacy-1").status is Status.TOMBSTONED  # type: ignore[union-attr]


def test_the_import_legacy_command_prints_a_summary(state_dir: Path, gateway_cmd: str) -> None:
    _place(
        state_dir,
        "default",
        "alice",
        render_legacy_markdown([_legacy("a-1", "One", "First."), _legacy("a-2", "Two", f"key {AWS_KEY}")]),
    )
    _place(state_dir, "team", "bob", render_legacy_markdown([_legacy("b-1", "Bob", "Bob's note.")]))
    _place(state_dir, "team", "bad%zz", render_legacy_markdown([_legacy("z-1", "Z", "Zed.")]))

    done = subprocess.run(
        [gateway_cmd, "import-legacy", "--state-dir", str(state_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "imported 2 records from 3 files (1 skipped, 1 files failed)" in done.stdout
    assert sorted(p.name for p in (state_dir / "agent-memory").rglob("*.md*")) == [
        "alice.md.imported",
        "bad%zz.md.import-failed",
        "bob.md.imported",
    ]
