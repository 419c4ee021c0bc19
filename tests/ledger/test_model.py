from __future__ import annotations

import json
from typing import Any

import pytest

from meta_memory.errors import InvalidParams
from meta_memory.ledger import (
    DEFAULT_STORE,
    STORES,
    Assertion,
    ConflictSignal,
    IndexRequest,
    IndexResult,
    QueryRequest,
    QueryResult,
    StoreInfo,
    StoresResult,
    canonical_store,
    canonical_token,
    parse_index_params,
    parse_query_params,
    parse_stores_params,
)
from meta_memory.ledger.model import parse_assertion_sequence, trim

UNSUPPORTED = "(allowed: knowledge_graph, vector, timeline, todo, top_of_mind)"
BASE = {"entity": "e", "topic": "t"}


def test_canonical_token_trims_then_lowercases_ascii_letters_only() -> None:
    assert canonical_token("  Identity:OPS \n") == "identity:ops"
    assert canonical_token("İSTANBUL") == "İstanbul"
    assert canonical_token("ΣΑΣ") == "ΣΑΣ"
    assert canonical_token("ÄB") == "Äb"


def test_canonical_token_of_blank_input_is_none() -> None:
    assert canonical_token("") is None
    assert canonical_token(" \t\u3000\n") is None


def test_trim_strips_unicode_white_space_but_not_python_only_separators() -> None:
    assert trim("\u3000\u00a0x\u2028\u0085") == "x"
    # str.strip() would also remove U+001C..U+001F; Rust's trim (upstream) keeps them.
    assert trim("\x1cx\x1f") == "\x1cx\x1f"


def test_stores_are_the_five_in_fixed_order_with_knowledge_graph_as_default() -> None:
    assert STORES == ("knowledge_graph", "vector", "timeline", "todo", "top_of_mind")
    assert DEFAULT_STORE == "knowledge_graph"
    assert canonical_store(" TOP_OF_MIND ") == "top_of_mind"
    assert canonical_store("graph") is None


@pytest.mark.parametrize(
    ("params", "message"),
    [
        (None, "params must be a JSON object"),
        ([], "params must be a JSON object"),
        ("entity", "params must be a JSON object"),
        ({}, "entity must be a non-empty string"),
        ({"entity": "  ", "topic": "t", "fact": "f"}, "entity must be a non-empty string"),
        ({"entity": 5, "topic": "t", "fact": "f"}, "entity must be a non-empty string"),
        ({"entity": None, "topic": "t", "fact": "f"}, "entity must be a non-empty string"),
        ({"entity": "e", "fact": "f"}, "topic must be a non-empty string"),
        ({"entity": "e", "topic": "\u3000", "fact": "f"}, "topic must be a non-empty string"),
        ({**BASE, "store": "", "fact": "f"}, "store must be a non-empty string when provided"),
        ({**BASE, "store": "  ", "fact": "f"}, "store must be a non-empty string when provided"),
        ({**BASE, "store": 3, "fact": "f"}, "store must be a non-empty string when provided"),
        ({**BASE, "store": None, "fact": "f"}, "store must be a non-empty string when provided"),
        ({**BASE, "store": " Graph ", "fact": "f"}, f"store 'graph' is unsupported {UNSUPPORTED}"),
        ({**BASE, "fact": ""}, "fact must be a non-empty string when provided"),
        ({**BASE, "fact": " \n "}, "fact must be a non-empty string when provided"),
        ({**BASE, "fact": 7}, "fact must be a non-empty string when provided"),
        ({**BASE, "fact": None}, "fact must be a non-empty string when provided"),
        ({**BASE, "fact": "", "conflict": True}, "fact must be a non-empty string when provided"),
        ({**BASE, "fact": "f", "metadata": []}, "metadata must be a JSON object when provided"),
        ({**BASE, "fact": "f", "metadata": "x"}, "metadata must be a JSON object when provided"),
        ({**BASE, "fact": "f", "metadata": None}, "metadata must be a JSON object when provided"),
        (
            {**BASE, "fact": "f", "metadata": {"x": float("nan")}},
            "metadata must be a JSON object when provided",
        ),
        ({**BASE, "fact": "f", "metadata": {"x": {1, 2}}}, "metadata must be a JSON object when provided"),
        ({**BASE, "fact": "f", "conflict": 1}, "conflict must be a boolean when provided"),
        ({**BASE, "fact": "f", "conflict": 0}, "conflict must be a boolean when provided"),
        ({**BASE, "fact": "f", "conflict": "true"}, "conflict must be a boolean when provided"),
        ({**BASE, "fact": "f", "conflict": None}, "conflict must be a boolean when provided"),
        ({**BASE, "fact": "f", "conflict_reason": 5}, "conflict_reason must be a string when provided"),
        ({**BASE, "fact": "f", "conflict_reason": None}, "conflict_reason must be a string when provided"),
        (BASE, "fact is required unless conflict=true"),
        ({**BASE, "conflict": False}, "fact is required unless conflict=true"),
        ({**BASE, "conflict_reason": "why"}, "fact is required unless conflict=true"),
    ],
)
def test_index_params_are_refused_with_the_reference_message(params: Any, message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        parse_index_params(params)
    assert caught.value.message == message
    assert caught.value.code == -32602


def test_index_params_are_checked_in_upstream_order() -> None:
    with pytest.raises(InvalidParams, match=r"^entity must"):
        parse_index_params({"entity": "", "topic": ""})
    with pytest.raises(InvalidParams, match=r"^store 'nope'"):
        parse_index_params({**BASE, "store": "nope", "fact": "", "conflict": 1})
    with pytest.raises(InvalidParams, match=r"^fact must"):
        parse_index_params({**BASE, "fact": "", "metadata": 1})


def test_index_params_become_a_canonical_request() -> None:
    request = parse_index_params(
        {
            "entity": " Identity:OPS ",
            "topic": "Deployment",
            "store": " TODO ",
            "fact": "  Production deploys require approval.  ",
            "metadata": {"source": "runbook"},
            "conflict": True,
            "conflict_reason": "  two runbooks disagree ",
            "unknown": "ignored",
        }
    )
    assert request == IndexRequest(
        entity="identity:ops",
        topic="deployment",
        store="todo",
        fact="Production deploys require approval.",
        metadata_json='{"source":"runbook"}',
        conflict=True,
        conflict_reason="two runbooks disagree",
    )


def test_omitted_store_defaults_to_knowledge_graph_and_blank_reason_becomes_null() -> None:
    request = parse_index_params({**BASE, "conflict": True, "conflict_reason": "   "})
    assert request == IndexRequest(entity="e", topic="t", store="knowledge_graph", conflict=True)


def test_fact_keeps_its_case_and_inner_whitespace() -> None:
    assert parse_index_params({**BASE, "fact": " Keep  THIS\ncase "}).fact == "Keep  THIS\ncase"


def test_metadata_is_captured_so_later_mutation_of_the_caller_dict_changes_nothing() -> None:
    metadata: dict[str, Any] = {"tags": ["a"]}
    request = parse_index_params({**BASE, "fact": "f", "metadata": metadata})
    metadata["tags"].append("b")
    assert request.metadata_json is not None
    assert json.loads(request.metadata_json) == {"tags": ["a"]}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([], "params must be a JSON object"),
        (3, "params must be a JSON object"),
        ({"entity": 1}, "entity filter must be a string"),
        ({"entity": None}, "entity filter must be a string"),
        ({"topic": ["t"]}, "topic filter must be a string"),
        ({"store": 1}, "store must be a non-empty string when provided"),
        ({"query": {"q": 1}}, "query filter must be a string"),
    ],
)
def test_query_params_are_refused_with_the_reference_message(params: Any, message: str) -> None:
    with pytest.raises(InvalidParams) as caught:
        parse_query_params(params)
    assert caught.value.message == message


def test_null_query_params_mean_no_filters() -> None:
    assert parse_query_params(None) == QueryRequest()
    assert parse_query_params({}) == QueryRequest()


def test_query_filters_are_canonical_and_blank_or_unsupported_ones_are_absent() -> None:
    assert parse_query_params(
        {"entity": " E ", "topic": "T", "store": " Vector ", "query": " Needle "}
    ) == QueryRequest(entity="e", topic="t", store="vector", query="needle")
    assert parse_query_params({"entity": "  ", "topic": "", "store": "graph", "query": " "}) == QueryRequest()
    assert parse_query_params({"store": ""}) == QueryRequest()


@pytest.mark.parametrize("params", [None, {}, {"anything": 1}])
def test_stores_params_accept_null_or_any_object(params: Any) -> None:
    parse_stores_params(params)


@pytest.mark.parametrize("params", [[], "x", 0, True])
def test_stores_params_refuse_anything_else(params: Any) -> None:
    with pytest.raises(InvalidParams, match=r"^params must be a JSON object$"):
        parse_stores_params(params)


def test_results_have_the_exact_wire_shapes() -> None:
    assertion = Assertion("memory-assert-000000", "e", "t", "todo", "f", '{"k":[1]}', 5)
    signal = ConflictSignal("e", "t", "todo", None, 6)
    assert IndexResult("e", "t", "todo", None, True).to_wire() == {
        "entity": "e",
        "topic": "t",
        "store": "todo",
        "assertion_id": None,
        "conflict_active": True,
    }
    assert QueryResult((assertion,), (signal,)).to_wire() == {
        "assertions": [
            {
                "assertion_id": "memory-assert-000000",
                "entity": "e",
                "topic": "t",
                "store": "todo",
                "fact": "f",
                "metadata": {"k": [1]},
                "indexed_at_ms": 5,
            }
        ],
        "conflicts": [{"entity": "e", "topic": "t", "store": "todo", "reason": None, "updated_at_ms": 6}],
    }
    assert StoresResult((StoreInfo("vector", 2),)).to_wire() == {
        "stores": [{"store": "vector", "record_count": 2}]
    }


def test_assertion_metadata_is_decoded_afresh_so_callers_cannot_mutate_it() -> None:
    assertion = Assertion("a", "e", "t", "todo", "f", '{"k":[1]}', 5)
    assertion.to_wire()["metadata"]["k"].append(2)
    assert assertion.metadata == {"k": [1]}


@pytest.mark.parametrize(
    ("assertion_id", "sequence"),
    [
        ("memory-assert-000041", 41),
        ("memory-assert-1234567", 1234567),
        ("memory-assert-+7", 7),
        ("memory-assert-18446744073709551615", 2**64 - 1),
        ("memory-assert-18446744073709551616", None),
        ("memory-assert-", None),
        ("memory-assert--1", None),
        ("memory-assert-1_000", None),
        ("memory-assert-٣", None),
        ("memory-assert- 1", None),
        ("assert-000001", None),
    ],
)
def test_assertion_sequence_parses_like_a_rust_u64(assertion_id: str, sequence: int | None) -> None:
    assert parse_assertion_sequence(assertion_id) == sequence
