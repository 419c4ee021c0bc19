"""The one validator every memory write passes, inside the write's own transaction.

A write is a :class:`WriteBatch` of operations by one author. :func:`validate_batch`
checks it against a :class:`StoreView` (what is in the realm right now, read inside the
same transaction) and raises :class:`~meta_memory.errors.WriteRefused` naming the rule.
Nothing is redacted or repaired here: a write is taken whole or refused whole.
"""

from __future__ import annotations

from collections.abc import Callable, Container
from dataclasses import dataclass, replace
from typing import Protocol

from ..errors import WriteRefused
from .records import Author, Provenance, Record, Scope, ScopeKind, Status, Trust, content_hash
from .secrets import SecretMatch, find_secret, find_secret_in_fields, provenance_texts

__all__ = [
    "BODY_MAX_BYTES",
    "DESCRIPTION_MAX_BYTES",
    "MAX_BATCH_OPS",
    "RECREATE_WINDOW_MS",
    "TAGS_MAX",
    "TAG_MAX_BYTES",
    "TITLE_MAX_BYTES",
    "VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES",
    "VERIFICATION_EVIDENCE_MAX",
    "VERIFICATION_EVIDENCE_MAX_BYTES",
    "CreateOp",
    "LineageNode",
    "Op",
    "StoreView",
    "TombstoneOp",
    "WriteBatch",
    "check_stored_record",
    "duplicate_id",
    "lineage_capped",
    "lineage_ceiling",
    "quarantine_marked",
    "recreate_tombstoned",
    "secret_refused",
    "trust_ceiling",
    "unreleased_quarantine",
    "validate_batch",
    "validate_fields",
    "validate_provenance",
    "validate_restore",
]

TITLE_MAX_BYTES = 200
DESCRIPTION_MAX_BYTES = 400
BODY_MAX_BYTES = 65_536
TAGS_MAX = 32
TAG_MAX_BYTES = 64
# A verification claim's evidence (the `memory` tool's verification_evidence) is free text an LLM
# writes; kept well under the body's cap, in pieces and in total.
VERIFICATION_EVIDENCE_MAX = 16
VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES = 2048
VERIFICATION_EVIDENCE_MAX_BYTES = 8192
# Every other provenance text (a claim's `checked`, the profile, an evidence session id or range)
# is a short label: a session key is at most 256 bytes.
_PROVENANCE_TEXT_MAX_BYTES = 512
_PROVENANCE_EVIDENCE_MAX = 64
MAX_BATCH_OPS = 1024
RECREATE_WINDOW_MS = 7 * 24 * 3600 * 1000
_CHAIN_WALK_LIMIT = 4096
_TIMESTAMP_MAX = 2**63 - 1  # SQLite INTEGER; legacy markdown allows any u64


@dataclass(frozen=True)
class CreateOp:
    """Create ``record``; when it ``supersedes`` an active record, that record is replaced
    (unless the new one lands quarantined, in which case the prior version stays active)."""

    record: Record


@dataclass(frozen=True)
class TombstoneOp:
    memory_id: str
    scope: Scope


Op = CreateOp | TombstoneOp


@dataclass(frozen=True)
class WriteBatch:
    realm: str
    author: Author
    ops: tuple[Op, ...]
    rationale: str | None = None


class StoreView(Protocol):
    """The reads the validator needs, answered inside the write transaction."""

    def get(self, memory_id: str) -> Record | None: ...

    def has(self, memory_id: str) -> bool:
        """Whether a record ``memory_id`` is stored (what ``get`` finds, without reading it)."""
        ...

    def tombstoned_content_since(self, scope: Scope, content_hash: str, since_ms: int) -> bool: ...


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def validate_fields(title: str, description: str, body: str, tags: tuple[str, ...]) -> None:
    """Field caps, text rules and the secret scan, shared by every write path."""
    for name, text in (
        ("title", title),
        ("description", description),
        ("body", body),
        *(("tags", t) for t in tags),
    ):
        if "\x00" in text:
            raise WriteRefused("field-invalid", f"{name} must not contain NUL (U+0000) characters")
    if not title.strip():
        raise WriteRefused("field-invalid", "title must be a non-empty string")
    if _nbytes(title) > TITLE_MAX_BYTES:
        raise WriteRefused("field-too-large", f"title must be at most {TITLE_MAX_BYTES} bytes")
    if _nbytes(description) > DESCRIPTION_MAX_BYTES:
        raise WriteRefused("field-too-large", f"description must be at most {DESCRIPTION_MAX_BYTES} bytes")
    if not body.strip():
        raise WriteRefused("field-invalid", "body must be a non-empty string")
    if _nbytes(body) > BODY_MAX_BYTES:
        raise WriteRefused("field-too-large", f"body must be at most {BODY_MAX_BYTES} bytes")
    if len(tags) > TAGS_MAX:
        raise WriteRefused("field-too-large", f"tags must contain at most {TAGS_MAX} entries")
    for tag in tags:
        if not tag.strip():
            raise WriteRefused("field-invalid", "tags must contain only non-empty strings")
        if _nbytes(tag) > TAG_MAX_BYTES:
            raise WriteRefused("field-too-large", f"tags must be at most {TAG_MAX_BYTES} bytes")
    hit = find_secret_in_fields(title, description, body, tags)
    if hit is not None:
        raise secret_refused(hit)


def validate_provenance(provenance: Provenance) -> None:
    """Caps and the secret scan of a record's provenance texts: its verification evidence (at
    most :data:`VERIFICATION_EVIDENCE_MAX` pieces of at most
    :data:`VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES` bytes, :data:`VERIFICATION_EVIDENCE_MAX_BYTES`
    in all) and its short labels (``checked``, profile, evidence session ids and ranges).

    Raises:
        WriteRefused: ``field-too-large``, ``field-invalid`` or ``secret-detected``.
    """
    verification = provenance.verification
    if verification is not None:
        evidence = verification.evidence
        if len(evidence) > VERIFICATION_EVIDENCE_MAX:
            raise WriteRefused(
                "field-too-large",
                f"verification_evidence must contain at most {VERIFICATION_EVIDENCE_MAX} entries",
            )
        if any(_nbytes(e) > VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES for e in evidence):
            raise WriteRefused(
                "field-too-large",
                f"verification_evidence entries must be at most {VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES} bytes",
            )
        if sum(_nbytes(e) for e in evidence) > VERIFICATION_EVIDENCE_MAX_BYTES:
            raise WriteRefused(
                "field-too-large",
                f"verification_evidence must be at most {VERIFICATION_EVIDENCE_MAX_BYTES} bytes in total",
            )
    if len(provenance.evidence) > _PROVENANCE_EVIDENCE_MAX:
        raise WriteRefused(
            "field-too-large", f"provenance.evidence must contain at most {_PROVENANCE_EVIDENCE_MAX} entries"
        )
    texts = provenance_texts(provenance)
    for field, text in texts:
        if "\x00" in text:
            raise WriteRefused("field-invalid", f"{field} must not contain NUL (U+0000) characters")
        if field == "provenance" and _nbytes(text) > _PROVENANCE_TEXT_MAX_BYTES:
            raise WriteRefused(
                "field-too-large", f"provenance texts must be at most {_PROVENANCE_TEXT_MAX_BYTES} bytes each"
            )
    hit = find_secret(texts)
    if hit is not None:
        raise secret_refused(hit)


def secret_refused(hit: SecretMatch) -> WriteRefused:
    """The refusal of a write whose ``hit.field`` matched a secret class: it names the field and the
    class, never the text."""
    return WriteRefused("secret-detected", f"{hit.describe()}; secrets are refused, never stored")


def validate_batch(batch: WriteBatch, view: StoreView, *, now_ms: int) -> None:
    """Refuse the whole batch if any operation breaks a rule.

    Raises:
        WriteRefused: the first broken rule, named.
    """
    if not batch.ops:
        raise WriteRefused("empty-batch", "a memory write must contain at least one operation")
    if len(batch.ops) > MAX_BATCH_OPS:
        raise WriteRefused(
            "batch-too-large", f"a memory write may contain at most {MAX_BATCH_OPS} operations"
        )
    if batch.rationale is not None:
        hit = find_secret((("rationale", batch.rationale),))
        if hit is not None:
            raise secret_refused(hit)
    # Records as earlier ops of this batch leave them, so a later op sees their new status.
    created: dict[str, Record] = {}

    def lookup(memory_id: str) -> Record | None:
        return created.get(memory_id) or view.get(memory_id)

    for op in batch.ops:
        if isinstance(op, CreateOp):
            _check_create(op.record, batch, view, lookup, now_ms, created)
            created[op.record.id] = op.record
            prior = lookup(op.record.supersedes) if op.record.supersedes else None
            if prior is not None and op.record.status is Status.ACTIVE:
                created[prior.id] = replace(prior, status=Status.SUPERSEDED, superseded_by=op.record.id)
        else:
            _check_scope(op.scope, batch)
            target = lookup(op.memory_id)
            if target is None or target.scope != op.scope:
                raise WriteRefused(
                    "unknown-record", f"record '{op.memory_id}' does not belong to the requested scope"
                )
            created[target.id] = replace(target, status=Status.TOMBSTONED)


def validate_restore(record: Record, realm: str, view: StoreView, *, importer: Author | None = None) -> None:
    """The rules of a record written as an export holds it, its status, lineage and timestamps
    kept (``meta_gateway import``): a create's field, scope and tier rules, met as the record's
    own author (its provenance) would meet them, the rules every stored record keeps
    (:func:`check_stored_record`), a trust no higher than ``importer`` may give, and a content
    hash that is the record's own. Lineage is kept as given and changes nothing: the ids it names
    need not exist, but a supersede of a record that does exist must stay in its scope and close
    no cycle, and a record arriving active must not carry or reach a quarantine this store holds
    no release of (:func:`unreleased_quarantine`; the importer quarantines such a record on
    arrival, so this refusal guards every other caller). The re-creation window is not applied:
    it judges an LLM writing now, and an import replays history that was judged when it was
    written.

    Raises:
        WriteRefused: the first broken rule, named.
    """
    batch = WriteBatch(realm, record.provenance.author, (CreateOp(record),))
    _check_scope(record.scope, batch)
    validate_fields(record.title, record.description, record.body, record.tags)
    validate_provenance(record.provenance)
    if content_hash(record.title, record.body) != record.content_hash:
        raise WriteRefused(
            "content-hash-mismatch", "content_hash is not the hash of the record's title and body"
        )
    if view.has(record.id):
        raise duplicate_id(record.id)
    if (record.status is Status.SUPERSEDED) != (record.superseded_by is not None):
        raise WriteRefused(
            "invalid-status", "a superseded record names the record that superseded it, and only it does"
        )
    if not all(0 <= t <= _TIMESTAMP_MAX for t in (record.created_at_ms, record.updated_at_ms)):
        raise WriteRefused("field-invalid", "created_at_ms and updated_at_ms must be between 0 and 2^63-1")
    check_stored_record(record)
    if importer is not None and record.trust.rank > trust_ceiling(importer).rank:
        raise WriteRefused(
            "tier-ceiling",
            f"trust '{record.trust.value}' is above what the importing {importer.kind} may give "
            f"('{trust_ceiling(importer).value}')",
        )
    if record.trust.rank > Trust.AGENT_OBSERVED.rank and lineage_capped(record, view.get):
        raise lineage_ceiling()
    if record.status is Status.ACTIVE:
        why = unreleased_quarantine(record, view.get)
        if why is not None:
            raise WriteRefused("quarantine-unreleased", f"an active record must not be restored: {why}")
    prior = view.get(record.supersedes) if record.supersedes is not None else None
    if prior is not None:
        if prior.scope != record.scope:
            raise WriteRefused(
                "unknown-record", f"record '{record.supersedes}' does not belong to the requested scope"
            )
        if _names(prior, record.id, view.get):
            raise WriteRefused("supersede-cycle", "supersede chain would form a cycle")


# -- the rules of a record as it stands (import and storage-copy) -------------------------------


def trust_ceiling(author: Author) -> Trust:
    """The highest trust ``author`` may give a record: an operator ``operator``, an application
    ``application``, an LLM ``agent_verified`` (and that only with a verification claim)."""
    if author.kind == "operator":
        return Trust.OPERATOR
    if author.kind == "application":
        return Trust.APPLICATION
    return Trust.AGENT_VERIFIED


def quarantine_marked(node: LineageNode) -> bool:
    """Whether a record says it was quarantined: its status, its durable flag, or the reason a
    quarantine gave it (which an export keeps once it is released or discarded)."""
    return node.status is Status.QUARANTINED or node.ever_quarantined or node.quarantine_reason is not None


def lineage_ceiling() -> WriteRefused:
    """The refusal of a record above ``agent_observed`` that is, or derives from, untrusted or
    quarantined content."""
    return WriteRefused(
        "tier-ceiling",
        "records derived from untrusted or quarantined content are capped at trust 'agent_observed'",
    )


def check_stored_record(record: Record) -> None:
    """The rules every stored record keeps whatever its history, judged on the record alone: an
    agent's record in its own identity scope; a trust no higher than its author may give
    (:func:`trust_ceiling`), ``agent_verified`` only with a verification claim, and
    ``agent_observed`` at most once it was quarantined; session evidence only on an LLM author's
    record (only the ``memory`` tool and the steward cite sessions, so an operator or
    application author citing one is an edited author).

    Raises:
        WriteRefused: ``outside-own-scope``, ``tier-ceiling`` or ``author-mismatch``.
    """
    author = record.provenance.author
    if author.kind == "agent" and (
        record.scope.kind is not ScopeKind.IDENTITY or record.scope.key != author.identity
    ):
        raise WriteRefused("outside-own-scope", "an agent may write only its own identity scope")
    if not author.is_llm and record.provenance.evidence:
        raise WriteRefused(
            "author-mismatch",
            f"provenance.evidence cites agent sessions, which only an LLM author's record does "
            f"(the record names author '{author.kind}')",
        )
    ceiling = trust_ceiling(author)
    if record.trust.rank > ceiling.rank:
        if author.is_llm:
            raise WriteRefused("tier-ceiling", "LLM-authored records are capped at trust 'agent_verified'")
        raise WriteRefused(
            "tier-ceiling", f"a record by author '{author.kind}' is capped at trust '{ceiling.value}'"
        )
    if record.trust is Trust.AGENT_VERIFIED and record.provenance.verification is None:
        raise WriteRefused("tier-ceiling", "trust 'agent_verified' needs a verification claim")
    if record.trust.rank > Trust.AGENT_OBSERVED.rank and quarantine_marked(record):
        raise lineage_ceiling()


class LineageNode(Protocol):
    """What a lineage walk reads of a record: a stored :class:`Record`, or what an import file
    says of one."""

    @property
    def id(self) -> str: ...

    @property
    def trust(self) -> Trust: ...

    @property
    def status(self) -> Status: ...

    @property
    def ever_quarantined(self) -> bool: ...

    @property
    def quarantine_reason(self) -> str | None: ...

    @property
    def supersedes(self) -> str | None: ...

    @property
    def derived_from(self) -> tuple[str, ...]: ...


def _no_node(_memory_id: str) -> LineageNode | None:
    return None


def _parents(node: LineageNode) -> list[str]:
    return [i for i in (node.supersedes, *node.derived_from) if i]


def _released_here(node: Record | None) -> bool:
    """A stored record that was quarantined and is active: a review (or an approved promotion)
    made it ordinary memory here, or an import that such a record explained."""
    return node is not None and node.ever_quarantined and node.status is Status.ACTIVE


def unreleased_quarantine(
    record: LineageNode,
    stored: Callable[[str], Record | None],
    listed: Callable[[str], LineageNode | None] = _no_node,
) -> str | None:
    """Why ``record`` may not arrive active, or ``None``: it carries a quarantine (its own marks,
    or marks ``listed`` gives its id) that no record of this store explains, or its lineage
    (``supersedes`` and ``derived_from``, read in the store first and then in ``listed``)
    reaches a quarantine this store did not release.

    Only the store's judgement is evidence: nothing ``listed`` says (an import file, which
    whoever holds it may edit) proves a release, and neither does a stored record that is not
    active (an import writes history as the file gives it, unjudged). So a record's own marks are
    explained only by a ``derived_from`` parent that is stored, active and was quarantined (a
    release's successor, a promotion of one: :func:`_released_here`). The walk ends a branch at
    an active stored record (memory this store judged ordinary) and at an id neither holds;
    a marked record, stored or listed, is a quarantine; any other is walked on. A walk past
    ``_CHAIN_WALK_LIMIT`` records is a quarantine (fail closed).
    """
    own = listed(record.id)
    marked = quarantine_marked(record) or (own is not None and quarantine_marked(own))
    if marked and not any(_released_here(stored(i)) for i in record.derived_from):
        reason = record.quarantine_reason or (own.quarantine_reason if own is not None else None)
        said = f" ({reason})" if reason else ""
        return f"it was quarantined{said}, and no release of it is committed in this store"
    seen = {record.id}
    frontier = _parents(record)
    while frontier:
        memory_id = frontier.pop()
        if memory_id in seen:
            continue
        seen.add(memory_id)
        if len(seen) > _CHAIN_WALK_LIMIT:
            return f"its lineage is longer than {_CHAIN_WALK_LIMIT} records, too long to check"
        node: LineageNode | None = stored(memory_id)
        if node is not None:
            if node.status is Status.ACTIVE:
                continue
            if quarantine_marked(node):
                return f"its lineage reaches '{memory_id}', quarantined in this store and not released"
        else:
            node = listed(memory_id)
            if node is None:
                continue
            if quarantine_marked(node):
                return (
                    f"its lineage reaches '{memory_id}', quarantined with no release committed in this store"
                )
        frontier.extend(_parents(node))
    return None


def lineage_capped(record: LineageNode, lookup: Callable[[str], LineageNode | None]) -> bool:
    """Whether ``record`` or its lineage (every ancestor ``lookup`` finds) is untrusted,
    quarantined or ever quarantined: its trust is then ``agent_observed`` at most (REFERENCE
    3.2). A walk past ``_CHAIN_WALK_LIMIT`` records counts as capped (fail closed)."""
    if quarantine_marked(record):
        return True
    seen = {record.id}
    frontier = _parents(record)
    while frontier:
        memory_id = frontier.pop()
        if memory_id in seen:
            continue
        seen.add(memory_id)
        if len(seen) > _CHAIN_WALK_LIMIT:
            return True
        node = lookup(memory_id)
        if node is None:
            continue
        if node.trust is Trust.UNTRUSTED or quarantine_marked(node):
            return True
        frontier.extend(_parents(node))
    return False


def duplicate_id(memory_id: str) -> WriteRefused:
    """The refusal of a create whose id is taken (a backend that checks it itself raises this)."""
    return WriteRefused("duplicate-id", f"record id '{memory_id}' already exists")


def recreate_tombstoned() -> WriteRefused:
    """The refusal of an LLM re-creating content forgotten in its scope within RECREATE_WINDOW_MS."""
    return WriteRefused(
        "recreate-tombstoned", "this content was forgotten in this scope within the last 7 days"
    )


def _check_scope(scope: Scope, batch: WriteBatch) -> None:
    if scope.realm != batch.realm:
        raise WriteRefused(
            "realm-mismatch", f"scope realm '{scope.realm}' does not match store realm '{batch.realm}'"
        )
    author = batch.author
    if author.kind == "agent" and (scope.kind is not ScopeKind.IDENTITY or scope.key != author.identity):
        raise WriteRefused("outside-own-scope", "an agent may write only its own identity scope")


def _check_create(
    record: Record,
    batch: WriteBatch,
    view: StoreView,
    lookup: Callable[[str], Record | None],
    now_ms: int,
    written: Container[str],
) -> None:
    _check_scope(record.scope, batch)
    validate_fields(record.title, record.description, record.body, record.tags)
    validate_provenance(record.provenance)
    if record.id in written or view.has(record.id):  # lookup() would also read the record
        raise duplicate_id(record.id)
    if record.status not in (Status.ACTIVE, Status.QUARANTINED):
        raise WriteRefused("invalid-status", "a new record must be active or quarantined")
    if not all(0 <= t <= _TIMESTAMP_MAX for t in (record.created_at_ms, record.updated_at_ms)):
        raise WriteRefused("field-invalid", "created_at_ms and updated_at_ms must be between 0 and 2^63-1")
    author = batch.author
    if author.is_llm:
        if record.trust.rank > Trust.AGENT_OBSERVED.rank:
            raise WriteRefused("tier-ceiling", "LLM-authored writes are capped at trust 'agent_observed'")
        if view.tombstoned_content_since(record.scope, record.content_hash, now_ms - RECREATE_WINDOW_MS):
            raise recreate_tombstoned()
    if record.trust.rank > Trust.AGENT_OBSERVED.rank and _chain_taints(record, lookup):
        raise WriteRefused(
            "tier-ceiling",
            "records derived from untrusted or quarantined content are capped at trust 'agent_observed'",
        )
    if record.supersedes is not None:
        prior = lookup(record.supersedes)
        if prior is None or prior.scope != record.scope:
            raise WriteRefused(
                "unknown-record", f"record '{record.supersedes}' does not belong to the requested scope"
            )
        if prior.status is not Status.ACTIVE:
            raise WriteRefused(
                "supersede-inactive", f"record '{record.supersedes}' is {prior.status.value}, not active"
            )
        if _reaches(prior, record.id, lookup):
            raise WriteRefused("supersede-cycle", "supersede chain would form a cycle")


def _ancestors(record: Record, lookup: Callable[[str], Record | None]) -> list[Record]:
    out: list[Record] = []
    seen: set[str] = {record.id}
    frontier = [i for i in (record.supersedes, *record.derived_from) if i]
    while frontier and len(out) < _CHAIN_WALK_LIMIT:
        memory_id = frontier.pop()
        if memory_id in seen:
            continue
        seen.add(memory_id)
        found = lookup(memory_id)
        if found is not None:
            out.append(found)
            frontier.extend(i for i in (found.supersedes, *found.derived_from) if i)
    return out


def _chain_taints(record: Record, lookup: Callable[[str], Record | None]) -> bool:
    return record.ever_quarantined or any(
        a.trust is Trust.UNTRUSTED or a.status is Status.QUARANTINED or a.ever_quarantined
        for a in _ancestors(record, lookup)
    )


def _reaches(start: Record, target_id: str, lookup: Callable[[str], Record | None]) -> bool:
    return any(a.id == target_id for a in [start, *_ancestors(start, lookup)])


def _names(start: Record, target_id: str, lookup: Callable[[str], Record | None]) -> bool:
    """Whether ``start`` or an ancestor is ``target_id`` or names it as its own ancestor: a
    restored chain may name records that are not stored yet."""
    return any(
        a.id == target_id or a.supersedes == target_id or target_id in a.derived_from
        for a in [start, *_ancestors(start, lookup)]
    )
