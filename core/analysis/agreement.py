"""How far reward sources agree with people (docs/records.md): n, mean absolute difference, Pearson, Spearman and
Cohen's kappa at a threshold, over the sessions both sources scored.

Kappa binarizes both scores at `threshold` (a score >= threshold is positive); the person is the
reference, so `fp` counts sessions the other source calls positive and the person does not.
A statistic that is undefined on the data (fewer than two sessions, no spread, chance agreement
of one) is None rather than a number that would mislead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

DEFAULT_THRESHOLD = 0.5
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Confusion:
    tp: int  # both positive
    fp: int  # the person negative, the other source positive
    fn: int  # the person positive, the other source negative
    tn: int  # both negative

    def as_json(self) -> dict[str, int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}


@dataclass(frozen=True)
class Agreement:
    source_a: str  # the person (or the first of two people)
    source_b: str
    n: int
    mae: float | None
    pearson: float | None
    spearman: float | None
    kappa: float | None
    threshold: float
    confusion: Confusion
    a: FloatArray = field(repr=False, compare=False)  # the scores compared, session by session
    b: FloatArray = field(repr=False, compare=False)
    sessions: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def as_json(self) -> dict[str, Any]:
        """Exactly the pair object of docs/records.md."""
        return {
            "source_a": self.source_a,
            "source_b": self.source_b,
            "n": self.n,
            "mae": self.mae,
            "pearson": self.pearson,
            "spearman": self.spearman,
            "kappa": self.kappa,
            "threshold": self.threshold,
            "confusion": self.confusion.as_json(),
        }


def pearson(a: FloatArray, b: FloatArray) -> float | None:
    """Pearson's r; None for fewer than three sessions (two points lie on a line: r is +-1 whatever
    they are) or no spread."""
    if len(a) < 3:
        return None
    da, db = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float(np.dot(da, da)) * float(np.dot(db, db)))
    if denominator == 0.0:
        return None
    return max(-1.0, min(1.0, float(np.dot(da, db)) / denominator))


def average_ranks(values: FloatArray) -> FloatArray:
    """1-based ranks, ties sharing the mean of the ranks they span (as Spearman's rho needs)."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    sorted_values = values[order]
    start = 0
    while start < len(values):
        stop = start + 1
        while stop < len(values) and sorted_values[stop] == sorted_values[start]:
            stop += 1
        ranks[order[start:stop]] = (start + 1 + stop) / 2.0  # mean of ranks start+1 .. stop
        start = stop
    return ranks


def kappa(confusion: Confusion) -> float | None:
    """Cohen's kappa: (observed - chance agreement) / (1 - chance agreement); None for fewer than
    two sessions (one disagreement gave 0.0, as if it measured something) or chance agreement of one."""
    c = confusion
    n = c.tp + c.fp + c.fn + c.tn
    if n < 2:
        return None
    observed = (c.tp + c.tn) / n
    chance = ((c.tp + c.fp) * (c.tp + c.fn) + (c.fn + c.tn) * (c.fp + c.tn)) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def agreement(
    source_a: str,
    source_b: str,
    a: FloatArray,
    b: FloatArray,
    threshold: float = DEFAULT_THRESHOLD,
    sessions: Sequence[str] = (),
) -> Agreement:
    """Agreement of two sources over the sessions where both have a score (NaN elsewhere)."""
    both = ~np.isnan(a) & ~np.isnan(b)
    a, b = np.asarray(a[both], dtype=np.float64), np.asarray(b[both], dtype=np.float64)
    kept = tuple(s for s, keep in zip(sessions, both.tolist(), strict=False) if keep) if len(sessions) else ()
    pa, pb = a >= threshold, b >= threshold
    confusion = Confusion(
        tp=int(np.count_nonzero(pa & pb)),
        fp=int(np.count_nonzero(~pa & pb)),
        fn=int(np.count_nonzero(pa & ~pb)),
        tn=int(np.count_nonzero(~pa & ~pb)),
    )
    return Agreement(
        source_a=source_a,
        source_b=source_b,
        n=len(a),
        mae=float(np.mean(np.abs(a - b))) if len(a) else None,
        pearson=pearson(a, b),
        spearman=pearson(average_ranks(a), average_ranks(b)) if len(a) else None,
        kappa=kappa(confusion),
        threshold=threshold,
        confusion=confusion,
        a=a,
        b=b,
        sessions=kept,
    )
