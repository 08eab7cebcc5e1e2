"""Small array helpers shared by the log and the library.

`distinct` is np.unique's plain form without its cost in a short-lived process: np.unique (and
np.union1d, which calls it) asks `np.ma.is_masked`, and the first such call imports numpy.ma, 7-14 ms
of a `record`'s CPU.
"""

from __future__ import annotations

from typing import TypeVar

import numpy as np
import numpy.typing as npt

T = TypeVar("T", bound=np.generic)


def distinct(values: npt.NDArray[T]) -> npt.NDArray[T]:
    """The items of the 1-d array `values`, sorted, each once (what np.unique(values) returns)."""
    ordered = np.sort(values)
    return ordered[np.concatenate([[True], ordered[1:] != ordered[:-1]])] if len(ordered) else ordered
