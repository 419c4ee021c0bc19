"""Hypothesis: what goes in comes back out (API and store), and the content hash is the reference one."""

from __future__ import annotations

import hashlib
import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meta_memory import InvalidParams, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.memory.records import (
    APPLICATION,
    Evidence,
    Provenance,
    Record,
    RecordKind,
    Scope,
    Status,
    Trust,
    VerificationClaim,
    content_hash,
)
from meta_memory.memory.secrets import find_secret_in_fields
from meta_memory.memory.sqlite.store import SqliteRealmStore
from meta_memory.memory.validator import CreateOp, WriteBatch

_settings = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Any text but NUL, which no field accepts (the NUL rule has its own test).
_chars = st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
_nonblank = st.text(_chars, min_size=1).filter(str.strip)
titles = st.text(_chars, min_size=1, max_size=50).filter(str.strip)  # ≤ 4 bytes a character: within 200 bytes
bodies = st.text(_chars, min_size=1, max_size=400).filter(str.strip)
tag_lists = st.lists(st.text(_chars, min_size=1, max_size=12).filter(str.strip), max_size=32)


def test_a_nul_character_is_refused_in_every_text_field_and_nothing_is_stored(handle: MetaHandle) -> None:
    for fields in ({"title": "a\x00b"}, {"body": "\x00"}, {"tags": ["ok", "n\x00l"]}):
        params = {"title": "T", "body": "B", **fields}
        with pytest.raises(InvalidParams) as refused:
            handle.remember_agent_memory("alice", **params)  # type: ignore[arg-type]
        assert "must not contain NUL (U+0000) characters" in refused.value.message
    assert handle.recall_agent_memory("alice", selection="always") == []


def _reference_hash(title: str, body: str) -> str:
    t = title.encode("utf-8")
    return hashlib.sha256(len(t).to_bytes(8, "little") + t + body.encode("utf-8")).hexdigest()


def test_remember_then_recall_always_returns_an_equal_normalized_record(handle: MetaHandle) -> None:
    identities = (f"identity-{n}" for n in itertools.count())

    @_settings
    @given(title=titles, body=bodies, tags=tag_lists)
    def round_trip(title: str, body: str, tags: list[str]) -> None:
        expected = (" ".join(title.split()), body.strip(), tuple(sorted({t.strip().lower() for t in tags})))
        if find_secret_in_fields(expected[0], "", expected[1], expected[2]) is not None:
            return
        identity = next(identities)
        saved = handle.remember_agent_memory(identity, title=title, body=body, tags=tags)
        assert (saved.title, saved.body, saved.tags) == expected
        assert handle.recall_agent_memory(identity, selection="always", max_entries=64) == [saved]

    round_trip()


_kinds = st.sampled_from(list(RecordKind))


def _free_text(max_size: int) -> st.SearchStrategy[str]:
    """Provenance text the validator takes (NUL is refused there too)."""
    return st.text(_chars, max_size=max_size)


_evidence = st.builds(
    Evidence,
    session_id=st.text(_chars, min_size=1, max_size=100).filter(str.strip),  # within 512 bytes
    generation=st.integers(0, 2**31),
    revision=st.none() | st.integers(0, 2**31),
    range=st.none() | _free_text(20),
)
_provenance = st.builds(
    Provenance,
    author=st.just(APPLICATION),
    evidence=st.lists(_evidence, max_size=3).map(tuple),
    profile=st.none() | _free_text(20),
    verification=st.none()
    | st.builds(
        VerificationClaim,
        checked=_free_text(30),
        evidence=st.lists(_free_text(10), max_size=3).map(tuple),
    ),
)


def test_a_committed_record_reads_back_equal_from_the_realm_file(tmp_path: Path, clock: ManualClock) -> None:
    ids = (f"rec-{n}" for n in itertools.count())
    store = SqliteRealmStore(tmp_path / "r.sqlite3", "r", clock=clock)

    @_settings
    @given(
        identity=_nonblank,
        kind=_kinds,
        title=titles,
        description=st.text(_chars, max_size=100),
        body=bodies,
        tags=st.lists(
            st.text(_chars, min_size=1, max_size=12).filter(str.strip), max_size=8, unique=True
        ).map(tuple),
        provenance=_provenance,
        trust=st.sampled_from(list(Trust)),
        created=st.integers(0, 2**63 - 1),
        updated=st.integers(0, 2**63 - 1),
    )
    def round_trip(
        identity: str,
        kind: RecordKind,
        title: str,
        description: str,
        body: str,
        tags: tuple[str, ...],
        provenance: Provenance,
        trust: Trust,
        created: int,
        updated: int,
    ) -> None:
        if find_secret_in_fields(title, description, body, tags) is not None:
            return
        record = Record(
            id=next(ids),
            scope=Scope.identity("r", identity),
            kind=kind,
            title=title,
            description=description,
            body=body,
            tags=tags,
            provenance=provenance,
            trust=trust,
            status=Status.ACTIVE,
            created_at_ms=created,
            updated_at_ms=updated,
            content_hash=content_hash(title, body),
        )
        committed = store.commit(WriteBatch("r", APPLICATION, (CreateOp(record),))).records[0]
        assert committed == record
        assert store.get(record.id) == record

    try:
        round_trip()
    finally:
        store.close()


@settings(max_examples=200)
@given(title=st.text(), body=st.text())
def test_content_hash_is_deterministic_and_matches_the_reference(title: str, body: str) -> None:
    assert content_hash(title, body) == content_hash(title, body) == _reference_hash(title, body)


@settings(max_examples=100)
@given(text=st.text(min_size=1, max_size=40))
def test_content_hash_depends_on_where_title_ends_and_body_begins(text: str) -> None:
    splits = {content_hash(text[:i], text[i:]) for i in range(len(text) + 1)}
    assert len(splits) == len(text) + 1
