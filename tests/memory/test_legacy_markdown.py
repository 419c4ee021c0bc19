from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meta_memory.errors import StoreCorrupt
from meta_memory.memory.legacy_markdown import (
    MAX_LEGACY_FILE_BYTES,
    RECORD_END,
    LegacyRecord,
    Malformed,
    ParseResult,
    parse_legacy_markdown,
    read_legacy_markdown,
    render_legacy_markdown,
)

META = '<!-- mobkit-agent-memory {"memory_id":"%s","tags":["a"],"created_at_ms":1,"updated_at_ms":2} -->'
# The well-formed record most tests place after the case under test, parsed as ``record()``.
CALENDAR = f"## Calendar\n{META % 'mem-1'}\nPrefer mornings.\n{RECORD_END}\n"


def record(memory_id: str = "mem-1", title: str = "Calendar", body: str = "Prefer mornings.") -> LegacyRecord:
    return LegacyRecord(memory_id, title, body, ("a",), 1, 2)


def test_render_writes_the_mobkit_layout_byte_for_byte() -> None:
    text = render_legacy_markdown([record(), LegacyRecord("mem-2", "Ünïcode", "line 1\nline 2", (), 5, 6)])
    assert text == (
        "# MobKit Agent Memory\n\n"
        "## Calendar\n"
        '<!-- mobkit-agent-memory {"memory_id":"mem-1","tags":["a"],"created_at_ms":1,"updated_at_ms":2} '
        "-->\n"
        "Prefer mornings.\n"
        "<!-- /mobkit-agent-memory -->\n\n"
        "## Ünïcode\n"
        '<!-- mobkit-agent-memory {"memory_id":"mem-2","tags":[],"created_at_ms":5,"updated_at_ms":6} -->\n'
        "line 1\nline 2\n"
        "<!-- /mobkit-agent-memory -->\n\n"
    )


def test_parse_reads_back_a_rendered_file() -> None:
    records = [record(), record("mem-2", "Second", "## not a title\nmore")]
    assert parse_legacy_markdown(render_legacy_markdown(records)) == ParseResult(records, [])


def test_parse_accepts_crlf_line_endings_and_a_missing_final_newline() -> None:
    text = f"# MobKit Agent Memory\r\n\r\n## Calendar\r\n{META % 'mem-1'}\r\nPrefer mornings.\r\n{RECORD_END}"
    assert parse_legacy_markdown(text).records == [record()]


def test_parse_trims_the_title_and_the_body() -> None:
    text = f"##   Calendar  \n{META % 'mem-1'}\n\n  Prefer mornings. \n\n{RECORD_END}\n"
    assert parse_legacy_markdown(text).records == [record()]


def test_body_lines_that_look_structural_are_escaped_and_restored() -> None:
    body = (
        f"before\n{RECORD_END}\n  {RECORD_END}  \n"
        '<!-- mobkit-agent-memory {"memory_id":"forged"} -->\n'
        f"\\{RECORD_END}\n\\\\{RECORD_END}\n\\ plain backslash line\nafter"
    )
    text = render_legacy_markdown([record(body=body)])
    assert text.count(f"\n{RECORD_END}\n") == 1
    assert f"\n\\{RECORD_END}\n\\  {RECORD_END}  \n\\<!-- mobkit-agent-memory " in text
    assert f"\n\\\\{RECORD_END}\n\\\\\\{RECORD_END}\n\\ plain backslash line\n" in text
    assert parse_legacy_markdown(text).records == [record(body=body)]


def test_a_mobkit_escaped_end_marker_is_unescaped() -> None:
    text = f"## Calendar\n{META % 'mem-1'}\nfirst\n\\{RECORD_END}\nlast\n{RECORD_END}\n"
    assert parse_legacy_markdown(text).records == [record(body=f"first\n{RECORD_END}\nlast")]


def test_a_record_without_metadata_is_reported_not_raised() -> None:
    text = f"# MobKit Agent Memory\n\n## Orphan\nno metadata here\n{RECORD_END}\n\n{CALENDAR}"
    result = parse_legacy_markdown(text)
    assert result.records == [record()]
    assert result.malformed == [Malformed("missing metadata comment", 3, None)]


def test_a_title_followed_by_another_title_is_reported_as_missing_metadata() -> None:
    text = f"## First\n{CALENDAR}"
    result = parse_legacy_markdown(text)
    assert result.records == [record()]
    assert result.malformed == [Malformed("missing metadata comment", 1, None)]


@pytest.mark.parametrize(
    ("meta", "reason", "memory_id"),
    [
        ("<!-- mobkit-agent-memory {not json} -->", "metadata is not valid JSON", None),
        ("<!-- mobkit-agent-memory [1, 2] -->", "metadata JSON is not an object", None),
        ('<!-- mobkit-agent-memory {"memory_id":"m"}', "metadata comment is not closed", None),
        (
            '<!-- mobkit-agent-memory {"tags":[],"created_at_ms":1,"updated_at_ms":2} -->',
            "metadata field 'memory_id' is missing",
            None,
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":7,"created_at_ms":1,"updated_at_ms":2} -->',
            "metadata field 'memory_id' is missing or not a string",
            None,
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":"m","tags":"a","created_at_ms":1,"updated_at_ms":2} -->',
            "metadata field 'tags' is not a list of strings",
            "m",
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":"m","tags":[1],"created_at_ms":1,"updated_at_ms":2} -->',
            "metadata field 'tags' is not a list of strings",
            "m",
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":"m","updated_at_ms":2} -->',
            "metadata field 'created_at_ms' is missing",
            "m",
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":"m","created_at_ms":-1,"updated_at_ms":2} -->',
            "metadata field 'created_at_ms' is missing or not a non-negative integer",
            "m",
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":"m","created_at_ms":1.5,"updated_at_ms":2} -->',
            "metadata field 'created_at_ms'",
            "m",
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":"m","created_at_ms":true,"updated_at_ms":2} -->',
            "metadata field 'created_at_ms'",
            "m",
        ),
        (
            '<!-- mobkit-agent-memory {"memory_id":"m","created_at_ms":1,"updated_at_ms":"2"} -->',
            "metadata field 'updated_at_ms'",
            "m",
        ),
    ],
)
def test_bad_metadata_is_reported_with_its_reason(meta: str, reason: str, memory_id: str | None) -> None:
    text = f"## Broken\n{meta}\nbody\n{RECORD_END}\n{CALENDAR}"
    result = parse_legacy_markdown(text)
    assert result.records == [record()]
    [malformed] = result.malformed
    assert malformed.reason.startswith(reason)
    assert (malformed.line_no, malformed.memory_id) == (1, memory_id)


def test_deeply_nested_metadata_json_is_reported_not_raised() -> None:
    meta = "<!-- mobkit-agent-memory " + "[" * 100_000 + " -->"
    result = parse_legacy_markdown(f"## Deep\n{meta}\nbody\n{RECORD_END}\n")
    assert result == ParseResult([], [Malformed("metadata JSON is nested too deeply", 1, None)])


def test_metadata_tolerates_absent_tags_and_unknown_fields() -> None:
    meta = '<!-- mobkit-agent-memory {"memory_id":"m","created_at_ms":1,"updated_at_ms":2,"extra":null} -->'
    result = parse_legacy_markdown(f"## T\n{meta}\nbody\n{RECORD_END}\n")
    assert result.records == [LegacyRecord("m", "T", "body", (), 1, 2)]


def test_a_valid_metadata_line_after_a_bad_one_still_counts() -> None:
    bad = "<!-- mobkit-agent-memory {oops} -->"
    text = f"## Calendar\n{bad}\n{META % 'mem-1'}\nPrefer mornings.\n{RECORD_END}\n"
    [parsed] = parse_legacy_markdown(text).records
    assert parsed.memory_id == "mem-1"
    assert parsed.body == "<!-- mobkit-agent-memory {oops} -->\nPrefer mornings."  # MobKit kept it as body


def test_an_empty_body_is_reported_with_the_record_id() -> None:
    empty = f"## Empty\n{META % 'mem-empty'}\n  \n\n{RECORD_END}\n"
    text = f"{empty}## Calendar\n{META % 'mem-1'}\nPrefer mornings.\n"
    result = parse_legacy_markdown(text)
    assert result.records == [record()]  # the last record needs no end marker
    assert result.malformed == [Malformed("empty body", 1, "mem-empty")]


def test_a_stray_title_line_after_metadata_stays_in_the_body() -> None:
    text = f"## Calendar\n{META % 'mem-1'}\nPrefer mornings.\n## Not a new record\nstill body\n{RECORD_END}\n"
    result = parse_legacy_markdown(text)
    assert result.records == [record(body="Prefer mornings.\n## Not a new record\nstill body")]
    assert result.malformed == []


def test_a_missing_end_marker_swallows_the_next_record_into_the_body() -> None:
    text = f"## Calendar\n{META % 'mem-1'}\nPrefer mornings.\n\n## Next\n{META % 'mem-2'}\nbody 2\n"
    text += f"{RECORD_END}\n"
    [only] = parse_legacy_markdown(text).records
    assert only.memory_id == "mem-1"
    assert only.body == f"Prefer mornings.\n\n## Next\n{META % 'mem-2'}\nbody 2"


def test_text_outside_records_is_ignored() -> None:
    text = f"preamble\n# MobKit Agent Memory\n\n{CALENDAR}junk\n"
    assert parse_legacy_markdown(text) == ParseResult([record()], [])
    assert parse_legacy_markdown("") == ParseResult([], [])


def test_parsing_text_over_8_mib_fails_with_a_clear_error() -> None:
    with pytest.raises(StoreCorrupt, match="over the 8388608-byte"):
        parse_legacy_markdown("x" * (MAX_LEGACY_FILE_BYTES + 1))
    parse_legacy_markdown("x" * MAX_LEGACY_FILE_BYTES)


def test_reading_a_file_over_8_mib_fails_before_reading_it(tmp_path: Path) -> None:
    path = tmp_path / "lead%3Amain.md"
    with path.open("wb") as handle:
        handle.truncate(MAX_LEGACY_FILE_BYTES + 1)
    message = r"'lead%3Amain\.md' is 8388609 bytes, over the .* \(8 MiB\) import cap"
    with pytest.raises(StoreCorrupt, match=message):
        read_legacy_markdown(path)


def test_read_legacy_markdown_parses_a_file_and_refuses_invalid_utf8(tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_text(render_legacy_markdown([record()]), encoding="utf-8")
    assert read_legacy_markdown(good) == ParseResult([record()], [])
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"## T\n\xff\xfe\n")
    with pytest.raises(StoreCorrupt, match="not valid UTF-8"):
        read_legacy_markdown(bad)


_FRAGMENTS = st.sampled_from(
    [
        RECORD_END,
        "<!-- mobkit-agent-memory ",
        " -->",
        '{"memory_id":"x","created_at_ms":1,"updated_at_ms":1}',
        "\\",
        "\\\\",
        "## ",
        "# ",
        "\n",
        "\n\n",
        " ",
        "\t",
        "body",
        "é€😀",
    ]
)
_NO_CR = st.text(alphabet=st.characters(exclude_characters="\r"), max_size=12)
_BODY = (
    st.lists(st.one_of(_FRAGMENTS, _NO_CR), max_size=25)
    .map(lambda parts: "".join(parts).strip())
    .filter(bool)
)
_TITLE = st.text(alphabet=st.characters(exclude_characters="\r\n"), max_size=40).map(str.strip)
_RECORD = st.builds(
    LegacyRecord,
    memory_id=st.text(max_size=30),
    title=_TITLE,
    body=_BODY,
    tags=st.lists(st.text(max_size=10), max_size=4).map(tuple),
    created_at_ms=st.integers(min_value=0, max_value=2**64 - 1),
    updated_at_ms=st.integers(min_value=0, max_value=2**64 - 1),
)


@given(st.lists(_RECORD, max_size=6))
def test_render_then_parse_round_trips_any_records(records: list[LegacyRecord]) -> None:
    assert parse_legacy_markdown(render_legacy_markdown(records)) == ParseResult(records, [])
