"""Regret against the oracle of every selection policy in every simulated world (docs/policy.md, "Regret in
the simulator").

    python scripts/policy_regret.py --seeds 10 --jobs 2 > regret.json
    python scripts/policy_regret.py --seeds 10 --scenario binary-rewards --tau 0.05 --tau 0.15 --tau 0.3

Runs only the selection loops (`core.sim.loop.run_policy`), not the estimators `simulate` also
scores, so a world costs a fraction of a `simulate` seed; the regret is the same number as
`simulate --json`'s `regret` (the same worlds, seeds and loops). `--tau` adds a joint policy
per prior floor (`joint@0.05`, ...); `--refit` sets how often the joint policy refits. Prints one
JSON object: per scenario, per policy, the regret per seed; `--table` prints the markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy: BLAS threads on a busy machine cost 50x
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from lesson_credit.core.sim.scenario import SCENARIOS  # noqa: E402

BASE_POLICIES = ("seed", "evidence", "uniform", "random", "oracle")
Z90 = 1.6448536269514722


def one_world(
    name: str,
    seed: int,
    taus: list[float],
    refit: int | None,
    weights: tuple[str, ...] = (),
    variants: tuple[tuple[str, dict[str, Any]], ...] = (),
) -> dict[str, float]:
    """Regret against the oracle of every policy in one seed's world of a scenario (`weights`: the
    joint policy again with each of these `Scenario.joint_weights`, as `joint~injection`, ...)."""
    from lesson_credit.core.sim.loop import run_policy
    from lesson_credit.core.sim.world import make_world

    sc = SCENARIOS[name] if refit is None else SCENARIOS[name].with_(joint_refit=refit)
    world = make_world(sc, seed)
    gains = {policy: run_policy(world, sc, policy, seed).session_gain for policy in BASE_POLICIES}
    for tau in taus:
        gains[f"joint@{tau:g}"] = run_policy(world, sc.with_(joint_tau_min=tau), "joint", seed).session_gain
    for label, changes in variants:
        gains[label] = run_policy(world, sc.with_(**changes), "joint", seed).session_gain
    claims: dict[str, float] = {}
    for mode in weights:
        run = run_policy(world, sc.with_(joint_weights=mode), "joint", seed)
        gains[f"joint~{mode}"] = run.session_gain
        claims[f"false~{mode}"], lift = false_claims(world, sc.with_(joint_weights=mode), run)
        if world.echo is not None:
            claims[f"lift~{mode}"] = lift
    return {policy: float((gains["oracle"] - gain).sum()) for policy, gain in gains.items()} | claims


def false_claims(world: Any, sc: Any, run: Any) -> tuple[float, float]:
    """Of the lessons without an effect injected in at least 5 sessions, the share whose 90% interval
    in the joint policy's posterior at the end of the run excludes 0 (its fit refitted on the whole
    run's log, reading injections as `sc.joint_weights` does; "centred" with the log's mean salience);
    and the lift of the echo lessons among them (`World.echo`): their mean posterior mean minus the
    other no-effect lessons' (NaN without echo lessons)."""
    from lesson_credit.core.analysis.joint import fit_joint
    from lesson_credit.core.analysis.joint_posterior import posterior_from_fit
    from lesson_credit.core.model import credit as credit_mod
    from lesson_credit.core.sim.loop import joint_design

    t = world.n_sessions
    starts = run.session_start
    rows, arms, weights = [], [], []
    for i in range(t):
        lo, hi = int(starts[i]), int(starts[i + 1])
        salience = run.entry_salience[lo:hi]
        if sc.joint_weights == "injection":
            weight = np.ones(hi - lo)
        else:
            if sc.joint_weights == "centred" and hi > lo:
                salience = np.clip(salience - salience.mean() + run.entry_salience.mean(), 0.0, 1.0)
            weight = credit_mod.weight(salience, sc.floor)
        rows.append(np.full(hi - lo, i, dtype=np.int64))
        arms.append(run.entry_arm[lo:hi].astype(np.int64))
        weights.append(weight)
    design = joint_design(world, t, run.reward, rows, arms, weights)
    mean, sd, _, _ = posterior_from_fit(fit_joint(design, tau_min=sc.joint_tau_min), design, sc.joint_tau_min)
    null = (world.final_effect == 0) & (run.injections >= 5)
    excluded = (mean - Z90 * sd > 0) | (mean + Z90 * sd < 0)
    lift = math.nan
    if world.echo is not None and (null & world.echo).any() and (null & ~world.echo).any():
        lift = float(mean[null & world.echo].mean() - mean[null & ~world.echo].mean())
    return (float(excluded[null].mean()) if null.any() else math.nan), lift


def variant(text: str) -> tuple[str, dict[str, Any]]:
    """`label:field=value,field=value`: the joint policy with these Scenario fields changed (JSON values)."""
    label, _, rest = text.partition(":")
    changes: dict[str, Any] = {}
    for part in filter(None, rest.split(",")):
        key, _, value = part.partition("=")
        try:
            changes[key] = json.loads(value)
        except json.JSONDecodeError:
            changes[key] = value
    return label, changes


def summary(values: list[float], seed_values: list[float]) -> dict[str, Any]:
    x, s = np.array(values), np.array(seed_values)
    diff = x - s
    sd = float(diff.std(ddof=1)) if len(diff) > 1 else math.nan
    return {
        "mean": float(x.mean()),
        "sd": float(x.std(ddof=1)) if len(x) > 1 else math.nan,
        "below_seed": float((diff < 0).mean()),
        "diff_vs_seed": float(diff.mean()),
        "t_vs_seed": float(diff.mean() / (sd / math.sqrt(len(diff)))) if sd and sd > 0 else math.nan,
    }


def table(results: dict[str, dict[str, list[float]]]) -> str:
    policies = list(dict.fromkeys(p for per_policy in results.values() for p in per_policy))
    lines = [
        "| scenario | " + " | ".join(policies) + " |",
        "|---|" + "---|" * len(policies),
    ]
    for name, per_policy in results.items():
        cells = []
        for policy in policies:
            if policy not in per_policy:
                cells.append("-")
                continue
            if policy.startswith("false~"):  # a share of lessons, not a regret
                cells.append(f"{np.nanmean(per_policy[policy]):.0%}")
                continue
            if policy.startswith("lift~"):  # a difference of effects per injection
                cells.append(f"{np.nanmean(per_policy[policy]):+.4f}")
                continue
            s = summary(per_policy[policy], per_policy["seed"])
            mark = ""
            if policy.startswith("joint"):
                mark = f" ({s['below_seed']:.0%}, t {s['t_vs_seed']:+.1f})"
            cells.append(f"{s['mean']:.1f} ±{s['sd']:.1f}{mark}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


CREDIT = ("seed", "evidence", "uniform")
Z95 = 1.959963984540054


def verdict(results: dict[str, dict[str, list[float]]], policy: str = "joint@0.15") -> str:
    """Per world: `policy` minus the best other selecting policy there (the credit strategy of lowest mean
    regret), paired over seeds, mean and 95% interval (t-free: mean +- 1.96 standard errors); then the
    range over worlds and the worst world. "lowest" when the interval lies below 0, "tied" when it holds 0."""
    lines = [
        f"| scenario | seeds | best credit strategy | {policy} | {policy} - best (paired, 95% CI) | verdict |",
        "|---|---|---|---|---|---|",
    ]
    worst: tuple[float, str] | None = None
    diffs = []
    for name, per_policy in results.items():
        best = min(CREDIT, key=lambda c: float(np.mean(per_policy[c])))
        x, b = np.array(per_policy[policy]), np.array(per_policy[best])
        d = x - b
        half = Z95 * float(d.std(ddof=1)) / math.sqrt(len(d)) if len(d) > 1 else math.nan
        low, high = float(d.mean()) - half, float(d.mean()) + half
        word = "lowest" if high < 0 else ("tied" if low <= 0 else "HIGHER")
        lines.append(
            f"| {name} | {len(d)} | {best} {b.mean():.1f} | {x.mean():.1f} | {d.mean():+.1f} [{low:+.1f}, {high:+.1f}] "
            f"| {word} |"
        )
        diffs.append(float(d.mean()))
        if worst is None or d.mean() > worst[0]:
            worst = (float(d.mean()), name)
    if worst is not None:
        lines.append("")
        lines.append(
            f"{policy} - best credit strategy over {len(diffs)} worlds: {min(diffs):+.1f} to {max(diffs):+.1f}; "
            f"worst world: {worst[1]} ({worst[0]:+.1f})"
        )
    return "\n".join(lines)


def tables(results: dict[str, dict[str, list[float]]], regret: bool, versus: bool) -> str:
    return "\n\n".join(([table(results)] if regret else []) + ([verdict(results)] if versus else []))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--scenario", action="append", choices=list(SCENARIOS), help="default: every scenario")
    parser.add_argument("--tau", action="append", type=float, help="joint policy prior floors (default: 0.15)")
    parser.add_argument(
        "--weights",
        action="append",
        default=[],
        choices=["salience", "injection", "centred"],
        help="also the joint policy reading injections this way (Scenario.joint_weights)",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        type=variant,
        metavar="LABEL:FIELD=VALUE,...",
        help="also the joint policy with these Scenario fields changed, e.g. nocat:joint_category=false",
    )
    parser.add_argument("--refit", type=int, default=None, help="sessions between joint refits (default: scenario's)")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--load", metavar="FILE", help="print the tables of a saved JSON run instead of running")
    parser.add_argument("--table", action="store_true", help="print a markdown table instead of JSON")
    parser.add_argument(
        "--verdict",
        action="store_true",
        help="print, per world, joint minus the best credit strategy (paired, 95%% CI), the range and the worst world",
    )
    args = parser.parse_args()
    if args.load:
        saved = json.loads(Path(args.load).read_text(encoding="utf-8"))["regret"]
        print(tables(saved, args.table, args.verdict or not args.table))
        return 0
    names = args.scenario or list(SCENARIOS)
    taus = args.tau or [0.15]
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    started = time.perf_counter()
    jobs = [(name, seed) for name in names for seed in seeds]
    with ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [
            pool.submit(one_world, name, seed, taus, args.refit, tuple(args.weights), tuple(args.variant))
            for name, seed in jobs
        ]
        done = [f.result() for f in futures]
    results: dict[str, dict[str, list[float]]] = {}
    for (name, _), regret in zip(jobs, done, strict=True):
        for policy, value in regret.items():
            results.setdefault(name, {}).setdefault(policy, []).append(value)
    if args.table or args.verdict:
        print(tables(results, args.table, args.verdict))
    else:
        print(json.dumps({"seeds": seeds, "taus": taus, "refit": args.refit, "regret": results}))
    print(f"{len(jobs)} worlds in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
