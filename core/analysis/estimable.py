"""Which columns of the injection design no fit can estimate: a column whose centred injections are a combination
of other columns' (the baselines taken out: categories, time blocks, agents), so that its coefficient moves with
theirs and only a prior sets how the data's effect is shared out among them (core/analysis/claims.py).

A coefficient b_j is estimable exactly when e_j lies in the range of A = X~'X~ (the centred Gram matrix), i.e. when
every vector v with X~ v = 0 (a null vector of A) has v_j = 0. Such a v names the columns the dependency ties
together: its nonzero entries.

- Up to `DENSE_MAX` columns (the fit's exact path): the null space of A from one eigen-decomposition, exact.
- Beyond, each column's neighbourhood (core/analysis/neighbourhoods.py: itself and the 16 columns most correlated
  with it) first: a null vector of a principal submatrix A_NN is one of A (v' A_NN v = |X~_N v|^2 = 0), so what
  this finds is a true dependency, but a tie of more than 17 lessons, or to lessons outside the neighbourhood, is
  not found there (a review tied 30 rotation lessons of 700, their injections summing to a category's, and they
  kept intervals). So the null space found is then checked whole (`_checked_null_space`): with S = diag(A)^-1/2
  and N an orthonormal basis of what was found (in S's coordinates; any vectors spanning it do), B = S A S + N N'
  is singular exactly when some null vector was missed, and conjugate gradients on B w = r, r a fixed random
  vector, can only reach a residual below |q'r| for every missed null vector q (B q = 0, so q'(r - B w) = q'r).
  Reaching CHECK_TOL |r|
  misses one only if |q'r| <= CHECK_TOL |r| (q'r is a standard normal: probability about CHECK_TOL sqrt(p)).
  When the probe stalls, it is tried again with the lessons' sum in B too (`_beside_sum`): a library whose sessions
  nearly all inject as many lessons has a near-null direction there that makes the probe crawl, and a tie through
  a baseline (a rotation: its lessons' sum is a category's indicator) is the one vector B^-1 (their sum) when it is
  the only one missed.
  When that stalls too, what was missed is searched for (one eigh of A up to `EXACT_MAX` columns, exact; beyond,
  LOBPCG for the smallest eigenpairs of S A S beside N) and checked again. A check that still fails, or a null
  space too big to hold (`DEFLATE_BUDGET`), leaves every column not found tied unsettled: not estimable, with
  that reason (`unsettled_reason`), never estimable by default.

Every session injecting as many lessons (a bandit drawing k) makes the lessons' sum constant: that direction is no
tie, the fit pins the lessons' mean with its prior and estimates them against it (`Draw`); so is a set of lessons of
which every session injects as many (at least one), beside lessons outside it, each such set its own draw.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.neighbourhoods import SOLVE_CHUNK
from lesson_credit.core.base.memory import scipy_linalg
from lesson_credit.core.base.numbers import listed

if TYPE_CHECKING:
    from lesson_credit.core.analysis.joint_ops import Centred
    from lesson_credit.core.analysis.neighbourhoods import Neighbourhoods

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NULL_EIGENVALUE = 1e-10  # an eigenvalue at most this share of the largest is zero (rounding of an exact dependency)
NULL_SHARE = 1e-6  # a column takes part in a dependency when its share of a null vector is above this
NULL_SCALED = 1e-8  # an eigenvalue of S A S (its diagonal 1) at most this is zero: a found null vector
CHECK_TOL = 1e-8  # the probe's relative residual: a missed null vector escapes it with probability ~ this sqrt(p)
CHECK_MAX = 400  # conjugate-gradient steps of one probe (a well-posed probe takes tens)
CHECK_STALL = 25  # a probe whose residual has not halved over this many steps has stalled: it fails
EXACT_MAX = 3000  # columns up to which a failed probe is settled by one eigh of A (exact: 8 s, 270 MB at 3,000)
SEARCH_BLOCK = 8  # eigenpairs LOBPCG seeks at once beyond EXACT_MAX
SEARCH_ROUNDS = 8  # LOBPCG rounds while each finds a full block of null vectors
SEARCH_ITERATIONS = 500
SET_EXACT = 256  # columns up to which a set of linked ties gets its exact projector (`_linked_bases`)
DEFLATE_BUDGET = 1 << 23  # entries of the null-space basis (p x dimension) the check may hold
DRAW_MIN = 3  # columns of a draw beside lessons outside it (two: one difference, said as their tie)
SEED = 20261207  # the probe's and the search's start: the same log gives the same answer

Ties = dict[int, tuple[int, ...] | None]


def common_direction(sizes: FloatArray) -> FloatArray:
    """The lessons' common direction among columns of `sizes` lessons each (a group's column holds each member's
    share, 1 / its size: a session's count of lessons is sum_j size_j x_j), normalised."""
    out: FloatArray = sizes / float(np.linalg.norm(sizes))
    return out


def not_estimable(op: Centred, dense: bool, hoods: Neighbourhoods | None, sizes: FloatArray | None = None) -> Ties:
    """Per column of `op` that no fit can estimate: the other columns its dependency ties it to (sorted), or None
    when whether it is estimable could not be settled (`_checked_null_space`: not estimable, to be safe).
    `sizes`: the lessons in each column (None: one each), for the lessons' common direction (`common_direction`)."""
    return estimability(op, dense, hoods, sizes)[0]


def estimability(
    op: Centred, dense: bool, hoods: Neighbourhoods | None, sizes: FloatArray | None = None
) -> tuple[Ties, npt.NDArray[np.bool_]]:
    """`not_estimable`'s ties, and the columns of the draws the null space holds (`Draw`: the lessons estimated
    against their draw's average; all False when none)."""
    ties, labels = draws(op, dense, hoods, sizes)
    return ties, labels >= 0


def draws(
    op: Centred, dense: bool, hoods: Neighbourhoods | None, sizes: FloatArray | None = None
) -> tuple[Ties, IntArray]:
    """`not_estimable`'s ties, and per column the draw it is in (0, 1, ...: `Draw.labels`; -1: none)."""
    if op.p == 0:
        return {}, np.zeros(0, dtype=np.int64)
    weights = np.ones(op.p) if sizes is None else np.asarray(sizes, dtype=np.float64)
    draw = Draw(op, weights)
    common = common_direction(weights)
    if dense or hoods is None:
        return _from_null_space(draw.ties(_null_space(op.gram_dense()))), draw.labels
    local, vectors = _neighbourhood_ties(hoods)
    parts = _checked_null_space(op, hoods, vectors, common, draw)
    if parts is None:
        unsettled: Ties = dict.fromkeys(range(op.p))
        return unsettled | local, draw.labels
    out: Ties = {}
    for columns, basis in parts:  # disjoint sets of columns: each one's ties are among its own
        if basis is None:  # a set too big for its projector (`SET_EXACT`): each tied to the others, in a chain
            members = columns.tolist()
            out |= {j: (*members[:i], *members[i + 1 :]) for i, j in enumerate(members)}
            continue
        for j, tied in _from_null_space(basis).items():
            out[int(columns[j])] = tuple(columns[list(tied or ())].tolist())
    return out, draw.labels


class Draw:
    """Which null directions are no tie but draws: the lessons of a set whose size-weighted sum is in the null space
    (only their differences show) are estimated against their average, the fit pinning that average with its prior
    (core/analysis/claims.py `_common_prior`, one pin per draw), when the set is every lesson (how many a session
    injects is the same within each baseline group), or when every graded session injects at least one of its
    lessons (a bandit drawing k of them, beside lessons outside the draw: those stay estimable on their own, e_j
    orthogonal to the set's sum; the set's sum null, its count is the same within each baseline group). A set whose
    sum follows a baseline instead (one of 30 lessons in each session of one category, none elsewhere) is a tie: its
    mean is that category's baseline; so is a pair drawn one at a time beside other lessons (A or B in every
    session): the log shows their one difference, which the tie's reason says (each names the other), where against
    their average it would be half that difference twice, as two effects. The sets read are the null space's parts
    (`_parts`): a column null on its own (e_j in the null space: a baseline combination) is in none, and the rest
    split where no null vector links them, so that two draws (2 of 4 lessons and 1 of 3 in every session) are two,
    each against its own average, and a lesson tied to the baselines beside a draw leaves the draw one (its count
    per session then varies). `labels` after `ties`: per column its draw (-1: none)."""

    def __init__(self, op: Centred, sizes: FloatArray) -> None:
        self.op, self.sizes = op, sizes
        self.labels = np.full(op.p, -1, dtype=np.int64)

    @property
    def drawn(self) -> npt.NDArray[np.bool_]:
        out: npt.NDArray[np.bool_] = self.labels >= 0
        return out

    def ties(self, null: FloatArray, where: IntArray | None = None) -> FloatArray:
        """The null space's vectors (on the columns `where`, all when None) as ties: each draw's direction, when it
        is in their span, taken out (`_without_common`) and its columns kept in `labels`."""
        if null.shape[1] == 0:
            return null
        at = np.arange(self.op.p) if where is None else where
        sizes = self.sizes[at]
        parts, alone = _parts(null)
        found: list[tuple[FloatArray, npt.NDArray[np.bool_]]] = []
        for chosen in parts:
            u = common_direction(sizes * chosen)
            along = null.T @ u
            whole = len(at) == self.op.p and bool(np.all(chosen | alone))  # every lesson not tied on its own
            if float(np.sqrt(along @ along)) >= 1.0 - NULL_SHARE and self._is_draw(at[chosen], whole):
                self.labels[at[chosen]] = int(self.labels.max()) + 1
                found.append((u, chosen))
        return _without_common(null, found) if found else null

    def _is_draw(self, columns: IntArray, whole: bool) -> bool:
        if whole:  # every lesson (but those tied on their own): a count constant within each baseline group
            return True
        if len(columns) < DRAW_MIN:  # a pair's one contrast is its tie, which names the other lesson
            return False
        weights = np.zeros(self.op.p)
        weights[columns] = self.sizes[columns]
        count = np.asarray(self.op.x @ weights).ravel()  # lessons of the set each session injects
        return bool(count.min() >= 1.0 - NULL_SHARE)  # (the same within each baseline group: the set's sum is null)


def _parts(null: FloatArray) -> tuple[list[npt.NDArray[np.bool_]], npt.NDArray[np.bool_]]:
    """The columns an orthonormal null basis N touches, split into sets no null vector links (the components of
    the projector P = N N' on them: j and k linked when P_jk is not 0), those null on their own (P_jj = 1: e_j in
    the null space) left out; and those. A set S grows to every column k whose row N_k is not orthogonal to the
    span W of S's rows (then P_kj = N_k . N_j is not 0 for some j in S) until it stops: each step a few products
    with a basis of W (at most the null space's dimension), never P itself (p x p: 7 GB at 30,000 lessons)."""
    share = np.sqrt(np.sum(null * null, axis=1))  # |P e_j|
    touched = share > NULL_SHARE * max(float(share.max()), 1.0)
    alone = share >= 1.0 - NULL_SHARE  # (its row orthogonal to every other column's: in no other set)
    left = touched & ~alone
    parts = []
    while left.any():
        chosen = np.zeros(len(share), dtype=bool)
        chosen[int(np.flatnonzero(left)[0])] = True
        while True:
            rows = null[chosen]
            values, vectors = np.linalg.eigh(rows.T @ rows)  # W: the eigenvectors of nonzero eigenvalue
            basis = vectors[:, values > NULL_SHARE * NULL_SHARE * float(values.max())]
            grown = left & (np.sqrt(np.sum((null @ basis) ** 2, axis=1)) > NULL_SHARE)
            if not (grown & ~chosen).any():
                break
            chosen |= grown
        parts.append(chosen)
        left &= ~chosen
    return parts, alone


def _without_common(null: FloatArray, found: list[tuple[FloatArray, npt.NDArray[np.bool_]]]) -> FloatArray:
    """The null space's vectors as ties between columns, each draw's direction u (in their span; `found`: u and its
    columns) taken out: its lessons are estimated against their mean, and that direction is no tie. What else is
    null (a tie of a few lessons beside it) is kept, each vector with u added so that the draw's columns it does not
    tie are 0: made orthogonal to u, a tie moves every column of the draw it leaves out by one same amount (the
    mean's share of each), the value most of the draw's columns take. (The draws are disjoint: their u orthogonal.)"""
    rest = null.copy()
    for u, _ in found:
        rest -= np.outer(u, u @ rest)  # each basis vector with its part along u taken out
    q, r = np.linalg.qr(rest)
    ties = q[:, np.abs(np.diag(r)) > NULL_SHARE]
    out = ties.copy()
    for k in range(ties.shape[1]):
        w = ties[:, k]
        for u, chosen in found:
            ratio = w[chosen] / u[chosen]  # (u > 0 on the draw)
            scale = float(np.max(np.abs(ratio)))
            values, counts = np.unique(np.round(ratio / max(scale, 1e-300), 9), return_counts=True)
            out[:, k] -= values[int(np.argmax(counts))] * scale * u  # (the draw's columns left out: 0)
    return out


def _null_space(a: FloatArray) -> FloatArray:
    """An orthonormal basis (columns) of the null space of the symmetric positive semi-definite `a`."""
    d, v = scipy_linalg("the joint fit").eigh(a, check_finite=False)
    top = float(np.max(np.abs(d))) if len(d) else 0.0
    basis: FloatArray = v[:, d <= NULL_EIGENVALUE * top] if top > 0 else v
    return basis


def _from_null_space(null: FloatArray) -> Ties:
    if null.shape[1] == 0:
        return {}
    share = np.sqrt(np.sum(null * null, axis=1))  # |P e_j|, P the projector on the null space: rotation-free
    out: Ties = {}
    flagged = share > NULL_SHARE * max(float(share.max()), 1.0)
    for j in np.flatnonzero(flagged).tolist():
        tied = flagged & (np.abs(null @ null[j]) > NULL_SHARE)  # row j of P: the flagged columns a null vector ties
        tied[j] = False
        out[j] = tuple(np.flatnonzero(tied).tolist())
    return out


def _neighbourhood_ties(hoods: Neighbourhoods) -> tuple[dict[int, tuple[int, ...]], list[tuple[IntArray, FloatArray]]]:
    """Per column whose neighbourhood's A_NN has a null vector through it: the neighbours it ties (sorted), and
    that tie as a null vector of A (its columns, its values: the projection of the column's unit vector on A_NN's
    null space). One batched eigh per chunk of neighbourhoods; a padded slot (-1) gets the block's largest
    diagonal entry alone on its row (1 when that is 0): decoupled, it moves neither the block's largest eigenvalue
    nor its null space."""
    ties: dict[int, tuple[int, ...]] = {}
    vectors: list[tuple[IntArray, FloatArray]] = []
    p, m = hoods.index.shape
    for lo in range(0, p, SOLVE_CHUNK):
        index = hoods.index[lo : lo + SOLVE_CHUNK]
        valid = index >= 0
        block = hoods.block[lo : lo + SOLVE_CHUNK] * (valid[:, :, None] & valid[:, None, :])
        pad = np.max(np.diagonal(block, axis1=1, axis2=2), axis=1)
        pad = np.where(pad > 0, pad, 1.0)
        slots = np.arange(m)
        block[:, slots, slots] = np.where(valid, block[:, slots, slots], pad[:, None])
        d, v = np.linalg.eigh((block + np.swapaxes(block, 1, 2)) / 2.0)
        top = np.max(np.abs(d), axis=1)
        null = v * (d <= NULL_EIGENVALUE * top[:, None])[:, None, :]  # (chunk, slot, vector)
        along = np.einsum("bsk,bk->bs", null, null[:, 0, :])  # the first column's unit vector, projected
        for b in np.flatnonzero(np.sqrt(np.abs(along[:, 0])) > NULL_SHARE).tolist():
            tied = valid[b] & (np.abs(along[b]) > NULL_SHARE)
            vectors.append((index[b][tied], along[b][tied]))
            tied[0] = False
            ties[lo + b] = tuple(sorted(index[b][tied].tolist()))
    return ties, vectors


Part = tuple[IntArray, FloatArray]  # columns, and vectors on them (rows: those columns)
Basis = tuple[IntArray, Any, bool]  # and whether they are orthonormal (an array; beyond SET_EXACT: scipy.sparse)


def _checked_null_space(
    op: Centred, hoods: Neighbourhoods, vectors: list[Part], common: FloatArray, draw: Draw
) -> list[tuple[IntArray, FloatArray | None]] | None:
    """A's null space, checked whole (see the module), as ties to read (`_from_null_space`): per set of columns the
    neighbourhoods' null vectors link, an orthonormal basis of theirs (when they are the whole null space), or one
    basis of it all, a draw's direction taken out (`Draw.ties`); None for a set beyond SET_EXACT columns
    (each of its columns tied to the others). None when the check fails."""
    p = op.p
    diag = op.gram_diag()
    scale = np.where(diag > 0, np.sqrt(np.where(diag > 0, diag, 1.0)), 1.0)  # S^-1 (a flat column's: 1)
    has_common = float(common @ op.gram_apply(common)) <= NULL_EIGENVALUE * float(np.max(diag, initial=0.0))
    sets = _linked_bases(vectors, scale)
    found: Any = _as_matrix(sets, p, dense=has_common)
    if found is None:
        return _whole(_null_space(op.gram_dense()), draw) if p <= EXACT_MAX else None
    if has_common:
        found = _extended(found, (common * scale)[:, None])  # every session injects as many: the lessons' sum

    def apply(y: FloatArray) -> FloatArray:  # S A S y
        out: FloatArray = op.gram_apply(y / scale) / scale
        return out

    blocks = hoods.preconditioner(1e-3 * np.where(diag > 0, diag, 1.0))

    def precondition(y: FloatArray) -> FloatArray:  # S^-1 blockdiag(A_BB + L_BB)^-1 S^-1: near (S A S)^-1
        out: FloatArray = blocks(y * scale) * scale
        return out

    settled, more = _probe(apply, found), None
    if not settled and not has_common:  # a rotation's tie, or sessions of nearly always k lessons: beside their sum
        lessons = (common * scale / np.linalg.norm(common * scale))[:, None]  # in S's coordinates
        beside = _with_column(found, lessons)
        settled = _probe(apply, beside)
        if settled:
            settled, more = _beside_sum(apply, beside, lessons[:, 0])
    if settled:
        if more is None:  # back to A's coordinates (S y), set by set
            if not has_common:
                return [
                    (where, draw.ties(np.linalg.qr(u / scale[where, None])[0], where) if exact else None)
                    for where, u, exact in sets
                ]
        else:
            dense = _as_matrix(sets, p, dense=True)
            if dense is None:
                return _whole(_null_space(op.gram_dense()), draw) if p <= EXACT_MAX else None
            found = _extended(dense, more[:, None])
    else:
        if p <= EXACT_MAX:
            return _whole(_null_space(op.gram_dense()), draw)  # exact
        dense = found if isinstance(found, np.ndarray) else _as_matrix(sets, p, dense=True)
        found = _searched(apply, precondition, dense, p) if dense is not None else None
        if found is None or not _probe(apply, found):
            return None
    return _whole(np.linalg.qr(found / scale[:, None])[0], draw)


def _with_column(found: Any, column: FloatArray) -> Any:
    from scipy import sparse

    return np.hstack([found, column]) if isinstance(found, np.ndarray) else sparse.hstack([found, column]).tocsr()


def _beside_sum(
    apply: Callable[[FloatArray], FloatArray], beside: Any, c: FloatArray
) -> tuple[bool, FloatArray | None]:
    """A null vector missing from `beside` but for c (the lessons' sum, in S's coordinates): the probe passed with c
    in B = S A S + V V' (V: `beside`, c its last column), so that a lesson whose effects nearly always add up to
    the same (sessions of k lessons, a few with fewer) does not make the probe crawl. Then at most one null vector q
    orthogonal to the found ones is missing, and c'q is not 0: scaled to c'q = 1, B q = c. So q = B^-1 c, and
    it is one exactly when S A S q = 0 (else none is missing). (False, None): the solve did not converge."""
    q, converged = _conjugate_gradients(lambda y: apply(y) + beside @ (beside.T @ y), c)
    norm = float(np.linalg.norm(q))
    if not converged or norm == 0.0:
        return False, None
    return True, (q / norm if float(q @ apply(q)) <= NULL_SCALED * norm * norm else None)


def _whole(null: FloatArray, draw: Draw) -> list[tuple[IntArray, FloatArray | None]]:
    return [(np.arange(null.shape[0]), draw.ties(null))]


def _linked_bases(vectors: list[Part], scale: FloatArray) -> list[Basis]:
    """Per set of columns the neighbourhoods' null vectors link (disjoint, so the sets' spans are orthogonal), the
    vectors in S's coordinates (S^-1 v): an orthonormal basis of their span (pivoted QR) up to SET_EXACT columns,
    beyond each vector normalised (a QR of a set of 1,000 lessons, a session's named by no other, took seconds;
    B = S A S + L L' is singular on the same vectors as with an orthonormal L, the probe needs no more)."""
    from scipy import sparse
    from scipy.sparse import csgraph

    if not vectors:
        return []
    linalg = scipy_linalg("the estimability check")
    p = len(scale)
    owner = np.concatenate([np.full(len(cols), k) for k, (cols, _) in enumerate(vectors)])
    links = sparse.csr_matrix(
        (np.ones(len(owner)), (owner, np.concatenate([c for c, _ in vectors]))), (len(vectors), p)
    )
    _, label = csgraph.connected_components(sparse.bmat([[None, links], [links.T, None]]), directed=False)
    by_set: dict[int, list[int]] = {}
    for k in range(len(vectors)):
        by_set.setdefault(int(label[k]), []).append(k)
    out = []
    for members in by_set.values():
        where = np.unique(np.concatenate([vectors[k][0] for k in members]))
        if len(where) > SET_EXACT:  # kept sparse: a neighbourhood's 17 entries a vector
            entries = [(vectors[k][0], vectors[k][1] * scale[vectors[k][0]]) for k in members]
            at = np.concatenate([[i] * len(c) for i, (c, _) in enumerate(entries)]).astype(np.int64)
            values = np.concatenate([v / np.linalg.norm(v) for _, v in entries])
            rows = np.searchsorted(where, np.concatenate([c for c, _ in entries]))
            out.append((where, sparse.csr_matrix((values, (rows, at)), shape=(len(where), len(members))), False))
            continue
        local = np.zeros((len(where), len(members)))
        for i, k in enumerate(members):
            cols, values = vectors[k]
            local[np.searchsorted(where, cols), i] = values * scale[cols]
        q, r, _ = linalg.qr(local, mode="economic", pivoting=True)  # rank-revealing
        out.append((where, q[:, np.abs(np.diag(r)) > NULL_SHARE * abs(r[0, 0])], True))
    return out


def _as_matrix(sets: list[Basis], p: int, dense: bool) -> Any:
    """The sets' vectors as one p x d matrix: scipy.sparse CSR, or (`dense`) an array with orthonormal columns (their
    span's), None beyond DEFLATE_BUDGET."""
    from scipy import sparse

    d = sum(u.shape[1] for _, u, _ in sets)
    if dense and p * d > DEFLATE_BUDGET:
        return None
    at = np.cumsum([0] + [u.shape[1] for _, u, _ in sets])
    rows, cols, values = [], [], []
    for k, (where, u, _) in enumerate(sets):
        if isinstance(u, np.ndarray):
            rows.append(np.repeat(where, u.shape[1]))
            cols.append(np.tile(np.arange(at[k], at[k + 1]), len(where)))
            values.append(u.ravel())
        else:  # (a big set's, sparse)
            coo = u.tocoo()
            rows.append(where[coo.row])
            cols.append(at[k] + coo.col.astype(np.int64))
            values.append(coo.data)
    if not sets:
        return np.zeros((p, 0)) if dense else sparse.csr_matrix((p, 0))
    flat_values = np.concatenate(values)
    nonzero = flat_values != 0.0  # (a big set's vectors: 17 nonzeros each, a neighbourhood's)
    flat_rows, flat_cols = np.concatenate(rows)[nonzero], np.concatenate(cols)[nonzero]
    matrix = sparse.csr_matrix((flat_values[nonzero], (flat_rows, flat_cols)), shape=(p, d))
    if not dense:
        return matrix
    if all(exact for _, _, exact in sets):
        return matrix.toarray()
    q, r, _ = scipy_linalg("the estimability check").qr(matrix.toarray(), mode="economic", pivoting=True)
    return q[:, np.abs(np.diag(r)) > NULL_SHARE * abs(r[0, 0])]


def _extended(basis: FloatArray, more: FloatArray) -> FloatArray:
    """`basis` (orthonormal columns) with what of `more`'s columns lies outside its span, orthonormalised."""
    rest = more - basis @ (basis.T @ more)
    q, r = np.linalg.qr(rest)
    keep = np.abs(np.diag(r)) > NULL_SHARE * max(float(np.max(np.linalg.norm(more, axis=0), initial=0.0)), 1e-300)
    return np.hstack([basis, q[:, keep]])


def _probe(apply: Callable[[FloatArray], FloatArray], found: Any) -> bool:
    """Whether conjugate gradients on (S A S + N N') w = r (r fixed, random) reach a true residual of CHECK_TOL |r|:
    then no null vector outside N's span is left, but with probability about CHECK_TOL sqrt(p) (see the module).
    Not preconditioned: S A S's diagonal is 1 already, and the neighbourhoods' blocks, which know nothing of N N',
    would make a tie found in them a thousand times too soft (it stalled with 300 lessons tied in a session)."""
    r = np.random.default_rng(SEED).standard_normal(found.shape[0])
    return _conjugate_gradients(lambda y: apply(y) + found @ (found.T @ y), r)[1]


def _conjugate_gradients(deflated: Callable[[FloatArray], FloatArray], r: FloatArray) -> tuple[FloatArray, bool]:
    """w with deflated(w) = r, and whether its true residual is at most CHECK_TOL |r| (stopped when the residual has
    not halved in CHECK_STALL steps: a missed null vector q keeps it above |q'r|)."""
    bound = CHECK_TOL * float(np.linalg.norm(r))
    w = np.zeros_like(r)
    res = r.copy()
    direction = res.copy()
    rz = float(res @ res)
    last = float(np.linalg.norm(r))
    for step_number in range(CHECK_MAX):
        now = float(np.linalg.norm(res))
        if now <= bound:
            break
        if step_number % CHECK_STALL == CHECK_STALL - 1:
            if now > 0.5 * last:
                return w, False
            last = now
        md = deflated(direction)
        curvature = float(direction @ md)
        if not curvature > 0.0 or not rz > 0.0:
            return w, False
        step = rz / curvature
        w += step * direction
        res -= step * md
        rz, old = float(res @ res), rz
        direction = res + (rz / old) * direction
    return w, float(np.linalg.norm(r - deflated(w))) <= bound  # the true residual, not the recurrence's


def _searched(
    apply: Callable[[FloatArray], FloatArray],
    precondition: Callable[[FloatArray], FloatArray],
    found: FloatArray,
    p: int,
) -> FloatArray | None:
    """`found` with the null vectors of S A S beside it that LOBPCG finds (the smallest eigenpairs orthogonal to
    `found`, from a fixed start, a block at a time while a whole block is null); None beyond DEFLATE_BUDGET."""
    from scipy.sparse.linalg import LinearOperator, lobpcg

    scipy_linalg("the estimability check")  # (its memory check; lobpcg imports scipy.linalg)
    operator = LinearOperator(
        (p, p), matvec=lambda y: apply(np.ravel(y)), matmat=lambda y: _columns(apply, y), dtype=np.float64
    )
    pre = LinearOperator(
        (p, p), matvec=lambda y: precondition(np.ravel(y)), matmat=lambda y: _columns(precondition, y), dtype=np.float64
    )
    rng = np.random.default_rng(SEED)
    for _ in range(SEARCH_ROUNDS):
        size = min(SEARCH_BLOCK, max((p - found.shape[1]) // 5, 1))
        start = rng.standard_normal((p, size))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (not converged: the probe after decides)
            values, ritz = lobpcg(
                operator,
                start,
                M=pre,
                Y=found if found.shape[1] else None,
                tol=1e-9,
                maxiter=SEARCH_ITERATIONS,
                largest=False,
            )
        null = ritz[:, values <= NULL_SCALED]
        if null.shape[1]:
            found = _extended(found, null)
        if p * found.shape[1] > DEFLATE_BUDGET:
            return None
        if null.shape[1] < size:
            break
    return found


def _columns(f: Callable[[FloatArray], FloatArray], y: FloatArray) -> FloatArray:
    return np.column_stack([f(y[:, k]) for k in range(y.shape[1])]) if y.ndim == 2 else f(y)


def unsettled_reason() -> str:
    """Why a column whose estimability the check could not settle claims nothing (`_checked_null_space`)."""
    return (
        "not estimable: whether its injections are a combination of other lessons' and the baselines' could not "
        "be settled (the check did not converge), so it claims nothing rather than risk a wrong interval"
    )


def confounded_reason(names: list[str]) -> str:
    """Why a column no fit can estimate claims nothing (`names`: the lessons its dependency ties it to)."""
    shown = listed(names, 3)
    with_whom = f"those of {shown}, with the baselines" if names else "the baselines"
    return (
        f"not estimable: its injections are a combination of {with_whom} (categories, time blocks, agents), so no "
        "fit can tell its effect from theirs"
    )
