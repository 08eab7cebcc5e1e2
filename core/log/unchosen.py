"""Lessons a session record names that the session's draw passed over: read as included during the session.

A session's selection event (docs/format.md §5.4: the latest logged for its id before its record, as the
propensities take it) is the log's account of what was decided before the session: it chose the lessons it
`selected` among its `candidates` (those it gives a propensity are candidates too) and passed over the rest of them.
A candidate it passed over that the record names (without a mark, or marked `"before"` against the selection) came
into the session after the draw decided against it: gptme pulled it in mid-session (its auto-include, whose lessons
a hook passes to `record --lessons`), or someone added it by hand. The effect estimates take as the treatment only
what was decided before the session (docs/estimates.md, "Chosen before, included during"), so such an entry is read
as one marked `"during"`: not injected in every estimate (the joint fit, the lifts, the IPW lift, which weighs the
session as the draw's candidate not injected, at 1 / (1 - P(chosen)), never at 1 / P(chosen) as if the draw had
chosen it), and reported among the lesson's `during` sessions. Read as chosen before, a lesson trouble pulls in
looked harmful (-0.36 [-0.41, -0.31] for a lesson with no effect in the attack's world). The fold credits it as any
lesson the session had.

A selection that chose nothing says no draw (another tool's without `selected`, a k of 0, or a dropout that withheld
every lesson chosen): it passes nothing over. A lesson that was no candidate the draw made no decision about (an
agent's base set added before the session, or a lesson whose keywords came up only later: the log cannot tell), and a
session with no selection event, keep the reading of an entry without a mark: chosen before.
"""

from __future__ import annotations

import weakref
from typing import Any, Protocol

import msgspec
import numpy as np
import numpy.typing as npt

from lesson_credit.core.log.columns import Column, Objects, RowMap
from lesson_credit.core.log.events import SelectionEvent
from lesson_credit.core.log.lookup import SessionLookup
from lesson_credit.core.log.snapshot import FoldData


class LogIndex(Protocol):
    """What is read here of core/log/index.py's LogIndex."""

    selections: Objects[tuple[int, SelectionEvent]]
    session_lines: Column
    session_start: Column
    entry_arm: Column
    during: RowMap[tuple[int, ...]]

    @property
    def n_sessions(self) -> int: ...

    def row_of(self, session_id: str) -> int | None: ...

    def find_arm(self, lesson_id: str) -> int | None: ...

    @property
    def lookup(self) -> SessionLookup: ...


def with_passed_over(index: LogIndex, data: FoldData) -> FoldData:
    """`data` (a snapshot of `index`) with the entries its sessions' draws passed over among those included during
    their session (`during`, sorted): what every effect estimate reads. The fold and the views take `data` as it is."""
    passed = unchosen_entries(index, data.n_sessions)
    if not len(passed):
        return data
    # (a set, not np.union1d or np.unique: they load numpy.ma, which the commands that need no analysis do not)
    merged = np.array(sorted(set(data.during.tolist()).union(passed.tolist())), dtype=np.int64)
    return msgspec.structs.replace(data, during=merged)


def session_selections(index: LogIndex, n_sessions: int) -> dict[int, SelectionEvent]:
    """Row -> its session's latest selection logged before its record, for each of the first `n_sessions` rows that
    has one (docs/format.md §5.4: one selection counts per session, the last before its record; one logged after the
    record did not choose what the record shows). What the passed-over reading and the IPW candidacies
    (core/analysis/candidacy.py) both read: the selections decoded and matched to their rows once per log version
    (the answer is shared: not to be changed). One pass: the selections' rows are found at once (the log's id
    index); before, the candidacies looked each selection's row up on its own (19 s of CPU at 200,000 cached
    sessions)."""
    key = (len(index.selections), n_sessions, index.lookup.stored)
    known: dict[int, SelectionEvent] | None = _recall(_SELECTIONS, index, key)
    if known is not None:
        return known
    by_id: dict[str, list[tuple[int, SelectionEvent]]] = {}  # session id -> its selections (line, event), in order
    for line, selection in index.selections:
        if selection.session_id is not None:
            by_id.setdefault(selection.session_id, []).append((line, selection))
    lines = index.session_lines.view()[:n_sessions]
    out: dict[int, SelectionEvent] = {}
    for session_id, row in index.lookup.rows_of(list(by_id)).items():
        if row < n_sessions:
            recorded = int(lines[row])
            before = [selection for line, selection in by_id[session_id] if line <= recorded]
            if before:
                out[row] = before[-1]
    _keep(_SELECTIONS, index, key, out)
    return out


def passed_over(index: LogIndex, n_sessions: int) -> dict[int, frozenset[int]]:
    """Row -> the arms its latest selection before its record had as candidates and did not choose
    (`SelectionEvent.passed_over`, the rule `record`'s warning applies too), for each of the first `n_sessions` rows
    that has one."""
    key = (len(index.selections), n_sessions, index.lookup.stored)
    known: dict[int, frozenset[int]] | None = _recall(_PASSED, index, key)
    if known is not None:
        return known
    arm_of: dict[str, int | None] = {}  # each lesson's arm, found by the form the rule keys it by
    out: dict[int, frozenset[int]] = {}
    for row, selection in session_selections(index, n_sessions).items():
        if left := selection.passed_over():
            for lesson in left.difference(arm_of):
                arm_of[lesson] = index.find_arm(lesson)
            if arms := frozenset(arm for lesson in left if (arm := arm_of[lesson]) is not None):
                out[row] = arms
    _keep(_PASSED, index, key, out)
    return out


# the last answers, for the index they were of (held weakly: a log read again is a new index, and the old one goes):
# a dashboard folds many times between appends, and the log only grows, so its number of selections, sessions and
# cached rows say whether it moved
_SELECTIONS, _PASSED = "selections", "passed"
_kept: dict[str, tuple[weakref.ref[object], tuple[int, int, int], Any]] = {}


def _recall(name: str, index: object, key: tuple[int, int, int]) -> Any:
    known = _kept.get(name)
    return known[2] if known is not None and known[0]() is index and known[1] == key else None


def _keep(name: str, index: object, key: tuple[int, int, int], value: object) -> None:
    _kept[name] = (weakref.ref(index), key, value)


def unchosen_entries(index: LogIndex, n_sessions: int) -> npt.NDArray[np.int64]:
    """The entries (positions in the entry columns) of the first `n_sessions` sessions whose lesson the session's
    draw passed over, sorted (those marked "during" among them)."""
    if not len(index.selections) or not n_sessions:
        return np.zeros(0, dtype=np.int64)
    passed = passed_over(index, n_sessions)
    if not passed:
        return np.zeros(0, dtype=np.int64)
    starts = index.session_start.view()
    stop = int(starts[n_sessions])
    arms = index.entry_arm.view()[:stop].astype(np.int64)
    width = max(int(arms.max(initial=0)), max(max(left) for left in passed.values())) + 1
    # each (row, arm) pair as one number, row * width + arm: the entries' pairs looked up among the passed-over ones
    pairs = np.sort(np.fromiter((row * width + arm for row, left in passed.items() for arm in left), dtype=np.int64))
    keys = np.repeat(np.arange(n_sessions, dtype=np.int64), np.diff(starts[: n_sessions + 1])) * width + arms
    at = np.minimum(np.searchsorted(pairs, keys), len(pairs) - 1)
    return np.flatnonzero((pairs[at] == keys) & (arms >= 0)).astype(np.int64)


def unchosen_by_row(index: LogIndex, n_sessions: int) -> dict[int, tuple[int, ...]]:
    """Row -> positions (within the session's lessons) of those its draw passed over that are not marked "during":
    what `lint` names, with `record --during` as the remedy."""
    entries = unchosen_entries(index, n_sessions)
    starts = index.session_start.view()
    rows = np.searchsorted(starts[: n_sessions + 1], entries, side="right") - 1
    out: dict[int, list[int]] = {}
    for entry, row in zip(entries.tolist(), rows.tolist(), strict=True):
        position = entry - int(starts[row])
        if position not in (index.during.get(row) or ()):
            out.setdefault(row, []).append(position)
    return {row: tuple(found) for row, found in out.items()}
