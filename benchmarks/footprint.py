"""What hybrid recall costs to install and to hold: disk, memory, model load time.

Run: ``python benchmarks/footprint.py [--records 2000] [--model ID] [--extras E,E] [--keep]`` from the repository
root (needs the package index, as ``pip install`` does). It builds this checkout's wheel and
installs it into four fresh venvs: without extras (the baseline), with ``[semantic]`` (the numpy
runtime), ``[semantic-fast]`` (onnxruntime) and ``[semantic-bge]``. For each it prints:

- the venv's size on disk and what the extra adds to the baseline, with the largest
  distributions it brought, and whether a model-hub client (``huggingface-hub``, ``hf-xet``) came
  with it;
- in the venvs of ``--extras`` (default ``semantic,semantic-fast``; bge's model ships with
  ``semantic-bge``): the model's load time (a fresh process each
  time, the files' hashes checked, median of 5), and the peak resident memory (``VmHWM``) of
  ``meta_gateway serve`` and of its indexing process after ``--records`` records were remembered
  and embedded, beside the same gateway with ``recall = "lexical"`` (the baseline, same records,
  same run).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HUB_CLIENTS = ("huggingface-hub", "huggingface_hub", "hf-xet", "hf_xet")


def run(argv: list[str], cwd: Path | None = None) -> str:
    done = subprocess.run(argv, check=False, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"failed: {' '.join(argv)}")
    return done.stdout


def size_of(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def distributions(venv: Path) -> dict[str, int]:
    """Each installed distribution's bytes on disk (its RECORD's files)."""
    script = (
        "import importlib.metadata as m, json, os\n"
        "out = {}\n"
        "for d in m.distributions():\n"
        "    total = 0\n"
        "    for f in d.files or []:\n"
        "        p = d.locate_file(f)\n"
        "        total += os.path.getsize(p) if os.path.isfile(p) else 0\n"
        "    out[d.metadata['Name']] = total\n"
        "print(json.dumps(out))\n"
    )
    return dict(json.loads(run([str(venv / "bin" / "python"), "-c", script])))


def venv_with(work: Path, name: str, requirement: str) -> Path:
    venv = work / name
    run([sys.executable, "-m", "venv", str(venv)])
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", requirement])
    return venv


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def rpc(base: str, method: str, params: dict[str, object]) -> dict[str, object]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    request = urllib.request.Request(f"{base}/rpc", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as reply:
        answer = json.load(reply)
    if "error" in answer:
        raise SystemExit(f"{method}: {answer['error']}")
    result: dict[str, object] = answer["result"]
    return result


def peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        for child in map(int, text):
            found.extend([child, *children(child)])
    return found


def serve_and_measure(venv: Path, work: Path, recall: str, model: str, records: int) -> tuple[int, int]:
    """Peak RSS (KiB) of the gateway and of its child processes after ``records`` remembers."""
    work.mkdir(parents=True, exist_ok=True)
    state = work / f"state-{recall}"
    config = work / f"{recall}.toml"
    extra = f'embedding_model = "{model}"\n' if recall == "hybrid" else ""
    config.write_text(f'[memory]\nkind = "local_json"\n\n[agent_memory]\nrecall = "{recall}"\n{extra}')
    port = free_port()
    gateway = subprocess.Popen(
        [
            str(venv / "bin" / "meta_gateway"),
            "serve",
            "--state-dir",
            str(state),
            "--config",
            str(config),
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{base}/v1/health", timeout=5):
                    break
            except OSError:
                if gateway.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("the gateway did not come up") from None
                time.sleep(0.2)
        for i in range(records):
            rpc(
                base,
                "meta/agent_memory/remember",
                {
                    "identity": "agent:bench",
                    "title": f"Note {i}",
                    "body": f"Record {i}: the deploy runbook step {i % 97}.",
                },
            )
        for _ in range(600):
            result = rpc(
                base,
                "meta/agent_memory/recall",
                {
                    "identity": "agent:bench",
                    "query_text": "deploy runbook",
                    "wait_for_vectors": recall == "hybrid",
                },
            )
            if not result.get("vectors_behind"):
                break
        kids = children(gateway.pid)
        return peak_rss_kib(gateway.pid), max((peak_rss_kib(pid) for pid in kids), default=0)
    finally:
        gateway.terminate()
        gateway.wait(timeout=60)


def load_times(venv: Path, model: str, repeat: int = 5) -> list[float]:
    script = (
        "import time\nfrom meta_memory.memory.embedding import load_embedder\n"
        f"t0 = time.perf_counter(); e = load_embedder({model!r}); e.embed(['warm'])\n"
        "print(time.perf_counter() - t0)\n"
    )
    return [float(run([str(venv / "bin" / "python"), "-c", script])) for _ in range(repeat)]


def mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--model", default="all-minilm-l6-v2-int8-dynamic")
    parser.add_argument("--keep", action="store_true", help="keep the venvs (printed)")
    parser.add_argument(
        "--extras",
        default="semantic,semantic-fast",
        help="the extras whose venvs load the model and serve hybrid recall (bge: semantic-bge)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="meta-footprint-"))
    try:
        run(
            [
                sys.executable,
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "-w",
                str(work / "dist"),
                str(ROOT),
            ]
        )
        (wheel,) = (work / "dist").glob("*.whl")
        venvs = {
            "base": venv_with(work, "base", str(wheel)),
            "semantic": venv_with(work, "semantic", f"{wheel}[semantic]"),
            "semantic-fast": venv_with(work, "semantic-fast", f"{wheel}[semantic-fast]"),
            "semantic-bge": venv_with(work, "semantic-bge", f"{wheel}[semantic-bge]"),
        }
        sizes = {name: size_of(venv) for name, venv in venvs.items()}
        base_dists = distributions(venvs["base"])
        print(f"fresh venv with meta-memory (baseline): {mb(sizes['base'])}")
        for name in ("semantic", "semantic-fast", "semantic-bge"):
            dists = distributions(venvs[name])
            added = {d: n for d, n in dists.items() if d not in base_dists}
            hub = sorted(d for d in dists if d.lower() in HUB_CLIENTS)
            largest = ", ".join(f"{d} {mb(n)}" for d, n in sorted(added.items(), key=lambda kv: -kv[1])[:8])
            print(f"[{name}] adds {mb(sizes[name] - sizes['base'])} ({len(added)} distributions: {largest})")
            print(f"[{name}] model-hub client installed: {', '.join(hub) if hub else 'none'}")
        lexical = serve_and_measure(venvs["semantic"], work, "lexical", args.model, args.records)
        print(
            f"peak RSS after {args.records:,} records, lexical: gateway {lexical[0] / 1024:.0f} MiB, "
            f"indexing process {lexical[1] / 1024:.0f} MiB"
        )
        for name in args.extras.split(","):
            times = load_times(venvs[name], args.model)
            print(
                f"[{name}] model load ({args.model}, fresh process, hashes checked): "
                f"median {statistics.median(times):.2f} s"
            )
            hybrid = serve_and_measure(venvs[name], work / name, "hybrid", args.model, args.records)
            print(
                f"[{name}] peak RSS after {args.records:,} records, hybrid: gateway "
                f"{hybrid[0] / 1024:.0f} MiB, indexing process {hybrid[1] / 1024:.0f} MiB"
            )
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    main()
