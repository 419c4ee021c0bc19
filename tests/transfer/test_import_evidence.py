"""What an import takes as evidence, through the library API on both backends: a release this store
committed lets what derives from it arrive active, nothing a file says does; trust is capped by
the record's author, a verification claim, the importer and lineage anywhere in the file; and the
store's restore refuses an active record that carries an unreleased quarantine, whoever calls it.
A property checks, against an oracle of plain reachability, that the records arriving active do
not depend on the order of the lines."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_memory.clock import ManualClock
from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.errors import WriteRefused
from meta_memory.memory.records import APPLICATION, OPERATOR, Author, Status
from meta_memory.memory.transfer import ImportReport, bytes_opener, import_source, read_source
from meta_memory.memory.transfer.lines import record_from_line
from meta_memory.runtime import MetaRuntime

from ..conftest import Backend
from .conftest import export_file, memory_of, record_line, write_history

AGENT = {"author": {"author": "agent", "identity": "alice"}, "evidence": []}


def _load(runtime: MetaRuntime, lines: list[dict[str, Any]], author: Author = OPERATOR) -> ImportReport:
    source = read_source(
        bytes_opener(export_file(lines)), "test.jsonl", realm="default", identity=None, now_ms=0
    )
    return import_source(source, memory_of(runtime).store, author=author)


def _said(report: ImportReport) -> dict[str | None, tuple[str, str | None]]:
    return {o.memory_id: (o.outcome, o.rule) for o in report.outcomes}


def test_a_release_this_store_committed_lets_what_derives_from_it_arrive_active(
    tmp_path: Path, backend: Backend, open_runtime: Any, clock: ManualClock
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    history = write_history(runtime, clock)
    lines = [
        record_line(
            "update-of-released", body="v2 of released", provenance=AGENT, supersedes=history.released.id
        ),
        record_line(
            "copy-of-released",
            body="a promotion's copy",
            ever_quarantined=True,
            derived_from=[history.released.id],
        ),
        record_line(
            "from-the-original", body="cites the original", derived_from=[history.released_origin.id]
        ),
        record_line(
            "marked-beside-clean",
            body="marked, clean parent",
            ever_quarantined=True,
            derived_from=[history.update.id],
        ),
        record_line("on-pending", body="builds on the pending update", supersedes=history.quarantined.id),
    ]

    report = _load(runtime, lines)

    held = ("imported", "quarantined-on-arrival")
    assert _said(report) == {
        "from-the-original": held,
        "marked-beside-clean": held,
        "on-pending": held,
    }
    store = memory_of(runtime).store("default")
    assert [store.get(i).status for i in ("update-of-released", "copy-of-released")] == [  # type: ignore[union-attr]
        Status.ACTIVE,
        Status.ACTIVE,
    ]


def test_restore_refuses_an_active_record_that_carries_an_unreleased_quarantine(
    tmp_path: Path, backend: Backend, open_runtime: Any, clock: ManualClock
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    history = write_history(runtime, clock)
    store = memory_of(runtime).store("default")
    marked = record_from_line(record_line("marked", body="was quarantined", ever_quarantined=True))
    explained = record_from_line(
        record_line(
            "explained", body="a copy of a release", ever_quarantined=True, derived_from=[history.released.id]
        )
    )
    on_pending = record_from_line(
        record_line("on-pending", body="reaches pending", derived_from=[history.quarantined.id])
    )

    for record in (marked, on_pending):
        with pytest.raises(WriteRefused) as refused, store.transaction() as txn:
            txn.restore(record, author=OPERATOR, rationale="by hand")
        assert refused.value.rule == "quarantine-unreleased"
    with store.transaction() as txn:
        txn.restore(explained, author=OPERATOR, rationale="by hand")
    assert store.get("marked") is None and store.get("on-pending") is None
    assert store.get("explained") is not None


def test_trust_is_capped_by_author_claim_importer_and_lineage_anywhere_in_the_file(
    tmp_path: Path, backend: Backend, open_runtime: Any
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    claim = {**AGENT, "verification": {"checked": "ran the deploy", "evidence": ["deploy log"]}}
    operator = {"author": {"author": "operator"}, "evidence": []}
    lines = [
        record_line("verified-no-claim", body="1", provenance=AGENT, trust="agent_verified"),
        record_line("verified-claim", body="2", provenance=claim, trust="agent_verified"),
        record_line("llm-application", body="3", provenance=claim, trust="application"),
        record_line("app-operator", body="4", trust="operator"),
        record_line("op-operator", body="5", provenance=operator, trust="operator"),
        record_line("child-of-untrusted", body="6", trust="application", derived_from=["untrusted-parent"]),
        record_line("untrusted-parent", body="7", trust="untrusted"),
    ]

    report = _load(runtime, lines)
    by_application = _load(
        runtime, [record_line("op-operator-2", body="8", provenance=operator, trust="operator")], APPLICATION
    )

    assert {o.memory_id: o.message for o in report.outcomes} == {
        "verified-no-claim": "trust 'agent_verified' needs a verification claim",
        "llm-application": "LLM-authored records are capped at trust 'agent_verified'",
        "app-operator": "a record by author 'application' is capped at trust 'application'",
        "child-of-untrusted": "records derived from untrusted or quarantined content are capped at trust "
        "'agent_observed'",
    }
    assert {o.rule for o in report.outcomes} == {"tier-ceiling"}
    assert report.imported == 3
    assert [(o.rule, o.message) for o in by_application.outcomes] == [
        ("tier-ceiling", "trust 'operator' is above what the importing application may give ('application')")
    ]


def test_nothing_the_file_says_vouches_for_a_record_and_whatever_it_says_against_one_counts(
    tmp_path: Path, backend: Backend, open_runtime: Any
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    quarantined = {"status": "quarantined", "reason": "tainted"}
    lines = [
        # History the file writes unjudged explains nothing, and is walked through.
        record_line(
            "was-released", body="a", status={"status": "superseded", "by": "ghost"}, ever_quarantined=True
        ),
        record_line("explained-by-file", body="b", ever_quarantined=True, derived_from=["was-released"]),
        record_line("held", body="c", provenance=AGENT, status=quarantined, ever_quarantined=True),
        record_line("forgotten", body="d", status={"status": "tombstoned"}, derived_from=["held"]),
        record_line("through-history", body="e", derived_from=["forgotten"]),
        # The same text under another id; an original named only by its release's successor.
        record_line("same-text", body="c"),
        record_line("stripped-origin", body="f"),
        record_line(
            "stripped-origin-released",
            body="g",
            status={"status": "tombstoned"},
            derived_from=["stripped-origin"],
        ),
        record_line("clean", body="h", derived_from=["ghost"]),
    ]

    report = _load(runtime, lines)

    assert {o.memory_id: o.message for o in report.outcomes} == {
        "explained-by-file": "imported quarantined, for a reviewer: it was quarantined, and no release of it is "
        "committed in this store",
        "through-history": "imported quarantined, for a reviewer: its lineage reaches 'held', quarantined in this "
        "store and not released",
        "same-text": "imported quarantined, for a reviewer: its text is held under quarantine in this store "
        "(record 'held')",
        "stripped-origin": "imported quarantined, for a reviewer: it was quarantined, and no release of it is "
        "committed in this store",
    }
    store = memory_of(runtime).store("default")
    assert store.get("clean").status is Status.ACTIVE  # type: ignore[union-attr]
    assert report.quarantined == 4


def test_text_a_file_line_marks_as_quarantined_arrives_quarantined_under_another_id(
    tmp_path: Path, backend: Backend, open_runtime: Any
) -> None:
    runtime = open_runtime(tmp_path / "state", backend)
    lines = [
        record_line("copy-first", body="the same words"),  # before the line that marks its text
        record_line(
            "released-elsewhere",
            body="the same words",
            ever_quarantined=True,
            status={"status": "tombstoned"},
        ),
        record_line("other-words", body="other words"),
    ]

    report = _load(runtime, lines)

    assert [(o.memory_id, o.message) for o in report.outcomes] == [
        (
            "copy-first",
            "imported quarantined, for a reviewer: its text is quarantined in the file (record 'released-elsewhere')",
        )
    ]


def test_a_lineage_too_long_to_walk_arrives_quarantined(tmp_path: Path, open_runtime: Any) -> None:
    runtime = open_runtime(tmp_path / "state", Backend("sqlite"))
    chain = [
        record_line(f"n{i}", body=f"link {i}", derived_from=[f"n{i - 1}"] if i else []) for i in range(4100)
    ]

    report = _load(runtime, [chain[-1], *chain[:-1]])  # the tip first: its lineage is all in the file

    assert [(o.memory_id, o.message) for o in report.outcomes] == [
        (
            "n4099",
            "imported quarantined, for a reviewer: its lineage is longer than 4096 records, too long to check",
        )
    ]
    assert report.imported == 4100


# -- a property: the records arriving active are those no marked record is reachable from ----------

_NODES = 6


@st.composite
def _files(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, bool]]:
    """Lines of records n0..n5 with random statuses, marks and ``derived_from`` links (cycles
    allowed), in a random order; and the oracle: which of them must arrive active."""
    ids = [f"n{i}" for i in range(_NODES)]
    facts = {}
    for memory_id in ids:
        status = draw(st.sampled_from(["active", "active", "quarantined", "tombstoned"]))
        flagged = draw(st.booleans()) if status != "quarantined" else True
        reason = draw(st.sampled_from([None, "tainted"])) if status != "quarantined" else "tainted"
        parents = draw(st.lists(st.sampled_from(ids), max_size=2, unique=True))
        facts[memory_id] = (status, flagged, reason, [p for p in parents if p != memory_id])
    marked = {
        i for i, (status, flagged, reason, _) in facts.items() if status == "quarantined" or flagged or reason
    }
    reaches_marked = set(marked)
    changed = True
    while changed:  # plain reachability: a fixpoint over the links, independent of the importer
        changed = False
        for memory_id, (_, _, _, parents) in facts.items():
            if memory_id not in reaches_marked and any(p in reaches_marked for p in parents):
                reaches_marked.add(memory_id)
                changed = True
    oracle = {i: facts[i][0] == "active" and i not in reaches_marked for i in ids}
    lines = [
        record_line(
            memory_id,
            body=f"body of {memory_id}",
            provenance=AGENT,
            status={"status": status, **({"reason": reason} if reason else {})},
            ever_quarantined=flagged,
            derived_from=parents,
        )
        for memory_id, (status, flagged, reason, parents) in facts.items()
    ]
    return draw(st.permutations(lines)), oracle


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_files())
def test_records_arrive_active_exactly_when_no_marked_record_is_reachable_in_any_line_order(
    case: tuple[list[dict[str, Any]], dict[str, bool]],
) -> None:
    lines, oracle = case
    with tempfile.TemporaryDirectory() as state:
        config = load_config_dict(Backend("sqlite").config(DEFAULT_CONFIG))
        with MetaRuntime.open(Path(state), config, clock=ManualClock()) as runtime:
            report = _load(runtime, lines)
            store = memory_of(runtime).store("default")
            arrived = {i: store.get(i) for i in oracle}

    assert report.refused == 0, report.outcomes
    assert {i: r is not None and r.status is Status.ACTIVE for i, r in arrived.items()} == oracle
