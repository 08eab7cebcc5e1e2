"""Our commands against gptme-sessions' on the same arms, paired: record_vs_gptme and status_vs_gptme.

* record_vs_gptme: `lesson-credit record` (a new session, 10 lessons, 3 KB journal) on a workspace of
  `sizes["gptme"]["lessons"]` lessons and `sessions` logged sessions (bench/scale.py's generator),
  against gptme-sessions' `update --outcome 0.6 --arms <the same 10>` on a copy of that workspace's
  `bandit-state.json` (the same arms: bench/baselines.py `gptme_update_main`, read from
  gptme-contrib's thompson_sampling module, not copied).
* status_vs_gptme: `lesson-credit status` with the caches warm (one untimed status first) against
  gptme-sessions' `status` on that copy (`gptme_status_main`).

Each round runs ours and the baseline in turn (the order alternating); the target is the median of the
per-round ratios of the children's CPU time (user + sys), at most 2x; wall times are reported beside
them. The workspace is bench/flat.py's copy of the generated one (the rounds append to it).
"""

from __future__ import annotations

import math
import shutil
import sys
import uuid
from pathlib import Path
from typing import Any

import numpy as np

from bench.flat import _timed, _work_copy
from bench.harness import DATA, ROOT, Result, Target, lesson_credit_cmd
from bench.scale import log_path

REWARD = "0.6"


def _prepared(p: dict[str, Any]) -> tuple[Path, Path, list[str], list[str]]:
    """The workspace (one untimed `record` first, which writes its bandit-state.json), a copy of that
    state file for the baseline (the same arms, fresh each case), the 10 lessons recorded and the
    `record` command line without its session id."""
    work = _work_copy(p["lessons"], p["sessions"])
    lessons = [f"cat{i % 8}/lesson-{i}.md" for i in range(min(10, p["lessons"]))]
    record = [
        *lesson_credit_cmd(),
        "record",
        "--workspace",
        str(work),
        "--journal",
        str(work / "journals" / "bench.md"),
    ]
    record += ["--lessons", *lessons, "--reward", REWARD]
    _timed([*record, "--session-id", f"bench-{uuid.uuid4().hex[:12]}"])
    peer = DATA / f"gptme-{work.name}" / "bandit-state.json"
    peer.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(log_path(work).parent / "bandit-state.json", peer)
    return work, peer, lessons, record


def _baseline(function: str, *args: str) -> list[str]:
    script = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from bench.baselines import {function} as main; "
    script += "main(*sys.argv[1:])"
    return [sys.executable, "-c", script, *args]


def _paired(rounds: int, ours: Any, base: Any) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """`rounds` rounds of ours and the baseline in turn (the order alternating): (wall, CPU) of each."""
    mine, theirs = [], []
    for round_no in range(rounds):
        if round_no % 2 == 0:
            mine.append(_timed(ours(round_no)))
            theirs.append(_timed(base(round_no)))
        else:
            theirs.append(_timed(base(round_no)))
            mine.append(_timed(ours(round_no)))
    return mine, theirs


def _result(name: str, what: str, base_name: str, mine: list[Any], theirs: list[Any], p: dict[str, Any]) -> Result:
    ours_cpu, base_cpu = [c for _, c in mine], [c for _, c in theirs]
    ours_wall, base_wall = [w for w, _ in mine], [w for w, _ in theirs]
    wall_ratios = [a / b for a, b in zip(ours_wall, base_wall, strict=True)]
    return Result(
        name,
        ours_cpu,
        base_cpu,
        base_name,
        Target(math.inf, max_ratio=2.0),
        f"`lesson-credit {what}` at {p['sessions']:,} sessions, {p['lessons']:,} lessons, {p['rounds']} "
        f"interleaved rounds; times are the child's CPU (user+sys); wall medians {float(np.median(ours_wall)):.3f} s "
        f"against {float(np.median(base_wall)):.3f} s (paired wall ratio median {float(np.median(wall_ratios)):.2f}x)",
        {"wall_s": ours_wall, "baseline_wall_s": base_wall, "wall_ratios": wall_ratios},
        ratios=[a / b for a, b in zip(ours_cpu, base_cpu, strict=True)],
    )


def case_record_vs_gptme(sizes: dict[str, Any]) -> list[Result]:
    p = sizes["gptme"]
    _, peer, lessons, record = _prepared(p)

    def ours(_: int) -> list[str]:
        return [*record, "--session-id", f"bench-{uuid.uuid4().hex[:12]}"]

    mine, theirs = _paired(p["rounds"], ours, lambda _: _baseline("gptme_update_main", str(peer), REWARD, *lessons))
    what = "record (a new session, 10 lessons, 3 KB journal)"
    base_name = "gptme-sessions `update` (bench/baselines.py) on the same bandit-state.json"
    return [_result("record_vs_gptme", what, base_name, mine, theirs, p)]


def case_status_vs_gptme(sizes: dict[str, Any]) -> list[Result]:
    p = sizes["gptme"]
    work, peer, _, _ = _prepared(p)
    cmd = [*lesson_credit_cmd(), "status", "--workspace", str(work)]
    _timed(cmd)  # warm: whatever the last write left to bring up to date is done, untimed
    mine, theirs = _paired(p["rounds"], lambda _: cmd, lambda _: _baseline("gptme_status_main", str(peer)))
    base_name = "gptme-sessions `status` (bench/baselines.py) on the same bandit-state.json"
    return [_result("status_vs_gptme", "status (caches warm)", base_name, mine, theirs, p)]
