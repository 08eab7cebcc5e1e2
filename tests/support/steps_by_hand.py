"""The baseline's steps (core/analysis/steps.py) told again with loops and exact binomial coefficients, for tests
to compare the fits against least squares with those step dummies."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from lesson_credit.core.analysis.joint import block_codes, time_blocks

ALPHA = 1e-3


def steps_by_hand(x: np.ndarray, category: np.ndarray) -> set[tuple[int, int]]:
    """(category, first session after the step) of every step the rule puts in, told block by block and group by
    group with loops: per lesson varying in a group (k of its m sessions) the runs before its first injection, after
    its last, before its first absence and after its last absence, of chance C(m - L, k) / C(m, k) without it and
    C(m - L, k - L) / C(m, k) with it, below ALPHA over the number of (lesson, group) pairs of the block where the
    lesson varies; per group the best single step in the lessons a session injects, its F-test times m - 1 (2 / C(m,
    m0) when it splits them perfectly) below ALPHA; a step leaves a session or more of its group on each side."""
    n, p = x.shape
    blocks = block_codes(n, time_blocks(n))
    out = set()
    for b in range(int(blocks.max()) + 1):
        groups = [np.flatnonzero((blocks == b) & (category == c)) for c in np.unique(category).tolist()]
        varying = sum(1 for idx in groups for j in range(p) if 0 < x[idx, j].sum() < len(idx))
        for c, idx in zip(np.unique(category).tolist(), groups, strict=True):
            m = len(idx)
            for j in range(p):
                v = x[idx, j].tolist()
                k = sum(v)
                if k == 0 or k == m:
                    continue
                before, after = v.index(True), v[::-1].index(True)
                lead, trail = v.index(False), v[::-1].index(False)
                runs = ((before, 0, before), (after, 0, m - after), (lead, 1, lead), (trail, 1, m - trail))
                for run, with_it, at in runs:
                    chance = math.comb(m - run, k - run * with_it) / math.comb(m, k)
                    if run and chance < ALPHA / varying and 1 <= at <= m - 1:
                        out.add((c, int(idx[at])))
            size = x[idx].sum(axis=1).astype(float)
            if m < 4 or size.var() == 0:
                continue
            best = max(range(1, m), key=lambda s: (size[:s].mean() - size[s:].mean()) ** 2 * s * (m - s) / m)
            taken = (size[:best].mean() - size[best:].mean()) ** 2 * best * (m - best) / m
            rest = ((size - size.mean()) ** 2).sum() - taken
            if rest > 1e-9:
                chance = (m - 1) * stats.f.sf(taken / (rest / (m - 2)), 1, m - 2)
            else:
                chance = 2 / math.comb(m, best)
            if chance < ALPHA:
                out.add((c, int(idx[best])))
    return out


def step_dummies(steps: set[tuple[int, int]], category: np.ndarray) -> np.ndarray:
    """One column per step (sorted): 1 in its category's sessions from its session to the end."""
    i = np.arange(len(category))
    columns = [((i >= t) & (category == c)).astype(float) for c, t in sorted(steps)]
    return np.stack(columns, axis=1) if columns else np.zeros((len(category), 0))
