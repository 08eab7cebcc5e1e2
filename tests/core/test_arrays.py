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
