"""Small array helpers shared by the log and the library.

`distinct` is np.unique's plain form without its cost in a short-lived process: np.unique (and
np.union1d, which calls it) asks `np.ma.is_masked`, and the first such call imports numpy.ma, 7-14 ms
of a `record`'s CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def distinct(values: Any) -> Any:
    """The items of the 1-d array `values`, sorted, each once (what np.unique(values) returns)."""
    values = np.sort(values)
    return values[np.concatenate([[True], values[1:] != values[:-1]])] if len(values) else values
