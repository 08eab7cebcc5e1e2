"""Small statistics shared by the analysis modules."""

from __future__ import annotations

import math
from collections.abc import Sequence

FLAG_FDR = 0.2  # `loo` flags a lesson (drifting, differs by category) when its test's BH-adjusted p is below this
FLAG_P = 0.05  # and its raw p-value below this (in a library of three lessons, BH alone flags at p = 0.067)


def benjamini_hochberg(p_values: Sequence[float | None]) -> list[float | None]:
    """BH-adjusted p-values (step-up, monotone), None where the raw p is None."""
    indexed = [(p, i) for i, p in enumerate(p_values) if p is not None and not math.isnan(p)]
    out: list[float | None] = [None] * len(p_values)
    m = len(indexed)
    if not m:
        return out
    indexed.sort()
    running = 1.0
    for rank in range(m, 0, -1):
        p, i = indexed[rank - 1]
        running = min(running, p * m / rank)
        out[i] = min(1.0, running)
    return out
