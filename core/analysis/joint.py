"""The joint estimate of every lesson's effect on reward: one penalised regression over all lessons.

Model, over graded sessions i (each counted once) and lessons j::

    reward_i = gamma[category_i] + delta[agent_i] + eta[block_i] + sum_j beta_j * x_ij + noise_i,  noise_i ~ N(0, s^2)
    x_ij     = floor + (1 - floor) * salience_ij   when lesson j was injected in session i, else 0
    beta_j   ~ N(0, tau^2)   (a Gaussian prior, i.e. a ridge penalty lambda = sigma^2 / tau^2)

The category effects gamma have a flat prior (no penalty): each category keeps its own baseline, so a lesson injected
mostly into easy sessions gets no credit for that. The agent effects delta (who wrote the session's record) are there
only when the graded sessions come from more than one agent (a database store shared by a fleet); flat prior too, so a
lesson one agent with easy work injects more often gets no credit for the agent's base rate. Every lesson is in the
same fit, so a lesson that rides along with a helpful one does not borrow its effect.
**Time.** The graded sessions, in log order, are cut into `time_blocks(n)` blocks of (nearly) equal size, each with
its own baseline eta (flat prior; the last block is the reference, so the category baselines are today's): the world
may move (the grader, the model, the work change over a log) and a lesson injected more often later must not be
credited with the trend it rose with. A lesson's effect is then read within blocks; a trend inside one block is not
absorbed (with B blocks a linear trend leaves 1/B of its rise in each, and the bias lent to a lesson falls as 1/B^2).
Where the design switches inside a block (a lesson's run improbable at random there, or the number of lessons a
session injects), the baseline steps too, a baseline of that category and agent from then to the log's end
(`core.analysis.steps`, found once per log: `Design.with_steps`).
A lesson listed twice in one session counts once (its first listing). A lesson included during the session (pulled in
mid-conversation) is not in the design: only what was chosen before it is.

**Penalty by empirical Bayes.** Integrating out gamma (flat prior) and beta leaves the restricted likelihood of the
rewards after removing the category means, a function of lambda and sigma^2 only. With X~ the within-category-centred
design, X~'X~ = V diag(d) V', u = V' X~'y~ and n' = graded sessions minus categories (with agent effects: X~ and y~
are the residuals of the projection on the category, time-block and agent indicators Z, and n' = n - rank(Z))::

    Q(lambda)       = y~'y~ - sum_k u_k^2 / (d_k + lambda)
    -2 log L(lambda) = n' log(Q / n') + sum_k log(1 + d_k / lambda)   (sigma^2 profiled: Q / n')

Up to `DENSE_MAX` lessons one eigen-decomposition serves every lambda: a 1-D search on a log grid, refined by golden
section (exact). Beyond, nothing costs lessons cubed (`joint_ops`): conjugate gradients on X~ as an operator give the
posterior mean; lambda solves the likelihood's stationarity condition lambda = gamma Q / (n' |beta|^2), gamma = p -
lambda tr((A + lambda)^-1) (MacKay's fixed point, which the grid's optimum satisfies too) by secant steps; the trace
and the variances come from each lesson's neighbourhood (a lower bound of the exact ones, within 1% in median on the
bench's libraries). Both read the data only through its sufficient statistics X'X, Z'X, X'y~, y~'y~ (with Z'Z, Z'y and
per lesson its injections and their weight: `Sums`); `fit_log` sums them from the fold's columns `SESSION_BLOCK`
graded sessions at a time, so a log's fit holds O(lessons^2 + block), never an array per injection (beyond
`CROSS_DENSE_MAX` lessons X itself, one number per injection: X'X would hold a session's lessons pairwise, a
million numbers for a session of a thousand; `joint_ops` reads it a block of rows at a time). The prior sd tau =
sigma / sqrt(lambda) is kept at or above `TAU_MIN` (when the data say "no lesson has any effect" the posterior would
otherwise shrink every interval to a point).

**Reported per lesson**: the posterior mean and sd of beta_j (reward per unit weight), and *estimate* = beta_j times
the lesson's mean weight over the graded sessions it was injected in: the model's average change in reward per
injection, in the same units as a with-minus-without difference, shrunk: `loo` ranks lessons by it (`ranking`), the
joint selection policy samples from it (`core.analysis.joint_posterior`); the intervals `loo` claims come from
`core.analysis.claims`. Posterior intervals here are normal; the uncertainty of lambda itself is not propagated (the
usual empirical-Bayes caveat). The category baselines (`baseline`) are (Z'Z)^+ Z'(y - X beta).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.cross import add_cross
from lesson_credit.core.analysis.joint_keys import column_keys
from lesson_credit.core.analysis.joint_ops import (
    CROSS_DENSE_MAX,
    Gram,
    baseline_inverse,
    indicators,
    time_groups,
)
from lesson_credit.core.analysis.joint_solve import GRID as GRID
from lesson_credit.core.analysis.joint_solve import NOISE_MIN as NOISE_MIN
from lesson_credit.core.analysis.joint_solve import neg2_loglik as neg2_loglik
from lesson_credit.core.analysis.joint_solve import solve_gram
from lesson_credit.core.analysis.steps import Steps, find_steps, pair_codes
from lesson_credit.core.base.ids import one_form
from lesson_credit.core.log.snapshot import FoldData
from lesson_credit.core.model.kinds import kind_of as kind_of
from lesson_credit.core.model.kinds import kind_spellings

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Entries = tuple[IntArray, IntArray, FloatArray]  # (session position, arm, weight) per injection

TAU_MIN = 0.05  # smallest prior sd of a lesson's effect per unit weight: effects of +-0.1 stay plausible a priori
Z95 = 1.959963984540054
DENSE_MAX = 600  # lessons up to which the fit is exact (one eigen-decomposition); beyond, iterative
Z90 = 1.6448536269514722
TIME_MIN = 24  # graded sessions below which the fit has no time blocks (one baseline per category)
TIME_THREE = 50  # graded sessions from which the fit has at least 3 time blocks (blocks of 16 sessions or more)
TIME_SESSIONS = 25  # time_blocks: 2 log2(n / TIME_SESSIONS) blocks from 100 on
SESSION_BLOCK = 1 << 16  # graded sessions per block of `fit_log`'s sums (~650k injections at ten a session)


def time_blocks(n: int) -> int:
    """Blocks of log order the fit gives a baseline each: 1 (no time) below `TIME_MIN` graded sessions,
    2 from 24 (blocks of 12 sessions or more), 3 from 50 (blocks of 16 or more), then floor(2 log2(n / 25))
    once that is more: 4 at 100, 10 at 800, 17 at 10,000, 23 at 100,000 (slow growth: each block costs the
    lessons the part of their injections that only varies between blocks). Fewer than 24 sessions: blocks of 8
    cost more identifications and width than they remove bias; at 56-70, 2 blocks left a trend enough to
    cover 89% at 90% (1,000 seeds), 3 cover 89-93% for 2-3% more width (measured in bench/small_blocks.py)."""
    if n < TIME_MIN:
        return 1
    if n < TIME_THREE:
        return 2
    return max(3, int(math.floor(2.0 * math.log2(n / TIME_SESSIONS) + 1e-9)))


def block_codes(n: int, n_blocks: int) -> IntArray:
    """Each of n sessions' (in log order) time block: `n_blocks` runs of nearly equal size."""
    return (np.arange(n, dtype=np.int64) * max(n_blocks, 1)) // max(n, 1)


@dataclass(frozen=True)
class Design:
    """Graded sessions as a regression design (each (session, lesson) pair once)."""

    rows: IntArray  # fold session row of each graded session, in log order
    reward: FloatArray  # (n,)
    category: IntArray  # (n,) category code per graded session
    n_categories: int
    entry_row: IntArray  # (m,) index into rows
    entry_arm: IntArray  # (m,) arm index (FoldData.arm_ids)
    entry_weight: FloatArray  # (m,) floor + (1 - floor) * salience
    n_arms: int
    agent: IntArray | None = None  # (n,) agent code per graded session; None: one agent (no agent effect)
    n_agents: int = 0  # agents among the graded sessions when there is more than one, else 0
    category_names: tuple[str, ...] = ()  # name of each category code ("" for none), when known
    n_blocks: int = 1  # time blocks of log order with a baseline each (`time_blocks`); 1: no time in the fit
    agent_names: tuple[str, ...] = ()  # name of each agent code, when known
    steps: Steps | None = None  # the baseline's steps inside the time blocks (`with_steps`); None: not yet found

    @property
    def n(self) -> int:
        return len(self.rows)

    @cached_property
    def injected(self) -> Any:
        """The injection indicator: n x arms CSR (scipy.sparse), 1 where the lesson was injected."""
        from scipy import sparse

        ones = np.ones(len(self.entry_arm))
        x = sparse.csr_matrix((ones, (self.entry_row, self.entry_arm)), shape=(self.n, self.n_arms))
        x.sum_duplicates()
        return x

    @cached_property
    def co_occurrence(self) -> Any:
        """arms x arms CSR: graded sessions with both lessons (the indicator's X'X), formed once."""
        return (self.injected.T @ self.injected).tocsr()

    @cached_property
    def repeated_co_occurrence(self) -> Any:
        """`co_occurrence` between the arms injected in two graded sessions or more (the others' rows and
        columns empty): what groups and inseparable lessons are read from (a lesson in one session is
        neither), without the pairs of lessons seen once (a session of a thousand new lessons: a million)."""
        from scipy import sparse

        repeated = np.flatnonzero(np.bincount(self.entry_arm, minlength=self.n_arms) >= 2)
        if len(repeated) == self.n_arms:
            return self.co_occurrence
        part = self.injected[:, repeated]
        co = (part.T @ part).tocoo()
        shape = (self.n_arms, self.n_arms)
        return sparse.csr_matrix((co.data, (repeated[co.row], repeated[co.col])), shape=shape)

    def indicators(self, steps: bool = True) -> tuple[Any, IntArray]:
        """Z (categories, time blocks, agents and, with `steps`, the baseline's steps) and each session's baseline
        group (`joint_ops.indicators`)."""
        return self.span_indicators(0, self.n, steps)

    @cached_property
    def _time(self) -> tuple[IntArray | None, IntArray | None, int]:
        """Each session's time block (None: no time blocks) and time group (`joint_ops.time_groups`), and the
        groups' number: the whole log's, read by every span's `span_indicators` (made once, not per span). The groups
        are per category and agent: an agent whose baseline moves unlike the others' (another model, harder work) was
        read within shared blocks, its rise credited to its lessons."""
        block = block_codes(self.n, self.n_blocks) if self.n_blocks > 1 else None
        return (block, *time_groups(pair_codes(self.category, self.agent, self.n_agents), self.n_blocks))

    def span_indicators(self, lo: int, hi: int, steps: bool = True) -> tuple[Any, IntArray]:
        """`indicators` of the sessions lo..hi-1 (their rows of Z; the groups coded among them)."""
        whole_block, cell, n_cells = self._time  # (the whole log's, whatever the span)
        block = None if whole_block is None else whole_block[lo:hi]
        agent = None if self.agent is None else self.agent[lo:hi]
        step, n_steps = None, 0
        if steps and self.steps is not None and self.steps.count:
            step = self.steps.codes(self.category[lo:hi], agent, np.arange(lo, hi))
            n_steps = self.steps.count
        category, n_blocks = self.category[lo:hi], self.n_blocks
        return indicators(
            hi - lo,
            category,
            self.n_categories,
            agent,
            self.n_agents,
            block,
            n_blocks,
            step,
            n_steps,
            cell=None if cell is None else cell[lo:hi],
            n_cells=n_cells,
        )

    def with_steps(self, entries: Callable[[int, int], Entries] | None = None, span: int = 0) -> Design:
        """This design with its baseline's steps found (`core.analysis.steps`) when they are not yet: from its
        injections, `entries` (the sessions' injections as `log_entries` gives them, `span` sessions at a time,
        default `SESSION_BLOCK`; None: the design's own)."""
        if self.steps is not None:
            return self
        time = block_codes(self.n, self.n_blocks) if self.n_blocks > 1 else None
        read = design_entries(self) if entries is None else entries
        found = find_steps(self.n, self.category, self.agent, time, read, span or SESSION_BLOCK)
        return replace(self, steps=found)


def category_codes(categories: Sequence[str | None], n_sessions: int) -> IntArray:
    """One integer per session; a session without a category (or no categories at all) is code 0."""
    if len(categories) != n_sessions:
        return np.zeros(n_sessions, dtype=np.int64)
    names = {name: i for i, name in enumerate(sorted({c or "" for c in categories}))}
    return np.array([names[c or ""] for c in categories], dtype=np.int64)


def kind_codes(categories: Sequence[str | None], rows: IntArray) -> tuple[IntArray, tuple[str, ...]]:
    """Each of the sessions `rows`' kind of work (`kind_of`) as a code 0, 1, ... (the kinds of those sessions
    in sorted order), and each code's name: the spelling most of ALL the kind's sessions in `categories` use
    (pending ones too, whichever `rows` are asked: every command and screen names a kind alike; a tie: the
    first in sorted order; "" for sessions without one, blank ones included), in the composed Unicode form
    people type (`one_form`). One kind per category name when every session spells its kind one way."""
    if len(rows) == 0:
        return np.zeros(0, dtype=np.int64), ()
    spellings = sorted({c or "" for c in categories})
    spelling_code = {name: i for i, name in enumerate(spellings)}
    every = np.array([spelling_code[c or ""] for c in categories], dtype=np.int64)
    raw = every[rows]
    kinds = sorted({kind_of(name) for name in spellings})
    kind_code = {kind: i for i, kind in enumerate(kinds)}
    to_kind = np.array([kind_code[kind_of(name)] for name in spellings], dtype=np.int64)
    used = np.bincount(every, minlength=len(spellings)).tolist()
    present, dense = np.unique(to_kind[raw], return_inverse=True)
    best = kind_spellings(dict(zip(spellings, used, strict=True)))  # as one session's own cells name it
    names = tuple(one_form(best[kinds[code]]) if kinds[code] else "" for code in present.tolist())
    return dense.astype(np.int64), names


def graded_sessions(data: FoldData, categories: Sequence[str | None], agents: Sequence[str | None] = ()) -> Design:
    """The per-session part of `build_design` (graded sessions, rewards, kinds of work (`kind_codes`),
    agents, time blocks), with no entries."""
    graded = ~np.isnan(data.base)
    rows = np.flatnonzero(graded).astype(np.int64)
    if len(categories) == data.n_sessions:
        dense, names = kind_codes(categories, rows)
    else:
        dense, names = np.zeros(len(rows), dtype=np.int64), ("",) if len(rows) else ()
    n_cat = int(dense.max()) + 1 if len(dense) else 0
    agent_codes: IntArray | None = None
    n_agents, agent_names = 0, ()
    if len(agents) == data.n_sessions and len(rows):
        present, agent_dense = np.unique(category_codes(agents, data.n_sessions)[rows], return_inverse=True)
        if int(agent_dense.max()) >= 1:
            agent_codes, n_agents = agent_dense.astype(np.int64), int(agent_dense.max()) + 1
            spellings = sorted({a or "" for a in agents})  # (category_codes' order)
            agent_names = tuple(spellings[code] for code in present.tolist())
    none = np.zeros(0, dtype=np.int64)
    return Design(
        rows=rows,
        reward=np.asarray(data.base[rows], dtype=np.float64),
        category=dense.astype(np.int64),
        n_categories=n_cat,
        entry_row=none,
        entry_arm=none,
        entry_weight=np.zeros(0),
        n_arms=data.n_arms,
        agent=agent_codes,
        n_agents=n_agents,
        category_names=names,
        n_blocks=time_blocks(len(rows)),
        agent_names=agent_names,
    )


def build_design(
    data: FoldData, categories: Sequence[str | None], floor: float, agents: Sequence[str | None] = ()
) -> Design:
    """The regression design of a log: graded sessions, categories, time blocks, weights, duplicates
    dropped. `agents`: who wrote each session (one per session, else ignored); an agent effect is
    fitted only when the graded sessions come from more than one agent. Every injection at once: the
    fit of a whole log streams them instead (`fit_log`)."""
    sessions = graded_sessions(data, categories, agents)
    row, arm, weight = log_entries(data, sessions, floor)(0, sessions.n)
    return replace(sessions, entry_row=row, entry_arm=arm, entry_weight=weight).with_steps()


def log_entries(data: FoldData, sessions: Design, floor: float) -> Callable[[int, int], Entries]:
    """The entries of graded sessions lo..hi-1 (positions in `sessions.rows`), read from the fold's
    columns for those sessions only: (position - lo, arm, weight), a lesson listed twice in a session
    once (its first listing). A lesson included during its session (`"included": "during"`) is left
    out: the treatment is what was decided before the session; a lesson pulled in when trouble came
    up is no evidence of its effect (docs/estimates.md, "Chosen before, included during")."""
    rows, n_arms = sessions.rows, max(data.n_arms, 1)
    during = np.sort(np.asarray(data.during, dtype=np.int64))

    def part(lo: int, hi: int) -> Entries:
        if hi <= lo:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        bounds = data.starts(int(rows[lo]), int(rows[hi - 1]) + 1)
        start, stop = int(bounds[0]), int(bounds[-1])
        arm, salience, session = data.entry_slice(start, stop)
        keep = np.ones(stop - start, dtype=bool)
        keep[during[np.searchsorted(during, start) : np.searchsorted(during, stop)] - start] = False
        first_row = int(rows[lo])
        position = np.full(int(rows[hi - 1]) - first_row + 1, -1, dtype=np.int64)
        position[rows[lo:hi] - first_row] = np.arange(hi - lo)
        g = position[np.asarray(session, dtype=np.int64) - first_row]  # position - lo; -1: not graded
        keep &= g >= 0
        g, arm_kept = g[keep], np.asarray(arm, dtype=np.int64)[keep]
        weight = floor + (1.0 - floor) * np.asarray(salience, dtype=np.float64)[keep]
        key = g * n_arms + arm_kept
        ordered = np.sort(key, kind="stable")  # (sessions in order, a few entries each: timsort's runs, 3x faster)
        if (ordered[1:] == ordered[:-1]).any():  # a lesson listed twice in a session: its first listing
            order = np.argsort(key, kind="stable")  # a pair's listings in log order
            first = np.ones(len(key), dtype=bool)
            first[order[1:][key[order[1:]] == key[order[:-1]]]] = False
            g, arm_kept, weight = g[first], arm_kept[first], weight[first]
        return g, arm_kept, weight

    return part


@dataclass(frozen=True)
class JointFit:
    """Posterior of every lesson's coefficient; NaN for lessons never injected in a graded session."""

    coef: FloatArray  # (n_arms,) posterior mean of beta_j (reward per unit weight)
    coef_sd: FloatArray  # (n_arms,) posterior sd
    mean_weight: FloatArray  # (n_arms,) mean weight over graded sessions with the lesson
    n: IntArray  # (n_arms,) graded sessions with the lesson
    penalty: float  # lambda = sigma^2 / tau^2
    noise_sd: float  # sigma
    prior_sd: float  # tau
    n_sessions: int  # graded sessions in the fit
    n_categories: int
    penalty_rule: str  # how lambda was chosen
    n_agents: int = 0  # agent effects fitted (0: one agent, none)
    solver: str = "dense"  # "dense" (eigen-decomposition, exact) or "iterative" (no lessons-cubed step)
    # (n_categories,) each category's baseline reward (first agent's, last block's, before any step of the baseline)
    baseline: FloatArray | None = None
    category_names: tuple[str, ...] = ()  # names of the category codes, when the design knows them
    n_blocks: int = 1  # time blocks with a baseline each (1: none)

    @property
    def estimate(self) -> FloatArray:
        """Average change in reward per injection: coef times the lesson's mean weight."""
        result: FloatArray = self.coef * self.mean_weight
        return result

    @property
    def sd(self) -> FloatArray:
        result: FloatArray = self.coef_sd * self.mean_weight
        return result

    def interval(self, z: float = Z95) -> tuple[FloatArray, FloatArray]:
        est, sd = self.estimate, self.sd
        return est - z * sd, est + z * sd

    def p_values(self) -> FloatArray:
        """Two-sided posterior tail probability of the opposite sign, doubled (a z-test on the estimate)."""
        from scipy.special import ndtr

        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.abs(self.coef) / self.coef_sd
        return np.asarray(2.0 * ndtr(-z), dtype=np.float64)

    def method(self) -> str:
        agents = f" + {self.n_agents} agent effects" if self.n_agents else ""
        time = f" + {self.n_blocks} time blocks" if self.n_blocks > 1 else ""
        return (
            f"joint: reward ~ {self.n_categories} category baselines{agents}{time} + every lesson's salience weight, "
            f"Gaussian prior on lesson effects ({self.penalty_rule}: prior sd {self.prior_sd:.3g}, "
            f"noise sd {self.noise_sd:.3g}); effect = coefficient x mean weight when injected"
        )


def fit_joint(
    design: Design, *, penalty: float | None = None, tau_min: float = TAU_MIN, solver: str = "auto"
) -> JointFit:
    """Fit the model. `penalty` fixes lambda (tests); otherwise empirical Bayes chooses it.
    `solver`: "dense" (one eigen-decomposition, exact), "iterative" (conjugate gradients and
    neighbourhood variances: no lessons-cubed step) or "auto" (dense up to `DENSE_MAX` lessons)."""

    design = design.with_steps()
    entries = design_entries(design)
    return fit_sums(sums(design, entries, SESSION_BLOCK), design, penalty=penalty, tau_min=tau_min, solver=solver)


def design_entries(design: Design) -> Callable[[int, int], Entries]:
    """The entries of a design that holds them, for graded sessions lo..hi-1 as `log_entries` gives
    them (position - lo, arm, weight): `build_design`'s, block by block, are the very arrays `fit_log`
    reads, so the two fits are the same numbers."""
    row, arm, weight = design.entry_row, design.entry_arm, design.entry_weight
    if len(row) and not bool((row[1:] >= row[:-1]).all()):  # a design made by hand: its entries by session
        order = np.argsort(row, kind="stable")
        row, arm, weight = row[order], arm[order], weight[order]

    def part(lo: int, hi: int) -> Entries:
        a, b = np.searchsorted(row, (lo, hi))
        return row[a:b] - lo, arm[a:b], weight[a:b]

    return part


def fit_log(
    data: FoldData,
    categories: Sequence[str | None],
    floor: float,
    agents: Sequence[str | None] = (),
    *,
    penalty: float | None = None,
    tau_min: float = TAU_MIN,
    solver: str = "auto",
    block: int | None = None,
) -> JointFit:
    """`fit_joint(build_design(data, categories, floor, agents))` without the design: the sums the fit
    needs are read from the fold's columns `block` (default `SESSION_BLOCK`) graded sessions at a time,
    so its memory is O(lessons^2 + block), not O(injections) (a million sessions of ten lessons: 10
    million injections), up to `CROSS_DENSE_MAX` lessons (beyond, O(injections): `sums`). The same
    numbers as `fit_joint`'s, which sums its design in the same blocks."""
    sessions = graded_sessions(data, categories, agents)
    entries, span = log_entries(data, sessions, floor), SESSION_BLOCK if block is None else block
    sessions = sessions.with_steps(entries, span)  # one pass more: the baseline's steps (`core.analysis.steps`)
    return fit_sums(
        sums(sessions, entries, span),
        sessions,
        penalty=penalty,
        tau_min=tau_min,
        solver=solver,
    )


@dataclass(frozen=True)
class Sums:
    """The sufficient statistics of the model over every arm, y~ the rewards after their baselines
    (y - Z (Z'Z)^+ Z'y): X'X (`cross`: a dense array, up to `CROSS_DENSE_MAX` arms),
    Z'X, X'y~, injections and their total weight per arm, (Z'Z)^+ and its rank, Z'y, y~'y~ and y'y; `x`: X
    itself (n x arms CSR) in place of X'X (`cross` None) beyond `CROSS_DENSE_MAX` arms (`sums`); `key`: each
    arm's `joint_ops.column_keys` (what breaks ties among its neighbours, whatever the arms' order)."""

    cross: FloatArray | None
    zx: FloatArray
    xy: FloatArray
    count: IntArray
    weight: FloatArray
    ginv: FloatArray
    rank: int
    zy: FloatArray
    yy: float
    y2: float
    x: Any = None
    key: FloatArray | None = None


def sums(sessions: Design, entries: Callable[[int, int], Entries], block: int) -> Sums:
    """`Sums` of graded sessions (`sessions`: a design's per-session part) whose injections `entries(lo,
    hi)` gives for positions lo..hi-1 (as position - lo, arm, weight), `block` sessions at a time: a
    first pass over the sessions for the baselines (Z'Z, Z'y), a second adds each block's products.
    Beyond `CROSS_DENSE_MAX` arms X itself is kept instead of X'X: X'X holds each session's lessons pairwise
    (a million nonzeros for one session of a thousand lessons), X one number per injection."""
    from scipy import sparse

    n, n_arms = sessions.n, sessions.n_arms

    def z_of(lo: int, hi: int) -> Any:
        z, _ = sessions.span_indicators(lo, hi)  # (with the baseline's steps when found: `Design.with_steps`)
        return z

    spans = [(lo, min(lo + block, n)) for lo in range(0, n, block)]
    k = z_of(0, 0).shape[1]
    ztz, zy, y2 = np.zeros((k, k)), np.zeros(k), 0.0
    for lo, hi in spans:
        z, y = z_of(lo, hi), sessions.reward[lo:hi]
        ztz += (z.T @ z).toarray()
        zy += z.T @ y
        y2 += float(y @ y)
    ginv, rank = baseline_inverse(ztz)
    fitted = ginv @ zy
    dense = n_arms <= CROSS_DENSE_MAX
    cross = np.zeros((n_arms, n_arms) if dense else (0, 0))
    zx, xy, weight, yy = np.zeros((k, n_arms)), np.zeros(n_arms), np.zeros(n_arms), 0.0
    count = np.zeros(n_arms, dtype=np.int64)
    key = np.zeros(n_arms)
    kept: list[Any] = []  # the blocks' X (beyond CROSS_DENSE_MAX arms)
    for lo, hi in spans:
        z = z_of(lo, hi)
        y = sessions.reward[lo:hi] - z @ fitted
        yy += float(y @ y)
        row, arm, w = entries(lo, hi)
        x = sparse.csr_matrix((w, (row, arm)), shape=(hi - lo, n_arms))
        if dense:
            add_cross(cross, x)
        else:
            kept.append(x)
        zx += (z.T @ x).toarray()
        xy += x.T @ y
        key += column_keys(x.T, lo)
        count += np.bincount(arm, minlength=n_arms)
        weight += np.bincount(arm, weights=w, minlength=n_arms)
    if dense:
        return Sums(cross, zx, xy, count, weight, ginv, rank, zy, yy, y2, key=key)
    x = sparse.vstack(kept, format="csr") if kept else sparse.csr_matrix((0, n_arms))
    return Sums(None, zx, xy, count, weight, ginv, rank, zy, yy, y2, x, key)


def fit_sums(
    st: Sums, sessions: Design, *, penalty: float | None = None, tau_min: float = TAU_MIN, solver: str = "auto"
) -> JointFit:
    """The model fitted on its sufficient statistics (see `fit_joint`); `sessions`: the design's
    per-session part (sizes, categories, agents, time blocks)."""
    n_arms = sessions.n_arms
    nan = np.full(n_arms, np.nan)
    n_per_arm = st.count
    active = np.flatnonzero(n_per_arm > 0)
    n, c = sessions.n, sessions.n_categories
    n_agents = sessions.n_agents if sessions.agent is not None else 0
    no_fit = JointFit(
        nan,
        nan.copy(),
        nan.copy(),
        n_per_arm,
        math.nan,
        math.nan,
        math.nan,
        n,
        c,
        "no data",
        n_agents,
        n_blocks=sessions.n_blocks,
    )
    if not len(active) or n - c - max(n_agents - 1, 0) - (sessions.n_blocks - 1) < 1:
        return no_fit
    dof = n - st.rank
    if dof < 1:
        return no_fit
    all_arms = len(active) == n_arms
    x, cross = st.x, st.cross
    if not all_arms:
        x = None if x is None else x[:, active]
        cross = None if cross is None else cross[np.ix_(active, active)]
    zx = st.zx[:, active]
    key = None if st.key is None else st.key[active]
    op = Gram(cross, zx, st.ginv, st.ginv @ zx, st.rank, x, key)
    # no variation left after the baselines: no signal
    b = st.xy[active] if st.yy > 1e-12 * max(st.y2, 1e-300) else np.zeros(len(active))
    dense = solver == "dense" or (solver == "auto" and len(active) <= DENSE_MAX)
    coef_active, var_active, lam, sigma2, rule = solve_gram(op, b, st.yy, dof, penalty, tau_min, dense)
    coef = nan.copy()
    coef_sd = nan.copy()
    coef[active] = coef_active
    coef_sd[active] = np.sqrt(var_active)
    mean_weight = nan.copy()
    mean_weight[active] = st.weight[active] / n_per_arm[active]
    sigma = math.sqrt(sigma2)
    tau = sigma / math.sqrt(lam) if lam > 0 else math.inf
    # baselines: (Z'Z)^+ Z'(y - X beta); the first c are the categories' (first agent, last time block)
    baseline = st.ginv @ (st.zy - zx @ coef_active)
    return JointFit(
        coef,
        coef_sd,
        mean_weight,
        n_per_arm,
        lam,
        sigma,
        tau,
        n,
        c,
        rule,
        n_agents,
        solver="dense" if dense else "iterative",
        baseline=np.asarray(baseline[:c], dtype=np.float64),
        category_names=sessions.category_names,
        n_blocks=sessions.n_blocks,
    )


def joint_effects(
    data: FoldData, categories: Sequence[str | None], floor: float, agents: Sequence[str | None] = ()
) -> JointFit:
    """Fit the joint model on a log (empirical Bayes penalty), its injections streamed (`fit_log`)."""
    return fit_log(data, categories, floor, agents)
