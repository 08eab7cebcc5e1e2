"""A column identified only by time (`core.analysis.claims`, "Identified only by time"): within the
baseline groups its only variation is one switch in log order, at one moment per time block; and where
that switch happens, for the reasons `loo` prints and the policy's `joint_posterior.time_only`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]


def switched_in(x: Any, group: IntArray, block: IntArray | None = None) -> npt.NDArray[np.bool_]:
    """Per column of `x` (sessions x columns, scipy.sparse; `group`: each session's baseline group): its
    only variation within the baseline groups is one switch in log order, at one moment per time block
    (`block`: each session's; None: one block). In each block, among the sessions of the groups where
    the column varies (neither always nor never nonzero in the group), those with it all come before
    those without, or all after; True when that holds in every block where it varies (and there is
    one). Groups split by category or agent switch at the same moment."""
    return switches(x, group, block).timed


@dataclass(frozen=True)
class Switches:
    """Per column: `timed` (`switched_in`), the time blocks it varies in, and for a timed column that
    varies in one block the session (position) where the switch happens, the first on the later side
    (`at`, -1 otherwise), and whether it is injected from there on (`on`) or before it."""

    timed: npt.NDArray[np.bool_]
    blocks: IntArray
    at: IntArray
    on: npt.NDArray[np.bool_]


def switches(x: Any, group: IntArray, block: IntArray | None = None) -> Switches:
    """`switched_in`, with where each column switches (`Switches`)."""
    n, p = x.shape
    if n == 0 or p == 0:
        none = np.zeros(p, dtype=np.int64)
        return Switches(np.zeros(p, dtype=bool), none, none - 1, np.zeros(p, dtype=bool))
    order = np.argsort(group, kind="stable")  # sessions by group, in log order within each
    size = np.bincount(group).astype(np.int64)
    start = np.concatenate([[0], np.cumsum(size)[:-1]])
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - start[group[order]]  # each session's place in its group
    coo = x.tocoo()
    on = coo.data != 0
    keys = np.unique(coo.col[on].astype(np.int64) * len(size) + group[coo.row[on]])  # sorted, no duplicates
    col, g = keys // len(size), keys % len(size)
    cells = len(keys)
    # each entry's cell and place in its group, sorted; its index within the cell finds the gaps
    cell = np.searchsorted(keys, coo.col[on].astype(np.int64) * len(size) + group[coo.row[on]])
    place = rank[coo.row[on]]
    by = np.lexsort((place, cell))
    cell, place = cell[by], place[by]
    k = np.bincount(cell, minlength=cells)
    index = np.arange(len(cell)) - np.concatenate([[0], np.cumsum(k)[:-1]])[cell]
    from_end = k[cell] - 1 - index
    # the first place without the column: the first index whose place is not the index (else k)
    low_off = k.copy()
    gap = place != index
    np.minimum.at(low_off, cell[gap], index[gap])
    # the last place without it: counting from the end, the first place missing (else size - 1 - k)
    top = k.copy()
    gap = place != size[g][cell] - 1 - from_end
    np.minimum.at(top, cell[gap], from_end[gap])
    high_off = size[g] - 1 - top
    low_on, high_on = np.full(cells, n, dtype=np.int64), np.full(cells, -1, dtype=np.int64)
    np.minimum.at(low_on, cell, place)
    np.maximum.at(high_on, cell, place)
    varies = k < size[g]

    def session(cells: IntArray, q: IntArray) -> IntArray:  # the session at place q of each cell's group
        out: IntArray = order[start[g[cells]] + np.clip(q, 0, size[g[cells]] - 1)]
        return out

    time = np.zeros(n, dtype=np.int64) if block is None else block
    n_blocks = int(time.max()) + 1
    cb = (
        col * n_blocks + time[session(np.arange(cells), np.zeros(cells, dtype=np.int64))]
    )  # groups lie within one block
    cb, v = cb[varies], np.flatnonzero(varies)
    uniq, which = np.unique(cb, return_inverse=True)
    m = len(uniq)
    on_first, on_last = np.full(m, n), np.full(m, -1)
    off_first, off_last = np.full(m, n), np.full(m, -1)
    np.minimum.at(on_first, which, session(v, low_on[v]))
    np.maximum.at(on_last, which, session(v, high_on[v]))
    np.minimum.at(off_first, which, session(v, low_off[v]))
    np.maximum.at(off_last, which, session(v, high_off[v]))
    one_step = (on_last < off_first) | (on_first > off_last)
    owner = uniq // n_blocks
    varying = np.bincount(owner, minlength=p)
    steps = np.bincount(owner[one_step], minlength=p)
    timed: npt.NDArray[np.bool_] = (varying > 0) & (steps == varying)
    single = one_step & (varying[owner] == 1)  # the one block a column varies in, when it switches there
    at, on = np.full(p, -1, dtype=np.int64), np.zeros(p, dtype=bool)
    at[owner[single]] = np.where(on_last < off_first, off_first, on_first)[single]
    on[owner[single]] = (on_first > off_last)[single]
    return Switches(timed, varying.astype(np.int64), at, on)
