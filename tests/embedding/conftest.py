"""Loaded embedders, one per supported model, shared by the module's tests (a load takes ~0.5 s)."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory.memory.embedding import MODELS, OnnxEmbedder, load_embedder
from meta_memory.memory.embedding.static_embedder import StaticEmbedder

_loaded: dict[str, Any] = {}


def loaded(model_id: str) -> Any:
    """The model's embedder: an OnnxEmbedder, or the StaticEmbedder distilled from one."""
    if model_id not in _loaded:
        embedder = load_embedder(model_id)
        assert isinstance(embedder, (OnnxEmbedder, StaticEmbedder))
        _loaded[model_id] = embedder
    return _loaded[model_id]


@pytest.fixture(params=sorted(MODELS))
def embedder(request: pytest.FixtureRequest) -> OnnxEmbedder:
    """Each supported model in turn."""
    return loaded(request.param)


@pytest.fixture
def minilm() -> OnnxEmbedder:
    return loaded("all-minilm-l6-v2-int8")


@pytest.fixture
def minilm_dynamic() -> OnnxEmbedder:
    """MiniLM's int8 weights run with int8 activations (a graph derived at load)."""
    return loaded("all-minilm-l6-v2-int8-dynamic")


@pytest.fixture
def bge() -> OnnxEmbedder:
    return loaded("bge-small-en-v1.5-int8")
