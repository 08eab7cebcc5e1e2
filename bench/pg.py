"""Benchmark case `record_pg`: `lesson-credit record` on a local PostgreSQL store against the same
command on the workspace's JSONL file, in the same run (target: under 50 ms above the file, plus the
import of psycopg's public API, the database client, which is measured in the same run).

The server is the one $LESSON_CREDIT_BENCH_PG names (a URL of a database the run may fill), else
a throwaway local one started like the tests' (tests/pg/pg_server.py: initdb + pg_ctl, loopback).
Each timed run records one session into a fresh copy of the demo workspace whose log (the demo
state's) is, for the database side, pushed into a fresh database first (not timed).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RECORD_MARGIN_S = 0.050  # the target: at most this much slower than the file store, plus importing psycopg
CACHED_MARGIN_S = 0.100  # a cached open: the connection is the only extra work


def _journal() -> str:
    """About 25 KB of the demo's journals (record_cli records a journal of that size)."""
    parts, size = [], 0
    for path in sorted((ROOT / "state" / "journals").glob("*.md")) * 40:
        if size >= 25_000:
            break
        text = path.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        size += len(text)
    return "\n".join(parts) or "git commit\n" * 2000


@contextlib.contextmanager
def _server() -> Iterator[Callable[[str], str]]:
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
    from tests.pg.pg_server import create_database, start_server

    server = start_server()
    try:
        yield lambda name: create_database(server, name)
    finally:
        server.stop()


def _timed(cmd: list[str]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of the child: user + sys, the finished process)."""
    import resource
    import time

    from bench.harness import run_cli

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = run_cli(cmd)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc


def case_record_pg(sizes: dict[str, Any]) -> list[Any]:
    """`record` on the database against `record` on the file, alternated run by run (so a busy
    machine slows both alike): our best time, the file's best, and the difference (also of the
    medians and of the CPU time of the process, which load disturbs less)."""
    import statistics

    from bench.harness import Result, Target, lesson_credit_cmd, run_cli
    from lesson_credit.core.library.lessons import load_library

    runs = max(sizes["runs"]["record"])
    library = load_library(ROOT)
    lesson_ids = sorted(lesson.id for lesson in library.lessons if lesson.status == "active")[:10]
    work = Path(tempfile.mkdtemp(prefix="lesson-credit-bench-pg-"))
    counter = itertools.count()
    ours: list[float] = []
    base: list[float] = []
    ours_cpu: list[float] = []
    base_cpu: list[float] = []
    with _server() as make_database:

        def fresh_copy(store: bool) -> list[str]:
            n = next(counter)
            target = work / f"ws-{n}"
            shutil.copytree(ROOT / "lessons", target / "lessons")
            if (ROOT / "state").is_dir():
                shutil.copytree(ROOT / "state", target / "state")
            journal = target / "journals" / "bench-session.md"
            journal.parent.mkdir(parents=True)
            journal.write_text(_journal())
            where = []
            if store:
                url = make_database(f"bench_{n}")
                where = ["--store", url, "--agent", "bench"]
                run_cli([*lesson_credit_cmd(), "store", "push", "--workspace", str(target), *where])
            record = [*lesson_credit_cmd(), "record", "--workspace", str(target), *where]
            record += ["--session-id", "bench-record-session", "--journal", str(journal)]
            return [*record, "--lessons", *lesson_ids, "--reward", "0.8"]

        try:
            for _ in range(runs):
                wall, cpu, proc = _timed(fresh_copy(True))
                assert b"salience" in proc.stdout, proc.stdout[:500]
                ours.append(wall)
                ours_cpu.append(cpu)
                wall, cpu, _ = _timed(fresh_copy(False))
                base.append(wall)
                base_cpu.append(cpu)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    above = min(ours) - min(base)
    above_median = statistics.median(ours) - statistics.median(base)
    above_cpu = min(ours_cpu) - min(base_cpu)
    driver = _import_cost(runs)  # the database client is psycopg's public API, imported
    result = Result(
        "record_pg",
        ours,
        base,
        "the same record on the JSONL file",
        Target(1.0, check=f"< file + import psycopg + {RECORD_MARGIN_S * 1e3:.0f} ms"),
        f"{len(lesson_ids)} lessons recorded, the demo log pushed first; local server, loopback; runs alternated. "
        f"Difference: best {above * 1e3:+.0f} ms, median {above_median * 1e3:+.0f} ms, "
        f"CPU (user+sys, best) {min(ours_cpu) * 1e3:.0f} ms against {min(base_cpu) * 1e3:.0f} ms "
        f"({above_cpu * 1e3:+.0f} ms); importing psycopg alone {driver * 1e3:.0f} ms (best, measured in this run)",
        extra={
            "import_psycopg_s": driver,
            "above_file_s": above,
            "above_file_median_s": above_median,
            "cpu_s": min(ours_cpu),
            "file_cpu_s": min(base_cpu),
            "cpu_above_file_s": above_cpu,
        },
    )
    if above >= RECORD_MARGIN_S + driver:
        result.failed.append(f"more than {RECORD_MARGIN_S * 1e3:.0f} ms above the file store and psycopg's import")
    return [result]


def _import_cost(runs: int) -> float:
    """Seconds `import psycopg` adds to a fresh interpreter: best of `runs` pairs, alternated."""
    import time

    pairs = []
    for _ in range(runs):
        times = []
        for code in ("import psycopg", "pass"):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - start)
        pairs.append(times)
    return max(min(t[0] for t in pairs) - min(t[1] for t in pairs), 0.0)


def case_read_pg(sizes: dict[str, Any]) -> list[Any]:
    """Parse + fold the bench workspace's log read from the database, against the same log read
    from the file without the parsed-log cache (target: within 3x of the file)."""
    from bench.harness import Result, Target, best_of, workspace_data
    from lesson_credit.core.bandit.fold import fold
    from lesson_credit.core.log.pgstore import PgStore
    from lesson_credit.core.log.store import EventLog
    from lesson_credit.core.workspace import Workspace

    root = workspace_data(sizes["workspace"])
    n_ours, n_base = sizes["runs"]["cold"]
    with _server() as make_database:
        url = make_database("bench_read")
        store = PgStore(url, agent="bench")
        report = store.push(EventLog(root / "state" / "lesson-thompson" / "sessions.jsonl").path.open("rb"))
        store.close()
        assert not report.problems, report.problems[:3]

        def load(store_url: str | None) -> Any:
            store = None if store_url is None else PgStore(store_url, agent="b")
            ws = Workspace(root, use_cache=False, store=store)
            post = fold(ws.data(), ws.settings)
            if store is not None:
                store.close()
            return post

        ours, post_db = best_of(lambda _: load(url), n_ours)
        base, post_file = best_of(lambda _: load(None), n_base)

        cache_dir = root / "state" / "lesson-thompson" / ".cache"  # the workspace's, where both stores keep theirs

        def load_cached(store_url: str | None) -> Any:
            store = None if store_url is None else PgStore(store_url, agent="b")
            ws = Workspace(root, store=store)
            post = fold(ws.data(), ws.settings)
            if store is not None:
                store.close()
            return post

        try:
            load_cached(url), load_cached(None)  # the first reads write the caches
            ours_cached, post_db_cached = best_of(lambda _: load_cached(url), n_ours)
            base_cached, _ = best_of(lambda _: load_cached(None), n_base)
        finally:
            for path in cache_dir.glob("log-*-pg-*"):  # this database's (head, sums, parts), gone with it
                path.unlink(missing_ok=True)
    same = bool((post_db.alpha == post_file.alpha).all() and (post_db.beta == post_file.beta).all())
    same_cached = bool(
        (post_db_cached.alpha == post_file.alpha).all() and (post_db_cached.beta == post_file.beta).all()
    )
    result = Result(
        "read_pg",
        ours,
        base,
        "the same log from the file, no parsed-log cache",
        Target(float("inf"), check="< 3x the file, the same numbers"),
        f"{report.added:,} events pushed; fresh Workspace(use_cache=False).data() + fold() per run",
        extra={"ratio_to_file": min(ours) / min(base)},
    )
    if not same:
        result.failed.append("numbers differ")
    if min(ours) >= 3 * min(base):
        result.failed.append("more than 3x the file")
    cached = Result(
        "read_pg_cached",
        ours_cached,
        base_cached,
        "the same log from the file, with its parsed-log cache",
        Target(float("inf"), check=f"< file + {CACHED_MARGIN_S * 1e3:.0f} ms, the same numbers"),
        "both caches written by a first read; fresh Workspace(...).data() + fold() per run, connecting included",
        extra={"above_file_s": min(ours_cached) - min(base_cached)},
    )
    if not same_cached:
        cached.failed.append("numbers differ")
    if min(ours_cached) - min(base_cached) >= CACHED_MARGIN_S:  # opening costs a connection, not a re-read
        cached.failed.append(f"more than {CACHED_MARGIN_S * 1e3:.0f} ms above the file")
    return [result, cached]


def case_follow_pg(sizes: dict[str, Any]) -> list[Any]:
    """From the start of one client's append to another client's Workspace having read it, found by
    the store's `wait` (it looks at the position every 0.1 s; target: a commit visible in another
    dashboard in under 0.5 s). Baseline: the same append alone."""
    import threading
    import time

    from bench.harness import Result, Target
    from lesson_credit.core.log.pgstore import PgStore
    from lesson_credit.core.workspace import Workspace

    runs = max(sizes["runs"]["record"])
    work = Path(tempfile.mkdtemp(prefix="lesson-credit-bench-follow-"))
    shutil.copytree(ROOT / "lessons", work / "lessons")
    try:
        with _server() as make_database:
            url = make_database("bench_follow")
            writer, reader_store = PgStore(url, agent="writer"), PgStore(url, agent="reader")
            reader = Workspace(work, store=reader_store)
            reader.data()
            lesson = next(iter(reader.library().lessons)).id
            latencies, appends = [], []

            def watch(after: int, seen: threading.Event, seen_at: list[float]) -> None:
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    if reader_store.wait(after, 1.0) > after:
                        reader.refresh()
                        seen_at.append(time.perf_counter())
                        seen.set()
                        return

            for i in range(runs):
                seen = threading.Event()
                seen_at: list[float] = []
                thread = threading.Thread(target=watch, args=(reader_store.size(), seen, seen_at))
                thread.start()
                time.sleep(0.05)  # the watcher is waiting
                event = {
                    "type": "session",
                    "session_id": f"n{i}",
                    "base_reward": 0.5,
                    "lessons": [{"path": lesson, "salience": 0.5}],
                }
                start = time.perf_counter()
                writer.append(json.dumps(event).encode() + b"\n")
                appends.append(time.perf_counter() - start)
                thread.join(15)
                assert seen.is_set() and reader.session(f"n{i}") is not None
                latencies.append(seen_at[0] - start)
            writer.close()
            reader_store.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = Result(
        "follow_pg",
        latencies,
        appends,
        "the append alone (commit)",
        Target(0.5),
        "append start -> the other client's Workspace has read it (found by the store's wait)",
    )
    return [result]


def case_read_pg_scale(root: Path) -> list[Any]:
    """`--scale`: the 1M-session workspace `root` (bench/scale.py) read from the database and from the file, both
    without the parsed-log cache: parse + fold in a fresh Workspace, one run each (target: within
    3x of the file). The log is pushed first (`store push`: COPY into a staging table, one
    INSERT ... SELECT); the push is timed and reported, not judged."""
    import time

    from bench.harness import Result, Target
    from lesson_credit.core.bandit.fold import fold
    from lesson_credit.core.log.pgstore import PgStore
    from lesson_credit.core.workspace import Workspace

    with _server() as make_database:
        url = make_database("bench_scale_read")
        store = PgStore(url, agent="bench")
        started = time.perf_counter()
        with (root / "state" / "lesson-thompson" / "sessions.jsonl").open("rb") as handle:
            report = store.push(handle)
        push_s = time.perf_counter() - started
        store.close()
        assert not report.problems, report.problems[:3]
        print(f"  pushed {report.added:,} events in {push_s:.0f} s", file=sys.stderr, flush=True)

        def load(store_url: str | None) -> tuple[float, Any]:
            start = time.perf_counter()
            db = None if store_url is None else PgStore(store_url, agent="bench")
            ws = Workspace(root, use_cache=False, store=db)
            post = fold(ws.data(), ws.settings)
            seconds = time.perf_counter() - start
            if db is not None:
                db.close()
            return seconds, post

        ours, post_db = load(url)
        base, post_file = load(None)

        def dashboard(store_url: str | None) -> float:
            """`bench.tui_probe` launched until the Lessons table shows its first rows (seconds)."""
            cmd = [sys.executable, "-m", "bench.tui_probe", "--workspace", str(root), "--t0", repr(time.perf_counter())]
            if store_url is not None:
                cmd += ["--store", store_url]
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                raise RuntimeError(f"bench.tui_probe failed ({proc.returncode}): {proc.stderr[-2000:]}")
            line = next(x for x in proc.stdout.splitlines() if x.startswith("TUI-PROBE "))
            return float(json.loads(line.removeprefix("TUI-PROBE "))["open_from_launch"])

        def warm(store_url: str | None) -> float:
            """A first read with the parsed-log cache on: it writes the cache every later open uses."""
            start = time.perf_counter()
            db = None if store_url is None else PgStore(store_url, agent="bench")
            Workspace(root, store=db).data()
            if db is not None:
                db.close()
            return time.perf_counter() - start

        print("  first reads with the cache on (each writes its parsed-log cache) ...", file=sys.stderr, flush=True)
        first_db, first_file = warm(url), warm(None)
        print("  dashboard: opens with the cache, database and file alternated ...", file=sys.stderr, flush=True)
        try:
            opens = [(dashboard(url), dashboard(None)) for _ in range(2)]
            probe_error = None
        except RuntimeError as exc:  # reported as the case's failure, after the read results
            opens, probe_error = [(math.inf, math.inf)], str(exc).splitlines()[-1]
    same = bool((post_db.alpha == post_file.alpha).all() and (post_db.beta == post_file.beta).all())
    result = Result(
        "scale_read_pg",
        [ours],
        [base],
        "the same 1.44 GB log from the file, no parsed-log cache",
        Target(float("inf"), check="< 3x the file, the same numbers"),
        f"{report.added:,} events pushed in {push_s:.0f} s (untimed); fresh Workspace(use_cache=False).data() + fold()",
        extra={"ratio_to_file": ours / base, "push_s": push_s},
    )
    if not same:
        result.failed.append("numbers differ")
    if ours >= 3 * base:
        result.failed.append("more than 3x the file")
    open_db, open_file = [db for db, _ in opens], [file for _, file in opens]
    dashboard_result = Result(
        "scale_tui_open_pg",
        open_db,
        open_file,
        "the same dashboard on the file, its parsed-log cache warm",
        Target(float("inf"), check="as fast as the file: < 1.25x"),
        f"`python -m bench.tui_probe --store URL` launched until the Lessons table shows its first rows, the "
        f"database's parsed-log cache warm (the first read, which writes it: {first_db:.1f} s "
        f"database, {first_file:.1f} s file)",
        extra={"first_read_db_s": first_db, "first_read_file_s": first_file},
    )
    if probe_error is not None:
        dashboard_result.failed.append(f"the probe failed: {probe_error}")
    elif min(open_db) >= 1.25 * min(open_file):
        dashboard_result.failed.append("slower than the file by 25% or more")
    return [result, dashboard_result]
