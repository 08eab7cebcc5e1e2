"""The simulator's report: per estimator and metric, summaries across seeds, paired comparisons,
regret against the oracle per selection policy, and the text and JSON forms."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lesson_credit.core.base.numbers import counted, signed
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.sim.loop import POLICIES
from lesson_credit.core.sim.metrics import BOTTOM_SHARE, TOP_N, nanmean
from lesson_credit.core.sim.scenario import Scenario

LOO_ESTIMATORS = ("loo-naive", "loo-category", "loo-ipw")
LOG_ESTIMATORS = (*LOO_ESTIMATORS, "joint", "dropout")  # computed on each credit strategy's log
ESTIMATORS = ("seed", "evidence", "uniform", *LOG_ESTIMATORS, "random", "oracle")
METRICS = ("spearman", "precision_at_10", "harmful_detection", "regret")
REGRET_AGAINST_ORACLE = (
    "sum over sessions of the true gain of the oracle's selection (the k candidates of highest expected gain "
    "in the session's category) minus the true gain of the policy's, in the same world"
)

DESCRIPTIONS = {
    "seed": "posterior mean, seed credit (alpha += base*w, beta += 1 - base*w)",
    "evidence": "posterior mean, evidence credit (alpha += w*base, beta += w*(1 - base))",
    "uniform": "posterior mean, uniform credit (alpha += base, beta += 1 - base)",
    "loo-naive": "leave-one-out lift: mean reward with minus without",
    "loo-category": "leave-one-out lift within session categories (CMH weights)",
    "loo-ipw": "leave-one-out lift, self-normalised inverse-propensity weighted",
    "joint": "joint estimate: category baselines + every lesson's salience weight, empirical-Bayes prior "
    "(regret: the joint selection policy's own run)",
    "dropout": "randomized: kept minus withheld mean reward where chosen lessons were withheld at random",
    "random": "reference selection: k candidates uniformly at random",
    "oracle": "reference selection: k candidates of highest true value",
}


@dataclass(frozen=True)
class SeedResult:
    """Metrics of every estimator in one seed's world: {estimator: {metric: value}}; NaN = undefined.

    Log-based estimators' metrics are the mean over the credit strategies' logs; `by_log` has each."""

    seed: int
    metrics: Mapping[str, Mapping[str, float]]
    by_log: Mapping[str, Mapping[str, Mapping[str, float]]] = field(default_factory=dict)  # estimator -> log -> m
    ceiling: float = math.nan  # best achievable Spearman, mean over the logs
    coverage: float = math.nan  # share of lessons whose joint 90% interval covers the true gain per injection
    regret: Mapping[str, float] = field(default_factory=dict)  # policy -> cumulative regret against the oracle


# ---------------------------------------------------------------- many seeds


def _clean(x: float) -> float | None:
    return x if math.isfinite(x) else None


@dataclass(frozen=True)
class MetricSummary:
    """One metric of one estimator across seeds (seeds where it is undefined are left out)."""

    mean: float
    std: float  # the sample sd, p10 and p90 over the seeds; NaN (null in --json) for one seed: no spread is known
    p10: float
    p90: float
    n: int  # seeds with a defined value

    @classmethod
    def of(cls, values: Sequence[float]) -> MetricSummary:
        x = np.array([v for v in values if math.isfinite(v)], dtype=np.float64)
        if not len(x):
            return cls(math.nan, math.nan, math.nan, math.nan, 0)
        if len(x) == 1:  # one seed: its value, and no spread (unknown, not 0: null in --json)
            return cls(float(x[0]), math.nan, math.nan, math.nan, 1)
        std = float(x.std(ddof=1))
        return cls(float(x.mean()), std, float(np.quantile(x, 0.1)), float(np.quantile(x, 0.9)), len(x))

    def as_json(self) -> dict[str, Any]:
        return {
            "mean": _clean(self.mean),
            "std": _clean(self.std),
            "p10": _clean(self.p10),
            "p90": _clean(self.p90),
            "n": self.n,
        }


@dataclass(frozen=True)
class EstimatorSummary:
    """An estimator's metrics across seeds; None where a metric does not apply to it."""

    name: str
    kind: str  # "posterior" (own run), "loo" / "joint" / "randomized" (on every strategy's log), "reference"
    description: str
    spearman: MetricSummary | None
    precision_at_10: MetricSummary | None
    harmful_detection: MetricSummary | None
    regret: MetricSummary | None
    per_seed: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # metric -> value per seed

    def metric(self, name: str) -> MetricSummary | None:
        if name not in METRICS:
            raise ValueError(f"unknown metric {name!r} (expected one of {', '.join(METRICS)})")
        result: MetricSummary | None = getattr(self, name)
        return result

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "description": self.description}
        for metric in METRICS:
            summary = self.metric(metric)
            out[metric] = None if summary is None else summary.as_json()
        out["per_seed"] = {m: [_clean(v) for v in values] for m, values in self.per_seed.items()}
        return out


@dataclass(frozen=True)
class Comparison:
    """a minus b on one metric over the seeds where both are defined; `wins`: share where a is better."""

    a: str
    b: str
    metric: str
    mean_diff: float
    std_diff: float
    wins: float
    n: int

    def as_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "metric": self.metric,
            "mean_diff": _clean(self.mean_diff),
            "std_diff": _clean(self.std_diff),
            "wins": _clean(self.wins),
            "n": self.n,
        }


@dataclass(frozen=True)
class SimulationReport:
    scenario: Scenario
    seeds: tuple[int, ...]
    estimators: tuple[EstimatorSummary, ...]
    ceiling: tuple[float, ...] = ()  # best achievable Spearman per seed
    coverage: tuple[float, ...] = ()  # the joint's 90% interval coverage per seed
    by_log: Mapping[str, Mapping[str, tuple[float, ...]]] = field(default_factory=dict)  # est -> log -> spearman
    regret: Mapping[str, tuple[float, ...]] = field(default_factory=dict)  # policy -> regret vs oracle per seed

    @property
    def ceiling_mean(self) -> float:
        return nanmean(self.ceiling)

    @property
    def coverage_mean(self) -> float:
        return nanmean(self.coverage)

    def versus_posterior(self, estimator: str = "joint") -> dict[str, Comparison]:
        """Per credit strategy: the estimator on that strategy's log minus its posterior, Spearman, seed by seed."""
        out = {}
        for strategy in credit_mod.STRATEGIES:
            x = np.array(self.by_log.get(estimator, {}).get(strategy, ()), dtype=np.float64)
            y = np.array(self.estimator(strategy).per_seed.get("spearman", ()), dtype=np.float64)
            if len(x) != len(y) or not len(x):
                out[strategy] = Comparison(estimator, strategy, "spearman", math.nan, math.nan, math.nan, 0)
                continue
            both = np.isfinite(x) & np.isfinite(y)
            diff = x[both] - y[both]
            std = float(diff.std(ddof=1)) if len(diff) > 1 else math.nan  # (one seed: unknown)
            mean = float(diff.mean()) if len(diff) else math.nan
            wins = float((diff > 0).mean()) if len(diff) else math.nan
            out[strategy] = Comparison(estimator, strategy, "spearman", mean, std, wins, len(diff))
        return out

    def estimator(self, name: str) -> EstimatorSummary:
        for summary in self.estimators:
            if summary.name == name:
                return summary
        raise KeyError(name)

    def ranking(self, metric: str = "spearman") -> list[str]:
        """Estimators with the metric, best first (highest, or lowest for regret)."""
        scored = [(s.name, s.metric(metric)) for s in self.estimators]
        present = [(name, m.mean) for name, m in scored if m is not None and m.n]
        sign = 1.0 if metric == "regret" else -1.0
        return [name for name, _ in sorted(present, key=lambda item: sign * item[1])]

    def compare(self, a: str, b: str, metric: str = "spearman") -> Comparison:
        """Paired comparison of estimators a and b on a metric, seed by seed (the world is shared)."""
        if metric not in METRICS:
            raise ValueError(f"unknown metric {metric!r} (expected one of {', '.join(METRICS)})")
        x = np.array(self.estimator(a).per_seed.get(metric, ()), dtype=np.float64)
        y = np.array(self.estimator(b).per_seed.get(metric, ()), dtype=np.float64)
        if len(x) != len(self.seeds) or len(y) != len(self.seeds):
            return Comparison(a, b, metric, math.nan, math.nan, math.nan, 0)
        both = np.isfinite(x) & np.isfinite(y)
        diff = x[both] - y[both]
        if not len(diff):
            return Comparison(a, b, metric, math.nan, math.nan, math.nan, 0)
        better = diff < 0 if metric == "regret" else diff > 0
        std = float(diff.std(ddof=1)) if len(diff) > 1 else math.nan  # (one seed: unknown)
        return Comparison(a, b, metric, float(diff.mean()), std, float(better.mean()), len(diff))

    def as_json(self) -> dict[str, Any]:
        versus = {
            metric: [
                self.compare(s.name, "seed", metric).as_json()
                for s in self.estimators
                if s.name != "seed" and s.metric(metric) is not None
            ]
            for metric in METRICS
        }
        return {
            "scenario": self.scenario.as_json(),
            "seeds": list(self.seeds),
            "metrics": {
                "spearman": "Spearman rho between estimate and true value (effect * P(relevant | candidate)), "
                "over lessons injected at least once",
                "precision_at_10": f"share of the {TOP_N} highest estimates that are truly helpful lessons",
                "harmful_detection": f"share of truly harmful lessons in the bottom {BOTTOM_SHARE:.0%} of the estimate",
                "regret": "sum over sessions of best achievable minus realised true gain of the selection",
            },
            "estimators": [s.as_json() for s in self.estimators],
            "ranking": {metric: self.ranking(metric) for metric in METRICS},
            "versus_seed": versus,
            "ceiling": _clean(self.ceiling_mean),
            "ceiling_per_seed": [_clean(v) for v in self.ceiling],
            "coverage": {
                "joint_90": _clean(self.coverage_mean),
                "per_seed": [_clean(v) for v in self.coverage],
                "target": [0.85, 0.95],
            },
            "by_log": {
                name: {log: MetricSummary.of(values).as_json() for log, values in logs.items()}
                for name, logs in self.by_log.items()
            },
            "joint_versus_posterior": {k: v.as_json() for k, v in self.versus_posterior("joint").items()},
            "regret_against": REGRET_AGAINST_ORACLE,
            "regret": {policy: self.regret_json(policy) for policy in self.regret},
        }

    def regret_summary(self, policy: str) -> MetricSummary:
        """A policy's cumulative regret against the oracle, across seeds."""
        return MetricSummary.of(self.regret.get(policy, ()))

    def regret_versus(self, policy: str, other: str = "seed") -> Comparison:
        """Regret of `policy` minus `other`'s, seed by seed; `wins`: share of seeds where `policy`'s is lower."""
        x = np.array(self.regret.get(policy, ()), dtype=np.float64)
        y = np.array(self.regret.get(other, ()), dtype=np.float64)
        if len(x) != len(y) or not len(x):
            return Comparison(policy, other, "regret", math.nan, math.nan, math.nan, 0)
        both = np.isfinite(x) & np.isfinite(y)
        diff = x[both] - y[both]
        if not len(diff):
            return Comparison(policy, other, "regret", math.nan, math.nan, math.nan, 0)
        std = float(diff.std(ddof=1)) if len(diff) > 1 else math.nan  # (one seed: unknown)
        return Comparison(policy, other, "regret", float(diff.mean()), std, float((diff < 0).mean()), len(diff))

    def regret_json(self, policy: str) -> dict[str, Any]:
        return {
            **self.regret_summary(policy).as_json(),
            "per_seed": [_clean(v) for v in self.regret.get(policy, ())],
            "versus_seed": self.regret_versus(policy, "seed").as_json(),
        }


def _kind(name: str) -> str:
    if name in credit_mod.STRATEGIES:
        return "posterior"
    if name in LOO_ESTIMATORS:
        return "loo"
    if name == "joint":
        return "joint"
    if name == "dropout":
        return "randomized"
    return "reference"


def summarise(sc: Scenario, results: Sequence[SeedResult]) -> SimulationReport:
    estimators = []
    for name in ESTIMATORS:
        kind = _kind(name)
        per_seed = {m: tuple(float(r.metrics[name][m]) for r in results) for m in METRICS}
        applies = {
            "spearman": kind != "reference",
            "precision_at_10": kind != "reference",
            "harmful_detection": kind != "reference",
            "regret": kind in ("posterior", "reference", "joint"),
        }
        summaries = {m: MetricSummary.of(per_seed[m]) if applies[m] else None for m in METRICS}
        estimators.append(
            EstimatorSummary(
                name=name,
                kind=kind,
                description=DESCRIPTIONS[name],
                spearman=summaries["spearman"],
                precision_at_10=summaries["precision_at_10"],
                harmful_detection=summaries["harmful_detection"],
                regret=summaries["regret"],
                per_seed={m: v for m, v in per_seed.items() if applies[m]},
            )
        )
    by_log = {
        name: {
            log: tuple(float(r.by_log.get(name, {}).get(log, {}).get("spearman", math.nan)) for r in results)
            for log in credit_mod.STRATEGIES
        }
        for name in LOG_ESTIMATORS
    }
    return SimulationReport(
        scenario=sc,
        seeds=tuple(r.seed for r in results),
        estimators=tuple(estimators),
        ceiling=tuple(r.ceiling for r in results),
        coverage=tuple(r.coverage for r in results),
        by_log=by_log,
        regret={p: tuple(float(r.regret.get(p, math.nan)) for r in results) for p in POLICIES},
    )


REPORT_HEADER = ("estimator", "spearman", "precision@10", "harmful in bottom 10%", "cumulative regret")


def report_rows(report: SimulationReport) -> list[tuple[str, ...]]:
    """The report's table (under REPORT_HEADER): one row per estimator, mean +- sd [p10, p90] per metric."""

    def cell(summary: MetricSummary | None, digits: int) -> str:
        if summary is None or not summary.n:
            return "-"
        if summary.n == 1:  # one seed: its value, no spread to show
            return f"{summary.mean:.{digits}f}"
        spread = f"[{summary.p10:.{digits}f}, {summary.p90:.{digits}f}]"
        return f"{summary.mean:.{digits}f} ±{summary.std:.{digits}f} {spread}"

    return [
        (
            s.name,
            cell(s.spearman, 3),
            cell(s.precision_at_10, 2),
            cell(s.harmful_detection, 2),
            cell(s.regret, 1),
        )
        for s in report.estimators
    ]


def report_heading(report: SimulationReport) -> str:
    """The line above the report's table: the scenario."""
    sc = report.scenario
    return (
        f"scenario {sc.name}: {sc.n_lessons} lessons, {sc.n_sessions} sessions, k={sc.k}, floor={sc.floor}, "
        f"noise={sc.noise}, keyword_breadth={sc.keyword_breadth}; {counted(len(report.seeds), 'seed')}; "
        "log-based estimators averaged over every credit strategy's own log"
    )


def report_notes(report: SimulationReport) -> list[str]:
    """The lines under the report's table: the ceiling, the joint estimate's coverage and the regret."""
    versus = report.versus_posterior("joint")
    one = len(report.seeds) == 1  # (a share of wins over one seed is 0% or 100%: not said)
    return [
        f"ceiling (best achievable spearman): {report.ceiling_mean:.3f}",
        f"joint 90% interval coverage: {report.coverage_mean:.1%} (target 85-95%)",
        *coverage_comment(report.coverage_mean),
        f"joint on each strategy's log minus its posterior ({'spearman' if one else 'spearman, wins'}): "
        + "; ".join(
            f"{k} {signed(v.mean_diff)}" + ("" if one else f" ({v.wins:.0%})") for k, v in versus.items() if v.n
        ),
        *regret_lines(report),
    ]


def coverage_comment(coverage: float) -> list[str]:
    """What a coverage outside its target means, in one line (none inside it, or without a coverage): the
    share of lessons whose 90% interval held the true effect, judged as printed (95.04% reads 95.0%)."""
    shown = round(coverage * 100, 1)
    if math.isnan(coverage) or 85 <= shown <= 95:
        return []
    if shown > 95:
        return ["  above target: the intervals are wider than needed here; cautious, not wrong"]
    return ["  below target: the intervals are too narrow here; they miss the truth too often"]


def format_report(report: SimulationReport) -> str:
    """A plain-text table: one row per estimator, mean +- sd [p10, p90] per metric."""
    header, rows = REPORT_HEADER, report_rows(report)
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        report_heading(report),
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines + report_notes(report))


def regret_lines(report: SimulationReport) -> list[str]:
    """Regret against the oracle per selection policy, and how often each beats seed's."""
    if not report.regret:
        return []
    one = len(report.seeds) == 1
    shown = "one seed's" if one else "mean ±sd [p10, p90]; seeds below seed's"
    lines = [f"cumulative regret against the oracle, per selection policy ({shown}):"]
    for policy in report.regret:
        s = report.regret_summary(policy)
        if not s.n:
            continue
        versus = report.regret_versus(policy, "seed")
        wins = f"  below seed in {versus.wins:.0%}" if policy != "seed" and versus.n and not one else ""
        spread = "" if s.n == 1 else f" ±{s.std:.1f} [{s.p10:.1f}, {s.p90:.1f}]"
        lines.append(f"  {policy:<9} {s.mean:8.1f}{spread}{wins}")
    return lines
