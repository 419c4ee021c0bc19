"""What an import refuses, line by line, and what it refuses whole: secrets and caps through the
store's validator, taken ids, lineage that would cross scopes or loop, trust an author could not
have given, and files that are not JSON lines (real ``meta_gateway`` runs and the library API)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meta_memory.errors import InvalidParams
from meta_memory.memory.records import Author, Status
from meta_memory.memory.transfer import ImportReport, bytes_opener, import_source, read_source
from meta_memory.memory.validator import TITLE_MAX_BYTES
from meta_memory.runtime import MetaRuntime

from ..conftest import Backend
from .conftest import Run, export_file, lines_of, memory_of, record_line

AWS_KEY_ID = (
    "AKIA" + "ABCDEFGHIJKLMNOP"
)  # the shape secrets.py refuses (split: no scanner trips on this file)


def _load(runtime: MetaRuntime, data: bytes, **filters: Any) -> ImportReport:
    source = read_source(bytes_opener(data), "test.jsonl", realm="default", identity=None, now_ms=0)
    return import_source(source, memory_of(runtime).store, author=Author("operator"), **filters)


def _refusals(report: ImportReport) -> dict[str, str | None]:
    return {o.memory_id or o.at: o.rule for o in report.outcomes if o.outcome == "refused"}


def test_a_secret_and_a_long_title_are_refused_per_line_while_the_rest_imports(
    tmp_path: Path, backend: Backend, cli: Callable[..., Run], open_runtime
) -> None:
    export = tmp_path / "mixed.jsonl"
    export.write_bytes(
        export_file(
            [
                record_line("ok-1", body="kept"),
                record_line("secret-1", body=f"the deploy user is {AWS_KEY_ID}"),
                record_line("long-1", title="t" * (TITLE_MAX_BYTES + 1)),
                record_line("ok-2", body="kept too"),
            ]
        )
    )
    state = tmp_path / "state"

    run = cli(backend, "import", str(export), "--state-dir", str(state))

    assert run.status == 1
    assert run.text.startswith("imported 2, skipped 0, refused 2 of 4 records in mixed.jsonl")
    refused = run.stderr.splitlines()
    assert refused == [
        "meta_gateway: mixed.jsonl line 3 (secret-1): refused, secret-detected: body matches secret class "
        "'aws-access-key-id'; secrets are refused, never stored",
        f"meta_gateway: mixed.jsonl line 4 (long-1): refused, field-too-large: title must be at most "
        f"{TITLE_MAX_BYTES} bytes",
    ]
    assert AWS_KEY_ID not in run.stderr + run.text
    store = memory_of(open_runtime(state, backend)).store("default")
    assert store.get("ok-1") is not None and store.get("ok-2") is not None
    assert store.get("secret-1") is None and store.get("long-1") is None
    skipped = [row for row in store.audit_rows("secret-1") if row["op"] == "import_skipped"]
    assert skipped[0]["detail"]["reason"] == "secret-detected"
    assert skipped[0]["detail"]["at"] == "line 3"
    assert AWS_KEY_ID not in str(store.audit_rows())


def test_a_file_that_is_not_json_lines_is_refused_whole_naming_the_line(
    tmp_path: Path, backend: Backend, cli: Callable[..., Run], open_runtime
) -> None:
    good = export_file([record_line("ok-1"), record_line("ok-2")])
    lines = good.split(b"\n")
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"\n".join([lines[0], lines[1], b'{"content_hash": "trunc', lines[2], b""]))
    state = tmp_path / "state"

    run = cli(backend, "import", str(broken), "--state-dir", str(state))

    assert run.status == 2
    assert run.stdout == b""
    assert run.stderr.startswith("meta_gateway: broken.jsonl line 3 is not JSON (")
    assert "nothing was imported" in run.stderr
    assert "Traceback" not in run.stderr
    memory = memory_of(open_runtime(state, backend))
    assert not memory.has_realm("default") or memory.store("default").get("ok-1") is None


@pytest.mark.parametrize(
    ("first_line", "message"),
    [
        (
            b'{"format":"meta-memory-export","version":2}',
            "line 1: export format version 2 is newer than this release",
        ),
        (b'{"format":"something-else","version":1}', "line 1: not a meta-memory export header"),
        (b"not json at all", "line 1 is not JSON"),
    ],
)
def test_an_export_needs_a_header_this_release_reads(
    tmp_path: Path, cli: Callable[..., Run], first_line: bytes, message: str
) -> None:
    body = export_file([record_line("ok-1")]).split(b"\n", 1)[1]
    path = tmp_path / "file.jsonl"
    path.write_bytes(first_line + b"\n" + body)

    run = cli(
        Backend("sqlite"), "import", str(path), "--state-dir", str(tmp_path / "state"), "--format", "jsonl"
    )

    assert run.status == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr


def test_an_id_taken_by_other_content_is_refused_and_left_as_it_is(
    tmp_path: Path, backend: Backend, open_runtime
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    assert _load(runtime, export_file([record_line("rec-1", body="the original")])).imported == 1

    report = _load(runtime, export_file([record_line("rec-1", body="something else"), record_line("rec-2")]))

    assert (report.imported, report.refused) == (1, 1)
    assert report.outcomes[0].rule == "id-conflict"
    assert "already exists with other content" in (report.outcomes[0].message or "")
    kept = memory_of(runtime).store("default").get("rec-1")
    assert kept is not None and kept.body == "the original"


def test_a_record_present_with_another_status_is_skipped_and_the_difference_named(
    tmp_path: Path, backend: Backend, open_runtime
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    _load(runtime, export_file([record_line("rec-1")]))
    superseded = record_line("rec-1", status={"status": "superseded", "by": "rec-9"})

    report = _load(runtime, export_file([superseded]))

    assert (report.imported, report.skipped, report.refused) == (0, 1, 0)
    assert report.outcomes[0].message == "already present (status is active here, superseded in the file)"
    kept = memory_of(runtime).store("default").get("rec-1")
    assert kept is not None and kept.status is Status.ACTIVE


def test_lineage_naming_records_nobody_holds_imports_and_changes_nothing(
    tmp_path: Path, backend: Backend, open_runtime
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    lines = [
        record_line("old", status={"status": "superseded", "by": "ghost-successor"}),
        record_line(
            "new", body="the newer text", supersedes="ghost-predecessor", derived_from=["ghost-source"]
        ),
        record_line("next", body="supersedes one that is here", supersedes="new"),
    ]

    report = _load(runtime, export_file(lines))

    assert (report.imported, report.refused) == (3, 0)
    store = memory_of(runtime).store("default")
    new = store.get("new")
    assert new is not None and new.status is Status.ACTIVE  # an import never supersedes what is there
    old = store.get("old")
    assert old is not None and old.superseded_by == "ghost-successor"
    chain = store.supersede_chain("next", max_hops=10)
    assert [row.memory_id for row in chain.ancestors] == ["new"]


def test_lineage_that_crosses_scopes_or_loops_is_refused(
    tmp_path: Path, backend: Backend, open_runtime
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    bob = {"scope": "identity", "realm": "default", "identity": "bob"}
    lines = [
        record_line("a", supersedes="b"),
        record_line("b", body="loops back", supersedes="a"),
        record_line("c", body="bob's", scope=bob, supersedes="a"),
    ]

    report = _load(runtime, export_file(lines))

    assert _refusals(report) == {"b": "supersede-cycle", "c": "unknown-record"}


def test_an_import_never_raises_trust_an_author_could_not_give(
    tmp_path: Path, backend: Backend, open_runtime
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    agent = {"author": {"author": "agent", "identity": "alice"}, "evidence": []}
    lines = [
        record_line("llm-high", provenance=agent, trust="operator"),
        record_line("was-quarantined", body="tainted", trust="application", ever_quarantined=True),
        record_line("pending-high", body="pending", trust="application", status={"status": "quarantined"}),
        record_line(
            "other-scope",
            body="not mine",
            provenance={**agent, "author": {"author": "agent", "identity": "mallory"}},
        ),
        record_line(
            "pending",
            body="stays quarantined",
            provenance=agent,
            status={"status": "quarantined", "reason": "r"},
        ),
    ]

    report = _load(runtime, export_file(lines))

    assert _refusals(report) == {
        "llm-high": "tier-ceiling",
        "was-quarantined": "tier-ceiling",
        "pending-high": "tier-ceiling",
        "other-scope": "outside-own-scope",
    }
    pending = memory_of(runtime).store("default").get("pending")
    assert pending is not None and pending.status is Status.QUARANTINED and pending.ever_quarantined


@pytest.mark.parametrize(
    ("change", "rule"),
    [
        ({"content_hash": "0" * 64}, "content-hash-mismatch"),
        ({"kind": "poem"}, "malformed-record"),
        ({"created_at_ms": "yesterday"}, "malformed-record"),
        ({"working_set_rank": 2**40}, "malformed-record"),
        ({"body": "nul \x00 inside"}, "field-invalid"),
        ({"id": "line\nbreak"}, "malformed-record"),
        ({"usage": {}}, "malformed-record"),
        ({"status": {"status": "superseded"}}, "invalid-status"),
        ({"created_at_ms": -5}, "field-invalid"),
    ],
)
def test_a_line_no_store_could_hold_is_refused_on_its_own(
    tmp_path: Path, backend: Backend, open_runtime, change: dict[str, Any], rule: str
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    bad = record_line("bad")
    bad["record"].update(change)
    if "content_hash" in change:
        bad["content_hash"] = change["content_hash"]

    report = _load(runtime, export_file([bad, record_line("good")]))

    assert [(o.at, o.rule) for o in report.outcomes] == [("line 2", rule)]
    assert report.imported == 1


def test_a_lone_surrogate_is_refused_not_crashed_on(tmp_path: Path, backend: Backend, open_runtime) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    good = export_file([record_line("good")])
    bad = (
        export_file([record_line("bad", body="SURROGATE")]).split(b"\n")[1].replace(b"SURROGATE", b"\\ud800")
    )

    report = _load(runtime, good + bad + b"\n")

    assert _refusals(report) == {"bad": "field-invalid"}
    assert report.imported == 1


def test_realm_and_identity_select_lines(tmp_path: Path, backend: Backend, open_runtime) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    bob = {"scope": "identity", "realm": "default", "identity": "bob"}
    lines = [
        record_line("a"),
        record_line("b", body="bob", scope=bob),
        record_line("c", body="elsewhere", realm="second", scope={**bob, "realm": "second"}),
    ]

    report = _load(runtime, export_file(lines), realm="default", identity="alice")

    assert (report.imported, report.not_selected) == (1, 2)
    assert not memory_of(runtime).has_realm("second")


def test_a_mem0_document_without_results_is_refused_whole(tmp_path: Path) -> None:
    with pytest.raises(InvalidParams, match="is not a mem0 export"):
        read_source(
            bytes_opener(b'{"memories": []}'),
            "x.json",
            format="mem0",
            realm="default",
            identity=None,
            now_ms=0,
        )
    assert lines_of(b"") == []
