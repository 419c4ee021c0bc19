"""Loading an import file's records into realm stores, entry by entry, through the one validator.

Entries go in file order, in transactions of up to :data:`CHUNK` consecutive entries of one
realm (a crash loses at most the open one, and a second run skips what committed). For each:

- a record already present by id, in the same scope with the same content hash, is **skipped**
  (nothing is written; a status or trust that differs is named in the report, never changed);
- a record whose id is taken by other content or another scope is **refused** (``id-conflict``):
  an import never overwrites;
- a mem0 memory whose text is already active in its scope is skipped (mem0 deduplicates so too);
- anything else is written as the entry holds it (``RealmTxn.restore``: the validator's field,
  secret, scope and tier rules, its status, lineage and timestamps kept), with an ``import``
  audit row, or refused with the validator's rule and an ``import_skipped`` audit row.

Entries the file itself spoils (not a record, text no store can hold) are refused in the report
without touching a store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from ...errors import WriteRefused
from ..records import Author, ScopeKind
from ..store import RealmStore, RealmTxn
from .lines import Entry
from .source import ImportSource

__all__ = ["CHUNK", "ImportReport", "Outcome", "import_source"]

CHUNK = 256

Kind = Literal["imported", "skipped", "refused"]


@dataclass(frozen=True)
class Outcome:
    """What became of one entry: ``rule`` and ``message`` say why it was refused or skipped, and
    ``notes`` what its reading left out."""

    at: str
    memory_id: str | None
    realm: str | None
    outcome: Kind
    rule: str | None = None
    message: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class ImportReport:
    """Counts of one import, and every outcome worth reading (refusals, and skips or imports with
    something to say), in file order."""

    source: str
    format: str
    imported: int = 0
    skipped: int = 0
    refused: int = 0
    not_selected: int = 0
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        if outcome.outcome == "imported":
            self.imported += 1
        elif outcome.outcome == "skipped":
            self.skipped += 1
        else:
            self.refused += 1
        if outcome.outcome == "refused" or outcome.message is not None or outcome.notes:
            self.outcomes.append(outcome)


def import_source(
    source: ImportSource,
    open_store: Callable[[str], RealmStore],
    *,
    author: Author,
    realm: str | None = None,
    identity: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> ImportReport:
    """Import every entry of ``source`` (those of ``realm`` and ``identity`` only, when given).

    Args:
        open_store: the realm's store (created if it has none).
        author: who imports (each audit row's author; the records keep their own provenance).
        progress: called with the number of entries just handled.

    Raises:
        StoreUnavailable: the database failed; what committed before stays (run the import again).
    """
    report = ImportReport(source.name, source.format)
    tick = progress or (lambda _n: None)
    dedup = source.format == "mem0"
    chunk: list[Entry] = []

    def flush() -> None:
        if not chunk:
            return
        realm_of_chunk = chunk[0].realm
        assert realm_of_chunk is not None
        outcomes = []
        with open_store(realm_of_chunk).transaction() as txn:
            for entry in chunk:
                outcomes.append(_one(txn, entry, source.name, author, dedup=dedup))
                tick(1)
        for outcome in outcomes:  # counted once committed
            report.add(outcome)
        chunk.clear()

    for entry in source.entries():
        if not _selected(entry, realm, identity):
            report.not_selected += 1
            tick(1)
            continue
        if entry.record is None:
            flush()  # keeps the report in file order
            assert entry.problem is not None
            report.add(
                Outcome(
                    entry.at,
                    entry.memory_id,
                    entry.realm,
                    "refused",
                    entry.problem.rule,
                    entry.problem.message,
                    entry.notes,
                )
            )
            tick(1)
            continue
        if chunk and (chunk[0].realm != entry.realm or len(chunk) >= CHUNK):
            flush()
        chunk.append(entry)
    flush()
    return report


def _selected(entry: Entry, realm: str | None, identity: str | None) -> bool:
    if realm is not None and entry.realm is not None and entry.realm != realm:
        return False
    if identity is not None and entry.record is not None:
        scope = entry.record.scope
        return scope.kind is ScopeKind.IDENTITY and scope.key == identity
    return True


def _one(txn: RealmTxn, entry: Entry, source: str, author: Author, *, dedup: bool) -> Outcome:
    record = entry.record
    assert record is not None

    def outcome(kind: Kind, rule: str | None = None, message: str | None = None) -> Outcome:
        return Outcome(entry.at, record.id, record.scope.realm, kind, rule, message, entry.notes)

    def refuse(rule: str, message: str) -> Outcome:
        detail = {"file": source, "at": entry.at, "reason": rule, "detail": message}
        txn.note_import_skipped(record.id, author, detail)
        return outcome("refused", rule, message)

    present = txn.get(record.id)
    if present is not None:
        if present.scope != record.scope:
            return refuse(
                "id-conflict", f"record '{record.id}' already exists in another scope; it is left as it is"
            )
        if present.content_hash != record.content_hash:
            return refuse(
                "id-conflict", f"record '{record.id}' already exists with other content; it is left as it is"
            )
        differs = [
            f"{name} is {here} here, {there} in the file"
            for name, here, there in (
                ("status", present.status.value, record.status.value),
                ("trust", present.trust.value, record.trust.value),
            )
            if here != there
        ]
        return outcome(
            "skipped", "already-present", f"already present ({'; '.join(differs)})" if differs else None
        )
    if dedup:
        duplicate = txn.active_duplicate(record)
        if duplicate is not None:
            return outcome(
                "skipped",
                "duplicate-content",
                f"the same text is already active in its scope as '{duplicate.id}'",
            )
    try:
        txn.restore(record, author=author, rationale=f"import {source} {entry.at}")
    except WriteRefused as exc:
        return refuse(exc.rule, exc.message)
    return outcome("imported")
