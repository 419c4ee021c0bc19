"""Record ids sort by creation: listings break ties of equal timestamps by id, so two records
written in one millisecond must list newest first whatever their sequence numbers."""

from __future__ import annotations

import itertools

import pytest

from meta_memory.memory import records
from meta_memory.memory.records import new_memory_id


@pytest.mark.parametrize("start", [1, 14, 250, 4090, 65_530, 2**32 - 3])
def test_ids_of_one_millisecond_sort_in_creation_order_across_every_digit_boundary(
    monkeypatch: pytest.MonkeyPatch, start: int
) -> None:
    monkeypatch.setattr(records, "_sequence", itertools.count(start))
    made = [new_memory_id("ab" * 32, 1_764_000_000_000) for _ in range(10)]
    assert sorted(made) == made
    assert len(set(made)) == len(made)


def test_ids_of_later_milliseconds_sort_after_earlier_ones() -> None:
    early = new_memory_id("cd" * 32, 1_764_000_000_000)
    late = new_memory_id("cd" * 32, 1_764_000_000_001)
    assert early < late
