"""What breaks ties among a lesson's neighbours in the joint fit (`neighbourhoods.neighbourhoods`): a number per
column of the design that depends on the column's content (its sessions and weights), not on its place among
the columns, which is the order lessons first appear in the log. Lessons tied in correlation with a lesson (that
shared as many sessions with it: common when each lesson is in a few sessions) are then chosen by what they are,
and the same log gives the same numbers whatever the order its sessions list their lessons in."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def session_keys(lo: int, hi: int) -> FloatArray:
    """A pseudo-random number in [1, 2) for each graded session lo..hi-1, from its position in log order
    (splitmix64): what `column_keys` weighs each session's injections by."""
    z = np.arange(lo + 1, hi + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    result: FloatArray = 1.0 + (z >> np.uint64(11)).astype(np.float64) * 2.0**-53
    return result


def column_keys(xt: Any, lo: int) -> FloatArray:
    """X' r for the transpose `xt` (p x n CSR) of the design of sessions lo..lo+n-1 and r their `session_keys`:
    a number per column that depends on its content (its sessions and weights), not on its place among the
    columns (the order lessons first appear in the log). Columns with equal keys are (but for a chance of the
    order of 2^-50) equal, and so interchangeable: the neighbourhoods break ties in correlation by it."""
    result: FloatArray = np.asarray(xt @ session_keys(lo, lo + int(xt.shape[1])), dtype=np.float64)
    return result


def tie_ranks(key: FloatArray) -> IntArray:
    """Each column's place in the order of `key` (equal keys: interchangeable columns, in column order)."""
    ranks = np.empty(len(key), dtype=np.int64)
    ranks[np.argsort(key, kind="stable")] = np.arange(len(key))
    return ranks


def strongest_first(corr: FloatArray) -> IntArray:
    """A sort key (ascending) per correlation (at least 0): the strongest first, correlations equal in their top
    16 bits of mantissa (a relative step of 2^-16) tied (a stable sort keeps their order). The choice among all
    lessons truncates its single-precision correlations alike: both choices then decide alike on correlations
    equal in exact arithmetic but rounded differently (from other numbers, in the other precision), bar the rare
    one that straddles a step."""
    strength = np.fmax(corr, 0.0).view(np.int64) >> 36  # NaN: 0; 11 bits of exponent, 16 of mantissa
    key: IntArray = (1 << 27) - 1 - strength
    return key
