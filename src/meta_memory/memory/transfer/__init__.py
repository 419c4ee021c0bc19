"""Agent memory out of and into realm stores: ``meta_gateway export`` and ``meta_gateway import``.

An export is JSON lines (lines.py: one header, then one record per line in its wire form, with
its realm and content hash), deterministic so that an export imported into a fresh state dir
exports again byte for byte (exporter.py), but for released quarantine, which arrives quarantined
again. An import reads such a file or a mem0 export (source.py, mem0.py) and writes each record as
it stands through the store's validator, skipping what is present, quarantining on arrival what
carries or reaches a quarantine the store holds no release of (lineage.py: only the store is
evidence, never the file), and refusing, line by line, what the validator or a taken id refuses
(importer.py). docs/export-import.md describes the format and every rule.
"""

from __future__ import annotations

from .exporter import CURRENT, HISTORY, export_realms
from .importer import CHUNK, ImportReport, Outcome, import_source
from .lines import FORMAT, VERSION, Entry, ExportHeader, LineProblem, record_from_line, record_line
from .mem0 import mem0_entries, title_from_text
from .source import Format, ImportSource, Opener, bytes_opener, read_source

__all__ = [
    "CHUNK",
    "CURRENT",
    "FORMAT",
    "HISTORY",
    "VERSION",
    "Entry",
    "ExportHeader",
    "Format",
    "ImportReport",
    "ImportSource",
    "LineProblem",
    "Opener",
    "Outcome",
    "bytes_opener",
    "export_realms",
    "import_source",
    "mem0_entries",
    "read_source",
    "record_from_line",
    "record_line",
    "title_from_text",
]
