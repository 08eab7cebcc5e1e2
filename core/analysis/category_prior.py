"""The prior variance of each (lesson, category) cell's deviation u_jc, for `core.analysis.joint_posterior`.

Each cell's partial estimate (the least-squares deviation of its lesson in its category, every other
cell held) has variance tau_j^2 + s2 under u_jc ~ N(0, tau_j^2), s2 its noise variance. One tau for
every cell let the many cells of lessons that do not differ by category pull it to 0 and shrink away
the one lesson that does. So the lessons are first tested as `loo` tests them (`core.analysis.claims`,
"By category"): Cochran's Q over each lesson's cells, flagged when its p-value is below `FLAG_P` and,
Benjamini-Hochberg adjusted over the lessons, below `FLAG_FDR`. A flagged lesson's cells get their own
tau_j^2 (the weighted moments over its cells, at least the others'); every other cell shares one tau^2,
the moments over them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.stats import FLAG_FDR, FLAG_P, benjamini_hochberg

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def differing(partial: FloatArray, s2: FloatArray, lesson: IntArray, n_lessons: int) -> BoolArray:
    """Per lesson: its cells' estimates differ beyond their noise (Cochran's Q, `loo`'s flag)."""
    from scipy.special import chdtrc

    w = 1.0 / s2
    total = np.bincount(lesson, weights=w, minlength=n_lessons)
    mean = np.bincount(lesson, weights=w * partial, minlength=n_lessons) / np.where(total > 0, total, 1.0)
    q = np.bincount(lesson, weights=w * (partial - mean[lesson]) ** 2, minlength=n_lessons)
    count = np.bincount(lesson, minlength=n_lessons)
    p: list[float | None] = [float(chdtrc(k - 1, q[j])) if k >= 2 else None for j, k in enumerate(count.tolist())]
    adjusted = benjamini_hochberg(p)
    return np.array(
        [
            raw is not None and bh is not None and raw < FLAG_P and bh < FLAG_FDR
            for raw, bh in zip(p, adjusted, strict=True)
        ],
        dtype=bool,
    )


def cell_variances(
    partial: FloatArray, s2: FloatArray, lesson: IntArray, flagged: BoolArray, start: FloatArray
) -> FloatArray:
    """tau^2 of each cell (as `partial`): its lesson's own when `flagged` (at least the others'), else
    the one the unflagged cells share; `start`: last round's, per cell."""
    n = len(flagged)
    group = np.where(flagged[lesson], lesson, n)  # a flagged lesson's cells, or the unflagged ones (n)
    tau2 = moments(partial, s2, group, start, n + 1)
    out: FloatArray = np.maximum(tau2[group], tau2[n])
    return out


def moments(ubar: FloatArray, s2: FloatArray, group: IntArray, start: FloatArray, size: int) -> FloatArray:
    """tau^2 of each group of cells (`group`: 0..n), by weighted moments (E[ubar^2] = tau^2 + s2, weights
    1 / (tau^2 + s2)^2) from `start` (per cell), to its fixed point."""
    tau2 = np.zeros(size)
    np.maximum.at(tau2, group, start)
    for _ in range(MOMENT_ROUNDS):
        weight = 1.0 / (tau2[group] + s2) ** 2
        total = np.bincount(group, weights=weight, minlength=size)
        sums = np.bincount(group, weights=weight * (ubar**2 - s2), minlength=size)
        new = np.maximum(0.0, sums / np.where(total > 0, total, 1.0))
        done = bool(np.all(np.abs(new - tau2) <= 1e-15 + 1e-12 * tau2))
        tau2 = new
        if done:
            break
    return tau2


MOMENT_ROUNDS = 500


def extrapolated(history: list[FloatArray]) -> FloatArray:
    """The variances' fixed point from three rounds that approach it at one rate (Aitken's delta-squared,
    per cell where they do: the rounds converge linearly, at 0.57 a round with every lesson flagged)."""
    before, last = history[1] - history[0], history[2] - history[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(before != 0, last / before, 0.0)
    steady = (rate > 0) & (rate < 0.9)
    return np.where(steady, np.maximum(history[2] + last * rate / (1 - np.where(steady, rate, 0.0)), 0.0), history[2])
