"""When each prior and increments event was logged, per arm: the over-time view's windows leave out
what was logged after them (core/analysis/over_time.py).

One step per event and arm it names: (sessions logged before it, the arm's index, alpha, beta). A
workspace whose gptme bandit updates bandit-state.json every session logs an increments event of about
ten arms a session, so steps grow with the log: they are kept as typed arrays (24 bytes a step),
copied as bytes into each snapshot, and stored in the parsed-log cache's head as raw bytes (a list of
tuples took 0.36 s a snapshot and 1.9 s to write and read the head at a million steps).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from msgspec import Struct

_TYPES = ("q", "q", "d", "d")  # after, arm, alpha, beta


class StepArrays(Struct, frozen=True):
    """A snapshot's steps, read-only arrays of one length, in log order."""

    after: npt.NDArray[np.int64]  # sessions logged before the event
    arm: npt.NDArray[np.int64]
    alpha: npt.NDArray[np.float64]
    beta: npt.NDArray[np.float64]

    @classmethod
    def empty(cls) -> StepArrays:
        return Steps().arrays()


class Steps:
    """The steps an index has read so far (append-only)."""

    __slots__ = ("_columns",)

    def __init__(self) -> None:
        self._columns: tuple[array[Any], ...] = tuple(array(code) for code in _TYPES)

    def __len__(self) -> int:
        return len(self._columns[0])

    def add(self, after: int, arm: int, alpha: float, beta: float) -> None:
        for column, value in zip(self._columns, (after, arm, alpha, beta), strict=True):
            column.append(value)

    def plain(self) -> list[bytes]:
        """The columns as bytes (the cache's head)."""
        return [column.tobytes() for column in self._columns]

    @classmethod
    def of_plain(cls, plain: Sequence[bytes]) -> Steps:
        """`plain`'s steps; ValueError when they are not four columns of one length (a damaged head)."""
        steps = cls()
        if len(plain) != len(_TYPES):
            raise ValueError("steps: not four columns")
        for column, raw in zip(steps._columns, plain, strict=True):
            column.frombytes(bytes(raw))
        if len({len(column) for column in steps._columns}) != 1:
            raise ValueError("steps: columns of different lengths")
        return steps

    def arrays(self) -> StepArrays:
        """A copy as read-only numpy arrays (bytes: a later step never changes them)."""
        after, arm, alpha, beta = (
            np.frombuffer(column.tobytes(), dtype=code)
            for column, code in zip(self._columns, ("i8", "i8", "f8", "f8"), strict=True)
        )
        return StepArrays(after, arm, alpha, beta)
