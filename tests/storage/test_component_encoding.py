"""File-name encoding of realms and identities: a bijection between names and canonical spellings."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from meta_memory.storage.layout import StateLayout, decode_component, encode_component

SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


@given(st.text())
@example("_")
@example("")
def test_every_name_round_trips_through_its_file_name(name: str) -> None:
    encoded = encode_component(name)
    assert decode_component(encoded) == name
    assert set(encoded) <= SAFE | {"%"}


@given(st.text(), st.text())
@example("", "_")
def test_distinct_names_never_share_a_file_name(a: str, b: str) -> None:
    if a != b:
        assert encode_component(a) != encode_component(b)


@given(st.text(alphabet="%_-aZ09F5ef/", max_size=12))
def test_only_canonical_spellings_decode(spelling: str) -> None:
    decoded = decode_component(spelling)
    if decoded is not None:
        assert encode_component(decoded) == spelling


def test_the_empty_name_is_an_underscore_and_the_underscore_name_is_escaped() -> None:
    assert (encode_component(""), decode_component("_")) == ("_", "")
    assert (encode_component("_"), decode_component("%5F")) == ("%5F", "_")
    assert encode_component("lead_main") == "lead_main"


@pytest.mark.parametrize(
    ("name", "encoded"),
    [
        ("default", "default"),
        ("lead:main", "lead%3Amain"),
        ("a b/c", "a%20b%2Fc"),
        ("é", "%C3%A9"),
        (".", "%2E"),
    ],
)
def test_safe_bytes_stay_and_others_become_upper_hex_escapes(name: str, encoded: str) -> None:
    assert encode_component(name) == encoded


@pytest.mark.parametrize(
    "spelling",
    ["", "%41", "%5f", "%3a", "%", "%4", "%G1", "a b", "a/b", "é", "%FF", "%C3", "..", "%5F%5F"],
)
def test_non_canonical_or_broken_spellings_do_not_decode(spelling: str) -> None:
    assert decode_component(spelling) is None


def test_realm_database_names_decode_back_to_the_realm_and_ignore_other_files() -> None:
    layout = StateLayout.at("/srv/meta")
    for realm in ["default", "ops/east", "_", "été"]:
        path = layout.realm_db_path(realm, root=layout.agent_memory_canonical)
        assert path.parent == layout.agent_memory_canonical
        assert StateLayout.realm_from_db_name(path.name) == realm
    assert StateLayout.realm_from_db_name("default.sqlite3-wal") is None
    assert StateLayout.realm_from_db_name("%41.sqlite3") is None
