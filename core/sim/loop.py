"""One selection policy's loop over a world's sessions (`run_policy`) and what it leaves (`Run`).

Policies: the credit strategies (`seed`, `evidence`, `uniform`: Thompson on Beta posteriors
updated online with `core.model.credit`), `joint` (Thompson on the joint estimate's posterior,
`core.analysis.joint_posterior`, refitted on the run's own log every `Scenario.joint_refit`
sessions), and two references: `random` (k candidates uniformly) and `oracle` (the k candidates
of highest expected gain in the session's category, `World.oracle_value`).

In a world where trouble pulls lessons in (`Scenario.auto_include`), a session's log lists them after
the chosen ones, marked as included during it: the credit strategies' posteriors credit them like the
chosen (the seed's formula, as the product's fold does), the joint policy's fit and the estimates do not.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.effects import Candidacy
from lesson_credit.core.analysis.joint import Design, time_blocks
from lesson_credit.core.analysis.joint_posterior import Stream, posterior_of
from lesson_credit.core.bandit.policy import normal_draw
from lesson_credit.core.log.events import SessionEvent
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model import credit as credit_mod
from lesson_credit.core.sim.scenario import Scenario
from lesson_credit.core.sim.world import World

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

POLICIES = ("seed", "evidence", "uniform", "joint", "random", "oracle")
STREAM = {"seed": 0, "evidence": 1, "uniform": 2, "random": 3, "oracle": 4, "joint": 5}  # each policy's own draws


@dataclass(frozen=True)
class Run:
    """What one selection policy did in a world: its log, final posterior and regret."""

    policy: str
    alpha: FloatArray  # (L,) final posterior (prior Beta(1, 1)); untouched for reference policies
    beta: FloatArray
    injections: IntArray  # (L,) sessions each lesson was injected in
    entry_arm: npt.NDArray[np.int32]  # the log, as the fold's columns
    entry_salience: FloatArray
    entry_session: npt.NDArray[np.int32]
    session_start: IntArray
    reward: FloatArray  # (T,) base reward of each session
    regret: FloatArray  # (T,) per-session regret
    candidacy_row: IntArray  # (session, arm, propensity) of every candidate, when propensities were drawn
    candidacy_arm: IntArray
    candidacy_propensity: FloatArray
    entry_gain: FloatArray = field(default_factory=lambda: np.zeros(0))  # true gain of each injection
    session_gain: FloatArray = field(default_factory=lambda: np.zeros(0))  # (T,) true gain of each session
    withheld_session: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # dropout
    withheld_arm: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    entry_during: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))  # pulled in

    def true_gain_per_injection(self) -> FloatArray:
        """(L,) each lesson's average true gain over the sessions it was injected in (NaN: never)."""
        n = len(self.alpha)
        total = np.bincount(self.entry_arm, weights=self.entry_gain, minlength=n)
        with np.errstate(divide="ignore", invalid="ignore"):
            result: FloatArray = total / self.injections
        return result

    def dropout_estimate(self) -> FloatArray:
        """(L,) mean reward when chosen and kept minus when chosen and withheld (NaN without both)."""
        n = len(self.alpha)
        if not len(self.withheld_arm):
            return np.full(n, np.nan)
        chosen = self.chosen_entries()
        kept = np.bincount(self.entry_arm[chosen], weights=self.reward[self.entry_session[chosen]], minlength=n)
        held_n = np.bincount(self.withheld_arm, minlength=n)
        held = np.bincount(self.withheld_arm, weights=self.reward[self.withheld_session], minlength=n)
        with np.errstate(divide="ignore", invalid="ignore"):
            result: FloatArray = np.where(
                (self.injections > 0) & (held_n > 0), kept / self.injections - held / held_n, np.nan
            )
        return result

    def chosen_entries(self) -> npt.NDArray[np.bool_]:
        """Per entry: chosen before the session (not pulled in during it)."""
        if len(self.entry_during) != len(self.entry_arm):
            return np.ones(len(self.entry_arm), dtype=bool)
        return ~self.entry_during

    @property
    def cumulative_regret(self) -> float:
        return float(self.regret.sum())

    def fold_data(self) -> FoldData:
        """The run's log as the fold sees it, built through `LogIndex` from session events.

        Arm ids are `lesson_ids()`; an arm's index is the order of its first injection, so map
        results back through `arm_ids`."""
        ids = lesson_ids(len(self.alpha))
        index = LogIndex()
        starts = self.session_start.tolist()
        arms = self.entry_arm.tolist()
        saliences = self.entry_salience.tolist()
        during = np.flatnonzero(~self.chosen_entries()).tolist()
        for t, r in enumerate(self.reward.tolist()):
            lo, hi = starts[t], starts[t + 1]
            pulled = tuple(e - lo for e in during[bisect_left(during, lo) : bisect_left(during, hi)])
            index.add(
                t + 1,
                SessionEvent(
                    session_id=f"s{t}",
                    timestamp=None,
                    base_reward=r,
                    lesson_ids=tuple(ids[a] for a in arms[lo:hi]),
                    saliences=tuple(saliences[lo:hi]),
                    grader="simulated",
                    during=pulled,
                ),
            )
        return index.snapshot()

    def candidacies(self, data: FoldData) -> list[Candidacy]:
        """Logged candidate propensities, with arms indexed like `data` (from `fold_data()`)."""
        position = {int(lesson_id[1:]): i for i, lesson_id in enumerate(data.arm_ids)}
        return [
            Candidacy(row, position[arm], prop)
            for row, arm, prop in zip(
                self.candidacy_row.tolist(),
                self.candidacy_arm.tolist(),
                self.candidacy_propensity.tolist(),
                strict=True,
            )
            if arm in position
        ]


def lesson_ids(n: int) -> tuple[str, ...]:
    width = max(3, len(str(n - 1)))
    return tuple(f"l{i:0{width}d}" for i in range(n))


def _keep_pairs(ordered: IntArray, partner: IntArray, k: int) -> IntArray:
    """Walk candidates best first, each with its partner, skipping couples that no longer fit in k."""
    chosen: list[int] = []
    taken: set[int] = set()
    for lesson in ordered.tolist():
        if lesson in taken:
            continue
        mate = int(partner[lesson])
        unit = [lesson] if mate < 0 or mate in taken else [lesson, mate]
        if len(chosen) + len(unit) > k:
            continue
        chosen.extend(unit)
        taken.update(unit)
        if len(chosen) == k:
            break
    return np.array(chosen, dtype=np.int64)


class _Credit:
    """A credit strategy's bandit: Beta posteriors per lesson, updated after every session."""

    def __init__(self, world: World, sc: Scenario, policy: str, rng: np.random.Generator) -> None:
        self.alpha, self.beta = np.ones(world.n_lessons), np.ones(world.n_lessons)
        self.policy, self.floor, self.decay, self.rng = policy, sc.floor, sc.decay, rng

    def order(self, t: int, cand: IntArray, depth: int) -> IntArray:
        draw = beta_mod.thompson_draw(self.alpha[cand], self.beta[cand], self.rng)
        result: IntArray = cand[beta_mod.top_k(draw, depth)]
        return result

    def learn(self, t: int, chosen: IntArray, reward: float, salience: FloatArray) -> None:
        if self.decay < 1.0:
            self.alpha = 1.0 + self.decay * (self.alpha - 1.0)
            self.beta = 1.0 + self.decay * (self.beta - 1.0)
        base = np.full(len(chosen), reward)
        d_alpha, d_beta = credit_mod.credit(base, credit_mod.weight(salience, self.floor), self.policy)
        self.alpha[chosen] += d_alpha
        self.beta[chosen] += d_beta


class _Joint:
    """Thompson on the joint estimate's posterior, refitted on the run's own log every `joint_refit` sessions."""

    def __init__(self, world: World, sc: Scenario, rng: np.random.Generator) -> None:
        n_l = world.n_lessons
        self.world, self.sc, self.rng = world, sc, rng
        self.mean, self.sd = np.zeros(n_l), np.full(n_l, sc.joint_tau_min)  # before any data: the prior floor
        self.reward = np.zeros(world.n_sessions)
        self.rows: list[IntArray] = []
        self.arms: list[IntArray] = []
        self.weights: list[FloatArray] = []
        self.fitted_at = 0
        n_c = int(world.session_category.max()) + 1 if world.n_sessions else 1
        self.dev, self.dev_var = np.zeros((n_c, n_l)), np.zeros((n_c, n_l))  # per world category
        self.salience_sum, self.salience_count = 0.0, 0  # over every injection so far ("centred" weights)
        self.arm_ids = tuple(str(j) for j in range(n_l))

    def order(self, t: int, cand: IntArray, depth: int) -> IntArray:
        if t - self.fitted_at >= self.sc.joint_refit and t > 0:
            self.refit(t)
        mean, sd = self.mean[cand], self.sd[cand]
        if self.sc.joint_category:  # the session's category is known, as `select --category` passes it
            c = int(self.world.session_category[t])
            mean, sd = mean + self.dev[c, cand], np.sqrt(sd**2 + self.dev_var[c, cand])
        draw = normal_draw(mean, sd * self.sc.joint_temper, self.rng)
        result: IntArray = cand[beta_mod.top_k(draw, depth)]
        return result

    def refit(self, t: int) -> None:
        # the posterior `select` draws from (`joint_posterior.posterior_of`): a lesson identified only by time
        # is drawn from the prior, as one without data
        design = joint_design(self.world, t, self.reward, self.rows, self.arms, self.weights)
        present = np.unique(self.world.session_category[:t])  # the design's category codes, in order
        names = tuple(str(c) for c in present.tolist())
        post = posterior_of(
            Stream.held(design), names, self.arm_ids, tau_min=self.sc.joint_tau_min, deviations=self.sc.joint_category
        )
        self.mean, self.sd = post.mean, post.sd
        if self.sc.joint_category and post.deviation is not None and post.deviation_var is not None:
            self.dev[:], self.dev_var[:] = 0.0, 0.0
            self.dev[present], self.dev_var[present] = post.deviation, post.deviation_var
        self.fitted_at = t

    def learn(self, t: int, chosen: IntArray, reward: float, salience: FloatArray) -> None:
        self.reward[t] = reward
        self.rows.append(np.full(len(chosen), t, dtype=np.int64))
        self.arms.append(chosen.astype(np.int64))
        self.weights.append(self.weight(salience))

    def weight(self, salience: FloatArray) -> FloatArray:
        """What the fit reads of this session's injections (`Scenario.joint_weights`)."""
        mode = self.sc.joint_weights
        if mode == "injection":
            return np.ones(len(salience))
        if mode == "centred" and len(salience):
            self.salience_sum += float(salience.sum())
            self.salience_count += len(salience)
            shared = self.salience_sum / self.salience_count
            salience = np.clip(salience - float(salience.mean()) + shared, 0.0, 1.0)
        result: FloatArray = credit_mod.weight(salience, self.sc.floor)
        return result


def joint_design(
    world: World,
    t: int,
    reward: FloatArray,
    rows: list[IntArray],
    arms: list[IntArray],
    weights: list[FloatArray],
) -> Design:
    """The joint model's design of the first `t` sessions of a run (every session graded at once),
    as `core.analysis.joint.build_design` makes it from a log."""
    _, category = np.unique(world.session_category[:t], return_inverse=True)
    return Design(
        rows=np.arange(t, dtype=np.int64),
        reward=reward[:t].astype(np.float64),
        category=category.astype(np.int64),
        n_categories=int(category.max()) + 1 if t else 0,
        entry_row=np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64),
        entry_arm=np.concatenate(arms) if arms else np.zeros(0, dtype=np.int64),
        entry_weight=np.concatenate(weights) if weights else np.zeros(0),
        n_arms=world.n_lessons,
        n_blocks=time_blocks(t),
    )


def run_policy(world: World, sc: Scenario, policy: str, seed: int, *, propensities: bool = False) -> Run:
    """One selection policy's loop over the world's sessions. Bandit policies learn online;
    `propensities` (credit strategies only) logs each candidate's P(top-k) for the estimators."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r} (expected one of {', '.join(POLICIES)})")
    n_t, k = world.n_sessions, sc.k
    rng = np.random.default_rng([seed, 1, STREAM[policy]])
    prop_rng = np.random.default_rng([seed, 2, STREAM[policy]])
    drop_rng = np.random.default_rng([seed, 3, STREAM[policy]])
    learner: _Credit | _Joint | None = None
    if policy in credit_mod.STRATEGIES:
        learner = _Credit(world, sc, policy, rng)
    elif policy == "joint":
        learner = _Joint(world, sc, rng)
    paired = bool((world.partner >= 0).any())
    log = _Log(n_t)
    baseline = world.baseline[world.session_category]
    for t in range(n_t):
        cand = world.candidates[t]
        depth = len(cand) if paired else k
        if learner is not None:
            ordered = learner.order(t, cand, depth)
            if propensities and isinstance(learner, _Credit) and len(cand):
                a, b = learner.alpha[cand], learner.beta[cand]
                p = beta_mod.p_top_k(a, b, k, prop_rng, sc.propensity_draws) * (1.0 - sc.dropout)
                log.candidacy(t, cand, p)
        elif policy == "random":
            ordered = cand[rng.permutation(len(cand))[:depth]]
        else:  # oracle
            ordered = cand[beta_mod.top_k(world.oracle_value(t)[cand], depth)]
        chosen = _keep_pairs(ordered, world.partner, k) if paired else ordered
        if sc.dropout > 0 and len(chosen):
            out = drop_rng.random(len(chosen)) < sc.dropout
            if out.any():
                log.withheld(t, chosen[out])
                chosen = chosen[~out]
        entry_gain = world.gain(t)[chosen]
        gain = float(entry_gain.sum())
        r = world.reward_of(t, gain, float(baseline[t]))
        salience = world.salience_of(t, chosen, r)
        during = world.included_during(t, chosen)
        log.session(t, chosen, salience, entry_gain, r, round(float(world.best[t]) - gain, 12))
        if len(during):  # the posteriors credit them as the chosen (the seed's formula); the joint fit does not
            during_salience = world.salience_of(t, during, r)
            log.during(during, during_salience)
            if isinstance(learner, _Credit):
                chosen, salience = np.r_[chosen, during], np.r_[salience, during_salience]
        if learner is not None:
            learner.learn(t, chosen, r, salience)
    alpha, beta = (learner.alpha, learner.beta) if isinstance(learner, _Credit) else (None, None)
    return log.run(policy, world.n_lessons, alpha, beta)


class _Log:
    """What a loop logs, gathered per session and turned into a `Run` at the end."""

    def __init__(self, n_t: int) -> None:
        self.chosen: list[IntArray] = []
        self.salience: list[FloatArray] = []
        self.gains: list[FloatArray] = []
        self.reward = np.empty(n_t)
        self.regret = np.empty(n_t)  # >= 0; rounding drops float dust
        self.cand: list[tuple[IntArray, IntArray, FloatArray]] = []
        self.held: list[tuple[IntArray, IntArray]] = []
        self.flags: list[npt.NDArray[np.bool_]] = []  # per session: which of its entries were pulled in during it

    def session(
        self, t: int, chosen: IntArray, salience: FloatArray, gain: FloatArray, reward: float, regret: float
    ) -> None:
        self.chosen.append(chosen)
        self.salience.append(salience)
        self.gains.append(gain)
        self.flags.append(np.zeros(len(chosen), dtype=bool))
        self.reward[t], self.regret[t] = reward, regret

    def during(self, lessons: IntArray, salience: FloatArray) -> None:
        """Lessons pulled in during the last session: its entries after the chosen, adding no gain."""
        self.chosen[-1] = np.r_[self.chosen[-1], lessons]
        self.salience[-1] = np.r_[self.salience[-1], salience]
        self.gains[-1] = np.r_[self.gains[-1], np.zeros(len(lessons))]
        self.flags[-1] = np.r_[self.flags[-1], np.ones(len(lessons), dtype=bool)]

    def candidacy(self, t: int, cand: IntArray, propensity: FloatArray) -> None:
        self.cand.append((np.full(len(cand), t, dtype=np.int64), cand, propensity))

    def withheld(self, t: int, lessons: IntArray) -> None:
        self.held.append((np.full(len(lessons), t, dtype=np.int64), lessons))

    def run(self, policy: str, n_l: int, alpha: FloatArray | None, beta: FloatArray | None) -> Run:
        n_t = len(self.reward)
        sizes = np.array([len(c) for c in self.chosen], dtype=np.int64)
        entry_arm = np.concatenate(self.chosen).astype(np.int64) if n_t else np.zeros(0, dtype=np.int64)
        gains = np.concatenate(self.gains) if self.gains else np.zeros(0)
        entry_session = np.repeat(np.arange(n_t), sizes)
        during = np.concatenate(self.flags) if self.flags else np.zeros(0, dtype=bool)

        def ints(parts: list[IntArray]) -> IntArray:
            return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)

        return Run(
            policy=policy,
            alpha=np.ones(n_l) if alpha is None else alpha,
            beta=np.ones(n_l) if beta is None else beta,
            injections=np.bincount(entry_arm[~during], minlength=n_l).astype(np.int64),
            entry_arm=entry_arm.astype(np.int32),
            entry_salience=np.concatenate(self.salience).astype(np.float64) if n_t else np.zeros(0),
            entry_session=entry_session.astype(np.int32),
            session_start=np.r_[0, np.cumsum(sizes)].astype(np.int64),
            reward=self.reward,
            regret=self.regret,
            candidacy_row=ints([c[0] for c in self.cand]),
            candidacy_arm=ints([c[1] for c in self.cand]),
            candidacy_propensity=np.concatenate([c[2] for c in self.cand]) if self.cand else np.zeros(0),
            entry_gain=gains,
            session_gain=np.bincount(entry_session, weights=gains, minlength=n_t).astype(np.float64),
            withheld_session=ints([h[0] for h in self.held]),
            withheld_arm=ints([h[1] for h in self.held]),
            entry_during=during,
        )
