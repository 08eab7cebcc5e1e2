"""Bench cases of the selection policies on the 100k-session bench workspace (1,000 lessons).

select_joint: `lesson-credit select --policy joint --dry-run` subprocess wall time, with the joint
fit's cache present (as after any earlier `select` or `loo` on the same log version). Target: within
1.5x of the baseline, `lesson-credit select --policy seed --dry-run` (Thompson on the Beta
posteriors, what `select` always did) in the same run; the two are timed interleaved, since this
machine's speed drifts within minutes.

select_joint_refit: the same with the cache deleted before each run (the first `select` after a new
record or grade): the fit itself. Reported, no target.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path
from typing import Any

from bench.harness import Result, Target, lesson_credit_cmd, run_cli, workspace_data

CONTEXT = "fix the git worktree after a rebase; pytest was flaky; commit and push with --force-with-lease\n"


def _select(root: Path, context: Path, policy: str) -> list[str]:
    where = [*lesson_credit_cmd(), "select", "--workspace", str(root), "--context", str(context)]
    return [*where, "--policy", policy, "--seed", "7", "--dry-run", "--json"]


def _timed(cmd: list[str]) -> tuple[float, Any]:
    start = time.perf_counter()
    proc = run_cli(cmd)
    return time.perf_counter() - start, json.loads(proc.stdout)


def case_policy(sizes: dict[str, Any]) -> list[Result]:
    root = workspace_data(sizes["workspace"])
    runs = max(3, sizes["runs"]["status"][0])
    context = root.parent / "select-context.txt"
    context.write_text(CONTEXT, encoding="utf-8")
    cache = root / "state" / "lesson-thompson" / ".cache" / "joint-posterior.msgpack"
    joint, seed = _select(root, context, "joint"), _select(root, context, "seed")
    run_cli(joint)  # parsed-log and joint caches written, as any earlier command on this log leaves them
    ours: list[float] = []
    base: list[float] = []
    failed: list[str] = []
    payload: dict[str, Any] = {}
    for _ in range(runs):
        t, payload = _timed(joint)
        ours.append(t)
        t, baseline_payload = _timed(seed)
        base.append(t)
        if payload["candidates"] != baseline_payload["candidates"] or payload["policy"] != "joint":
            failed = ["the two policies saw different candidates"]
    n_cand = len(payload.get("candidates", ()))
    detail = (
        f"`lesson-credit select --policy joint --dry-run` subprocess wall time on a {sizes['workspace']['sessions']:,}-"
        f"session log, {sizes['workspace']['lessons']:,} lessons, {n_cand} matching; joint fit cache present; "
        "interleaved with the baseline"
    )
    results = [
        Result(
            "select_joint",
            ours,
            base,
            "lesson-credit select --policy seed --dry-run (Beta posteriors)",
            Target(math.inf, min_speedup=1 / 1.5),
            detail,
            failed=failed,
        )
    ]
    refit: list[float] = []
    for _ in range(max(2, runs // 2)):
        cache.unlink(missing_ok=True)
        refit.append(_timed(joint)[0])
    results.append(
        Result(
            "select_joint_refit",
            refit,
            base,
            "lesson-credit select --policy seed --dry-run (Beta posteriors)",
            Target(math.inf),
            "the same with the joint fit's cache deleted before each run (first select after a new record): "
            "fit + write the cache",
        )
    )
    return results


if __name__ == "__main__":  # python -m bench.policy: the quick sizes, printed
    from bench.harness import FULL, QUICK, print_table

    print_table(case_policy(FULL if "--full" in sys.argv else QUICK))
    sys.exit(0)
