"""The parsed-log cache's SQLite database (core/log/cache.py), for tests that poke at it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

DB_NAME = "derived-log.sqlite"


def _connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


def meta(path: Path) -> dict[str, bytes]:
    """The `meta` rows: "head" and "sums"."""
    with _connect(path) as conn:
        return {str(key): bytes(value) for key, value in conn.execute("SELECT key, value FROM meta")}


def put_meta(path: Path, key: str, value: bytes) -> None:
    conn = _connect(path)
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
    conn.close()


def parts(path: Path) -> dict[str, bytes]:
    """Block name -> its blob."""
    with _connect(path) as conn:
        return {str(name): bytes(data) for name, data in conn.execute("SELECT name, data FROM parts")}


def put_part(path: Path, name: str, data: bytes) -> None:
    conn = _connect(path)
    conn.execute("UPDATE parts SET data = ? WHERE name = ?", (data, name))
    conn.close()
