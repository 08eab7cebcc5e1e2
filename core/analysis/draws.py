"""Draws: sets of lessons the log sees only against each other (core/analysis/estimable.py finds the null space of
the injection design; a null direction that is a set's size-weighted sum is a draw, not a tie). Each draw's lessons
are estimated against their own average, the fit pinning that average with its prior (core/analysis/claims.py
`_common_prior`); docs/estimates.md, its first section."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from lesson_credit.core.analysis.joint_ops import Centred

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

NULL_SHARE = 1e-6  # a column takes part in a dependency when its share of a null vector is above this
DRAW_MIN = 3  # lessons of a draw beside lessons outside it (two: one difference, said as their tie)


def common_direction(sizes: FloatArray) -> FloatArray:
    """The lessons' common direction among columns of `sizes` lessons each (a group's column holds each member's
    share, 1 / its size: a session's count of lessons is sum_j size_j x_j), normalised."""
    out: FloatArray = sizes / float(np.linalg.norm(sizes))
    return out


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
    (`parts_of`): a column null on its own (e_j in the null space: a baseline combination) is in none, and the rest
    split where no null vector links them, so that two draws (2 of 4 lessons and 1 of 3 in every session) are two,
    each against its own average, and a lesson tied to the baselines beside a draw leaves the draw one (its count
    per session then varies). The lessons are counted, not the columns (`lessons`: per column, the lesson it holds;
    None: one each): a lesson's first sessions set apart (`core.analysis.early`) are a second column of the same
    lesson, and a pair split so is still a pair. `labels` after `ties`: per column its draw (-1: none)."""

    def __init__(self, op: Centred, sizes: FloatArray, lessons: IntArray | None = None) -> None:
        self.op, self.sizes = op, sizes
        self.lessons = np.arange(op.p) if lessons is None else lessons
        self.labels = np.full(op.p, -1, dtype=np.int64)

    @property
    def drawn(self) -> npt.NDArray[np.bool_]:
        out: npt.NDArray[np.bool_] = self.labels >= 0
        return out

    def ties(self, null: FloatArray, where: IntArray | None = None) -> FloatArray:
        """The null space's vectors (on the columns `where`, all when None) as ties: each draw's direction, when it
        is in their span, taken out (`without_common`) and its columns kept in `labels`."""
        if null.shape[1] == 0:
            return null
        at = np.arange(self.op.p) if where is None else where
        sizes = self.sizes[at]
        parts, alone = parts_of(null)
        found: list[tuple[FloatArray, npt.NDArray[np.bool_]]] = []
        for chosen in parts:
            u = common_direction(sizes * chosen)
            along = null.T @ u
            whole = len(at) == self.op.p and bool(np.all(chosen | alone))  # every lesson not tied on its own
            if float(np.sqrt(along @ along)) >= 1.0 - NULL_SHARE and self._is_draw(at[chosen], whole):
                self.labels[at[chosen]] = int(self.labels.max()) + 1
                found.append((u, chosen))
        return without_common(null, found) if found else null

    def _is_draw(self, columns: IntArray, whole: bool) -> bool:
        if whole:  # every lesson (but those tied on their own): a count constant within each baseline group
            return True
        if len(np.unique(self.lessons[columns])) < DRAW_MIN:  # a pair's one contrast is its tie, naming the other
            return False
        weights = np.zeros(self.op.p)
        weights[columns] = self.sizes[columns]
        count = np.asarray(self.op.x @ weights).ravel()  # lessons of the set each session injects
        return bool(count.min() >= 1.0 - NULL_SHARE)  # (the same within each baseline group: the set's sum is null)


def parts_of(null: FloatArray) -> tuple[list[npt.NDArray[np.bool_]], npt.NDArray[np.bool_]]:
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


def without_common(null: FloatArray, found: list[tuple[FloatArray, npt.NDArray[np.bool_]]]) -> FloatArray:
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
