"""The linear algebra of the joint fit without a lessons-cubed step: the centred design as an operator,
preconditioned conjugate gradients.

**Centring.** The category (time-block, agent) baselines have a flat prior, so the fit works on the design
and the rewards after projecting out the baseline indicators Z (n x k, k small)::

    X~ = X - Z P,   P = (Z'Z)^+ Z'X   (k x p: each column's baseline means)
    A  = X~'X~ = X'X - (Z'X)' P,      b = X~'y~,      X~ v = X v - Z (P v)

`Centred` applies A to a vector in O(injections + k p) without forming it (A's dense form is
p x p: 800 MB at 10,000 lessons). `Gram` is the same operator known only by its sufficient
statistics X'X and Z'X (what the joint fit of a whole log keeps: `core.analysis.joint.fit_log`
sums them block by block of sessions): A v = X'X v - (Z'X)' (P v), in O(nonzeros of X'X + k p),
with no per-injection array.

The posterior variances, from each lesson's neighbourhood: core/analysis/neighbourhoods.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.joint_keys import column_keys

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CG_TOL = 1e-10  # relative residual of a conjugate-gradient solve
CG_MAX = 2000
CELL_SESSIONS = 12  # sessions a time block on average from which a category gets its own blocks (`time_groups`)
CROSS_DENSE_MAX = 4096  # columns up to which X'X is kept as a dense array (128 MB at most); beyond, sparse


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


def time_groups(category: IntArray, n_blocks: int) -> tuple[IntArray | None, int]:
    """Each session's time group and their number: its category's own when that has `CELL_SESSIONS` sessions a time
    block or more on average; the other categories together one more, when they have as many together (fewer: they
    share the largest category's blocks). (None, 1) when that is one group: the blocks shared by all. A category
    whose baseline moves over time unlike the others' is then read within its own blocks: with shared blocks only, a
    trend in one category was credited to a lesson rolled out there."""
    if n_blocks < 2 or not len(category):
        return None, 1
    size = np.bincount(category)
    own = size >= CELL_SESSIONS * n_blocks
    rest = int(size[~own].sum())
    if not own.any() or (int(own.sum()) == 1 and rest < CELL_SESSIONS * n_blocks):
        return None, 1
    code = np.where(own, np.cumsum(own) - 1, int(own.sum()))
    if rest < CELL_SESSIONS * n_blocks:
        code = np.where(own, code, code[int(np.argmax(size))])  # (too few to have blocks of their own)
    return code[category].astype(np.int64), int(code.max()) + 1


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
    step: IntArray | None = None,
    n_steps: int = 0,
    cell: IntArray | None = None,
    n_cells: int = 1,
) -> tuple[Any, IntArray]:
    """Z (one column per category; when time blocks are given, one per block but the last, or with `cell` (each
    session's time group, a function of its category: `time_groups`) one per time group and block but the last;
    when agents are given, one per agent but the first; when steps are given, one per step: `step`, each session's
    step column or -1, `core.analysis.steps.Steps.codes`) and each session's baseline group (the sessions sharing
    its category, time block, agent and step: equal rows of Z)."""
    from scipy import sparse

    rows = [np.arange(n)]
    cols = [category]
    k = n_categories
    key = category.astype(np.int64)
    if block is not None and n_blocks > 1:
        keep = np.flatnonzero(block < n_blocks - 1)
        rows.append(keep)
        cells = max(n_cells, 1) if cell is not None else 1
        cols.append(k + block[keep] + (cell[keep] * (n_blocks - 1) if cell is not None else 0))
        k += cells * (n_blocks - 1)
        key = key * n_blocks + block
    if agent is not None and n_agents > 1:
        keep = np.flatnonzero(agent > 0)
        rows.append(keep)
        cols.append(k + agent[keep] - 1)
        k += n_agents - 1
        key = key * n_agents + agent
    if step is not None and n_steps > 0:
        keep = np.flatnonzero(step >= 0)
        rows.append(keep)
        cols.append(k + step[keep])
        k += n_steps
        key = key * (n_steps + 1) + step + 1
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
