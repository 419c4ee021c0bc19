"""The OpenAI-compatible reviewer against a fake chat-completions server on 127.0.0.1: the request it
sends, strict parsing of the answer, and a dream that holds everything when the answer is unusable."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import StewardConfig
from meta_memory.memory.records import Status
from meta_memory.memory.service import AgentDraft
from meta_memory.runtime import MetaRuntime
from meta_memory.steward import (
    DeterministicReviewer,
    DreamInput,
    OpenAICompatibleReviewer,
    ReviewerError,
    reviewer_from_config,
)

from ..conftest import chat_completions_server
from .conftest import REALM, config


@dataclass
class FakeLLM:
    """What the server answers next (``content`` goes into choices[0].message.content) and what it got."""

    url: str
    content: str = "{}"
    status: int = 200
    requests: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    state = FakeLLM(url="")

    def respond(body: dict[str, Any]) -> tuple[int, bytes]:
        if state.status != 200:
            return state.status, b'{"error": "boom"}'
        answer = {"choices": [{"message": {"role": "assistant", "content": state.content}}]}
        return 200, json.dumps(answer).encode()

    with chat_completions_server(respond, state.requests) as url:
        state.url = url
        yield state


def adapter(llm: FakeLLM, env: dict[str, str] | None = None) -> OpenAICompatibleReviewer:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    return OpenAICompatibleReviewer(
        llm.url, "judge-1", "TEST_KEY", opener=opener, environ=env or {}, timeout_s=10
    )


def open_runtime(tmp_path: Path, clock: ManualClock, reviewer: OpenAICompatibleReviewer) -> MetaRuntime:
    return MetaRuntime.open(tmp_path / "state", config(), clock=clock, steward_reviewer=reviewer)


def quarantine(runtime: MetaRuntime, title: str, body: str) -> str:
    assert runtime.agent_memory is not None
    draft = AgentDraft("lead", REALM, title, body)
    return runtime.agent_memory.agent_remember(draft, quarantine_reason="llm_writes_quarantined")[0].id


def test_the_adapter_posts_one_json_only_chat_completion_and_parses_the_verdict(llm: FakeLLM) -> None:
    llm.content = json.dumps(
        {
            "quarantine_verdicts": [{"record_id": "mem-1", "verdict": "release", "rationale": "fine"}],
            "contradictions": [
                {"entity": "acme", "topic": "pricing", "reason": "two terms", "record_ids": ["mem-1"]}
            ],
        }
    )
    dream = DreamInput(REALM, "dream-1", 1, REALM)

    verdicts = adapter(llm, {"TEST_KEY": "sk-test"}).review(dream)

    assert [(v.record_id, v.verdict, v.rationale) for v in verdicts.quarantine] == [
        ("mem-1", "release", "fine")
    ]
    assert [(c.entity, c.topic, c.record_ids) for c in verdicts.contradictions] == [
        ("acme", "pricing", ("mem-1",))
    ]
    [request] = llm.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == "Bearer sk-test"
    body = request["json"]
    assert (body["model"], body["temperature"], body["response_format"]) == (
        "judge-1",
        0,
        {"type": "json_object"},
    )
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "EXACTLY one JSON object" in body["messages"][0]["content"]
    assert json.loads(body["messages"][1]["content"])["realm"] == REALM


def test_the_adapter_sends_no_authorization_header_without_a_key(llm: FakeLLM) -> None:
    adapter(llm).review(DreamInput(REALM, "dream-1", 1, REALM))

    assert "Authorization" not in llm.requests[0]["headers"]


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        ("not json at all {", 200, "malformed JSON"),
        ('["a list"]', 200, "must be a JSON object"),
        (
            '{"quarantine_verdicts": [{"record_id": "m", "verdict": "launder"}]}',
            200,
            "verdict must be one of",
        ),
        ('{"shell": "rm -rf"}', 200, "unknown verdict keys: shell"),
        ("{}", 500, "HTTP 500"),
    ],
)
def test_an_unusable_answer_is_a_reviewer_error(
    llm: FakeLLM, content: str, status: int, message: str
) -> None:
    llm.content, llm.status = content, status

    with pytest.raises(ReviewerError, match=message):
        adapter(llm).review(DreamInput(REALM, "dream-1", 1, REALM))


def test_an_unreachable_endpoint_is_a_reviewer_error() -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    reviewer = OpenAICompatibleReviewer("http://127.0.0.1:9/v1", "m", opener=opener, environ={}, timeout_s=5)

    with pytest.raises(ReviewerError, match="unreachable"):
        reviewer.review(DreamInput(REALM, "dream-1", 1, REALM))


def test_a_dream_applies_a_good_answer_from_the_endpoint(
    tmp_path: Path, clock: ManualClock, llm: FakeLLM
) -> None:
    with open_runtime(tmp_path, clock, adapter(llm)) as runtime:
        memory_id = quarantine(runtime, "Deploy window", "Deploys happen on Tuesdays.")
        llm.content = json.dumps({"quarantine_verdicts": [{"record_id": memory_id, "verdict": "tombstone"}]})
        assert runtime.steward is not None

        report = runtime.steward.dream(REALM)

        assert (report.reviewer, report.reviewer_error) == ("openai-compatible:judge-1", None)
        assert [o.outcome for o in report.outcomes] == ["tombstoned"]
        sent = json.loads(llm.requests[0]["json"]["messages"][1]["content"])
        assert sent["quarantined"][0]["untrusted_body"] == "Deploys happen on Tuesdays."


def test_a_malformed_answer_makes_the_dream_hold_everything_and_report_the_error(
    tmp_path: Path, clock: ManualClock, llm: FakeLLM
) -> None:
    with open_runtime(tmp_path, clock, adapter(llm)) as runtime:
        memory_id = quarantine(runtime, "Deploy window", "Deploys happen on Tuesdays.")
        llm.content = '{"quarantine_verdicts": [{"record_id": "' + memory_id + '", "verdict": "release"'
        assert runtime.steward is not None and runtime.agent_memory is not None

        report = runtime.steward.dream(REALM)

        assert report.status == "completed"
        assert report.reviewer_error is not None and "malformed JSON" in report.reviewer_error
        assert [(o.outcome, o.reason) for o in report.outcomes] == [("held", "no_verdict")]
        stored = runtime.agent_memory.store(REALM).get(memory_id)
        assert stored is not None and stored.status is Status.QUARANTINED


def test_the_adapter_is_built_only_when_a_model_is_configured() -> None:
    assert isinstance(reviewer_from_config(StewardConfig(), {}), DeterministicReviewer)

    built = reviewer_from_config(
        StewardConfig(model="judge-2"), {"META_STEWARD_BASE_URL": "http://127.0.0.1:1/v1"}
    )

    assert isinstance(built, OpenAICompatibleReviewer)
    assert (built.base_url, built.model, built.api_key_env) == (
        "http://127.0.0.1:1/v1",
        "judge-2",
        "META_STEWARD_API_KEY",
    )
    default = reviewer_from_config(StewardConfig(model="judge-2"), {})
    assert isinstance(default, OpenAICompatibleReviewer) and default.base_url == "https://api.openai.com/v1"
