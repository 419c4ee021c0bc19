from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from meta_memory.errors import ConfigError, MemoryBackendUnavailable, StorageRefused
from meta_memory.ledger import (
    HealthCheck,
    HealthEndpoint,
    IndexResult,
    Ledger,
    LocalJsonBackend,
    parse_query_params,
)
from meta_memory.storage.layout import StateLayout

Index = Callable[..., IndexResult]
Open = Callable[..., Ledger]
StartHealth = Callable[[int], Any]  # -> conftest.HealthServer
StartRaw = Callable[[bytes | None], str]


@pytest.mark.parametrize(
    ("endpoint", "parsed"),
    [
        (
            "http://localhost:3000",
            HealthEndpoint("http://localhost:3000/v1/health", "localhost", 3000, "/v1/health"),
        ),
        (
            "  http://memory.internal//  ",
            HealthEndpoint("http://memory.internal/v1/health", "memory.internal", 80, "/v1/health"),
        ),
        (
            "http://h:8080/prefix/",
            HealthEndpoint("http://h:8080/prefix/v1/health", "h", 8080, "/prefix/v1/health"),
        ),
        ("http://[::1]:9000", HealthEndpoint("http://[::1]:9000/v1/health", "[::1]", 9000, "/v1/health")),
    ],
)
def test_endpoint_becomes_the_health_url_with_host_port_and_path(
    endpoint: str, parsed: HealthEndpoint
) -> None:
    assert HealthCheck(endpoint).endpoint == parsed


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        ("https://h", "memory backend endpoint must start with http:// (got 'https://h/v1/health')"),
        ("h:80", "memory backend endpoint must start with http:// (got 'h:80/v1/health')"),
        ("http://", "memory backend endpoint must start with http:// (got 'http:/v1/health')"),
        ("http:///v1", "memory backend endpoint host must not be empty"),
        ("http://h:99999", "memory backend endpoint port is invalid in 'http://h:99999/v1/health'"),
        ("http://h:", "memory backend endpoint port is invalid in 'http://h:/v1/health'"),
    ],
)
def test_unusable_endpoint_is_a_config_error(endpoint: str, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        LocalJsonBackend.for_layout(StateLayout.at("/state"), health_check_endpoint=endpoint)
    assert caught.value.message == message


def test_blank_endpoint_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as caught:
        LocalJsonBackend.for_layout(StateLayout.at("/state"), health_check_endpoint="  ")
    assert caught.value.message == "memory backend health_check_endpoint must not be empty when provided"


def test_2xx_is_healthy_and_the_request_is_a_plain_http_1_1_get(health_server: StartHealth) -> None:
    server = health_server(204)
    HealthCheck(server.url + "/prefix").check()
    [(request_line, headers)] = server.requests
    assert request_line == "GET /prefix/v1/health HTTP/1.1"
    assert headers["Host"] == "127.0.0.1"
    assert headers["Connection"] == "close"


@pytest.mark.parametrize("status", [503, 302, 404])
def test_non_2xx_status_fails_with_the_status_message(health_server: StartHealth, status: int) -> None:
    server = health_server(status)
    with pytest.raises(MemoryBackendUnavailable) as caught:
        HealthCheck(server.url).check()
    assert caught.value.detail == f"healthcheck status failed for '{server.url}/v1/health': HTTP {status}"


def test_garbage_status_line_fails_to_parse(raw_server: StartRaw) -> None:
    url = raw_server(b"  garbage  \r\nmore\r\n")
    with pytest.raises(MemoryBackendUnavailable) as caught:
        HealthCheck(url).check()
    assert (
        caught.value.detail
        == f"healthcheck parse failed for '{url}/v1/health': invalid status line 'garbage'"
    )


def test_status_line_without_newline_is_still_read(raw_server: StartRaw) -> None:
    HealthCheck(raw_server(b"HTTP/1.0 200")).check()


def test_closed_connection_without_a_byte_is_an_empty_response(raw_server: StartRaw) -> None:
    url = raw_server(b"")
    with pytest.raises(MemoryBackendUnavailable) as caught:
        HealthCheck(url).check()
    assert caught.value.detail == f"healthcheck read failed for '{url}/v1/health': empty response"


def test_closed_port_fails_to_connect(closed_port_url: str) -> None:
    with pytest.raises(MemoryBackendUnavailable) as caught:
        HealthCheck(closed_port_url).check()
    assert caught.value.detail.startswith(f"healthcheck connect failed for '{closed_port_url}/v1/health': ")
    assert "refused" in caught.value.detail


def test_silent_endpoint_fails_the_read_at_the_timeout(raw_server: StartRaw) -> None:
    url = raw_server(None)
    with pytest.raises(MemoryBackendUnavailable) as caught:
        HealthCheck(url, timeout_s=0.05).check()
    assert caught.value.detail == f"healthcheck read failed for '{url}/v1/health': timed out"


def test_unresolvable_host_fails_to_resolve() -> None:
    with pytest.raises(MemoryBackendUnavailable) as caught:
        HealthCheck("http://host.invalid").check()
    assert caught.value.detail.startswith("healthcheck resolve failed for 'http://host.invalid/v1/health': ")


def test_health_runs_at_load_even_without_a_file_and_before_every_persist_never_on_reads(
    open_ledger: Open, health_server: StartHealth, layout: StateLayout, index: Index
) -> None:
    server = health_server(200)
    ledger = open_ledger(server.url)
    assert (len(server.requests), layout.ledger_path.exists()) == (1, False)
    index(ledger, entity="e", topic="t", fact="a")
    index(ledger, entity="e", topic="t", conflict=True)
    ledger.query(parse_query_params(None))
    ledger.stores()
    ledger.conflict_for("e", "t")
    assert len(server.requests) == 3


def test_unhealthy_endpoint_at_load_refuses_boot_with_the_healthcheck_message(
    open_ledger: Open, health_server: StartHealth
) -> None:
    server = health_server(503)
    with pytest.raises(StorageRefused) as caught:
        open_ledger(server.url)
    assert caught.value.message == f"healthcheck status failed for '{server.url}/v1/health': HTTP 503"


def test_unhealthy_endpoint_at_persist_rolls_back_and_reports_backend_unavailable(
    open_ledger: Open, health_server: StartHealth, layout: StateLayout, index: Index
) -> None:
    server = health_server(200)
    ledger = open_ledger(server.url)
    index(ledger, entity="e", topic="t", fact="kept")
    on_disk = layout.ledger_path.read_bytes()
    server.status = 503
    with pytest.raises(MemoryBackendUnavailable) as caught:
        index(ledger, entity="e", topic="t", fact="lost", conflict=True)
    assert caught.value.message == (
        f"Memory backend unavailable: healthcheck status failed for '{server.url}/v1/health': HTTP 503"
    )
    assert [a.fact for a in ledger.query(parse_query_params(None)).assertions] == ["kept"]
    assert ledger.has_conflicts() is False
    assert layout.ledger_path.read_bytes() == on_disk
    assert not layout.ledger_stage_path.exists()
    server.status = 200
    assert index(ledger, entity="e", topic="t", fact="back").assertion_id == "memory-assert-000001"
