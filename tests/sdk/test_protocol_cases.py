"""The shared protocol cases (``tests/protocol/cases.json``) on Python's two handles: the in-process
one (``Meta.builder()...build()``) and the one over a spawned gateway (``...gateway(bin).build()``).
The TypeScript client runs the same file on its handle (``clients/typescript/test/protocol.test.ts``);
the expected values are the file's, so the three handles answer alike or a suite fails."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

import meta_memory
from meta_memory import Meta, MetaBuilder, MetaHandle
from meta_memory.api import MetaApi
from meta_memory.errors import MetaError

from ..conftest import gateway_command

CASES = json.loads((Path(__file__).resolve().parents[1] / "protocol" / "cases.json").read_text("utf-8"))[
    "cases"
]
HANDLES = ["in_process", "gateway"]


def _plain(value: Any) -> Any:
    """A result as JSON values: a dataclass as its fields, a tuple as a list."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _filled(value: Any, saved: dict[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        return saved[value[1:]]
    if isinstance(value, list):
        return [_filled(v, saved) for v in value]
    if isinstance(value, dict):
        return {k: _filled(v, saved) for k, v in value.items()}
    return value


def _mismatch(expected: Any, actual: Any, saved: dict[str, Any], at: str = "result") -> str | None:
    """Where ``actual`` departs from ``expected`` (the file's matching rules), or ``None``."""
    if isinstance(expected, str) and expected.startswith("$"):
        expected = saved[expected[1:]]
    if isinstance(expected, dict) and set(expected) == {"$match"}:
        ok = isinstance(actual, str) and re.search(expected["$match"], actual) is not None
        return None if ok else f"{at}: {actual!r} does not match /{expected['$match']}/"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{at}: expected an object, got {actual!r}"
        for key, want in expected.items():
            if key not in actual:
                return f"{at}: no field {key!r} in {actual!r}"
            problem = _mismatch(want, actual[key], saved, f"{at}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return f"{at}: expected {len(expected)} items, got {actual!r}"
        for n, (want, got) in enumerate(zip(expected, actual, strict=True)):
            problem = _mismatch(want, got, saved, f"{at}[{n}]")
            if problem:
                return problem
        return None
    if type(expected) is not type(actual) or expected != actual:
        return f"{at}: expected {expected!r}, got {actual!r}"
    return None


def _check_error(error: BaseException, expected: dict[str, Any]) -> None:
    cls = getattr(meta_memory, expected["class"])
    assert isinstance(error, cls), f"{type(error).__name__}: {error} (expected {expected['class']})"
    assert isinstance(error, MetaError) and error.code == expected["code"], error
    assert expected["message"] in error.message, error.message
    if "data" in expected:
        problem = _mismatch(expected["data"], error.data, {}, "data")
        assert problem is None, problem


def _builder(case: dict[str, Any], handle: str, state: Path) -> MetaBuilder[Any]:
    builder: MetaBuilder[Any] = Meta.builder().persistent_state(state)
    for step in case["builder"]:
        builder = getattr(builder, step["call"][0])(*step["args"])
    return builder.gateway(gateway_command()) if handle == "gateway" else builder


@pytest.mark.parametrize("handle", HANDLES)
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_shared_protocol_case_holds_on_the_python_handle(
    case: dict[str, Any], handle: str, tmp_path: Path
) -> None:
    if "refused" in case:
        with pytest.raises(MetaError) as refused:
            _builder(case, handle, tmp_path / "state").build().close()
        _check_error(refused.value, case["refused"])
        return
    saved: dict[str, Any] = {}
    with _builder(case, handle, tmp_path / "state").build() as meta:
        assert isinstance(meta, MetaHandle if handle == "in_process" else MetaApi)
        for n, step in enumerate(case["steps"]):
            method = getattr(meta, step["call"][0])
            args = _filled(step["args"], saved)
            options = _filled(step.get("options", {}), saved)
            try:
                result = _plain(method(*args, **options))
            except MetaError as exc:
                assert "error" in step, f"step {n} ({step['call'][0]}) raised {exc!r}"
                _check_error(exc, step["error"])
                continue
            assert "error" not in step, f"step {n} ({step['call'][0]}) returned {result!r}"
            problem = _mismatch(step["result"], result, saved)
            assert problem is None, f"step {n} ({step['call'][0]}): {problem}"
            for name, field in step.get("save", {}).items():
                saved[name] = result[field]


def test_the_cases_cover_the_handles_methods_and_refusals() -> None:
    called = {step["call"][0] for case in CASES for step in case.get("steps", [])}
    assert {
        "memory_index",
        "memory_query",
        "memory_stores",
        "remember_agent_memory",
        "recall_agent_memory",
        "update_agent_memory",
        "forget_agent_memory",
    } <= called
    assert sum("refused" in case for case in CASES) >= 3
