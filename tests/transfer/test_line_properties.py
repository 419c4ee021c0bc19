"""The line format round-trips every record it can hold: reading a written line gives the record back
(without its usage counters), and writing that again gives the same bytes."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from meta_memory.memory.records import (
    Author,
    Evidence,
    Provenance,
    Record,
    RecordKind,
    Scope,
    ScopeKind,
    Status,
    Trust,
    Usage,
    VerificationClaim,
    content_hash,
)
from meta_memory.memory.transfer import record_from_line, record_line

# Any text but NUL and lone surrogates (no store holds them; the reader refuses both).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40)
NAME = st.text(
    st.characters(
        min_codepoint=0x21, max_codepoint=0x2FFF, blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")
    ),
    min_size=1,
    max_size=20,
)
MS = st.integers(min_value=0, max_value=2**63 - 1)


@st.composite
def records(draw: st.DrawFn) -> Record:
    realm = draw(NAME)
    kind = draw(st.sampled_from(list(ScopeKind)))
    scope = Scope(kind, realm) if kind is ScopeKind.REALM else Scope(kind, realm, draw(NAME))
    title, body = draw(TEXT), draw(TEXT)
    author = draw(
        st.sampled_from(
            [
                Author("operator"),
                Author("application"),
                Author("agent", identity="alice"),
                Author("steward", run_id="run-1"),
            ]
        )
    )
    evidence = tuple(
        Evidence(
            draw(NAME), draw(st.integers(0, 9)), draw(st.none() | st.integers(0, 9)), draw(st.none() | NAME)
        )
        for _ in range(draw(st.integers(0, 2)))
    )
    verification = draw(st.none() | st.builds(VerificationClaim, NAME, st.tuples(NAME)))
    return Record(
        id=draw(NAME),
        scope=scope,
        kind=draw(st.sampled_from(list(RecordKind))),
        title=title,
        description=draw(TEXT),
        body=body,
        tags=tuple(draw(st.lists(TEXT, max_size=3))),
        provenance=Provenance(author, evidence, draw(st.none() | NAME), verification),
        trust=draw(st.sampled_from(list(Trust))),
        status=draw(st.sampled_from(list(Status))),
        created_at_ms=draw(MS),
        updated_at_ms=draw(MS),
        content_hash=content_hash(title, body),
        supersedes=draw(st.none() | NAME),
        derived_from=tuple(draw(st.lists(NAME, max_size=2))),
        ever_quarantined=draw(st.booleans()),
        superseded_by=draw(st.none() | NAME),
        quarantine_reason=draw(st.none() | TEXT),
        working_set_rank=draw(st.none() | st.integers(-(2**31), 2**31 - 1)),
        usage=Usage(injected_count=draw(st.integers(0, 5))),
    )


@given(records())
def test_a_written_line_reads_back_as_its_record_and_writes_the_same_bytes(record: Record) -> None:
    line = record_line(record)

    read = record_from_line(json.loads(line))

    assert read == Record(**{**record.__dict__, "usage": Usage()})
    assert record_line(read) == line
    assert line.endswith(b"\n") and line.count(b"\n") == 1
