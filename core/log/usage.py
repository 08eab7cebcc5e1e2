"""How much each lesson was used over the log, graded or not (injections, salient injections, summed
salience): per block of sessions, kept in the snapshot's block cache like the fold's sums
(core/log/snapshot.py), since entries never change once read."""

from __future__ import annotations

import numpy as np

from lesson_credit.core.log.snapshot import BlockUsage, FoldData, _grown, block_ranges, sum_by_arm


def lesson_usage(data: FoldData) -> BlockUsage:
    """Usage counts of every arm over the whole log, added up block by block (cached per block:
    entries never change once read)."""
    injected = np.zeros(data.n_arms, dtype=np.int64)
    salient = np.zeros(data.n_arms, dtype=np.int64)
    salience = np.zeros(data.n_arms)
    for index, lo, hi in block_ranges(data.n_sessions):
        usage = data.blocks.usage.get((index, hi - lo))
        if usage is None:
            usage = _usage(data, index, lo, hi)
            data.blocks.keep_usage((index, hi - lo), usage)
        k = len(usage.injected)
        injected[:k] += usage.injected
        salient[:k] += usage.salient
        salience[:k] += usage.salience
    return BlockUsage(injected, salient, salience)


def _usage(data: FoldData, index: int, lo: int, hi: int) -> BlockUsage:
    """A block's usage counts: those of its first rows, when known, with the rest added entry by entry
    (in order: the same sums, bit for bit, as counting the whole block)."""
    shorter = data.blocks.shorter(data.blocks.usage, index, hi - lo)
    start = lo if shorter is None else lo + shorter[0]
    ends = data.starts(start, hi)
    arms, values = data.entry_arms(int(ends[0]), int(ends[-1]))
    n_arms = data.n_arms
    if shorter is None:
        return BlockUsage(
            injected=np.bincount(arms, minlength=n_arms).astype(np.int64),
            salient=np.bincount(arms[values > 0], minlength=n_arms).astype(np.int64),
            salience=sum_by_arm(arms, values, n_arms),
        )
    old: BlockUsage = shorter[1]
    salience = _grown(old.salience, n_arms)
    np.add.at(salience, arms, values)
    return BlockUsage(
        injected=_grown(old.injected, n_arms) + np.bincount(arms, minlength=n_arms),
        salient=_grown(old.salient, n_arms) + np.bincount(arms[values > 0], minlength=n_arms),
        salience=salience,
    )
