"""Small array helpers shared by the log and the library.

`distinct` is np.unique's plain form without its cost in a short-lived process: np.unique (and
np.union1d, which calls it) asks `np.ma.is_masked`, and the first such call imports numpy.ma, 7-14 ms
of a `record`'s CPU. `latest_per_row` is what np.unique(..., return_index=True) of a column of grade events finds,
without its stable sort (8 ms for 50,000 events).
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T", bound=np.generic)
IntArray = npt.NDArray[np.int64]


def distinct(values: npt.NDArray[T]) -> npt.NDArray[T]:
    """The items of the 1-d array `values`, sorted, each once (what np.unique(values) returns)."""
    ordered = np.sort(values)
    return ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered


SPARSE_SPAN = 16  # `latest_per_row` sorts instead when the rows span more than this many per event


def latest_per_row(rows: npt.NDArray[np.int64], positions: npt.NDArray[np.int64]) -> tuple[IntArray, IntArray]:
    """For events at `positions` (increasing) naming `rows` (not negative): the rows named (sorted, each once)
    and the position of the last event naming each. A maximum per row over the rows' span (the positions
    increase: the last is the largest), or where the span is much wider than the events, a stable sort."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    low, high = int(rows.min()), int(rows.max())
    if high - low >= SPARSE_SPAN * len(rows):
        order = np.argsort(rows, kind="stable")
        ordered = rows[order]
        last = np.concatenate([ordered[1:] != ordered[:-1], [True]])  # the last of each run of equal rows
        return ordered[last].astype(np.int64), positions[order[last]].astype(np.int64)
    latest = np.full(high - low + 1, -1, dtype=np.int64)
    np.maximum.at(latest, rows - low, positions)
    named = np.flatnonzero(latest >= 0)
    return named + low, latest[named]
