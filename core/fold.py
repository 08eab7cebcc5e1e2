"""Posteriors as a pure fold of the event log (SPEC 5-6), vectorised over integer arm indices.

`core.index.LogIndex` turns events into columns as they are read and hands out `FoldData`
snapshots. `fold()` is a pure function of a snapshot and the credit settings, so a what-if,
a regrade or a preview is just another call with other arguments. Per-arm sums are kept per
block of sessions (`BlockCache`), so a new grade or session only recomputes one block.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from core import credit as credit_mod
from core.store import LogProblem

if TYPE_CHECKING:
    from core.index import Graders

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CreditSettings:
    """How evidence is counted. Validated on construction, so a bad config fails early."""

    strategy: str = credit_mod.DEFAULT_STRATEGY
    floor: float = credit_mod.DEFAULT_FLOOR
    decay: float = 1.0  # gamma in (0, 1]; 1 means no decay
    prior_alpha: float = 1.0
    prior_beta: float = 1.0

    def __post_init__(self) -> None:
        credit_mod.check_strategy(self.strategy)
        credit_mod.check_unit(self.floor, "floor")
        if not (0.0 < self.decay <= 1.0):
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        for name in ("prior_alpha", "prior_beta"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number, got {value!r}")

    def with_(self, **changes: object) -> CreditSettings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})  # type: ignore[arg-type]


@dataclass(frozen=True)
class FoldData:
    """What the fold needs, as arrays. Shared read-only with the UI."""

    arm_ids: tuple[str, ...]
    entry_arm: npt.NDArray[np.int32]
    entry_salience: FloatArray
    entry_session: npt.NDArray[np.int32]
    session_start: IntArray  # entries of session i are [start[i], start[i+1])
    base: FloatArray  # effective base reward per session (latest grade); NaN = pending
    grader_source: Graders = field(repr=False, compare=False)
    prior_alpha: FloatArray  # NaN where no prior event set the arm's start
    prior_beta: FloatArray
    prior_n: IntArray
    prior_rewards: IntArray
    problems: tuple[LogProblem, ...] = ()
    blocks: BlockCache = field(default_factory=lambda: BlockCache(), repr=False, compare=False)

    @property
    def n_arms(self) -> int:
        return len(self.arm_ids)

    @property
    def n_sessions(self) -> int:
        return len(self.base)

    @cached_property
    def graders(self) -> tuple[str | None, ...]:
        """Who gave each session its grade in force (None: pending). Built on first use."""
        return self.grader_source.every(self.base)

    def grader(self, row: int) -> str | None:
        """Who gave one session its grade in force (None: pending), without building them all."""
        if self.__dict__.get("graders") is not None:
            return self.graders[row]
        return self.grader_source.of(row, float(self.base[row]))

    @cached_property
    def own_blocks(self) -> list[_Block]:
        """The blocks' sums under this snapshot's grades, kept in the shared block cache."""
        return _blocks(self, self.base, keep=True)

    @cached_property
    def stats(self) -> ArmStats:
        """Per-arm sums under this snapshot's grades (computed once, then shared by what-ifs)."""
        return arm_stats(self, self.base)


@dataclass(frozen=True)
class Posterior:
    """Per-arm Beta posterior after a fold. Arrays are indexed like `arm_ids`.

    `rewarded` and `last_session` are only needed for the state file and the status table,
    so they are computed on first use rather than on every (what-if, preview) fold.
    """

    arm_ids: tuple[str, ...]
    alpha: FloatArray
    beta: FloatArray
    n: IntArray
    settings: CreditSettings
    graded_sessions: int
    data: FoldData = field(repr=False, compare=False)
    base: FloatArray = field(repr=False, compare=False)  # the per-session rewards folded

    @property
    def mean(self) -> FloatArray:
        result: FloatArray = self.alpha / (self.alpha + self.beta)
        return result

    def index(self) -> dict[str, int]:
        return {arm: i for i, arm in enumerate(self.arm_ids)}

    @cached_property
    def rewarded(self) -> IntArray:
        """Graded sessions whose credited reward exceeded 0.5 (gptme's total_rewards)."""
        data = self.data
        counts = np.zeros(data.n_arms, dtype=np.int64)
        for block in blocks_of(data, self.base):
            part = block.rewarded(data, self.settings)
            counts[: len(part)] += part
        result: IntArray = data.prior_rewards + counts
        return result

    @cached_property
    def last_session(self) -> IntArray:
        """Row of each arm's latest graded session, -1 if none."""
        data = self.data
        last = np.full(data.n_arms, -1, dtype=np.int64)
        for block in blocks_of(data, self.base):
            part = block.sums.last
            np.maximum(last[: len(part)], part, out=last[: len(part)])
        return last


BLOCK_ROWS = 1 << 16  # sessions per block of the per-arm sums


@dataclass(frozen=True, eq=False)
class BlockSums:
    """Per-arm sums over one block of sessions, under the rewards they were computed from."""

    base: FloatArray  # the block's session rewards (NaN = pending)
    n: FloatArray  # graded sessions the arm was injected in
    sum_base: FloatArray
    sum_base_salience: FloatArray
    sum_salience: FloatArray
    last: IntArray  # row of the arm's latest graded session in the block, -1 if none
    rewarded: dict[tuple[str, float], IntArray] = field(default_factory=dict)  # by (strategy, floor)


class BlockCache:
    """Per-arm sums of fixed blocks of BLOCK_ROWS sessions, reused while a block's rewards stay the same.

    Every fold sums the blocks in order, whether they come from here, from the parsed-log
    cache or were just computed, so the numbers never depend on what was cached. A new grade
    only recomputes its session's block; an appended session only the last block."""

    def __init__(self) -> None:
        self.sums: dict[tuple[int, int], BlockSums] = {}  # (block, sessions in it) -> sums
        self.usage: dict[tuple[int, int], BlockUsage] = {}  # (block, sessions in it) -> usage counts


@dataclass(frozen=True, eq=False)
class BlockUsage:
    """Per arm, over one block of sessions, graded or not: what does not depend on rewards."""

    injected: IntArray  # entries of the arm (sessions it was injected in)
    salient: IntArray  # of those, entries with salience > 0
    salience: FloatArray  # sum of salience


def lesson_usage(data: FoldData) -> BlockUsage:
    """Usage counts of every arm over the whole log, added up block by block (cached per block:
    entries never change once read)."""
    injected = np.zeros(data.n_arms, dtype=np.int64)
    salient = np.zeros(data.n_arms, dtype=np.int64)
    salience = np.zeros(data.n_arms)
    for index, lo, hi in block_ranges(data.n_sessions):
        usage = data.blocks.usage.get((index, hi - lo))
        if usage is None:
            start, stop = int(data.session_start[lo]), int(data.session_start[hi])
            arms, values = data.entry_arm[start:stop], data.entry_salience[start:stop]
            usage = data.blocks.usage[(index, hi - lo)] = BlockUsage(
                injected=np.bincount(arms, minlength=data.n_arms).astype(np.int64),
                salient=np.bincount(arms[values > 0], minlength=data.n_arms).astype(np.int64),
                salience=_sum_by_arm(arms, values, data.n_arms),
            )
        k = len(usage.injected)
        injected[:k] += usage.injected
        salient[:k] += usage.salient
        salience[:k] += usage.salience
    return BlockUsage(injected, salient, salience)


@dataclass(frozen=True)
class _Block:
    index: int
    lo: int  # rows [lo, hi)
    hi: int
    sums: BlockSums

    def rewarded(self, data: FoldData, settings: CreditSettings) -> IntArray:
        key = (settings.strategy, settings.floor)
        counts = self.sums.rewarded.get(key)
        if counts is None:
            start, stop = int(data.session_start[self.lo]), int(data.session_start[self.hi])
            graded = ~np.isnan(self.sums.base)
            sizes = np.diff(data.session_start[self.lo : self.hi + 1])
            rows = np.repeat(graded, sizes)
            w = credit_mod.weight(data.entry_salience[start:stop][rows], settings.floor)
            credited = credit_mod.credited_reward(np.repeat(self.sums.base, sizes)[rows], w, settings.strategy)
            arms = data.entry_arm[start:stop][rows]
            counts = np.bincount(arms[credited > 0.5], minlength=data.n_arms).astype(np.int64)
            self.sums.rewarded[key] = counts
        return counts


def blocks_of(data: FoldData, base: FloatArray) -> list[_Block]:
    """The blocks of sessions with their per-arm sums under `base`: cached where a block's
    rewards are unchanged, else computed (and kept when `base` is the snapshot's own)."""
    if base is data.base:
        return data.own_blocks
    return _blocks(data, base, keep=False)


def _blocks(data: FoldData, base: FloatArray, keep: bool) -> list[_Block]:
    out = []
    for index, lo, hi in block_ranges(data.n_sessions):
        key = (index, hi - lo)
        sums = data.blocks.sums.get(key)
        # byte-equal rewards are the same rewards (a different NaN payload or -0.0 only recomputes)
        if sums is None or sums.base.tobytes() != base[lo:hi].tobytes():
            sums = _block_sums(data, base, lo, hi)
            if keep:
                data.blocks.sums[key] = sums
        out.append(_Block(index, lo, hi, sums))
    return out


def block_ranges(n_sessions: int) -> list[tuple[int, int, int]]:
    """(block number, first row, end row) of each block of BLOCK_ROWS sessions."""
    return [(index, lo, min(lo + BLOCK_ROWS, n_sessions)) for index, lo in enumerate(range(0, n_sessions, BLOCK_ROWS))]


def _block_sums(data: FoldData, base: FloatArray, lo: int, hi: int) -> BlockSums:
    start, stop = int(data.session_start[lo]), int(data.session_start[hi])
    arms, salience = data.entry_arm[start:stop], data.entry_salience[start:stop]
    block_base = np.array(base[lo:hi], dtype=np.float64)
    graded_rows = ~np.isnan(block_base)
    sizes = np.diff(data.session_start[lo : hi + 1])
    entry_base = np.repeat(np.where(graded_rows, block_base, 0.0), sizes)  # 0 for pending
    graded = np.repeat(graded_rows, sizes)
    n_arms = data.n_arms
    last = np.full(n_arms, -1, dtype=np.int64)
    np.maximum.at(last, arms[graded], data.entry_session[start:stop][graded].astype(np.int64))
    block_base.flags.writeable = False
    return BlockSums(
        base=block_base,
        n=_sum_by_arm(arms, graded, n_arms),
        sum_base=_sum_by_arm(arms, entry_base, n_arms),
        sum_base_salience=_sum_by_arm(arms, entry_base * salience, n_arms),
        sum_salience=_sum_by_arm(arms, salience * graded, n_arms),
        last=last,
    )


def _sum_by_arm(arms: npt.NDArray[np.int32], weights: npt.NDArray[Any], n_arms: int) -> FloatArray:
    return np.bincount(arms, weights=weights, minlength=n_arms).astype(np.float64, copy=False)


@dataclass(frozen=True)
class ArmStats:
    """Per-arm sums over graded sessions. Without decay every strategy's posterior is a linear
    function of these, so a what-if over strategy or floor costs O(arms), not O(entries)."""

    n: FloatArray  # graded sessions the arm was injected in
    sum_base: FloatArray  # sum of base rewards
    sum_base_salience: FloatArray  # sum of base * salience
    sum_salience: FloatArray  # sum of salience
    graded_sessions: int


def arm_stats(data: FoldData, base: FloatArray) -> ArmStats:
    """The per-arm sums: each block's, added up in block order (the same order every time)."""
    totals = np.zeros((4, data.n_arms))
    for block in blocks_of(data, base):
        sums = block.sums
        k = len(sums.n)
        totals[0, :k] += sums.n
        totals[1, :k] += sums.sum_base
        totals[2, :k] += sums.sum_base_salience
        totals[3, :k] += sums.sum_salience
    return ArmStats(
        n=totals[0],
        sum_base=totals[1],
        sum_base_salience=totals[2],
        sum_salience=totals[3],
        graded_sessions=int(np.count_nonzero(~np.isnan(base))),
    )


def salience_in(data: FoldData, rows: IntArray, arms: IntArray) -> FloatArray:
    """For each (session row, arm) pair: the salience of the arm's first entry in that session
    (NaN where the session has none), for many pairs at once."""
    out = np.full(len(rows), np.nan)
    if not len(rows):
        return out
    starts = data.session_start[rows]
    sizes = data.session_start[rows + 1] - starts
    owner = np.repeat(np.arange(len(rows)), sizes)
    entry = np.repeat(starts - np.cumsum(sizes) + sizes, sizes) + np.arange(int(sizes.sum()))
    found = np.flatnonzero(data.entry_arm[entry] == np.asarray(arms)[owner])
    pairs, first = np.unique(owner[found], return_index=True)
    out[pairs] = data.entry_salience[entry[found[first]]]
    return out


def fold(data: FoldData, settings: CreditSettings, base: FloatArray | None = None) -> Posterior:
    """Fold the whole log under `settings`; `base` overrides the per-session rewards (what-if).

    With w = floor + (1 - floor) * salience, the sums of w*base and of w over an arm's sessions
    are floor*sum(base) + (1-floor)*sum(base*salience) and floor*n + (1-floor)*sum(salience);
    seed, evidence and uniform are each a line in those (SPEC 5). Decay weighs every session
    differently, so it takes the entry-by-entry path.
    """
    session_base = data.base if base is None else base
    a0, b0 = settings.prior_alpha, settings.prior_beta
    start_alpha = np.where(np.isnan(data.prior_alpha), a0, data.prior_alpha)
    start_beta = np.where(np.isnan(data.prior_beta), b0, data.prior_beta)
    stats = data.stats if base is None else arm_stats(data, session_base)
    strategy, floor = settings.strategy, settings.floor
    if settings.decay < 1.0 and stats.graded_sessions:
        # Before each graded session every arm moves toward the prior by gamma, so an
        # increment from the t-th of T graded sessions is worth gamma**(T - t) at the end.
        arms, n_arms, total = data.entry_arm, data.n_arms, stats.graded_sessions
        graded_rows = ~np.isnan(session_base)
        entry_base = np.where(graded_rows, session_base, 0.0)[data.entry_session]
        w = credit_mod.weight(data.entry_salience, floor)
        d_alpha, d_beta = credit_mod.credit(entry_base, w, strategy)
        rank = np.cumsum(graded_rows)
        factor = (
            settings.decay ** (total - rank[data.entry_session]).astype(np.float64) * graded_rows[data.entry_session]
        )
        shrink = settings.decay**total
        alpha = a0 + shrink * (start_alpha - a0) + _sum_by_arm(arms, d_alpha * factor, n_arms)
        beta = b0 + shrink * (start_beta - b0) + _sum_by_arm(arms, d_beta * factor, n_arms)
    elif strategy == "uniform":  # alpha += base, beta += 1 - base
        alpha = start_alpha + stats.sum_base
        beta = start_beta + stats.n - stats.sum_base
    else:
        sum_wb = floor * stats.sum_base + (1.0 - floor) * stats.sum_base_salience
        alpha = start_alpha + sum_wb
        if strategy == "seed":  # alpha += base*w, beta += 1 - base*w
            beta = start_beta + stats.n - sum_wb
        else:  # evidence: alpha += w*base, beta += w*(1 - base) = w - w*base
            beta = start_beta + floor * stats.n + (1.0 - floor) * stats.sum_salience - sum_wb
    return Posterior(
        arm_ids=data.arm_ids,
        alpha=np.asarray(alpha, dtype=np.float64),
        beta=np.asarray(beta, dtype=np.float64),
        n=data.prior_n + stats.n.astype(np.int64),
        settings=settings,
        graded_sessions=stats.graded_sessions,
        data=data,
        base=session_base,
    )


def regrade(post: Posterior, row: int, reward: float | None) -> Posterior:
    """The posterior after changing one session's reward (None: pending), touching only that
    session's entries. Exact without decay; with decay every arm's weights change, so it re-folds."""
    data, settings = post.data, post.settings
    base = post.base.copy()
    old = base[row]
    base[row] = np.nan if reward is None else reward
    if settings.decay < 1.0:
        return fold(data, settings, base)
    start, stop = int(data.session_start[row]), int(data.session_start[row + 1])
    arms = data.entry_arm[start:stop]
    w = credit_mod.weight(data.entry_salience[start:stop], settings.floor)
    alpha, beta, n = post.alpha.copy(), post.beta.copy(), post.n.copy()
    for value, sign in ((old, -1.0), (base[row], 1.0)):
        if np.isnan(value):
            continue
        d_alpha, d_beta = credit_mod.credit(np.full_like(w, float(value)), w, settings.strategy)
        np.add.at(alpha, arms, sign * d_alpha)
        np.add.at(beta, arms, sign * d_beta)
        np.add.at(n, arms, int(sign))
    graded = post.graded_sessions + int(not np.isnan(base[row])) - int(not np.isnan(old))
    return Posterior(data.arm_ids, alpha, beta, n, settings, graded, data, base)
