"""Posterior variances of the joint fit from each lesson's neighbourhood, and the preconditioner built on them.

The posterior variance of lesson j is sigma^2 [(A + L)^-1]_jj (A the centred Gram matrix of
core/analysis/joint_ops.py, L the diagonal penalty). For a large library it is approximated on the
lesson's neighbourhood: j and the `NEIGHBOURS` lessons most correlated with it (|A_jk| / sqrt(A_jj A_kk),
among those injected in a session with it), whose principal submatrix is inverted exactly. A principal
submatrix's inverse never exceeds the whole inverse on the diagonal, so this is a lower bound that is exact
when no lesson outside the neighbourhood is correlated with the ones in it. Measured against the
dense inverse (bench/joint_scale.py): median -0.6% on the sd in a random library, -0.5% with
topic clusters of 20 lessons, where the diagonal alone (`1 / A_jj`) is 10% short. Lessons tied in
correlation are chosen by `column_keys` (their content), not by column (the order lessons first
appear in the log): the same log gives the same numbers whatever that order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis import joint_ops
from lesson_credit.core.analysis.joint_keys import strongest_first, tie_ranks
from lesson_credit.core.analysis.joint_ops import Centred, Gram

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NEIGHBOURS = 16  # lessons in a neighbourhood besides the lesson itself
SOLVE_CHUNK = 4096  # neighbourhoods solved at once (`Neighbourhoods.inverse_diagonal`)
SPARSE_BUDGET = 1 << 20  # nonzeros of X'X in one chunk of rows on `_sparse_neighbourhoods`' path


@dataclass(frozen=True)
class Neighbourhoods:
    """Each column's neighbourhood (itself first, then up to NEIGHBOURS others; -1 pads) and the
    centred Gram matrix A on it: `index` (p, m+1), `block` (p, m+1, m+1); `ranks`: each column's `tie_ranks`
    (`blocks` places the columns in that order, so that the partition does not depend on the columns' order)."""

    index: IntArray
    block: FloatArray
    ranks: IntArray | None = None

    def inverse_diagonal(self, penalty: FloatArray, pins: FloatArray | None = None) -> FloatArray:
        """[(A_NN + L_NN)^-1]_00 per column: the neighbourhood estimate of [(A + L)^-1]_jj. `pins`: rank-one
        penalties c u u' of the fit as columns sqrt(c) u (p x pins), each restricted to the neighbourhood: a draw's
        pin (core/analysis/claims.py `_common_prior`) holds the direction the data do not see, which a neighbourhood
        holding the draw has too; left out, its lessons' variances read that direction's weak prior alone."""
        return self.inverse_and_shares(penalty, pins)[0]

    def inverse_and_shares(self, penalty: FloatArray, pins: FloatArray | None = None) -> tuple[FloatArray, FloatArray]:
        """Per column, from one solve on its neighbourhood: `inverse_diagonal`, and [A_NN (A_NN + L_NN + pins on
        N)^-1]_00, the neighbourhood estimate of its share of the trace of A M (M = (A + L + pins)^-1, the fit's
        degrees of freedom: 1 - L_jj M_jj - (pins M)_jj). A_jj M_jj, the share when the column is correlated with
        none, overstates it by the variance the others' correlation adds to M_jj: a pair one of which is in every
        session (A + B a baseline, the prior alone holding their sum) has M_jj about 1 / (2 lambda) and A_jj M_jj
        about A_jj / (2 lambda), hundreds, where the data show their one difference (each share 1/2)."""
        rhs = np.zeros(self.index.shape)
        rhs[:, 0] = 1.0
        solved = self._solve(np.arange(len(self.index)), rhs, penalty, pins)
        return solved[:, 0].copy(), np.einsum("bi,bi->b", self.block[:, 0, :], solved)

    def quadratic_forms(
        self, columns: IntArray, rhs: FloatArray, penalty: FloatArray, pins: FloatArray | None = None
    ) -> FloatArray:
        """c' (A_NN + L_NN + pins on N)^-1 c per column of `columns`, c its row of `rhs` on its neighbourhood N
        (in `index` order; the neighbourhood estimate of c' (A + L + pins)^-1 c)."""
        out: FloatArray = np.einsum("bi,bi->b", rhs, self._solve(columns, rhs, penalty, pins))
        return out

    def _solve(self, columns: IntArray, rhs: FloatArray, penalty: FloatArray, pins: FloatArray | None) -> FloatArray:
        """(A_NN + L_NN + pins on N)^-1 c per column of `columns` (rows: c on its neighbourhood, `index` order)."""
        m = self.block.shape[1]
        eye = np.eye(m)[None, :, :]
        out = np.empty((len(columns), m))
        for lo in range(0, len(columns), SOLVE_CHUNK):  # a copy of the blocks a chunk at a time, not of all
            at = columns[lo : lo + SOLVE_CHUNK]
            index = self.index[at]
            valid = index >= 0
            safe = np.where(valid, index, 0)
            pen = np.where(valid, penalty[safe], 1.0)  # padding: an identity row, decoupled
            sub = self.block[at] + eye * pen[:, :, None]
            if pins is not None and pins.shape[1]:
                u = np.where(valid[:, :, None], pins[safe], 0.0)
                sub += np.einsum("biq,bjq->bij", u, u)
            out[lo : lo + SOLVE_CHUNK] = np.linalg.solve(sub, rhs[lo : lo + SOLVE_CHUNK][:, :, None])[:, :, 0]
        return out

    @cached_property
    def blocks(self) -> list[tuple[IntArray, FloatArray]]:
        """A partition of the columns into blocks of correlated ones (each column not yet placed, in the order
        of `ranks`, opens a block with its neighbours not yet placed: at most NEIGHBOURS + 1 columns), grouped by
        size: (members (b, size), A on each block (b, size, size))."""
        placed = np.zeros(len(self.index), dtype=bool)
        by_size: dict[int, list[tuple[int, list[int], list[int]]]] = {}
        visit = range(len(self.index)) if self.ranks is None else np.argsort(self.ranks).tolist()
        rows = self.index.tolist()
        for j in visit:
            if placed[j]:
                continue
            row = rows[j]
            slots = [i for i, k in enumerate(row) if k >= 0 and not placed[k]]
            chosen = [row[i] for i in slots]
            placed[chosen] = True
            by_size.setdefault(len(chosen), []).append((j, chosen, slots))
        out: list[tuple[IntArray, FloatArray]] = []
        for items in by_size.values():
            owners = np.array([owner for owner, _, _ in items])
            where = np.array([s for _, _, s in items], dtype=np.int64)
            members = np.array([m for _, m, _ in items], dtype=np.int64)
            out.append((members, self.block[owners[:, None, None], where[:, :, None], where[:, None, :]]))
        return out

    def preconditioner(self, penalty: FloatArray) -> Callable[[FloatArray], FloatArray]:
        """Block Jacobi for A + diag(penalty) on `blocks`: v -> blockdiag(A_BB + L_BB)^-1 v (symmetric
        positive definite, so conjugate gradients may use it)."""
        parts = []
        for members, sub in self.blocks:
            size = members.shape[1]
            parts.append((members, np.linalg.inv(sub + np.eye(size)[None, :, :] * penalty[members][:, :, None])))

        def apply(v: FloatArray) -> FloatArray:
            out = np.empty_like(v)
            for members, inverse in parts:
                out[members] = np.einsum("bij,bj->bi", inverse, v[members])
            return out

        return apply


def neighbourhoods(op: Centred | Gram, size: int = NEIGHBOURS, chunk: int = 512, gram: Any = None) -> Neighbourhoods:
    """The `size` columns most correlated with each column (|A_jk| / sqrt(A_jj A_kk)) and the centred
    Gram matrix on each neighbourhood, from X'X in dense blocks of `chunk` rows of A (never the whole
    p x p array when X'X is sparse): one pass picks the neighbours, a second gathers the blocks.
    `gram`: X'X when the caller has it (scipy.sparse, or a dense array). Beyond `joint_ops.CROSS_DENSE_MAX` columns
    the candidates are each column's nonzeros of X'X only (`_sparse_neighbourhoods`)."""
    if op.p > joint_ops.CROSS_DENSE_MAX:  # (read here: one limit, joint_ops')
        return _sparse_neighbourhoods(op, size, gram)
    s = op.cross_products() if gram is None else gram
    if isinstance(s, np.ndarray):
        s32: Any = s.astype(np.float32)

        def rows(m: Any, lo: int, hi: int) -> Any:
            return np.array(m[lo:hi])
    else:
        s = s.tocsr()
        s32 = type(s)((s.data.astype(np.float32), s.indices, s.indptr), shape=s.shape)  # astype would sort: 0.3 s

        def rows(m: Any, lo: int, hi: int) -> Any:
            return m[lo:hi].toarray()

    p = op.p
    # the choice in single precision, on correlations: (X'X_jk - (Z'X)_j' P_k) / (root_j root_k)
    size, index, inv_root64, means = _start(op, size, np.asarray(s.diagonal(), dtype=np.float64))
    m = size + 1
    inv_root = inv_root64.astype(np.float32)
    zx32 = (op.zx * inv_root64[None, :]).astype(np.float32, order="C")
    means32 = (means * inv_root64[None, :]).astype(np.float32, order="C")
    # ties (`strongest_first`: equal in the top 16 bits of mantissa) go to the lower `tie_ranks`: each truncated
    # correlation times 1 - rank 2^-40, in double precision, keeps the order of unequal ones (2^-16 apart at least)
    tie_scale = 1.0 - (ranks := tie_ranks(op.column_keys())) * 2.0**-40
    for lo in range(0, p if size > 0 else 0, chunk):
        hi = min(lo + chunk, p)
        corr = rows(s32, lo, hi)
        corr *= inv_root[None, :]
        corr *= inv_root[lo:hi, None]
        corr -= _baseline_products(zx32, means32, lo, hi)
        np.abs(corr, out=corr)
        corr[np.arange(hi - lo), np.arange(lo, hi)] = 0.0
        np.fmax(corr, 0.0, out=corr)  # NaN: 0, as weak as can be
        corr.view(np.int32)[...] &= np.int32(~0x7F)  # 16 bits of mantissa kept
        order = corr * tie_scale[None, :]
        top = np.argpartition(order, p - size, axis=1)[:, p - size :]
        top = np.take_along_axis(top, np.argsort(-np.take_along_axis(order, top, axis=1), axis=1), axis=1)
        strong = np.take_along_axis(corr, top, axis=1) > 1e-6
        index[lo:hi, 1:] = np.where(strong, top, -1)
    valid = index >= 0
    safe = np.where(valid, index, 0)
    a_idx = np.broadcast_to(safe[:, :, None], (p, m, m)).ravel()
    b_idx = np.broadcast_to(safe[:, None, :], (p, m, m)).ravel()
    wanted = np.flatnonzero((valid[:, :, None] & valid[:, None, :]).ravel())
    order = wanted[np.argsort(a_idx[wanted], kind="stable")]
    bounds = np.searchsorted(a_idx[order], np.arange(0, p + chunk, chunk))
    flat = np.zeros(p * m * m)
    for number, lo in enumerate(range(0, p, chunk)):
        these = order[bounds[number] : bounds[number + 1]]
        if len(these):
            hi = min(lo + chunk, p)
            block = rows(s, lo, hi) - op.zx[:, lo:hi].T @ op.means  # rows lo..hi-1 of A = X'X - (Z'X)' P
            flat[these] = block[a_idx[these] - lo, b_idx[these]]
    return Neighbourhoods(index, flat.reshape(p, m, m), ranks)


def _sparse_neighbourhoods(op: Centred | Gram, size: int, gram: Any) -> Neighbourhoods:
    """`neighbourhoods` of a big library: each column's candidates are its nonzeros of X'X (the columns
    injected in a session with it), read in chunks of rows of at most `SPARSE_BUDGET` nonzeros, so time and
    memory grow with X'X's nonzeros, not with p^2. A column correlated with another only through their
    baselines (the two in sessions of one category, never in one session) is no candidate: such a
    correlation is of the order of 1 / the category's sessions. Ties: the lower `tie_ranks`."""
    from scipy import sparse

    if gram is not None:
        g = sparse.csr_matrix(gram)
        rows_of: Callable[[int, int], Any] = lambda lo, hi: g[lo:hi]  # noqa: E731
        sizes, cross_diag = np.diff(g.indptr), np.asarray(g.diagonal(), dtype=np.float64)
    else:
        rows_of, sizes, cross_diag = op.cross_rows, op.row_sizes(), op.cross_diagonal()
    p = op.p
    size, index, inv_root, means = _start(op, size, cross_diag)
    m = size + 1
    ranks = tie_ranks(op.column_keys())
    by_rank = np.argsort(ranks)  # the column of each rank
    ranked_rows = _ranked_rows(op, gram, by_rank)
    zx_r, means_r = op.zx * inv_root[None, :], means * inv_root[None, :]
    for lo, hi in _spans(sizes) if size > 0 else []:
        chunk = ranked_rows(lo, hi)
        chunk.sum_duplicates()  # and sorted: a row's entries in the order of their columns' ranks
        counts = np.diff(chunk.indptr)
        r, c = np.repeat(np.arange(lo, hi), counts), by_rank[chunk.indices]
        corr = np.abs(chunk.data * inv_root[r] * inv_root[c] - _pair_dots(zx_r, means_r, r, c, lo, hi))
        corr[c == r] = 0.0
        order = np.lexsort((strongest_first(corr), r))  # by row (as they are), the strongest first, ties by rank
        rank = np.arange(len(r)) - np.repeat(chunk.indptr[:-1], counts)
        keep = (rank < size) & (corr[order] > 1e-6)
        index[r[keep], 1 + rank[keep]] = c[order][keep]
    # the blocks: A_ab = X'X_ab - (Z'X)_a' P_b for a, b in a neighbourhood, read by chunk of rows a
    valid = index >= 0
    members = np.flatnonzero(valid.ravel())  # j * m + slot
    by_row = np.argsort(index.ravel()[members], kind="stable")
    members, rows = members[by_row], index.ravel()[members[by_row]]
    flat = np.zeros((p, m, m))
    pairs = np.bincount(rows, minlength=p) * m  # the entries of A each row a gives the blocks
    for lo, hi in _spans(np.maximum(sizes, pairs)):
        these = members[np.searchsorted(rows, lo) : np.searchsorted(rows, hi)]
        if len(these):
            j, slot = these // m, these % m
            a, b = np.repeat(index[j, slot], m), index[j].ravel()
            b_safe = np.where(b >= 0, b, 0)
            chunk = rows_of(lo, hi)
            chunk.sum_duplicates()
            values = np.asarray(chunk[a - lo, b_safe]).ravel() - _pair_dots(op.zx, op.means, a, b_safe, lo, hi, False)
            flat[j, slot, :] = np.where(b >= 0, values, 0.0).reshape(len(these), m)
    return Neighbourhoods(index, flat, ranks)


def _baseline_products(zx: Any, means: Any, lo: int, hi: int) -> Any:
    """(Z'X)[:, lo:hi]' P as a dense (hi - lo) x p array, one baseline at a time: each entry the same sum, in
    the same order, wherever its columns are (a matrix product's rounding may depend on an entry's place). By
    tiles of rows of about 2^17 entries: a tile and its term stay in cache, and the term's copy is small."""
    zx, means = np.ascontiguousarray(zx), np.ascontiguousarray(means)  # rows read whole: 3 times faster
    out = np.zeros((hi - lo, means.shape[1]), dtype=np.result_type(zx, means))
    rows = max(1, (1 << 17) // max(means.shape[1], 1))
    for start in range(lo, hi if len(zx) else lo, rows):
        tile = out[start - lo : min(start + rows, hi) - lo]
        np.multiply.outer(zx[0, start : start + len(tile)], means[0], out=tile)
        term = np.empty_like(tile)
        for k in range(1, len(zx)):
            tile += np.multiply.outer(zx[k, start : start + len(tile)], means[k], out=term)
    return out


def _ranked_rows(op: Centred | Gram, gram: Any, by_rank: IntArray) -> Callable[[int, int], Any]:
    """Rows lo..hi-1 of X'X (`gram` when given) with the columns numbered by rank (`by_rank[i]`: the column of
    rank i): sorted, a row's tied candidates are in the order of their ranks (the columns of X permuted once)."""
    from scipy import sparse

    if gram is None and op.x is not None:
        x_ranked = op.x.tocsr()[:, by_rank]
        xt = op.xt if isinstance(op, Centred) else op._xt
        return lambda lo, hi: (xt[lo:hi] @ x_ranked).tocsr()
    cross = sparse.csr_matrix(gram if gram is not None else op.cross_products())[:, by_rank].tocsr()
    return lambda lo, hi: cross[lo:hi]


def _spans(sizes: IntArray) -> list[tuple[int, int]]:
    """Consecutive rows lo..hi-1 whose `sizes` sum to at most `SPARSE_BUDGET` (one row at least)."""
    ends = np.cumsum(np.maximum(sizes, 1))
    spans, lo = [], 0
    while lo < len(sizes):
        hi = max(int(np.searchsorted(ends, (ends[lo - 1] if lo else 0) + SPARSE_BUDGET, side="right")), lo + 1)
        spans.append((lo, hi))
        lo = hi
    return spans


def _pair_dots(
    left: FloatArray, right: FloatArray, a: IntArray, b: IntArray, lo: int, hi: int, exact: bool = True
) -> FloatArray:
    """left[:, a] . right[:, b] for each pair (a, b), every a in lo..hi-1: from the dense product of those
    columns when it has at most 4 times as many entries as there are pairs (sessions' lessons with each
    other), else one row of the k at a time. Either way each pair's sum is taken in the same order, wherever its
    columns are (`_baseline_products`), so that equal columns' correlations are equal to the last bit; not `exact`
    (values, not a choice, hang on it), the dense product is a matrix product's."""
    columns = np.flatnonzero(np.bincount(b, minlength=right.shape[1]))
    if (hi - lo) * len(columns) <= 4 * len(a):
        where = np.zeros(right.shape[1], dtype=np.int64)
        where[columns] = np.arange(len(columns))
        product = _baseline_products(left, right[:, columns], lo, hi) if exact else left[:, lo:hi].T @ right[:, columns]
        dense: FloatArray = product[a - lo, where[b]]
        return dense
    out = np.zeros(len(a))
    for k in range(left.shape[0]):
        out += left[k, a] * right[k, b]
    return out


def _start(op: Centred | Gram, size: int, cross_diag: FloatArray) -> tuple[int, IntArray, FloatArray, FloatArray]:
    """A neighbourhood's size besides its lesson (at most p - 1), the index with each column first in its own
    row (the others -1 until chosen), each column's 1 / root of its centred diagonal and P = (Z'Z)^+ Z'X, these
    two summed in one order whatever a column's place (a matrix product's rounding may depend on it: equal columns
    must tie exactly, for `tie_ranks` to decide). A column that does not
    vary within any baseline group (a lesson in every session at one weight) is zero once centred, up to rounding
    (its centred diagonal at most 1e-9 of X'X's, `cross_diag`): 0, correlated with nothing (its 1 / root would
    overflow and make NaNs that took a neighbour's place)."""
    p = op.p
    size = min(size, p - 1)
    index = np.full((p, size + 1), -1, dtype=np.int64)
    index[:, 0] = np.arange(p)
    means = np.zeros(op.zx.shape)
    for i, j in zip(*np.nonzero(op.ginv), strict=True):
        means[i] += op.ginv[i, j] * op.zx[j]
    diag = cross_diag.copy()
    for k in range(len(means)):
        diag -= op.zx[k] * means[k]
    diag = np.maximum(diag, 0.0)
    flat_column = diag <= 1e-9 * cross_diag
    inv_root: FloatArray = np.where(flat_column, 0.0, 1.0 / np.sqrt(np.where(flat_column, 1.0, diag)))
    return size, index, inv_root, means
