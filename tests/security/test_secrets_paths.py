"""Secrets are refused on every write path, in every field, on both backends: RPC ``remember`` and
``update`` (the dispatcher's wire answer, and a real ``meta_gateway stdio`` process), the
``memory`` tool of a host session (title, body, description, tags, verification_evidence), MCP,
``propose_to_mob``, an export import and a legacy markdown import. A sample of the corpus (one
text of each class) goes through each; the refusal names the field and the class, never the
secret, and nothing is stored. ``verification_evidence`` is capped (count, bytes each, bytes in
all) on the tool path and by the store validator."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from meta_memory import Meta, MetaHandle
from meta_memory.clock import ManualClock
from meta_memory.gateway.dispatch import SDK, CallContext
from meta_memory.mcp_server import MemoryMcpServer
from meta_memory.memory.legacy_markdown import LegacyRecord, render_legacy_markdown
from meta_memory.memory.records import Author
from meta_memory.memory.secrets import SECRET_CLASSES, scan_secrets
from meta_memory.memory.store import RealmStore
from meta_memory.memory.transfer import bytes_opener, import_source, read_source
from meta_memory.memory.validator import (
    VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES,
    VERIFICATION_EVIDENCE_MAX,
    VERIFICATION_EVIDENCE_MAX_BYTES,
)
from meta_memory.recorder import ToolArgumentError, parse_memory_tool_arguments

from ..conftest import BACKENDS, Backend, make_backend
from ..gateway.conftest import StdioGateway
from ..transfer.conftest import export_file, record_line
from .secrets_corpus import echoes, true_secrets

# One short plain text of each class, with the secret inside it.
SAMPLE = {
    cls: min(
        (r for r in true_secrets() if r["class"] == cls and r["variant"] == "plain"),
        key=lambda r: len(r["text"]),
    )
    for cls in SECRET_CLASSES
}
# The shortest text of the class that is refused alone (a token, a PEM header line, or an
# assignment with its name), for the short fields: a 200-byte title, a 64-byte tag.
SHORT = {
    cls: min(
        (
            t
            for r in true_secrets()
            if r["class"] == cls
            for t in (r["secret"], r["secret"].splitlines()[0], r["text"])
            if scan_secrets(t) == cls
        ),
        key=lambda t: len(t.encode()),
    )
    for cls in SECRET_CLASSES
}
NOTE = {"action": "remember", "title": "Deploy policy", "body": "Deploys need ops approval."}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[Backend]:
    yield from make_backend(request.param, request)


@pytest.fixture
def meta(tmp_path: Path, clock: ManualClock, backend: Backend) -> Iterator[MetaHandle]:
    # alice belongs to mob `team`, where the memory tool's propose_to_mob writes.
    builder = Meta.builder().persistent_state(tmp_path / "state").roster({"identity": "alice", "mob": "team"})
    with builder.agent_memory(llm_writes="observed", **backend.store_config()).clock(clock).build() as handle:
        yield handle


def _store(meta: MetaHandle) -> RealmStore:
    assert meta.runtime.agent_memory is not None
    return meta.runtime.agent_memory.store("default")


def _rpc(meta: MetaHandle, method: str, params: dict[str, Any]) -> dict[str, Any]:
    request = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    reply = meta._dispatcher.handle_payload(request, CallContext(SDK))
    assert reply is not None
    return reply


def _assert_refused_on_the_wire(reply: dict[str, Any], field: str, secret_class: str, secret: str) -> None:
    error = reply["error"]
    assert error["code"] == -32602
    assert error["data"] == {"kind": "memory_write_refused", "rule": "secret-detected"}
    assert (
        error["message"]
        == f"{field} matches secret class '{secret_class}'; secrets are refused, never stored"
    )
    assert not echoes(json.dumps(reply), secret, secret_class)


@pytest.mark.parametrize("secret_class", SECRET_CLASSES)
def test_rpc_remember_and_update_refuse_a_secret_in_each_field(meta: MetaHandle, secret_class: str) -> None:
    row, short = SAMPLE[secret_class], SHORT[secret_class]
    base = {"identity": "alice", "title": "Deploy policy", "body": "Deploys need ops approval."}
    kept = _rpc(meta, "meta/agent_memory/remember", base)["result"]
    audit_before = len(_store(meta).audit_rows())

    attempts = [("body", {"body": row["text"]})]
    if len(short.encode()) <= 200:
        attempts.append(("title", {"title": short}))
    if len(short.encode()) <= 64:
        attempts.append(("tags", {"tags": ["ops", short]}))
    for field, fields in attempts:
        reply = _rpc(meta, "meta/agent_memory/remember", {**base, **fields})
        _assert_refused_on_the_wire(reply, field, secret_class, row["secret"] if field == "body" else short)
        reply = _rpc(meta, "meta/agent_memory/update", {**base, "memory_id": kept["memory_id"], **fields})
        _assert_refused_on_the_wire(reply, field, secret_class, row["secret"] if field == "body" else short)

    assert len(_store(meta).audit_rows()) == audit_before
    listed = _rpc(meta, "meta/agent_memory/list", {"identity": "alice"})["result"]["records"]
    assert [r["memory_id"] for r in listed] == [kept["memory_id"]]


@pytest.mark.parametrize("secret_class", SECRET_CLASSES)
def test_the_memory_tool_refuses_a_secret_in_each_field_as_a_tool_error(
    meta: MetaHandle, secret_class: str
) -> None:
    row, short = SAMPLE[secret_class], SHORT[secret_class]
    session = meta.open_session("alice", mob="team")
    evidence = {"epistemic": "verified_claim", "verification_evidence": ["ran the deploy", row["text"]]}
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("body", {"body": row["text"]}),
        ("verification_evidence", evidence),
    ]
    if len(short.encode()) <= 200:
        attempts.append(("title", {"title": short}))
    if len(short.encode()) <= 400:
        attempts.append(("description", {"description": short}))
    if len(short.encode()) <= 64:
        attempts.append(("tags", {"tags": [short]}))

    for field, fields in attempts:
        for action in ("remember", "propose_to_mob"):
            result = session.memory_tool({**NOTE, "action": action, **fields})
            assert (result.is_error, result.outcome) == (True, "none"), (field, action, result)
            assert (
                result.content
                == f"{field} matches secret class '{secret_class}'; secrets are refused, never stored"
            )

    store = _store(meta)
    assert store.audit_rows() == [] and store.pending_proposals(100) == []


@pytest.mark.parametrize(
    ("evidence", "message"),
    [
        (
            [f"step {i}" for i in range(VERIFICATION_EVIDENCE_MAX + 1)],
            f"verification_evidence must contain at most {VERIFICATION_EVIDENCE_MAX} entries",
        ),
        (
            ["x" * (VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES + 1)],
            f"verification_evidence entries must be at most {VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES} bytes",
        ),
        (
            ["é" * (VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES // 2)] * 5,  # 2 bytes a character: 10 KiB in all
            f"verification_evidence must be at most {VERIFICATION_EVIDENCE_MAX_BYTES} bytes in total",
        ),
        (
            "a" * 3_600_000,
            f"verification_evidence entries must be at most {VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES} bytes",
        ),
    ],
    ids=["count", "entry-bytes", "total-bytes", "3.6-MB"],
)
def test_verification_evidence_is_capped_on_the_tool_path(
    meta: MetaHandle, evidence: Any, message: str
) -> None:
    session = meta.open_session("alice")
    arguments = {**NOTE, "epistemic": "verified_claim", "verification_evidence": evidence}

    result = session.memory_tool(arguments)

    assert (result.is_error, result.content) == (True, message)
    assert _store(meta).audit_rows() == []
    at_the_caps = [
        "e" * (VERIFICATION_EVIDENCE_MAX_BYTES // VERIFICATION_EVIDENCE_MAX)
    ] * VERIFICATION_EVIDENCE_MAX
    assert not session.memory_tool({**arguments, "verification_evidence": at_the_caps}).is_error


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # as tests/mcp: the MCP SDK runs on asyncio


def test_the_tool_argument_parser_caps_verification_evidence_before_any_store_is_asked() -> None:
    arguments = {**NOTE, "epistemic": "verified_claim"}
    for evidence, cap in (
        (["step"] * (VERIFICATION_EVIDENCE_MAX + 1), "must contain at most"),
        (["x" * (VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES + 1)], "entries must be at most"),
        (["x" * VERIFICATION_EVIDENCE_ENTRY_MAX_BYTES] * 5, "must be at most 8192 bytes in total"),
    ):
        with pytest.raises(ToolArgumentError, match=f"^verification_evidence {cap}"):
            parse_memory_tool_arguments({**arguments, "verification_evidence": evidence})


@pytest.mark.anyio
async def test_mcp_refuses_a_secret_in_verification_evidence(tmp_path: Path) -> None:
    row = SAMPLE["openai-api-key"]
    meta = Meta.builder().persistent_state(tmp_path / "state").agent_memory(llm_writes="observed").build()
    server = MemoryMcpServer(meta, "alice")
    arguments = {**NOTE, "epistemic": "verified_claim", "verification_evidence": [row["text"]]}
    try:
        with anyio.fail_after(30):
            async with Client(server.server) as client:
                result = await client.call_tool("memory", arguments)
        store = _store(meta)
        assert result.is_error
        [content] = result.content
        assert content.text == (  # type: ignore[union-attr]
            "verification_evidence matches secret class 'openai-api-key'; secrets are refused, never stored"
        )
        assert store.audit_rows() == []
    finally:
        server.close()
        meta.close()


def test_a_real_stdio_gateway_refuses_a_secret_on_the_wire(tmp_path: Path) -> None:
    gateway = StdioGateway(tmp_path / "state", [], tmp_path / "stderr.log")
    try:
        gateway.handshake = gateway.read()
        for secret_class in ("jwt", "url-credentials", "credential-assignment", "private-key"):
            row = SAMPLE[secret_class]
            params = {"identity": "alice", "title": "Note", "body": row["text"]}
            reply = gateway.call("meta/agent_memory/remember", params)
            _assert_refused_on_the_wire(reply, "body", secret_class, row["secret"])
        assert gateway.call("meta/agent_memory/list", {"identity": "alice"})["result"]["records"] == []
        assert gateway.close() == 0
    finally:
        gateway.kill()


def _claim(*evidence: str) -> dict[str, Any]:
    return {
        "author": {"author": "application"},
        "evidence": [],
        "verification": {"checked": "agent", "evidence": list(evidence)},
    }


def test_an_import_refuses_each_line_holding_a_secret_in_any_field(meta: MetaHandle) -> None:
    jwt, aws, url = SAMPLE["jwt"], SHORT["aws-access-key-id"], SAMPLE["url-credentials"]
    lines = [
        record_line("ok-1", body="kept"),
        record_line("in-body", body=jwt["text"]),
        record_line("in-description", description=url["text"]),
        record_line("in-tags", tags=[aws.lower()]),  # an export holds tags lowercased
        record_line("in-evidence", provenance=_claim("checked", SAMPLE["slack-token"]["text"])),
        record_line("in-profile", provenance={**_claim("ok"), "profile": SHORT["github-token"]}),
        record_line("too-much-evidence", provenance=_claim(*["step"] * (VERIFICATION_EVIDENCE_MAX + 1))),
        record_line("ok-2", body="kept too"),
    ]
    source = read_source(
        bytes_opener(export_file(lines)), "t.jsonl", realm="default", identity=None, now_ms=0
    )

    report = import_source(source, meta.runtime.agent_memory.store, author=Author("operator"))  # type: ignore[union-attr]

    refused = {o.memory_id: (o.rule, o.message) for o in report.outcomes if o.outcome == "refused"}
    assert refused == {
        "in-body": ("secret-detected", "body matches secret class 'jwt'; secrets are refused, never stored"),
        "in-description": (
            "secret-detected",
            "description matches secret class 'url-credentials'; secrets are refused, never stored",
        ),
        "in-tags": (
            "secret-detected",
            "tags matches secret class 'aws-access-key-id'; secrets are refused, never stored",
        ),
        "in-evidence": (
            "secret-detected",
            "verification_evidence matches secret class 'slack-token'; secrets are refused, never stored",
        ),
        "in-profile": (
            "secret-detected",
            "provenance matches secret class 'github-token'; secrets are refused, never stored",
        ),
        "too-much-evidence": (
            "field-too-large",
            f"verification_evidence must contain at most {VERIFICATION_EVIDENCE_MAX} entries",
        ),
    }
    store = _store(meta)
    assert {r.id for r in (store.get("ok-1"), store.get("ok-2")) if r is not None} == {"ok-1", "ok-2"}
    assert all(store.get(memory_id) is None for memory_id in refused)
    assert not echoes(json.dumps(store.audit_rows()), jwt["secret"], "jwt")


def test_a_legacy_markdown_import_skips_a_record_holding_a_secret(tmp_path: Path) -> None:
    state = tmp_path / "state"
    row = SAMPLE["anthropic-api-key"]
    legacy = [LegacyRecord("good", "Good", "Fine.", (), 1_600_000_000_000, 1_600_000_000_500)]
    legacy.append(LegacyRecord("leaky", "Keys", row["text"], (), 1_600_000_000_000, 1_600_000_000_500))
    path = state / "agent-memory" / "default" / "alice.md"
    path.parent.mkdir(parents=True)
    path.write_text(render_legacy_markdown(legacy), encoding="utf-8")

    with Meta.builder().persistent_state(state).agent_memory().build() as meta:
        store = _store(meta)
        assert store.get("good") is not None and store.get("leaky") is None
        [skipped] = [r for r in store.audit_rows() if r["op"] == "import_skipped"]

    assert skipped["detail"]["reason"] == "secret-detected"
    assert "body matches secret class 'anthropic-api-key'" in skipped["detail"]["detail"]
    assert not echoes(json.dumps(skipped), row["secret"], "anthropic-api-key")
