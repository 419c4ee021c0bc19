"""A secret in any text a quarantined record carries blocks its release: the description, a tag and
the verification evidence as well as the title and body (test_refusals.py). Such a record reaches
quarantine only from an older release's store or an edited one, so each test writes the secret into
the stored row behind the validator, as a store written before the scanner knew the rule would
hold it. A secret in a reviewer's rationale is refused too: the rationale is stored in the audit."""

from __future__ import annotations

import json

import pytest

from meta_memory.errors import MetaError
from meta_memory.memory.records import Status

from ..security.secrets_corpus import echoes, true_secrets

KIND = "memory_quarantine_review_refused"


def _sample(secret_class: str) -> dict[str, str]:
    rows = [r for r in true_secrets() if r["class"] == secret_class and r["variant"] == "plain"]
    return min(rows, key=lambda r: len(r["secret"]))


def _write_behind_the_validator(desk, memory_id: str, column: str, value: str) -> None:
    with desk.db() as conn:
        conn.execute(f"UPDATE records SET {column} = ? WHERE id = ?", (value, memory_id))


@pytest.mark.parametrize(
    ("column", "secret_class", "field"),
    [
        ("description", "openai-api-key", "description"),
        ("description", "url-credentials", "description"),
        ("tags", "aws-access-key-id", "tags"),
        ("tags", "slack-token", "tags"),
        ("provenance", "private-key", "verification_evidence"),
        ("provenance", "jwt", "verification_evidence"),
    ],
)
def test_a_secret_in_the_description_a_tag_or_the_evidence_blocks_release_but_not_tombstone(
    desk, column: str, secret_class: str, field: str
) -> None:
    row = _sample(secret_class)
    origin = desk.quarantine("Deploy key", "Deploys use a key.", tags=["ops"])
    if column == "description":
        value = f"see {row['secret']}"
    elif column == "tags":
        value = json.dumps(
            ["ops", row["secret"].lower() if secret_class == "aws-access-key-id" else row["secret"]]
        )
    else:
        provenance = origin.provenance.to_wire()
        provenance["verification"] = {"checked": "agent", "evidence": ["ran it", row["text"]]}
        value = json.dumps(provenance)
    _write_behind_the_validator(desk, origin.id, column, value)
    before = desk.audit_count()

    error = desk.refusal(origin.id, "release")

    assert (error.code, error.data["kind"], error.data["reason"]) == (-32043, KIND, "secret_detected")
    assert error.data["class"] == secret_class
    assert f"in its {field}" in error.message
    assert not echoes(error.message + json.dumps(error.data), row["secret"], secret_class)
    assert desk.audit_count() == before
    assert desk.record(origin.id).status is Status.QUARANTINED
    assert desk.store.get(f"{origin.id}-released") is None
    assert desk.events() == []

    assert desk.decide(origin.id, "tombstone")["outcome"] == "tombstoned"
    assert desk.record(origin.id).status is Status.TOMBSTONED


def test_a_secret_in_the_reviewers_rationale_is_refused_and_nothing_is_decided(desk) -> None:
    row = _sample("github-token")
    origin = desk.quarantine("Deploy window", "Deploys happen on Tuesdays.")
    before = desk.audit_count()

    with pytest.raises(MetaError) as refused:
        desk.decide(origin.id, "release", rationale=f"checked with {row['secret']}")

    assert refused.value.code == -32602
    assert refused.value.data == {"kind": "memory_write_refused", "rule": "secret-detected"}
    assert (
        refused.value.message
        == "rationale matches secret class 'github-token'; secrets are refused, never stored"
    )
    assert desk.audit_count() == before
    assert desk.record(origin.id).status is Status.QUARANTINED
    assert desk.decide(origin.id, "release", rationale="checked with the owner")["outcome"] == "released"
