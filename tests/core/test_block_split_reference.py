"""`switch_evidence.block_split` (one time block: per lesson its spread within the baseline groups and what is left
of it beside the best step at one moment) equals a plain reference written here from its definition: for each
column and each candidate moment t (an injection's session or the one after it), the step's fit by direct sums over
the groups where the column varies, in exact fractions. The reference shares no code with the module: it loops
over groups and sessions one at a time.

Decisions compared exactly (`by_time`, the moment `at`, the side `on`), spreads to 1e-9 relative. Of moments
that take the same (exactly, in fractions) the earliest: the module compares to 1e-11 of the spread, far below
what separates two different fractions of designs this small."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.analysis import switch_evidence
from lesson_credit.core.analysis.switch_evidence import SHARE_MIN, Evidence, block_split, block_tables, evidence
from tests.support.engine_helpers import PROPERTY

Split = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def reference(
    group: list[int], injections: set[tuple[int, int]], n_columns: int
) -> list[tuple[Fraction, Fraction, int, bool]]:
    """Per column: (within, apart, at, on) by the definition. within: over the groups where the column varies
    (k of its n sessions injected, 0 < k < n), k (n - k) / n. At a moment t, per such group, n0 of its sessions
    before t (n1 = n - n0 from t on) and k0 of its injections before t: the step's indicator and the column's, each
    centred in the group, have products (k - k0) - k n1 / n and the step's squares n0 n1 / n; summed over the
    groups, the step takes products^2 / squares (0 when the squares are 0). apart: within less the most taken,
    `at` that moment (the earliest of equals), `on` whether the products there are positive."""
    m = len(group)
    groups = sorted(set(group))
    out = []
    for c in range(n_columns):
        sessions = {g: [i for i in range(m) if group[i] == g] for g in groups}
        injected = {g: [i for i in sessions[g] if (i, c) in injections] for g in groups}
        varies = [g for g in groups if 0 < len(injected[g]) < len(sessions[g])]
        within = Fraction(0)
        for g in varies:
            within += Fraction(len(injected[g]) * (len(sessions[g]) - len(injected[g])), len(sessions[g]))
        moments = sorted({t for g in varies for i in injected[g] for t in (i, i + 1)})
        best: tuple[Fraction, int, bool] | None = None
        for t in moments:
            products, squares = Fraction(0), Fraction(0)
            for g in varies:
                n, k = len(sessions[g]), len(injected[g])
                n0 = sum(1 for i in sessions[g] if i < t)
                k0 = sum(1 for i in injected[g] if i < t)
                products += (k - k0) - Fraction(k * (n - n0), n)
                squares += Fraction(n0 * (n - n0), n)
            taken = products**2 / squares if squares > 0 else Fraction(0)
            if best is None or taken > best[0]:
                best = (taken, t, products > 0)
        if best is None:
            out.append((within, within, 0, False))
        else:
            out.append((within, max(within - best[0], Fraction(0)), best[1], best[2]))
    return out


@st.composite
def blocks(draw: st.DrawFn) -> tuple[list[int], set[tuple[int, int]], int]:
    """A block of 1-40 sessions in 1-4 groups (some interleaved, some in runs), 1-4 columns, each injected in a
    random share of sessions, or switched at a moment with a few strays and gaps."""
    m = draw(st.integers(1, 40))
    n_groups = draw(st.integers(1, 4))
    group = draw(st.lists(st.integers(0, n_groups - 1), min_size=m, max_size=m))
    if draw(st.booleans()):
        group.sort()  # each group a run of sessions
    n_columns = draw(st.integers(1, 4))
    injections: set[tuple[int, int]] = set()
    for c in range(n_columns):
        if draw(st.booleans()):
            share = draw(st.sampled_from([0.1, 0.3, 0.5, 0.9]))
            flips = draw(st.lists(st.floats(0, 1), min_size=m, max_size=m))
            injections |= {(i, c) for i in range(m) if flips[i] < share}
        else:
            switch = draw(st.integers(0, m))
            odd = set(draw(st.lists(st.integers(0, m - 1), max_size=3)))
            injections |= {(i, c) for i in range(m) if (i >= switch) != (i in odd)}
    codes = {g: j for j, g in enumerate(sorted(set(group)))}  # codes 0.. as the blocks are told
    return [codes[g] for g in group], injections, n_columns


def split(group: list[int], injections: set[tuple[int, int]], n_columns: int, **kw: object) -> Split:
    pairs = sorted(injections)
    row = np.array([i for i, _ in pairs], dtype=np.int64)
    col = np.array([c for _, c in pairs], dtype=np.int64)
    return block_split(np.array(group, dtype=np.int64), row, col, n_columns, **kw)  # type: ignore[arg-type]


def assert_equal_to_reference(got: Split, want: list[tuple[Fraction, Fraction, int, bool]]) -> None:
    within, apart, at, on = got
    for c, (w, a, t, o) in enumerate(want):
        assert within[c] == pytest.approx(float(w), rel=1e-9, abs=1e-12), c
        assert apart[c] == pytest.approx(float(a), rel=1e-9, abs=1e-9 * float(w)), c
        by_time = w > 0 and a < Fraction(SHARE_MIN) * w
        assert bool(Evidence(within[c : c + 1], apart[c : c + 1], at[c : c + 1], on[c : c + 1]).by_time()[0]) == by_time
        if w > 0:
            assert (int(at[c]), bool(on[c])) == (t, o), c


@settings(PROPERTY, max_examples=300)
@given(blocks())
def test_block_split_equals_the_plain_reference(block: tuple[list[int], set[tuple[int, int]], int]) -> None:
    group, injections, n_columns = block
    want = reference(group, injections, n_columns)
    assert_equal_to_reference(split(group, injections, n_columns), want)


@settings(PROPERTY, max_examples=60)
@given(blocks())
def test_without_the_tables_searched_by_group_the_same(block: tuple[list[int], set[tuple[int, int]], int]) -> None:
    group, injections, n_columns = block
    want = reference(group, injections, n_columns)
    saved = switch_evidence.TABLE_MAX
    switch_evidence.TABLE_MAX = 0  # every group's sessions before t found by a search, not a table
    try:
        tables = block_tables(np.array(group, dtype=np.int64))
    finally:
        switch_evidence.TABLE_MAX = saved
    assert tables.before is None
    assert_equal_to_reference(split(group, injections, n_columns, tables=tables), want)


@settings(PROPERTY, max_examples=60)
@given(blocks(), st.integers(1, 3))
def test_a_block_told_in_sets_of_columns_is_the_block_told_whole(
    block: tuple[list[int], set[tuple[int, int]], int], sets: int
) -> None:
    # evidence() makes a block's tables once for the sets of its columns told with the same groups array
    group, injections, n_columns = block
    g = np.array(group, dtype=np.int64)
    pairs = sorted(injections, key=lambda p: (p[1], p[0]))
    row = np.array([i for i, _ in pairs], dtype=np.int64)
    col = np.array([c for _, c in pairs], dtype=np.int64)
    parts = [(5, g, row[col % sets == s], col[col % sets == s]) for s in range(sets)]
    whole = evidence([(5, g, row, col)], n_columns)
    apart_sets = evidence(parts, n_columns)
    np.testing.assert_allclose(apart_sets.within, whole.within, rtol=1e-12)
    np.testing.assert_allclose(apart_sets.apart, whole.apart, rtol=1e-12)
    assert apart_sets.at.tolist() == whole.at.tolist() and apart_sets.on.tolist() == whole.on.tolist()


def test_of_two_moments_taking_the_same_the_earliest() -> None:
    # one group of 10 sessions, the lesson in sessions 1-8: spread 8 * 2 / 10 = 1.6. A step from session 1 has
    # products (8 - 0) - 8 * 9 / 10 = 0.8 and squares 1 * 9 / 10 = 0.9: it takes 0.64 / 0.9 = 0.711; from session 9
    # products (8 - 8) - 8 * 1 / 10 = -0.8, squares 9 * 1 / 10 = 0.9: the same 0.711 (any other takes less: from
    # session 2, 7 - 6.4 = 0.6 over 1.6, 0.225). The earliest, from session 1, the lesson the more injected after
    # it. (The code before chose session 9, on rounding: 0.7111111111111112 there, 0.7111111111111107 at session 1.)
    within, apart, at, on = block_split(np.zeros(10, dtype=np.int64), np.arange(1, 9), np.zeros(8, dtype=np.int64), 1)
    assert within[0] == pytest.approx(1.6) and apart[0] == pytest.approx(1.6 - 0.64 / 0.9)
    assert (int(at[0]), bool(on[0])) == (1, True)
