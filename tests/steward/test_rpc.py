"""``meta/memory/steward/dream {realm?, mob?}`` on the SDK and console surfaces: the report on the wire,
a mutating method (refused by a read-only console), and its parameter rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.errors import MetaError
from meta_memory.gateway.dispatch import CONSOLE, SDK, CallContext
from meta_memory.gateway.methods import build_dispatcher
from meta_memory.runtime import MetaRuntime
from meta_memory.steward import DreamVerdicts, QuarantineVerdict

from .conftest import REALM, Bench

DREAM = "meta/memory/steward/dream"


@pytest.mark.parametrize("surface", [SDK, CONSOLE])
def test_a_dream_on_demand_answers_the_report(bench: Bench, surface: str) -> None:
    record = bench.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    bench.reviewer.script = lambda d: DreamVerdicts(
        quarantine=(QuarantineVerdict(record.id, "tombstone", "why"),)
    )

    result = build_dispatcher(bench.runtime).call(DREAM, {"realm": REALM}, CallContext(surface))

    assert result["status"] == "completed" and result["run_id"].startswith("dream-")
    assert result["ops_committed"] == 1
    assert result["outcomes"] == [
        {
            "subject": "quarantine",
            "target": record.id,
            "verdict": "tombstone",
            "outcome": "tombstoned",
            "reason": None,
            "record_id": None,
            "pending_id": None,
        }
    ]
    assert set(result) == {
        "realm",
        "partition",
        "status",
        "run_id",
        "reviewer",
        "started_at_ms",
        "completed_at_ms",
        "ops_committed",
        "skipped_reason",
        "reviewer_error",
        "outcomes",
        "expired_promotions",
        "audit_verdicts",
    }


def test_the_realm_defaults_to_the_configured_one_and_a_mob_selects_a_partition(bench: Bench) -> None:
    dispatcher = build_dispatcher(bench.runtime)
    bench.quarantine("Crew", "A crew record.", identity="scout")

    assert dispatcher.call(DREAM, None, CallContext(SDK))["realm"] == REALM
    assert dispatcher.call(DREAM, {"mob": "crew"}, CallContext(SDK))["partition"] == "mob:crew"


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([], "params must be a JSON object"),
        ({"realm": 5}, "realm must be a non-empty string when provided"),
        ({"realm": "  "}, "realm must be a non-empty string when provided"),
        ({"mob": ""}, "mob must be a non-empty string when provided"),
    ],
)
def test_bad_params_are_invalid_params(bench: Bench, params: object, message: str) -> None:
    with pytest.raises(MetaError) as refused:
        build_dispatcher(bench.runtime).call(DREAM, params, CallContext(SDK))

    assert (refused.value.code, refused.value.message) == (-32602, message)


def test_the_dream_is_advertised_on_both_surfaces_and_refused_by_a_read_only_console(
    tmp_path: Path, clock: ManualClock
) -> None:
    cfg = load_config_dict({"agent_memory": {"enabled": True}, "console": {"read_only": True}})
    with MetaRuntime.open(tmp_path / "state", cfg, clock=clock) as runtime:
        dispatcher = build_dispatcher(runtime)
        assert DREAM in dispatcher.call("meta/capabilities", None, CallContext(SDK))["methods"]
        assert DREAM not in dispatcher.call("meta/capabilities", None, CallContext(CONSOLE))["methods"]

        with pytest.raises(MetaError) as refused:
            dispatcher.call(DREAM, {}, CallContext(CONSOLE))

        assert (refused.value.code, refused.value.data) == (-32010, {"kind": "read_only"})
        assert dispatcher.call(DREAM, {}, CallContext(SDK))["status"] == "skipped"


def test_without_agent_memory_there_is_no_steward_and_the_method_is_unavailable(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MetaRuntime.open(tmp_path / "state", load_config_dict({}), clock=clock) as runtime:
        dispatcher = build_dispatcher(runtime)
        assert runtime.steward is None
        assert DREAM not in dispatcher.call("meta/capabilities", None, CallContext(SDK))["methods"]

        with pytest.raises(MetaError) as refused:
            dispatcher.call(DREAM, {}, CallContext(SDK))

        assert refused.value.code == -32004
