"""An import never raises a record above what its lineage allows: edited exports (a quarantined
record set active, its marks stripped, trust or author raised, a released record without its
original, chains reaching quarantine in any line order) arrive quarantined or are refused on
their line, and nothing of them is recalled or injected afterwards (real ``meta_gateway``
processes, on both backends)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meta_memory.memory.records import Status
from meta_memory.memory.service import AgentDraft
from meta_memory.memory.transfer import title_from_text

from ..conftest import Backend
from .conftest import (
    History,
    Run,
    export_file,
    lines_of,
    memory_of,
    record_line,
    toml_config,
    write_history,
)

AGENT = {"author": {"author": "agent", "identity": "alice"}, "evidence": []}
OWN = "and no release of it is committed in this store"
_REPORT = re.compile(r"meta_gateway: (?P<file>\S+) (?:line|item) (?P<n>\d+) \((?P<id>[^)]+)\): (?P<what>.*)")


def _reports(stderr: str) -> dict[str, str]:
    """Each reported line's outcome, by record id."""
    found = {}
    for line in stderr.splitlines():
        match = _REPORT.fullmatch(line)
        assert match is not None, line
        found[match["id"]] = match["what"]
    return found


def _by_id(lines: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {line["record"]["id"]: line for line in lines[1:]}


def _exported_history(
    tmp_path: Path, backend: Backend, open_runtime: Any, clock: Any, cli: Callable[..., Run]
) -> tuple[list[dict[str, Any]], History]:
    runtime = open_runtime(tmp_path / "source", backend)
    history = write_history(runtime, clock)
    runtime.close()
    run = cli(backend, "export", "--state-dir", str(tmp_path / "source"), "--include-history")
    assert run.status == 0, run.stderr
    return lines_of(run.stdout), history


def _edited(lines: list[dict[str, Any]], history: History) -> list[dict[str, Any]]:
    """The export as someone holding the file edits it."""
    by_id = _by_id(lines)
    pending = by_id[history.quarantined.id]["record"]
    pending["status"] = {"status": "active", "reason": "written in a tainted session"}  # flag left
    by_id[history.other_realm.id]["record"]["trust"] = "operator"
    kept = [line for line in lines[1:] if line["record"]["id"] != history.released_origin.id]
    return [
        *kept,
        record_line(
            "unflagged",
            body="marks stripped but the reason",
            provenance=AGENT,
            status={"status": "active", "reason": "session tainted by web_fetch"},
        ),
        record_line(
            "author-edited",
            body="an agent's note, author raised",
            provenance={
                "author": {"author": "operator"},
                "evidence": [{"session_id": "s-1", "generation": 0}],
            },
            trust="operator",
        ),
        record_line(
            "operator-quarantine",
            body="quarantined, author and trust raised",
            provenance={"author": {"author": "operator"}, "evidence": []},
            trust="operator",
            ever_quarantined=True,
        ),
        # A chain in reverse order: the child comes before the quarantined record it reaches.
        record_line("chain-grandchild", body="third", provenance=AGENT, supersedes="chain-child"),
        record_line("chain-child", body="second", provenance=AGENT, supersedes="chain-root"),
        record_line(
            "chain-root",
            body="first",
            provenance=AGENT,
            status={"status": "quarantined", "reason": "session tainted by web_fetch"},
            ever_quarantined=True,
        ),
        record_line("after-pending", body="builds on the pending one", derived_from=[history.quarantined.id]),
    ]


def test_an_edited_export_arrives_quarantined_or_refused_line_by_line_and_nothing_of_it_is_injected(
    tmp_path: Path,
    backend: Backend,
    target: Backend,
    open_runtime: Any,
    clock: Any,
    cli: Callable[..., Run],
    stdio_gateway: Any,
) -> None:
    lines, history = _exported_history(tmp_path, backend, open_runtime, clock, cli)
    export = tmp_path / "edited.jsonl"
    export.write_bytes(export_file(_edited(lines, history), header=lines[0]))
    state = tmp_path / "fresh"

    run = cli(target, "import", str(export), "--state-dir", str(state))

    assert run.status == 1, run.stderr
    assert run.text.endswith("; 6 arrived quarantined, for review\n")
    assert _reports(run.stderr) == {
        history.quarantined.id: "imported quarantined, for a reviewer: it was quarantined (written in a "
        f"tainted session), {OWN}",
        history.released.id: f"imported quarantined, for a reviewer: it was quarantined, {OWN}",
        history.other_realm.id: "refused, tier-ceiling: a record by author 'application' is capped at "
        "trust 'application'",
        "unflagged": f"imported quarantined, for a reviewer: it was quarantined (session tainted by web_fetch), {OWN}",
        "author-edited": "refused, author-mismatch: provenance.evidence cites agent sessions, which only an "
        "LLM author's record does (the record names author 'operator')",
        "operator-quarantine": "refused, tier-ceiling: records derived from untrusted or quarantined content "
        "are capped at trust 'agent_observed'",
        "chain-grandchild": "imported quarantined, for a reviewer: its lineage reaches 'chain-root', "
        "quarantined with no release committed in this store",
        "chain-child": "imported quarantined, for a reviewer: its lineage reaches 'chain-root', quarantined "
        "with no release committed in this store",
        "after-pending": "imported quarantined, for a reviewer: its lineage reaches "
        f"'{history.quarantined.id}', quarantined in this store and not released",
    }
    laundered = {
        history.quarantined.id,
        history.released.id,
        "unflagged",
        "chain-grandchild",
        "chain-child",
        "chain-root",
        "after-pending",
    }
    config = tmp_path / "target.toml"
    config.write_text(toml_config(target))
    gateway = stdio_gateway(state, "--config", str(config))
    recalled = gateway.call(  # alice's own scope (the realm scope's operator note is read too)
        "meta/agent_memory/recall",
        {"identity": "alice", "selection": "always", "max_entries": 64, "scopes": ["identity"]},
    )["result"]["records"]
    key = gateway.call("meta/session/open", {"identity": "alice"})["result"]["session_key"]
    context = gateway.call("meta/session/build_context", {"session_key": key})["result"]
    assert gateway.close() == 0
    assert [r["memory_id"] for r in recalled] == [history.update.id]
    assert history.update.id in context["injected"]
    assert laundered.isdisjoint(context["injected"])
    assert not any(r.body in context["text"] for r in (history.quarantined, history.released))
    store = memory_of(open_runtime(state, target)).store("default")
    for memory_id in laundered:
        record = store.get(memory_id)
        assert record is not None and record.status is Status.QUARANTINED, memory_id
        assert record.ever_quarantined
    assert {row.memory_id for row in store.quarantined(50)} == laundered


def _stripped(line: dict[str, Any], memory_id: str, identity: str = "alice") -> dict[str, Any]:
    """``line``'s record with every quarantine mark removed, under ``memory_id`` in ``identity``'s
    scope (its author moved with it)."""
    record = dict(line["record"])
    record.update(
        id=memory_id,
        status={"status": "active"},
        ever_quarantined=False,
        supersedes=None,
        derived_from=[],
        scope={"scope": "identity", "realm": "default", "identity": identity},
        provenance={"author": {"author": "agent", "identity": identity}, "evidence": []},
    )
    return {**line, "record": record}


def test_text_the_store_holds_under_quarantine_arrives_quarantined_whatever_the_file_says(
    tmp_path: Path, backend: Backend, open_runtime: Any, clock: Any, cli: Callable[..., Run]
) -> None:
    lines, history = _exported_history(tmp_path, backend, open_runtime, clock, cli)
    by_id = _by_id(lines)
    pending, origin = by_id[history.quarantined.id], by_id[history.released_origin.id]
    mem0_text = "Deploys need the ops channel first"
    runtime = open_runtime(tmp_path / "source", backend)
    held, _ = memory_of(runtime).agent_remember(
        AgentDraft("alice", "default", title_from_text(mem0_text), mem0_text), quarantine_reason="tainted"
    )
    runtime.close()
    export = tmp_path / "stripped.jsonl"
    export.write_bytes(
        export_file(
            [
                _stripped(pending, history.quarantined.id),  # the same id: present, left as it is
                _stripped(pending, "fresh-copy"),
                _stripped(pending, "moved-copy", identity="bob"),
                _stripped(origin, "released-text"),  # released here: ordinary memory in alice's scope
                _stripped(origin, "released-text-bob", identity="bob"),
            ],
            header=lines[0],
        )
    )
    mem0 = tmp_path / "mem0.json"
    items = [
        {"id": "m-1", "memory": mem0_text, "user_id": "alice"},
        {"id": "m-2", "memory": "New", "user_id": "alice"},
    ]
    mem0.write_text(json.dumps({"results": items}))
    state = str(tmp_path / "source")

    run = cli(backend, "import", str(export), "--state-dir", state)
    from_mem0 = cli(backend, "import", str(mem0), "--state-dir", state)

    assert run.status == 0 and from_mem0.status == 0, run.stderr + from_mem0.stderr
    held_here = "imported quarantined, for a reviewer: its text is held under quarantine in this store"
    assert _reports(run.stderr) == {
        history.quarantined.id: "already present (status is quarantined here, active in the file)",
        "fresh-copy": f"{held_here} (record '{history.quarantined.id}')",
        "moved-copy": f"{held_here} (record '{history.quarantined.id}')",
        "released-text-bob": f"{held_here} (record '{history.released_origin.id}')",
    }
    assert _reports(from_mem0.stderr) == {"mem0-m-1": f"{held_here} (record '{held.id}')"}
    store = memory_of(open_runtime(tmp_path / "source", backend)).store("default")
    statuses = {
        i: store.get(i).status  # type: ignore[union-attr]
        for i in ("fresh-copy", "moved-copy", "released-text", "released-text-bob", "mem0-m-1", "mem0-m-2")
    }
    assert statuses == {
        "fresh-copy": Status.QUARANTINED,
        "moved-copy": Status.QUARANTINED,
        "released-text": Status.ACTIVE,
        "released-text-bob": Status.QUARANTINED,
        "mem0-m-1": Status.QUARANTINED,
        "mem0-m-2": Status.ACTIVE,
    }
