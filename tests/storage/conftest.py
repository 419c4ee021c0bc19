"""The storage tests' gateway: ``meta_gateway serve`` on a state dir of its own, hybrid recall on
(its indexing process fills the recall-index and vector files), stopped when the test ends."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..conftest import free_port, gateway_command, wait_until_listening

CONFIG = '[memory]\nkind = "local_json"\n\n[agent_memory]\nrecall = "{recall}"\n'


@pytest.fixture
def gateway_process(tmp_path: Path) -> Iterator[tuple[Path, str, subprocess.Popen[bytes]]]:
    state = tmp_path / "state"
    config = tmp_path / "meta.toml"
    config.write_text(CONFIG.format(recall="hybrid"))
    port = free_port()
    log = (tmp_path / "gateway.log").open("wb")
    proc = subprocess.Popen(
        [gateway_command(), "serve", "--state-dir", str(state), "--config", str(config), "--port", str(port)],
        stdout=log,
        stderr=log,
    )
    try:
        wait_until_listening(proc, port)
        yield state, f"http://127.0.0.1:{port}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=60)
        log.close()


@pytest.fixture
def served(gateway_process: tuple[Path, str, subprocess.Popen[bytes]]) -> tuple[Path, str]:
    """(the state dir, the gateway's base URL)."""
    return gateway_process[0], gateway_process[1]


@pytest.fixture
def stop_served(gateway_process: tuple[Path, str, subprocess.Popen[bytes]]) -> Callable[[], None]:
    """Stop the served gateway now (a test that reads its files once it has stopped)."""

    def stop() -> None:
        gateway_process[2].terminate()
        gateway_process[2].wait(timeout=60)

    return stop
