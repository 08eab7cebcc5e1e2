"""A block's per-arm sums after a few of its sessions were regraded, without summing the block again.

`core.log.snapshot` keeps per-arm sums per block of sessions (65,536 at a million), each a
`np.bincount` over the block's entries in order. A regrade changes the terms of one session's
entries only, so only the arms injected in that session have other sums. For each of those arms
`patched` adds up, in entry order, exactly the terms the block's bincount adds for it (its entries
are the same entries, in the same order: bincount accumulates each arm on its own, left to right),
so its sums are the block's own, bit for bit; every other arm keeps its sums. No old contribution
is subtracted (that would round differently): the patched block equals the block summed afresh,
which tests/core/test_block_patch.py checks against a workspace read from scratch.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.model import credit as credit_mod

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

PATCH_ROWS = 64  # a block with more regraded sessions than this is summed again whole


def changed_rows(old: FloatArray, new: FloatArray) -> IntArray:
    """Rows whose reward differs byte for byte (as `rewards_key` tells rewards apart: another NaN
    payload or -0.0 counts as a change)."""
    old64 = np.ascontiguousarray(old, dtype=np.float64).view(np.uint64)
    new64 = np.ascontiguousarray(new, dtype=np.float64).view(np.uint64)
    return np.flatnonzero(old64 != new64).astype(np.int64)


def patched(data: Any, block_base: FloatArray, lo: int, hi: int, old: Any, rows: IntArray) -> dict[str, Any]:
    """The block's sums (rows [lo, hi), rewards `block_base`) from `old`, its sums under rewards that
    differ at `rows` (of the block, 0-based) only: `BlockSums` fields but the rewards key."""
    n_arms = data.n_arms
    ends = data.starts(lo, hi)
    first = int(ends[0])
    arms_all, salience_all = data.entry_arms(first, int(ends[-1]))
    affected = np.zeros(n_arms, dtype=np.bool_)
    for row in rows.tolist():
        affected[arms_all[int(ends[row]) - first : int(ends[row + 1]) - first]] = True
    picked = np.flatnonzero(affected[arms_all])  # the affected arms' entries, in block order
    arms, salience = arms_all[picked], salience_all[picked]
    entry_rows = np.searchsorted(ends, picked + first, side="right") - 1  # 0-based row of each entry
    row_base = np.asarray(block_base, dtype=np.float64)[entry_rows]
    graded = ~np.isnan(row_base)
    entry_base = np.where(graded, row_base, 0.0)
    fresh = {
        "n": graded,
        "sum_base": entry_base,
        "sum_base_salience": entry_base * salience,
        "sum_salience": salience * graded,
    }
    out: dict[str, Any] = {}
    for name, weights in fresh.items():
        summed = np.bincount(arms, weights=weights, minlength=n_arms).astype(np.float64, copy=False)
        out[name] = _replaced(getattr(old, name), summed, affected, 0.0)
    last = np.full(n_arms, -1, dtype=np.int64)
    np.maximum.at(last, arms[graded], lo + entry_rows[graded])
    out["last"] = _replaced(old.last, last, affected, -1)
    rewarded = {}
    for (strategy, floor), counts in old.rewarded.items():
        w = credit_mod.weight(salience[graded], floor)
        credited = credit_mod.credited_reward(entry_base[graded], w, strategy)
        fresh_counts = np.bincount(arms[graded][credited > 0.5], minlength=n_arms).astype(np.int64)
        rewarded[(strategy, floor)] = _replaced(counts, fresh_counts, affected, 0)
    out["rewarded"] = rewarded
    return out


def _replaced(old: npt.NDArray[Any], fresh: npt.NDArray[Any], affected: npt.NDArray[np.bool_], fill: float) -> Any:
    """`old` grown to the arms of `fresh` (`fill` for arms it did not know), with the affected arms' `fresh`."""
    out = np.full(len(fresh), fill, dtype=old.dtype)
    out[: len(old)] = old
    out[affected] = fresh[affected]
    return out
