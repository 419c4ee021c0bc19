"""What the two embedding runtimes cost: numpy (the `semantic` extra) against onnxruntime
(`semantic-fast`), the same model file, in the same run.

Run: ``python benchmarks/embedding_runtime.py [--model ID] [--records 1000] [--queries 300]`` with
both runtimes installed (the test extra installs them). For each runtime it prints:

- model load: a fresh process, the files' hashes checked, one text embedded (median of 3);
- query latency: p50 / p99 of one query embedded at a time (``embed_queries``), each text new;
- record throughput: ``--records`` chat-like records of 5 to 60 words in one call
  (``embed_documents``), on one thread and on every core (``parallel``), median of 3;
- and each figure's ratio to onnxruntime's.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time

WORDS = [
    "I",
    "we",
    "you",
    "she",
    "he",
    "they",
    "my",
    "our",
    "the",
    "a",
    "an",
    "to",
    "of",
    "in",
    "on",
    "at",
    "for",
    "with",
    "about",
    "from",
    "after",
    "before",
    "met",
    "moved",
    "started",
    "finished",
    "booked",
    "cancelled",
    "bought",
    "sold",
    "fixed",
    "broke",
    "visited",
    "called",
    "asked",
    "told",
    "sister",
    "brother",
    "mother",
    "father",
    "friend",
    "neighbour",
    "doctor",
    "dentist",
    "manager",
    "team",
    "client",
    "landlord",
    "dog",
    "cat",
    "garden",
    "kitchen",
    "office",
    "flat",
    "car",
    "bike",
    "train",
    "flight",
    "hotel",
    "restaurant",
    "bakery",
    "gym",
    "school",
    "Monday",
    "Tuesday",
    "Friday",
    "weekend",
    "morning",
    "evening",
    "March",
    "June",
    "October",
    "birthday",
    "wedding",
    "holiday",
    "budget",
    "invoice",
    "refund",
    "deploy",
    "release",
    "database",
    "backup",
    "meeting",
    "report",
    "deadline",
    "interview",
    "Lisbon",
    "Oslo",
    "Paris",
    "Tokyo",
    "Denver",
    "Berlin",
    "harbour",
    "museum",
    "park",
    "lake",
    "mountain",
    "beach",
    "coffee",
    "tea",
    "pasta",
    "salad",
    "chocolate",
    "peanuts",
    "vegetarian",
    "allergic",
    "tired",
    "happy",
    "worried",
    "excited",
]


def texts(count: int, seed: int, low: int = 5, high: int = 60) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).capitalize() + "."
        for _ in range(count)
    ]


def load_time(model: str, runtime: str) -> float:
    script = (
        "import time\nfrom meta_memory.memory.embedding import load_embedder\n"
        f"t0 = time.perf_counter(); e = load_embedder({model!r}, runtime={runtime!r}); e.embed(['warm'])\n"
        "print(time.perf_counter() - t0)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    return float(out.stdout)


def main() -> None:
    from meta_memory.memory.embedding import DEFAULT_MODEL, load_embedder

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--records", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    results: dict[str, dict[str, float]] = {}
    for runtime in ("onnxruntime", "numpy"):
        loads = [load_time(args.model, runtime) for _ in range(3)]
        serial = load_embedder(args.model, runtime=runtime)  # type: ignore[arg-type]
        parallel = load_embedder(args.model, runtime=runtime, parallel=cores)  # type: ignore[arg-type]
        queries = texts(args.queries, seed=1, low=4, high=14)
        serial.embed_queries(queries[:5])  # warm
        latencies = []
        for query in queries:
            started = time.perf_counter()
            serial.embed_queries([query])
            latencies.append(time.perf_counter() - started)
        latencies.sort()
        rates: dict[str, list[float]] = {"one thread": [], f"{cores} threads": []}
        for attempt in range(3):
            records = texts(args.records, seed=100 + attempt)
            for name, embedder in (("one thread", serial), (f"{cores} threads", parallel)):
                started = time.perf_counter()
                embedder.embed_documents(records)
                rates[name].append(args.records / (time.perf_counter() - started))
        results[runtime] = {
            "load_s": statistics.median(loads),
            "query_p50_ms": latencies[len(latencies) // 2] * 1e3,
            "query_p99_ms": latencies[int(len(latencies) * 0.99)] * 1e3,
            **{f"records_per_s ({name})": statistics.median(r) for name, r in rates.items()},
        }
    print(
        f"model {args.model}, {args.records:,} records of 5-60 words, {args.queries} queries, {cores} cores"
    )
    base = results["onnxruntime"]
    for key in base:
        ours = results["numpy"][key]
        print(
            f"{key:32} onnxruntime {base[key]:9.2f}   numpy {ours:9.2f}   numpy/onnxruntime {ours / base[key]:.2f}x"
        )


if __name__ == "__main__":
    main()
