"""Real human text from this machine, in paragraphs: what the secret scanner must not refuse.

Sources, each a function yielding ``(source, path, paragraph)`` in a stable order:

- ``git``: the commit messages of this repository (``git log``);
- ``metadata``: the long descriptions in the METADATA of the installed Python distributions
  (their READMEs: API documentation, configuration, examples);
- ``readme``: ``/usr/share/doc/*/README*``;
- ``changelog``: ``/usr/share/doc/*/changelog*``;
- ``man``: ``/usr/share/man/man[1-8]/*.gz``, the roff markup stripped.

A paragraph is a run of lines between blank lines, 20 to 4,000 characters (10 for a commit
message). ``python tests/security/secrets_corpus/collect.py`` writes ``ordinary_machine.jsonl``:
every paragraph of the commit messages and the first 60 of the METADATA of each distribution
under a permissive licence (MIT, BSD, Apache, PSF, ISC), which the tests read; ``benchmarks/secrets_scan.py`` reads
every source from the machine itself.
"""

from __future__ import annotations

import email
import glob
import gzip
import json
import re
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Iterator
from pathlib import Path

OUT = Path(__file__).with_name("ordinary_machine.jsonl")
REPO = Path(__file__).resolve().parents[3]
Paragraphs = Iterator[tuple[str, str, str]]
_PERMISSIVE = re.compile(r"\b(MIT|BSD|Apache|PSF|Python Software Foundation|ISC)\b")
_OWN_DISTRIBUTION = "meta_memory-"
_PER_DISTRIBUTION = 60  # this project's README: not someone else's text


def paragraphs(text: str, shortest: int = 20, longest: int = 4000) -> Iterator[str]:
    for para in re.split(r"\n[ \t]*\n", text):
        para = para.strip("\n")
        if shortest <= len(para.strip()) and len(para) <= longest:
            yield para


def _read(path: str) -> str:
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                return f.read()
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except (OSError, EOFError):
        return ""


def git_messages() -> Paragraphs:
    log = subprocess.run(
        ["git", "-C", str(REPO), "log", "--format=%B%x00"], capture_output=True, text=True, check=False
    ).stdout
    for message in log.split("\x00"):
        for para in paragraphs(message, shortest=10):
            yield "git", "git log", para


def metadata(*, permissive_only: bool = False) -> Paragraphs:
    site = sysconfig.get_paths()["purelib"]
    for path in sorted(glob.glob(f"{site}/*.dist-info/METADATA")):
        if Path(path).parent.name.startswith(_OWN_DISTRIBUTION):
            continue
        message = email.message_from_string(_read(path))
        licence = " ".join(
            [message.get("License", "") or "", message.get("License-Expression", "") or ""]
            + [c for c in message.get_all("Classifier", []) if c.startswith("License ::")]
        )
        if permissive_only and not _PERMISSIVE.search(licence):
            continue
        body = message.get_payload()
        if isinstance(body, str):
            for para in paragraphs(body):
                yield "metadata", Path(path).parent.name, para


def readmes() -> Paragraphs:
    for path in sorted(glob.glob("/usr/share/doc/*/README*")):
        for para in paragraphs(_read(path)):
            yield "readme", path, para


def changelogs() -> Paragraphs:
    for path in sorted(glob.glob("/usr/share/doc/*/changelog*")):
        for para in paragraphs(_read(path)):
            yield "changelog", path, para


_ROFF_ESCAPE = re.compile(r"\\f[BIRP1-4]|\\\(..|\\[-&e|^]|\\s[-+]?\d")
_BREAKS = {".PP", ".P", ".LP", ".SH", ".SS", ".TP", ".IP", ".sp", ".br"}
_FONT_MACROS = {".B", ".I", ".BR", ".IR", ".RB", ".RI", ".BI", ".IB"}


def _man_text(roff: str) -> str:
    lines: list[str] = []
    for line in roff.splitlines():
        if line.startswith(('.\\"', "'\\\"")):
            continue
        if line.startswith("."):
            macro, _, rest = line.partition(" ")
            if macro in _BREAKS:
                lines.append("")
                if macro in (".SH", ".SS") and rest:
                    lines.append(rest)
            elif macro in _FONT_MACROS and rest:
                lines.append(rest.replace('"', ""))
            continue
        lines.append(_ROFF_ESCAPE.sub("", line))
    return "\n".join(lines)


def man_pages() -> Paragraphs:
    for path in sorted(glob.glob("/usr/share/man/man[1-8]/*.gz")):
        for para in paragraphs(_man_text(_read(path))):
            yield "man", path, para


SOURCES: dict[str, Callable[[], Paragraphs]] = {
    "git": git_messages,
    "metadata": metadata,
    "readme": readmes,
    "changelog": changelogs,
    "man": man_pages,
}


def main() -> None:
    # At most 60 paragraphs a distribution, so that a few long READMEs do not make up the sample.
    taken: dict[str, int] = {}
    rows = list(git_messages())
    for row in metadata(permissive_only=True):
        taken[row[1]] = taken.get(row[1], 0) + 1
        if taken[row[1]] <= _PER_DISTRIBUTION:
            rows.append(row)
    with OUT.open("w", encoding="utf-8") as out:
        for source, path, text in rows:
            out.write(json.dumps({"source": source, "from": path, "text": text}, ensure_ascii=False) + "\n")
    print(f"{len(rows)} paragraphs -> {OUT} ({OUT.stat().st_size:,} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
