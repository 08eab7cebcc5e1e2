"""The flat-cost cases: every write and every live update costs the event, not the history.

* flat_<command> (record, status_after_append, grade, grade_prefix, show, replay_after_append): the
  CLI command as a subprocess on two workspaces with the same library (`sizes["flat"]["lessons"]`)
  and `small` and `big` sessions, the two run in turn round by round (the order alternating), so a
  machine whose speed drifts slows both alike. Ours is the big workspace, the baseline the small one;
  the target is the median of the per-round ratios of the children's CPU time (user + sys), at most
  1.5x (CPU medians: wall time drifts with the load); wall times are reported beside them.
* tui_live: `python -m bench.tui_live` on both workspaces: a `record` by another process until the
  open dashboard's Lessons table shows it (target: median under 0.5 s on the big one), and the
  dashboard's peak RSS once opened (under 1 GB).
* tui_live_pg: the same with each workspace's log pushed into a PostgreSQL database (bench/pg.py's
  server; `store push` timed), the dashboard and the `record` on that database (target: median
  under 0.5 s on the big one); and the dashboard's open on the database, first with no parsed-log
  cache of it, then with the cache that open wrote (peak RSS under 1 GB).
* select_30k: `select --dry-run` with every lesson of `sizes["select"]["lessons"]` matching (target:
  median under 2 s, peak RSS under 500 MB), against a tenth of them (linear: at most 15x).
* import_gptme: `import-gptme` of a state file with `sizes["import"]["arms"]` arms (half matched by
  exact id, half by path suffix), against a quarter as many (linear: at most 6x for 4x the arms).

The workspaces are bench/scale.py's generated ones, copied to bench/.data/flat-* once and used from
there: the rounds append to those copies (a few KB a round), never to the generated data.
"""

from __future__ import annotations

import json
import math
import resource
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import DATA, Result, Target, lesson_credit_cmd, params_dir, reuse
from bench.scale import SCALE, log_path, run_measured, scale_workspace_data

JOURNAL = "Ran pytest and git rebase in a worktree; checked CI status before saying done.\n" * 40
GROWTH_BYTES = 64 * 1024 * 1024  # a copy the rounds grew this much is copied again
COMMANDS = {  # case -> what it runs
    "record": "record (a new session, 10 lessons, 3 KB journal)",
    "status_after_append": "status, right after that append",
    "grade": "grade ID (a session in the log's first block)",
    "grade_prefix": "grade PREFIX (a unique prefix of a session in the middle of the log)",
    "show": "show ID (a session a third of the way in)",
    "replay_after_append": "replay --floor 0.5, after the appends above",
}


def _timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child: user + sys); fails on a non-zero exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')[-800:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _work_copy(lessons: int, sessions: int) -> Path:
    """A copy of the generated workspace the rounds may append to (copied again once it grew a lot)."""
    params = {**SCALE["workspace"], "lessons": lessons, "sessions": sessions, "grades": max(1, sessions // 20)}
    source = scale_workspace_data(params)
    work = DATA / f"flat-{source.name}"
    grown = log_path(work).stat().st_size - log_path(source).stat().st_size if log_path(work).exists() else -1
    if not 0 <= grown < GROWTH_BYTES:
        shutil.rmtree(work, ignore_errors=True)
        print(f"  copying {source.name} for the flat cases ...", file=sys.stderr, flush=True)
        shutil.copytree(source, work, ignore=shutil.ignore_patterns(".cache"))
        (work / "journals").mkdir(exist_ok=True)
        (work / "journals" / "bench.md").write_text(JOURNAL)
        print("  reading it once (untimed: the parsed-log cache) ...", file=sys.stderr, flush=True)
        _timed([*lesson_credit_cmd(), "status", "--workspace", str(work)])
    return work


def _id_near(root: Path, fraction: float) -> str:
    """The id of a session about `fraction` of the way into the log (read at that offset)."""
    log = log_path(root)
    with open(log, "rb") as handle:
        handle.seek(int(log.stat().st_size * fraction))
        handle.readline()
        while True:
            line = handle.readline()
            record = json.loads(line)
            if record.get("type") == "session":
                return str(record["session_id"])


def _commands(root: Path, round_no: int, lessons: list[str]) -> list[tuple[str, list[str]]]:
    cli, w = lesson_credit_cmd(), ["--workspace", str(root)]
    first, middle, third = _id_near(root, 0.0), _id_near(root, 0.5), _id_near(root, 0.33)
    value = ["0.3", "0.7"][round_no % 2]
    record = [*cli, "record", *w, "--session-id", f"bench-{uuid.uuid4().hex[:12]}"]
    record += ["--journal", str(root / "journals" / "bench.md"), "--lessons", *lessons, "--reward", "0.6"]
    return [
        ("record", record),
        ("status_after_append", [*cli, "status", *w]),
        ("grade", [*cli, "grade", *w, first, value]),
        ("grade_prefix", [*cli, "grade", *w, middle.split("-")[0], value]),  # s0500000: names one session
        ("show", [*cli, "show", *w, third]),
        ("replay_after_append", [*cli, "replay", *w, "--floor", "0.5"]),
    ]


def case_flat(sizes: dict[str, Any]) -> list[Result]:
    p = sizes["flat"]
    small, big = _work_copy(p["lessons"], p["small"]), _work_copy(p["lessons"], p["big"])
    lessons = [f"cat{i % 8}/lesson-{i}.md" for i in range(min(10, p["lessons"]))]
    wall: dict[tuple[str, Path], list[float]] = {}
    cpu: dict[tuple[str, Path], list[float]] = {}
    for round_no in range(p["rounds"]):
        for root in (small, big) if round_no % 2 == 0 else (big, small):
            print(f"  flat round {round_no + 1}/{p['rounds']} on {root.name} ...", file=sys.stderr, flush=True)
            for name, cmd in _commands(root, round_no, lessons):
                w, c = _timed(cmd)
                wall.setdefault((name, root), []).append(w)
                cpu.setdefault((name, root), []).append(c)
    results = []
    for name in COMMANDS:
        ours, base = cpu[(name, big)], cpu[(name, small)]
        ratios = [a / b for a, b in zip(ours, base, strict=True)]
        wall_ratios = [a / b for a, b in zip(wall[(name, big)], wall[(name, small)], strict=True)]
        results.append(
            Result(
                f"flat_{name}",
                ours,
                base,
                f"the same command at {p['small']:,} sessions",
                Target(math.inf, max_ratio=1.5),
                f"`lesson-credit {COMMANDS[name]}` at {p['big']:,} sessions against {p['small']:,}, "
                f"{p['lessons']:,} lessons, {p['rounds']} interleaved rounds; "
                f"times are the child's CPU (user+sys); wall medians {float(np.median(wall[(name, big)])):.3f} s "
                f"against {float(np.median(wall[(name, small)])):.3f} s (paired wall ratio median "
                f"{float(np.median(wall_ratios)):.2f}x)",
                {"wall_s": wall[(name, big)], "baseline_wall_s": wall[(name, small)], "wall_ratios": wall_ratios},
                ratios=ratios,
            )
        )
    return results


def _live_probe(root: Path, commits: int, store_url: str | None = None) -> tuple[dict[str, Any], float]:
    """`python -m bench.tui_live` on `root`: (its TUI-LIVE result, the peak RSS GNU time saw)."""
    cmd = [sys.executable, "-m", "bench.tui_live", "--workspace", str(root), "--commits", str(commits)]
    cmd += ["--store", store_url] if store_url else []
    run = run_measured(cmd, cwd=Path(__file__).resolve().parent.parent)
    line = next(x for x in run.stdout.decode().splitlines() if x.startswith("TUI-LIVE "))
    return json.loads(line[len("TUI-LIVE ") :]), run.rss_mb


def case_tui_live(sizes: dict[str, Any]) -> list[Result]:
    p = sizes["flat"]
    small, big = _work_copy(p["lessons"], p["small"]), _work_copy(p["lessons"], p["big"])
    probes: dict[Path, dict[str, Any]] = {}
    rss: dict[Path, float] = {}
    for root in (small, big):
        print(f"  dashboard live on {root.name} ...", file=sys.stderr, flush=True)
        probes[root], rss[root] = _live_probe(root, p["commits"])
    ours, base = probes[big], probes[small]
    return [
        Result(
            "tui_live_commit",
            ours["latency_s"],
            base["latency_s"],
            f"the same at {p['small']:,} sessions",
            Target(math.inf, max_median_s=0.5),
            f"a `record` by another process until the open dashboard's Lessons table shows it, at {p['big']:,} "
            f"sessions ({p['commits']} commits); longest event-loop stalls {max(ours['stall_s']):.2f} s",
            {"probe": ours, "baseline_probe": base},
        ),
        Result(
            "tui_open_memory",
            [ours["open_s"]],
            [base["open_s"]],
            f"the same at {p['small']:,} sessions",
            Target(math.inf, max_rss_mb=1024),
            f"open at {p['big']:,} sessions until the Lessons table has rows; RSS is the dashboard process's "
            f"peak once open ({ours['open_peak_rss_mb']:.0f} MB; whole probe {ours['peak_rss_mb']:.0f} MB; with "
            f"the joint fit's child process {rss[big]:.0f} MB)",
            rss_mb=ours["open_peak_rss_mb"],
        ),
    ]


def _pg_caches(root: Path) -> list[Path]:
    """The parsed-log caches of database stores in the workspace (one SQLite database each: core/log/cache.py)."""
    return sorted((log_path(root).parent / ".cache").glob("derived-pg-*"))


def _live_on_database(make_database: Any, root: Path, name: str, commits: int) -> dict[str, Any]:
    """`root`'s log pushed into a fresh database `name` (`store push`, timed; then VACUUM ANALYZE),
    then the dashboard opened on it twice: first with no parsed-log cache of that database (no commits), then with
    the cache the first open wrote, for `commits` commits."""
    for path in _pg_caches(root):
        path.unlink()
    url = make_database(name)
    print(f"  store push of {root.name} into {name} ...", file=sys.stderr, flush=True)
    push = run_measured(
        [*lesson_credit_cmd(), "store", "push", "--workspace", str(root), "--store", url, "--agent", "bench-push"]
    )
    vacuum_s = _vacuum(url)
    print(
        f"  pushed in {push.seconds:.0f} s, vacuumed in {vacuum_s:.0f} s; dashboard on the database, first open ...",
        file=sys.stderr,
        flush=True,
    )
    try:
        first, first_rss = _live_probe(root, 0, url)
        cached = bool(_pg_caches(root))
        print("  dashboard on the database, live ...", file=sys.stderr, flush=True)
        second, second_rss = _live_probe(root, commits, url)
    finally:
        for path in _pg_caches(root):  # this database's, gone with it
            path.unlink()
    return {
        "push_s": push.seconds,
        "push_rss_mb": push.rss_mb,
        "vacuum_s": vacuum_s,
        "first": first,
        "first_rss_mb": first_rss,
        "cache_written": cached,
        "live": second,
        "live_rss_mb": second_rss,
    }


def _vacuum(url: str) -> float:
    """VACUUM ANALYZE of the events just pushed (untimed; seconds): autovacuum's first pass over a
    million fresh rows (reading them all, setting their hint bits) otherwise lands in the middle of
    the measurements, a minute after the push."""
    import psycopg

    start = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE) lesson_credit.events")
    return time.perf_counter() - start


def case_tui_live_pg(sizes: dict[str, Any]) -> list[Result]:
    """tui_live with the events in PostgreSQL (bench/pg.py's server): each workspace's log pushed
    into a database of its own, the dashboard and the other agent's `record` on that database."""
    from bench.pg import _server

    p = sizes["flat"]
    small, big = _work_copy(p["lessons"], p["small"]), _work_copy(p["lessons"], p["big"])
    with _server() as make_database:
        base = _live_on_database(make_database, small, "bench_live_small", p["commits"])
        ours = _live_on_database(make_database, big, "bench_live_big", p["commits"])
    live, first = ours["live"], ours["first"]
    opened = (
        f"first open (no parsed-log cache) {first['open_s']:.2f} s to rows, {first['open_idle_s']:.2f} s to the "
        f"first snapshot, longest stall {first['open_stall_s']:.2f} s, {first['open_peak_rss_mb']:.0f} MB; "
        f"second open {live['open_s']:.2f} s, {live['open_idle_s']:.2f} s, stall {live['open_stall_s']:.2f} s, "
        f"{live['open_peak_rss_mb']:.0f} MB (the first open {'wrote' if ours['cache_written'] else 'did not write'} "
        "the cache)"
    )
    return [
        Result(
            "tui_live_commit_pg",
            live["latency_s"],
            base["live"]["latency_s"],
            f"the same at {p['small']:,} sessions",
            Target(math.inf, max_median_s=0.5),
            f"a `record --store URL` by another process until the dashboard open on the same database shows "
            f"it, at {p['big']:,} sessions ({p['commits']} commits; the commit: the database's last position "
            f"grew); longest event-loop stalls {max(live['stall_s'], default=0.0):.2f} s; `store push` "
            f"{ours['push_s']:.0f} s ({ours['push_rss_mb']:.0f} MB), {base['push_s']:.1f} s at {p['small']:,}; "
            f"then VACUUM ANALYZE {ours['vacuum_s']:.0f} s (untimed)",
            {"big": ours, "small": base},
        ),
        Result(
            "tui_open_pg",
            [first["open_s"], live["open_s"]],
            [base["first"]["open_s"], base["live"]["open_s"]],
            f"the same at {p['small']:,} sessions",
            Target(math.inf, max_rss_mb=1024),
            f"the dashboard on the database at {p['big']:,} sessions until the Lessons table has rows: {opened}; "
            f"RSS: the dashboard process's peak once open, the larger of the two opens (with the joint fit's "
            f"child process {max(ours['first_rss_mb'], ours['live_rss_mb']):.0f} MB)",
            rss_mb=max(first["open_peak_rss_mb"], live["open_peak_rss_mb"]),
        ),
    ]


def _select_workspace(lessons: int) -> Path:
    """`lessons` lesson files that all match the context "deploy", and an empty log."""
    path, full = params_dir("select", {"lessons": lessons})
    if not reuse(path, full):
        shutil.rmtree(path, ignore_errors=True)
        for i in range(lessons):
            file = path / "lessons" / f"cat{i % 10}" / f"lesson-{i}.md"
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(f'---\nmatch:\n  keywords: ["deploy", "word{i}"]\nstatus: active\n---\n\n# Lesson {i}\n')
        (path / "context.txt").write_text("We deploy the release today.\n")
        (path / "params.json").write_text(json.dumps(full, sort_keys=True))
    state = path / "state" / "lesson-thompson"
    if not state.is_dir():
        # the library's cache, as a user's workspace has it: a read writes no cache into a folder of lessons alone
        # (no state folder), so without it every select parsed the 30,000 files again: 5.2 s of CPU, 1.9 s with it
        state.mkdir(parents=True)
        _timed([*lesson_credit_cmd(), "status", "--workspace", str(path)])
    return path


def case_select(sizes: dict[str, Any]) -> list[Result]:
    n, runs = sizes["select"]["lessons"], sizes["select"]["runs"]
    big, small = _select_workspace(n), _select_workspace(max(1, n // 10))
    ours: list[float] = []
    base: list[float] = []
    peak = 0.0
    for i in range(runs):
        for root, into in ((big, ours), (small, base)) if i % 2 == 0 else ((small, base), (big, ours)):
            cmd = [*lesson_credit_cmd(), "select", "--workspace", str(root), "--context", str(root / "context.txt")]
            cmd += ["--dry-run", "--seed", str(i)]
            run = run_measured(cmd)
            into.append(run.seconds)
            peak = max(peak, run.rss_mb) if root == big else peak
    return [
        Result(
            "select_30k",
            ours,
            base,
            f"the same with {max(1, n // 10):,} matching lessons",
            Target(math.inf, max_median_s=2.0, max_rss_mb=500, max_ratio=15.0),
            f"`select --dry-run` with all {n:,} lessons matching (each at the prior: no evidence yet), wall time "
            "and peak RSS of the process; the ratio is against a tenth as many (linear: at most 15x)",
            ratios=[a / b for a, b in zip(ours, base, strict=True)],
            rss_mb=peak,
        )
    ]


def _import_workspace(arms: int) -> tuple[Path, Path]:
    """A library of `arms` lessons and a gptme state file naming each once: half by its id, half by
    an old path ending in it (matched by suffix)."""
    path, full = params_dir("import", {"arms": arms})
    state = path / "bandit-state.json"
    if not reuse(path, full):
        shutil.rmtree(path, ignore_errors=True)
        for i in range(arms):
            file = path / "lessons" / f"cat{i % 10}" / f"lesson-{i}.md"
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(f'---\nmatch:\n  keywords: ["k{i}"]\nstatus: active\n---\n\n# Lesson {i}\n')
        named = {
            (f"lessons/cat{i % 10}/lesson-{i}.md" if i % 2 else f"/old/home/agent/x/cat{i % 10}/lesson-{i}.md"): {
                "alpha": 1.0 + i % 7,
                "beta": 2.0,
                "total_selections": i % 5,
                "total_rewards": i % 3,
            }
            for i in range(arms)
        }
        state.write_text(json.dumps({"arms": named}))
        (path / "params.json").write_text(json.dumps(full, sort_keys=True))
        _timed([*lesson_credit_cmd(), "status", "--workspace", str(path)])  # the library's cache
    return path, state


def case_import(sizes: dict[str, Any]) -> list[Result]:
    n, runs = sizes["import"]["arms"], sizes["import"]["runs"]
    roots = {size: _import_workspace(size) for size in (n, max(1, n // 4))}
    times: dict[int, list[float]] = {size: [] for size in roots}
    log_rel = Path("state") / "lesson-thompson" / "sessions.jsonl"
    for i in range(runs):
        for size in sorted(roots, reverse=i % 2 == 0):
            root, state = roots[size]
            (root / log_rel).unlink(missing_ok=True)  # each run imports into an empty log
            wall, _ = _timed([*lesson_credit_cmd(), "import-gptme", "--workspace", str(root), str(state)])
            times[size].append(wall)
    ours, base = times[n], times[max(1, n // 4)]
    return [
        Result(
            "import_gptme",
            ours,
            base,
            f"the same with {max(1, n // 4):,} arms",
            Target(math.inf, max_ratio=6.0),
            f"`import-gptme` of {n:,} arms (half by exact id, half by path suffix) into a library of as many "
            "lessons; the ratio is against a quarter as many arms (linear: about 4x; quadratic: 16x)",
            ratios=[a / b for a, b in zip(ours, base, strict=True)],
        )
    ]


CASES = {
    "flat": case_flat,
    "tui_live": case_tui_live,
    "tui_live_pg": case_tui_live_pg,
    "select_30k": case_select,
    "import_gptme": case_import,
}
SCALE_CASES = {"flat": case_flat, "tui_live": case_tui_live, "tui_live_pg": case_tui_live_pg}  # 10k against 1M
