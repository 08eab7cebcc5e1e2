"""The linear algebra of the joint fit without a lessons-cubed step: the centred design as an operator,
preconditioned conjugate gradients, and posterior variances from each lesson's neighbourhood.

**Centring.** The category (time-block, agent) baselines have a flat prior, so the fit works on the design
and the rewards after projecting out the baseline indicators Z (n x k, k small)::

    X~ = X - Z P,   P = (Z'Z)^+ Z'X   (k x p: each column's baseline means)
    A  = X~'X~ = X'X - (Z'X)' P,      b = X~'y~,      X~ v = X v - Z (P v)

`Centred` applies A to a vector in O(injections + k p) without forming it (A's dense form is
p x p: 800 MB at 10,000 lessons). `Gram` is the same operator known only by its sufficient
statistics X'X and Z'X (what the joint fit of a whole log keeps: `core.analysis.joint.fit_log`
sums them block by block of sessions): A v = X'X v - (Z'X)' (P v), in O(nonzeros of X'X + k p),
with no per-injection array.

**Variances.** The posterior variance of lesson j is sigma^2 [(A + L)^-1]_jj (L the diagonal
penalty). For a large library it is approximated on the lesson's neighbourhood: j and the
`NEIGHBOURS` lessons most correlated with it (|A_jk| / sqrt(A_jj A_kk), among those injected
in a session with it), whose principal submatrix is inverted exactly. A principal submatrix's
inverse never exceeds the whole inverse on the diagonal, so this is a lower bound that is exact
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

from lesson_credit.core.analysis.joint_keys import column_keys, strongest_first, tie_ranks

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NEIGHBOURS = 16  # lessons in a neighbourhood besides the lesson itself
CG_TOL = 1e-10  # relative residual of a conjugate-gradient solve
CG_MAX = 2000
CROSS_DENSE_MAX = 4096  # columns up to which X'X is kept as a dense array (128 MB at most); beyond, sparse
SOLVE_CHUNK = 4096  # neighbourhoods solved at once (`Neighbourhoods.inverse_diagonal`)
SPARSE_BUDGET = 1 << 20  # nonzeros of X'X in one chunk of rows on `_sparse_neighbourhoods`' path


@dataclass(frozen=True)
class Centred:
    """The design of p columns after projecting out the baseline indicators, as an operator.

    `x`: n x p CSR (scipy.sparse), `xt` its transpose as CSR; `z`: n x k CSR indicators;
    `ginv` = (Z'Z)^+; `zx` = Z'X (k x p); `means` = P = ginv @ zx; `rank` = rank(Z'Z);
    `group`: each session's baseline group (sessions with the same row of Z), `group_size` and
    `group_means` (groups x p): the value x~ subtracts from each column in each group."""

    x: Any
    xt: Any
    z: Any
    ginv: FloatArray
    zx: FloatArray
    means: FloatArray
    rank: int
    group: IntArray
    group_size: FloatArray
    group_means: FloatArray
    known_cross: Any = None  # X'X when the caller had it (scipy.sparse), else formed when first needed

    @cached_property
    def _entries(self) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
        """The design's nonzeros: (session, column, x, the column's baseline mean in that session)."""
        coo = self.x.tocoo()
        rows, cols = coo.row.astype(np.int64), coo.col.astype(np.int64)
        return rows, cols, np.asarray(coo.data, dtype=np.float64), self.group_means[self.group[rows], cols]

    def entries(self) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
        """The design's nonzeros: (session, column, x, the column's baseline mean in that session)."""
        return self._entries

    def centred_sums(self, weight: FloatArray | None, power: int) -> FloatArray:
        """sum_i w_i x~_ij^power per column (w = 1 when None), without forming x~."""
        rows, cols, vals, t = self.entries()
        per_group: FloatArray = self.group_size
        w: FloatArray = np.ones(len(rows))
        if weight is not None:
            per_group = np.bincount(self.group, weights=weight, minlength=len(self.group_size)).astype(np.float64)
            w = weight[rows]
        base = per_group @ (self.group_means**power)
        result: FloatArray = base + np.bincount(cols, weights=w * ((vals - t) ** power - t**power), minlength=self.p)
        return result

    @property
    def n(self) -> int:
        return int(self.x.shape[0])

    @property
    def p(self) -> int:
        return int(self.x.shape[1])

    def center(self, u: FloatArray) -> FloatArray:
        """u minus its projection on the baseline indicators."""
        result: FloatArray = u - self.z @ (self.ginv @ (self.z.T @ u))
        return result

    def apply(self, v: FloatArray) -> FloatArray:
        """X~ v."""
        result: FloatArray = self.x @ v - self.z @ (self.means @ v)
        return result

    @cached_property
    def _cross(self) -> Any:
        """X'X, formed once (dense up to `CROSS_DENSE_MAX` columns): a product with A then costs its
        p^2 entries (or nonzeros), not two passes over every injection."""
        cross = (self.xt @ self.x if self.known_cross is None else self.known_cross).tocsr()
        return cross.toarray() if self.p <= CROSS_DENSE_MAX else cross

    def gram_apply(self, v: FloatArray) -> FloatArray:
        """A v = X'X v - (Z'X)' (P v); beyond `CROSS_DENSE_MAX` columns X'(X v): two passes over the
        injections, where X'X may hold up to a thousand times more nonzeros (a session's lessons pairwise)."""
        product = self.xt @ (self.x @ v) if self.p > CROSS_DENSE_MAX else self._cross @ v
        result: FloatArray = np.asarray(product) - self.zx.T @ (self.means @ v)
        return result

    def cross_rows(self, lo: int, hi: int) -> Any:
        """Rows lo..hi-1 of X'X (scipy.sparse CSR), without forming the rest."""
        if self.known_cross is not None:
            return self.known_cross.tocsr()[lo:hi]
        return (self.xt[lo:hi] @ self.x).tocsr()

    def row_sizes(self) -> IntArray:
        """An upper bound of each row's nonzeros in X'X: the lessons of its sessions, with repeats."""
        return _row_sizes(self.x)

    def column_keys(self) -> FloatArray:
        """Each column's `column_keys`."""
        return column_keys(self.xt, 0)

    def cross_diagonal(self) -> FloatArray:
        """X'X_jj = sum_i x_ij^2."""
        return np.asarray(self.x.multiply(self.x).sum(axis=0), dtype=np.float64).ravel()

    def gram_diag(self) -> FloatArray:
        """A_jj = sum_i x~_ij^2."""
        result: FloatArray = self.cross_diagonal() - (self.zx * self.means).sum(axis=0)
        return np.maximum(result, 0.0)

    def gram_dense(self) -> FloatArray:
        """A as a dense p x p array (small libraries only)."""
        cross = self._cross if isinstance(self._cross, np.ndarray) else self._cross.toarray()
        a: FloatArray = cross - self.zx.T @ self.means
        return (a + a.T) / 2.0

    def cross_products(self) -> Any:
        """X'X (a dense array up to `CROSS_DENSE_MAX` columns, else scipy.sparse)."""
        return self._cross

    def weighted_gram_dense(self, d: FloatArray) -> FloatArray:
        """X~' diag(d) X~ as a dense p x p array (the sandwich's meat)."""
        from scipy import sparse

        dx = (sparse.diags(d) @ self.x).tocsr()
        zdx = np.asarray((self.z.T @ dx).toarray())
        zdz = np.asarray((self.z.T @ (sparse.diags(d) @ self.z)).toarray())
        cross = zdx.T @ self.means  # X'DZ P
        g: FloatArray = (self.xt @ dx).toarray() - cross - cross.T + self.means.T @ zdz @ self.means
        return (g + g.T) / 2.0


@dataclass(frozen=True)
class Gram:
    """The centred design of p columns by its sufficient statistics: `cross` = X'X (a dense p x p
    array, or scipy.sparse CSR for a big library), `zx` = Z'X (k x p), `ginv` = (Z'Z)^+,
    `means` = P = ginv @ zx, `rank` = rank(Z'Z). The operations the fit needs, as `Centred`'s."""

    cross: Any
    zx: FloatArray
    ginv: FloatArray
    means: FloatArray
    rank: int
    x: Any = None  # X itself (n x p CSR) in place of `cross` (None then) when the sums kept the injections
    key: FloatArray | None = None  # each column's `column_keys` (from X when None and X is kept)

    @property
    def p(self) -> int:
        return int(self.zx.shape[1])

    def column_keys(self) -> FloatArray:
        if self.key is None and self.x is None:
            return np.arange(self.p, dtype=np.float64)  # nothing to read the columns' content from: their order
        return self.key if self.key is not None else column_keys(self._xt, 0)

    @cached_property
    def _xt(self) -> Any:
        return self.x.T.tocsr()

    def gram_apply(self, v: FloatArray) -> FloatArray:
        """A v = X'X v - (Z'X)' (P v) (X'(X v) when X is kept)."""
        product = self._xt @ (self.x @ v) if self.x is not None else self.cross @ v
        result: FloatArray = np.asarray(product) - self.zx.T @ (self.means @ v)
        return result

    def cross_diagonal(self) -> FloatArray:
        squares = self.x.multiply(self.x).sum(axis=0) if self.x is not None else self.cross.diagonal()
        return np.asarray(squares, dtype=np.float64).ravel()

    def gram_diag(self) -> FloatArray:
        result: FloatArray = self.cross_diagonal() - (self.zx * self.means).sum(axis=0)
        return np.maximum(result, 0.0)

    def gram_dense(self) -> FloatArray:
        cross = self.cross_products()
        cross = cross if isinstance(cross, np.ndarray) else cross.toarray()
        a: FloatArray = cross - self.zx.T @ self.means
        return (a + a.T) / 2.0

    def cross_products(self) -> Any:
        return (self._xt @ self.x).tocsr() if self.x is not None else self.cross

    def cross_rows(self, lo: int, hi: int) -> Any:
        """Rows lo..hi-1 of X'X (scipy.sparse CSR)."""
        return (self._xt[lo:hi] @ self.x).tocsr() if self.x is not None else self.cross.tocsr()[lo:hi]

    def row_sizes(self) -> IntArray:
        """An upper bound of each row's nonzeros in X'X."""
        if self.x is not None:
            return _row_sizes(self.x)
        sizes: IntArray = np.diff(self.cross.tocsr().indptr).astype(np.int64)
        return sizes


def _row_sizes(x: Any) -> IntArray:
    """Per column of X (n x p CSR): the sum of the sizes of the rows it is in, a bound of its nonzeros in X'X."""
    per_row = np.diff(x.indptr)
    return np.bincount(x.indices, weights=np.repeat(per_row, per_row), minlength=x.shape[1]).astype(np.int64)


def baseline_inverse(ztz: FloatArray) -> tuple[FloatArray, int]:
    """(Z'Z)^+ and rank(Z'Z) from Z'Z (k x k; diagonal when there are categories only)."""
    if np.count_nonzero(ztz - np.diag(np.diag(ztz))) == 0:  # categories only: diagonal
        diag = np.diag(ztz)
        return np.diag(np.where(diag > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)), int(np.count_nonzero(diag > 0))
    ginv: FloatArray = np.asarray(np.linalg.pinv(ztz, hermitian=True), dtype=np.float64)
    return ginv, int(np.linalg.matrix_rank(ztz, hermitian=True))


def centred(x: Any, z: Any, group: IntArray, cross: Any = None) -> Centred:
    """The operator for design `x` (n x p CSR), baseline indicators `z` (n x k CSR) and each
    session's baseline group (sessions with equal rows of z share one); `cross`: X'X when the caller
    has it (scipy.sparse)."""
    x = x.tocsr()
    ginv, rank = baseline_inverse(np.asarray((z.T @ z).toarray(), dtype=np.float64))
    zx = np.asarray((z.T @ x).toarray(), dtype=np.float64)
    means = ginv @ zx
    n_groups = int(group.max()) + 1 if len(group) else 0
    size = np.bincount(group, minlength=n_groups).astype(np.float64)
    first = np.full(n_groups, 0, dtype=np.int64)
    first[group[::-1]] = np.arange(len(group))[::-1]  # a session of each group
    z = z.tocsr()
    group_means = np.asarray(z[first] @ means) if n_groups else np.zeros((0, x.shape[1]))
    return Centred(x, x.T.tocsr(), z, ginv, zx, means, rank, group, size, group_means, cross)


def indicators(
    n: int,
    category: IntArray,
    n_categories: int,
    agent: IntArray | None,
    n_agents: int,
    block: IntArray | None = None,
    n_blocks: int = 1,
) -> tuple[Any, IntArray]:
    """Z (one column per category; when time blocks are given, one per block but the last; when agents
    are given, one per agent but the first) and each session's baseline group (the sessions sharing its
    category, time block and agent: equal rows of Z)."""
    from scipy import sparse

    rows = [np.arange(n)]
    cols = [category]
    k = n_categories
    key = category.astype(np.int64)
    if block is not None and n_blocks > 1:
        keep = np.flatnonzero(block < n_blocks - 1)
        rows.append(keep)
        cols.append(k + block[keep])
        k += n_blocks - 1
        key = key * n_blocks + block
    if agent is not None and n_agents > 1:
        keep = np.flatnonzero(agent > 0)
        rows.append(keep)
        cols.append(k + agent[keep] - 1)
        k += n_agents - 1
        key = key * n_agents + agent
    r, c = np.concatenate(rows), np.concatenate(cols)
    group = key if k == n_categories else np.unique(key, return_inverse=True)[1]
    return sparse.csr_matrix((np.ones(len(r)), (r, c)), shape=(n, k)), np.asarray(group, dtype=np.int64)


def conjugate_gradients(
    apply: Callable[[FloatArray], FloatArray],
    b: FloatArray,
    precondition: FloatArray | Callable[[FloatArray], FloatArray],
    start: FloatArray | None = None,
    tol: float = CG_TOL,
) -> tuple[FloatArray, int]:
    """Solve M x = b for a symmetric positive definite M given as `apply`, with a preconditioner:
    an array (Jacobi: 1 / diag M) or a symmetric positive definite operator. Returns (x, iterations)."""
    if not callable(precondition):
        scale = precondition
        precondition = lambda r: scale * r  # noqa: E731
    x = np.zeros_like(b) if start is None else start.copy()
    r = b - apply(x) if start is not None else b.copy()
    bound = tol * max(float(np.linalg.norm(b)), 1e-300)
    z = precondition(r)
    direction = z.copy()
    rz = float(r @ z)
    for iteration in range(CG_MAX):
        if float(np.linalg.norm(r)) <= bound:
            return x, iteration
        md = apply(direction)
        curvature = float(direction @ md)
        if curvature <= 0.0:
            return x, iteration
        step = rz / curvature
        x += step * direction
        r -= step * md
        z = precondition(r)
        rz_new = float(r @ z)
        direction = z + (rz_new / rz) * direction
        rz = rz_new
    return x, CG_MAX


@dataclass(frozen=True)
class Neighbourhoods:
    """Each column's neighbourhood (itself first, then up to NEIGHBOURS others; -1 pads) and the
    centred Gram matrix A on it: `index` (p, m+1), `block` (p, m+1, m+1); `ranks`: each column's `tie_ranks`
    (`blocks` places the columns in that order, so that the partition does not depend on the columns' order)."""

    index: IntArray
    block: FloatArray
    ranks: IntArray | None = None

    def inverse_diagonal(self, penalty: FloatArray) -> FloatArray:
        """[(A_NN + L_NN)^-1]_00 per column: the neighbourhood estimate of [(A + L)^-1]_jj."""
        valid = self.index >= 0
        safe = np.where(valid, self.index, 0)
        m = self.block.shape[1]
        eye = np.eye(m)[None, :, :]
        pen = np.where(valid, penalty[safe], 1.0)  # padding: an identity row, decoupled
        out = np.empty(len(self.index))
        for lo in range(0, len(out), SOLVE_CHUNK):  # a copy of the blocks a chunk at a time, not of all
            sub = self.block[lo : lo + SOLVE_CHUNK] + eye * pen[lo : lo + SOLVE_CHUNK, :, None]
            rhs = np.zeros((len(sub), m, 1))
            rhs[:, 0, 0] = 1.0
            out[lo : lo + SOLVE_CHUNK] = np.linalg.solve(sub, rhs)[:, 0, 0]
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
    `gram`: X'X when the caller has it (scipy.sparse, or a dense array). Beyond `CROSS_DENSE_MAX` columns
    the candidates are each column's nonzeros of X'X only (`_sparse_neighbourhoods`)."""
    if op.p > CROSS_DENSE_MAX:
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
