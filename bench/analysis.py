"""Bench cases of the effect analysis on the 100k-session bench workspace (1,000 lessons).

joint_fit: `lesson_credit.core.analysis.joint.fit_joint` on the log's design, empirical-Bayes penalty included (target
< 1 s). Baseline: the same ridge solved the plain way, X'X accumulated session by session into
a dense matrix, then one dense solve and inverse at the penalty ours chose; both must give the
same coefficients, and the same sds where ours is exact (up to `DENSE_MAX` lessons); beyond it
ours are the neighbourhood variances (core/analysis/neighbourhoods.py): never above the exact ones, within 2%
in median.

loo_cli: `lesson-credit loo --no-write --json` subprocess wall time, end to end (target < 3 s); the
detail adds its CPU time (user + sys) per run, which a busy machine inflates less.
Baseline: `lesson-credit status --json` on the same workspace (reading and folding the same
log), so the ratio is what the analysis adds on top of reading the log.
"""

from __future__ import annotations

import json
import resource
import sys
from typing import Any

import numpy as np

from bench.harness import Result, Target, best_of, lesson_credit_cmd, run_cli, time_cli, workspace_data


def _baseline_columns(design: Any) -> np.ndarray:
    """Each graded session's unpenalised columns, one-hot: its category, its time block but the last
    (the reference), its agent but the first. The partition into blocks is the design's (`block_codes`)."""
    from lesson_credit.core.analysis.joint import block_codes

    n = design.n
    parts = [np.eye(design.n_categories)[design.category]]
    if design.n_blocks > 1:
        parts.append(np.eye(design.n_blocks)[block_codes(n, design.n_blocks)][:, :-1])
    if design.agent is not None and design.n_agents > 1:
        parts.append(np.eye(design.n_agents)[design.agent][:, 1:])
    return np.hstack(parts)


def _dense_baseline(design: Any, penalty: float) -> tuple[np.ndarray, np.ndarray]:
    """Ridge with unpenalised baselines (categories, time blocks, agents), the straightforward way:
    (coef, sd) per active lesson."""
    n_arms = design.n_arms
    active = np.flatnonzero(np.bincount(design.entry_arm, minlength=n_arms) > 0)
    col = np.full(n_arms, -1)
    col[active] = np.arange(len(active))
    z = _baseline_columns(design)
    p, c = len(active), z.shape[1]
    size = c + p
    xtx = np.zeros((size, size))
    xty = np.zeros(size)
    order = np.argsort(design.entry_row, kind="stable")
    rows, arms, weights = design.entry_row[order], design.entry_arm[order], design.entry_weight[order]
    starts = np.searchsorted(rows, np.arange(design.n + 1))
    for i in range(design.n):
        lo, hi = starts[i], starts[i + 1]
        zi = np.flatnonzero(z[i])
        idx = np.concatenate((zi, c + col[arms[lo:hi]]))
        val = np.concatenate((z[i, zi], weights[lo:hi]))
        xtx[np.ix_(idx, idx)] += np.outer(val, val)
        xty[idx] += val * design.reward[i]
    xtx[c:, c:] += penalty * np.eye(p)
    solution = np.linalg.solve(xtx, xty)
    y = design.reward
    yy = float(y @ y)
    q = yy - float(solution @ xty)  # RSS + penalty * |beta|^2
    sigma2 = q / (design.n - c)
    cov = np.linalg.inv(xtx)
    return solution[c:], np.sqrt(sigma2 * np.diag(cov)[c:])


def case_analysis(sizes: dict[str, Any]) -> list[Result]:
    from lesson_credit.core.analysis.joint import build_design, fit_joint
    from lesson_credit.core.workspace import Workspace

    root = workspace_data(sizes["workspace"])
    params = sizes["workspace"]
    ws = Workspace(root)
    data = ws.data()
    categories = ws.session_table().categories
    results = []

    runs = 5 if params["sessions"] >= 100_000 else 3
    times, fit = best_of(lambda _: fit_joint(build_design(data, categories, 0.3)), runs)
    design = build_design(data, categories, 0.3)
    base_times, (coef, sd) = best_of(lambda _: _dense_baseline(design, fit.penalty), 1)
    active = np.isfinite(fit.coef)
    failed = []
    ratio = fit.coef_sd[active] / sd
    exact_sd = np.allclose(ratio, 1.0, rtol=1e-6)
    close_sd = float(ratio.max()) <= 1.0 + 1e-6 and abs(float(np.median(ratio)) - 1.0) <= 0.02
    if not (np.allclose(fit.coef[active], coef, atol=1e-8) and (exact_sd if fit.solver == "dense" else close_sd)):
        failed.append("numbers differ")
    detail = (
        f"fit_joint ({fit.solver}: design, empirical-Bayes search, posterior) on {design.n:,} graded sessions, "
        f"{int(active.sum()):,} lessons, {len(design.entry_arm):,} injections; penalty {fit.penalty:.3g}, "
        f"prior sd {fit.prior_sd:.3g}"
    )
    results.append(
        Result(
            "joint_fit",
            times,
            base_times,
            "dense X'X accumulated per session + solve at the same penalty",
            Target(1.0),
            detail,
            failed=failed,
        )
    )

    cmd = [*lesson_credit_cmd(), "loo", "--workspace", str(root), "--no-write", "--json"]
    run_cli([*lesson_credit_cmd(), "status", "--workspace", str(root)])  # the parsed-log cache, as a user has it
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    ours, proc = time_cli(cmd, 3)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) / len(ours)  # the measure
    payload = json.loads(proc.stdout)
    failed = [] if len(payload["results"]) >= params["lessons"] * 0.9 else ["too few results"]
    base, _ = time_cli([*lesson_credit_cmd(), "status", "--workspace", str(root), "--json"], 3)
    results.append(
        Result(
            "loo_cli",
            ours,
            base,
            "lesson-credit status --json (same log read)",
            Target(3.0),
            f"`lesson-credit loo --no-write --json` subprocess wall time, {params['sessions']:,}-session log, "
            f"{len(payload['results']):,} lessons (joint fit, LOO, category control, flags); CPU (user + sys) "
            f"{cpu:.2f} s a run (mean of {len(ours)})",
            failed=failed,
        )
    )
    return results


if __name__ == "__main__":  # python -m bench.analysis: the quick sizes, printed
    from bench.harness import QUICK, print_table

    print_table(case_analysis(QUICK))
    sys.exit(0)
