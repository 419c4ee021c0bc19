"""The public surface of the embedding package is pinned."""

from __future__ import annotations

import meta_memory.memory.embedding as embedding


def test_embedding_package_exports_exactly_its_public_api() -> None:
    assert sorted(embedding.__all__) == [
        "BACKGROUND_NICE",
        "DEFAULT_MODEL",
        "Embedder",
        "EmbedderUnavailable",
        "INSTALL_HINT",
        "Locate",
        "MODELS",
        "ModelSpec",
        "OnnxEmbedder",
        "PackagedFile",
        "Runtime",
        "installed_path",
        "load_embedder",
        "runtime_available",
    ]
    assert all(hasattr(embedding, name) for name in embedding.__all__)
    assert embedding.DEFAULT_MODEL in embedding.MODELS
