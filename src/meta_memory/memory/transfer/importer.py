"""Loading an import file's records into realm stores, entry by entry, through the one validator.

Entries go in file order, in transactions of up to :data:`CHUNK` consecutive entries of one
realm (a crash loses at most the open one, and a second run skips what committed). For each:

- a record already present by id, in the same scope with the same content hash, is **skipped**
  (nothing is written; a status or trust that differs is named in the report, never changed);
- a record whose id is taken by other content or another scope is **refused** (``id-conflict``):
  an import never overwrites;
- a mem0 memory whose text is already active in its scope is skipped (mem0 deduplicates so too);
- a record the file gives as active arrives **quarantined**, for a reviewer, when it carries a
  quarantine (its status, ``ever_quarantined`` or a quarantine reason), when its lineage (in the
  store, then in the file) reaches one, or when its text is held under quarantine in the realm
  or marked so in the file, and the store holds no release that explains it (lineage.py says
  what counts as evidence: the store's records, never the file's);
- anything else is written as the entry holds it (``RealmTxn.restore``: the validator's field,
  secret, scope and tier rules, its status, lineage and timestamps kept), with an ``import``
  audit row, or refused with the validator's rule and an ``import_skipped`` audit row; a trust
  above what the record's lineage allows is refused also when the lineage is in the file.

Entries the file itself spoils (not a record, text no store can hold) are refused in the report
without touching a store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal

from ...errors import WriteRefused
from ..records import Author, Record, ScopeKind, Status, Trust
from ..store import RealmStore, RealmTxn
from ..validator import LineageNode, lineage_capped, lineage_ceiling, unreleased_quarantine
from .lineage import FileLineage, HeldContent
from .lines import Entry
from .source import ImportSource

__all__ = ["CHUNK", "QUARANTINED_ON_ARRIVAL", "QUARANTINE_PREFIX", "ImportReport", "Outcome", "import_source"]

CHUNK = 256
QUARANTINED_ON_ARRIVAL = "quarantined-on-arrival"
"""The rule of an outcome whose record the file gave as active and which arrived quarantined."""
QUARANTINE_PREFIX = "import: "
"""How the quarantine reason of a record quarantined on arrival begins."""

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
    something to say), in file order. ``quarantined``: how many of the imported records arrived
    quarantined, for a reviewer, where the file gave them as active."""

    source: str
    format: str
    imported: int = 0
    skipped: int = 0
    refused: int = 0
    not_selected: int = 0
    quarantined: int = 0
    outcomes: list[Outcome] = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        if outcome.outcome == "imported":
            self.imported += 1
            if outcome.rule == QUARANTINED_ON_ARRIVAL:
                self.quarantined += 1
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
    # Every line first: a line's lineage may sit anywhere in the file.
    evidence = _Evidence(FileLineage.read(source.entries()), HeldContent())

    def flush() -> None:
        if not chunk:
            return
        realm_of_chunk = chunk[0].realm
        assert realm_of_chunk is not None
        outcomes = []
        store = open_store(realm_of_chunk)
        evidence.held.load(store)
        with store.transaction() as txn:
            for entry in chunk:
                outcomes.append(_one(txn, entry, source.name, author, evidence, dedup=dedup))
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


@dataclass(frozen=True)
class _Evidence:
    file: FileLineage
    held: HeldContent


def _one(
    txn: RealmTxn, entry: Entry, source: str, author: Author, evidence: _Evidence, *, dedup: bool
) -> Outcome:
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
    listed = evidence.file.lookup(record.scope.realm)

    def lineage(memory_id: str) -> LineageNode | None:
        return txn.get(memory_id) or listed(memory_id)

    # The store's validator walks the store's lineage; the file's is walked here.
    if record.trust.rank > Trust.AGENT_OBSERVED.rank and lineage_capped(record, lineage):
        exc = lineage_ceiling()
        return refuse(exc.rule, exc.message)
    held = _quarantine_on_arrival(txn, record, evidence) if record.status is Status.ACTIVE else None
    arriving = record
    if held is not None:
        arriving = replace(
            record,
            status=Status.QUARANTINED,
            quarantine_reason=QUARANTINE_PREFIX + held,
            ever_quarantined=True,
        )
    try:
        txn.restore(arriving, author=author, rationale=f"import {source} {entry.at}")
    except WriteRefused as exc:
        return refuse(exc.rule, exc.message)
    if arriving.status is Status.QUARANTINED:
        evidence.held.add(arriving)
    if held is not None:
        return outcome("imported", QUARANTINED_ON_ARRIVAL, f"imported quarantined, for a reviewer: {held}")
    return outcome("imported")


def _quarantine_on_arrival(txn: RealmTxn, record: Record, evidence: _Evidence) -> str | None:
    """Why ``record``, which the file gives as active, must arrive quarantined, or ``None``."""
    realm = record.scope.realm
    why = unreleased_quarantine(record, txn.get, evidence.file.lookup(realm))
    if why is not None:
        return why
    holder = evidence.held.holder(txn, record)
    if holder is not None:
        return f"its text is held under quarantine in this store (record '{holder}')"
    marked = evidence.file.marked_text(realm, record.content_hash)
    if marked is not None and marked != record.id and txn.active_duplicate(record) is None:
        return f"its text is quarantined in the file (record '{marked}')"
    return None
