"""Secret scanner benchmark: detection per class, false positives on ordinary text, scan cost.

Run: ``python benchmarks/secrets_scan.py`` (``--smoke``: the commit messages and package READMEs
only, fewer timing rounds). It prints:

- the detection rate of each secret class over the true-secret corpus
  (``tests/security/secrets_corpus/true_secrets.jsonl``: generated fakes in chat lines, notes,
  config snippets and stack traces, plain, split by zero-width characters and in fullwidth
  forms), and whether each was reported under the class it was written for;
- the false-positive rate on ordinary text, per source and with counts: the hand-written lines
  (``ordinary_written.txt``) and real text read from this machine by
  ``tests/security/secrets_corpus/collect.py`` (this repository's commit messages, the READMEs in
  installed Python distributions' METADATA, ``/usr/share/doc/*/README*``,
  ``/usr/share/doc/*/changelog*`` and the man pages), one paragraph a text; a refused paragraph
  of real text is printed with ``--show``;
- the scan cost of clean text (the machine's changelog paragraphs, none of which is refused),
  cut into 64 B, 256 B, 4 KiB and 64 KiB texts: ``scan_secrets`` beside a baseline measured in the
  same run, one ``re.search`` of a pattern that never matches over the same texts (the cost of
  reading the text once).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
import time
import timeit
from pathlib import Path

from rich.console import Console
from rich.table import Table

from meta_memory.memory.secrets import SECRET_CLASSES, scan_secrets

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "security" / "secrets_corpus"
sys.path.insert(0, str(CORPUS))
import collect  # noqa: E402  (the corpus's own reader of this machine's text)


def detection(console: Console) -> None:
    rows = [json.loads(line) for line in (CORPUS / "true_secrets.jsonl").read_text().splitlines()]
    found: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for row in rows:
        got = scan_secrets(row["text"])
        counts = found[row["class"]]
        counts[0] += 1
        counts[1] += got is not None
        counts[2] += got == row["class"]
    table = Table(title=f"Detection on the true-secret corpus ({len(rows)} texts)")
    for column in ("class", "texts", "refused", "as its class", "rate"):
        table.add_column(column, justify="left" if column == "class" else "right")
    for secret_class in SECRET_CLASSES:
        texts, refused, exact = found[secret_class]
        table.add_row(secret_class, str(texts), str(refused), str(exact), f"{refused / texts:.0%}")
    total = [sum(c[i] for c in found.values()) for i in range(3)]
    table.add_row("all", *map(str, total), f"{total[1] / total[0]:.1%}")
    console.print(table)
    variants = collections.Counter((row["variant"], scan_secrets(row["text"]) is not None) for row in rows)
    console.print(
        "by variant: "
        + ", ".join(
            f"{v} {variants[(v, True)]}/{variants[(v, True)] + variants[(v, False)]}"
            for v in ("plain", "zero-width", "fullwidth")
        )
    )


def false_positives(console: Console, sources: list[str], show: bool) -> None:
    table = Table(title="False positives on ordinary text (a paragraph a text; written: a line a text)")
    for column in ("source", "texts", "refused", "rate", "by class"):
        table.add_column(column, justify="left" if column in ("source", "by class") else "right")
    written = [line for line in (CORPUS / "ordinary_written.txt").read_text().splitlines() if line.strip()]
    refused = [scan_secrets(line) for line in written]
    hits = collections.Counter(c for c in refused if c)
    table.add_row("written (development set)", str(len(written)), str(sum(hits.values())),
                  f"{sum(hits.values()) / len(written):.2%}", ", ".join(f"{k} {v}" for k, v in hits.items()))  # fmt: skip
    shown: list[str] = []
    for source in sources:
        n = 0
        hits = collections.Counter()
        for _, path, text in collect.SOURCES[source]():
            n += 1
            found = scan_secrets(text)
            if found is not None:
                hits[found] += 1
                shown.append(f"[{found}] {path}: {text[:160]!r}")
        rate = f"{sum(hits.values()) / n:.3%}" if n else "-"
        table.add_row(
            source, f"{n:,}", str(sum(hits.values())), rate, ", ".join(f"{k} {v}" for k, v in hits.items())
        )
    console.print(table)
    if show:
        for line in shown:
            console.print(line, markup=False, highlight=False)


def scan_cost(console: Console, rounds: int) -> None:
    clean = "\n\n".join(t for _, _, t in collect.changelogs() if scan_secrets(t) is None)
    baseline = re.compile(r"\x00never\x00")
    table = Table(title="Scan cost of clean text (changelog paragraphs), best of rounds")
    for column in (
        "text size",
        "texts",
        "scan_secrets µs/text",
        "µs/KiB",
        "baseline µs/text",
        "µs/KiB",
        "ratio",
    ):
        table.add_column(column, justify="right")
    for size in (64, 256, 4096, 65536):
        n = max(30, min(3000, 3_000_000 // size))
        texts = [clean[i : i + size] for i in range(0, n * size, size)]
        texts = [t for t in texts if scan_secrets(t) is None]  # a cut may glue two paragraphs' halves
        scan = min(
            timeit.repeat(lambda texts=texts: [scan_secrets(t) for t in texts], number=1, repeat=rounds)
        )
        base = min(
            timeit.repeat(lambda texts=texts: [baseline.search(t) for t in texts], number=1, repeat=rounds)
        )
        per, per_base = scan / len(texts) * 1e6, base / len(texts) * 1e6
        kib = size / 1024
        table.add_row(f"{size:,} B", f"{len(texts):,}", f"{per:.2f}", f"{per / kib:.1f}", f"{per_base:.2f}",
                      f"{per_base / kib:.2f}", f"{per / per_base:.0f}x")  # fmt: skip
    console.print(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="commit messages and READMEs only, 2 timing rounds"
    )
    parser.add_argument("--show", action="store_true", help="print every refused paragraph of real text")
    args = parser.parse_args()
    console = Console()
    started = time.perf_counter()
    detection(console)
    sources = ["git", "metadata"] if args.smoke else list(collect.SOURCES)
    false_positives(console, sources, args.show)
    scan_cost(console, 2 if args.smoke else 5)
    console.print(f"done in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
