"""What only a client has: connection errors, timeouts, the retry of idempotent reads (never of
writes), refused credentials, a child that cannot start, and errors rebuilt from the wire."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory.client import (
    AsyncMetaClient,
    MetaAuthenticationError,
    MetaClient,
    MetaConnectionError,
    MetaTimeoutError,
)
from meta_memory.client.transport import toml_text
from meta_memory.config import load_config_dict
from meta_memory.errors import (
    AccessDenied,
    CapabilityUnavailable,
    InvalidParams,
    MemoryBackendUnavailable,
    MetaError,
    QuarantineReviewRefused,
    ReadOnly,
    StorageRefused,
    StoreUnavailable,
    UnknownRecord,
    WriteRefused,
    error_from_wire,
)
from meta_memory.gateway.dispatch import to_wire_error

from ..conftest import free_port
from .conftest import APP_TOKEN, CONSOLE_TOKEN, Served


class Silent:
    """A TCP server that accepts connections, reads, and never answers; it counts connections."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self._held.append(conn)

    def close(self) -> None:
        self.sock.close()
        for conn in self._held:
            conn.close()


@pytest.fixture
def silent() -> Iterator[Silent]:
    server = Silent()
    yield server
    server.close()


def test_a_closed_port_is_a_connection_error() -> None:
    with (
        MetaClient.connect(f"http://127.0.0.1:{free_port()}", timeout=5) as client,
        pytest.raises(MetaConnectionError) as failed,
    ):
        client.status()
    assert not isinstance(failed.value, MetaTimeoutError)
    assert "cannot reach the gateway" in failed.value.message


def test_a_silent_server_times_out_and_a_read_is_retried_once(silent: Silent) -> None:
    with MetaClient.connect(f"http://127.0.0.1:{silent.port}", timeout=0.3) as client:
        with pytest.raises(MetaTimeoutError):
            client.recall_agent_memory("lead", query_text="anything")
        assert silent.accepted == 2


def test_a_write_is_never_retried(silent: Silent) -> None:
    with MetaClient.connect(f"http://127.0.0.1:{silent.port}", timeout=0.3) as client:
        with pytest.raises(MetaTimeoutError):
            client.remember_agent_memory("lead", title="T", body="B")
        assert silent.accepted == 1


def test_retries_can_be_turned_off(silent: Silent) -> None:
    with MetaClient.connect(f"http://127.0.0.1:{silent.port}", timeout=0.3, max_retries=0) as client:
        with pytest.raises(MetaTimeoutError):
            client.status()
        assert silent.accepted == 1


def test_the_async_client_times_out_and_retries_reads_the_same_way(silent: Silent) -> None:
    async def scenario() -> None:
        client = await AsyncMetaClient.connect(f"http://127.0.0.1:{silent.port}", timeout=0.3)
        try:
            with pytest.raises(MetaTimeoutError):
                await client.capabilities()
            assert silent.accepted == 2
            with pytest.raises(MetaTimeoutError):
                await client.forget_agent_memory("lead", "mem-1")
            assert silent.accepted == 3
        finally:
            await client.close()

    asyncio.run(scenario())


@pytest.mark.parametrize("token", [None, "not-the-token"])
def test_a_refused_credential_is_an_authentication_error(served: Served, token: str | None) -> None:
    with (
        MetaClient.connect(served.url, token=token) as client,
        pytest.raises(MetaAuthenticationError) as refused,
    ):
        client.status()
    assert refused.value.code == -32030
    assert refused.value.data is not None
    assert refused.value.data["reason"] == ("missing_token" if token is None else "invalid_token")


def test_the_application_token_does_not_open_the_console(served: Served) -> None:
    with MetaClient.connect(served.url, token=APP_TOKEN, console_token=APP_TOKEN) as client:
        assert client.status()["contract_version"]
        with pytest.raises(MetaAuthenticationError):
            client.console.quarantine()
    with MetaClient.connect(served.url, token=APP_TOKEN, console_token=CONSOLE_TOKEN) as client:
        assert "records" in client.console.quarantine()


def test_spawn_passes_a_config_mapping_and_releases_the_state_dir_on_close(tmp_path: Path) -> None:
    state = tmp_path / "state"
    config = {"memory": {"kind": "local_json"}, "agent_memory": {"realm": "crew", "max_entries": 3}}
    with MetaClient.spawn(state_dir=state, config=config) as client:
        client.remember_agent_memory("lead", title="Deploys", body="Deploys need approval.")
        assert client.status()["features"]["agent_memory"]["realm"] == "crew"
    with MetaClient.spawn(state_dir=state, config=config) as again:  # the first child let go of it
        assert [r.title for r in again.recall_agent_memory("lead", selection="always")] == ["Deploys"]


def test_a_child_refused_at_boot_raises_the_refusal_typed(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with MetaClient.spawn(state_dir=state) as holder:
        assert holder.status()
        with pytest.raises(StorageRefused) as refused:
            MetaClient.spawn(state_dir=state)
    assert refused.value.code == -32014
    assert "already serves state dir" in refused.value.message


def test_a_bad_config_mapping_is_refused_by_the_child_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(MetaError) as refused:
        MetaClient.spawn(state_dir=tmp_path / "state", config={"agent_memory": {"max_entries": "many"}})
    assert "agent_memory.max_entries" in refused.value.message


def test_the_async_child_refused_at_boot_raises_the_refusal_typed(tmp_path: Path) -> None:
    async def scenario() -> None:
        holder = await AsyncMetaClient.spawn(state_dir=tmp_path / "state")
        try:
            with pytest.raises(StorageRefused):
                await AsyncMetaClient.spawn(state_dir=tmp_path / "state")
        finally:
            await holder.close()

    asyncio.run(scenario())


def test_a_missing_executable_is_a_connection_error(tmp_path: Path) -> None:
    with pytest.raises(MetaConnectionError) as missing:
        MetaClient.spawn(state_dir=tmp_path / "state", command=str(tmp_path / "no-such-gateway"))
    assert "cannot start the gateway" in missing.value.message


def test_a_config_mapping_leaves_no_temporary_file_when_the_gateway_cannot_start(tmp_path: Path) -> None:
    """Pytest fails a test whose TemporaryDirectory was never cleaned up (warnings are errors);
    the directory must also be gone from disk."""
    import tempfile

    before = set(Path(tempfile.gettempdir()).glob("meta-client-*"))
    with pytest.raises(MetaConnectionError):
        MetaClient.spawn(state_dir=tmp_path / "s1", config={}, command=str(tmp_path / "no-such-gateway"))

    async def scenario() -> None:
        with pytest.raises(MetaConnectionError):
            await AsyncMetaClient.spawn(
                state_dir=tmp_path / "s2", config={}, command=str(tmp_path / "no-such")
            )

    asyncio.run(scenario())
    assert set(Path(tempfile.gettempdir()).glob("meta-client-*")) <= before


def test_a_child_that_dies_fails_the_calls_in_flight_and_after(tmp_path: Path) -> None:
    client = MetaClient.spawn(state_dir=tmp_path / "state", max_retries=0)
    try:
        client._channel._proc.kill()  # type: ignore[attr-defined]
        with pytest.raises(MetaConnectionError) as gone:
            client.status()
        assert "exited" in gone.value.message
    finally:
        client.close()


def test_the_config_mapping_is_written_as_toml_the_loader_reads_back() -> None:
    import tomllib

    config = {
        "agent_memory": {"realm": 'a "quoted"\nrealm', "max_entries": 5, "recorder_tool": False},
        "console": {"auth": {"tokens": [{"token_sha256": "ab" * 32, "subject": "ops", "groups": ["x"]}]}},
        "skipped": None,
    }
    parsed = tomllib.loads(toml_text(config))
    assert parsed == {k: v for k, v in config.items() if v is not None}


WIRE_ERRORS: list[MetaError] = [
    InvalidParams("title must be a non-empty string"),
    WriteRefused("secret-detected", "body matches secret class 'aws'"),
    UnknownRecord("unknown memory record 'x'"),
    CapabilityUnavailable("agent memory is not enabled"),
    ReadOnly(),
    StoreUnavailable("the database is down"),
    AccessDenied("agent.memory.read", "lead"),
    QuarantineReviewRefused("hash-mismatch", "the record changed", current_content_hash="ab"),
    MemoryBackendUnavailable("health check failed"),
]


@pytest.mark.parametrize("original", WIRE_ERRORS, ids=lambda e: type(e).__name__)
def test_a_wire_error_comes_back_as_the_class_it_was(original: MetaError) -> None:
    rebuilt = error_from_wire(to_wire_error(original))
    assert type(rebuilt) is type(original)
    assert (rebuilt.code, rebuilt.message, rebuilt.data) == (original.code, original.message, original.data)
    for attribute in ("rule", "reason", "detail"):  # what each class carries beside code and data
        assert getattr(rebuilt, attribute, None) == getattr(original, attribute, None)


def test_an_unknown_code_keeps_its_number() -> None:
    rebuilt = error_from_wire({"code": -32099, "message": "something new", "data": {"x": 1}})
    assert type(rebuilt) is MetaError and rebuilt.code == -32099 and rebuilt.data == {"x": 1}


def test_config_mappings_round_trip_through_the_loader(tmp_path: Path) -> None:
    config: dict[str, Any] = {"memory": {"kind": "local_json"}, "agent_memory": {"llm_writes": "quarantined"}}
    import tomllib

    assert load_config_dict(tomllib.loads(toml_text(config))).agent_memory.llm_writes == "quarantined"
