"""How much of what the data say of a lesson is not one switch in time (`core.analysis.switches`, docs/estimates.md
"A switch inside a block").

Within its baseline groups (a category, an agent and a time block) the fit learns a lesson's effect from how its
injections vary there: group by group, the spread of its injection indicator about the group's mean, k (n - k) / n
for k sessions with it among n (`within`, summed over the groups where it varies: its precision, per unit of noise,
as the fit weighs it on its own). A change of the baseline at one moment inside a block is fitted by nothing: a
lesson injected after that moment and not before (or the reverse) takes it. So per time block a step at one moment
(in every group where the lesson varies, by one amount, as a baseline change in time is) is fitted beside the
groups' means, at the moment where it takes the most of the lesson's spread; what the spread keeps (`apart`, summed
over the blocks) is what the contrasts that are NOT a single before/after switch carry. A lesson switched on
mid-block and injected in every session after keeps 0; one stray injection elsewhere keeps about one session's worth
(k (n - k) / n for one session among n), however many sessions the switch holds; a lesson injected at random keeps
nearly all of it; one switched on at one moment in a category and off at another moment in another keeps much (one
step moves their contrasts in opposite ways).

Two steps decide (`switches.with_stray_evidence`). `Evidence.by_time`, within the groups: what is left is less than
`SHARE_MIN` of the spread. Then `left_by_fit`, in the fit: its precision about the fit's baselines (added, not per
group: far more than within the groups when they are small, where every sparse lesson's contrast looks like a
switch) and what is left of it beside a step from its main switch to the log's end, under the same limit. (No floor
besides: `claims.MIN_SESSIONS` sessions with and without it are asked of every lesson, and one of 5 in 10 sessions
in turn holds 2.5, of which any step takes a little.) The fit's estimate
weighs the switch's contrast by the share it takes, so a baseline step there moves it by about that share of the
step: at most a third with SHARE_MIN at two thirds (at a half, three stray sessions beside a short switch passed,
and their intervals excluded 0 in 4 of 40 worlds). Told on the nonzero pattern of each column (a group's column: any
member injected).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SHARE_MIN = 2 / 3  # what varies besides one switch per block must hold at least this share of the precision
PAIR_CHUNK = 1 << 21  # (candidate moment, group) pairs told at a time in a block
TABLE_MAX = 1 << 23  # groups x sessions of a block up to which each group's count before each moment is tabled


@dataclass(frozen=True)
class Evidence:
    """Per column: `within` (its precision within the baseline groups, in sessions), `apart` (what is left of it
    once a step at one moment per block is fitted beside them), the first session (position in the log) after the
    step of the block where it takes the most (`at`, -1: no variation) and whether the column is the more injected
    from there on (`on`)."""

    within: FloatArray
    apart: FloatArray
    at: IntArray
    on: npt.NDArray[np.bool_]

    def by_time(self) -> npt.NDArray[np.bool_]:
        """Varying within its groups, and what is left apart from one switch per block is less than SHARE_MIN of
        its spread there: nearly all of it is switches, as the groups see it."""
        out: npt.NDArray[np.bool_] = (self.within > 1e-12) & (self.apart < SHARE_MIN * self.within - 1e-12)
        return out


def left_by_fit(
    x: Any,
    z: Any,
    factors: tuple[IntArray, IntArray | None],
    group: IntArray,
    block: IntArray | None,
    at: IntArray,
    columns: IntArray,
) -> tuple[FloatArray, FloatArray]:
    """Per column in `columns`: its precision in the fit (its injection indicator's spread about the fit's baselines,
    x'x - (Z'x)' (Z'Z)^+ Z'x, `z` the fit's baseline indicators: a category's, an agent's and a block's added, so
    far more than within the groups when they are small) and what is left of it beside a step in the baseline
    from its switch (`at`: its first session) on, in the categories and agents where it varies in that block, to
    the log's end: the blocks' baselines take such a step where the blocks after it begin only when it is in every
    category and agent; in some only, it persists into the later blocks, as the lesson does (`factors`: each
    session's category and agent; `group`, `block`: its baseline group and time block)."""
    from lesson_credit.core.analysis.joint_ops import baseline_inverse

    csc = x.tocsc()
    n = len(group)
    category, agent = factors
    agents = np.zeros(n, dtype=np.int64) if agent is None else agent
    pair = category.astype(np.int64) * (int(agents.max()) + 1) + agents  # each session's category and agent
    time = np.zeros(n, dtype=np.int64) if block is None else block
    size = np.bincount(group)
    pair_of = np.zeros(len(size), dtype=np.int64)
    pair_of[group] = pair
    zt = z.T.tocsr()
    ginv, _ = baseline_inverse(np.asarray((z.T @ z).toarray(), dtype=np.float64))
    total, left = np.zeros(len(columns)), np.zeros(len(columns))
    for i, c in enumerate(columns.tolist()):
        span = slice(csc.indptr[c], csc.indptr[c + 1])
        rows = csc.indices[span][csc.data[span] != 0]
        on = np.zeros(n)
        on[rows] = 1.0
        t = min(int(at[c]), n - 1)
        inside = rows[time[rows] == time[t]]
        k = np.bincount(group[inside], minlength=len(size))
        varies = np.flatnonzero((k > 0) & (k < size))
        step = ((np.arange(n) >= t) & np.isin(pair, pair_of[varies])).astype(np.float64)
        zx, zs = zt @ on, zt @ step
        total[i] = len(rows) - zx @ ginv @ zx
        spread = float(step.sum() - zs @ ginv @ zs)
        cross = float(on @ step - zx @ ginv @ zs)
        left[i] = total[i] - (cross**2 / spread if spread > 1e-9 else 0.0)
    return total, left


def evidence(blocks: Iterable[tuple[int, IntArray, IntArray, IntArray]], n_columns: int) -> Evidence:
    """`Evidence` from the time blocks one at a time (`blocks`: each block's first session's position in the log, its
    sessions' groups, and its injections as (session within the block, column) pairs, each pair once)."""
    within, apart = np.zeros(n_columns), np.zeros(n_columns)
    taken, at, on = np.zeros(n_columns), np.full(n_columns, -1, dtype=np.int64), np.zeros(n_columns, dtype=bool)
    for start, group, row, col in blocks:
        b_within, b_apart, b_at, b_on = block_split(group, row, col, n_columns)
        within += b_within
        apart += b_apart
        better = (b_within - b_apart > taken) | ((at < 0) & (b_within > 0))
        taken[better] = (b_within - b_apart)[better]
        at[better] = start + b_at[better]
        on[better] = b_on[better]
    return Evidence(within, apart, at, on)


def block_split(
    group: IntArray, row: IntArray, col: IntArray, n_columns: int
) -> tuple[FloatArray, FloatArray, IntArray, npt.NDArray[np.bool_]]:
    """One time block (`group`: each of its sessions' baseline group; `row`, `col`: its injections): per column, the
    spread within the groups where it varies, the least spread left once a step at one moment t (in the baseline of
    every group where it varies, by the same amount: a baseline change in time) is fitted beside the groups' means,
    that t (the step's first session, within the block), and whether the column is the more injected from t on.
    The moment is sought at each injection's session and the one after it (the ends of the runs where nothing
    changes but the share of sessions before t)."""
    m = len(group)
    within, apart = np.zeros(n_columns), np.zeros(n_columns)
    at, on = np.zeros(n_columns, dtype=np.int64), np.zeros(n_columns, dtype=bool)
    if m == 0 or len(row) == 0:
        return within, apart, at, on
    n_groups = int(group.max()) + 1
    size = np.bincount(group, minlength=n_groups)
    # the pairs (column, group) where the column varies, and their injections sorted by (column, group, session)
    key = col.astype(np.int64) * n_groups + group[row]
    k = np.bincount(key, minlength=n_columns * n_groups)
    varying = (k > 0) & (k < np.tile(size, n_columns))
    pair = np.flatnonzero(varying)
    if not len(pair):
        return within, apart, at, on
    np.add.at(within, pair // n_groups, k[pair] * (size[pair % n_groups] - k[pair]) / size[pair % n_groups])
    apart[:] = within
    keep = varying[key]
    stride = m + 1
    entry_sorted = np.sort(key[keep] * stride + row[keep])  # by (column, group, session)
    e_key, e_row = entry_sorted // stride, entry_sorted % stride
    # each group's sessions before each moment (a table when small, else a search of the sessions by group)
    table = None
    if n_groups * stride <= TABLE_MAX:
        table = np.zeros((n_groups, stride), dtype=np.int64)
        table[group, np.arange(1, stride)] = 1
        np.cumsum(table, axis=1, out=table)
    session_sorted = np.sort(group.astype(np.int64) * stride + np.arange(m))
    group_start = np.concatenate([[0], np.cumsum(size)[:-1]])
    # candidate moments per column: each injection's session and the one after it
    cand = np.concatenate([(e_key // n_groups) * stride + e_row, (e_key // n_groups) * stride + e_row + 1])
    cand.sort()
    cand = cand[np.concatenate([[True], cand[1:] != cand[:-1]])]
    cand_col, cand_t = cand // stride, cand % stride
    pair_col = pair // n_groups
    first_pair = np.searchsorted(pair_col, np.arange(n_columns))
    pairs_of = np.bincount(pair_col, minlength=n_columns)
    per_cand = pairs_of[cand_col]
    pair_base = np.searchsorted(entry_sorted, pair * stride)  # each pair's first injection
    cov, var = np.zeros(len(cand)), np.zeros(len(cand))
    for lo, hi in _chunks(per_cand, PAIR_CHUNK):
        reps = per_cand[lo:hi]
        c_index = np.repeat(np.arange(lo, hi), reps)
        offset = np.arange(len(c_index)) - np.repeat(np.cumsum(reps) - reps, reps)
        index = first_pair[cand_col[c_index]] + offset
        p = pair[index]
        g, t = p % n_groups, cand_t[c_index]
        n0 = table[g, t] if table is not None else np.searchsorted(session_sorted, g * stride + t) - group_start[g]
        k0 = np.searchsorted(entry_sorted, p * stride + t) - pair_base[index]
        n, n1 = size[g], size[g] - n0
        # the step's indicator (1 from t on) and the column's, each centred in its group: their products and the
        # step's squares, summed over the groups
        cov[lo:hi] = np.bincount(c_index - lo, weights=(k[p] - k0) - k[p] * n1 / n, minlength=hi - lo)
        var[lo:hi] = np.bincount(c_index - lo, weights=n0 * n1 / n, minlength=hi - lo)
    taken = np.where(var > 0, cov**2 / np.maximum(var, 1e-300), 0.0)
    # the most taken per column (ties: the earliest moment), and which side is the more injected there
    order = np.lexsort((cand_t, -taken, cand_col))
    first = order[np.concatenate([[True], cand_col[order][1:] != cand_col[order][:-1]])]
    cols = cand_col[first]
    apart[cols] = np.maximum(within[cols] - taken[first], 0.0)
    at[cols] = cand_t[first]
    on[cols] = cov[first] > 0
    return within, apart, at, on


def _chunks(weights: IntArray, limit: int) -> list[tuple[int, int]]:
    """Consecutive ranges of indices whose weights add up to about `limit` (each at least one index)."""
    total = np.cumsum(weights)
    out, lo = [], 0
    while lo < len(weights):
        done = total[lo - 1] if lo else 0
        hi = max(int(np.searchsorted(total, done + limit, side="right")), lo + 1)
        out.append((lo, hi))
        lo = hi
    return out
