"""Adoption of a predecessor (pre-0.9) ledger: a one-time, byte-for-byte rename in place.

The predecessor gateway left ``elephant-memory-state.json``; Meta 0.9 reads only
``memory-ledger-state.json`` and refuses to start while the old file is there. Adoption
renames it (``os.rename`` keeps the bytes and the inode) and refuses, changing nothing, when
a leftover stage of an interrupted write or an already-adopted ledger sits beside it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..errors import StorageRefused
from .layout import StateLayout

__all__ = ["AdoptionReport", "adopt_predecessor"]


@dataclass(frozen=True)
class AdoptionReport:
    applied: bool
    message: str


def adopt_predecessor(layout: StateLayout, *, apply: bool) -> AdoptionReport:
    """Plan (``apply=False``) or perform the adoption.

    Raises:
        StorageRefused: nothing to adopt, or a stage / target file is in the way.
    """
    source, target = layout.predecessor_ledger_path, layout.ledger_path
    stage = layout.predecessor_stage_path
    if not layout.root.is_dir():
        raise StorageRefused(f"state dir {layout.root} does not exist")
    if not source.is_file():
        raise StorageRefused(f"nothing to adopt: no predecessor ledger {source.name} in {layout.root}")
    if stage.exists():
        raise StorageRefused(
            f"refusing to adopt: {stage} is a leftover stage of an interrupted predecessor write; "
            "inspect it and remove it by hand, then run the adoption again"
        )
    if target.exists() or layout.ledger_stage_path.exists():
        in_the_way = target if target.exists() else layout.ledger_stage_path
        raise StorageRefused(
            f"refusing to adopt: {in_the_way} already exists beside {source.name}; "
            "keep one ledger and remove the other by hand"
        )
    if not apply:
        return AdoptionReport(
            applied=False,
            message=f"would rename {source} -> {target} (byte for byte); run again with --apply to do it",
        )
    os.rename(source, target)
    fd = os.open(layout.root, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return AdoptionReport(applied=True, message=f"adopted {source} as {target}")
