"""Every public class, method and function the package exports is documented, with the sections its
signature needs: ``Args:`` naming each parameter beyond ``self``, ``Returns:`` unless it returns
``None``. (``help(meta_memory.Meta)`` is the first reference a user reads.)"""

from __future__ import annotations

import dataclasses
import inspect
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import meta_memory


def _exported() -> Iterator[Any]:
    for name in meta_memory.__all__:
        value = getattr(meta_memory, name)
        if inspect.isclass(value) and issubclass(value, BaseException):
            continue  # the error tree is documented in errors.py's docstring and docs/errors.md
        if inspect.isclass(value) or inspect.isfunction(value):
            yield value


def _ours(cls: type) -> Iterator[type]:
    return (base for base in cls.__mro__ if base.__module__.startswith("meta_memory"))


def _members() -> dict[str, Callable[..., Any] | property]:
    """Each public function, method and property reachable from the exports, by qualified name."""
    found: dict[str, Callable[..., Any] | property] = {}
    for value in _exported():
        if inspect.isfunction(value):
            found[value.__name__] = value
            continue
        found[value.__name__] = value  # the class itself: its docstring
        for name in sorted({n for base in _ours(value) for n in vars(base)}):
            if name.startswith("_"):
                continue
            owner = next(base for base in _ours(value) if name in vars(base))
            raw = vars(owner)[name]
            if isinstance(raw, staticmethod | classmethod):
                raw = raw.__func__
            if isinstance(raw, property) or callable(raw):
                found[f"{owner.__name__}.{name}"] = raw
    return found


MEMBERS = _members()


def _section(doc: str, title: str) -> str | None:
    match = re.search(rf"^{title}:\n((?:[ \t]+\S.*\n?|\n)+)", doc, flags=re.MULTILINE)
    return match.group(1) if match else None


def test_the_walk_reaches_the_handle_the_session_the_console_the_clients_and_the_results() -> None:
    for name in (
        "Meta.builder",
        "MetaBuilder.agent_memory",
        "MetaHandle.console_as",
        "MetaApi.recall_agent_memory",
        "AsyncMetaApi.list_agent_memory",
        "Session.tool_result",
        "AsyncSession.memory_tool",
        "Console.decide",
        "AsyncConsole.quarantine",
        "MetaClient.connect",
        "AsyncMetaClient.spawn",
        "AgentMemoryEntry.from_wire",
        "MemoryToolResult",
        "local_json",
    ):
        assert name in MEMBERS, name
    assert len(MEMBERS) > 100


@pytest.mark.parametrize("name", sorted(MEMBERS))
def test_each_public_member_has_a_docstring_with_the_sections_its_signature_needs(name: str) -> None:
    member = MEMBERS[name]
    doc = inspect.getdoc(member)
    assert doc and doc.strip(), f"{name} has no docstring"
    if isinstance(member, property) or inspect.isclass(member):
        return
    signature = inspect.signature(member)
    params = [p.name for p in signature.parameters.values() if p.name not in ("self", "cls")]
    if params:
        args = _section(doc, "Args")
        assert args is not None, f"{name} takes {params} but its docstring has no Args section"
        for param in params:
            assert re.search(rf"^\s+\**{param}:", args, flags=re.MULTILINE), f"{name}: Args omits {param}"
    returns = signature.return_annotation
    if returns not in ("None", None, inspect.Signature.empty):
        assert _section(doc, "Returns") is not None, f"{name} returns {returns} without a Returns section"


def test_a_bound_method_shows_its_own_parameters_and_its_result_type() -> None:
    """``help(handle.recall_agent_memory)`` shows ``identity`` first and the typed result, not the
    operation's ``Call``."""
    recall = inspect.signature(meta_memory.MetaApi().recall_agent_memory)
    assert list(recall.parameters)[:2] == ["identity", "realm"]
    assert recall.return_annotation == "list[AgentMemoryRecord]"


@pytest.mark.parametrize(
    "cls", [c for c in _exported() if dataclasses.is_dataclass(c)], ids=lambda c: c.__name__
)
def test_each_result_type_names_every_field_in_its_attributes(cls: type) -> None:
    attributes = _section(inspect.getdoc(cls) or "", "Attributes")
    assert attributes is not None, f"{cls.__name__} has no Attributes section"
    own = [f.name for f in dataclasses.fields(cls) if f.name in inspect.get_annotations(cls)]
    for field in own:
        assert re.search(rf"^\s+{field}:", attributes, flags=re.MULTILINE), f"{cls.__name__}: {field}"


def test_every_exported_error_class_says_what_it_stands_for() -> None:
    errors = [
        value
        for value in (getattr(meta_memory, name) for name in meta_memory.__all__)
        if inspect.isclass(value) and issubclass(value, BaseException)
    ]
    assert errors
    undocumented = [cls.__name__ for cls in errors if not (cls.__dict__.get("__doc__") or "").strip()]
    assert undocumented == []
