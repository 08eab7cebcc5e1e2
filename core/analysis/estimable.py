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
  When that stalls too, what was missed is searched for: one eigh of A up to `EXACT_MAX` columns, exact; beyond,
  LOBPCG for the smallest eigenpairs of S A S beside what is known, round after round, each checked again
  (`_searched`: the probe with the eigenvectors found beside the null ones deflated too, whose smallest nonzero
  eigenvalues made it stall where nothing was missed, then beside the lessons' sum), until the check passes. A
  round that finds nothing new while the check still fails, or a null space too big to hold (`DEFLATE_BUDGET`),
  leaves every column not found tied unsettled: not estimable, with that reason (`unsettled_reason`), never
  estimable by default.
- S: a column that centring leaves nothing of but rounding (a lesson in every session of its category) is flat,
  scaled by its uncentred norm: the square root of its rounding (1e-13, at times above 0) made its row of S A S
  rounding times 1e6, and the check then failed (in 6 of 11 heavy-tailed libraries of 3,000-5,000 columns).
- Zero, on every path: an eigenvalue (or a unit vector's Rayleigh quotient) at most NULL_EIGENVALUE of the largest
  of the matrix it is one of (A's on the exact paths, S A S's beyond: `_is_null`, `_largest`).

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

from lesson_credit.core.analysis.draws import NULL_SHARE, Draw, common_direction
from lesson_credit.core.analysis.neighbourhoods import SOLVE_CHUNK
from lesson_credit.core.base.memory import scipy_linalg
from lesson_credit.core.base.numbers import listed

if TYPE_CHECKING:
    from lesson_credit.core.analysis.joint_ops import Centred
    from lesson_credit.core.analysis.neighbourhoods import Neighbourhoods

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NULL_EIGENVALUE = 1e-10  # an eigenvalue at most this share of the largest is zero (rounding of an exact dependency)
CHECK_TOL = 1e-8  # the probe's relative residual: a missed null vector escapes it with probability ~ this sqrt(p)
CHECK_MAX = 400  # conjugate-gradient steps of one probe (a well-posed probe takes tens)
CHECK_STALL = 25  # a probe whose residual has not halved over this many steps has stalled: it fails
EXACT_MAX = 3000  # columns up to which a failed probe is settled by one eigh of A (exact: 8 s, 270 MB at 3,000)
SEARCH_BLOCK = 8  # eigenpairs LOBPCG seeks at once beyond EXACT_MAX (twice as many after a block all null)
SEARCH_ROUNDS = 32  # LOBPCG rounds, each checked, until the check passes
SEARCH_ITERATIONS = 500
SEARCH_TOL = 1e-9  # LOBPCG's residual norm (S A S's diagonal is 1)
SEARCH_MISSING_MAX = 64  # null vectors the search may have to find: more (lessons beyond sessions) is unsettled
EIGENVECTOR_RESIDUAL = 1e-5  # a Ritz vector deflated in the check: its residual at most this share of its eigenvalue
LARGEST_STEPS = 30  # power steps for S A S's largest eigenvalue (`_largest`)
SET_EXACT = 256  # columns up to which a set of linked ties gets its exact projector (`_linked_bases`)
DEFLATE_BUDGET = 1 << 23  # entries of the null-space basis (p x dimension) the check may hold
SEED = 20261207  # the probe's and the search's start: the same log gives the same answer

Ties = dict[int, tuple[int, ...] | None]


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
    op: Centred,
    dense: bool,
    hoods: Neighbourhoods | None,
    sizes: FloatArray | None = None,
    lessons: IntArray | None = None,
) -> tuple[Ties, IntArray]:
    """`not_estimable`'s ties, and per column the draw it is in (0, 1, ...: `Draw.labels`; -1: none; `lessons`: per
    column the lesson it holds, as `Draw`)."""
    if op.p == 0:
        return {}, np.zeros(0, dtype=np.int64)
    weights = np.ones(op.p) if sizes is None else np.asarray(sizes, dtype=np.float64)
    draw = Draw(op, weights, lessons)
    common = common_direction(weights)
    if dense or hoods is None:
        return _from_null_space(draw.ties(_null_space(op.gram_dense()))), draw.labels
    local, vectors = _neighbourhood_ties(hoods)
    parts = _checked_null_space(op, vectors, common, draw)
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
    op: Centred, vectors: list[Part], common: FloatArray, draw: Draw
) -> list[tuple[IntArray, FloatArray | None]] | None:
    """A's null space, checked whole (see the module), as ties to read (`_from_null_space`): per set of columns the
    neighbourhoods' null vectors link, an orthonormal basis of theirs (when they are the whole null space), or one
    basis of it all, a draw's direction taken out (`Draw.ties`); None for a set beyond SET_EXACT columns
    (each of its columns tied to the others). None when the check fails."""
    p = op.p
    diag = op.gram_diag()
    raw = op.cross_diagonal()
    # a column centring leaves nothing of but rounding (a lesson in every session of its groups) is flat: its S is
    # its uncentred norm, not the square root of that rounding (which made S A S's row of it rounding times 1e6)
    flat = diag <= NULL_EIGENVALUE * raw
    scale = np.sqrt(np.where(flat, np.where(raw > 0, raw, 1.0), diag))  # S^-1
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

    top = _largest(apply, p)
    # a rotation's tie, or sessions of nearly always k lessons: beside their sum (in S's coordinates)
    lessons = None if has_common else common * scale / np.linalg.norm(common * scale)
    settled, more = _settled(apply, found, lessons, top)
    if settled and more is None and not has_common:  # back to A's coordinates (S y), set by set
        return [
            (where, draw.ties(np.linalg.qr(u / scale[where, None])[0], where) if exact else None)
            for where, u, exact in sets
        ]
    if not settled and p <= EXACT_MAX:
        return _whole(_null_space(op.gram_dense()), draw)  # exact
    dense = found if isinstance(found, np.ndarray) else _as_matrix(sets, p, dense=True)
    if dense is None:
        return _whole(_null_space(op.gram_dense()), draw) if p <= EXACT_MAX else None
    if settled:
        found = dense if more is None else _extended(dense, more[:, None])
    else:
        # at least p - n null vectors (A's rank is at most the sessions'): a search for hundreds would take hours
        if p - op.x.shape[0] - dense.shape[1] > SEARCH_MISSING_MAX:
            return None
        found = _searched(apply, dense, lessons, top)
        if found is None:
            return None
    return _whole(np.linalg.qr(found / scale[:, None])[0], draw)


def _settled(
    apply: Callable[[FloatArray], FloatArray], found: Any, lessons: FloatArray | None, top: float
) -> tuple[bool, FloatArray | None]:
    """Whether `found` spans the null space of S A S (the probe), or does but for one null vector beside the
    lessons' sum `lessons` (None: it is in `found`), which comes second (`_beside_sum`)."""
    if _probe(apply, found):
        return True, None
    if lessons is None:
        return False, None
    beside = _with_column(found, lessons[:, None])
    if not _probe(apply, beside):
        return False, None
    return _beside_sum(apply, beside, lessons, top)


def _with_column(found: Any, column: FloatArray) -> Any:
    from scipy import sparse

    return np.hstack([found, column]) if isinstance(found, np.ndarray) else sparse.hstack([found, column]).tocsr()


def _beside_sum(
    apply: Callable[[FloatArray], FloatArray], beside: Any, c: FloatArray, top: float
) -> tuple[bool, FloatArray | None]:
    """A null vector missing from `beside` but for c (the lessons' sum, in S's coordinates): the probe passed with c
    in B = S A S + V V' (V: `beside`, c its last column), so that a lesson whose effects nearly always add up to
    the same (sessions of k lessons, a few with fewer) does not make the probe crawl. Then at most one null vector q
    orthogonal to the found ones is missing, and c'q is not 0: scaled to c'q = 1, B q = c. So q = B^-1 c, and
    it is one exactly when S A S q = 0 (`_is_null`; else none is missing). (False, None): the solve did not converge."""
    q, converged = _conjugate_gradients(lambda y: apply(y) + beside @ (beside.T @ y), c)
    norm = float(np.linalg.norm(q))
    if not converged or norm == 0.0:
        return False, None
    q = q / norm
    return True, (q if _is_null(float(q @ apply(q)), top) else None)


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
    apply: Callable[[FloatArray], FloatArray], found: FloatArray, lessons: FloatArray | None, top: float
) -> FloatArray | None:
    """`found` with the null vectors of S A S it misses, round after round until the check says none is left: each
    round LOBPCG's smallest eigenpairs orthogonal to what is known (a fixed start; a block twice as big after a
    round whose block was all null). Not preconditioned: S A S's diagonal is 1 already. The check deflates the
    eigenvectors found beside the null ones (`_projected`): a library's smallest nonzero eigenvalues (1e-3 of the
    largest) made the plain probe stall where nothing was missed. None when a round finds nothing new while the
    check still fails, after SEARCH_ROUNDS, or beyond DEFLATE_BUDGET."""
    from scipy.sparse.linalg import LinearOperator, lobpcg

    scipy_linalg("the estimability check")  # (its memory check; lobpcg imports scipy.linalg)
    p = found.shape[0]
    operator = LinearOperator(
        (p, p), matvec=lambda y: apply(np.ravel(y)), matmat=lambda y: _columns(apply, y), dtype=np.float64
    )
    rng = np.random.default_rng(SEED)
    probe = np.asarray(rng.standard_normal(p), dtype=np.float64)
    size, known = SEARCH_BLOCK, np.zeros((p, 0))  # known: eigenvectors of S A S beside the null space
    for _ in range(SEARCH_ROUNDS):
        size = min(size, max((p - found.shape[1] - known.shape[1]) // 5, 1))
        start = rng.standard_normal((p, size))
        beside = _extended(found, known)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (not converged: the check after decides)
            values, ritz = lobpcg(
                operator,
                start,
                Y=beside if beside.shape[1] else None,
                tol=SEARCH_TOL,
                maxiter=SEARCH_ITERATIONS,
                largest=False,
            )
        null = np.array([_is_null(float(value), top) for value in values], dtype=bool)
        residual = np.linalg.norm(_columns(apply, ritz) - ritz * values, axis=0)
        exact = ~null & (residual <= EIGENVECTOR_RESIDUAL * np.abs(values))
        if not null.any() and not exact.any():
            return None
        found = _extended(found, ritz[:, null])
        known = _extended(known, ritz[:, exact] - found @ (found.T @ ritz[:, exact]))
        if p * (found.shape[1] + known.shape[1]) > DEFLATE_BUDGET:
            return None
        if _conjugate_gradients(_projected(apply, _extended(found, known)), probe)[1]:
            return found
        settled, more = _settled(apply, found, lessons, top)  # (beside the lessons' sum too)
        if settled:
            return found if more is None else _extended(found, more[:, None])
        if null.all():
            size = 2 * size
    return None


def _projected(apply: Callable[[FloatArray], FloatArray], q: FloatArray) -> Callable[[FloatArray], FloatArray]:
    """y -> (I - Q Q') S A S (I - Q Q') y + Q Q' y (`q`: orthonormal columns, null vectors and eigenvectors of S A S
    whose residual is at most EIGENVECTOR_RESIDUAL of their eigenvalue). Singular, as S A S + N N' is, when a null
    vector q is missing: Q's eigenvectors are orthogonal to it but for that share, so (I - Q Q') q is null but for
    its square (1e-10 of the eigenvalue). Its other eigenvalues are S A S's beside Q's: no longer its smallest."""

    def deflated(y: FloatArray) -> FloatArray:
        inside = q.T @ y
        out = apply(y - q @ inside)
        result: FloatArray = out - q @ (q.T @ out) + q @ inside
        return result

    return deflated


def _is_null(value: float, top: float) -> bool:
    """Whether an eigenvalue (or a unit vector's Rayleigh quotient) of a positive semi-definite matrix whose largest
    eigenvalue is `top` is zero: at most NULL_EIGENVALUE of it, the one rule of every path (rounding of an exact
    dependency; a near one's is far above: S A S's smallest nonzero ones were 1e-3 to 0.1 in every library
    measured)."""
    return value <= NULL_EIGENVALUE * top


def _largest(apply: Callable[[FloatArray], FloatArray], p: int) -> float:
    """S A S's largest eigenvalue, to a few percent (power iteration from a fixed start; at least 1, its diagonal's)."""
    y = np.random.default_rng(SEED).standard_normal(p)
    value = 1.0
    for _ in range(LARGEST_STEPS):
        y = y / np.linalg.norm(y)
        out = apply(y)
        value = max(value, float(y @ out))
        y = out
        if not np.any(y):
            break
    return value


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
