"""Bench case distinct_lessons: `select` (default policy: joint) and `loo` on a log that names many distinct lessons.

A session names at most 1,000 lessons, but nothing bounds how many distinct ones a log names. Two shapes,
each the demo workspace (lessons/, state/) plus generated graded sessions whose lessons no other session
names (`m/<session>-<i>.md`): 20 sessions x 1,000 lessons, and 2,000 sessions x 10 (quick: 20 x 300 and
600 x 10; smoke: 3 x 40 and 30 x 5, once). Each run is on a fresh copy without the `.cache` folder: the
joint fit is computed, as on the first `select` after a `record`. Wall time and peak RSS per run (GNU
time); the baseline is `lesson-credit status --json` on the same fresh copy (reading and folding the same
log), so the difference is what the fit adds.

Targets at full size: select under 10 s, loo under 20 s, each under 500 MB of RSS (on the code before, 20
x 1,000: select 27 s / 882 MB, loo 55 s / 1.1 GB; 2,000 x 10: select 15.7 s / 586 MB).
"""

from __future__ import annotations

import json
import math
import random
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.harness import ROOT, Result, Target, finish, lesson_credit_cmd, params_dir, reuse

TARGETS = {"select": 10.0, "loo": 20.0}
MAX_RSS_MB = 500.0


def distinct_workspace(sessions: int, distinct: int) -> Path:
    """The demo workspace plus `sessions` graded sessions of `distinct` lessons each, named by no other
    session (seeded saliences and rewards), and a context file `ctx` beside state/."""
    path, params = params_dir("distinct", {"sessions": sessions, "distinct": distinct})
    if reuse(path, params):
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    shutil.copytree(ROOT / "lessons", path / "lessons")
    shutil.copytree(ROOT / "state", path / "state", ignore=shutil.ignore_patterns(".cache"))
    rng = random.Random(sessions * 100_003 + distinct)
    with open(path / "state" / "lesson-thompson" / "sessions.jsonl", "a", encoding="utf-8") as log:
        for s in range(sessions):
            lessons = [
                {"path": f"m/{s}-{i}.md", "salience": round(rng.uniform(0.1, 1.0), 2), "included": "before"}
                for i in range(distinct)
            ]
            event = {
                "type": "session",
                "session_id": f"gen-{s}",
                "timestamp": f"2026-11-{1 + s % 28:02d}T{s % 24:02d}:00:00Z",
                "outcome": round(rng.random(), 3),
                "base_reward": round(rng.random(), 3),
                "lessons": lessons,
            }
            log.write(json.dumps(event, separators=(",", ":")) + "\n")
    (path / "ctx").write_text("git worktree pytest\n", encoding="utf-8")
    finish(path, params)
    return path


def _fresh_run(source: Path, args: list[str]) -> Any:
    """One command on a fresh copy of `source` (no `.cache`): its wall time and peak RSS."""
    from bench.scale import run_measured

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "w"
        shutil.copytree(source, work, ignore=shutil.ignore_patterns(".cache"))
        args = [a.replace("{ws}", str(work)) for a in args]
        return run_measured([*lesson_credit_cmd(), "-w", str(work), *args])


def case_distinct_lessons(sizes: dict[str, Any]) -> list[Result]:
    sessions = sizes["workspace"]["sessions"]
    if sessions < 1_000:
        shapes, runs, full = [(3, 40), (30, 5)], 1, False
    elif sessions < 100_000:
        shapes, runs, full = [(20, 300), (600, 10)], 2, False
    else:
        shapes, runs, full = [(20, 1000), (2000, 10)], 3, True
    commands = {"select": ["select", "--context", "{ws}/ctx", "--dry-run"], "loo": ["loo", "--no-write"]}
    results = []
    for n, d in shapes:
        print(f"  {n:,} sessions x {d:,} distinct lessons ...", file=sys.stderr, flush=True)
        root = distinct_workspace(n, d)
        base = [_fresh_run(root, ["status", "--json"]) for _ in range(runs)]
        for name, args in commands.items():
            ours = [_fresh_run(root, args) for _ in range(runs)]
            rss = max(run.rss_mb for run in ours)
            target = Target(TARGETS[name], max_rss_mb=MAX_RSS_MB) if full else Target(math.inf)
            results.append(
                Result(
                    f"distinct_{name}_{n}x{d}",
                    [run.seconds for run in ours],
                    [run.seconds for run in base],
                    "lesson-credit status --json on the same fresh copy",
                    target,
                    f"`lesson-credit {' '.join(args[:1])}` on a fresh copy (joint fit computed) of a log of {n:,} "
                    f"sessions naming {d:,} lessons each, {n * d:,} distinct: peak RSS {rss:,.0f} MB "
                    f"(status {max(run.rss_mb for run in base):,.0f} MB)",
                    rss_mb=rss,
                )
            )
    return results


if __name__ == "__main__":  # python -m bench.distinct_lessons [--full]: the quick sizes, printed
    from bench.harness import FULL, QUICK, print_table

    print_table(case_distinct_lessons(FULL if "--full" in sys.argv else QUICK))
    sys.exit(0)
