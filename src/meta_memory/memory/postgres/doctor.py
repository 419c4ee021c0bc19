"""The PostgreSQL backend's part of the storage doctor: is the server reachable, at which schema
version, and what does each realm hold (records per status, body bytes; the recall index is
kept in each write's transaction, so no index work is ever pending; with ``recall = "hybrid"``,
how far each realm's vectors have come). Read-only: it runs no migration and takes no lock.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import psycopg

from ...storage.doctor import (
    DATABASE_OK,
    DATABASE_UNREACHABLE,
    FILES_NOT_SERVED,
    SCHEMA_NEWER_THAN_SUPPORTED,
    SCHEMA_UPGRADE_PENDING,
    Diagnosis,
    RealmInventory,
)
from ...storage.layout import StateLayout
from ..records import Status
from .connect import CONNECT_TIMEOUT_S, describe
from .migrations import SCHEMA_VERSION, applied_versions

__all__ = ["PostgresDoctor"]

log = logging.getLogger("meta_memory.postgres")

_STATUSES = tuple(s.value for s in Status)


class PostgresDoctor:
    """The checks of ``store = "postgres"`` (``dsn=None``: the config could not name one)."""

    def __init__(
        self, dsn: str | None, *, problem: str | None = None, vectors_model: str | None = None
    ) -> None:
        self._dsn = dsn
        self._problem = problem
        # recall = "hybrid": the model whose vectors the inventory reports (else the latest used).
        self._vectors_model = vectors_model

    def check_state_dir(self, layout: StateLayout, identity: str | None, out: Diagnosis) -> None:
        if self._dsn is None:
            out.add(
                "error", DATABASE_UNREACHABLE, f"the PostgreSQL backend cannot be reached: {self._problem}"
            )
            return
        where = describe(self._dsn)
        try:
            with psycopg.connect(self._dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S) as conn:
                versions = applied_versions(conn)
                version = max(versions, default=0)
                if version > SCHEMA_VERSION:
                    out.add(
                        "error",
                        SCHEMA_NEWER_THAN_SUPPORTED,
                        f"PostgreSQL at {where} is at schema version {version}, newer than this release "
                        f"supports ({SCHEMA_VERSION}); gateways of this release refuse to start on it",
                    )
                    return
                if version < SCHEMA_VERSION:
                    out.add(
                        "info",
                        SCHEMA_UPGRADE_PENDING,
                        f"PostgreSQL at {where} is at schema version {version}; the next gateway to start "
                        f"migrates it to {SCHEMA_VERSION}",
                    )
                if not versions:
                    return
                self._inventory(conn, where, version, identity, out)
        except psycopg.Error as exc:
            log.warning("the doctor could not read PostgreSQL at %s: %s", where, exc)
            out.add(
                "error",
                DATABASE_UNREACHABLE,
                f"PostgreSQL at {where} cannot be read ({type(exc).__name__}); gateways on it cannot serve "
                "agent memory until it can",
            )

    def _inventory(
        self, conn: psycopg.Connection, where: str, version: int, identity: str | None, out: Diagnosis
    ) -> None:
        realms = [row[0] for row in conn.execute("SELECT realm FROM realms ORDER BY realm")]
        counts: dict[str, dict[str, int]] = {realm: dict.fromkeys(_STATUSES, 0) for realm in realms}
        sizes: dict[str, int] = dict.fromkeys(realms, 0)
        for realm, status, n, nbytes in conn.execute(
            "SELECT realm, status, count(*), coalesce(sum(octet_length(body)), 0) FROM records GROUP BY realm, status"
        ):
            if realm in counts and status in counts[realm]:
                counts[realm][status] = int(n)
                sizes[realm] += int(nbytes)
        mine = {realm: dict.fromkeys(_STATUSES, 0) for realm in realms} if identity is not None else None
        if mine is not None:
            for realm, status, n in conn.execute(
                "SELECT r.realm, r.status, count(*) FROM records r JOIN scopes s ON s.scope_id = r.scope_id "
                "WHERE s.kind = 'identity' AND s.key = %s GROUP BY r.realm, r.status",
                (identity,),
            ):
                if realm in mine and status in mine[realm]:
                    mine[realm][status] = int(n)
        vectors = self._vector_states(conn, realms, out) if version >= 2 else {}
        total = sum(sum(c.values()) for c in counts.values())
        out.add(
            "info",
            DATABASE_OK,
            f"PostgreSQL at {where}: schema version {version}, {len(realms)} realm(s), {total} record(s)",
        )
        for realm in realms:
            out.inventory.append(
                RealmInventory(
                    realm,
                    f"postgresql://{where}",
                    version,
                    counts[realm],
                    sizes[realm],
                    0,  # the index is written with each record: nothing is ever pending
                    0,
                    identity,
                    mine[realm] if mine is not None else None,
                    vectors.get(realm),
                )
            )

    def _vector_states(
        self, conn: psycopg.Connection, realms: list[str], out: Diagnosis
    ) -> dict[str, dict[str, Any]]:
        """How far each realm's embedding vectors have come: of the configured model, or else of
        the model last embedded with; a realm with none is left out."""
        marks: dict[str, tuple[str, int]] = {}
        for realm, model_id, upto in conn.execute(
            "SELECT realm, model_id, embedded_upto FROM vector_marks ORDER BY realm, updated_at_ms"
        ):
            if self._vectors_model is None or model_id == self._vectors_model:
                marks[realm] = (model_id, int(upto))  # the last of the realm's rows wins
        if self._vectors_model is not None:
            for realm in realms:
                marks.setdefault(realm, (self._vectors_model, 0))
        states: dict[str, dict[str, Any]] = {}
        for realm, (model_id, upto) in marks.items():
            row = conn.execute(
                "SELECT count(*), count(*) FILTER (WHERE doc <= %s) FROM records WHERE realm = %s AND status = 'active'",
                (upto, realm),
            ).fetchone()
            active, embedded = (int(row[0]), int(row[1])) if row is not None else (0, 0)
            states[realm] = out.vectors(realm, model_id, embedded, active)
        return states

    def check_memory_root(
        self, root: Path, entries: list[Path], identity: str | None, out: Diagnosis
    ) -> None:
        files = [p for p in entries if p.is_file() and StateLayout.realm_from_db_name(p.name) is not None]
        if files:
            out.add(
                "info",
                FILES_NOT_SERVED,
                f"{len(files)} SQLite realm file(s) under {root.name}/ are not served: agent memory is on "
                "PostgreSQL; copy them with `meta_gateway storage-copy --state-dir <dir> --to-postgres <dsn>`",
                path=root,
            )
