"""Adapters that let agent frameworks keep their long-term memory in meta_memory.

Each adapter is a module of its own that imports its framework, installed through the extra of the
same name: :mod:`meta_memory.integrations.langgraph` (``pip install 'meta-memory[langgraph]'``) is
LangGraph's ``BaseStore``. Adapters program against the typed API (:class:`~meta_memory.api.MetaApi`),
so they work over the in-process handle and the clients alike.
"""

from __future__ import annotations

__all__: list[str] = []
