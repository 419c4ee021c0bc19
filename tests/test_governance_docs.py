"""docs/governance.md runs as written: every code block on the page is a snippet this test runs, in
page order, in one namespace, against real runtimes on a fresh state dir, and each asserts what the
page claims (the Python snippets carry their own asserts; the checks below add what a snippet
cannot see, such as the request the model endpoint received).

A snippet is a fenced block right after a marker line ``<!-- doc-test: NAME -->`` (``NAME console``
for JSON-RPC lines sent to the console surface). By language: ``toml`` is loaded as a config (and
written to the working directory when NAME ends in ``.toml``; ``"<...>"`` placeholders become token
hashes); ``python`` is executed; ``sh`` holds ``export`` lines, set in the environment (the steward's
base URL pointed at a local fake chat-completions server); ``json`` is one JSON-RPC request per line,
sent through the walkthrough's handle (``"<key>"`` filled from an earlier result's ``key``), except
``model-reply``, the verdicts the fake model answers with (its ``<proposal_id>`` and ``<record_id>``
filled from the dream it is shown).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from meta_memory.config import MetaConfig, load_config_dict, load_config_file
from meta_memory.runtime import MetaRuntime
from meta_memory.sdk import MetaHandle

from .conftest import chat_completions_server

DOC_PATH = Path(__file__).resolve().parents[1] / "docs" / "governance.md"
DOC = DOC_PATH.read_text()
SNIPPET = re.compile(
    r"<!-- doc-test: (?P<name>[\w.-]+)(?P<console> console)? -->\n```(?P<lang>\w+)\n(?P<body>.*?)```",
    re.DOTALL,
)
PLACEHOLDER = re.compile(r'"<([^">]+)>"')


@dataclass(frozen=True)
class Snippet:
    name: str
    lang: str
    body: str
    console: bool
    line: int  # the page's line the body starts after


SNIPPETS = [
    Snippet(m["name"], m["lang"], m["body"], m["console"] is not None, DOC.count("\n", 0, m.start("body")))
    for m in SNIPPET.finditer(DOC)
]


# -- the fake model ---------------------------------------------------------------------------------


@dataclass
class FakeModel:
    """A chat-completions endpoint on 127.0.0.1 answering ``template`` with the ids of the dream it is
    shown; it keeps every request."""

    url: str = ""
    template: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        dream = json.loads(request["messages"][1]["content"])
        ids = {
            "<proposal_id>": [p["proposal_id"] for p in dream["proposals"]],
            "<record_id>": [q["id"] for q in dream["quarantined"]],
        }
        verdicts: dict[str, list[dict[str, Any]]] = {}
        for key, entries in self.template.items():
            kept = []
            for entry in entries:
                holes = [k for k, v in entry.items() if isinstance(v, str) and v.startswith("<")]
                assert all(entry[k] in ids for k in holes), f"unknown placeholder in {entry}"
                if all(ids[entry[k]] for k in holes):
                    kept.append({**entry, **{k: ids[entry[k]][0] for k in holes}})
            verdicts[key] = kept
        content = json.dumps(verdicts)
        return {"choices": [{"message": {"role": "assistant", "content": content}}]}


@pytest.fixture
def model() -> Iterator[FakeModel]:
    fake = FakeModel()
    with chat_completions_server(
        lambda body: (200, json.dumps(fake.answer(body)).encode()), fake.requests
    ) as url:
        fake.url = url
        yield fake


# -- running the page ---------------------------------------------------------------------------------


@dataclass
class Walk:
    """What the snippets share: the Python namespace, configs, JSON-RPC results, the environment set."""

    cwd: Path
    model: FakeModel
    monkeypatch: pytest.MonkeyPatch
    ns: dict[str, Any] = field(default_factory=lambda: {"__name__": "governance_walkthrough"})
    configs: dict[str, MetaConfig] = field(default_factory=dict)
    results: dict[str, list[Any]] = field(default_factory=dict)
    values: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)

    @property
    def meta(self) -> MetaHandle:
        handle = self.ns["meta"]
        assert isinstance(handle, MetaHandle)
        return handle

    def run(self, snippet: Snippet) -> None:
        getattr(self, f"run_{snippet.lang}")(snippet)

    def run_toml(self, snippet: Snippet) -> None:
        text = PLACEHOLDER.sub(lambda m: '"' + hashlib.sha256(m[0].encode()).hexdigest() + '"', snippet.body)
        self.configs[snippet.name] = load_config_dict(tomllib.loads(text), source=snippet.name)
        if snippet.name.endswith(".toml"):
            (self.cwd / snippet.name).write_text(text)

    def run_python(self, snippet: Snippet) -> None:
        # Compiled as the page itself, at its own lines: a failing assert's traceback shows the page.
        code = compile("\n" * snippet.line + snippet.body, str(DOC_PATH), "exec")
        exec(code, self.ns)

    def run_sh(self, snippet: Snippet) -> None:
        for line in snippet.body.splitlines():
            words = shlex.split(line, comments=True)
            assert words[0] == "export" and len(words) == 2, f"not an export line: {line!r}"
            name, value = words[1].split("=", 1)
            self.env[name] = value
            if name == "META_STEWARD_BASE_URL":
                assert value.startswith("http") and value.endswith("/v1"), value
                value = self.model.url
            self.monkeypatch.setenv(name, value)

    def run_json(self, snippet: Snippet) -> None:
        if snippet.name == "model-reply":
            self.model.template = json.loads(snippet.body)
            return
        results = self.results.setdefault(snippet.name, [])
        for line in snippet.body.splitlines():
            filled = PLACEHOLDER.sub(lambda m: json.dumps(self.values[m[1]]), line)
            request = json.loads(filled)
            assert request["jsonrpc"] == "2.0" and isinstance(request["id"], int), line
            surface: Any = self.meta.console if snippet.console else self.meta
            result = surface.call(request["method"], request.get("params"))
            results.append(result)
            self.values.update({k: v for k, v in result.items() if isinstance(v, str)})


# What a snippet cannot assert itself, by snippet name.
Check = Callable[[Walk], None]


def _builder_is_the_toml(walk: Walk) -> None:
    assert walk.meta.runtime.config == load_config_file(walk.cwd / "gateway.toml")


def _proposed_over_the_wire(walk: Walk) -> None:
    opened, proposed = walk.results["propose-rpc"]
    assert opened["session_key"].startswith("sess-") and opened["identity"] == "scout:1"
    assert proposed["content"].startswith("Proposed to mob crew as prop-") and not proposed["is_error"]


def _a_mob_partition_dreamed(walk: Walk) -> None:
    [report] = walk.results["dream-rpc"]
    assert (report["status"], report["partition"]) == ("completed", "mob:crew")


def _the_console_lists_both_runs_newest_first(walk: Walk) -> None:
    [listing] = walk.results["dream-runs-rpc"]
    assert [run["partition"] for run in listing["runs"]] == ["mob:crew", "default"]


def _the_console_lists_the_held_proposal(walk: Walk) -> None:
    [listing] = walk.results["held-rpc"]
    assert [(p["title"], p["status"]) for p in listing["proposals"]] == [("Release freeze", "held")]
    assert re.fullmatch(r"[0-9a-f]{64}", listing["proposals"][0]["content_hash"])


def _the_model_is_named(walk: Walk) -> None:
    assert walk.configs["model.toml"].agent_memory.steward.model == "gpt-4o-mini"


def _the_model_got_one_json_only_request(walk: Walk) -> None:
    [request] = walk.model.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["headers"]["Authorization"] == f"Bearer {walk.env['META_STEWARD_API_KEY']}"
    body = request["json"]
    assert (body["model"], body["temperature"], body["response_format"]) == (
        "gpt-4o-mini",
        0,
        {"type": "json_object"},
    )
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert "untrusted_body" in body["messages"][1]["content"]


def _the_access_config_is_on(walk: Walk) -> None:
    config = walk.configs["access.toml"]
    assert config.access.enabled and len(config.console.auth.tokens) == 3


def _the_second_page_follows_the_first(walk: Walk) -> None:
    first, second = walk.results["timeline-rpc"]
    assert len(first["events"]) == 2 and first["next_after"] == first["events"][-1]["event_id"]

    def seq(event: dict[str, Any]) -> int:
        return int(event["event_id"].removeprefix("console-evt-"))

    assert seq(second["events"][0]) == seq(first["events"][-1]) + 1


def _the_state_dir_is_free_again(walk: Walk) -> None:
    MetaRuntime.open(walk.cwd / ".meta" / "state", walk.meta.runtime.config).close()


CHECKS: dict[str, Check] = {
    "builder": _builder_is_the_toml,
    "propose-rpc": _proposed_over_the_wire,
    "dream-rpc": _a_mob_partition_dreamed,
    "dream-runs-rpc": _the_console_lists_both_runs_newest_first,
    "model.toml": _the_model_is_named,
    "model-dream": _the_model_got_one_json_only_request,
    "held-rpc": _the_console_lists_the_held_proposal,
    "access.toml": _the_access_config_is_on,
    "timeline-rpc": _the_second_page_follows_the_first,
    "close": _the_state_dir_is_free_again,
}


def test_every_code_block_on_the_page_is_a_snippet_this_test_runs() -> None:
    names = [s.name for s in SNIPPETS]
    blocks = re.findall(r"^```(\w+)$", DOC, flags=re.MULTILINE)
    unmarked_commands = sum(1 for s in re.findall(r"```sh\n(.*?)```", DOC, re.DOTALL) if "export" not in s)

    assert len(names) == len(set(names)), "snippet names repeat"
    assert len(blocks) == len(SNIPPETS) + unmarked_commands
    assert {s.lang for s in SNIPPETS} == {"toml", "python", "sh", "json"}
    assert set(CHECKS) <= set(names), f"checks for snippets the page lacks: {set(CHECKS) - set(names)}"


def test_the_walkthrough_runs_as_written(
    tmp_path: Path, model: FakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    walk = Walk(tmp_path, model, monkeypatch)
    try:
        for snippet in SNIPPETS:
            try:
                walk.run(snippet)
                if snippet.name in CHECKS:
                    CHECKS[snippet.name](walk)
            except BaseException as exc:
                exc.add_note(f"in docs/governance.md, snippet {snippet.name!r} (after line {snippet.line})")
                raise
    finally:
        for value in walk.ns.values():
            if isinstance(value, MetaHandle):
                value.close()
    assert len(model.requests) == 2  # the walkthrough's dream and the trial's
