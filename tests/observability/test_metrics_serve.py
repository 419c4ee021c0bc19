"""``GET /metrics`` of a real ``meta_gateway serve``: real traffic counted exactly, and the scrape
behind the console's token once tokens are configured."""

from __future__ import annotations

import socket
from collections.abc import Callable

from .conftest import APP_TOKEN, CONSOLE_TOKEN, TOKENS_TOML, Gateway, sample, samples

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


def test_metrics_count_remember_recall_an_error_and_a_cross_origin_refusal_exactly(
    serve: Callable[..., Gateway],
) -> None:
    gateway = serve(config=TOKENS_TOML)
    for title in ("Deploy policy", "Rollback policy"):
        params = {"identity": "lead:main", "title": title, "body": "Deploys need ops approval."}
        assert "result" in gateway.rpc("meta/agent_memory/remember", params, token=APP_TOKEN)
    recall = {"identity": "lead:main", "selection": "always"}
    assert len(gateway.rpc("meta/agent_memory/recall", recall, token=APP_TOKEN)["result"]["records"]) == 2
    secret = {"identity": "lead:main", "title": "Keys", "body": f"the key is {AWS_KEY}"}
    refused = gateway.rpc("meta/agent_memory/remember", secret, token=APP_TOKEN)["error"]
    assert refused["data"]["rule"] == "secret-detected"
    assert gateway.rpc("meta/no-such-method", token=APP_TOKEN)["error"]["code"] == -32601
    with gateway.http() as http:
        body = {"jsonrpc": "2.0", "id": 1, "method": "meta/status"}
        cross = http.post("/rpc", json=body, headers={"origin": "https://evil.example"})
        anonymous = http.post("/rpc", json=body)
        scraped = http.get("/metrics", headers={"authorization": f"Bearer {CONSOLE_TOKEN}"})
    assert (cross.status_code, anonymous.status_code, scraped.status_code) == (403, 401, 200)
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")

    found = samples(scraped.text)
    requests = {
        dict(labels)["method"] + " " + dict(labels)["outcome"]: value
        for (name, labels), value in found.items()
        if name == "meta_requests_total"
    }
    assert requests == {
        "meta/agent_memory/remember ok": 2,
        "meta/agent_memory/recall ok": 1,
        "meta/agent_memory/remember -32602": 1,
        "unknown -32601": 1,
    }
    assert sample(found, "meta_request_duration_seconds_count", method="meta/agent_memory/remember") == 3
    assert sample(found, "meta_recall_duration_seconds_count", kind="recall") == 1
    assert sample(found, "meta_recall_records_total", kind="recall") == 2
    assert sample(found, "meta_write_refusals_total", rule="secret-detected") == 1
    assert sample(found, "meta_boundary_refusals_total", surface="rpc", reason="origin_not_allowed") == 1
    assert sample(found, "meta_boundary_refusals_total", surface="rpc", reason="missing_token") == 1
    assert sample(found, "meta_quarantine_queue_depth") == 0
    assert sample(found, "meta_realms_open") == 1
    assert sample(found, "meta_index_pending_records") is not None
    assert sample(found, "meta_index_unmerged_records") is not None
    assert AWS_KEY not in scraped.text and "lead:main" not in scraped.text and "Deploy" not in scraped.text


def test_metrics_refuse_a_scrape_without_the_console_token_once_tokens_are_configured(
    serve: Callable[..., Gateway],
) -> None:
    gateway = serve(config=TOKENS_TOML)
    with gateway.http() as http:
        bare = http.get("/metrics")
        with_app_token = http.get("/metrics", headers={"authorization": f"Bearer {APP_TOKEN}"})
        wrong = http.get("/metrics", headers={"authorization": "Bearer not-a-token-anyone-holds"})
        ok = http.get("/metrics", headers={"authorization": f"Bearer {CONSOLE_TOKEN}"})
    assert bare.status_code == 401 and bare.headers["www-authenticate"] == 'Bearer realm="meta-metrics"'
    assert "meta_requests" not in bare.text and bare.json()["error"]["data"]["kind"] == "unauthenticated"
    assert with_app_token.status_code == 401 and wrong.status_code == 401
    assert ok.status_code == 200
    found = samples(ok.text)
    assert sample(found, "meta_boundary_refusals_total", surface="metrics", reason="missing_token") == 1
    assert sample(found, "meta_boundary_refusals_total", surface="metrics", reason="invalid_token") == 2
    log = gateway.stop()
    for secret in (APP_TOKEN, CONSOLE_TOKEN, "not-a-token-anyone-holds"):
        assert secret not in log


def test_a_request_that_misses_its_arrival_deadline_is_counted(serve: Callable[..., Gateway]) -> None:
    gateway = serve(config='[memory]\nkind = "local_json"\n[agent_memory]\n[http]\nrequest_timeout_s = 1\n')
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as sock:
        sock.sendall(
            b"POST /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        assert sock.recv(1024).startswith(b"HTTP/1.1 408")
    with gateway.http() as http:
        found = samples(http.get("/metrics").text)
    assert sample(found, "meta_boundary_refusals_total", surface="http", reason="request_timeout") == 1
