"""A LangGraph agent that remembers a user's preference in one run and recalls it in the next.

Run it with ``python examples/langgraph_memory.py [--state-dir DIR]`` after
``pip install -e '.[langgraph]'``. No LLM and no network: each run's chat model is LangChain's
scripted ``GenericFakeChatModel``.

The graph is compiled with ``store=MetaStore(meta)``, LangGraph's long-term memory store over the
runtime's agent memory. Its ``recall`` node searches the user's preferences with the incoming
message (contextual recall, limited to the namespace ``(user_id, "preferences")``); the ``agent``
node puts what was recalled into the system prompt and asks the model; when the model calls
``save_preference``, the ``save`` node writes it with ``store.put``, keyed by topic, so a changed
preference replaces the old one. Between the two runs the runtime is closed and opened again on the same state dir, as a new
process would be: what the second run recalls came from disk.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.store.base import BaseStore

from meta_memory import Meta
from meta_memory.integrations.langgraph import MetaStore

USER_ID = "user-42"
NAMESPACE = (USER_ID, "preferences")


class State(MessagesState):
    memories: list[str]


def build_graph(model: GenericFakeChatModel, store: BaseStore, say: Callable[[str], None]) -> Any:
    def recall(state: State, *, store: BaseStore) -> dict[str, list[str]]:
        question = str(state["messages"][-1].content)
        recalled = store.search(NAMESPACE, query=question, limit=3)
        if not recalled:
            say("recalled: nothing")
        for item in recalled:
            say(f"recalled: {item.value['preference']} (topic {item.key}, score {item.score:.2f})")
        return {"memories": [item.value["preference"] for item in recalled]}

    def agent(state: State) -> dict[str, list[BaseMessage]]:
        known = "\n".join(f"- {memory}" for memory in state["memories"]) or "- nothing yet"
        system = SystemMessage(f"You are a cooking assistant. What you know about the user:\n{known}")
        reply = model.invoke([system, *state["messages"]])
        say(f"assistant: {reply.content}" if reply.content else "assistant: (calls save_preference)")
        return {"messages": [reply]}

    def save(state: State, *, store: BaseStore) -> dict[str, list[BaseMessage]]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        results: list[BaseMessage] = []
        for call in last.tool_calls:
            topic, preference = call["args"]["topic"], call["args"]["preference"]
            store.put(NAMESPACE, topic, {"preference": preference})
            say(f"saved: {preference} (topic {topic})")
            results.append(ToolMessage("saved", tool_call_id=call["id"] or topic))
        return {"messages": results}

    def route(state: State) -> str:
        last = state["messages"][-1]
        return "save" if isinstance(last, AIMessage) and last.tool_calls else END

    graph = StateGraph(State)
    graph.add_node("recall", recall)
    graph.add_node("agent", agent)
    graph.add_node("save", save)
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "agent")
    graph.add_conditional_edges("agent", route, ["save", END])
    graph.add_edge("save", "agent")
    return graph.compile(store=store)


def scripted(*messages: AIMessage | str) -> GenericFakeChatModel:
    replies: Iterator[AIMessage | str] = iter(messages)
    return GenericFakeChatModel(messages=replies)


def first_run() -> GenericFakeChatModel:
    save_call = {
        "name": "save_preference",
        "args": {"topic": "diet", "preference": "Vegetarian food, and no peanuts"},
        "id": "call-1",
    }
    return scripted(AIMessage("", tool_calls=[save_call]), "Noted: vegetarian, and no peanuts.")


def second_run() -> GenericFakeChatModel:
    return scripted("How about a mushroom risotto? It is vegetarian and peanut-free.")


def run(state_dir: Path, model: GenericFakeChatModel, message: str, say: Callable[[str], None]) -> None:
    with Meta.builder().persistent_state(state_dir).memory().agent_memory().build() as meta:
        graph = build_graph(model, MetaStore(meta), say)
        say(f"user: {message}")
        graph.invoke({"messages": [("user", message)]})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--state-dir", type=Path, help="where the runtime keeps its state (default: a temp dir)"
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        state_dir = args.state_dir or Path(scratch) / "state"
        print("== run 1")
        run(
            state_dir,
            first_run(),
            "Please remember: I eat vegetarian food and I am allergic to peanuts.",
            print,
        )
        print("== run 2 (the runtime opened again on the same state dir)")
        run(state_dir, second_run(), "What food should I cook for dinner tonight?", print)


if __name__ == "__main__":
    main()
