"""Unshrunk effects with heteroscedasticity-robust intervals, for the lessons the data identify.

The ranking estimate (`core.analysis.joint`) shrinks every lesson toward zero by a common prior:
right on average over lessons, but a lesson that *does* have an effect is pulled toward zero and
its interval misses the truth more often than it says. Here, on the **injection** design (x_ij =
1 when lesson j was injected in session i: the decision, made before the session, so a journal
that echoes a good outcome in more keywords cannot feed back into it), each identified column is
left unpenalised and the others keep the empirical-Bayes prior (their effects act as correlated
noise, not as zero)::

    u = (A + L)^-1 X~'y~,   L_jj = eps (identified) or lambda0 (the rest),   r = y~ - X~ u

and its variance is the sandwich with HC2 weights (each session's squared residual over 1 - its
leverage), so rewards whose spread differs between sessions (binary rewards, categories with
different noise) get intervals of the right width::

    V = M X~' diag(r_i^2 / (1 - h_i)) X~ M,   M = (A + L)^-1,   h_i = x~_i' M x~_i + z_i'(Z'Z)^+ z_i

Small libraries (`dense`) compute M, h and V exactly. Large ones use conjugate gradients for u
and, for V, each lesson's neighbourhood (`neighbourhoods`): V_jj ~ M_jj sum_i x~_ij^2 d_i / A_jj
(exact when the lesson is uncorrelated with the rest or the noise is equal), h_i ~ sum_j x~_ij^2 t_j / A_jj and
trace(A M) ~ sum_j t_j, t_j = (A M)_jj on the neighbourhood (A_jj M_jj when the lesson is uncorrelated with the
rest; summed over sessions, a lesson's part of h_i is t_j, as the exact h_i sum to the trace).
Intervals use Student's t with the lesson's effective number of sessions
df_j = (sum_i x~_ij^2)^2 / sum_i x~_ij^4 (about min(with, without)): a variance read off ten
sessions is itself uncertain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.against import dense_contrasts, neighbourhood_contrasts, offsets, weights
from lesson_credit.core.analysis.joint import NOISE_MIN
from lesson_credit.core.analysis.joint_ops import Centred, conjugate_gradients
from lesson_credit.core.analysis.neighbourhoods import Neighbourhoods, neighbourhoods
from lesson_credit.core.base.memory import scipy_linalg

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MAX_LEVERAGE = 0.99  # a session that alone determines a coefficient still counts at 1 / (1 - 0.99)
CHUNK = 4096  # sessions per block when products with n rows are formed densely


@dataclass(frozen=True)
class RobustFit:
    """Per column: the unshrunk estimate, its robust variance and degrees of freedom."""

    coef: FloatArray
    var: FloatArray  # sandwich (HC2)
    model_var: FloatArray  # sigma_u^2 M_jj: the variance if every session had the same noise
    df: FloatArray
    inverse_diag: FloatArray  # M_jj
    gram_diag: FloatArray  # A_jj
    residual: FloatArray  # r (n,)
    weight: FloatArray  # r_i^2 / (1 - h_i) (n,)
    noise_var: float  # sigma_u^2 = |r|^2 / (n' - trace(A M))
    dense: bool
    # per column, what its estimate takes from `coef`: a drawn lesson's draw's average (core/analysis/against.py,
    # whose contrast its variances then are); None: nothing
    offset: FloatArray | None = None

    @property
    def estimate(self) -> FloatArray:
        """Each column's estimate: its coefficient, a drawn lesson's against its draw's average (`offset`)."""
        return self.coef if self.offset is None else self.coef - self.offset


def effective_df(op: Centred) -> FloatArray:
    """(sum_i x~_ij^2)^2 / sum_i x~_ij^4 per column (x~ = x minus its baseline mean)."""
    x2, x4 = op.centred_sums(None, 2), op.centred_sums(None, 4)
    with np.errstate(divide="ignore", invalid="ignore"):
        result: FloatArray = np.where(x4 > 0, x2 * x2 / x4, 0.0)
    return result


def fit_robust(
    op: Centred,
    y: FloatArray,
    penalty: FloatArray,
    *,
    dense: bool,
    hoods: Neighbourhoods | None = None,
    common: Sequence[tuple[FloatArray, float]] = (),
    against: Sequence[npt.NDArray[np.bool_]] = (),
    sizes: FloatArray | None = None,
) -> RobustFit:
    """The fit of centred rewards `y` with the diagonal `penalty` plus, per (u, c) of `common`, the
    rank-one penalty c u u' (a prior on the mean of the columns u spans, one per draw; see `claims`). `against`:
    the draws whose columns are read against their average (`_against_average`; `sizes`: each column's
    lessons)."""
    b = np.asarray(op.xt @ y, dtype=np.float64)
    diag = op.gram_diag()
    n_eff = op.n - op.rank
    us = np.column_stack([u for u, _ in common]) if common else np.zeros((op.p, 0))
    cs = np.array([c for _, c in common], dtype=np.float64)
    sizes = sizes if sizes is not None else np.ones(op.p)
    if dense:
        linalg = scipy_linalg("the robust fit")

        a = op.gram_dense() + np.diag(penalty) + (us * cs) @ us.T
        m = linalg.cho_solve(linalg.cho_factor(a, check_finite=False), np.eye(op.p), check_finite=False)
        m = (m + m.T) / 2.0
        coef = m @ b
        inv_diag = np.diag(m).copy()
        r = y - op.apply(coef)
        h = _leverage_dense(op, m)
        trace = float(np.sum(op.gram_dense() * m))
    else:
        hoods = hoods if hoods is not None else neighbourhoods(op)
        coef, _ = conjugate_gradients(
            lambda v: op.gram_apply(v) + penalty * v + us @ (cs * (us.T @ v)), b, hoods.preconditioner(penalty)
        )
        pins = us * np.sqrt(cs)[None, :]
        inv_diag, share = hoods.inverse_and_shares(penalty, pins)  # (each pin on the neighbourhood)
        if against:  # a drawn lesson's contrast
            inner = neighbourhood_contrasts(hoods, penalty, pins, weights(against, sizes), sizes)
            inv_diag = np.where(np.isfinite(inner), np.maximum(inner, 0.0), inv_diag)
        r = y - op.apply(coef)
        # each column's share of A M's trace (`inverse_and_shares`), not A_jj M_jj: what M_jj holds beyond the data
        # (a direction only the prior sees, a tie's or a draw's; the variance correlated columns add) is no degree of
        # freedom used, nor any session's leverage (a column's part of the h_i summed over sessions: its share)
        share = np.maximum(share, 0.0)
        h = _leverage_diagonal(op, np.divide(share, diag, out=np.zeros_like(share), where=diag > 0))
        trace = float(np.sum(share))
    h = np.clip(h + _baseline_leverage(op), 0.0, MAX_LEVERAGE)
    d = r * r / (1.0 - h)
    noise = max(float(r @ r) / max(n_eff - trace, 1.0), NOISE_MIN**2)  # equal grades prove no lack of noise
    if dense:
        g = op.weighted_gram_dense(d)
        var = np.sum((m @ g) * m, axis=1)  # diag(M G M), M symmetric (one BLAS product: einsum's three-way loop
        # took seconds beyond a few hundred columns)
    else:
        var = inv_diag * op.centred_sums(d, 2) / np.maximum(diag, 1e-300)
    df = np.minimum(effective_df(op), max(n_eff - trace, 1.0))
    fit = RobustFit(coef, np.maximum(var, 0.0), noise * inv_diag, df, inv_diag, diag, r, d, noise, dense)
    return _against_average(fit, against, sizes, (m, g) if dense else None) if against else fit


def _against_average(
    fit: RobustFit,
    sets: Sequence[npt.NDArray[np.bool_]],
    sizes: FloatArray,
    dense: tuple[FloatArray, FloatArray] | None,
) -> RobustFit:
    """`fit` with each column of `sets` (the draws whose mean the prior holds) read as its contrast against its
    draw's average (core/analysis/against.py): `offset` s_j m, and, of a dense fit (`dense`: its M and G), its
    variances (robust, model, M's diagonal) c_j's (an iterative fit read them on the neighbourhoods as c_j's)."""
    w = weights(sets, sizes)
    offset = offsets(fit.coef, w, sizes)
    if dense is None:
        return replace(fit, offset=offset)
    inner, sandwich = dense_contrasts(*dense, (fit.inverse_diag, fit.var), w, sizes)
    drawn = np.isfinite(inner)
    return replace(
        fit,
        var=np.where(drawn, np.maximum(sandwich, 0.0), fit.var),
        model_var=np.where(drawn, fit.noise_var * np.maximum(inner, 0.0), fit.model_var),
        inverse_diag=np.where(drawn, np.maximum(inner, 0.0), fit.inverse_diag),
        offset=offset,
    )


def _baseline_leverage(op: Centred) -> FloatArray:
    """z_i' (Z'Z)^+ z_i: the baselines' share of each session's leverage (1 / its category's size), once per
    baseline group (its sessions share their row of Z; sessions x baselines dense was 1 s at 100k x 1,000 with
    the baseline's steps)."""
    first = np.zeros(len(op.group_size), dtype=np.int64)
    first[op.group[::-1]] = np.arange(op.n)[::-1]  # a session of each group
    zf = op.z[first]
    per_group = np.asarray(zf.multiply(np.asarray(zf @ op.ginv)).sum(axis=1)).ravel()
    result: FloatArray = per_group[op.group]
    return result


def _leverage_dense(op: Centred, m: FloatArray) -> FloatArray:
    """h_i = x~_i' M x~_i exactly, in blocks of sessions: with x~_i = x_i - g (g its baseline group's means, M
    symmetric), x_i' M x_i - 2 x_i' M g + g' M g, the sparse x_i's products with M alone (a dense x~ times M cost
    sessions x columns^2: seconds beyond a few hundred columns)."""
    mg = op.group_means @ m  # (groups x columns: M g per group)
    per_group = np.sum(mg * op.group_means, axis=1)  # g' M g
    out = np.empty(op.n)
    for lo in range(0, op.n, CHUNK):
        hi = min(lo + CHUNK, op.n)
        x, group = op.x[lo:hi], op.group[lo:hi]
        own = np.asarray(x.multiply(x @ m).sum(axis=1)).ravel()
        cross = np.asarray(x.multiply(mg[group]).sum(axis=1)).ravel()
        out[lo:hi] = own - 2.0 * cross + per_group[group]
    return out


def _leverage_diagonal(op: Centred, inv_diag: FloatArray) -> FloatArray:
    """h_i ~ sum_j x~_ij^2 M_jj (M's off-diagonal left out)."""
    rows, cols, vals, t = op.entries()
    base = (op.group_means**2) @ inv_diag  # per baseline group: every column at its mean
    extra = np.bincount(rows, weights=((vals - t) ** 2 - t**2) * inv_diag[cols], minlength=op.n)
    result: FloatArray = base[op.group] + extra
    return result
