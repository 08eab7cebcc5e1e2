"""The joint estimate as a posterior to select with: per lesson, the mean and sd of its effect per
injection, and each category's baseline. A narrow seam over `core.analysis.joint` (which it calls,
never changes), for the `joint` selection policy (`core.bandit.policy`) and the simulator.

**Per lesson**: effect = coefficient x the lesson's mean weight when injected, sd likewise (the
`estimate` and `sd` of `JointFit`). A lesson never injected in a graded session gets the prior:
mean 0, sd = prior sd of a coefficient x the mean weight over every injection, so it is explored at
the prior's uncertainty; a lesson with little data has a posterior sd close to that by itself. A
lesson identified only by time (`time_only`: never injected before one session and always after it,
within the fit's baselines, as `loo` finds it, or grouped with such a lesson) is drawn as one without data
too: the fit reads a step in the baseline at its switch as its effect, and the data cannot tell them apart.

**Prior floor**: the policy fits with the prior sd of a coefficient kept at or above
`POLICY_TAU_MIN` (the analysis keeps 0.05: `joint.TAU_MIN`). With noisy rewards (0/1 outcomes)
empirical Bayes shrinks every lesson hard towards 0, and a posterior that narrow explores too
little; docs/policy.md ("The prior floor on binary rewards") has the regret measured both ways.

**Category baselines**: the mean over a category's graded sessions of the reward minus the lessons'
fitted contribution (with agent effects in the fit, averaged over the agents). They are the same for
every candidate of one session, so they never change which lessons a draw picks; they are reported
so the posterior reads as "baseline + effect".

**Per category** (`select --category`): effect_jc = effect_j + u_jc, u_jc ~ N(0, tau_j^2). The u_jc are
fitted on the fit's residuals, the lessons' coefficients held (the joint fit itself unchanged): at given
tau_j^2, the ridge regression of the residuals on the (category, lesson) cells' weights, every baseline
(category, time block, agent: the fit's indicators) projected out of both, penalty noise^2 / tau_j^2,
solved by conjugate gradients. Each cell's partial estimate (its least-squares deviation, the other cells
held: its residual over A_jj, A = X'(I - P_Z)X, its weights' squares less the baselines' share) has
variance s2 = noise^2 / A_jj, and the tau_j^2 are read from those (`core.analysis.category_prior`): a
lesson that `loo`'s test flags as differing by category (Cochran's Q over its cells, at no deviation)
gets its own, every other lesson's cells share one, each by the weighted method of moments (0 when the
cells vary no more than their noise: the categories read the overall effect); then the ridge again,
until they settle. The sd of effect_jc is sqrt(sd_j^2 + tau_j^2 s2 / (tau_j^2 + s2)) (their covariance
ignored: a little wider, more exploration); a cell without a partial estimate (never injected, or every
injection read by the baselines: s2 infinite) sqrt(sd_j^2 + tau_j^2), its deviation's prior. A reward
trend the blocks read is no cell's deviation; and the blocks are refitted, not held at the fit's (which has
no deviations): a policy that learns where a lesson helps injects it more where it helps as the log goes on,
the rewards rise with that, and blocks held at the fit's would take that rise out of the very deviations
that made it.

**Memory**: the log is read as `core.analysis.joint.fit_log` reads it, `SESSION_BLOCK` graded sessions at a
time (`Stream`): the fit from its sufficient statistics, each (category, lesson) cell's weights tallied in
the same pass (`Stream.sums_and_cells`), then one pass for their sums per baseline indicator (Z'X per cell),
one for the residuals per cell, then one pass per iteration of the conjugate gradients (X'X v: X'X itself is
not held, it grows toward cells^2; at most `PASS_ENTRIES` injections read in all past the first 50 passes).
What is held follows the lessons, categories and baselines, and an array per graded session (its reward, its
baseline), never an array per injection (a million sessions of ten lessons: 10 million).

The cache of the fit: `core.analysis.joint_posterior_cache`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.category_prior import cell_variances, differing, extrapolated
from lesson_credit.core.analysis.joint import (
    SESSION_BLOCK,
    Design,
    Entries,
    JointFit,
    Sums,
    block_codes,
    design_entries,
    fit_sums,
    graded_sessions,
    kind_codes,
    kind_of,
    log_entries,
    sums,
)
from lesson_credit.core.analysis.joint_ops import baseline_inverse
from lesson_credit.core.analysis.steps import KEPT_MIN
from lesson_credit.core.analysis.switches import groups_without_blocks, timed_switches, with_groups
from lesson_credit.core.log.snapshot import FoldData

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

POLICY_TAU_MIN = 0.15  # prior sd floor of a coefficient when selecting (see the module docstring)


@dataclass(frozen=True)
class JointPosterior:
    """Per lesson (in `arm_ids` order) the posterior mean and sd of its effect per injection."""

    arm_ids: tuple[str, ...]
    mean: FloatArray  # 0 where the lesson has no data
    sd: FloatArray  # prior_sd where the lesson has no data
    n: IntArray  # graded sessions the lesson was injected in
    prior_sd: float  # sd of a lesson without data (mean 0)
    categories: tuple[str, ...]  # category names ("" for sessions without one), in baseline order
    baselines: FloatArray  # (len(categories),) each category's baseline reward
    noise_sd: float
    n_sessions: int  # graded sessions in the fit
    deviation: FloatArray | None = None  # (len(categories), arms) posterior mean of u_jc per injection
    deviation_var: FloatArray | None = None  # its posterior variance
    category_sd: float = 0.0  # the cells' typical tau per injection (0: no category differs from the overall effect)

    def baseline_of(self) -> dict[str, float]:
        return {name: float(b) for name, b in zip(self.categories, self.baselines.tolist(), strict=True)}

    def in_category(self, category: str | None) -> tuple[FloatArray, FloatArray]:
        """(mean, sd) per arm of its effect in `category`, the kind of work the fit's category of that
        spelling (`kind_of`: `code` reads `Code`'s) holds: the overall effect for None or a kind the fit
        has no session of."""
        kinds = [kind_of(name) for name in self.categories]
        if category is None or kind_of(category) not in kinds or self.deviation is None:
            return self.mean, self.sd
        c = kinds.index(kind_of(category))
        assert self.deviation_var is not None
        mean: FloatArray = self.mean + self.deviation[c]
        sd: FloatArray = np.sqrt(self.sd**2 + self.deviation_var[c])
        return mean, sd


@dataclass(frozen=True)
class Stream:
    """The graded sessions of a fit (`sessions`: a design's per-session part) and their injections,
    `entries(lo, hi)` giving those of positions lo..hi-1 (as `core.analysis.joint.sums` reads them),
    `block` sessions at a time: what the posterior reads, pass after pass, without an array per injection."""

    sessions: Design
    entries: Callable[[int, int], Entries]
    block: int

    @classmethod
    def of_log(
        cls, data: FoldData, categories: Sequence[str | None], floor: float, agents: Sequence[str | None]
    ) -> Stream:
        sessions = graded_sessions(data, categories, agents)
        entries = log_entries(data, sessions, floor)
        return cls(sessions.with_steps(entries, SESSION_BLOCK), entries, SESSION_BLOCK)

    @classmethod
    def held(cls, design: Design) -> Stream:
        """A design that holds its entries, read in the same blocks as a log (with its baseline's steps)."""
        design = design.with_steps(span=SESSION_BLOCK)
        return cls(design, design_entries(design), SESSION_BLOCK)

    def spans(self) -> list[tuple[int, int]]:
        n = self.sessions.n
        return [(lo, min(lo + self.block, n)) for lo in range(0, n, self.block)]

    @cached_property
    def cells(self) -> Cells:
        """One pass over the injections: each (category, lesson) cell's weights."""
        tally = _CellTally(self.sessions)
        for lo, hi in self.spans():
            tally.add(lo, *self.entries(lo, hi))
        return tally.cells()

    def sums_and_cells(self) -> Sums:
        """`core.analysis.joint.sums` of the stream, its `cells` tallied in the same pass over the
        injections (the very additions, in the same order, as a pass of their own: kept as `cells`)."""
        tally = _CellTally(self.sessions)

        def entries(lo: int, hi: int) -> Entries:
            row, arm, w = self.entries(lo, hi)
            tally.add(lo, row, arm, w)
            return row, arm, w

        st = sums(self.sessions, entries, self.block)
        if "cells" not in self.__dict__:  # (`cells` is a cached_property: its value lives there)
            self.__dict__["cells"] = tally.cells()
        return st


class _CellTally:
    """`Stream.cells` summed block by block (`add`: a block's entries, `lo` its first position)."""

    def __init__(self, sessions: Design) -> None:
        self.sessions, size = sessions, sessions.n_categories * sessions.n_arms
        self.weight, self.square, self.entries = np.zeros(size), np.zeros(size), 0

    def add(self, lo: int, row: IntArray, arm: IntArray, w: FloatArray) -> None:
        s, size = self.sessions, len(self.weight)
        cell = s.category[lo + row] * s.n_arms + arm
        self.weight += np.bincount(cell, weights=w, minlength=size)
        self.square += np.bincount(cell, weights=w * w, minlength=size)
        self.entries += len(arm)

    def cells(self) -> Cells:
        s = self.sessions
        count = np.bincount(s.category, minlength=s.n_categories).astype(np.float64)
        reward = np.bincount(s.category, weights=s.reward, minlength=s.n_categories).astype(np.float64)
        return Cells(self.weight.reshape(s.n_categories, s.n_arms), self.square, count, reward, self.entries)


@dataclass(frozen=True)
class Cells:
    """Per (category, lesson) cell the sum of the injections' weights (`weight`, categories x arms) and
    of their squares (`square`, flat: category * arms + arm); per category its graded sessions and the
    sum of their rewards; the injections in all."""

    weight: FloatArray
    square: FloatArray
    count: FloatArray
    reward: FloatArray
    entries: int

    @property
    def typical_weight(self) -> float:
        """The mean weight of an injection (1 without any)."""
        return float(self.weight.sum()) / self.entries if self.entries else 1.0


def posterior_from_fit(
    fit: JointFit, source: Design | Stream, tau_min: float = POLICY_TAU_MIN
) -> tuple[FloatArray, FloatArray, FloatArray, float]:
    """(mean, sd) per arm of `source`, each category's baseline and the prior sd, from its fit
    (`tau_min`: the prior sd of a coefficient when the fit had no data to set one)."""
    stream = source if isinstance(source, Stream) else Stream.held(source)
    cells = stream.cells
    has = np.isfinite(fit.coef) & np.isfinite(fit.mean_weight)
    tau = fit.prior_sd if math.isfinite(fit.prior_sd) else tau_min
    prior_sd = tau * cells.typical_weight
    mean = np.zeros(stream.sessions.n_arms)
    sd = np.full(stream.sessions.n_arms, prior_sd)
    mean[has] = fit.estimate[has]
    sd[has] = fit.sd[has]
    coef = np.where(np.isfinite(fit.coef), fit.coef, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # the mean reward minus the lessons' fitted part
        baselines = np.where(cells.count > 0, (cells.reward - cells.weight @ coef) / cells.count, np.nan)
    return mean, sd, baselines, prior_sd


def category_deviations(fit: JointFit, source: Design | Stream) -> tuple[FloatArray, FloatArray, float]:
    """(mean, variance) of u_jc per injection, shape (categories, arms), and the cells' typical tau (root mean square of
    their tau_j) per unit weight (see the module docstring). At the backfit's fixed point, u is the ridge regression of
    the residuals (every baseline refitted) on the cells at penalty noise^2 / tau_j^2 per cell; so each round reads the
    tau_j^2 from the cells' partial estimates (`category_prior`) and solves that system (`_ridge`, one pass over the
    injections a product), until they settle."""
    stream = source if isinstance(source, Stream) else Stream.held(source)
    c, n_arms = stream.sessions.n_categories, stream.sessions.n_arms
    dev, var = np.zeros((c, n_arms)), np.zeros((c, n_arms))
    sigma2 = fit.noise_sd**2 if math.isfinite(fit.noise_sd) else math.nan
    cells = stream.cells
    if c < 2 or not cells.entries or not sigma2 > 0:
        return dev, var, 0.0
    coef = np.where(np.isfinite(fit.coef), fit.coef, 0.0)
    system = _CellSystem.of(stream, coef)
    diagonal = system.diagonal
    has = diagonal > 1e-9 * np.maximum(cells.square, 1e-300)  # cells the baselines leave some variation in
    s2 = sigma2 / diagonal[has]
    lesson = np.tile(np.arange(n_arms), c)[has]
    budget = max(MIN_PASSES, min(MAX_PASSES, PASS_ENTRIES // max(cells.entries, 1)))
    u = np.zeros(int(has.sum()))  # per unit weight, over the cells `has`
    residual = system.rhs[has].copy()  # rhs - A u over the cells `has`
    tau2 = np.zeros(len(u))
    flagged = differing(residual / diagonal[has], s2, lesson, n_arms)  # at no deviation, as `loo` tests them
    history: list[FloatArray] = []
    for _ in range(BACKFIT_ROUNDS):
        partial = residual / diagonal[has] + u  # each cell's estimate with the others held
        new = cell_variances(partial, s2, lesson, flagged, tau2)
        settled = bool(np.all(np.abs(new - tau2) <= 1e-12 + 1e-9 * tau2))
        history = [*history, new] if len(history) < 3 else [new]
        tau2 = extrapolated(history) if len(history) == 3 and not settled else new  # then 3 rounds more
        steps = budget if settled else min(budget, ROUND_STEPS)  # while the variances move, a few steps a round
        u, residual, left = _ridge(system, has, diagonal[has], sigma2, tau2, (u, residual), steps)
        budget -= steps - left
        if settled or budget <= 0:
            break
    mw = np.tile(np.where(np.isfinite(fit.mean_weight), fit.mean_weight, 0.0), c)
    dev_flat = np.zeros(c * n_arms)
    dev_flat[has] = u
    # a cell without a partial estimate (the lesson never injected in the category, or its injections all read
    # by the baselines: s2 infinite) keeps its prior, tau_j^2; a lesson without data has mw 0: drawn at the prior sd
    var_flat = np.tile(lesson_variances(tau2, lesson, flagged), c) * mw**2
    var_flat[has] = tau2 * s2 / (tau2 + s2) * mw[has] ** 2
    typical = math.sqrt(float(tau2.mean())) if len(tau2) else 0.0
    return (dev_flat * mw).reshape(c, n_arms), var_flat.reshape(c, n_arms), typical


def lesson_variances(tau2: FloatArray, lesson: IntArray, flagged: npt.NDArray[np.bool_]) -> FloatArray:
    """tau_j^2 per lesson from the cells' (`tau2`, each cell's `lesson`): a lesson's cells all hold its own, and
    a lesson without any cell the one the unflagged lessons share (0 when no cell has it)."""
    unflagged = ~flagged[lesson]
    out: FloatArray = np.full(len(flagged), float(tau2[unflagged][0]) if unflagged.any() else 0.0)
    out[lesson] = tau2
    return out


@dataclass(frozen=True)
class _CellSystem:
    """The deviations' normal equations with every baseline refitted: A = X'(I - P_Z)X over the
    (category, lesson) cells (X the cells' weights, Z the baseline indicators as the fit lays them
    out: categories, time blocks but the last, agents but the first; P_Z the projection on them) and
    rhs = X'(I - P_Z)(reward - the lessons' part). Held: Z'X and (Z'Z)^+ (baselines x cells); X'X v
    is read from the injections each time (X'X itself grows toward cells^2: 0.6 GB at 1M x 3,000)."""

    stream: Stream
    zx: Any  # Z'X (scipy.sparse, baselines x cells)
    ginv: FloatArray  # (Z'Z)^+
    rhs: FloatArray
    diagonal: FloatArray  # A's: each cell's X'X less the baselines' share of it

    @classmethod
    def of(cls, stream: Stream, coef: FloatArray) -> _CellSystem:
        """Z'X in one pass over the injections, rhs in another (`coef`: the lessons' coefficients)."""
        from scipy import sparse

        s = stream.sessions
        size = s.n_categories * s.n_arms
        z, _ = s.indicators()
        z = z.tocsr()
        ginv, _ = baseline_inverse(np.asarray((z.T @ z).toarray(), dtype=np.float64))
        zx = sparse.csr_matrix((z.shape[1], size))
        for lo, hi in stream.spans():
            row, arm, w = stream.entries(lo, hi)
            x = sparse.csr_matrix((w, (row, s.category[lo:hi][row] * s.n_arms + arm)), shape=(hi - lo, size))
            zx = zx + (z[lo:hi].T @ x).tocsr()
        lessons = np.tile(coef, s.n_categories)  # each cell's lesson's coefficient
        baseline = z @ (ginv @ (np.asarray(z.T @ s.reward, dtype=np.float64) - zx @ lessons))
        shared = np.asarray(zx.multiply(ginv @ zx.toarray()).sum(axis=0), dtype=np.float64).ravel()
        diagonal = np.maximum(stream.cells.square - shared, 0.0)
        return cls(stream, zx, ginv, _cell_products(stream, s.reward - baseline, coef), diagonal)

    def apply(self, v: FloatArray) -> FloatArray:
        """A v: X'X v from the injections (one pass), less X'Z (Z'Z)^+ Z'X v."""
        projected = self.zx.T @ (self.ginv @ (self.zx @ v))
        return _cell_products(self.stream, None, v, cells=True) - np.asarray(projected, dtype=np.float64)


def _cell_products(stream: Stream, target: FloatArray | None, v: FloatArray, cells: bool = False) -> FloatArray:
    """Per (category, lesson) cell, the weighted sum over its sessions of `target` less X v: X'(target -
    X v), with v per lesson (`cells` False: each cell's lesson's) or per cell; `target` None: X'X v.
    One pass over the injections, block by block."""
    s, n_arms = stream.sessions, stream.sessions.n_arms
    out = np.zeros(s.n_categories * n_arms)
    for lo, hi in stream.spans():
        row, arm, w = stream.entries(lo, hi)
        cell = s.category[lo:hi][row] * n_arms + arm
        fitted = np.bincount(row, weights=w * v[cell if cells else arm], minlength=hi - lo)
        y = fitted if target is None else target[lo:hi] - fitted
        out += np.bincount(cell, weights=w * y[row], minlength=len(out))
    return out


def _ridge(
    system: _CellSystem,
    has: npt.NDArray[np.bool_],
    diagonal: FloatArray,
    sigma2: float,
    tau2: FloatArray,
    start: tuple[FloatArray, FloatArray],
    budget: int,
) -> tuple[FloatArray, FloatArray, int]:
    """(A + sigma2 / tau2) u = rhs over the cells `has` whose tau2 > 0 (the others 0; `diagonal`: A's
    there, the preconditioner) by conjugate gradients from `start` (u, and rhs - A u over `has`), one
    pass over the injections an iteration, at most `budget` of them: (u, rhs - A u over `has`, the
    passes left). A is positive semi-definite, so this converges however often lessons were chosen
    together (a damped step per round swung and grew when several always were)."""
    full, where, on = np.zeros(len(system.rhs)), np.flatnonzero(has), tau2 > 0

    def times(v: FloatArray, cells: npt.NDArray[np.bool_]) -> FloatArray:  # A v over `has`, v over `cells`
        full[where] = 0.0
        full[where[cells]] = v
        return np.asarray(system.apply(full)[has], dtype=np.float64)

    u, residual = start[0].copy(), start[1].copy()
    dropped = ~on & (u != 0)
    if dropped.any() and budget > 0:  # cells whose variance went to 0: their deviations leave
        residual += times(u[dropped], dropped)
        u[dropped], budget = 0.0, budget - 1
    if not on.any():
        return u, residual, budget
    penalty = sigma2 / tau2[on]
    b = system.rhs[has][on]
    inverse = 1.0 / (diagonal[on] + penalty)
    r = residual[on] - penalty * u[on]
    p = inverse * r
    rz = float(r @ p)
    tolerance = CG_TOLERANCE * (1.0 + math.sqrt(float(b @ b)))
    while budget > 0 and math.sqrt(float(r @ r)) > tolerance:
        q_has = times(p, on)
        budget -= 1
        q = q_has[on] + penalty * p
        step = rz / float(p @ q)
        u[on] += step * p
        residual -= step * q_has
        r -= step * q
        z = inverse * r
        rz, was = float(r @ z), rz
        p = z + (rz / was) * p
    return u, residual, budget


ROUND_STEPS = 3  # conjugate-gradient steps a round while the variances still move (then to the tolerance)
BACKFIT_ROUNDS = 200  # of tau_c^2 and the deviations at it, the lessons' coefficients held at the fit's
CG_TOLERANCE = 1e-11  # the solve's residual, relative to the right-hand side's size
# passes over the injections the solves may take in all: every one a small log needs, and at a million
# sessions of ten lessons (1e7 injections) 50, as many as the damped backfit's rounds were (0.38 s each
# at 1M x 3,000 lessons): past them the deviations are the conjugate gradients' last iterate
PASS_ENTRIES, MIN_PASSES, MAX_PASSES = 500_000_000, 50, 2000


def _category_names(categories: Sequence[str | None], data: FoldData) -> tuple[str, ...]:
    """The names behind `build_design`'s category codes (the kinds of work of graded sessions: `kind_codes`)."""
    if len(categories) != data.n_sessions:
        return ("",) if np.isfinite(data.base).any() else ()
    return kind_codes(categories, np.flatnonzero(~np.isnan(data.base)).astype(np.int64))[1]


def joint_posterior(
    data: FoldData,
    categories: Sequence[str | None],
    floor: float,
    agents: Sequence[str | None] = (),
    *,
    tau_min: float = POLICY_TAU_MIN,
    shared: tuple[Stream, JointFit, npt.NDArray[np.bool_]] | None = None,
) -> JointPosterior:
    """Fit the joint model on the log (`core.analysis.joint`) and read it as a posterior per lesson.
    `shared`: the log's stream (`Stream.of_log` of these very inputs), its fit at `tau_min` and its
    `time_only`, when the caller has them (`posterior_of`'s `fit` and `timed`)."""
    if shared is None:
        stream = Stream.of_log(data, categories, floor, agents)
        return posterior_of(stream, _category_names(categories, data), tuple(data.arm_ids), tau_min=tau_min)
    stream, fit, timed = shared
    names, arm_ids = _category_names(categories, data), tuple(data.arm_ids)
    return posterior_of(stream, names, arm_ids, tau_min=tau_min, fit=fit, timed=timed)


def posterior_of(
    stream: Stream,
    names: tuple[str, ...],
    arm_ids: tuple[str, ...],
    *,
    tau_min: float,
    deviations: bool = True,
    fit: JointFit | None = None,
    timed: npt.NDArray[np.bool_] | None = None,
) -> JointPosterior:
    """The posterior of a stream's fit: `joint_posterior`'s for a log, the simulator's (`core.sim.loop`) for
    its run's design, one policy (`deviations`: False leaves every category's deviations 0, not fitted).
    `fit` (the stream's fit at `tau_min`) and `timed` (its `time_only`): the caller's, when it has them from
    the same passes over the stream (the analysis' fit reads the same sums), else computed here."""
    if fit is None:
        fit = fit_sums(stream.sums_and_cells(), stream.sessions, tau_min=tau_min)
    mean, sd, baselines, prior_sd = posterior_from_fit(fit, stream, tau_min)
    if len(names) != len(baselines):  # no graded session: no baselines
        names, baselines = (), np.zeros(0)
    noise = fit.noise_sd if math.isfinite(fit.noise_sd) else math.nan
    deviation, deviation_var, tau_c = category_deviations(fit, stream) if deviations else (np.zeros(0), None, 0.0)
    if deviation.shape[0] != len(names) or deviation_var is None:
        deviation, deviation_var, tau_c = np.zeros((len(names), len(mean))), np.zeros((len(names), len(mean))), 0.0
    if timed is None:  # drawn as a lesson without data: what moved it, a step in the baseline would too
        timed = time_only(stream)
    mean[timed], sd[timed], deviation[:, timed], deviation_var[:, timed] = 0.0, prior_sd, 0.0, 0.0
    return JointPosterior(
        arm_ids,
        mean,
        sd,
        fit.n.astype(np.int64),
        prior_sd,
        names,
        baselines,
        noise,
        fit.n_sessions,
        deviation,
        deviation_var,
        tau_c * stream.cells.typical_weight,
    )


def time_only(stream: Stream) -> npt.NDArray[np.bool_]:
    """Per arm: identified only by time (`time_labels`), the rule `loo`, the ranking and the policy all read."""
    return time_labels(stream).timed


@dataclass(frozen=True)
class TimeOnly:
    """Per arm: `timed`, identified only by time (with the arms grouped with such an arm); `by_steps`, those of them
    for what the baseline's steps left of them (`steps.kept_share` below `steps.KEPT_MIN`); `share`, that share."""

    timed: npt.NDArray[np.bool_]
    by_steps: npt.NDArray[np.bool_]
    share: FloatArray


def time_labels(stream: Stream) -> TimeOnly:
    """Per arm (`TimeOnly`): identified only by time, as `loo` finds a lesson (`switches.timed_switches`): within the
    baseline groups and time blocks (without the steps) it was never injected before one session and always after it
    (or the reverse), or it switched over the log only where time blocks start as the baselines hold
    (`switches.with_edges`); or the baseline's steps (`core.analysis.steps`) left it less than `steps.KEPT_MIN` of its
    precision (`steps.kept_share`); and the arms `loo` groups with such an arm (`switches.with_groups`). One pass
    finds the arms whose sessions in every group are one run (no other arm switches once); a second reads only
    their injections."""
    from scipy import sparse

    s = stream.sessions.with_steps(stream.entries, stream.block)
    stream = Stream(s, stream.entries, stream.block)
    none = np.zeros(s.n_arms, dtype=bool)
    share = kept_share(stream)
    by_steps = share < KEPT_MIN
    if s.n == 0 or s.n_arms == 0:
        return TimeOnly(none, none, share)
    _, group = s.indicators(steps=False)
    n_groups = int(group.max()) + 1
    order = np.argsort(group, kind="stable")
    start = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=n_groups))[:-1]])
    place = np.empty(s.n, dtype=np.int64)
    place[order] = np.arange(s.n) - start[group[order]]  # each session's place in its group
    size = s.n_arms * n_groups
    count, first, last = np.zeros(size, dtype=np.int64), np.full(size, s.n), np.full(size, -1)
    for lo, hi in stream.spans():
        row, arm, _ = stream.entries(lo, hi)
        cell = arm * n_groups + group[lo + row]
        count += np.bincount(cell, minlength=size)
        np.minimum.at(first, cell, place[lo + row])
        np.maximum.at(last, cell, place[lo + row])
    run = (count == 0) | (last - first + 1 == count)
    candidate = run.reshape(s.n_arms, n_groups).all(axis=1) & (count.reshape(s.n_arms, n_groups).sum(axis=1) > 0)
    block = block_codes(s.n, s.n_blocks) if s.n_blocks > 1 else None
    arms = np.flatnonzero(candidate)
    out = by_steps.copy()
    if len(arms):
        column = np.full(s.n_arms, -1, dtype=np.int64)
        column[arms] = np.arange(len(arms))
        rows, cols = [], []
        for lo, hi in stream.spans():
            row, arm, _ = stream.entries(lo, hi)
            keep = column[arm] >= 0
            rows.append(lo + row[keep])
            cols.append(column[arm[keep]])
        r, c = np.concatenate(rows), np.concatenate(cols)
        x = sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(s.n, len(arms)))
        whole = groups_without_blocks(s.category, s.agent, s.n_agents)
        out[arms] |= timed_switches(x, group, block, whole, (s.category, s.agent)).timed
    timed = with_groups(out, lambda: (stream.entries(lo, hi)[:2] for lo, hi in stream.spans()))
    return TimeOnly(timed, by_steps & timed, share)


def kept_share(stream: Stream) -> FloatArray:
    """Per arm: its precision beside the baselines with the steps (its injection indicator's spread about them,
    x'x - (Z'x)' (Z'Z)^+ Z'x, each (session, arm) pair once) over its precision beside those without the steps (1:
    no step; NaN: no precision to begin with). One pass over the injections (none without a step)."""
    from scipy import sparse

    s = stream.sessions
    if s.n == 0 or s.n_arms == 0 or s.steps is None or not s.steps.count:
        return np.ones(s.n_arms)
    out, precision = np.full(s.n_arms, np.nan), []
    for steps in (False, True):
        z, _ = s.indicators(steps)
        ginv, _ = baseline_inverse(np.asarray((z.T @ z).toarray(), dtype=np.float64))
        zx, count = np.zeros((z.shape[1], s.n_arms)), np.zeros(s.n_arms)
        for lo, hi in stream.spans():
            row, arm, _ = stream.entries(lo, hi)
            x = sparse.csr_matrix((np.ones(len(row)), (row, arm)), shape=(hi - lo, s.n_arms))
            x.sum_duplicates()
            x.data[:] = 1.0
            zx += (z[lo:hi].T @ x).toarray()
            count += np.asarray(x.sum(axis=0)).ravel()
        precision.append(count - np.einsum("ij,ij->j", zx, ginv @ zx))
    before, after = precision
    has = before > 1e-9 * np.maximum(1.0, before.max(initial=0.0))
    out[has] = np.clip(after[has] / before[has], 0.0, 1.0)
    return out
