"""What a quarantine decision tells the reviewer on the wire: a replay is the original decision
byte for byte, however the clock moved between the reads of one decision; and a release refused
for a stale hash does not tell the record's hash (a reviewer reads it with the record)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from meta_memory.clock import ManualClock

from ..conftest import Backend
from .conftest import Desk, _open


class TickingClock(ManualClock):
    """Every read is one millisecond later than the last: each place a decision reads the clock
    gets a time of its own, as the system clock often gives."""

    def now_ms(self) -> int:
        self.advance(1)
        return super().now_ms()


@pytest.fixture
def ticking_desk(tmp_path: Path, backend: Backend) -> Iterator[Desk]:
    clock = TickingClock()
    with _open(tmp_path / "state", clock, "quarantined", backend) as meta:
        yield Desk(meta, clock, backend)


@pytest.mark.parametrize("verdict", ["release", "tombstone"])
def test_a_replayed_decision_is_the_original_byte_for_byte(ticking_desk: Desk, verdict: str) -> None:
    origin = ticking_desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    first = ticking_desk.decide(origin.id, verdict, rationale="checked")
    again = ticking_desk.decide(origin.id, verdict, rationale="checked")

    assert again["outcome"] == f"already_{'released' if verdict == 'release' else 'tombstoned'}"
    assert json.dumps(again["decision"]) == json.dumps(first["decision"])
    with ticking_desk.db() as conn:
        (at_ms,) = conn.execute(
            "SELECT at_ms FROM audit WHERE seq = ?",
            (int(first["decision"]["audit_token"].removeprefix("audit-")),),
        ).fetchone()
    assert first["decision"]["decided_at_ms"] == at_ms  # the time the audit row holds


def test_a_release_refused_for_a_stale_hash_does_not_tell_the_record_s_hash(desk: Desk) -> None:
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    refused = desk.refusal(origin.id, "release", expected="0" * 64)

    assert refused.data is not None and refused.data["reason"] == "content_mismatch"
    told = json.dumps({"message": refused.message, "data": refused.data})
    assert origin.content_hash not in told
    assert "expected_content_hash" in refused.message
    assert desk.record(origin.id).status.value == "quarantined"
