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
    m0) when it splits them perfectly) below ALPHA; a step leaves a session or more of its group on each side. Per
    lesson varying in a group of 4 sessions or more, its best single split (k injections among m at random, c among
    the first m0: the smaller hypergeometric tail, over every m0) times 2 (m - 1) below ALPHA over the number of such
    pairs of the block. Per lesson and category, its first injection (not at a block's start) against the log up to
    its block's end (`new_lesson_steps`)."""
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
            out |= split_steps(
                x, idx, c, sum(1 for g in groups for j in range(p) if len(g) >= 4 and 0 < x[g, j].sum() < len(g))
            )
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
    return out | new_lesson_steps(x, category, blocks)


def split_steps(x: np.ndarray, idx: np.ndarray, c: int, pairs: int) -> set[tuple[int, int]]:
    """The best single split of each lesson's 0/1 sequence in the group `idx` (category c), told over every moment."""
    out: set[tuple[int, int]] = set()
    m = len(idx)
    if m < 4:
        return out
    for j in range(x.shape[1]):
        v = x[idx, j].astype(int)
        k = int(v.sum())
        if k == 0 or k == m:
            continue
        tails = []
        for m0 in range(1, m):
            got = int(v[:m0].sum())
            tails.append((min(stats.hypergeom.cdf(got, m, k, m0), stats.hypergeom.sf(got - 1, m, k, m0)), m0))
        tail, m0 = min(tails)
        if 2 * (m - 1) * tail < ALPHA / pairs:
            out.add((c, int(idx[m0])))
    return out


def new_lesson_steps(x: np.ndarray, category: np.ndarray, blocks: np.ndarray) -> set[tuple[int, int]]:
    """Each lesson's first injection in each category, when not at its block's start: the run of its category's
    sessions before it, against its category's sessions from the log's start to its block's end (m) and its
    injections among them (k), chance C(m - L, k) / C(m, k) below ALPHA over the number of such candidates."""
    found = []
    for c in np.unique(category).tolist():
        for j in range(x.shape[1]):
            on = np.flatnonzero(x[:, j] & (category == c))
            if not len(on):
                continue
            first = int(on[0])
            if first == int(np.flatnonzero(blocks == blocks[first])[0]):
                continue
            end = int(np.flatnonzero(blocks == blocks[first])[-1]) + 1
            m = int((category[:end] == c).sum())
            k = int((on < end).sum())
            lead = int((category[:first] == c).sum())
            found.append((c, first, math.comb(m - lead, k) / math.comb(m, k)))
    return {(c, first) for c, first, chance in found if chance < ALPHA / len(found)}


def step_dummies(steps: set[tuple[int, int]], category: np.ndarray) -> np.ndarray:
    """One column per step (sorted): 1 in its category's sessions from its session to the end."""
    i = np.arange(len(category))
    columns = [((i >= t) & (category == c)).astype(float) for c, t in sorted(steps)]
    return np.stack(columns, axis=1) if columns else np.zeros((len(category), 0))
