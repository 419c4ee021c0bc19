"""``MetaStore`` as LangGraph itself uses it: a compiled ``StateGraph`` whose nodes read and write
memories through the injected store, driven by a scripted fake chat model (no network), in
process, through a real ``meta_gateway stdio`` child (sync and async clients), and the runnable
example as a subprocess."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langgraph.config import get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from meta_memory import Meta, MetaHandle
from meta_memory.client import AsyncMetaClient, MetaClient
from meta_memory.integrations.langgraph import STORE_TAG, MetaStore

from .conftest import DEADLINE_S

ROOT = Path(__file__).resolve().parents[2]
USER = "user-7"
PREFS = (USER, "preferences")


def save_call(topic: str, preference: str) -> AIMessage:
    return AIMessage(
        "", tool_calls=[{"name": "save", "args": {"topic": topic, "preference": preference}, "id": "c1"}]
    )


def chat_graph(model: GenericFakeChatModel, store: BaseStore, prompts: list[str]) -> Any:
    """One node: recall by the user's message, ask the model, save what it asks to save."""

    def chat(state: MessagesState, *, store: BaseStore) -> dict[str, list[BaseMessage]]:
        recalled = store.search(PREFS, query=str(state["messages"][-1].content), limit=5)
        prompts.append("\n".join(item.value["preference"] for item in recalled))
        reply = model.invoke([SystemMessage(prompts[-1]), *state["messages"]])
        for call in reply.tool_calls:  # type: ignore[attr-defined]
            store.put(PREFS, call["args"]["topic"], {"preference": call["args"]["preference"]})
        return {"messages": [reply]}

    graph = StateGraph(MessagesState)
    graph.add_node("chat", chat)
    graph.add_edge(START, "chat")
    graph.add_edge("chat", END)
    return graph.compile(store=store)


def model(*replies: AIMessage | str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter(replies))


def remember_then_recall(store: BaseStore, invoke: Callable[[Any, str], Any]) -> list[str]:
    prompts: list[str] = []
    invoke(
        chat_graph(model(save_call("diet", "Vegetarian food only")), store, prompts),
        "I only eat vegetarian food.",
    )
    invoke(chat_graph(model("Try a lentil curry."), store, prompts), "Which food should I cook tonight?")
    return prompts


def test_a_graph_node_reads_and_writes_memories_through_the_injected_store(meta: MetaHandle) -> None:
    prompts = remember_then_recall(MetaStore(meta), lambda g, text: g.invoke({"messages": [("user", text)]}))
    assert prompts == ["", "Vegetarian food only"]
    [record] = meta.list_agent_memory(USER, tags_all=[STORE_TAG]).records
    assert record.title == "preference: Vegetarian food only"
    assert record.author == {"author": "application"}


def test_an_async_graph_node_uses_the_store_from_get_store(meta: MetaHandle) -> None:
    store = MetaStore(meta)

    async def note(state: MessagesState) -> dict[str, list[BaseMessage]]:
        here = get_store()
        seen = await here.asearch(PREFS, query=str(state["messages"][-1].content))
        await here.aput(PREFS, "drink", {"preference": "Green tea in the morning"})
        return {"messages": [AIMessage(f"seen {len(seen)}")]}

    graph = StateGraph(MessagesState)
    graph.add_node("note", note)
    graph.add_edge(START, "note")
    graph.add_edge("note", END)
    app = graph.compile(store=store)

    async def scenario() -> list[str]:
        first = await app.ainvoke({"messages": [("user", "what tea do I drink?")]})
        second = await app.ainvoke({"messages": [("user", "what tea do I drink?")]})
        return [str(first["messages"][-1].content), str(second["messages"][-1].content)]

    assert asyncio.run(scenario()) == ["seen 0", "seen 1"]
    item = store.get(PREFS, "drink")
    assert item is not None and item.value == {"preference": "Green tea in the morning"}


def test_the_store_over_a_spawned_stdio_client(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with MetaClient.spawn(state_dir=state, timeout=DEADLINE_S) as client:
        store = MetaStore(client)
        store.put((USER, "notes"), "n1", {"text": "the boiler needs a service", "room": "cellar"})
        store.put((USER, "notes", "old"), "n2", {"text": "the boiler was replaced", "room": "cellar"})
        store.put((USER, "notes"), "n1", {"text": "the boiler was serviced in May", "room": "cellar"})
        item = store.get((USER, "notes"), "n1")
        assert item is not None and item.value["text"] == "the boiler was serviced in May"
        hits = store.search((USER, "notes"), query="when was the boiler serviced?", filter={"room": "cellar"})
        assert [(h.key, h.score) for h in hits][:1] == [("n1", 1.0)]
        assert {h.key for h in hits} == {"n1", "n2"}
        assert store.list_namespaces(prefix=(USER,), max_depth=2) == [(USER, "notes")]
        store.delete((USER, "notes", "old"), "n2")
        assert store.list_namespaces(prefix=(USER,)) == [(USER, "notes")]
        prompts = remember_then_recall(store, lambda g, text: g.invoke({"messages": [("user", text)]}))
        assert prompts == ["", "Vegetarian food only"]
    with Meta.builder().persistent_state(state).memory().agent_memory().build() as meta:  # on disk
        again = MetaStore(meta)
        assert [i.key for i in again.search((USER,), limit=10)] == ["diet", "n1"]


def test_the_store_over_an_async_stdio_client(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        client = await AsyncMetaClient.spawn(state_dir=tmp_path / "state", timeout=DEADLINE_S)
        try:
            store = MetaStore(client)
            await store.aput(PREFS, "diet", {"preference": "Vegetarian food only"})
            await store.aput(PREFS, "diet", {"preference": "Vegan food only"})
            item = await store.aget(PREFS, "diet")
            assert item is not None and item.value == {"preference": "Vegan food only"}
            assert [h.key for h in await store.asearch((USER,), query="vegan food")] == ["diet"]
            assert await store.alist_namespaces(prefix=(USER,)) == [PREFS]
            with pytest.raises(RuntimeError, match="async methods"):
                store.get(PREFS, "diet")  # a blocking call on the client's own loop
            await store.adelete(PREFS, "diet")
            assert await store.aget(PREFS, "diet") is None
            # A sync node of a graph run with ainvoke runs in a worker thread: its sync store
            # calls are served on the client's loop.
            prompts: list[str] = []
            for graph_model, text in [
                (model(save_call("diet", "Vegetarian food only")), "I only eat vegetarian food."),
                (model("Try a lentil curry."), "Which food should I cook tonight?"),
            ]:
                await chat_graph(graph_model, store, prompts).ainvoke({"messages": [("user", text)]})
            return prompts
        finally:
            await client.close()

    assert asyncio.run(scenario()) == ["", "Vegetarian food only"]


def test_the_example_remembers_in_one_run_and_recalls_in_the_next(tmp_path: Path) -> None:
    state = tmp_path / "state"
    argv = [sys.executable, str(ROOT / "examples" / "langgraph_memory.py"), "--state-dir", str(state)]
    outputs = [
        subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=DEADLINE_S, check=True).stdout
        for _ in range(2)
    ]
    run_1, run_2 = outputs[0].split("== run 2")
    assert "recalled: nothing" in run_1
    assert "saved: Vegetarian food, and no peanuts (topic diet)" in run_1
    assert "recalled: Vegetarian food, and no peanuts (topic diet, score 1.00)" in run_2
    assert "recalled: nothing" not in run_2
    # The second invocation already knows the preference; saving it again writes nothing.
    assert "recalled: Vegetarian food, and no peanuts" in outputs[1].split("== run 2")[0]
    with Meta.builder().persistent_state(state).memory().agent_memory().build() as meta:
        page = meta.list_agent_memory("user-42", tags_all=[STORE_TAG], status="any")
        assert [r.status for r in page.records] == ["active"]
