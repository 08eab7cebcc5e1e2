"""The joint estimate of every lesson's effect on reward: one penalised regression over all lessons.

Model, over graded sessions i (each counted once) and lessons j::

    reward_i = gamma[category_i] + delta[agent_i] + sum_j beta_j * x_ij + noise_i,   noise_i ~ N(0, sigma^2)
    x_ij     = floor + (1 - floor) * salience_ij   when lesson j was injected in session i, else 0
    beta_j   ~ N(0, tau^2)   (a Gaussian prior, i.e. a ridge penalty lambda = sigma^2 / tau^2)

The category effects gamma have a flat prior (no penalty): each category keeps its own baseline,
so a lesson injected mostly into easy sessions gets no credit for that. The agent effects delta
(who wrote the session's record) are there only when the graded sessions come from more
than one agent (a database store shared by a fleet); flat prior too, so a lesson one agent with
easy work injects more often gets no credit for the agent's base rate. Every lesson is in the
same fit, so a lesson that rides along with a helpful one does not borrow its effect.
A lesson listed twice in one session counts once (its first listing).

**Penalty by empirical Bayes.** Integrating out gamma (flat prior) and beta leaves the
restricted likelihood of the rewards after removing the category means, a function of
lambda and sigma^2 only. With X~ the within-category-centred design, X~'X~ = V diag(d) V',
u = V' X~'y~ and n' = graded sessions minus categories (with agent effects: X~ and y~ are the
residuals of the projection on the category and agent indicators Z, and n' = n - rank(Z))::

    Q(lambda)       = y~'y~ - sum_k u_k^2 / (d_k + lambda)
    -2 log L(lambda) = n' log(Q / n') + sum_k log(1 + d_k / lambda)   (sigma^2 profiled: Q / n')

One eigen-decomposition serves every lambda: a 1-D search on a log grid, refined by golden
section. The prior sd tau = sigma / sqrt(lambda) is kept at or above `TAU_MIN` (when the data
say "no lesson has any effect" the posterior would otherwise shrink every interval to a point).

**Reported per lesson**: the posterior mean and sd of beta_j (reward per unit weight), and the
headline *effect* = beta_j times the lesson's mean weight over the graded sessions it was
injected in: the model's average change in reward per injection, in the same units as a
with-minus-without difference. Intervals are normal posterior intervals; the uncertainty of
lambda itself is not propagated (the usual empirical-Bayes caveat).

Sparse products build X'X (scipy.sparse, imported lazily); the p x p eigen-problem is dense
(1,000 lessons: a fraction of a second).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.log.snapshot import FoldData

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

TAU_MIN = 0.05  # smallest prior sd of a lesson's effect per unit weight: effects of +-0.1 stay plausible a priori
NOISE_MIN = 0.01  # smallest noise sd the intervals use: the grade resolution (rewards given to two decimals)
GRID = np.logspace(-6.0, 8.0, 141)  # lambda = sigma^2 / tau^2, searched on this grid, then refined
Z95 = 1.959963984540054
Z90 = 1.6448536269514722


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

    @property
    def n(self) -> int:
        return len(self.rows)


def category_codes(categories: Sequence[str | None], n_sessions: int) -> IntArray:
    """One integer per session; a session without a category (or no categories at all) is code 0."""
    if len(categories) != n_sessions:
        return np.zeros(n_sessions, dtype=np.int64)
    names = {name: i for i, name in enumerate(sorted({c or "" for c in categories}))}
    return np.array([names[c or ""] for c in categories], dtype=np.int64)


def build_design(
    data: FoldData, categories: Sequence[str | None], floor: float, agents: Sequence[str | None] = ()
) -> Design:
    """The regression design of a log: graded sessions, categories, weights, duplicates dropped.
    `agents`: who wrote each session (one per session, else ignored); an agent effect is fitted
    only when the graded sessions come from more than one agent."""
    graded = ~np.isnan(data.base)
    rows = np.flatnonzero(graded).astype(np.int64)
    position = np.full(data.n_sessions, -1, dtype=np.int64)
    position[rows] = np.arange(len(rows))
    codes = category_codes(categories, data.n_sessions)[rows]
    _, dense = np.unique(codes, return_inverse=True)
    n_cat = int(dense.max()) + 1 if len(dense) else 0
    agent_codes: IntArray | None = None
    n_agents = 0
    if len(agents) == data.n_sessions and len(rows):
        _, agent_dense = np.unique(category_codes(agents, data.n_sessions)[rows], return_inverse=True)
        if int(agent_dense.max()) >= 1:
            agent_codes, n_agents = agent_dense.astype(np.int64), int(agent_dense.max()) + 1
    entry_session = np.asarray(data.entry_session, dtype=np.int64)
    keep = graded[entry_session]
    g = position[entry_session[keep]]
    arm = np.asarray(data.entry_arm, dtype=np.int64)[keep]
    sal = np.asarray(data.entry_salience, dtype=np.float64)[keep]
    n_arms = data.n_arms
    _, first = np.unique(g * max(n_arms, 1) + arm, return_index=True)  # first listing of each pair
    first.sort()
    return Design(
        rows=rows,
        reward=np.asarray(data.base[rows], dtype=np.float64),
        category=dense.astype(np.int64),
        n_categories=n_cat,
        entry_row=g[first],
        entry_arm=arm[first],
        entry_weight=floor + (1.0 - floor) * sal[first],
        n_arms=n_arms,
        agent=agent_codes,
        n_agents=n_agents,
    )


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
        return (
            f"joint: reward ~ {self.n_categories} category baselines{agents} + every lesson's salience weight, "
            f"Gaussian prior on lesson effects ({self.penalty_rule}: prior sd {self.prior_sd:.3g}, "
            f"noise sd {self.noise_sd:.3g}); effect = coefficient x mean weight when injected"
        )


def neg2_loglik(lam: FloatArray, d: FloatArray, u2: FloatArray, yy: float, dof: int) -> FloatArray:
    """-2 x restricted log-likelihood (constants dropped, sigma^2 profiled) for each lambda."""
    lam = np.asarray(lam, dtype=np.float64)[:, None]
    q = yy - (u2[None, :] / (d[None, :] + lam)).sum(axis=1)
    q = np.maximum(q, 1e-300)
    result: FloatArray = dof * np.log(q / dof) + np.log1p(d[None, :] / lam).sum(axis=1)
    return result


def _golden(fn: Callable[[float], float], lo: float, hi: float, iterations: int = 40) -> float:
    """Minimise a unimodal function of log(lambda) on [lo, hi] by golden section."""
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    a, b = lo, hi
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = fn(c), fn(d)
    for _ in range(iterations):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = fn(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = fn(d)
    return (a + b) / 2.0


def fit_joint(design: Design, *, penalty: float | None = None, tau_min: float = TAU_MIN) -> JointFit:
    """Fit the model. `penalty` fixes lambda (tests); otherwise empirical Bayes chooses it."""
    from scipy import linalg, sparse

    n_arms = design.n_arms
    nan = np.full(n_arms, np.nan)
    n_per_arm = np.bincount(design.entry_arm, minlength=n_arms).astype(np.int64)
    active = np.flatnonzero(n_per_arm > 0)
    n, c = design.n, design.n_categories
    n_agents = design.n_agents if design.agent is not None else 0
    dof = n - c - max(n_agents - 1, 0)  # rank of the indicators when agents and categories are not confounded
    if not len(active) or dof < 1:
        return JointFit(nan, nan.copy(), nan.copy(), n_per_arm, math.nan, math.nan, math.nan, n, c, "no data", n_agents)
    p = len(active)
    column = np.full(n_arms, -1, dtype=np.int64)
    column[active] = np.arange(p)
    col = column[design.entry_arm]
    w = design.entry_weight
    x = sparse.csr_matrix((w, (design.entry_row, col)), shape=(n, p))
    y = design.reward
    xtx = (x.T @ x).toarray()
    if design.agent is None:
        cat = design.category
        # centre within categories: A = X'X - X'Z (Z'Z)^-1 Z'X, b = X'y - X'Z (Z'Z)^-1 Z'y
        nc = np.bincount(cat, minlength=c).astype(np.float64)
        zy = np.bincount(cat, weights=y, minlength=c)
        zx = np.bincount(cat[design.entry_row] * p + col, weights=w, minlength=c * p).reshape(c, p)
        scaled = zx / nc[:, None]
        a = xtx - zx.T @ scaled
        b = np.asarray(x.T @ y).ravel() - scaled.T @ zy
        yy = float(y @ y - (zy * zy / nc).sum())
    else:
        a, b, yy, rank = _project_out(design, x, xtx)
        dof = n - rank
        if dof < 1:
            no_fit = math.nan
            return JointFit(nan, nan.copy(), nan.copy(), n_per_arm, no_fit, no_fit, no_fit, n, c, "no data", n_agents)
    a = (a + a.T) / 2.0
    d, v = linalg.eigh(a, overwrite_a=True, check_finite=False, driver="evr")  # MRRR: ~1.4x LAPACK's default
    d = np.maximum(d, 0.0)
    u = v.T @ b
    if yy <= 1e-12 * max(float(y @ y), 1e-300):  # no variation left after the category means: no signal
        u = np.zeros_like(u)
    u2 = u * u

    if penalty is not None:
        lam = float(penalty)
        rule = "fixed penalty"
    else:
        values = neg2_loglik(GRID, d, u2, yy, dof)
        best = int(np.argmin(values))
        lo = math.log(GRID[max(best - 1, 0)])
        hi = math.log(GRID[min(best + 1, len(GRID) - 1)])
        log_lam = _golden(lambda t: float(neg2_loglik(np.array([math.exp(t)]), d, u2, yy, dof)[0]), lo, hi)
        lam = math.exp(log_lam)
        rule = "empirical Bayes (restricted marginal likelihood)"

    def noise_var(lam: float) -> float:
        """sigma^2 = Q(lambda) / n'; with the penalty chosen here, at least the grade resolution squared
        (identical grades are no proof of zero noise)."""
        q = max(yy - float((u2 / (d + lam)).sum()), 0.0)
        return q / dof if penalty is not None else max(q / dof, NOISE_MIN**2)

    sigma2 = noise_var(lam)
    if penalty is None and sigma2 / lam < tau_min**2:
        # keep the prior sd at tau_min: lambda = sigma^2 / tau_min^2 with sigma^2 = noise_var(lambda), a fixed point
        for _ in range(50):
            lam = sigma2 / tau_min**2
            new = noise_var(lam)
            if abs(new - sigma2) <= 1e-12 * sigma2:
                break
            sigma2 = new
        lam = sigma2 / tau_min**2
        rule += f", prior sd floored at {tau_min:g}"
    inv = 1.0 / (d + lam)
    coef_active = v @ (inv * u)
    var_active = sigma2 * ((v * v) @ inv)
    coef = nan.copy()
    coef_sd = nan.copy()
    coef[active] = coef_active
    coef_sd[active] = np.sqrt(var_active)
    mean_weight = nan.copy()
    total_w = np.bincount(design.entry_arm, weights=w, minlength=n_arms)
    mean_weight[active] = total_w[active] / n_per_arm[active]
    sigma = math.sqrt(sigma2)
    tau = sigma / math.sqrt(lam) if lam > 0 else math.inf
    return JointFit(coef, coef_sd, mean_weight, n_per_arm, lam, sigma, tau, n, c, rule, n_agents)


def _project_out(design: Design, x: Any, xtx: FloatArray) -> tuple[FloatArray, FloatArray, float, int]:
    """A, b, y~'y~ and rank(Z) with Z the category and agent indicators (the first agent's dropped:
    the category indicators already sum to one): A = X'X - X'Z (Z'Z)^+ Z'X, b = X'y - X'Z (Z'Z)^+ Z'y.
    The pseudo-inverse keeps the projection right when agents and categories are confounded."""
    assert design.agent is not None
    c, k_agents = design.n_categories, design.n_agents - 1
    k = c + k_agents
    y = design.reward
    cat, agent = design.category, design.agent
    # each session's indicator columns: its category, and its agent's unless it is the first agent
    z_rows = np.concatenate([np.arange(design.n), np.flatnonzero(agent > 0)])
    z_cols = np.concatenate([cat, c + agent[agent > 0] - 1])
    z = np.zeros((design.n, k))
    z[z_rows, z_cols] = 1.0
    ztz = z.T @ z
    zy = z.T @ y
    zx = np.asarray((x.T @ z).T)  # (k, p): Z'X
    g = np.linalg.pinv(ztz, hermitian=True)
    rank = int(np.linalg.matrix_rank(ztz, hermitian=True))
    a: FloatArray = xtx - zx.T @ (g @ zx)
    b: FloatArray = np.asarray(x.T @ y).ravel() - zx.T @ (g @ zy)
    yy = float(y @ y - zy @ g @ zy)
    return a, b, yy, rank


def joint_effects(
    data: FoldData, categories: Sequence[str | None], floor: float, agents: Sequence[str | None] = ()
) -> JointFit:
    """Build the design of a log and fit it (empirical Bayes penalty)."""
    return fit_joint(build_design(data, categories, floor, agents))


def effects_by_lesson(
    data: FoldData, categories: Sequence[str | None], floor: float, agents: Sequence[str | None] = ()
) -> dict[str, float]:
    """Each lesson's joint effect estimate (change in reward per injection), for lessons with one."""
    fit = joint_effects(data, categories, floor, agents)
    return {arm: float(e) for arm, e in zip(data.arm_ids, fit.estimate.tolist(), strict=True) if math.isfinite(e)}
