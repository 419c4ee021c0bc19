"""A ledger write that the file system refuses reaches the caller as -32012 naming the file
relative to the state dir: never the absolute path of the ledger or of its stage file, which go
to the server log."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from meta_memory.config import DEFAULT_CONFIG, load_config_dict
from meta_memory.gateway.dispatch import SDK, CallContext
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout

INDEX = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "meta/memory/index",
    "params": {"entity": "e", "topic": "t", "fact": "f"},
}


@pytest.mark.parametrize("blocked", ["stage", "ledger"])
def test_a_refused_ledger_write_names_the_file_relative_to_the_state_dir(
    tmp_path: Path, blocked: str, caplog: pytest.LogCaptureFixture
) -> None:
    state = tmp_path / "state"
    with MetaRuntime.open(state, load_config_dict(dict(DEFAULT_CONFIG))) as runtime:
        layout = StateLayout.at(state)
        # A directory where a file must go: unlike a read-only chmod, this stops root too.
        (layout.ledger_stage_path if blocked == "stage" else layout.ledger_path).mkdir()
        with caplog.at_level(logging.WARNING, logger="meta_memory.ledger"):
            reply = build_dispatcher(runtime).handle_payload(INDEX, CallContext(SDK))

    assert reply is not None
    error = reply["error"]
    assert error["code"] == -32012
    assert str(tmp_path) not in error["message"]
    assert layout.ledger_stage_path.name in error["message"] or layout.ledger_path.name in error["message"]
    assert "Is a directory" in error["message"]
    assert any(str(state) in r.getMessage() for r in caplog.records)  # the operator still sees where
