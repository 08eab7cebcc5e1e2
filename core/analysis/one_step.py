"""One-step estimates of a column's effect within part of its sessions (core/analysis/claims.py): its earlier and
later half, the windows of the over-time view (core/analysis/over_time.py), each category; their intervals
(`Interval`, Student-t with the cell's degrees of freedom) and the tests across them (drift, Cochran's Q).

The one-step estimate in a cell is the column's coefficient plus the least-squares slope of the full fit's
residuals on its centred injection within the cell (the other lessons held at their fitted effects); its variance
is the fit's sandwich restricted to the cell. Its sessions with and without the column are counted in the
baseline groups where the column's injection varies within the cell (only they enter the estimate); a cell with
fewer than `MIN_CELL` of either shows none. A lesson's first sessions set apart (`core.analysis.early`, a column of
their own: `apart`) are neither sessions with it nor without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.joint import Design
from lesson_credit.core.analysis.joint_ops import Centred
from lesson_credit.core.analysis.robust import RobustFit

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

MIN_CELL = 5  # sessions with and without a lesson in a cell (groups where it varies) before its estimate shows
LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """An unshrunk estimate with its robust standard error and Student-t degrees of freedom."""

    estimate: float
    se: float
    df: float
    n_with: int
    n_without: int

    def bounds(self, level: float = LEVEL) -> tuple[float, float]:
        from scipy.special import stdtrit

        half = float(stdtrit(max(self.df, 1.0), 0.5 + level / 2.0)) * self.se
        return self.estimate - half, self.estimate + half

    @property
    def p_value(self) -> float:
        from scipy.special import stdtr

        if self.se <= 0:
            return 0.0 if self.estimate != 0 else 1.0
        return float(2.0 * stdtr(max(self.df, 1.0), -abs(self.estimate) / self.se))

    def as_json(self, level: float = LEVEL) -> dict[str, Any]:
        low, high = self.bounds(level)
        return {
            "estimate": self.estimate,
            "ci_low": low,
            "ci_high": high,
            "se": self.se,
            "df": self.df,
            "n_with": self.n_with,
            "n_without": self.n_without,
        }


def drift_p(early: Interval | None, late: Interval | None) -> float | None:
    from scipy.special import ndtr

    if early is None or late is None:
        return None
    se = math.hypot(early.se, late.se)
    if se <= 0:
        return None
    return float(2.0 * ndtr(-abs(late.estimate - early.estimate) / se))


def heterogeneity_p(cells: tuple[tuple[str, Interval], ...]) -> float | None:
    """Cochran's Q over the categories' estimates (chi-square with cells - 1 degrees of freedom)."""
    from scipy.special import chdtrc

    usable = [cell for _, cell in cells if cell.se > 0]
    if len(usable) < 2:
        return None
    w = np.array([1.0 / c.se**2 for c in usable])
    b = np.array([c.estimate for c in usable])
    mean = float((w * b).sum() / w.sum())
    q = float((w * (b - mean) ** 2).sum())
    return float(chdtrc(len(usable) - 1, q))


Sums = tuple[FloatArray, FloatArray, FloatArray]  # sessions, sum of r, sum of d per (cell, baseline group)
Apart = tuple[IntArray, IntArray]  # per column: its sessions set apart's column; per nonzero: its cell for its owner


def _one_step(
    op: Centred, fit: RobustFit, cell: IntArray, n_cells: int, sums: Sums, apart: Apart | None = None
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    """Per (column, cell): the one-step estimate, its variance, sessions with and without.

    `cell` labels each nonzero of the design (its session's cell for that column); `sums` holds every
    session's counts per (cell, baseline group), arrays (n_cells, groups), or (columns, n_cells, groups)
    when the cells differ between columns. Only the (column, cell, group) triples with an injection
    are formed: a cell without one adds nothing to any sum. The sessions with and without are those of
    the triples where the injection varies: in the others (a session alone in its group there, or every
    session of the group injected alike) the centred injection is 0, so they add nothing to the estimate
    and are not counted as evidence for it (nor toward `MIN_CELL`). `apart`: per column the column whose sessions
    are not without it (-1: none), and per nonzero its cell for that column's owner (`windows`, `by_category`)."""
    rows, cols, vals, _ = op.entries()
    n_groups = len(op.group_size)
    key = (cols * n_cells + cell) * n_groups + op.group[rows]
    triples, inverse = np.unique(key, return_inverse=True)
    r, d = fit.residual[rows], fit.weight[rows]

    def per_triple(weights: FloatArray) -> FloatArray:
        return np.bincount(inverse, weights=weights, minlength=len(triples)).astype(np.float64)

    sx, sxx, sxr, sxd, sxxd = (per_triple(w) for w in (vals, vals * vals, vals * r, vals * d, vals * vals * d))
    t_col, t_cell, t_group = triples // (n_cells * n_groups), (triples // n_groups) % n_cells, triples % n_groups
    where = (t_col, t_cell, t_group) if sums[0].ndim == 3 else (t_cell, t_group)
    n_all, sr, sd = (part[where] for part in sums)
    xbar = sx / n_all
    pair = t_col * n_cells + t_cell
    size = op.p * n_cells

    def per_pair(values: FloatArray) -> FloatArray:
        return np.bincount(pair, weights=values, minlength=size).astype(np.float64).reshape(op.p, n_cells)

    ss = per_pair(sxx - xbar * sx)
    num = per_pair(sxr - xbar * sr)
    meat = per_pair(sxxd - 2.0 * xbar * sxd + xbar * xbar * sd)
    count = np.bincount(inverse, minlength=len(triples))  # sessions injected in each triple
    low, high = np.full(len(triples), np.inf), np.full(len(triples), -np.inf)
    np.minimum.at(low, inverse, vals)
    np.maximum.at(high, inverse, vals)
    varies = (count < n_all) | (high > low)  # some session without it, or shares that differ
    n_with = per_pair(np.where(varies, count, 0.0))
    n_without = per_pair(np.where(varies, n_all - count - _apart_count(op, apart, triples, n_cells), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        vif = np.maximum(fit.inverse_diag * fit.gram_diag, 1.0)
        estimate = fit.estimate[:, None] + num / ss  # (a drawn lesson's against its draw's average)
        var = vif[:, None] * meat / (ss * ss)
    return estimate, var, n_with, n_without


def _apart_count(op: Centred, apart: Apart | None, triples: IntArray, n_cells: int) -> FloatArray:
    """Per (column, cell, group) triple: the sessions of the column set apart from it (`_one_step`'s `apart`) there."""
    out = np.zeros(len(triples))
    if apart is None or not (apart[0] >= 0).any():
        return out
    first, apart_cell = apart
    owner = np.full(op.p, -1, dtype=np.int64)
    owner[first[first >= 0]] = np.flatnonzero(first >= 0)
    rows, cols, _, _ = op.entries()
    mine = owner[cols] >= 0
    key = (owner[cols[mine]] * n_cells + apart_cell[mine]) * len(op.group_size) + op.group[rows[mine]]
    at = np.minimum(np.searchsorted(triples, key), max(len(triples) - 1, 0))
    found = triples[at] == key if len(triples) else np.zeros(len(key), dtype=bool)
    out += np.bincount(at[found], minlength=len(triples))
    return out


def halves(op: Centred, fit: RobustFit, apart: IntArray | None = None) -> list[tuple[Interval | None, Interval | None]]:
    """Each column's earlier and later half, split at the median of its own injections (`apart`: per column the
    column of its lesson's first sessions set apart, -1 none: neither with it nor without it)."""
    estimate, var, n_with, n_without, _ = windows(op, fit, np.full(op.p, 2, dtype=np.int64), apart)
    return [
        (
            interval_of(estimate[c, 0], var[c, 0], n_with[c, 0], n_without[c, 0]),
            interval_of(estimate[c, 1], var[c, 1], n_with[c, 1], n_without[c, 1]),
        )
        for c in range(op.p)
    ]


def windows(
    op: Centred, fit: RobustFit, n_windows: IntArray, apart: IntArray | None = None
) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, IntArray]:
    """Each column's graded sessions cut, in log order, into `n_windows[c]` windows holding as many of
    its own injections each (up to one): window w ends at its ceil(count * (w + 1) / n_windows)-th
    injection, every session in between (with the column or without) in the window. Per (column,
    window), arrays (columns, max windows): the one-step estimate, its variance, sessions with and
    without; and `ends` (columns, max windows): the design row of each window's last session (n - 1
    for the last window; windows beyond a column's own count are empty). Two windows: the halves. (`apart`: as
    `halves`.)"""
    rows, cols, _, _ = op.entries()
    p, n = op.p, op.n
    xt = op.xt  # X' as CSR: each column's sessions, in log order (no sort of the entries needed)
    xt.sort_indices()
    rows_sorted, starts = xt.indices.astype(np.int64), xt.indptr.astype(np.int64)
    counts = np.diff(starts)
    wanted = np.maximum(np.asarray(n_windows, dtype=np.int64), 1)
    w_max = int(wanted.max(initial=1))
    k = np.arange(1, w_max)  # the end of window k - 1, for k < the column's windows
    last = np.ceil(counts[:, None] * k[None, :] / wanted[:, None]).astype(np.int64) - 1
    valid = (k[None, :] < wanted[:, None]) & (counts[:, None] > 0)
    at = np.minimum(starts[:-1, None] + np.maximum(last, 0), max(len(rows_sorted) - 1, 0))
    bounds = np.where(valid, rows_sorted[at] if len(rows_sorted) else 0, n)  # sessions <= bound: earlier windows
    cell = (bounds[cols] < rows[:, None]).sum(axis=1).astype(np.int64)
    n_groups = len(op.group_size)
    n_all = np.zeros((p, w_max, n_groups))
    sr = np.zeros((p, w_max, n_groups))
    sd = np.zeros((p, w_max, n_groups))
    for g in range(n_groups):
        members = np.flatnonzero(op.group == g)
        upto = np.searchsorted(members, bounds, side="right")  # sessions of the group at or before each bound
        edges = np.concatenate([np.zeros((p, 1), dtype=np.int64), upto, np.full((p, 1), len(members))], axis=1)
        cum_r = np.concatenate([[0.0], np.cumsum(fit.residual[members])])
        cum_d = np.concatenate([[0.0], np.cumsum(fit.weight[members])])
        n_all[:, :, g] = np.diff(edges, axis=1)
        sr[:, :, g] = np.diff(cum_r[edges], axis=1)
        sd[:, :, g] = np.diff(cum_d[edges], axis=1)
    owned = None
    if apart is not None:  # each first session's window among its lesson's later sessions'
        owner = np.full(p, -1, dtype=np.int64)
        owner[apart[apart >= 0]] = np.flatnonzero(apart >= 0)
        owned = (apart, (bounds[np.maximum(owner[cols], 0)] < rows[:, None]).sum(axis=1).astype(np.int64))
    estimate, var, n_with, n_without = _one_step(op, fit, cell, w_max, (n_all, sr, sd), owned)
    ends = np.concatenate([np.minimum(bounds, n - 1), np.full((p, 1), n - 1)], axis=1).astype(np.int64)
    return estimate, var, n_with, n_without, ends


def by_category(
    op: Centred, fit: RobustFit, design: Design, apart: IntArray | None = None
) -> list[tuple[tuple[str, Interval], ...]]:
    """Each column's one-step estimate per category (`apart`: as `halves`)."""
    rows, _, _, _ = op.entries()
    c = design.n_categories
    if c < 2:
        return [() for _ in range(op.p)]
    names = design.category_names if len(design.category_names) == c else tuple(str(i) for i in range(c))
    n_groups = len(op.group_size)
    key = design.category * n_groups + op.group

    def per_cell(weights: FloatArray | None) -> FloatArray:
        return np.bincount(key, weights=weights, minlength=c * n_groups).reshape(c, n_groups).astype(np.float64)

    sums = (per_cell(None), per_cell(fit.residual), per_cell(fit.weight))
    owned = None if apart is None else (apart, design.category[rows])
    estimate, var, n_with, n_without = _one_step(op, fit, design.category[rows], c, sums, owned)
    out = []
    for col in range(op.p):
        cells = []
        for k in range(c):
            interval = interval_of(estimate[col, k], var[col, k], n_with[col, k], n_without[col, k])
            if interval is not None:
                cells.append((names[k], interval))
        out.append(tuple(cells))
    return out


def interval_of(estimate: float, var: float, n_with: float, n_without: float) -> Interval | None:
    """The cell's Interval (df from its sessions with and without), or None below `MIN_CELL` of either."""
    if n_with < MIN_CELL or n_without < MIN_CELL or not (math.isfinite(estimate) and math.isfinite(var)):
        return None
    a, b = float(n_with), float(n_without)
    total = a + b
    share = a / total
    x2 = a * b / total
    x4 = a * (1 - share) ** 4 + b * share**4
    return Interval(float(estimate), math.sqrt(max(float(var), 0.0)), x2 * x2 / x4, int(a), int(b))
