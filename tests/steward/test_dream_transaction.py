"""One dream commits all its store writes for a realm in one transaction (issue 5, item 5): a failure
part-way through leaves none of them (and emits nothing, opens no gate), a refused verdict is undone
alone and the dream goes on, and every event of the dream comes after the commit."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory.memory.postgres import steward_rows as postgres_rows
from meta_memory.memory.records import Record, Status
from meta_memory.memory.sqlite import steward_rows as sqlite_rows
from meta_memory.steward import DreamInput, DreamVerdicts, ProposalVerdict, QuarantineVerdict

from .conftest import Bench

_EVENTS = ("memory.quarantine.verdict", "memory.promotion.pending_gate", "memory.record.promoted")


class DiskFailed(Exception):
    """The store's write failing under the dream (a driver's I/O error, as the steward sees it)."""


def _queue(bench: Bench) -> tuple[Record, Record, Record, str, str]:
    release = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    tombstone = bench.quarantine("Stale note", "The build uses make.")
    gate = bench.quarantine("Mob gotcha", "The staging VPN drops idle links after ten minutes.")
    accept = bench.propose("Runbook", "Restart the queue worker before the cache.")
    reject = bench.propose("Local habit", "I like tabs.")
    return release, tombstone, gate, accept, reject


def _verdicts(release: Record, tombstone: Record, gate: Record, accept: str, reject: str) -> DreamVerdicts:
    return DreamVerdicts(
        quarantine=(
            QuarantineVerdict(release.id, "release"),
            QuarantineVerdict(tombstone.id, "tombstone"),
            QuarantineVerdict(gate.id, "promote_pending_gate"),
        ),
        proposals=(ProposalVerdict(reject, "reject"), ProposalVerdict(accept, "accept")),
    )


def test_a_dream_that_fails_part_way_leaves_none_of_its_writes_and_emits_nothing(
    bench: Bench, monkeypatch: pytest.MonkeyPatch
) -> None:
    release, tombstone, gate, accept, reject = _queue(bench)
    verdicts = _verdicts(release, tombstone, gate, accept, reject)
    rows = postgres_rows if bench.backend.is_postgres else sqlite_rows
    real = rows.set_proposal_status
    calls = 0

    def fail_on_second(*args: Any) -> None:
        nonlocal calls
        calls += 1
        if calls == 2:  # the accept, after the releases, the tombstone, the staging and the reject
            raise DiskFailed("disk I/O error")
        real(*args)

    monkeypatch.setattr(rows, "set_proposal_status", fail_on_second)
    with pytest.raises(DiskFailed):
        bench.dream(lambda dream: verdicts)

    assert calls == 2
    assert bench.record(release.id).status is Status.QUARANTINED
    assert bench.record(tombstone.id).status is Status.QUARANTINED
    assert bench.record(gate.id).status is Status.QUARANTINED
    assert bench.store.get(f"{release.id}-released") is None
    assert bench.proposal_status(reject) == "pending"
    assert bench.proposal_status(accept) == "pending"
    assert bench.promotions() == []
    assert bench.stage_count() == 0
    assert bench.runtime.gating.pending().pending == ()  # no gate was opened for the staged promotion
    assert not any(bench.events(t) for t in _EVENTS)
    assert not _in_transaction(bench)

    # Without the failure the same verdicts apply, all of them.
    monkeypatch.setattr(rows, "set_proposal_status", real)
    report = bench.dream(lambda dream: verdicts)
    assert report.counts() == {
        "proposal.accepted": 1,
        "proposal.rejected": 1,
        "quarantine.gated": 1,
        "quarantine.released": 1,
        "quarantine.tombstoned": 1,
    }
    assert bench.record(f"{release.id}-released").status is Status.ACTIVE
    assert bench.record(tombstone.id).status is Status.TOMBSTONED
    [(pending_id, source, status)] = bench.promotions()
    assert (source, status) == (gate.id, "pending")
    [gated] = report.outcomes_for("quarantine")[2:]
    assert gated.pending_id == pending_id  # the gating entry's id, not the provisional one
    assert [e.pending_id for e in bench.runtime.gating.pending().pending] == [pending_id]


def test_a_refused_verdict_is_undone_alone_and_the_dream_goes_on(bench: Bench) -> None:
    release, tombstone, gate, accept, reject = _queue(bench)
    stale = bench.record(release.id).content_hash

    def script(dream: DreamInput) -> DreamVerdicts:
        bench.rewrite(release.id, "Deploys happen on Thursdays.")  # the release now mismatches
        return _verdicts(release, tombstone, gate, accept, reject)

    report = bench.dream(script)

    [released, tombstoned, gated] = report.outcomes_for("quarantine")
    assert (released.outcome, released.reason) == ("refused", "content_mismatch")
    assert bench.record(release.id).content_hash != stale
    assert bench.record(release.id).status is Status.QUARANTINED
    assert tombstoned.outcome == "tombstoned" and gated.outcome == "gated"
    assert bench.proposal_status(accept) == "accepted"
    assert [e["data"]["record_id"] for e in bench.events("memory.quarantine.verdict")] == [tombstone.id]


def test_every_event_of_a_dream_comes_after_its_transaction_commits(bench: Bench) -> None:
    release, tombstone, gate, accept, reject = _queue(bench)
    sink: Any = bench.runtime.events
    real_emit = sink.emit
    seen: list[tuple[str, bool, bool]] = []

    def emit(event_type: str, data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if event_type in _EVENTS:
            # Committed: another connection sees the dream's writes (the released successor, the
            # accepted proposal), and on SQLite the steward's connection holds no transaction.
            with bench.db() as conn:
                successor = conn.execute(
                    "SELECT count(*) FROM records WHERE id = ?", (f"{release.id}-released",)
                ).fetchone()[0]
                (accepted,) = conn.execute(
                    "SELECT status FROM proposals WHERE proposal_id = ?", (accept,)
                ).fetchone()
            seen.append((event_type, _in_transaction(bench), successor == 1 and accepted == "accepted"))
        return real_emit(event_type, data, *args, **kwargs)

    sink.emit = emit
    try:
        bench.dream(lambda dream: _verdicts(release, tombstone, gate, accept, reject))
    finally:
        del sink.emit

    assert sorted({t for t, _, _ in seen}) == sorted(_EVENTS)
    assert all(not in_txn and committed for _, in_txn, committed in seen), seen


def _in_transaction(bench: Bench) -> bool:
    db = getattr(bench.store, "_db", None)  # SQLite's one connection; PostgreSQL's come from a pool
    return bool(db is not None and db.in_transaction)
