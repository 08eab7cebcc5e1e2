"""The reward-over-time series: graded sessions in log order, grouped when there are many, smoothed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

ROLLING_WINDOW = 10
MAX_POINTS = 600  # more graded sessions than this are shown as means of consecutive groups


def rolling_mean(values: Sequence[float] | npt.NDArray[np.float64], window: int = ROLLING_WINDOW) -> list[float]:
    """Mean of each value and up to window-1 before it."""
    if len(values) == 0:
        return []
    sums = np.cumsum(np.asarray(values, dtype=np.float64))
    lagged = np.concatenate([np.zeros(window), sums[:-window]]) if len(sums) > window else np.zeros(len(sums))
    counts = np.minimum(np.arange(1, len(sums) + 1), window)
    means: list[float] = ((sums - lagged[: len(sums)]) / counts).tolist()
    return means


def grouped(
    xs: Sequence[int] | npt.NDArray[np.int64],
    ys: Sequence[float] | npt.NDArray[np.float64],
    most: int = MAX_POINTS,
) -> tuple[list[float], list[float], int]:
    """(x, y, group size): consecutive points averaged in groups so at most `most` remain."""
    size = max(1, -(-len(xs) // most))
    if size == 1:
        return [float(x) for x in xs], [float(y) for y in ys], 1
    n = len(xs) // size * size
    gx = np.asarray(xs[:n], dtype=np.float64).reshape(-1, size).mean(axis=1).tolist()
    gy = np.asarray(ys[:n], dtype=np.float64).reshape(-1, size).mean(axis=1).tolist()
    if n < len(xs):  # the last, shorter group
        gx.append(float(np.mean(xs[n:])))
        gy.append(float(np.mean(ys[n:])))
    return gx, gy, size


def integer_ticks(count: int, most: int = 6) -> list[int]:
    """Up to `most` whole session numbers from 1 to count, evenly spread."""
    if count <= 1:
        return [1]
    step = max(1, -(-(count - 1) // (most - 1)))
    ticks = list(range(1, count + 1, step))
    if ticks[-1] != count:
        if len(ticks) > 1 and count - ticks[-1] < step / 2:
            ticks[-1] = count  # too close to the previous label to show both
        else:
            ticks.append(count)
    return ticks


@dataclass(frozen=True)
class RewardSeries:
    """What the reward plot draws; built off the UI thread (a big log has 100k sessions)."""

    xs: tuple[float, ...]  # session number in log order (group means when grouped)
    ys: tuple[float, ...]
    smooth: tuple[float, ...]  # rolling mean of ys
    group: int  # sessions per point (1: one point per graded session)
    ticks: tuple[int, ...]


def reward_series(rewards: Sequence[float | None] | npt.NDArray[np.float64]) -> RewardSeries:
    """From one reward per session in log order: None or NaN while pending (a SessionTable's `base`).

    Works on the array: a million sessions cost a few numpy passes, not a Python loop over each."""
    base = np.asarray(rewards, dtype=np.float64)  # None -> NaN; the base array itself is not copied
    graded = np.flatnonzero(~np.isnan(base))
    xs, ys, size = grouped(graded + 1, base[graded])
    ticks = integer_ticks(int(graded[-1]) + 1) if len(graded) else []
    return RewardSeries(tuple(xs), tuple(ys), tuple(rolling_mean(ys)), size, tuple(ticks))


HISTOGRAM_BINS = 10


@dataclass(frozen=True)
class RewardHistogram:
    """Rewards in equal bins over [0, 1] (a reward of exactly 1 falls in the last bin)."""

    edges: tuple[float, ...]  # bins + 1 edges
    counts: tuple[int, ...]
    n: int
    mean: float | None  # None without rewards

    @property
    def shares(self) -> tuple[float, ...]:
        """Each bin's share of the rewards: comparable between groups of different sizes."""
        return tuple(c / self.n for c in self.counts) if self.n else tuple(0.0 for _ in self.counts)

    @property
    def centres(self) -> tuple[float, ...]:
        return tuple((a + b) / 2 for a, b in zip(self.edges, self.edges[1:], strict=False))


def reward_histogram(rewards: Sequence[float], bins: int = HISTOGRAM_BINS) -> RewardHistogram:
    values = np.asarray(rewards, dtype=np.float64)
    counts, edges = np.histogram(values, bins=bins, range=(0.0, 1.0))
    mean = float(values.mean()) if len(values) else None
    return RewardHistogram(tuple(round(float(e), 9) for e in edges), tuple(int(c) for c in counts), len(values), mean)
