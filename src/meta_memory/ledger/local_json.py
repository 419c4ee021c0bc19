"""The ``local_json`` ledger backend: the one file ``memory-ledger-state.json`` under the state
directory, read once at boot (REFERENCE §2.6) and rewritten whole on every index (§2.5) through the
stage file, ``fsync``, an atomic rename and a directory ``fsync``; with the optional health check
(§2.7) run at load and before every persist. Each record is serialized once into its final
pretty-printed bytes, so a persist is one ``join`` and one ``write`` of ready-made rows.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ConfigError, MemoryBackendUnavailable, StorageRefused
from ..storage.layout import StateLayout
from .health import HEALTHCHECK_TIMEOUT_S, HealthCheck, os_error_text
from .model import Assertion, ConflictSignal, LedgerSnapshot, encode_metadata, restore_snapshot, trim

__all__ = ["LocalJsonBackend", "assemble_document"]

_ROW_INDENT = "    "  # rows sit two levels deep: {"assertions": [ <row>, ... ]}
_ROW_END = b",\n"
_DIRECTORY_FSYNC_UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EBADF})

log = logging.getLogger(__name__)


def _encode_row(row: dict[str, Any]) -> bytes:
    # json.dumps(indent=2) never emits a raw newline inside a string (it escapes them), so every
    # "\n" is structural and re-indenting by textual replacement is exact. ASCII output keeps any
    # string (even a lone surrogate) encodable.
    text = json.dumps(row, indent=2)
    return (_ROW_INDENT + text.replace("\n", "\n" + _ROW_INDENT)).encode("ascii") + _ROW_END


def _extend_array(parts: list[bytes], key: bytes, rows: Sequence[bytes]) -> None:
    if not rows:
        parts.append(key + b"[]")
        return
    parts.append(key + b"[\n")
    parts.extend(rows[:-1])
    parts.append(rows[-1][: -len(_ROW_END)] + b"\n  ]")  # the last row takes no comma


def assemble_document(assertion_rows: Sequence[bytes], conflict_rows: Sequence[bytes]) -> bytes:
    """The whole file from encoded rows: byte-identical to ``json.dumps(state, indent=2)``."""
    parts: list[bytes] = [b"{\n"]
    _extend_array(parts, b'  "assertions": ', assertion_rows)
    parts.append(b",\n")
    _extend_array(parts, b'  "conflicts": ', conflict_rows)
    parts.append(b"\n}")
    return b"".join(parts)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class LocalJsonBackend:
    """Persistence of one ledger to one JSON file. Single writer by convention: no lock, no re-read."""

    def __init__(self, path: Path, stage_path: Path, *, health: HealthCheck | None = None) -> None:
        """Prefer :meth:`for_layout`, which takes both paths from the state layout."""
        self.path = path
        self.stage_path = stage_path
        self.health = health

    @classmethod
    def for_layout(
        cls,
        layout: StateLayout,
        *,
        health_check_endpoint: str | None = None,
        health_timeout_s: float = HEALTHCHECK_TIMEOUT_S,
    ) -> LocalJsonBackend:
        """The backend for a state directory, optionally gated by an HTTP health check.

        Raises:
            ConfigError: the endpoint is blank or not a usable ``http://`` URL.
        """
        health = None
        if health_check_endpoint is not None:
            if not trim(health_check_endpoint):
                raise ConfigError("memory backend health_check_endpoint must not be empty when provided")
            health = HealthCheck(health_check_endpoint, timeout_s=health_timeout_s)
        return cls(layout.ledger_path, layout.ledger_stage_path, health=health)

    # -- encoding ------------------------------------------------------------------------------------

    def encode_assertion(self, assertion: Assertion) -> bytes:
        return _encode_row(assertion.to_wire())  # the wire shape is the file's row shape, key order too

    def encode_conflict(self, signal: ConflictSignal) -> bytes:
        return _encode_row(signal.to_wire())

    # -- persist -------------------------------------------------------------------------------------

    def persist(self, assertion_rows: Sequence[bytes], conflict_rows: Sequence[bytes]) -> None:
        """Health-check, then atomically replace the file with these rows.

        Raises:
            MemoryBackendUnavailable: the health check's own message, or ``memory backend
                persistence failed: <detail>`` for an I/O failure (the stage file is then removed
                when it can be).
        """
        if self.health is not None:
            self.health.check()  # its failure is reported as is: the healthcheck message is the detail
        document = assemble_document(assertion_rows, conflict_rows)
        try:
            self._replace_file(document)
        except OSError as exc:
            self._discard_stage()
            log.warning("the memory ledger could not be written: %s", os_error_text(exc))
            raise MemoryBackendUnavailable(
                f"memory backend persistence failed: {self._os_error_for_caller(exc)}"
            ) from exc

    def _os_error_for_caller(self, exc: OSError) -> str:
        """The OS error with its files named relative to the state dir: a caller is told which
        file, never where the server keeps it (the full path goes to the log)."""
        if not exc.strerror:
            return type(exc).__name__
        text = exc.strerror if exc.errno is None else f"{exc.strerror} (os error {exc.errno})"
        names = [self._relative(f) for f in (exc.filename, exc.filename2) if f is not None]
        return f"{text}: {' -> '.join(names)}" if names else text

    def _relative(self, filename: object) -> str:
        path = Path(os.fsdecode(filename)) if isinstance(filename, str | bytes) else None
        root = self.path.parent
        if path is not None and path.is_relative_to(root):
            return str(path.relative_to(root))
        return "a file outside the state dir"

    def _replace_file(self, document: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.stage_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
        try:
            view = memoryview(document)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(self.stage_path, self.path)
        self._sync_directory()

    def _sync_directory(self) -> None:
        # The rename is durable only once the directory entry is; without this a crash can bring
        # back the previous file after the caller was told the index succeeded.
        fd = os.open(self.path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        except OSError as exc:
            if exc.errno not in _DIRECTORY_FSYNC_UNSUPPORTED:
                raise
        finally:
            os.close(fd)

    def _discard_stage(self) -> None:
        # Best effort: the original error is the one worth reporting. unlink refuses a directory,
        # which is not ours to remove.
        with contextlib.suppress(OSError):
            self.stage_path.unlink(missing_ok=True)

    # -- load ----------------------------------------------------------------------------------------

    def load(self) -> LedgerSnapshot:
        """Read the file once: missing → empty; unusable → refuse boot.

        Raises:
            StorageRefused: the health check failed (its message), or the file cannot be read, is
                not JSON, or is structurally malformed (the message names the file and the problem).
        """
        if self.health is not None:
            try:
                self.health.check()
            except MemoryBackendUnavailable as exc:
                raise StorageRefused(exc.detail) from exc
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return LedgerSnapshot()
        except OSError as exc:
            raise self._refusal(f"could not be read: {os_error_text(exc)}") from exc
        try:
            document = json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            raise self._refusal(f"is not valid JSON: {exc}") from exc
        if not isinstance(document, dict):
            raise self._malformed("the top level must be an object")
        assertions = [
            self._assertion(row, f"assertions[{i}]") for i, row in self._rows(document, "assertions")
        ]
        conflicts = [self._conflict(row, f"conflicts[{i}]") for i, row in self._rows(document, "conflicts")]
        return restore_snapshot(assertions, conflicts)

    def _refusal(self, problem: str) -> StorageRefused:
        return StorageRefused(f"storage refused: memory ledger {self.path} {problem}")

    def _malformed(self, problem: str) -> StorageRefused:
        return self._refusal(f"is malformed: {problem}")

    def _rows(self, document: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
        rows = document.get(key, [])
        if not isinstance(rows, list):
            raise self._malformed(f'"{key}" must be an array')
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise self._malformed(f"{key}[{i}] must be an object")
        return list(enumerate(rows))

    def _field(self, row: dict[str, Any], key: str, where: str) -> Any:
        if key not in row:
            raise self._malformed(f'{where} is missing "{key}"')
        return row[key]

    def _string(self, row: dict[str, Any], key: str, where: str) -> str:
        value = self._field(row, key, where)
        if not isinstance(value, str):
            raise self._malformed(f"{where}.{key} must be a string")
        return value

    def _millis(self, row: dict[str, Any], key: str, where: str) -> int:
        value = self._field(row, key, where)
        # bool is an int in Python but not in JSON; upstream stores these as u64.
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**64:
            raise self._malformed(f"{where}.{key} must be a non-negative integer")
        return value

    def _assertion(self, row: dict[str, Any], where: str) -> Assertion:
        metadata = row.get("metadata")
        return Assertion(
            assertion_id=self._string(row, "assertion_id", where),
            entity=self._string(row, "entity", where),
            topic=self._string(row, "topic", where),
            store=self._string(row, "store", where),
            fact=self._string(row, "fact", where),
            metadata_json=None if metadata is None else encode_metadata(metadata),
            indexed_at_ms=self._millis(row, "indexed_at_ms", where),
        )

    def _conflict(self, row: dict[str, Any], where: str) -> ConflictSignal:
        reason = row.get("reason")
        if reason is not None and not isinstance(reason, str):
            raise self._malformed(f"{where}.reason must be a string or null")
        return ConflictSignal(
            entity=self._string(row, "entity", where),
            topic=self._string(row, "topic", where),
            store=self._string(row, "store", where),
            reason=reason,
            updated_at_ms=self._millis(row, "updated_at_ms", where),
        )
