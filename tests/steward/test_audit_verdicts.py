"""An operator resolves the steward's usage-audit verdicts over the console (``POST /console/rpc`` of
the real app, on both backends): ``acknowledge`` closes a verdict and changes no memory,
``tombstone`` acts on a ``dead_weight`` verdict bound to the content hash read, in one transaction
with the reviewer recorded; a replay answers the first decision; ``panel/audit_verdicts`` lists only
open verdicts; the record's grants decide who may resolve, and a read-only console refuses."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from meta_memory.access import hash_token
from meta_memory.clock import ManualClock
from meta_memory.config import load_config_dict
from meta_memory.gateway.http import build_app
from meta_memory.memory.params import parse_remember
from meta_memory.memory.records import Record, Status
from meta_memory.memory.rows import InjectionRow
from meta_memory.memory.service import AgentDraft
from meta_memory.runtime import MetaRuntime
from meta_memory.steward import DreamInput, DreamVerdicts, ProposalVerdict, UsageVerdict

from ..conftest import Backend
from .conftest import MOB, REALM, ScriptedReviewer

RESOLVE = "meta/memory/audit_verdicts/resolve"
ROOT, KEEPER, READER = "tok-root-1", "tok-keeper-1", "tok-reader-1"


def _config(backend: Backend, *, access: bool = False, read_only: bool = False) -> Any:
    data: dict[str, Any] = {
        "agent_memory": {"enabled": True, "llm_writes": "quarantined", "steward": {"enabled": False}},
        "roster": [{"identity": "lead", "mob": MOB, "role": "lead"}, {"identity": "scout", "mob": MOB}],
        "console": {"read_only": read_only},
    }
    if access:
        data["console"]["auth"] = {
            "tokens": [
                {"token_sha256": hash_token(ROOT), "subject": "root"},
                {"token_sha256": hash_token(KEEPER), "subject": "kim"},
                {"token_sha256": hash_token(READER), "subject": "rita"},
            ]
        }
        read = ["agent.memory.read", "agent.view", "mob.memory.read"]
        data["access"] = {
            "enabled": True,
            "admins": ["root"],
            "rules": [
                {"id": "read", "subjects": ["kim", "rita"], "actions": read},
                {"id": "keep", "subjects": ["kim"], "actions": ["agent.memory.write"], "roles": ["lead"]},
            ],
        }
    return load_config_dict(backend.config(data))


@dataclass
class Desk:
    runtime: MetaRuntime
    client: TestClient
    reviewer: ScriptedReviewer
    admin: str | None = None  # the token that reads every verdict (none without access control)

    def rpc(self, method: str, params: dict[str, Any] | None = None, token: str | None = None) -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        return self.client.post("/console/rpc", json=body, headers=headers).json()

    def sdk(self, method: str, params: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
        return self.client.post("/rpc", json=body).json()

    def resolve(
        self, run_id: str, record: Record, action: str, token: str | None = None, **extra: Any
    ) -> Any:
        params = {"run_id": run_id, "record_id": record.id, "action": action, **extra}
        if action == "tombstone" and "expected_content_hash" not in extra:
            params["expected_content_hash"] = record.content_hash
        return self.rpc(RESOLVE, params, token)

    def remember(self, title: str, body: str, identity: str = "lead") -> Record:
        assert self.runtime.agent_memory is not None
        params = parse_remember({"identity": identity, "title": title, "body": body}, default_realm=REALM)
        record = self.runtime.agent_memory.remember(params)
        self.runtime.agent_memory.store(REALM).record_injections(
            [InjectionRow(record.id, identity, None, "build", 1)]
        )
        return record

    def judge(self, *verdicts: tuple[Record, str]) -> str:
        """A dream whose usage audit gives these verdicts; its run id."""
        assert self.runtime.agent_memory is not None and self.runtime.steward is not None
        draft = AgentDraft(identity="lead", realm=REALM, title="Waiting", body="Something to review.")
        self.runtime.agent_memory.agent_remember(draft, quarantine_reason="llm_writes=quarantined policy")
        usage = tuple(UsageVerdict(r.id, v, f"{v} by the audit") for r, v in verdicts)
        self.reviewer.script = lambda dream: DreamVerdicts(usage=usage)
        report = self.runtime.steward.dream(REALM)
        assert report.audit_verdicts == len(verdicts), report.to_wire()
        assert report.run_id is not None
        return report.run_id

    def open_verdicts(self) -> list[tuple[str, str, str]]:
        listed = self.rpc("meta/memory/panel/audit_verdicts", {}, self.admin)["result"]["verdicts"]
        return sorted((v["run_id"], v["record_id"], v["verdict"]) for v in listed)

    def status(self, record: Record) -> Status:
        assert self.runtime.agent_memory is not None
        found = self.runtime.agent_memory.store(REALM).get(record.id)
        assert found is not None
        return found.status

    def audit_ops(self) -> list[str]:
        assert self.runtime.agent_memory is not None
        return [r["op"] for r in self.runtime.agent_memory.store(REALM).audit_rows()]


def _desk(
    tmp_path: Path, backend: Backend, *, access: bool = False, read_only: bool = False
) -> Iterator[Desk]:
    reviewer = ScriptedReviewer()
    config = _config(backend, access=access, read_only=read_only)
    runtime = MetaRuntime.open(tmp_path / "state", config, clock=ManualClock(), steward_reviewer=reviewer)
    with TestClient(build_app(runtime), base_url="http://127.0.0.1:8765") as client:
        yield Desk(runtime, client, reviewer, ROOT if access else None)
    runtime.close()


@pytest.fixture
def desk(tmp_path: Path, backend: Backend) -> Iterator[Desk]:
    yield from _desk(tmp_path, backend)


@pytest.fixture
def guarded(tmp_path: Path, backend: Backend) -> Iterator[Desk]:
    yield from _desk(tmp_path, backend, access=True)


def test_acknowledging_a_verdict_closes_it_and_leaves_the_record_as_it_was(desk: Desk) -> None:
    kept = desk.remember("Deploys", "Deploys need an approval from ops.")
    run = desk.judge((kept, "load_bearing"))
    assert desk.open_verdicts() == [(run, kept.id, "load_bearing")]

    answer = desk.resolve(run, kept, "acknowledge", rationale="we lean on it")["result"]

    assert answer["outcome"] == "acknowledged"
    assert answer["verdict"] | {"created_at_ms": 0} == {
        "realm": REALM, "run_id": run, "record_id": kept.id, "verdict": "load_bearing",
        "rationale": "load_bearing by the audit", "created_at_ms": 0, "status": "acknowledged",
    }  # fmt: skip
    resolution = answer["decision"]["resolution"]
    assert resolution["reviewer"] == {"kind": "console", "principal": None}
    assert (resolution["action"], resolution["rationale"], resolution["closed_runs"]) == (
        "acknowledge",
        "we lean on it",
        [run],
    )
    assert desk.open_verdicts() == []
    assert desk.status(kept) is Status.ACTIVE and answer["record"]["status"] == {"status": "active"}
    assert desk.audit_ops()[-1] == "audit_verdict"


def test_tombstoning_a_dead_weight_verdict_tombstones_the_record_and_closes_every_verdict_on_it(
    desk: Desk,
) -> None:
    stale = desk.remember("Old VPN", "Connect through the old VPN gateway.")
    other = desk.remember("Editor", "Lead uses vim.")
    first = desk.judge((stale, "dead_weight"), (other, "load_bearing"))
    second = desk.judge((stale, "dead_weight"))

    answer = desk.resolve(first, stale, "tombstone", rationale="the VPN is gone")["result"]

    assert (answer["outcome"], answer["verdict"]["status"]) == ("tombstoned", "tombstoned")
    assert answer["decision"]["resolution"]["closed_runs"] == sorted([first, second])
    assert desk.status(stale) is Status.TOMBSTONED
    assert desk.open_verdicts() == [(first, other.id, "load_bearing")]
    recalled = desk.sdk("meta/agent_memory/recall", {"identity": "lead", "query_text": "old vpn gateway"})
    assert stale.id not in [r["memory_id"] for r in recalled["result"]["records"]]
    # The other run's verdict closed with it: resolving it the same way is the same decision.
    again = desk.resolve(second, stale, "tombstone")["result"]
    assert (again["outcome"], again["decision"]) == ("already_tombstoned", answer["decision"])


def test_a_replay_answers_the_first_decision_and_another_action_is_refused(desk: Desk) -> None:
    kept = desk.remember("Deploys", "Deploys need an approval from ops.")
    run = desk.judge((kept, "dead_weight"))
    first = desk.resolve(run, kept, "acknowledge", rationale="still true")["result"]
    ops = desk.audit_ops()

    replay = desk.resolve(run, kept, "acknowledge", rationale="still true")["result"]
    opposite = desk.resolve(run, kept, "tombstone")["error"]

    assert replay["outcome"] == "already_acknowledged"
    assert json.dumps(replay["decision"]) == json.dumps(first["decision"])
    assert opposite["code"] == -32602
    assert opposite["data"] == {
        "kind": "audit_verdict_refused",
        "reason": "already_resolved",
        "status": "acknowledged",
    }
    assert desk.audit_ops() == ops and desk.status(kept) is Status.ACTIVE


def test_a_tombstone_is_bound_to_the_content_hash_the_operator_read(desk: Desk) -> None:
    stale = desk.remember("Old VPN", "Connect through the old VPN gateway.")
    run = desk.judge((stale, "dead_weight"))

    stale_hash = desk.resolve(run, stale, "tombstone", expected_content_hash="0" * 64)["error"]
    no_hash = desk.rpc(RESOLVE, {"run_id": run, "record_id": stale.id, "action": "tombstone"})["error"]

    assert (stale_hash["code"], stale_hash["data"]["reason"]) == (-32602, "content_mismatch")
    assert stale.content_hash not in json.dumps(stale_hash)
    assert no_hash["code"] == -32602 and "expected_content_hash" in no_hash["message"]
    assert desk.status(stale) is Status.ACTIVE
    assert desk.open_verdicts() == [(run, stale.id, "dead_weight")]


def test_only_a_dead_weight_verdict_is_acted_on_by_a_tombstone(desk: Desk) -> None:
    kept = desk.remember("Deploys", "Deploys need an approval from ops.")
    run = desk.judge((kept, "load_bearing"))

    refused = desk.resolve(run, kept, "tombstone")["error"]

    assert refused["data"]["reason"] == "not_dead_weight"
    assert desk.status(kept) is Status.ACTIVE and desk.open_verdicts() == [(run, kept.id, "load_bearing")]


def test_a_verdict_on_a_record_forgotten_since_can_be_acknowledged_not_tombstoned(desk: Desk) -> None:
    stale = desk.remember("Old VPN", "Connect through the old VPN gateway.")
    run = desk.judge((stale, "dead_weight"))
    desk.rpc("meta/agent_memory/forget", {"identity": "lead", "memory_id": stale.id})

    refused = desk.resolve(run, stale, "tombstone")["error"]
    acknowledged = desk.resolve(run, stale, "acknowledge")["result"]

    assert refused["data"]["reason"] == "not_active"
    assert acknowledged["outcome"] == "acknowledged" and desk.open_verdicts() == []


def test_an_unknown_verdict_is_refused_and_an_unknown_realm_is_not_created(desk: Desk) -> None:
    kept = desk.remember("Deploys", "Deploys need an approval from ops.")
    desk.judge((kept, "load_bearing"))

    unknown_run = desk.resolve("dream-nope", kept, "acknowledge")["error"]
    unknown_realm = desk.resolve("dream-nope", kept, "acknowledge", realm="elsewhere")["error"]

    assert unknown_run["data"]["reason"] == unknown_realm["data"]["reason"] == "unknown_verdict"
    assert desk.runtime.agent_memory is not None and desk.runtime.agent_memory.realms() == [REALM]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"run_id": ""}, "run_id"),
        ({"run_id": "r" * 257}, "run_id"),
        ({"record_id": None}, "record_id"),
        ({"action": "keep"}, "action"),
        ({"action": None}, "action"),
        ({"expected_content_hash": "AB" * 32}, "expected_content_hash"),
        ({"rationale": "x" * 4097}, "rationale"),
        ({"rationale": 3}, "rationale"),
        ({"realm": " "}, "realm"),
        ({"verdict": "dead_weight"}, "verdict"),
    ],
)
def test_bad_params_are_refused_naming_the_field(desk: Desk, change: dict[str, Any], field: str) -> None:
    params = {"run_id": "dream-1", "record_id": "mem-1", "action": "acknowledge", **change}
    error = desk.rpc(RESOLVE, {k: v for k, v in params.items() if v is not None})["error"]
    assert error["code"] == -32602 and field in error["message"]


def test_a_secret_in_the_rationale_is_refused_and_nothing_changes(desk: Desk) -> None:
    kept = desk.remember("Deploys", "Deploys need an approval from ops.")
    run = desk.judge((kept, "load_bearing"))

    refused = desk.resolve(run, kept, "acknowledge", rationale="key AKIAIOSFODNN7EXAMPLE")["error"]

    assert refused["data"]["rule"] == "secret-detected" and "AKIA" not in json.dumps(refused)
    assert desk.open_verdicts() == [(run, kept.id, "load_bearing")]


def test_the_method_is_on_the_console_only(desk: Desk) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": RESOLVE, "params": {}}
    error = desk.client.post("/rpc", json=body).json()["error"]
    assert (error["code"], error["message"]) == (-32601, "Method not found")
    assert RESOLVE in error["data"]["detail"]


def test_the_records_grants_decide_who_may_resolve(guarded: Desk) -> None:
    lead_note = guarded.remember("Deploys", "Deploys need an approval from ops.")
    scout_note = guarded.remember("Editor", "Scout uses emacs.", identity="scout")
    run = guarded.judge((lead_note, "dead_weight"), (scout_note, "dead_weight"))

    no_delete = guarded.resolve(run, lead_note, "tombstone", KEEPER)["error"]
    no_write = guarded.resolve(run, scout_note, "acknowledge", KEEPER)["error"]  # scout is no lead
    no_write_at_all = guarded.resolve(run, lead_note, "acknowledge", READER)["error"]
    anonymous = guarded.rpc(RESOLVE, {"run_id": run, "record_id": lead_note.id, "action": "acknowledge"})

    assert no_delete["data"] == {
        "kind": "access_denied",
        "action": "agent.memory.delete",
        "resource": lead_note.id,
    }
    assert no_write["data"]["action"] == no_write_at_all["data"]["action"] == "agent.memory.write"
    assert anonymous["error"]["data"]["kind"] == "unauthenticated"
    assert len(guarded.open_verdicts()) == 2
    allowed = guarded.resolve(run, lead_note, "acknowledge", KEEPER)["result"]
    assert allowed["decision"]["resolution"]["reviewer"] == {"kind": "console", "principal": "kim"}
    assert guarded.resolve(run, scout_note, "tombstone", ROOT)["result"]["outcome"] == "tombstoned"


def test_a_mob_record_needs_the_mobs_write_grant(guarded: Desk) -> None:
    assert guarded.runtime.agent_memory is not None and guarded.runtime.steward is not None
    draft = AgentDraft(identity="lead", realm=REALM, title="Crew rule", body="The crew deploys on Fridays.")
    proposal = guarded.runtime.agent_memory.propose(draft, MOB, tainted=False)

    def accept(dream: DreamInput) -> DreamVerdicts:
        return DreamVerdicts(proposals=(ProposalVerdict(proposal, "accept"),))

    guarded.reviewer.script = accept
    guarded.runtime.steward.dream(REALM)
    store = guarded.runtime.agent_memory.store(REALM)
    [mob_record] = [
        store.get(row["record_id"])
        for row in store.audit_rows()
        if row["op"] == "create" and row["author"]["author"] == "steward"
    ]
    assert mob_record is not None and mob_record.scope.kind.value == "mob"
    store.record_injections([InjectionRow(mob_record.id, "lead", None, "build", 1)])
    run = guarded.judge((mob_record, "dead_weight"))

    denied = guarded.resolve(run, mob_record, "acknowledge", KEEPER)["error"]

    assert denied["data"] == {
        "kind": "access_denied",
        "action": "mob.memory.commit",
        "resource": mob_record.id,
    }
    assert guarded.resolve(run, mob_record, "tombstone", ROOT)["result"]["outcome"] == "tombstoned"


def test_a_read_only_console_refuses_resolutions_and_does_not_offer_them(
    tmp_path: Path, backend: Backend
) -> None:
    for desk in _desk(tmp_path, backend, read_only=True):
        kept = desk.remember("Deploys", "Deploys need an approval from ops.")
        run = desk.judge((kept, "load_bearing"))

        refused = desk.resolve(run, kept, "acknowledge")["error"]

        assert (refused["code"], refused["data"]) == (-32010, {"kind": "read_only"})
        assert RESOLVE not in desk.rpc("meta/capabilities")["result"]["methods"]
        assert desk.open_verdicts() == [(run, kept.id, "load_bearing")]
