"""The joint fit's solvers: the posterior of the lessons' coefficients given A = X~'X~ (or its operator)
and b = X~'y~, with the penalty lambda by empirical Bayes (core/analysis/joint.py's docstring gives the
model and the likelihood). Dense up to `DENSE_MAX` lessons (one eigen-decomposition, a grid search refined
by golden section), iterative beyond (conjugate gradients; lambda by MacKay's fixed point)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.joint_ops import CG_TOL, Centred, Gram, conjugate_gradients
from lesson_credit.core.analysis.neighbourhoods import Neighbourhoods, neighbourhoods
from lesson_credit.core.base.memory import scipy_linalg

FloatArray = npt.NDArray[np.float64]

GRID = np.logspace(-6.0, 8.0, 141)  # lambda = sigma^2 / tau^2, searched on this grid, then refined
NOISE_MIN = 0.01  # smallest noise sd the intervals use: the grade resolution (rewards given to two decimals)
LAMBDA_TOL = 1e-7  # the iterative search stops when lambda moves by less than this (relative)


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


Solved = tuple[FloatArray, FloatArray, float, float, str]  # coef, variance, lambda, sigma^2, rule


def solve_operator(
    op: Centred,
    y_centred: FloatArray,
    yy: float,
    dof: int,
    penalty: float | None,
    tau_min: float,
    dense: bool,
    hoods: Neighbourhoods | None = None,
) -> Solved:
    """The posterior of the columns of a centred design: (mean, variance, lambda, sigma^2, rule)."""
    return solve_gram(op, np.asarray(op.xt @ y_centred, dtype=np.float64), yy, dof, penalty, tau_min, dense, hoods)


def solve_gram(
    op: Centred | Gram,
    b: FloatArray,
    yy: float,
    dof: int,
    penalty: float | None,
    tau_min: float,
    dense: bool,
    hoods: Neighbourhoods | None = None,
) -> Solved:
    """The posterior given A (`op`) and b = X~'y~: (mean, variance, lambda, sigma^2, rule)."""
    if dense:
        return _solve_dense(op, b, yy, dof, penalty, tau_min)
    return _solve_iterative(op, b, yy, dof, penalty, tau_min, hoods)


def _noise_var(q: float, dof: int, fixed: bool) -> float:
    """sigma^2 = Q(lambda) / n'; with the penalty chosen here, at least the grade resolution squared
    (identical grades are no proof of zero noise)."""
    return max(q, 0.0) / dof if fixed else max(max(q, 0.0) / dof, NOISE_MIN**2)


def _solve_dense(
    op: Centred | Gram, b: FloatArray, yy: float, dof: int, penalty: float | None, tau_min: float
) -> Solved:
    """One eigen-decomposition of A serves every lambda: the exact restricted likelihood on a grid,
    refined by golden section."""
    linalg = scipy_linalg("the joint fit")

    a = op.gram_dense()
    d, v = linalg.eigh(a, overwrite_a=True, check_finite=False, driver="evr")  # MRRR: ~1.4x LAPACK's default
    d = np.maximum(d, 0.0)
    u = v.T @ b
    u2 = u * u
    if penalty is not None:
        lam, rule = float(penalty), "fixed penalty"
    else:
        values = neg2_loglik(GRID, d, u2, yy, dof)
        # ties (a likelihood flat in lambda says nothing about it): the largest penalty, not rounding noise
        best = int(np.flatnonzero(values <= values.min() + 1e-9 * (1.0 + abs(float(values.min()))))[-1])
        lo = math.log(GRID[max(best - 1, 0)])
        hi = math.log(GRID[min(best + 1, len(GRID) - 1)])
        log_lam = _golden(lambda t: float(neg2_loglik(np.array([math.exp(t)]), d, u2, yy, dof)[0]), lo, hi)
        lam = math.exp(log_lam)
        rule = "empirical Bayes (restricted marginal likelihood)"

    def noise_var(lam: float) -> float:
        return _noise_var(yy - float((u2 / (d + lam)).sum()), dof, penalty is not None)

    sigma2 = noise_var(lam)
    if penalty is None and sigma2 / lam < tau_min**2:
        lam, sigma2 = _floor_prior(noise_var, sigma2, tau_min)
        rule += f", prior sd floored at {tau_min:g}"
    inv = 1.0 / (d + lam)
    return v @ (inv * u), sigma2 * ((v * v) @ inv), lam, sigma2, rule


def _floor_prior(noise_var: Callable[[float], float], sigma2: float, tau_min: float) -> tuple[float, float]:
    """Keep the prior sd at tau_min: lambda = sigma^2 / tau_min^2 with sigma^2 = noise_var(lambda), a fixed point."""
    for _ in range(50):
        new = noise_var(sigma2 / tau_min**2)
        if abs(new - sigma2) <= 1e-12 * sigma2:
            break
        sigma2 = new
    return sigma2 / tau_min**2, sigma2


def _fixed_point(update: Callable[[float], float], t: float) -> float:
    """t with update(t) = t, by secant steps on update(t) - t (a plain step when the secant misbehaves);
    within LAMBDA_TOL, on the log scale of GRID."""
    lo, hi = math.log(GRID[0]), math.log(GRID[-1])
    previous: tuple[float, float] | None = None
    for _ in range(100):
        gap = update(t) - t
        if abs(gap) < LAMBDA_TOL:
            return t + gap
        step = gap
        if previous is not None and gap != previous[1]:
            secant = -gap * (t - previous[0]) / (gap - previous[1])
            if math.isfinite(secant) and abs(secant) <= 4.0 * abs(gap) + 1.0:
                step = secant
        previous = (t, gap)
        t = min(max(t + step, lo), hi)
    return t


def _solve_iterative(
    op: Centred | Gram,
    b: FloatArray,
    yy: float,
    dof: int,
    penalty: float | None,
    tau_min: float,
    hoods: Neighbourhoods | None = None,
) -> Solved:
    """Conjugate gradients for the posterior mean; lambda by the fixed point of the restricted
    likelihood's stationarity condition, lambda = gamma Q / (n' |beta|^2) with gamma = p - lambda
    tr((A + lambda)^-1) (MacKay's update: the dense path's optimum satisfies it too); the trace
    and the variances from each lesson's neighbourhood (`neighbourhoods`)."""
    diag = op.gram_diag()
    hoods = hoods if hoods is not None else neighbourhoods(op)
    p = op.p
    last = [np.zeros(p)]  # each solve starts from the last one's solution

    def solve(lam: float, tol: float = CG_TOL) -> FloatArray:
        blocks = hoods.preconditioner(np.full(p, lam))
        beta, _ = conjugate_gradients(lambda v: op.gram_apply(v) + lam * v, b, blocks, last[0], tol)
        last[0] = beta
        return beta

    if penalty is not None:
        lam, rule = float(penalty), "fixed penalty"
    else:
        rule = "empirical Bayes (restricted marginal likelihood, iterative)"

        def update(log_lam: float) -> float:
            """log of MacKay's update of lambda (the largest penalty when nothing is left to explain)."""
            lam = math.exp(log_lam)
            beta = solve(lam, LAMBDA_TOL)
            norm2 = float(beta @ beta)
            if norm2 <= 1e-300:
                return math.log(GRID[-1])
            gamma = p - lam * float(hoods.inverse_diagonal(np.full(p, lam)).sum())
            return math.log(float(np.clip(gamma * (yy - float(b @ beta)) / (dof * norm2), GRID[0], GRID[-1])))

        lam = math.exp(_fixed_point(update, math.log(float(np.clip(np.median(diag) / 10.0, GRID[0], GRID[-1])))))

    def noise_var(lam: float) -> float:
        return _noise_var(yy - float(b @ solve(lam, LAMBDA_TOL)), dof, penalty is not None)

    sigma2 = noise_var(lam)
    if penalty is None and sigma2 / lam < tau_min**2:
        lam, sigma2 = _floor_prior(noise_var, sigma2, tau_min)
        rule += f", prior sd floored at {tau_min:g}"
    beta = solve(lam)
    return beta, sigma2 * hoods.inverse_diagonal(np.full(p, lam)), lam, sigma2, rule
