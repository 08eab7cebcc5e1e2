"""core/base/arrays.py: `distinct` is np.unique's plain form (without the numpy.ma import it costs)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from tests.support.cli_run import process_env


def test_distinct_sorts_and_keeps_each_item_once() -> None:
    from lesson_credit.core.base.arrays import distinct

    # by hand: {3, 1, 2} sorted
    assert distinct(np.array([3, 1, 3, 2, 1], dtype=np.int64)).tolist() == [1, 2, 3]
    assert distinct(np.array([7], dtype=np.int64)).tolist() == [7]
    empty = distinct(np.zeros(0, dtype=np.int64))
    assert empty.tolist() == [] and empty.dtype == np.int64
    values = np.random.default_rng(5).integers(-50, 50, size=1000)
    got = distinct(values)
    assert got.dtype == values.dtype and got.tolist() == sorted(set(values.tolist()))  # a second way


def test_distinct_does_not_import_numpy_s_masked_arrays() -> None:
    script = (
        "import sys, numpy as np\nfrom lesson_credit.core.base.arrays import distinct\n"
        "distinct(np.array([2, 1, 2]))\nprint('numpy.ma' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=process_env(), capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr


def _last_by_walk(rows: list[int], positions: list[int]) -> tuple[list[int], list[int]]:
    """A second way: walk the events in order, the later overwriting the earlier."""
    last: dict[int, int] = {}
    for row, position in zip(rows, positions, strict=True):
        last[row] = position
    named = sorted(last)
    return named, [last[row] for row in named]


def test_latest_per_row_is_the_last_event_naming_each_row() -> None:
    from lesson_credit.core.base.arrays import SPARSE_SPAN, latest_per_row

    # by hand: rows 4, 2, 4, 9 at positions 0, 3, 5, 8 -> row 2 at 3, row 4 at 5 (its later), row 9 at 8
    named, last = latest_per_row(np.array([4, 2, 4, 9], dtype=np.int64), np.array([0, 3, 5, 8], dtype=np.int64))
    assert named.tolist() == [2, 4, 9] and last.tolist() == [3, 5, 8]
    none = latest_per_row(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
    assert none[0].tolist() == [] and none[1].tolist() == []
    rng = np.random.default_rng(11)
    for size, span in [(1, 1), (50, 5), (5_000, 3_000), (5_000, 50_000), (200, 200 * SPARSE_SPAN + 7), (300, 10**9)]:
        positions = np.sort(rng.choice(size * 3, size=size, replace=False)).astype(np.int64)
        rows = rng.integers(span // 2, span // 2 + span, size=size).astype(np.int64)
        named, last = latest_per_row(rows, positions)
        assert (named.tolist(), last.tolist()) == _last_by_walk(rows.tolist(), positions.tolist()), (size, span)
        assert named.dtype == np.int64 and last.dtype == np.int64
    far = rng.choice(np.array([3, 10**6, 10**9], dtype=np.int64), size=40)  # few rows far apart, each many times
    positions = np.arange(0, 80, 2, dtype=np.int64)
    named, last = latest_per_row(far, positions)
    assert (named.tolist(), last.tolist()) == _last_by_walk(far.tolist(), positions.tolist())
