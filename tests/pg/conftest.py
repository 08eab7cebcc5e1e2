"""Fixtures for the PostgreSQL store tests: one real server per test process (xdist-safe), a
fresh database per test, small workspaces that share one lesson library."""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg.pg_helpers import make_workspace  # noqa: E402
from tests.pg.pg_server import NoServer, Server, create_database, start_server  # noqa: E402

_databases = itertools.count()

try:
    import psycopg  # noqa: F401
except ImportError:  # without the driver these tests cannot run: say so, except under CI (fail there)
    if os.environ.get("CI"):
        raise
    collect_ignore_glob = ["test_pg_*.py"]

    def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
        terminalreporter.write_line("tests/pg: not run, psycopg is not installed (pip install -e '.[pg]')")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[Server]:
    """A PostgreSQL server for this test process, stopped at the end even when tests fail.
    Skipped (with the reason) when this machine cannot start one, except under CI."""
    try:
        server = start_server()
    except NoServer as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a PostgreSQL server for tests/pg: {exc}")
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pg_url(pg_server: Server) -> str:
    """A URL (with the password) of a new, empty database."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return create_database(pg_server, f"t_{worker}_{next(_databases)}")


@pytest.fixture
def ws_root(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws")


@pytest.fixture
def pg_ws(ws_root: Path, pg_url: str) -> Iterator[tuple[Path, str]]:
    """A workspace and a database of its own."""
    yield ws_root, pg_url
