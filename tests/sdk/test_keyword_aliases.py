"""Keywords are snake_case, and each also answers to the camelCase spelling the spec's examples use
(``maxEntries`` for ``max_entries``): the same call either way. Both spellings of one keyword in a
call, or a keyword the method does not take, is a ``TypeError`` naming them."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from meta_memory import (
    AsyncConsole,
    AsyncMetaApi,
    AsyncSession,
    ConfigError,
    Console,
    Meta,
    MetaApi,
    Session,
    local_json,
)
from meta_memory.api import Call
from meta_memory.keywords import camel_case


class Sent(Exception):
    """Not an error: the call a method built, stopped before any transport."""

    def __init__(self, call: Call[Any]) -> None:
        super().__init__(call.method)
        self.call = call


class Recorder(MetaApi):
    def _invoke(self, call: Call[Any]) -> Any:
        raise Sent(call)


class AsyncRecorder(AsyncMetaApi):
    async def _invoke(self, call: Call[Any]) -> Any:
        raise Sent(call)


def _targets() -> Iterator[tuple[str, Any]]:
    """Every public method of the API's classes, bound to an object whose calls are recorded."""
    owners: list[tuple[type, Any]] = [
        (MetaApi, Recorder()),
        (AsyncMetaApi, AsyncRecorder()),
        (Console, Console(Recorder())),
        (AsyncConsole, AsyncConsole(AsyncRecorder())),
        (Session, Session(Recorder(), "key-1", "lead:main", "default")),
        (AsyncSession, AsyncSession(AsyncRecorder(), "key-1", "lead:main", "default")),
    ]
    for cls, target in owners:
        for name in sorted(vars(cls)):
            if not name.startswith("_") and inspect.isfunction(vars(cls)[name]):
                yield f"{cls.__name__}.{name}", getattr(target, name)


METHODS = dict(_targets())


def _keywords(method: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(method).parameters)


def _sent(method: Callable[..., Any], /, **kwargs: Any) -> Call[Any]:
    with pytest.raises(Sent) as sent:
        result = method(**kwargs)
        if inspect.isawaitable(result):
            asyncio.run(_awaited(result))
    return sent.value.call


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


def _refused(method: Callable[..., Any], /, **kwargs: Any) -> TypeError:
    with pytest.raises(TypeError) as refused:
        result = method(**kwargs)
        if inspect.isawaitable(result):
            asyncio.run(_awaited(result))
    return refused.value


def test_the_methods_walked_include_every_surface_and_keywords_that_have_aliases() -> None:
    assert {"MetaApi.recall_agent_memory", "AsyncMetaApi.gating_evaluate", "Console.decide"} <= set(METHODS)
    assert {"AsyncConsole.record", "Session.tool_result", "AsyncSession.turn"} <= set(METHODS)
    aliased = [k for m in METHODS.values() for k in _keywords(m) if camel_case(k) != k]
    assert len(aliased) > 50


@pytest.mark.parametrize("name", [n for n, m in METHODS.items() if _keywords(m)])
def test_each_method_makes_the_same_call_from_camel_case_keywords(name: str) -> None:
    method = METHODS[name]
    snake = {k: f"<{k}>" for k in _keywords(method)}
    camel = {camel_case(k): v for k, v in snake.items()}
    by_snake, by_camel = _sent(method, **snake), _sent(method, **camel)
    assert (by_camel.method, by_camel.params) == (by_snake.method, by_snake.params)
    params = by_snake.params
    reached = {by_snake.method, *(map(str, params.values()) if isinstance(params, dict) else [str(params)])}
    assert set(snake.values()) <= reached  # every keyword reached the call


@pytest.mark.parametrize("name", [n for n, m in METHODS.items() if any("_" in k for k in _keywords(m))])
def test_each_method_refuses_both_spellings_of_one_keyword_naming_both(name: str) -> None:
    method = METHODS[name]
    keyword = next(k for k in _keywords(method) if "_" in k)
    kwargs = {k: f"<{k}>" for k in _keywords(method)}
    refused = _refused(method, **kwargs, **{camel_case(keyword): "again"})
    assert f"{keyword!r} and its alias {camel_case(keyword)!r}" in str(refused)


@pytest.mark.parametrize("name", sorted(METHODS))
def test_each_method_refuses_an_unknown_keyword_naming_it(name: str) -> None:
    method = METHODS[name]
    kwargs = {k: f"<{k}>" for k in _keywords(method)}
    refused = _refused(method, **kwargs, surplus_option=1)
    assert "unexpected keyword argument 'surplus_option'" in str(refused)


def test_a_misspelt_keyword_is_refused_with_the_nearest_spelling() -> None:
    api = Recorder()
    snake = _refused(api.recall_agent_memory, identity="a", query_txt="deploys")
    assert str(snake) == (
        "recall_agent_memory() got an unexpected keyword argument 'query_txt' (did you mean 'query_text'?)"
    )
    camel = _refused(api.recall_agent_memory, identity="a", maxEntrys=3, tagz=["ops"])
    assert "'maxEntrys' (did you mean 'maxEntries'?), 'tagz' (did you mean 'tags'?)" in str(camel)


def test_the_handle_recalls_alike_by_either_spelling(tmp_path: Path) -> None:
    with Meta.builder().persistent_state(tmp_path / "state").agent_memory().build() as meta:
        for n in range(3):
            meta.remember_agent_memory("lead:main", title=f"Deploy {n}", body=f"Deploys need approval {n}.")
        by_snake = meta.recall_agent_memory("lead:main", query_text="deploys approval", max_entries=2)
        by_camel = meta.recall_agent_memory("lead:main", queryText="deploys approval", maxEntries=2)
        page = meta.list_agent_memory(identity="lead:main", tagsAny=["nope"])
    assert len(by_snake) == 2 and by_camel == by_snake
    assert page.records == ()


def test_the_builder_takes_agent_memory_options_in_either_spelling_nested_tables_too(
    tmp_path: Path,
) -> None:
    builder = (
        Meta.builder()
        .persistent_state(tmp_path / "state")
        .agent_memory(maxEntries=2, contentTrust={"untrustedTools": ["scrape_page"]})
    )
    with builder.build() as meta:
        for n in range(3):
            meta.remember_agent_memory("lead:main", title=f"Note {n}", body=f"Rule {n}.")
        recalled = meta.recall_agent_memory("lead:main", selection="always")
        session = meta.open_session("lead:main")
        verdict = session.tool_result(toolName="scrape_page")
    assert len(recalled) == 2
    assert verdict == {"trusted": False, "tainted": True}


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"max_entries": 4, "maxEntries": 4}, "'max_entries' and its alias 'maxEntries'"),
        (
            {"content_trust": {"untrusted_tools": ["a"], "untrustedTools": ["b"]}},
            "'content_trust.untrusted_tools' and its alias 'contentTrust.untrustedTools'",
        ),
    ],
    ids=["top-level", "nested"],
)
def test_the_builder_refuses_both_spellings_of_one_option_naming_both(
    options: dict[str, Any], named: str
) -> None:
    with pytest.raises(TypeError, match=named):
        Meta.builder().agent_memory(**options)


def test_the_builder_refuses_an_option_agent_memory_lacks_naming_it_as_given_with_the_nearest() -> None:
    with pytest.raises(ConfigError, match=r"'maxEntrys' \(did you mean 'maxEntries'\?\)"):
        Meta.builder().agent_memory(maxEntrys=4)
    with pytest.raises(ConfigError, match=r"'recal_timeout_ms' \(did you mean 'recall_timeout_ms'\?\)"):
        Meta.builder().agent_memory({"recal_timeout_ms": 100})


def test_a_builder_method_refuses_an_unknown_keyword_with_the_nearest_spelling() -> None:
    with pytest.raises(TypeError, match=r"persistent_state\(\) got .* 'pth' \(did you mean 'path'\?\)"):
        Meta.builder().persistent_state(pth="state")


def test_local_json_takes_its_endpoint_in_either_spelling_and_refuses_both() -> None:
    url = "http://127.0.0.1:9000"
    assert local_json(healthCheckEndpoint=url) == local_json(health_check_endpoint=url)
    with pytest.raises(TypeError, match="'health_check_endpoint' and its alias 'healthCheckEndpoint'"):
        local_json(health_check_endpoint=url, healthCheckEndpoint=url)
