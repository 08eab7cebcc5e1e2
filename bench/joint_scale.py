"""Bench case joint_scale: the joint fit as libraries grow.

`fit_joint` (empirical-Bayes penalty included) on generated designs of 1,000, 3,000 and 10,000
lessons over 100,000 graded sessions (quick: 300 and 1,000 lessons over 10,000; smoke: 40 over 400
and 650 over 2,000, once). Ours is the default path (`solver="auto"`: iterative beyond `DENSE_MAX`
lessons); the baseline is the implementation it replaces, one eigen-decomposition of the p x p
matrix (`solver="dense"`), timed in the same run; at 10,000 lessons the baseline is not run (an
800 MB matrix and hours of eigen-decomposition): its baseline is ours at 3,000 lessons (how the
time grows), report-only.

Wall times are the harness's (best of 3); the detail adds one run's CPU time (process time, all
threads), which a machine shared with busy neighbours inflates less. Checks (the case fails on
any): at the penalty the dense fit chose, the iterative posterior means equal the dense ones (max
difference under 1e-6 of the largest); the iterative posterior sds are a lower bound of the dense
ones and within 2% of them in median (core/analysis/neighbourhoods.py's neighbourhood variances). Also timed,
report-only: `lesson_claims` (identification, groups, the unshrunk robust fit, halves and
categories) on the 3,000-lesson design.

joint_memory: the joint fit of a generated log (1,000 lessons; 1M sessions, quick 100k, smoke 3,500) in
a child process, peak RSS against the fit from the design of every injection (`_memory`).

Designs: each session picks a topic (one of p / 20) and draws most of its 4-16 lessons from that
topic's 20 and the rest from the whole library by a skewed popularity (lessons matched by
keywords cluster by topic); salience uniform; 10% of lessons have an effect.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.harness import Result, Target, best_of

ROOT = Path(__file__).resolve().parent.parent


def synthetic_design(p: int, n: int, seed: int = 0) -> Any:
    """A regression design of n graded sessions over p lessons (see the module) with rewards."""
    from lesson_credit.core.analysis.joint import Design

    rng = np.random.default_rng([seed, p, n])
    topics = max(p // 20, 1)
    topic = rng.integers(0, topics, n)
    per_session = rng.integers(4, 17, n)
    within = np.minimum(rng.binomial(per_session, 0.7), 20)
    popularity = 1.0 / np.arange(1, p + 1) ** 0.6
    popularity /= popularity.sum()
    rows = np.repeat(np.arange(n), per_session)
    slot = np.arange(len(rows)) - np.repeat(np.cumsum(per_session) - per_session, per_session)
    in_topic = slot < np.repeat(within, per_session)
    arms = np.where(
        in_topic,
        np.minimum(np.repeat(topic, per_session) * 20 + rng.integers(0, 20, len(rows)), p - 1),
        rng.choice(p, size=len(rows), p=popularity),
    )
    key = np.unique(rows * p + arms)  # one entry per (session, lesson)
    rows, arms = key // p, key % p
    weight = 0.3 + 0.7 * rng.random(len(rows))
    beta = np.where(rng.random(p) < 0.1, rng.normal(0.0, 0.15, p), 0.0)
    category = rng.integers(0, 5, n)
    reward = np.asarray(0.5 + 0.05 * category + np.bincount(rows, weights=beta[arms] * weight, minlength=n), np.float64)
    reward += rng.normal(0.0, 0.2, n)
    return Design(
        rows=np.arange(n, dtype=np.int64),
        reward=reward,
        category=category.astype(np.int64),
        n_categories=5,
        entry_row=rows.astype(np.int64),
        entry_arm=arms.astype(np.int64),
        entry_weight=weight,
        n_arms=p,
        category_names=tuple(f"c{i}" for i in range(5)),
    )


def _checks(design: Any, ours: Any, dense: Any) -> tuple[list[str], str]:
    """Compare the iterative fit with the dense one at the dense fit's penalty."""
    from lesson_credit.core.analysis.joint import fit_joint

    same = fit_joint(design, penalty=dense.penalty, solver="iterative")
    active = np.isfinite(dense.coef)
    coef_gap = float(np.max(np.abs(same.coef[active] - dense.coef[active])) / np.max(np.abs(dense.coef[active])))
    ratio = same.coef_sd[active] / dense.coef_sd[active]
    failed = []
    if coef_gap > 1e-6:
        failed.append(f"posterior means differ ({coef_gap:.1e})")
    if float(ratio.max()) > 1.0 + 1e-6:
        failed.append(f"an sd above the exact one (x{ratio.max():.4f})")
    if abs(float(np.median(ratio)) - 1.0) > 0.02:
        failed.append(f"median sd off by {float(np.median(ratio)) - 1.0:+.1%}")
    detail = (
        f"penalty {ours.penalty:.4g} (dense {dense.penalty:.4g}); at the dense penalty: means within "
        f"{coef_gap:.1e}, sd ratio median {np.median(ratio):.4f}, min {ratio.min():.4f}"
    )
    return failed, detail


def case_joint_scale(sizes: dict[str, Any]) -> list[Result]:
    sessions = sizes["workspace"]["sessions"]
    if sessions < 1_000:  # smoke: once, on small data, both paths (650 lessons: iterative)
        shapes, runs = [(40, 400), (650, 2_000)], 1
    elif sessions < 100_000:
        shapes, runs = [(300, 10_000), (1_000, 10_000)], 3
    else:
        shapes, runs = [(1_000, 100_000), (3_000, 100_000), (10_000, 100_000)], 3
    results: list[Result] = []
    previous: list[float] = []
    for p, n in shapes:
        results += _shape(synthetic_design(p, n), previous, with_claims=(p, n) == shapes[-1] or p == 3_000, runs=runs)
        previous = results[-1].ours if not results[-1].name.startswith("claims") else results[-2].ours
    return [*results, _memory(3_500 if sessions < 1_000 else 100_000 if sessions < 100_000 else 1_000_000)]


MEMORY_TARGET_MB = 560.0  # with the dashboard (368 MB at 1M sessions: bench/tui_memory.py) under 1 GB


def _memory(sessions: int) -> Result:
    """joint_memory: the joint fit of a generated log (bench/scale.py's, 1,000 lessons, ten a session) in a
    child process, as the dashboard runs it (`Workspace.effects`: `fit_log`, the sums streamed block by
    block); baseline: the same fit from the design of every injection (`fit_joint(build_design(...))`, what
    it replaced), in the same run. Peak RSS of each child (GNU time); their effects must agree."""
    from bench.scale import SCALE, ensure_cache, run_measured, scale_workspace_data

    root = scale_workspace_data({**SCALE["workspace"], "lessons": 1000, "sessions": sessions})
    ensure_cache(root)  # both children read the log through its parsed-log cache, as the dashboard's does
    runs = {}
    for how in ("streamed", "design"):
        print(f"  joint fit ({how}) of {sessions:,} sessions in a child ...", file=sys.stderr, flush=True)
        run = run_measured([sys.executable, "-m", "bench.joint_scale", "--fit", str(root), how], cwd=ROOT)
        if run.returncode != 0:
            raise RuntimeError(f"joint fit ({how}) failed: {run.stderr.decode(errors='replace')[-500:]}")
        runs[how] = (run, json.loads(run.stdout))
    (ours, mine), (base, theirs) = runs["streamed"], runs["design"]
    a, b = np.array(mine["estimate"]), np.array(theirs["estimate"])
    gap = float(np.nanmax(np.abs(a - b)) / np.nanmax(np.abs(b)))
    failed = [] if gap <= 1e-6 and np.array_equal(np.isnan(a), np.isnan(b)) else [f"estimates differ ({gap:.1e})"]
    return Result(
        "joint_memory",
        [ours.seconds],
        [base.seconds],
        f"the design of every injection: peak {base.rss_mb:,.0f} MB",
        Target(float("inf"), max_rss_mb=MEMORY_TARGET_MB),
        f"the joint fit of {sessions:,} sessions x 1,000 lessons ({mine['injections']:,} injections) in a child, "
        f"sums streamed per block: peak RSS {ours.rss_mb:,.0f} MB (baseline {base.rss_mb:,.0f} MB); estimates "
        f"within {gap:.1e} of the baseline's",
        failed=failed,
        rss_mb=ours.rss_mb,
    )


def _fit_child(root: str, how: str) -> None:
    """python -m bench.joint_scale --fit ROOT streamed|design: one joint fit of the workspace's log, its
    estimates as JSON on stdout."""
    from lesson_credit.core.analysis.joint import build_design, fit_joint, fit_log
    from lesson_credit.core.workspace import Workspace

    ws = Workspace(root)
    data, cats, agents, floor = ws.data(), ws.session_categories(), ws.session_agents(), ws.settings.floor
    streamed = how == "streamed"
    fit = fit_log(data, cats, floor, agents) if streamed else fit_joint(build_design(data, cats, floor, agents))
    print(json.dumps({"estimate": fit.estimate.tolist(), "injections": int(fit.n.sum())}))  # NaN: no estimate


def _shape(design: Any, previous: list[float], with_claims: bool, runs: int) -> list[Result]:
    """The results of one design: the fit against the dense one (or the previous size), and the claims."""
    from lesson_credit.core.analysis.claims import lesson_claims
    from lesson_credit.core.analysis.joint import fit_joint

    p, n, entries = design.n_arms, design.n, len(design.entry_arm)
    ours_times, ours = best_of(lambda _: fit_joint(design), runs)
    cpu = time.process_time()
    fit_joint(design)
    cpu = time.process_time() - cpu  # on a machine shared by busy neighbours, wall time says less than CPU time
    shape = f"fit_joint, {p:,} lessons x {n:,} sessions ({entries:,} injections), {ours.solver}, CPU {cpu:.2f} s"
    if p > 3_000:  # no dense baseline: the previous size's fit shows how the time grows
        return [
            Result(
                f"joint_scale_{p}",
                ours_times,
                baseline=previous,
                baseline_name="ours at 3,000 lessons (the dense fit would need an 800 MB matrix)",
                target=Target(float("inf")),
                detail=f"{shape}; penalty {ours.penalty:.4g}",
            )
        ]
    base_times, dense = best_of(lambda _: fit_joint(design, solver="dense"), 1)
    failed, detail = _checks(design, ours, dense)
    out = [
        Result(
            f"joint_scale_{p}",
            ours_times,
            baseline=base_times,
            baseline_name="the dense fit it replaces (one eigh of the p x p matrix)",
            target=Target(1.5 if p == 3_000 else float("inf")),
            detail=f"{shape}; {detail}",
            failed=failed,
        )
    ]
    if with_claims:
        claim_times, claims = best_of(lambda _: lesson_claims(design), 1)
        identified = sum(1 for c in claims.columns if c.identified)
        detail = f"lesson_claims (groups, identification, unshrunk robust fit, halves, categories): {identified:,} "
        detail += f"of {len(claims.columns):,} identified, {'dense' if claims.dense else 'iterative'}"
        out.append(
            Result(
                f"claims_{p}",
                claim_times,
                baseline=ours_times[:1],
                baseline_name="fit_joint on the same design",
                target=Target(float("inf")),
                detail=detail,
            )
        )
    return out


if __name__ == "__main__":  # python -m bench.joint_scale [--quick]
    from bench.harness import FULL, QUICK, print_table

    if sys.argv[1:2] == ["--fit"]:
        _fit_child(sys.argv[2], sys.argv[3])
        sys.exit(0)
    print_table(case_joint_scale(QUICK if "--quick" in sys.argv else FULL))
    sys.exit(0)
