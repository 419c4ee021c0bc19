"""SQL both bundled backends run, written once for two dialects: the realm file's SQLite and
PostgreSQL's. A module here builds statements and runs them on a DB-API connection the backend
hands it; it imports no driver, and only the backends (``memory/sqlite/``, ``memory/postgres/``)
use it.
"""
