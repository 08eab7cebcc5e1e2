"""The simulator's metrics: ranks, Spearman's rho, precision at k, bottom detection, the ceiling."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from lesson_credit.core.model import beta as beta_mod

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

TOP_N = 10
BOTTOM_SHARE = 0.10


def average_ranks(values: FloatArray) -> FloatArray:
    """1-based ranks, ties sharing the average of their positions (like scipy.stats.rankdata)."""
    x = np.asarray(values, dtype=np.float64)
    n = len(x)
    if n == 0:
        return np.zeros(0)
    order = np.argsort(x, kind="stable")
    sorted_x = x[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    ends = np.r_[starts[1:], n]
    group_rank = (starts + ends + 1) / 2.0  # mean of positions start+1 .. end
    ranks = np.empty(n)
    ranks[order] = np.repeat(group_rank, ends - starts)
    return ranks


def spearman(estimate: FloatArray, truth: FloatArray) -> float:
    """Spearman's rho (Pearson correlation of average ranks); NaN when either side is constant."""
    a = average_ranks(np.asarray(estimate, dtype=np.float64))
    b = average_ranks(np.asarray(truth, dtype=np.float64))
    if len(a) < 2:
        return math.nan
    a = a - a.mean()
    b = b - b.mean()
    denominator = math.sqrt(float((a * a).sum()) * float((b * b).sum()))
    if denominator == 0:
        return math.nan
    return float((a * b).sum()) / denominator


def precision_at_k(estimate: FloatArray, relevant: BoolArray, k: int = TOP_N) -> float:
    """Share of the k highest estimates (ties broken by position) whose item is marked relevant."""
    estimate = np.asarray(estimate, dtype=np.float64)
    n = min(k, len(estimate))
    if n == 0:
        return math.nan
    top = beta_mod.top_k(estimate, n)
    return float(np.asarray(relevant, dtype=bool)[top].mean())


def bottom_detection(estimate: FloatArray, flagged: BoolArray, share: float = BOTTOM_SHARE) -> float:
    """Share of the flagged items that land in the bottom `share` (at least one item) of the estimate."""
    estimate = np.asarray(estimate, dtype=np.float64)
    flagged = np.asarray(flagged, dtype=bool)
    if not flagged.any():
        return math.nan
    n_bottom = max(1, math.ceil(share * len(estimate) - 1e-9))
    bottom = beta_mod.top_k(-estimate, n_bottom)
    return float(flagged[bottom].sum() / flagged.sum())


def ceiling_spearman(value: FloatArray, rng: np.random.Generator) -> float:
    """Spearman of the best achievable estimate: non-null lessons in true order, nulls in random order."""
    value = np.asarray(value, dtype=np.float64)
    nonzero = np.abs(value[value != 0])
    eps = 0.5 * float(nonzero.min()) if len(nonzero) else 1.0
    estimate = np.where(value != 0, value, rng.uniform(-eps, eps, len(value)))
    return spearman(estimate, value)


def nanmean(values: Sequence[float]) -> float:
    finite = [v for v in values if math.isfinite(v)]
    return float(np.mean(finite)) if finite else math.nan
