"""The store seam stays honest: no module of the domain imports a storage backend or a database
driver. Only the backends themselves (``memory/sqlite/``, ``memory/postgres/``), the one module
that picks a backend by config (``backends.py``), the copy between them (``storage_copy.py``), and
the outer wiring (the runtime, the CLI, the gateway, the MCP server, the SDK) may."""

from __future__ import annotations

import ast
from pathlib import Path

import meta_memory

PACKAGE = Path(meta_memory.__file__).parent
FORBIDDEN = (
    "sqlite3",
    "psycopg",
    "psycopg_pool",
    "meta_memory.memory.sqlite",
    "meta_memory.memory.postgres",
    "meta_memory.backends",
)
OUTSIDE_THE_DOMAIN = (
    "memory/sqlite/",
    "memory/postgres/",
    "backends.py",
    "storage_copy.py",
    "runtime.py",
    "cli.py",
    "gateway/",
    "mcp_server.py",
    "sdk.py",
    "console/",
)


def _imports(path: Path) -> list[str]:
    module = "meta_memory." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            names.append(target)
            names.extend(f"{target}.{alias.name}" for alias in node.names)
    return names


def _domain_modules() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not str(path.relative_to(PACKAGE)).startswith(OUTSIDE_THE_DOMAIN)
    ]


def test_no_domain_module_imports_a_backend_or_a_driver() -> None:
    domain = _domain_modules()
    assert len(domain) > 50  # the walk found the package
    offenders = {
        str(path.relative_to(PACKAGE)): hits
        for path in domain
        if (hits := [name for name in _imports(path) if name.startswith(FORBIDDEN)])
    }
    assert offenders == {}


def test_the_check_sees_a_relative_import_of_the_backend() -> None:
    """Not vacuous: the import resolution catches the way a domain module would reach SQLite."""
    review = PACKAGE / "review" / "rules.py"
    assert "meta_memory.memory.store.RealmStore" in _imports(review)
    sqlite_store = PACKAGE / "memory" / "sqlite" / "store.py"
    assert "sqlite3" in _imports(sqlite_store)
    assert "meta_memory.memory.sqlite.txn.SqliteTxn" in _imports(sqlite_store)
