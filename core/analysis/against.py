"""A lesson against its draw's average: the contrast the log identifies, its estimate and its variance.

The lessons of a draw S (core/analysis/draws.py) are seen only against each other: their summed injections
(a group's column counting its members, s_j lessons) are null, so b + t s (s the columns' sizes on S) fits as
well as b for every t, and the fit pins t with its prior (core/analysis/claims.py `_common_prior`). What the
log identifies of column j is its effect against the average lesson of S::

    c_j' b = b_j - s_j m,    m = sum_{k in S} b_k / sum_{k in S} s_k

(m: the draw's average effect per lesson, each lesson counted once, a group's column shared by its members;
c_j = e_j - s_j w, w_k = 1 / sum s on S; c_j' s = s_j - s_j = 0, so c_j' b does not move with t). The row says
it is that contrast, so its estimate is c_j' u (u the fit's coefficients) and its variance c_j' V c_j, V the
fit's covariance: the sandwich M G M and the model's sigma_u^2 M (core/analysis/robust.py), M = (A + L)^-1 with
the pins. The coefficient's own variance V_jj also holds the prior's uncertainty about the pinned m
(s_j^2 prior sd^2 / |S| with every column of S alike): an interval of b_j under the prior, 4-8 times wider than
the contrast's with 10 lessons drawn 3 a session (up to 20 times with two draws), where the contrast is what it
names.

Small libraries (`dense`) compute it exactly (M W and M G M W, W the draws' weights: two products). Large ones
read it on the column's neighbourhood (core/analysis/neighbourhoods.py), as its variance: c_j restricted to the
neighbourhood N, c_N' (A_NN + L_NN + pins on N)^-1 c_N, exact when the draw lies inside N (a draw of a few
lessons: the pin's part then taken out exactly) and the neighbourhood estimate of the column's own variance when
the draw is far larger than N (its rest far from j: m weighs each of its lessons by 1 / |S|); the sandwich scaled
from it as the column's own (`robust`). The column's share of A M's trace and of each session's leverage is
[A_NN M_NN]_jj there, as every column's (`Neighbourhoods.inverse_and_shares`: the direction the data do not see
adds nothing to either)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from lesson_credit.core.analysis.neighbourhoods import Neighbourhoods

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def weights(sets: Sequence[BoolArray], sizes: FloatArray) -> FloatArray:
    """The draws' averaging weights, one column per draw (p x draws): w_k = 1 / (its lessons) on its columns."""
    out = np.zeros((len(sizes), len(sets)))
    for k, chosen in enumerate(sets):
        out[chosen, k] = 1.0 / max(float(sizes[chosen].sum()), 1e-300)
    return out


def offsets(coef: FloatArray, w: FloatArray, sizes: FloatArray) -> FloatArray:
    """Per column: s_j m, the draw's average effect per lesson (m = w' coef) times its lessons; 0 outside draws."""
    member = w > 0
    return np.asarray((member * sizes[:, None]) @ (w.T @ coef), dtype=np.float64)


def dense_contrasts(
    m: FloatArray, g: FloatArray, diagonals: tuple[FloatArray, FloatArray], w: FloatArray, sizes: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """(c_j' M c_j, c_j' M G M c_j) per column of a draw (nan elsewhere), exactly: c_j' M c_j = M_jj - 2 s_j (M w)_j
    + s_j^2 w' M w, and so with M G M (`diagonals`: M's and M G M's)."""
    mw = m @ w
    mgmw = m @ (g @ mw)
    member = w > 0
    inner, sandwich = np.full(len(sizes), np.nan), np.full(len(sizes), np.nan)
    for k in range(w.shape[1]):
        at = np.flatnonzero(member[:, k])
        s = sizes[at]
        inner[at] = diagonals[0][at] - 2.0 * s * mw[at, k] + s * s * float(w[:, k] @ mw[:, k])
        sandwich[at] = diagonals[1][at] - 2.0 * s * mgmw[at, k] + s * s * float(w[:, k] @ mgmw[:, k])
    return inner, sandwich


def neighbourhood_contrasts(
    hoods: Neighbourhoods, penalty: FloatArray, pins: FloatArray, w: FloatArray, sizes: FloatArray
) -> FloatArray:
    """c_N' (A_NN + L_NN + pins on N)^-1 c_N per column of a draw (nan elsewhere): `pins`, the fit's rank-one
    penalties as columns sqrt(c) u (p x pins); c_N = e_j - s_j w on j's neighbourhood."""
    member = w > 0
    draw_of = np.where(member.any(axis=1), np.argmax(member, axis=1), -1)
    columns = np.flatnonzero(draw_of >= 0)
    index = hoods.index[columns]
    valid = index >= 0
    c = -sizes[columns][:, None] * np.where(valid, w[np.where(valid, index, 0), draw_of[columns][:, None]], 0.0)
    c[:, 0] += 1.0
    out = np.full(len(sizes), np.nan)
    out[columns] = hoods.quadratic_forms(columns, c, penalty, pins)
    return out
