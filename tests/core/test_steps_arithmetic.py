"""The baseline steps' arithmetic (core/analysis/steps.py) read the fast way gives the very numbers of the plain one:
log C(a, b) of counts from a table of log factorials against scipy's gammaln of each argument, and the sorts of
(lesson, session) keys against numpy's sort of the keys. Bit for bit: a step is where a chance falls below a limit,
and a number one rounding away could move a step."""

from __future__ import annotations

import numpy as np
from scipy.special import gammaln

from lesson_credit.core.analysis.steps import _log_choose, _sorted_by


def test_log_choose_of_counts_is_gammaln_of_each_argument_bit_for_bit() -> None:
    rng = np.random.default_rng(36)
    for top in (5, 1_000, 3_000_000):
        a = rng.integers(-3, top, 50_000)
        b = rng.integers(-3, top, 50_000)
        with np.errstate(invalid="ignore"):  # (a count below 0 is gammaln's pole: inf - inf)
            plain = gammaln(a + 1.0) - gammaln(b + 1.0) - gammaln(a - b + 1.0)
            for left, right in ((a, b), (a.astype(float), b.astype(float))):
                assert np.array_equal(_log_choose(left, right), plain, equal_nan=True)
    # C(5, 2) = 10 and C(40, 20) = 137846528820, written out
    assert abs(float(_log_choose(np.array(5.0), np.array(2.0))) - np.log(10.0)) < 1e-12
    assert abs(float(_log_choose(np.array(40), np.array(20))) - np.log(137846528820.0)) < 1e-12
    half = np.array([2.5])  # not a count: computed as written
    assert float(_log_choose(half, np.array([1.0]))[0]) == gammaln(3.5) - gammaln(2.0) - gammaln(2.5)


def test_keys_sorted_by_their_major_part_are_numpys_sort() -> None:
    rng = np.random.default_rng(7)
    for majors, stride in ((50, 1_000), (70_000, 30)):  # the radix sort (16 bits), and the whole sort beyond
        rows = np.sort(rng.integers(0, stride, 20_000))  # rising, as a block's sessions come
        major = rng.integers(0, majors, len(rows))
        key = major * stride + rows
        assert np.array_equal(_sorted_by(major, key), np.sort(key))
        shuffled = rng.permutation(len(key))  # minors that do not rise: sorted whole all the same
        assert np.array_equal(_sorted_by(major[shuffled], key[shuffled]), np.sort(key))
    empty = np.zeros(0, dtype=np.int64)
    assert len(_sorted_by(empty, empty)) == 0
