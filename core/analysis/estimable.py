"""Which columns of the injection design no fit can estimate: a column whose centred injections are a combination
of other columns' (the baselines taken out: categories, time blocks, agents), so that its coefficient moves with
theirs and only a prior sets how the data's effect is shared out among them (core/analysis/claims.py).

A coefficient b_j is estimable exactly when e_j lies in the range of A = X~'X~ (the centred Gram matrix), i.e. when
every vector v with X~ v = 0 (a null vector of A) has v_j = 0. Such a v names the columns the dependency ties
together: its nonzero entries.

- Up to `DENSE_MAX` columns (the fit's exact path): the null space of A from one eigen-decomposition, exact.
- Beyond, each column's neighbourhood (core/analysis/neighbourhoods.py: itself and the 16 columns most correlated
  with it): a null vector of a principal submatrix A_NN is one of A (v' A_NN v = |X~_N v|^2 = 0), so what this finds
  is a true dependency; a tie of more than 17 lessons, or to lessons outside the neighbourhood, is not found there
  (a known gap: a review tied 30 of 700 lessons so, and they kept intervals).

Every session injecting as many lessons (a bandit drawing k) makes the lessons' sum constant: that direction is no
tie, the fit pins the lessons' mean with its prior and estimates them against it (`_without_common`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from lesson_credit.core.base.memory import scipy_linalg
from lesson_credit.core.base.numbers import listed

if TYPE_CHECKING:
    from lesson_credit.core.analysis.joint_ops import Centred
    from lesson_credit.core.analysis.neighbourhoods import Neighbourhoods

FloatArray = npt.NDArray[np.float64]

NULL_EIGENVALUE = 1e-10  # an eigenvalue at most this share of the largest is zero (rounding of an exact dependency)
NULL_SHARE = 1e-6  # a column takes part in a dependency when its share of a null vector is above this


def not_estimable(op: Centred, dense: bool, hoods: Neighbourhoods | None) -> dict[int, tuple[int, ...]]:
    """Per column of `op` that no fit can estimate: the other columns its dependency ties it to (sorted)."""
    if op.p == 0:
        return {}
    if dense or hoods is None:
        return _from_null_space(_without_common(_null_space(op.gram_dense())))
    return _from_neighbourhoods(hoods)


def _without_common(null: FloatArray) -> FloatArray:
    """The null space's vectors as ties between columns. When the lessons' common direction is in it (every
    session injects as many of them: only their differences show, and the fit pins their mean with its prior,
    core/analysis/claims.py `_common_prior`), the lessons are estimated against their mean, as they always were:
    that direction is no tie. What else is null (a tie of a few lessons beside it) is kept, each vector with the
    common direction added so that the columns it does not tie are 0: made orthogonal to the common direction, a
    tie moves every column it leaves out by one same amount (the mean's share), the value most columns take."""
    p = null.shape[0]
    u = np.full(p, 1.0 / np.sqrt(p))
    along = null.T @ u
    if null.shape[1] == 0 or float(np.sqrt(along @ along)) < 1.0 - NULL_SHARE:  # u is not in the null space
        return null
    rest = null - np.outer(u, along)  # each basis vector with its part along u taken out
    q, r = np.linalg.qr(rest)
    ties = q[:, np.abs(np.diag(r)) > NULL_SHARE]
    out = np.zeros_like(ties)
    for k in range(ties.shape[1]):
        w = ties[:, k]
        scale = float(np.max(np.abs(w)))
        values, counts = np.unique(np.round(w / scale, 9), return_counts=True)
        out[:, k] = w - values[int(np.argmax(counts))] * scale  # (the columns left out: 0)
    return out


def _null_space(a: FloatArray) -> FloatArray:
    """An orthonormal basis (columns) of the null space of the symmetric positive semi-definite `a`."""
    d, v = scipy_linalg("the joint fit").eigh(a, check_finite=False)
    top = float(np.max(np.abs(d))) if len(d) else 0.0
    basis: FloatArray = v[:, d <= NULL_EIGENVALUE * top] if top > 0 else v
    return basis


def _from_null_space(null: FloatArray) -> dict[int, tuple[int, ...]]:
    if null.shape[1] == 0:
        return {}
    share = np.sqrt(np.sum(null * null, axis=1))  # |P e_j|, P the projector on the null space: rotation-free
    out: dict[int, tuple[int, ...]] = {}
    flagged = share > NULL_SHARE * max(float(share.max()), 1.0)
    for j in np.flatnonzero(flagged).tolist():
        tied = flagged & (np.abs(null @ null[j]) > NULL_SHARE)  # row j of P: the flagged columns a null vector ties
        tied[j] = False
        out[j] = tuple(np.flatnonzero(tied).tolist())
    return out


def _from_neighbourhoods(hoods: Neighbourhoods) -> dict[int, tuple[int, ...]]:
    out: dict[int, tuple[int, ...]] = {}
    valid = hoods.index >= 0
    for j in range(len(hoods.index)):
        members = hoods.index[j][valid[j]]
        null = _null_space(hoods.block[j][np.ix_(valid[j], valid[j])])
        if null.shape[1] == 0 or float(np.sqrt(np.sum(null[0] ** 2))) <= NULL_SHARE:  # j is first in its own
            continue
        tied = np.abs(null @ null[0]) > NULL_SHARE
        tied[0] = False
        out[j] = tuple(sorted(members[tied].tolist()))
    return out


def confounded_reason(names: list[str]) -> str:
    """Why a column no fit can estimate claims nothing (`names`: the lessons its dependency ties it to)."""
    shown = listed(names, 3)
    with_whom = f"those of {shown}, with the baselines" if names else "the baselines"
    return (
        f"not estimable: its injections are a combination of {with_whom} (categories, time blocks, agents), so no "
        "fit can tell its effect from theirs"
    )
