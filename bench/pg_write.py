"""Benchmark cases of the lock-free database store, each against its baseline in
the same run, on the server bench/pg.py starts (or $LESSON_CREDIT_BENCH_PG):

- `write_pg_1`, `write_pg_4`, `write_pg_16`: 1, 4 and 16 agent processes write at once, each its
  own sessions, through the store's write path (bench/pg_agent.py `append`: validate, one INSERT
  under the table's constraints, committed), against the same number of processes each making a
  plain INSERT of the same row into a table with only a primary key. Runs of ours and of the
  baseline alternate, round by round. Per write: the median latency, and each round's median over
  the baseline's in the same round (the target: the median of these paired ratios within 2x at 4
  and 16 agents; a pair ran back to back, so it is the ratio the machine's drifting load disturbs
  least); and records per second across the fleet, which should grow with the agents as far as the
  machine lets the plain INSERT's grow (see `_check_throughput`).
- `write_follow_pg_1/4/16` (reported, no target): each write between two reads of what is new, as
  a Workspace that keeps its fold current makes them (`follow`): every agent also reads every other
  agent's events, so the cost per write grows with the fleet.
- `record_fleet_pg_1`, `_4`, `_16`: 1, 4 and 16 agents at once, each running `lesson-credit record`
  (a process per session, as a hook runs it) in a workspace of its own (its own caches and
  bandit-state.json, as on machines of their own) against one database holding the demo log,
  against as many agents each running a process per plain INSERT (python, `import psycopg`,
  connect, one INSERT of the same row into a table with only a primary key). Rounds alternate.
  Per process: the median latency and each round's median over the baseline's (the target: the
  median of these paired ratios within 2x at every size); records/s of the fleet; and the slowest
  first record of a fleet (each agent's first, cold caches) against the baseline's slowest first.
- `push_pg`: `store push` of the bench workspace's log into an empty store, against a COPY of the
  same rows (the columns the store fills, computed before timing) into an empty store's table
  (the target: within 1.5x); and the push's peak memory against a push of the log's first 1,000
  lines (bounded: it must not grow with the log).
"""

from __future__ import annotations

import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
WRITE_RATIO = 2.0  # the write path within this of a plain INSERT (medians, at 4 and 16 agents)
PUSH_RATIO = 1.5  # store push within this of a COPY of the same rows
PUSH_GROWTH_MB = 64.0  # the push's peak memory may exceed a 1,000-line push's by at most this
AGENTS = (1, 4, 16)
SHARE_SLACK = 0.85  # from one fleet size to the next, ours' share of a plain INSERT's records/s may fall this far


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


def _fleet(mode: str, url: str, agents: int, writes: int, tag: str) -> tuple[list[float], float]:
    """(every write's latency, records per second of the whole fleet) for one run."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.pg_agent", mode, url, f"a{k}", str(writes), tag],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=_env(),
        )
        for k in range(agents)
    ]
    try:
        for proc in procs:  # all connected (and, for ours, read what is there) before any starts
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"bench.pg_agent failed: {proc.communicate()[1][-2000:]}")
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            out, err = proc.communicate(timeout=600)
            if proc.returncode != 0:
                raise RuntimeError(f"bench.pg_agent {mode} exited {proc.returncode}: {err[-2000:]}")
            reports.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    latencies = [s for r in reports for s in r["latencies"]]
    span = max(r["end"] for r in reports) - min(r["start"] for r in reports)
    return latencies, len(latencies) / span


def case_write_pg(sizes: dict[str, Any]) -> list[Any]:
    import psycopg

    from bench.pg import _server
    from bench.pg_agent import PLAIN_TABLE
    from lesson_credit.core.log.pgstore import PgStore

    runs = max(sizes["runs"]["record"])  # 1 (--smoke), 3 (--quick), 7 (full)
    writes, rounds, agent_counts = {1: (5, 1, AGENTS[:2]), 3: (40, 2, AGENTS)}.get(runs, (200, 5, AGENTS))
    results = []
    with _server() as make_database:
        url = make_database("bench_write")
        store = PgStore(url, agent="setup")
        store.size()  # the schema
        store.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(PLAIN_TABLE)
        rates: dict[int, dict[str, list[float]]] = {}
        for agents in agent_counts:
            latencies: dict[str, list[float]] = {mode: [] for mode in MODES}
            rates[agents] = {mode: [] for mode in MODES}
            paired: dict[str, list[float]] = {mode: [] for mode in MODES[1:]}  # per round: ours over the baseline
            for run in range(rounds):  # the modes alternate, round by round
                for mode in MODES:
                    got, rate = _fleet(mode, url, agents, writes, f"{mode[0]}{agents}-{run}")
                    latencies[mode] += got
                    rates[agents][mode].append(rate)
                    if mode != "plain":
                        paired[mode].append(statistics.median(got) / statistics.median(latencies["plain"][-len(got) :]))
            for mode in MODES[1:]:
                results.append(_write_result(mode, agents, writes, rounds, latencies, rates[agents], paired[mode]))
    _check_throughput(results, rates, agent_counts)
    return results + case_record_fleet_pg(sizes)


MODES = ("plain", "append", "follow")  # bench/pg_agent.py


def _write_result(
    mode: str,
    agents: int,
    writes: int,
    rounds: int,
    latencies: dict[str, list[float]],
    rates: dict[str, list[float]],
    paired: list[float],
) -> Any:
    from bench.harness import Result, Target

    ours, plain = latencies[mode], latencies["plain"]
    ratio = statistics.median(ours) / statistics.median(plain)
    checked = mode == "append" and agents > 1
    paired_ratio = statistics.median(paired)
    what = "the store's write path" if mode == "append" else "the write path between two reads of what is new"
    result = Result(
        f"write_pg_{agents}" if mode == "append" else f"write_follow_pg_{agents}",
        ours,
        plain,
        "a plain INSERT of the same row, as many processes at once",
        Target(float("inf"), check=f"paired median < {WRITE_RATIO:g}x plain INSERT's" if checked else None),
        f"{what}: {agents} agent processes x {writes} writes x {rounds} rounds, alternated with the baseline's; "
        f"median per write {statistics.median(ours) * 1e3:.2f} ms against {statistics.median(plain) * 1e3:.2f}"
        f" ms ({ratio:.2f}x; median of the rounds' paired ratios {paired_ratio:.2f}x; mean per write "
        f"{statistics.mean(ours) * 1e3:.2f} ms against {statistics.mean(plain) * 1e3:.2f} ms, "
        f"{statistics.mean(ours) / statistics.mean(plain):.2f}x); "
        f"records/s (median of rounds) {statistics.median(rates[mode]):.0f} against "
        f"{statistics.median(rates['plain']):.0f}",
        extra={
            "agents": agents,
            "mode": mode,
            "median_ratio_to_plain": ratio,
            "paired_ratio_median": paired_ratio,
            "mean_ratio_to_plain": statistics.mean(ours) / statistics.mean(plain),
            "records_per_s": statistics.median(rates[mode]),
            "plain_records_per_s": statistics.median(rates["plain"]),
        },
    )
    if checked and paired_ratio >= WRITE_RATIO:  # each round's pair ran back to back: the load drifts less
        result.failed.append(f"paired median {paired_ratio:.2f}x a plain INSERT's")
    return result


def _check_throughput(
    results: list[Any], rates: dict[int, dict[str, list[float]]], agent_counts: tuple[int, ...]
) -> None:
    """The fleet's records/s of the write path grows with agents as far as this machine lets a plain
    INSERT's grow: where the plain INSERT's grows, ours must grow too (a lock held by one writer
    would keep it flat). Where both fleets saturate the cores (more agent processes than cores at
    both sizes: the plain INSERT's records/s no longer grows), ours must keep its share of the
    plain INSERT's records/s (the median over rounds of ours over the plain's of the same round),
    within SHARE_SLACK: waiting for one another would shrink it. Below saturation the share says
    how much of a round trip each write waits, not what it costs, so it is not compared there."""
    median = {agents: {mode: statistics.median(r) for mode, r in by_mode.items()} for agents, by_mode in rates.items()}
    share = {
        agents: statistics.median(ours / plain for ours, plain in zip(by_mode["append"], by_mode["plain"], strict=True))
        for agents, by_mode in rates.items()
    }
    cores = os.cpu_count() or 1
    named = {result.name: result for result in results}
    for before, after in zip(agent_counts, agent_counts[1:], strict=False):
        ours, plain = (median[after][m] / median[before][m] for m in ("append", "plain"))
        result = named[f"write_pg_{after}"]
        result.extra["records_share_of_plain"] = share[after]
        if plain > 1 and ours <= 1:
            result.failed.append(
                f"records/s did not grow from {before} to {after} agents (a plain INSERT's grew {plain:.2f}x)"
            )
        if before > cores and share[after] < share[before] * SHARE_SLACK:
            result.failed.append(
                f"records/s fell to {share[after]:.2f} of a plain INSERT's at {after} agents, from "
                f"{share[before]:.2f} at {before}"
            )


def _lines(log: Path) -> Iterator[bytes]:
    with log.open("rb") as handle:
        yield from handle


def _peak_push_mb(root: Path, url: str) -> float:
    """Peak resident memory (MB) of a `lesson-credit store push` process of `root`'s log."""
    # VmHWM, not ru_maxrss: Linux keeps the larger ru_maxrss of the process before exec (here the
    # bench's, which holds the baseline's rows) across it
    script = (
        "import sys\nfrom lesson_credit.cli.main import main\ncode = main(sys.argv[1:])\n"
        "hwm = [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')]\n"
        "print(int(hwm[0]) / 1024)\nsys.exit(code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script, "store", "push", "-w", str(root), "--store", url, "--json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=_env(),
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"store push exited {proc.returncode}: {proc.stderr[-2000:]}")
    return float(proc.stdout.strip().splitlines()[-1])


_PLAIN_PROCESS = (
    "import sys, psycopg\n"
    "row = (sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[5], sys.argv[6], bytes.fromhex(sys.argv[7]))\n"
    "with psycopg.connect(sys.argv[1], autocommit=True) as conn:\n"
    "    conn.execute(sys.argv[8], row)\n"
)


def _record_fleet(
    mode: str, url: str, workspaces: list[Path], writes: int, tag: str, lessons: list[str]
) -> tuple[list[float], float, float]:
    """(each process's latency, records/s of the fleet, the slowest first process) for one round:
    one thread per agent, each running its `writes` processes one after another."""
    import threading

    from bench.harness import lesson_credit_cmd
    from bench.pg_agent import PLAIN_INSERT, event
    from lesson_credit.core.log.events import decode_raw
    from lesson_credit.core.log.pgschema import row_fields

    def command(k: int, i: int) -> list[str]:
        session_id = f"{tag}-a{k}-{i}"
        if mode == "record":
            root = workspaces[k]
            return [
                *lesson_credit_cmd(),
                "record",
                "--workspace",
                str(root),
                "--store",
                url,
                "--agent",
                f"a{k}",
                "--session-id",
                session_id,
                "--journal",
                str(root / "journals" / "bench-session.md"),
                "--lessons",
                *lessons,
                "--reward",
                "0.8",
            ]
        text = event(session_id).strip()
        f = row_fields(text, decode_raw(text))
        return [
            sys.executable,
            "-c",
            _PLAIN_PROCESS,
            url,
            f["type"],
            f["session_id"],
            f["event_time"],
            f["raw"],
            f"a{k}",
            f["digest"].hex(),
            PLAIN_INSERT,
        ]

    commands = [[command(k, i) for i in range(writes)] for k in range(len(workspaces))]
    latencies: list[list[float]] = [[] for _ in workspaces]
    failures: list[str] = []
    start_gate = threading.Barrier(len(workspaces))

    def agent(k: int) -> None:
        start_gate.wait()
        for cmd in commands[k]:
            began = time.monotonic()
            proc = subprocess.run(cmd, capture_output=True, cwd=ROOT, env=_env(), check=False)
            latencies[k].append(time.monotonic() - began)
            if proc.returncode != 0:
                failures.append(proc.stderr.decode(errors="replace")[-2000:])

    threads = [threading.Thread(target=agent, args=(k,)) for k in range(len(workspaces))]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    span = time.monotonic() - started
    if failures:
        raise RuntimeError(f"a {mode} process failed: {failures[0]}")
    every = [s for agent_latencies in latencies for s in agent_latencies]
    return every, len(every) / span, max(agent_latencies[0] for agent_latencies in latencies)


def case_record_fleet_pg(sizes: dict[str, Any]) -> list[Any]:
    import shutil

    import psycopg

    from bench.harness import Result, Target, lesson_credit_cmd, run_cli
    from bench.pg import _journal, _server
    from bench.pg_agent import PLAIN_TABLE
    from lesson_credit.core.library.lessons import load_library

    runs = max(sizes["runs"]["record"])  # 1 (--smoke), 3 (--quick), 7 (full)
    writes, rounds, agent_counts = {1: (2, 1, AGENTS[:2]), 3: (3, 2, AGENTS)}.get(runs, (4, 3, AGENTS))
    lessons = sorted(lesson.id for lesson in load_library(ROOT).lessons if lesson.status == "active")[:10]
    work = Path(tempfile.mkdtemp(prefix="lesson-credit-bench-fleet-"))
    results = []
    try:
        with _server() as make_database:
            url = make_database("bench_fleet")
            seed = work / "seed"
            shutil.copytree(ROOT / "lessons", seed / "lessons")
            if (ROOT / "state").is_dir():
                shutil.copytree(ROOT / "state", seed / "state")
            (seed / "journals").mkdir()
            (seed / "journals" / "bench-session.md").write_text(_journal())
            run_cli([*lesson_credit_cmd(), "store", "push", "--workspace", str(seed), "--store", url])
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(PLAIN_TABLE)
            for agents in agent_counts:
                got: dict[str, list[float]] = {"plain": [], "record": []}
                rates: dict[str, list[float]] = {"plain": [], "record": []}
                firsts: dict[str, list[float]] = {"plain": [], "record": []}
                paired = []
                for run in range(rounds):
                    spaces = []
                    for k in range(agents):  # fresh workspaces each round: every agent's first record is cold
                        space = work / f"ws-{agents}-{run}-{k}"
                        shutil.copytree(seed, space, ignore=shutil.ignore_patterns(".cache"))
                        spaces.append(space)
                    for mode in ("plain", "record"):
                        latencies, rate, first = _record_fleet(mode, url, spaces, writes, f"f{agents}-{run}", lessons)
                        got[mode] += latencies
                        rates[mode].append(rate)
                        firsts[mode].append(first)
                    paired.append(
                        statistics.median(got["record"][-agents * writes :])
                        / statistics.median(got["plain"][-agents * writes :])
                    )
                    for space in spaces:
                        shutil.rmtree(space, ignore_errors=True)
                ratio = statistics.median(got["record"]) / statistics.median(got["plain"])
                paired_ratio = statistics.median(paired)
                rate_ratio = statistics.median(rates["plain"]) / statistics.median(rates["record"])
                first, plain_first = max(firsts["record"]), max(firsts["plain"])
                result = Result(
                    f"record_fleet_pg_{agents}",
                    got["record"],
                    got["plain"],
                    "a process per plain INSERT of the same row (python, import psycopg, connect, INSERT)",
                    Target(float("inf"), check=f"paired median < {WRITE_RATIO:g}x a plain INSERT process's"),
                    f"`lesson-credit record` through the database: {agents} agents x {writes} records x {rounds} "
                    f"rounds, a workspace each, alternated with the baseline's; median per process "
                    f"{statistics.median(got['record']) * 1e3:.0f} ms against "
                    f"{statistics.median(got['plain']) * 1e3:.0f} ms ({ratio:.2f}x; paired {paired_ratio:.2f}x); "
                    f"records/s {statistics.median(rates['record']):.1f} against "
                    f"{statistics.median(rates['plain']):.1f} ({rate_ratio:.2f}x fewer); slowest first record "
                    f"{first * 1e3:.0f} ms against {plain_first * 1e3:.0f} ms",
                    extra={
                        "agents": agents,
                        "median_ratio_to_plain": ratio,
                        "paired_ratio_median": paired_ratio,
                        "records_per_s": statistics.median(rates["record"]),
                        "plain_records_per_s": statistics.median(rates["plain"]),
                        "records_per_s_ratio": rate_ratio,
                        "first_s": first,
                        "plain_first_s": plain_first,
                    },
                )
                if paired_ratio >= WRITE_RATIO:
                    result.failed.append(f"paired median {paired_ratio:.2f}x a plain INSERT process's")
                results.append(result)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return results


def case_push_pg(sizes: dict[str, Any]) -> list[Any]:
    import psycopg

    from bench.harness import Result, Target, workspace_data
    from bench.pg import _server
    from lesson_credit.core.log.events import decode_raw
    from lesson_credit.core.log.pgschema import row_fields
    from lesson_credit.core.log.pgstore import PgStore

    root = workspace_data(sizes["workspace"])
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    rounds = sizes["runs"]["cold"][0]
    copies: dict[bytes, int] = {}
    rows = []  # what the store's columns hold for each line: computed before timing
    for text in log.read_bytes().splitlines():
        stripped = text.strip()
        if stripped:
            f = row_fields(stripped, decode_raw(stripped))
            copies[f["digest"]] = occurrence = copies.get(f["digest"], -1) + 1
            rows.append(
                (f["type"], f["session_id"], f["event_time"], f["event"], f["raw"], "bench", f["digest"], occurrence)
            )
    ours: list[float] = []
    base: list[float] = []
    with _server() as make_database:

        def empty_store(name: str) -> str:
            url = make_database(name)
            store = PgStore(url, agent="bench")
            store.size()
            store.close()
            return url

        for run in range(rounds):
            url = empty_store(f"bench_copy_{run}")
            with psycopg.connect(url, autocommit=True) as conn:
                started = time.perf_counter()
                with (
                    conn.cursor() as cursor,
                    cursor.copy(
                        "COPY lesson_credit.events (type, session_id, event_time, event, raw, agent, digest,"
                        " occurrence) FROM STDIN"
                    ) as copy,
                ):
                    for row in rows:
                        copy.write_row(row)
                base.append(time.perf_counter() - started)
            url = empty_store(f"bench_push_{run}")
            store = PgStore(url, agent="bench")
            started = time.perf_counter()
            report = store.push(lambda: _lines(log))  # as `store push` does: it may read the log twice
            ours.append(time.perf_counter() - started)
            store.close()
            assert report.added == len(rows) and not report.problems, (report.added, len(rows))
        with tempfile.TemporaryDirectory() as small:
            head = Path(small)
            (head / "state" / "lesson-thompson").mkdir(parents=True)
            with log.open("rb") as handle:
                first = b"".join(itertools.islice(handle, 1000))
            (head / "state" / "lesson-thompson" / "sessions.jsonl").write_bytes(first)
            small_mb = _peak_push_mb(head, empty_store("bench_push_small"))
        full_mb = _peak_push_mb(root, empty_store("bench_push_rss"))
    ratio = statistics.median(ours) / statistics.median(base)
    paired = statistics.median(o / b for o, b in zip(ours, base, strict=True))  # run i of each, alternated
    result = Result(
        "push_pg",
        ours,
        base,
        "COPY of the same rows (precomputed) into an empty store's table",
        Target(
            float("inf"), check=f"median < {PUSH_RATIO:g}x COPY; peak memory < 1,000-line push + {PUSH_GROWTH_MB:g} MB"
        ),
        f"{len(rows):,} events into an empty store per run, runs alternated; median {ratio:.2f}x COPY "
        f"(paired {paired:.2f}x); "
        f"`store push` process peak RSS {full_mb:.0f} MB ({small_mb:.0f} MB pushing the first 1,000 lines)",
        extra={
            "median_ratio_to_copy": ratio,
            "paired_ratio_median": paired,
            "push_rss_mb": full_mb,
            "push_1000_rss_mb": small_mb,
            "rows": len(rows),
        },
    )
    if ratio >= PUSH_RATIO:
        result.failed.append(f"median {ratio:.2f}x COPY")
    if full_mb >= small_mb + PUSH_GROWTH_MB:
        result.failed.append(f"memory grows with the log ({full_mb:.0f} MB against {small_mb:.0f} MB)")
    return [result]
