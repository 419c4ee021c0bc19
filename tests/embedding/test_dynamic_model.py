"""The dynamically quantized MiniLM (``all-minilm-l6-v2-int8-dynamic``, a graph derived at load from
the pinned int8 file): its vectors stay close to the float-activation model's and to
sentence-transformers' float32 reference, a text's vector is the same bit for bit however many
texts share its call and however many threads run them (on either runtime), the threads that run a
call's batches sit at the niceness asked for, and without onnxruntime or onnx the model runs on
numpy, while asking for onnxruntime by name is refused with the extra to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from meta_memory.memory.embedding import (
    BACKGROUND_NICE,
    DEFAULT_MODEL,
    MODELS,
    OnnxEmbedder,
    load_embedder,
)

DYNAMIC = "all-minilm-l6-v2-int8-dynamic"
REFERENCE = Path(__file__).with_name("minilm_fp32_reference.json")

# Varied on purpose: short and long, questions and facts, code, numbers, non-ASCII, near-empty.
TEXTS = [
    "What food should I avoid cooking for them?",
    "She is vegetarian and allergic to peanuts.",
    "Who signs off on releases?",
    "Deploy approval comes from Priya on the SRE team.",
    "Grandma lives in Lisbon and visits every summer.",
    "The cat needs her thyroid medication twice a day.",
    "Jake broke his wrist skiing in January.",
    "Tom prefers tea over coffee at breakfast.",
    "My landlord raised the rent by eight percent.",
    "The quarterly budget review moves to Friday at 3pm.",
    "Backups of the staging database run nightly at 02:00 UTC and are kept for 14 days.",
    "def retry(fn, attempts=3): return fn() if attempts == 1 else retry(fn, attempts - 1)",
    "SELECT doc, v FROM vectors WHERE scope_id = ? ORDER BY doc",
    "ok",
    "?",
    "The office plant number 7 needs water on Mondays.",
    "Café naïve résumé, 東京, 🙂 and a tab\tand a newline\n.",
    "Error 503: upstream connect error or disconnect/reset before headers.",
    "I'd rather we didn't schedule meetings before ten in the morning.",
    "The invoice for March (#4471) was paid twice; ask finance for a refund.",
    "Password rotation is due every ninety days for the admin accounts.",
    "Our flight to Oslo leaves Thursday; the hotel is near the harbour.",
    "He has been learning the cello for three years and practises daily.",
    "The kubernetes cluster autoscaler adds nodes when pods stay pending.",
    "Remember to bring the signed lease to the appointment on the 12th.",
    "The recipe calls for two cups of flour, one egg and a pinch of salt.",
    "Lena's birthday is on the fourth of July; she likes dark chocolate.",
    "Use semantic versioning: breaking changes bump the major version.",
    "The meeting notes say the launch slipped to the second quarter.",
    "Rain is expected all weekend, so the picnic moves indoors.",
    "A long note about release trains, freezes and hotfix branches. " * 12,
    "Version 2.3.1 fixed the memory leak in the websocket reconnect loop.",
    "The dog is scared of thunderstorms and hides under the bed.",
    "Quarterly taxes are due on the fifteenth; the accountant needs receipts.",
    "Never page the on-call engineer for warnings, only for critical alerts.",
    "The kids' school starts at 8:15 and the bus comes at 7:50.",
]


def test_it_is_offered_beside_the_default_and_the_float_activation_model_stays_available() -> None:
    assert DEFAULT_MODEL == "all-minilm-l6-v2-static-sif" and DYNAMIC in MODELS
    dynamic, plain = MODELS[DYNAMIC], MODELS["all-minilm-l6-v2-int8"]
    assert dynamic.onnx == plain.onnx and dynamic.vocab == plain.vocab  # derived, not another file
    assert (dynamic.derive, dynamic.max_batch) == ("dynamic_int8", 1)
    assert plain.derive is None


def test_its_vectors_are_close_to_the_float_activation_models(
    minilm_dynamic: OnnxEmbedder, minilm: OnnxEmbedder
) -> None:
    dynamic = minilm_dynamic.embed(TEXTS)
    plain = minilm.embed(TEXTS)
    cosines = (dynamic * plain).sum(axis=1)
    assert cosines.mean() >= 0.97, cosines.round(4)
    assert cosines.min() >= 0.95, cosines.round(4)  # measured: mean 0.9935, least 0.980
    # Not the same graph run twice: int8 activations move every vector a little.
    assert not np.array_equal(dynamic, plain)
    # Not a vacuous bound: unrelated texts are far apart under either model.
    assert float(dynamic[0] @ plain[11]) < 0.5


def test_its_vectors_match_the_sentence_transformers_float32_reference(
    minilm_dynamic: OnnxEmbedder,
) -> None:
    reference = json.loads(REFERENCE.read_text())
    expected = np.array(reference["vectors"], dtype=np.float32)
    vectors = minilm_dynamic.embed(reference["texts"])
    cosines = (vectors * expected).sum(axis=1)
    assert cosines.min() > 0.985, cosines  # 0.9917-0.9964 measured (the float-activation model: 0.9994)
    assert float(vectors[0] @ expected[2]) < 0.9


def test_a_texts_vector_is_the_same_bit_for_bit_alone_and_among_many(minilm_dynamic: OnnxEmbedder) -> None:
    together = minilm_dynamic.embed_documents(TEXTS)
    for i in (0, 13, 16, 30):  # a question, a two-letter text, non-ASCII, the longest
        assert np.array_equal(minilm_dynamic.embed_documents([TEXTS[i]])[0], together[i]), TEXTS[i]
    # In another company and order, too.
    shuffled = [TEXTS[30], TEXTS[0], TEXTS[13]]
    assert np.array_equal(minilm_dynamic.embed_documents(shuffled), together[[30, 0, 13]])


def test_parallel_threads_change_no_vector_bit_for_bit(runtime: str) -> None:
    serial = load_embedder(DYNAMIC, parallel=1, runtime=runtime)  # type: ignore[arg-type]
    parallel = load_embedder(DYNAMIC, parallel=3, runtime=runtime)  # type: ignore[arg-type]
    assert isinstance(parallel, OnnxEmbedder) and parallel.parallel == 3
    assert parallel.runtime == runtime
    texts = TEXTS[:18] + [text + " again" for text in TEXTS[:18]]
    expected = serial.embed_documents(texts)
    assert np.array_equal(parallel.embed_documents(texts), expected)
    assert np.array_equal(parallel.embed_queries(texts), serial.embed_queries(texts))
    # The float-activation model, batched several texts to a call, is parallel too.
    plain_serial = load_embedder("all-minilm-l6-v2-int8", batch_size=4, runtime=runtime)  # type: ignore[arg-type]
    plain_parallel = load_embedder("all-minilm-l6-v2-int8", batch_size=4, parallel=3, runtime=runtime)  # type: ignore[arg-type]
    assert np.array_equal(plain_parallel.embed(texts), plain_serial.embed(texts))


def _embed_threads() -> dict[int, threading.Thread]:
    return {t.native_id: t for t in threading.enumerate() if t.name.startswith("meta-embed") and t.native_id}


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread niceness is Linux's")
def test_a_calls_batches_run_on_parallel_threads_at_the_niceness_asked_for() -> None:
    own = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if own >= BACKGROUND_NICE:
        pytest.skip(f"the test process already runs at niceness {own}")
    before = set(_embed_threads())
    background = load_embedder(DYNAMIC, parallel=3, parallel_nice=BACKGROUND_NICE)
    background.embed_documents(TEXTS[:9])
    started = {tid: t for tid, t in _embed_threads().items() if tid not in before}
    assert len(started) == 3, sorted(t.name for t in started.values())
    assert {os.getpriority(os.PRIO_PROCESS, tid) for tid in started} == {BACKGROUND_NICE}
    # The caller's own thread keeps its priority.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == own
    # Without parallel_nice the threads run at the caller's niceness.
    before = set(_embed_threads())
    plain = load_embedder(DYNAMIC, parallel=2)
    plain.embed_documents(TEXTS[:4])
    started = {tid for tid in _embed_threads() if tid not in before}
    assert len(started) == 2
    assert {os.getpriority(os.PRIO_PROCESS, tid) for tid in started} == {own}


@pytest.mark.parametrize("parallel", [0, -1])
def test_parallel_below_one_is_refused(parallel: int) -> None:
    with pytest.raises(ValueError, match=rf"parallel must be at least 1, not {parallel}"):
        load_embedder(DYNAMIC, parallel=parallel)


_WITHOUT = """
import json, sys
for name in sys.argv[2:]:
    sys.modules[name] = None  # `import name` raises ImportError, as when it is not installed
from meta_memory.memory.embedding import EmbedderUnavailable, load_embedder
out = {"auto": load_embedder(sys.argv[1]).runtime}
out["plain"] = load_embedder("all-minilm-l6-v2-int8").runtime
out["shape"] = load_embedder(sys.argv[1]).embed(["hi"]).shape[1]
try:
    load_embedder(sys.argv[1], runtime="onnxruntime")
    out["refused"] = None
except EmbedderUnavailable as exc:
    out["refused"] = {"reason": exc.reason, "message": exc.message, "data": exc.data}
print(json.dumps(out))
"""


def _without(*modules: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT, DYNAMIC, *modules], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout)
    return out


def test_without_onnxruntime_every_model_runs_on_numpy_and_asking_for_it_names_the_extra() -> None:
    out = _without("onnxruntime", "onnx")
    assert (out["auto"], out["plain"], out["shape"]) == ("numpy", "numpy", 384)
    refused = out["refused"]
    assert isinstance(refused, dict) and refused["reason"] == "not_installed"
    assert "needs onnxruntime and onnx, which are not installed" in refused["message"]
    assert refused["message"].endswith("install them with: pip install 'meta-memory[semantic-fast]'")
    assert refused["data"]["distribution"] == "onnxruntime" and refused["data"]["model"] == DYNAMIC
    assert refused["data"]["extra"] == "semantic-fast"


def test_without_onnx_the_derived_model_runs_on_numpy_and_the_plain_one_on_onnxruntime() -> None:
    out = _without("onnx")
    assert (out["auto"], out["plain"], out["shape"]) == ("numpy", "onnxruntime", 384)
    refused = out["refused"]
    assert isinstance(refused, dict) and refused["reason"] == "not_installed"


def test_with_both_installed_auto_takes_onnxruntime() -> None:
    out = _without()
    assert (out["auto"], out["plain"], out["refused"]) == ("onnxruntime", "onnxruntime", None)
