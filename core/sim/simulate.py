"""A ground-truth world to measure credit assignment, with the real selection in the loop.

Each seed builds a *world* of lessons whose true effect on a session's reward is known:
most do nothing, some help, a few harm, and a lesson acts only in sessions where it is
relevant. How often a lesson is relevant differs widely between lessons (a Beta(0.5, 4)
draw per lesson) and leans towards one *home* session category; categories have different
baseline rewards, so a lesson that mostly matters in an easy category looks good for free.

Per session, a lesson becomes a *candidate* when its keywords match the context: a relevant
lesson with probability ``context_recall``, any other one when at least one of its K keywords
hits by accident (each with probability ``keyword_breadth``). The real selection math then
picks the injected lessons: a Thompson draw from each candidate's current posterior
(`core.model.beta.thompson_draw`) and the k best draws (`core.model.beta.top_k`); the propensities of the
run whose log feeds the leave-one-out estimators come from `lesson_credit.core.model.beta.p_top_k`. Salience is
simulated directly, without text: each of an injected lesson's keywords is mentioned in the
journal with probability ``mention_prob`` when it was relevant and ``keyword_breadth`` (a
spurious hit) either way, and salience is the mentioned share of its keywords. The reward is
the category's baseline plus the true effects of the injected relevant lessons plus Gaussian
noise, clipped to [0, 1]; posteriors are updated online with `lesson_credit.core.model.credit.credit`.

Every credit strategy (`seed`, `evidence`, `uniform`) and the ``joint`` selection policy
(Thompson on the joint estimate's posterior, refitted on its own log every
``Scenario.joint_refit`` sessions: `core.sim.loop`) runs its own bandit loop in the *same*
world: categories, relevance, candidate sets, keyword mentions and noise are drawn once per
seed (common random numbers), so policies are compared pairwise, seed by seed. Two
reference policies run in the same world for scale: ``random`` (k candidates uniformly at
random) and ``oracle`` (the k candidates of highest expected gain in the session's category;
it knows the effects but not which candidates are relevant this session).

**Regret against the oracle** (``SimulationReport.regret``, ``regret`` in the JSON), per
selection policy: the sum over sessions of the true gain of the oracle's selection minus the
true gain of the policy's, in the same world; its spread over seeds, and the share of seeds
in which a policy's is below seed credit's.

Worlds that break the joint model's assumptions (`core.sim.scenario.SCENARIOS`): 0/1 rewards,
unequal noise by category, always-paired lessons, 400 lessons x 300 sessions, an effect that
depends on the category, effects that flip halfway, few slots among many candidates (the
bandit decides which lessons get data), salience that rises with the reward, and effects that
act whatever the salience. The modules: `scenario` (parameters), `world` (the draw), `loop`
(one policy's run), `metrics`, `report`; this one runs seeds and scores the estimators.

**True value** of a lesson = its effect (after any sign flip: what an estimate should say at
the end) times P(relevant | candidate). Selection sees only the candidate set, never the
relevance itself, so this is exactly the expected reward gained by injecting the lesson when
selection is offered it, for any selection policy. The effect alone would rank a lesson that
is almost never relevant as high as one that is relevant every time it matches, yet nothing
in the logs can tell them apart by effect and injecting the first gains almost nothing; the
relevance frequency alone would ignore that P(relevant | candidate) also depends on how
often the lesson's keywords match by accident.

**Estimators**: each strategy's final posterior mean (on its own run); and, computed on *each*
credit strategy's own log and averaged over the three logs (per log in ``by_log``), the
leave-one-out lifts of `lesson_credit.core.analysis.effects.leave_one_out` -- naive, category-controlled and
propensity-weighted (IPW) --, the ``joint`` estimate of `lesson_credit.core.analysis.joint` (the headline of `loo`),
and the ``dropout`` estimate: kept-minus-withheld mean reward where the run withheld chosen
lessons at random (``Scenario.dropout``; undefined otherwise). An estimate that cannot be
computed (no session without the lesson, say) counts as 0, no evidence either way.

**Ceiling**: the best Spearman any estimator could reach on a log: non-null lessons in their
true order, the lessons of true value 0 in random order among themselves (nothing can order
them), over the same evaluated lessons. **Coverage**: the share of evaluated lessons whose
joint 90% interval covers the lesson's true average gain per injection in that log (its
effect when relevant times the share of its injections where it was relevant).

**Injection echo** (``injection_mention``): an injected lesson's keywords are mentioned in
the journal with that extra probability whether or not it was relevant (the agent quotes
the lesson it was given), so salience is partly caused by the injection itself.

**Metrics**, per seed, over the lessons injected at least once in the run the estimate comes
from (a never-injected lesson keeps the prior mean, which says nothing about it):
- Spearman's rho between estimate and true value (average ranks for ties);
- precision at 10: share of the 10 highest estimates that belong to truly helpful lessons;
- harmful detection: share of the truly harmful lessons that fall in the bottom 10% of the
  estimate (NaN for a seed where no harmful lesson was injected);
- cumulative regret of a run's selection (the ``regret`` metric of the estimator table): the
  sum over sessions of the best achievable gain (the k largest true gains among the
  candidates, relevant or not; an oracle that also knew relevance) minus the gain of the
  injected set. Gains are effects of injected lessons where they act (relevant ones, unless
  the world says every injection acts), before noise and clipping. The ``joint`` row's
  regret is the joint selection policy's.

Across seeds each metric is summarised by mean, standard deviation, and 10th/90th
percentiles. Everything is deterministic under the seeds: the same scenario and seeds give
the same report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.effects import leave_one_out
from lesson_credit.core.analysis.joint import build_design, fit_joint
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.sim.loop import POLICIES, Run, lesson_ids, run_policy
from lesson_credit.core.sim.metrics import (
    BOTTOM_SHARE,
    TOP_N,
    average_ranks,
    bottom_detection,
    ceiling_spearman,
    nanmean,
    precision_at_k,
    spearman,
)
from lesson_credit.core.sim.report import (
    DESCRIPTIONS,
    ESTIMATORS,
    LOG_ESTIMATORS,
    LOO_ESTIMATORS,
    METRICS,
    Comparison,
    EstimatorSummary,
    MetricSummary,
    SeedResult,
    SimulationReport,
    format_report,
    summarise,
)
from lesson_credit.core.sim.scenario import MAX_SEEDS, SCENARIOS, Scenario, check_seeds, scenario
from lesson_credit.core.sim.world import World, make_world

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

COVERAGE_Z = 1.6448536269514722  # 90% intervals
DEFAULT_SEEDS = 20

__all__ = [
    "MAX_SEEDS",
    "check_seeds",
    "BOTTOM_SHARE",
    "COVERAGE_Z",
    "DEFAULT_SEEDS",
    "DESCRIPTIONS",
    "ESTIMATORS",
    "LOG_ESTIMATORS",
    "LOO_ESTIMATORS",
    "METRICS",
    "POLICIES",
    "SCENARIOS",
    "TOP_N",
    "Comparison",
    "EstimatorSummary",
    "MetricSummary",
    "Run",
    "Scenario",
    "SeedResult",
    "SimulationReport",
    "World",
    "average_ranks",
    "bottom_detection",
    "ceiling_spearman",
    "estimate_metrics",
    "format_report",
    "lesson_ids",
    "make_world",
    "precision_at_k",
    "run_policy",
    "run_simulation",
    "scenario",
    "simulate_seed",
    "spearman",
    "summarise",
]


def estimate_metrics(world: World, estimate: FloatArray, evaluated: BoolArray) -> dict[str, float]:
    """Spearman, precision@10 and harmful detection of an estimate over the evaluated lessons."""
    est = np.asarray(estimate, dtype=np.float64)[evaluated]
    return {
        "spearman": spearman(est, world.value[evaluated]),
        "precision_at_10": precision_at_k(est, world.helpful[evaluated], TOP_N),
        "harmful_detection": bottom_detection(est, world.harmful[evaluated], BOTTOM_SHARE),
    }


def _log_estimates(world: World, sc: Scenario, run: Run, seed: int) -> tuple[dict[str, FloatArray], float, float]:
    """Every log-based estimate on one run's log (indexed by lesson), its ceiling and the joint's coverage."""
    categories = [f"c{c}" for c in world.session_category.tolist()]
    data = run.fold_data()
    fit = fit_joint(build_design(data, categories, sc.floor))
    results = leave_one_out(data, categories, run.candidacies(data), floor=sc.floor, joint=fit)
    arm_of = np.array([int(a[1:]) for a in data.arm_ids], dtype=np.int64)
    out: dict[str, FloatArray] = {}
    for name, attribute in zip(LOO_ESTIMATORS, ("delta", "delta_category", "delta_ipw"), strict=True):
        estimate = np.zeros(world.n_lessons)
        estimate[arm_of] = [0.0 if x is None else float(x) for x in (getattr(r, attribute) for r in results)]
        out[name] = estimate
    joint = np.zeros(world.n_lessons)
    joint[arm_of] = np.nan_to_num(fit.estimate)
    out["joint"] = joint
    dropout = run.dropout_estimate()
    out["dropout"] = np.where(np.isfinite(dropout), dropout, 0.0) if np.isfinite(dropout).any() else dropout
    evaluated = run.injections > 0
    ceiling = ceiling_spearman(world.value[evaluated], np.random.default_rng([seed, 4]))
    low, high = fit.interval(COVERAGE_Z)
    truth = run.true_gain_per_injection()[arm_of]
    known = np.isfinite(low) & np.isfinite(truth)
    coverage = float(np.mean((low[known] <= truth[known]) & (truth[known] <= high[known]))) if known.any() else math.nan
    return out, ceiling, coverage


def simulate_seed(sc: Scenario, seed: int) -> SeedResult:
    """Build the seed's world, run every policy in it, and score every estimator."""
    world = make_world(sc, seed)
    metrics: dict[str, dict[str, float]] = {}
    runs: dict[str, Run] = {}
    for policy in POLICIES:
        run = run_policy(world, sc, policy, seed, propensities=policy in credit_mod.STRATEGIES)
        runs[policy] = run
        if policy in credit_mod.STRATEGIES:
            mean = beta_mod.mean(run.alpha, run.beta)
            metrics[policy] = estimate_metrics(world, mean, run.injections > 0)
        elif policy != "joint":  # the joint row's ranking metrics come from the credit strategies' logs
            metrics[policy] = {"spearman": math.nan, "precision_at_10": math.nan, "harmful_detection": math.nan}
        if policy != "joint":
            metrics[policy]["regret"] = run.cumulative_regret
    oracle_gain = runs["oracle"].session_gain
    regret = {policy: round(float((oracle_gain - run.session_gain).sum()), 9) for policy, run in runs.items()}

    by_log: dict[str, dict[str, dict[str, float]]] = {name: {} for name in LOG_ESTIMATORS}
    ceilings, coverages = [], []
    for log in credit_mod.STRATEGIES:
        source = runs[log]
        estimates, ceiling, coverage = _log_estimates(world, sc, source, seed)
        ceilings.append(ceiling)
        coverages.append(coverage)
        evaluated = source.injections > 0
        for name in LOG_ESTIMATORS:
            if np.isfinite(estimates[name]).any():
                by_log[name][log] = estimate_metrics(world, estimates[name], evaluated)
            else:  # no data for it at all (no dropout in this world)
                by_log[name][log] = {"spearman": math.nan, "precision_at_10": math.nan, "harmful_detection": math.nan}
    for name in LOG_ESTIMATORS:
        metrics[name] = {
            m: nanmean([by_log[name][log][m] for log in credit_mod.STRATEGIES]) for m in METRICS if m != "regret"
        }
        metrics[name]["regret"] = runs["joint"].cumulative_regret if name == "joint" else math.nan
    return SeedResult(
        seed=seed,
        metrics={name: metrics[name] for name in ESTIMATORS},
        by_log=by_log,
        ceiling=nanmean(ceilings),
        coverage=nanmean(coverages),
        regret=regret,
    )


def run_simulation(
    sc: Scenario,
    seeds: int | Sequence[int] = DEFAULT_SEEDS,
    progress: Callable[[int, int], None] | None = None,
    partial: Callable[[SimulationReport], None] | None = None,
) -> SimulationReport:
    """Simulate the scenario for each seed (an int n means seeds 0..n-1) and summarise across seeds.

    After each seed, `partial` is given the report of the seeds done so far (what a run stopped there
    would report), then `progress(done, total)` is called. Same scenario and seeds, same report."""
    if isinstance(seeds, int):
        check_seeds(0, seeds)
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("at least one seed is needed")
    if len(seed_list) > MAX_SEEDS:
        raise ValueError(f"seeds must be at most {MAX_SEEDS:,}, got {len(seed_list):,}")
    if any(s < 0 for s in seed_list):
        raise ValueError("seeds must be non-negative integers")
    results = []
    for done, seed in enumerate(seed_list, start=1):
        results.append(simulate_seed(sc, seed))
        if partial is not None:
            partial(summarise(sc, results))
        if progress is not None:
            progress(done, len(seed_list))
    return summarise(sc, results)
