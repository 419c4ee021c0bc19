"""Loaded embedders, one per supported model and runtime, shared by the module's tests (a load
takes ~0.5 s). Every model runs on both runtimes: numpy (the `semantic` extra) and onnxruntime
(`semantic-fast`, which the test extra installs)."""

from __future__ import annotations

from typing import Any

import pytest

from meta_memory.memory.embedding import MODELS, OnnxEmbedder, load_embedder
from meta_memory.memory.embedding.static_embedder import StaticEmbedder

RUNTIMES = ("numpy", "onnxruntime")

_loaded: dict[tuple[str, str], Any] = {}


def loaded(model_id: str, runtime: str = "numpy") -> Any:
    """The model's embedder on ``runtime``: an OnnxEmbedder, or the StaticEmbedder distilled from one."""
    key = (model_id, runtime)
    if key not in _loaded:
        embedder = load_embedder(model_id, runtime=runtime)  # type: ignore[arg-type]
        assert isinstance(embedder, (OnnxEmbedder, StaticEmbedder))
        _loaded[key] = embedder
    return _loaded[key]


@pytest.fixture(params=RUNTIMES)
def runtime(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(params=sorted(MODELS))
def embedder(request: pytest.FixtureRequest, runtime: str) -> OnnxEmbedder:
    """Each supported model in turn, on each runtime."""
    return loaded(request.param, runtime)


@pytest.fixture
def minilm(runtime: str) -> OnnxEmbedder:
    return loaded("all-minilm-l6-v2-int8", runtime)


@pytest.fixture
def minilm_dynamic(runtime: str) -> OnnxEmbedder:
    """MiniLM's int8 weights run with int8 activations (derived at load)."""
    return loaded("all-minilm-l6-v2-int8-dynamic", runtime)


@pytest.fixture
def bge(runtime: str) -> OnnxEmbedder:
    return loaded("bge-small-en-v1.5-int8", runtime)
