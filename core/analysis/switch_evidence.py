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

Cost: per block, its groups' sessions before each moment tabled once (`block_tables`); per injection, one sum over
the groups where its column varies (the moment after it follows from it in a step); held, the injections told at a
time. Of moments or blocks that take the same (to 1e-11 of the spread: rounding apart), the earliest.
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
TABLE_MAX = 1 << 22  # groups x moments of a block up to which its groups' sessions before each moment are tabled


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


@dataclass(frozen=True)
class BlockTables:
    """A time block's sessions by baseline group, told once for every set of its injections (`block_tables`): each
    group's size, each session's place in its group (`rank`), and per moment t and group g (moments x groups) the
    share of its sessions before t (`before`: n0 / n) and the spread of a step from t within it (`spread`:
    n0 (n - n0) / n) when moments x groups are at most TABLE_MAX; else the sessions by (group, session) (`by_group`:
    group * (sessions + 1) + session) and each group's first there."""

    size: IntArray
    rank: IntArray
    before: FloatArray | None
    spread: FloatArray | None
    by_group: IntArray
    group_start: IntArray


def block_tables(group: IntArray) -> BlockTables:
    """`BlockTables` of a block whose sessions' baseline groups are `group` (codes 0..)."""
    m = len(group)
    stride = m + 1
    n_groups = int(group.max()) + 1 if m else 0
    size = np.bincount(group, minlength=n_groups).astype(np.int64)
    group_start = np.concatenate([[0], np.cumsum(size)[:-1]]).astype(np.int64)
    by_group = np.sort(group.astype(np.int64) * stride + np.arange(m))
    rank = np.empty(m, dtype=np.int64)
    rank[by_group % stride] = np.arange(m) - group_start[by_group // stride]
    if n_groups * stride > TABLE_MAX:
        return BlockTables(size, rank, None, None, by_group, group_start)
    n0 = np.zeros((stride, n_groups), dtype=np.float64)
    n0[np.arange(1, stride), group] = 1.0
    np.cumsum(n0, axis=0, out=n0)  # counts below 2**53: exact
    n = np.maximum(size, 1).astype(np.float64)
    spread = n0 * (n - n0) / n
    n0 /= n
    return BlockTables(size, rank, n0, spread, by_group, group_start)


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
    sessions' groups, and its injections as (session within the block, column) pairs, each pair once; a block may
    come in sets of its columns, told with the same array of its groups, whose `block_tables` are made once)."""
    within, apart = np.zeros(n_columns), np.zeros(n_columns)
    taken, at, on = np.zeros(n_columns), np.full(n_columns, -1, dtype=np.int64), np.zeros(n_columns, dtype=bool)
    tables, last = None, None
    for start, group, row, col in blocks:
        if tables is None or last is not group:  # the sets of one block's injections share its groups' array
            tables, last = block_tables(group), group
        b_within, b_apart, b_at, b_on = block_split(group, row, col, n_columns, tables)
        within += b_within
        apart += b_apart
        # the block whose step takes the most; of equal ones (to 1e-11 of the spread: rounding apart) the earliest
        better = (b_within - b_apart > taken + 1e-11 * within) | ((at < 0) & (b_within > 0))
        taken[better] = (b_within - b_apart)[better]
        at[better] = start + b_at[better]
        on[better] = b_on[better]
    return Evidence(within, apart, at, on)


def block_split(
    group: IntArray, row: IntArray, col: IntArray, n_columns: int, tables: BlockTables | None = None
) -> tuple[FloatArray, FloatArray, IntArray, npt.NDArray[np.bool_]]:
    """One time block (`group`: each of its sessions' baseline group; `row`, `col`: its injections; `tables`: the
    block's `block_tables`, made here if not told): per column, the spread within the groups where it varies, the
    least spread left once a step at one moment t (in the baseline of every group where it varies, by the same
    amount: a baseline change in time) is fitted beside the groups' means, that t (the step's first session, within
    the block), and whether the column is the more injected from t on. The moment is sought at each injection's
    session and the one after it (the ends of the runs where nothing changes but the share of sessions before t);
    of moments that take the same (to 1e-11 of the spread: rounding apart), the earliest."""
    m = len(group)
    within, apart = np.zeros(n_columns), np.zeros(n_columns)
    at, on = np.zeros(n_columns, dtype=np.int64), np.zeros(n_columns, dtype=bool)
    if m == 0 or len(row) == 0:
        return within, apart, at, on
    tb = block_tables(group) if tables is None else tables
    size, stride, n_groups = tb.size, m + 1, len(tb.size)
    entry = np.sort(col.astype(np.int64) * stride + row)  # by (column, session)
    e_col, e_row = entry // stride, entry % stride
    new = np.concatenate([[True], e_col[1:] != e_col[:-1]])
    cols, local = e_col[new], np.cumsum(new) - 1  # the columns told, coded 0..
    # the pairs (column, group) where the column varies: k of its n sessions injected, 0 < k < n
    key = local * n_groups + group[e_row]
    k = np.bincount(key, minlength=len(cols) * n_groups)
    varying = (k > 0) & (k < np.tile(size, len(cols)))
    pair = np.flatnonzero(varying)
    if not len(pair):
        return within, apart, at, on
    pair_col, pair_g, pair_k = pair // n_groups, pair % n_groups, k[pair]
    spread = np.bincount(pair_col, weights=pair_k * (size[pair_g] - pair_k) / size[pair_g], minlength=len(cols))
    within[cols], apart[cols] = spread, spread
    # its injections in those groups; the moments: each one's session e and the one after it. A step from t, each
    # indicator centred in its group, summed over the groups where the column varies: the products
    # sum_g k_g n0_g / n_g - (its injections before t), the step's squares sum_g n0_g (n_g - n0_g) / n_g. From e to
    # e + 1 only e's group gains a session before t (its place there: r of n), and one injection: the products
    # gain k / n - 1, the squares ((r + 1) (n - r - 1) - r (n - r)) / n = (n - 2 r - 1) / n
    keep = varying[key]
    e_local, e_row, e_key = local[keep], e_row[keep], key[keep]
    cov, var = _step_sums(tb, stride, e_local, e_row, pair_col, pair_g, pair_k.astype(np.float64))
    first_of = np.flatnonzero(np.concatenate([[True], e_local[1:] != e_local[:-1]]))  # each column's first
    cov -= np.arange(len(e_local)) - np.repeat(first_of, np.diff(np.append(first_of, len(e_local))))
    n = size[group[e_row]]
    both = np.empty((len(e_row), 2))  # the moments in time order per column: e, e + 1, e', e' + 1, ...
    both[:, 0], both[:, 1] = cov, cov + k[e_key] / n - 1.0
    cov = both.ravel()
    both = np.empty((len(e_row), 2))
    both[:, 0], both[:, 1] = var, var + (n - 2 * tb.rank[e_row] - 1) / n
    var = both.ravel()
    t = np.repeat(e_row, 2)
    t[1::2] += 1
    taken = np.where(var > 0, cov**2 / np.where(var > 0, var, 1.0), 0.0)
    # per column the earliest moment taking the most
    starts = 2 * first_of
    best, seg_col = np.maximum.reduceat(taken, starts), e_local[first_of]
    near = taken >= np.repeat(best - 1e-11 * spread[seg_col], np.diff(np.append(starts, len(t))))
    first = np.minimum.reduceat(np.where(near, np.arange(len(t)), len(t)), starts)
    told = cols[seg_col]
    apart[told] = np.maximum(within[told] - taken[first], 0.0)
    at[told] = t[first]
    on[told] = cov[first] > 0
    return within, apart, at, on


def _step_sums(
    tb: BlockTables,
    stride: int,
    cand_col: IntArray,
    cand_t: IntArray,
    pair_col: IntArray,
    pair_g: IntArray,
    pair_k: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """Per moment (its column `cand_col`, its time `cand_t`): sum_g k_g n0_g / n_g and sum_g n0_g (n_g - n0_g) / n_g
    over the (column, group) pairs where its column varies (`pair_*`, by column): the i-th group of every moment's
    column at a time (the moments of the columns with the most groups first), work and memory in proportion to the
    moments. (Dot products of the tables' rows with each column's k per group took as long at 7 groups.)"""
    n_local, n_groups = int(pair_col[-1]) + 1, len(tb.size)
    first_pair = np.searchsorted(pair_col, np.arange(n_local))
    count = np.bincount(pair_col, minlength=n_local)[cand_col]
    order = None if count.min() == count.max() else np.argsort(-count, kind="stable")
    if order is not None:
        count, cand_col, cand_t = count[order], cand_col[order], cand_t[order]
    base = first_pair[cand_col]
    cov, var = np.zeros(len(count)), np.zeros(len(count))
    for i in range(int(count[0])):
        active = int(np.searchsorted(-count, -i))  # those with more than i groups
        p = base[:active] + i
        g, t = pair_g[p], cand_t[:active]
        if tb.before is not None and tb.spread is not None:
            flat = t * n_groups + g
            cov[:active] += pair_k[p] * tb.before.ravel()[flat]
            var[:active] += tb.spread.ravel()[flat]
        else:
            n = tb.size[g]
            n0 = np.searchsorted(tb.by_group, g * stride + t) - tb.group_start[g]
            cov[:active] += pair_k[p] * (n0 / n)
            var[:active] += n0 * (n - n0) / n
    if order is None:
        return cov, var
    out_cov, out_var = np.empty_like(cov), np.empty_like(var)
    out_cov[order], out_var[order] = cov, var
    return out_cov, out_var
