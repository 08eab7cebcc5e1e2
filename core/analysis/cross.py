"""A block of sessions' X'X (the joint fit's products of lessons' weights) added to a running dense sum."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


def add_cross(cross: FloatArray, x: Any) -> None:
    """Add a block's X'X to `cross` (a dense array): per pair of lessons, the sum over the block's sessions in log
    order of the product of their weights, the very sums scipy's sparse product makes, added once to `cross`. Up to
    `PAIRS_DENSE_MAX` lessons from the pairs themselves: a session's lessons come sorted in X's rows, so the pairs
    (i <= j) are the upper triangle, summed in session order (np.add.at) and mirrored, half the products and no
    sparse result to sort and convert (0.14 -> 0.09 s a block of 65,536 sessions of 10 lessons among 1,000)."""
    p = x.shape[1]
    if p > PAIRS_DENSE_MAX or not x.has_canonical_format:
        product = (x.T @ x).tocsr()
        product.sum_duplicates()
        coo = product.tocoo()
        cross[coo.row, coo.col] += coo.data
        return
    size = np.diff(x.indptr)
    block = np.zeros((p + 1) * (p + 1))  # (row and column p: the padding of shorter sessions, dropped)
    lo, n = 0, len(size)
    while lo < n:
        hi = min(n, lo + PAIR_SESSIONS)
        widest = int(size[lo:hi].max())
        while hi - lo > 1 and (hi - lo) * widest * (widest + 1) // 2 > PAIR_BUDGET:
            hi = lo + (hi - lo) // 2
            widest = int(size[lo:hi].max())
        if widest:
            _add_pairs(block, x, lo, hi, widest)
        lo = hi
    upper = block.reshape(p + 1, p + 1)[:p, :p]
    cross += upper
    cross += np.triu(upper, 1).T


PAIRS_DENSE_MAX = 2048  # lessons up to which `_add_cross` sums the pairs itself ((lessons + 1)^2 numbers held)
PAIR_SESSIONS, PAIR_BUDGET = 4096, 1 << 19  # sessions of a block, pairs of lessons, `_add_pairs` adds at a time


def _add_pairs(block: FloatArray, x: Any, lo: int, hi: int, widest: int) -> None:
    """Add to `block` ((p + 1)^2, flat) each pair (i <= j) of lessons of the sessions lo..hi-1 of X (canonical CSR:
    each session's lessons sorted), in session order: the sessions padded to `widest` lessons with lesson p."""
    p = x.shape[1]
    start, stop = int(x.indptr[lo]), int(x.indptr[hi])
    size = np.diff(x.indptr[lo : hi + 1])
    session = np.repeat(np.arange(hi - lo), size)
    slot = np.arange(stop - start) - np.repeat(x.indptr[lo:hi] - start, size)
    lesson = np.full((hi - lo, widest), p, dtype=np.int64)
    lesson[session, slot] = x.indices[start:stop]
    weight = np.zeros((hi - lo, widest))
    weight[session, slot] = x.data[start:stop]
    i, j = np.triu_indices(widest)
    np.add.at(block, (lesson[:, i] * (p + 1) + lesson[:, j]).ravel(), (weight[:, i] * weight[:, j]).ravel())
