"""Benchmark case `record_pg`: `lesson-credit record` on a local PostgreSQL store against the same
command on the workspace's JSONL file, in the same run (issue 13: under 50 ms above the file).

The server is the one $LESSON_CREDIT_BENCH_PG names (a URL of a database the run may fill), else
a throwaway local one started like the tests' (tests/pg/pg_server.py: initdb + pg_ctl, loopback).
Each timed run records one session into a fresh copy of the demo workspace whose log (the demo
state's) is, for the database side, pushed into a fresh database first (not timed).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD_MARGIN_S = 0.050  # the target: at most this much slower than the file store


@contextlib.contextmanager
def _server() -> Iterator[Any]:
    """(make_database(name) -> url) for the bench's server."""
    given = os.environ.get("LESSON_CREDIT_BENCH_PG")
    if given:
        import psycopg

        def fresh(name: str) -> str:
            with psycopg.connect(given, autocommit=True) as conn:
                conn.execute("DROP SCHEMA IF EXISTS lesson_credit CASCADE")
            return given

        yield fresh
        return
    sys.path.insert(0, str(ROOT / "tests" / "pg"))
    from pg_server import create_database, start_server  # type: ignore[import-not-found]

    server = start_server()
    try:
        yield lambda name: create_database(server, name)
    finally:
        server.stop()


def case_record_pg(sizes: dict[str, Any]) -> list[Any]:
    from bench.run import DEMO_JOURNAL, Result, Target, lesson_credit_cmd, run_cli, time_cli
    from core.lessons import load_library

    n_ours, n_base = sizes["runs"]["record"]
    library = load_library(ROOT)
    lesson_ids = sorted(lesson.id for lesson in library.lessons if lesson.status == "active")[:10]
    work = Path(tempfile.mkdtemp(prefix="lesson-credit-bench-pg-"))
    counter = itertools.count()
    with _server() as make_database:

        def fresh_copy(store: bool) -> list[str]:
            n = next(counter)
            target = work / f"ws-{n}"
            shutil.copytree(ROOT / "lessons", target / "lessons")
            if (ROOT / "state").is_dir():
                shutil.copytree(ROOT / "state", target / "state")
            journal = target / "journals" / "bench-session.md"
            journal.parent.mkdir(parents=True)
            journal.write_text(DEMO_JOURNAL * 40)  # ~25 KB, as record_cli
            where = []
            if store:
                url = make_database(f"bench_{n}")
                where = ["--store", url, "--agent", "bench"]
                run_cli([*lesson_credit_cmd(), "store", "push", "--workspace", str(target), *where])
            return [*lesson_credit_cmd(), "record", "--workspace", str(target), *where,
                    "--session-id", "bench-record-session", "--journal", str(journal),
                    "--lessons", *lesson_ids, "--reward", "0.8"]  # fmt: skip

        try:
            ours, proc = time_cli([], n_ours, lambda: fresh_copy(True))
            assert b"salience" in proc.stdout, proc.stdout[:500]
            base, _ = time_cli([], n_base, lambda: fresh_copy(False))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    result = Result(
        "record_pg",
        ours,
        base,
        "the same record on the JSONL file",
        Target(1.0, check=f"< file + {RECORD_MARGIN_S * 1e3:.0f} ms"),
        f"{len(lesson_ids)} lessons recorded, the demo log pushed first; local server, loopback",
        extra={"above_file_s": min(ours) - min(base)},
    )
    if min(ours) - min(base) >= RECORD_MARGIN_S:
        result.failed.append(f"more than {RECORD_MARGIN_S * 1e3:.0f} ms above the file store")
    return [result]
