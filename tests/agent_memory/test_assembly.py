"""Automatic injection assembly: time budget, failure policy, the provider seam, the injection ledger."""

from __future__ import annotations

import logging
import sqlite3
import threading
from contextlib import closing
from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import InternalError, MetaError
from meta_memory.memory.injection import SessionInjectionBudget, new_nonce
from meta_memory.memory.params import RecallParams, parse_recall, parse_remember
from meta_memory.memory.recall.provider import LexicalRecallProvider, RecallQuery
from meta_memory.memory.records import Record
from meta_memory.memory.store import RealmStore
from meta_memory.runtime import MetaRuntime
from meta_memory.storage.layout import StateLayout


def _recall(params: dict[str, object]) -> RecallParams:
    """Recall params as the dispatcher parses them, with the runtime's defaults."""
    return parse_recall(params, default_realm="default", default_selection="contextual", default_max=8)


def _runtime(state_dir: Path, clock: ManualClock, **agent_memory: object) -> MetaRuntime:
    config = load_config_dict({"agent_memory": {"enabled": True, **agent_memory}})
    return MetaRuntime.open(state_dir, config, clock=clock)


def _assemble(
    runtime: MetaRuntime, query: str | None, budget: SessionInjectionBudget | None = None
) -> object:
    assert runtime.agent_memory is not None
    return runtime.agent_memory.assemble(
        identity="lead",
        realm=None,
        budget=budget or SessionInjectionBudget(),
        nonce=new_nonce(),
        surface="turn",
        session_key="s-1",
        query_text=query,
    )


class _BlockingProvider:
    """A provider that waits until released: stands in for a slow remote memory service."""

    def __init__(self) -> None:
        self.release = threading.Event()

    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        self.release.wait(timeout=10)
        return []


class _FailingProvider:
    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        raise InternalError("memory hub unreachable")


class _RecordingProvider(LexicalRecallProvider):
    def __init__(self) -> None:
        self.queries: list[RecallQuery] = []

    def recall(self, store: RealmStore, query: RecallQuery) -> list[Record]:
        self.queries.append(query)
        return super().recall(store, query)


def test_turn_assembly_renders_matching_records_and_writes_the_injection_ledger(
    state_dir: Path, clock: ManualClock
) -> None:
    with _runtime(state_dir, clock) as rt:
        assert rt.agent_memory is not None
        rt.agent_memory.remember(
            parse_remember(
                {"identity": "lead", "title": "Deploy policy", "body": "Deploys need ops approval."},
                default_realm="default",
            )
        )
        result = _assemble(rt, "who approves deploys?")
        assert result.text is not None and "Deploys need ops approval." in result.text
        assert "[mem-token: " in result.text
        path = rt.layout.realm_db_path("default")
        with closing(sqlite3.connect(path)) as db:
            rows = db.execute("SELECT record_id, identity, session_key, surface FROM injections").fetchall()
            (count,) = db.execute("SELECT injected_count FROM records").fetchone()
        assert rows == [(result.injected[0], "lead", "s-1", "turn")]
        assert count == 1


def test_a_record_is_injected_once_per_session_until_compaction(state_dir: Path, clock: ManualClock) -> None:
    with _runtime(state_dir, clock) as rt:
        assert rt.agent_memory is not None
        rt.agent_memory.remember(
            parse_remember(
                {"identity": "lead", "title": "Deploy policy", "body": "Deploys need ops approval."},
                default_realm="default",
            )
        )
        budget = SessionInjectionBudget()
        assert _assemble(rt, "deploys", budget).text is not None
        assert _assemble(rt, "deploys", budget).text is None
        budget.compact()
        assert _assemble(rt, "deploys", budget).text is not None


def test_slow_provider_with_skip_policy_yields_no_block_and_a_warning(
    state_dir: Path, clock: ManualClock, caplog: pytest.LogCaptureFixture
) -> None:
    with _runtime(state_dir, clock, recall_timeout_ms=50) as rt:
        assert rt.agent_memory is not None
        slow = _BlockingProvider()
        rt.agent_memory.provider = slow
        with caplog.at_level(logging.WARNING, logger="meta_memory.agent_memory"):
            result = _assemble(rt, "anything")
        slow.release.set()
        assert result.text is None and result.injected == ()
        assert any("recall skipped" in r.message for r in caplog.records)


def test_slow_provider_with_fail_policy_raises(state_dir: Path, clock: ManualClock) -> None:
    with _runtime(state_dir, clock, recall_timeout_ms=50, recall_failure_policy="fail") as rt:
        assert rt.agent_memory is not None
        slow = _BlockingProvider()
        rt.agent_memory.provider = slow
        with pytest.raises(MetaError, match="timed out after 50 ms"):
            _assemble(rt, "anything")
        slow.release.set()


def test_provider_error_is_skipped_in_assembly_but_reported_by_explicit_recall(
    state_dir: Path, clock: ManualClock
) -> None:
    with _runtime(state_dir, clock) as rt:
        assert rt.agent_memory is not None
        rt.agent_memory.provider = _FailingProvider()
        assert _assemble(rt, "anything").text is None
        with pytest.raises(InternalError, match="memory hub unreachable"):
            rt.agent_memory.recall(_recall({"identity": "lead", "query_text": "anything"}))


def test_a_custom_provider_receives_the_raw_query_text_and_the_callers_terms(
    state_dir: Path, clock: ManualClock
) -> None:
    with _runtime(state_dir, clock) as rt:
        assert rt.agent_memory is not None
        recording = _RecordingProvider()
        rt.agent_memory.provider = recording
        rt.agent_memory.recall(
            _recall(
                {
                    "identity": "lead",
                    "query_text": "What did Caroline research?",
                    "query_terms": ["Adoption Agencies"],
                }
            )
        )
        (query,) = recording.queries
        assert query.query_text == "What did Caroline research?"
        assert query.query_terms == ("Adoption Agencies",)


def test_an_index_built_by_another_analyzer_version_is_rebuilt_on_open(
    state_dir: Path, clock: ManualClock
) -> None:
    with _runtime(state_dir, clock) as rt:
        assert rt.agent_memory is not None
        rt.agent_memory.remember(
            parse_remember(
                {"identity": "lead", "title": "Hiking", "body": "Caroline went hiking in the Alps."},
                default_realm="default",
            )
        )
        path = StateLayout.recall_index_path(rt.layout.realm_db_path("default"))
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE meta SET value = 'old' WHERE key = 'analyzer_version'")
        db.execute("DELETE FROM postings")  # what an older analyzer left is unusable anyway
    with _runtime(state_dir, clock) as rt:
        assert rt.agent_memory is not None
        hits = rt.agent_memory.recall(
            _recall({"identity": "lead", "query_text": "hikes in the alps"})
        ).records
        assert [r.title for r in hits] == ["Hiking"]
