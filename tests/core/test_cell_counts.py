"""The sessions with and without a lesson that a window, a half or a category counts (core/analysis/one_step.py)
are the ones its one-step estimate reads: those of the baseline groups where the lesson's injection varies
within the cell. A group alone in the cell, or one where every session has the lesson (or none has), adds
nothing to the estimate (its centred injection is 0 there) and nothing to the counts, nor to the
`MIN_CELL` threshold that reads them."""

from __future__ import annotations

import numpy as np

from lesson_credit.core.analysis.claims import fit_columns
from lesson_credit.core.analysis.joint import Design
from lesson_credit.core.analysis.one_step import MIN_CELL, by_category, halves, interval_of, windows

# session by session, log order: category (c code, o ops) and the lesson (W injected, N not)
LOG = (
    "cN cW cN cW cN cW cN cW cN oW "  # 0-9: window 0 ends at the 5th injection (9, ops alone in the window)
    "oW cN oW cW oW cN cW "  # 10-16: window 1 ends at the 10th (16); ops injected in all three of its sessions
    "cW cN cW cN cW cN cW cN cW cN oN oN oN oN oN"  # 17-31: window 2, ops never injected in it
).split()


def design_of(log: list[str], n_blocks: int = 1, seed: int = 3) -> Design:
    rng = np.random.default_rng(seed)
    n = len(log)
    category = np.array([0 if s[0] == "c" else 1 for s in log], dtype=np.int64)
    x = np.array([s[1] == "W" for s in log])
    reward = 0.5 + 0.1 * category + 0.1 * x + rng.normal(0, 0.05, n)
    rows = np.flatnonzero(x)
    return Design(
        np.arange(n), reward, category, 2, rows, np.zeros(len(rows), dtype=np.int64), np.ones(len(rows)), 1,
        category_names=("code", "ops"), n_blocks=n_blocks,
    )  # fmt: skip


def test_windows_count_only_the_groups_where_the_injection_varies() -> None:
    # no time blocks, one agent: a baseline group is a category. 15 injections cut into 3 windows: they end at
    # the 5th (session 9) and the 10th injection (session 16), the last at the end of the log.
    # window 0: code 4 W, 5 N (varies); ops 1 W, alone in the window (adds nothing) -> 4 with, 5 without
    #           (counted as before: 5 with, 5 without, and an estimate shown on 4 sessions with it)
    # window 1: code 2 W, 2 N; ops 3 W, all injected (adds nothing)  -> 2 with, 2 without (before: 5, 2)
    # window 2: code 5 W, 5 N; ops 5 N, never injected (adds nothing) -> 5 with, 5 without (before: 5, 10)
    design = design_of(LOG)
    fitted = fit_columns(design)
    assert fitted.fit is not None
    estimate, var, n_with, n_without, ends = windows(fitted.op, fitted.fit, np.array([3]))
    assert ends[0].tolist() == [9, 16, 31]
    assert n_with[0].tolist() == [4, 2, 5]
    assert n_without[0].tolist() == [5, 2, 5]
    assert interval_of(estimate[0, 0], var[0, 0], n_with[0, 0], n_without[0, 0]) is None  # 4 < MIN_CELL
    assert MIN_CELL == 5
    shown = interval_of(estimate[0, 2], var[0, 2], n_with[0, 2], n_without[0, 2])
    assert shown is not None and (shown.n_with, shown.n_without) == (5, 5)
    # the estimate itself is the code sessions' own difference of means: the ops sessions never entered it
    x = np.array([s[1] == "W" for s in LOG])
    code = np.array([s[0] == "c" for s in LOG])
    for w, (lo, hi) in enumerate(((0, 10), (10, 17), (17, 32))):
        inside = np.zeros(len(LOG), dtype=bool)
        inside[lo:hi] = True
        with_, without = inside & code & x, inside & code & ~x
        difference = design.reward[with_].mean() - design.reward[without].mean()
        assert abs(estimate[0, w] - difference) < 1e-9


def test_halves_count_only_the_groups_where_the_injection_varies() -> None:
    # the halves split at the 8th injection (ceil(15 / 2): session 13)
    # earlier (0-13): code W at 1 3 5 7 13, N at 0 2 4 6 8 11 (varies: 5, 6); ops W at 9 10 12, all injected
    #                 -> 5 with, 6 without (before: 8 with, 6 without)
    # later (14-31): code W at 16 17 19 21 23 25, N at 15 18 20 22 24 26 (6, 6); ops W at 14, N at 27-31 (1, 5)
    #                 -> 7 with, 11 without (as before: every group varies)
    fitted = fit_columns(design_of(LOG))
    assert fitted.fit is not None
    [(earlier, later)] = halves(fitted.op, fitted.fit)
    assert earlier is not None and (earlier.n_with, earlier.n_without) == (5, 6)
    assert later is not None and (later.n_with, later.n_without) == (7, 11)


def test_categories_count_only_the_time_blocks_where_the_injection_varies() -> None:
    # two time blocks (sessions 0-11 and 12-23): a baseline group is a category in a block
    # ops, block 0: 5 W, all injected (adds nothing); block 1: 4 W, 5 N -> 4 with, 5 without: below MIN_CELL,
    #      no estimate (before: 9 with, 5 without, an estimate on 4 sessions with it that carry weight)
    # code, block 0: 3 W, 4 N; block 1: 2 W, 1 N -> 5 with, 5 without (as before)
    log = "oW cW oW cN oW cW oW cN oW cW cN cN  oW oN cW oN oW cN oN oW oN cW oW oN".split()  # block 0, block 1
    design = design_of(log, n_blocks=2)
    fitted = fit_columns(design)
    assert fitted.fit is not None
    [cells] = by_category(fitted.op, fitted.fit, design)
    assert [(name, cell.n_with, cell.n_without) for name, cell in cells] == [("code", 5, 5)]


def test_a_groups_shares_that_differ_count_as_varying() -> None:
    # lessons a and b together in 18 of a's 19 sessions and all of b's 18: one column, the share of the two
    # injected (1 with both, 0.5 with a alone). One window, the whole log; no time blocks, so a group is a category.
    # code: 10 with both, 10 with neither -> varies: 10 with, 10 without
    # ops:  5 with both, 1 with a alone (0.5): every session has the column, but its value varies -> 6 with, 0 without
    # docs: 3 with both, nothing else: the same value throughout -> adds nothing
    # -> 16 with, 10 without (before: 19 with, 10 without)
    kinds = [("code", "ab")] * 10 + [("code", "")] * 10 + [("ops", "ab")] * 5 + [("ops", "a")] + [("docs", "ab")] * 3
    names = ("code", "ops", "docs")
    rows = [i for i, (_, lessons) in enumerate(kinds) for _ in lessons]
    arms = [ord(lesson) - ord("a") for _, lessons in kinds for lesson in lessons]
    category = np.array([names.index(kind) for kind, _ in kinds], dtype=np.int64)
    reward = 0.5 + np.random.default_rng(5).normal(0, 0.05, len(kinds))
    design = Design(
        np.arange(len(kinds)), reward, category, 3, np.array(rows), np.array(arms), np.ones(len(rows)), 2,
        category_names=names,
    )  # fmt: skip
    fitted = fit_columns(design)
    assert fitted.fit is not None and fitted.columns == [(0, 1)]
    _, _, n_with, n_without, _ = windows(fitted.op, fitted.fit, np.array([1]))
    assert (n_with[0, 0], n_without[0, 0]) == (16, 10)
