"""Each lesson's first sessions as a column of their own in the claims fit (docs/estimates.md "Logs the joint policy
wrote").

A policy that learns from the log (the joint policy `select` uses by default) keeps injecting a lesson after lucky
first sessions and drops it after unlucky ones: its later sessions depend on the noise of its first ones, and an
interval over all of them excluded 0 for 13-16% of no-effect lessons (random selection: 4.4%). So in the claims fit
(`claims.fit_columns`) a lesson with at least `MIN_SESSIONS` graded sessions has its first min(`FIRST_MAX`,
floor(n / `FIRST_PART`)) of them, in log order, entered as a column of its own, arm `n_arms + arm`: fitted in the
same draw and the same pin as the others, reported nowhere. The lesson's identification, estimate, interval, halves
and categories come from its later sessions. The ranking and the policy's posterior keep every session.

Not when the log is too short for it: when the lessons' columns and the early ones would come to more than
`SHARE_MAX` of the graded sessions, nothing is split. Nor when the early columns crowd a stretch of the log (a large
library whose lessons all start at once: their first sessions all fall there): each first session carries 1 / (its
lesson's sessions set apart) of a column, and when those shares average more than `LOAD_MAX` per session over some
lesson's first sessions (from its first to its last), nothing is split. Past it the early columns alone nearly fill
that stretch: 622 of them in a 2,000-session log's first 793 sessions left 51 of them no fit could tell apart, and a
tied pair's reason named 555 lessons. The iterative fit (beyond `joint.DENSE_MAX` lessons) reads each lesson on its
neighbourhood, which no such stretch fits in: there the bound is `LOAD_MAX_ITERATIVE` (measured, 620 lessons: at a
load of 0.49 its widths were 0.90-0.99 of the exact fit's, 0.95-0.99 unsplit; at 0.63, 0.82-1.05; at 0.92,
0.84-1.44).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.joint import Design

IntArray = npt.NDArray[np.int64]

MIN_SESSIONS = 30  # graded sessions a lesson needs before its first ones are set apart
FIRST_MAX = 20  # at most this many first sessions set apart
FIRST_PART = 3  # and at most a third of its graded sessions
SHARE_MAX = 0.9  # no split when lessons and early columns together exceed this share of the graded sessions:
# the few-sessions world (150 sessions, 120 lessons) comes to 0.81-0.85 and is split (its no-effect lessons claimed
# 2.3% of the time split, 4.6% not)
LOAD_MAX = 0.9  # no split when the first sessions' columns average more than this per session over a lesson's first
LOAD_MAX_ITERATIVE = 0.5  # ... on the iterative path (more than joint.DENSE_MAX lessons)


def first_sessions(design: Design, load_max: float = LOAD_MAX) -> npt.NDArray[np.bool_]:
    """Per entry of `design`: one of its lesson's first sessions (see the module); none when a guard holds
    (`load_max`: `LOAD_MAX`, or `LOAD_MAX_ITERATIVE` on the iterative path)."""
    arm, row = design.entry_arm, design.entry_row
    early = np.zeros(len(arm), dtype=bool)
    if not len(arm):
        return early
    order = np.lexsort((row, arm))  # each lesson's entries in log order
    arm_sorted = arm[order]
    start = np.searchsorted(arm_sorted, arm_sorted, side="left")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order)) - start
    count = np.bincount(arm, minlength=design.n_arms)
    cut = np.where(count >= MIN_SESSIONS, np.minimum(FIRST_MAX, count // FIRST_PART), 0)
    split = int(np.count_nonzero(cut))
    if not split or np.count_nonzero(count) + split > SHARE_MAX * design.n:
        return early
    early[:] = rank < cut[arm]
    if crowded(design, early, cut) > load_max:
        early[:] = False
    return early


def crowded(design: Design, early: npt.NDArray[np.bool_], cut: IntArray) -> float:
    """The most the early columns (`early`: per entry; `cut`: each lesson's first sessions) carry per session over a
    lesson's first sessions, each first session 1 / its lesson's `cut` of a column (see the module)."""
    arm, row = design.entry_arm[early], design.entry_row[early]
    if not len(arm):
        return 0.0
    load = np.concatenate([[0.0], np.cumsum(np.bincount(row, weights=1.0 / cut[arm], minlength=design.n))])
    start = np.full(design.n_arms, design.n, dtype=np.int64)
    end = np.full(design.n_arms, -1, dtype=np.int64)
    np.minimum.at(start, arm, row)
    np.maximum.at(end, arm, row)
    some = end >= 0
    return float(np.max((load[end[some] + 1] - load[start[some]]) / (end[some] - start[some] + 1)))


def split_design(design: Design, iterative: bool = False) -> Design:
    """`design` with each lesson's first sessions as arm `n_arms + arm` (`n_arms` doubled), or `design` itself when
    no lesson's are set apart (`iterative`: the fit will be, its guard the lower). (Only the entries change: the
    sessions, their baselines and any steps found on the whole columns stay.)"""
    early = first_sessions(design, LOAD_MAX_ITERATIVE if iterative else LOAD_MAX)
    if not early.any():
        return design
    arm = np.where(early, design.entry_arm + design.n_arms, design.entry_arm)
    return replace(design, entry_arm=arm, n_arms=2 * design.n_arms)


def lesson_of(columns: list[tuple[int, ...]], real: int) -> IntArray:
    """Per column of the fit (`columns`: each one's arms): the lesson it holds, its first sessions' column (arms from
    `real` on) the same lesson as its later one (a group's column: its first member). With `first_sessions_column`
    and `first_column_of`, what the claims fit reads of the rule "an arm from `real` on is a lesson's first
    sessions" (`Fitted.is_first`, `Fitted.first_columns`)."""
    return np.array([min(members) % real if real else min(members) for members in columns], dtype=np.int64)


def first_sessions_column(columns: list[tuple[int, ...]], real: int) -> npt.NDArray[np.bool_]:
    """Per column of the fit: a lesson's first sessions set apart (reported nowhere)."""
    return np.array([min(members) >= real for members in columns], dtype=bool)


def first_column_of(column_of: IntArray, real: int) -> IntArray:
    """Per column of the fit: its lesson's first sessions' column (-1: none; a first sessions' column, a group's
    column: none). `column_of`: each arm's column, the first sessions' arms from `real` on."""
    out = np.full(int(column_of.max(initial=-1)) + 1, -1, dtype=np.int64)
    if len(column_of) <= real:
        return out
    later, first = column_of[:real], column_of[real : 2 * real]
    alone = np.bincount(later[later >= 0], minlength=len(out)) == 1  # (a group's members' first sessions: not its)
    moved = (later >= 0) & (first >= 0)
    moved[moved] &= alone[later[moved]]
    out[later[moved]] = first[moved]
    return out


def whole_columns(x: Any, columns: list[tuple[int, ...]], column_of: IntArray, real: int) -> Any:
    """The fit's columns `x` (sessions x columns, sparse) with each lesson's first sessions added back to its column
    (a group's column: as its share of the group), what a switch in time is told on: the lesson is injected from
    its first session on, not from its 21st. (`column_of`: each arm's column, the first sessions' arms from `real`
    on.)"""
    from scipy import sparse

    p = x.shape[1]
    if len(column_of) <= real:
        return x
    lesson = np.arange(real)
    first, later = column_of[lesson + real], column_of[lesson]
    moved = (first >= 0) & (later >= 0)
    size = np.array([len(members) for members in columns], dtype=np.float64)
    rows = np.concatenate([np.arange(p), first[moved]])
    cols = np.concatenate([np.arange(p), later[moved]])
    weight = np.concatenate([np.ones(p), 1.0 / size[later[moved]]])
    return (x @ sparse.csr_matrix((weight, (rows, cols)), shape=(p, p))).tocsr()
