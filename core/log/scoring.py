"""Each session's score in force, at the cost of the sessions that have more than their own score.

`core.log.snapshot.source_scores` scores every session densely: per reward source a column of the
log's length (its latest event, a retraction withdrawing it, a score from outside the log filling
it), then the priority over the columns: 0.05-0.1 s at a million sessions, on every snapshot. Most
sessions have no evidence but their record's own score: no grade event, no outcome word, no score
from outside the log. For those the dense scoring gives their own score to their own source and
nothing to the others, and the score in force is their own score when its source is in the
priority. `scores` computes those sessions that way, in a few passes over the log's columns, and
runs `source_scores` itself on the other sessions alone; the per-source columns are built only when
something reads them (`SourceColumns`). The same function on the same evidence: the numbers are
those of the dense scoring (tests/core/test_scoring.py compares the two, array for array).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt
from msgspec import Struct

from lesson_credit.core.base.arrays import distinct
from lesson_credit.core.log.snapshot import SourceInputs, SourceScores, source_scores
from lesson_credit.core.model.sources import NO_SOURCE, SOURCES, RewardInputs

if TYPE_CHECKING:
    from lesson_credit.core.model.sources import CodeArray

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
Result = tuple[FloatArray, SourceScores, IntArray, IntArray]  # what source_scores returns
T = TypeVar("T", bound=np.generic)

DENSE_SHARE = 4  # score densely when more than 1/DENSE_SHARE of the sessions have other evidence


def scores(log: SourceInputs, rewards: RewardInputs, dense_share: int | None = None) -> Result:
    """What `source_scores(log, rewards)` returns, computing densely only the sessions with evidence
    besides their own score."""
    n = len(log.own)
    rows = _with_evidence(log, rewards)
    if len(rows) * (DENSE_SHARE if dense_share is None else dense_share) > n:
        return source_scores(log, rewards)
    sub_base, sub, sub_applied, sub_applied_rows, positions = _of_rows(log, rewards, rows)
    allowed = np.zeros(len(SOURCES), dtype=np.bool_)
    allowed[[SOURCES.index(source) for source in rewards.priority]] = True
    own_counts = ~np.isnan(log.own)
    if not allowed.all():  # a source left out of the priority: its records' own scores do not count
        own_counts &= allowed.take(log.own_source)
    base = np.where(own_counts, log.own, np.nan)
    base[rows] = sub_base
    base.flags.writeable = False
    chosen: CodeArray = np.where(own_counts, log.own_source, NO_SOURCE).astype(np.int8, copy=False)
    chosen[rows] = sub.chosen
    # rows is sorted, so the grade events in force keep source_scores' order: by source, then row
    applied, applied_rows = positions[sub_applied], rows[sub_applied_rows]
    columns = SourceColumns(log.own, log.own_source, ((rows, sub.values),))
    every = SourceScores(columns, chosen, rows[sub.external_rows], rewards.priority)
    return base, every, applied, applied_rows


MAX_LAYERS = 8  # score afresh after this many rescorings in a row
MAX_SHARE = 8  # score afresh when the new events name more than 1/MAX_SHARE of the sessions


class Scored(Struct, frozen=True, eq=False):
    """A scoring of the log (what `scores` returns) and the evidence it came from."""

    log: SourceInputs
    rewards: RewardInputs
    result: Result


def rescored(previous: Scored | None, log: SourceInputs, rewards: RewardInputs, max_share: int = MAX_SHARE) -> Scored:
    """The scoring of `log` under `rewards`. When the log only grew since `previous` (the same reward
    inputs, no old session's evidence changed: a write's own append), only the sessions the new events
    name are scored again, over a copy of `previous`'s scores in force; else the whole log."""
    rows = None if previous is None else _named(previous, log, rewards, max_share)
    if previous is None or rows is None:
        return Scored(log, rewards, scores(log, rewards))
    if not len(rows):
        return Scored(log, rewards, previous.result)
    columns = previous.result[1].values
    if not isinstance(columns, SourceColumns) or len(columns.layers) >= MAX_LAYERS:
        return Scored(log, rewards, scores(log, rewards))
    return Scored(log, rewards, _merged(previous.result, columns, log, rewards, rows))


def _named(previous: Scored, log: SourceInputs, rewards: RewardInputs, max_share: int) -> IntArray | None:
    """The rows whose evidence may differ from `previous`'s (sorted), or None when an old row's may."""
    old = previous.log
    n0, g0, n = len(old.own), len(old.grade_rows), len(log.own)
    if rewards is not previous.rewards or n < n0 or len(log.grade_rows) < g0:
        return None
    # the old rows' own scores are append-only columns of the index; the rest is checked here
    kept = log.outcome_rows < n0
    same = (
        np.array_equal(log.grade_rows[:g0], old.grade_rows)  # no grade event read early found its session
        and np.array_equal(log.grade_base[:g0], old.grade_base, equal_nan=True)
        and np.array_equal(log.grade_source[:g0], old.grade_source)
        and np.array_equal(log.outcome_rows[kept], old.outcome_rows)  # the same outcome mapping
        and np.array_equal(log.outcome_values[kept], old.outcome_values)
    )
    if not same:
        return None
    graded = log.grade_rows[g0:]
    rows = distinct(np.concatenate([graded[graded >= 0], np.arange(n0, n, dtype=np.int64)]))
    return None if len(rows) * max_share > n else rows


def _merged(
    previous: Result, columns: SourceColumns, log: SourceInputs, rewards: RewardInputs, rows: IntArray
) -> Result:
    """`previous` with the scores of `rows` replaced by `source_scores` of those rows alone."""
    sub_base, sub, sub_applied, sub_applied_rows, positions = _of_rows(log, rewards, rows)
    old_base, old_scores, old_applied, old_applied_rows = previous
    n = len(log.own)
    base = _extended(old_base, n, np.nan)
    base[rows] = sub_base
    base.flags.writeable = False
    chosen = _extended(old_scores.chosen, n, NO_SOURCE)
    chosen[rows] = sub.chosen
    outside = old_scores.external_rows
    external = np.sort(np.concatenate([outside[~_find(rows, outside)[0]], rows[sub.external_rows]]))
    keep = ~_find(rows, old_applied_rows)[0]
    applied = np.concatenate([old_applied[keep], positions[sub_applied]])
    applied_rows = np.concatenate([old_applied_rows[keep], rows[sub_applied_rows]])
    order = np.lexsort((applied_rows, chosen[applied_rows]))  # source_scores' order: by source, then row
    layered = SourceColumns(log.own, log.own_source, (*columns.layers, (rows, sub.values)))
    every = SourceScores(layered, chosen, external.astype(np.int64), rewards.priority)
    return base, every, applied[order], applied_rows[order]


def _extended(values: npt.NDArray[T], n: int, fill: float) -> npt.NDArray[T]:
    """A writable copy of `values` grown to `n` items with `fill`."""
    out: npt.NDArray[Any] = np.full(n, fill, dtype=values.dtype)
    out[: len(values)] = values
    return out


def _with_evidence(log: SourceInputs, rewards: RewardInputs) -> IntArray:
    """The rows (sorted, distinct) that a grade event, an outcome word or a score from outside names."""
    n = len(log.own)
    parts = [log.grade_rows[log.grade_rows >= 0], log.outcome_rows]
    for outside in rewards.external.values():
        parts.append(np.flatnonzero(~np.isnan(outside[: min(n, len(outside))])))
    return distinct(np.concatenate(parts).astype(np.int64))


def _of_rows(
    log: SourceInputs, rewards: RewardInputs, rows: IntArray
) -> tuple[FloatArray, SourceScores, IntArray, IntArray, IntArray]:
    """`source_scores` of the sessions at `rows` alone (numbered 0.. in that order), and the positions
    in the whole log of the grade events it was given."""
    graded, grade_at = _find(rows, log.grade_rows)
    positions = np.flatnonzero(graded)
    outcomes, outcome_at = _find(rows, log.outcome_rows)
    sub = SourceInputs(
        own=log.own[rows],
        own_source=log.own_source[rows],
        outcome_rows=outcome_at[outcomes],
        outcome_values=log.outcome_values[outcomes],
        grade_rows=grade_at[positions],
        grade_base=log.grade_base[positions],
        grade_source=log.grade_source[positions],
    )
    external = {}
    for source, outside in rewards.external.items():
        mine = np.full(len(rows), np.nan)
        inside = rows < len(outside)
        mine[inside] = outside[rows[inside]]
        external[source] = mine
    base, sub_scores, applied, applied_rows = source_scores(sub, RewardInputs(rewards.priority, external))
    return base, sub_scores, applied, applied_rows, positions


DENSE_FIND = 4096  # `_find` looks this many items or more up through a row -> position table


def _find(rows: IntArray, wanted: IntArray) -> tuple[npt.NDArray[np.bool_], IntArray]:
    """(which of `wanted` are in `rows`, and where): `rows` sorted, distinct and not negative. A binary
    search (np.isin hashes both arrays: 5 ms for 50,000 grade events), or for many items a table of
    each row's position (a binary search of 50,000 grade events among as many rows: 5 ms; the table
    1-2 ms). Where an item is not in `rows`, its position is any in range (its `found` is False)."""
    if len(wanted) < DENSE_FIND or not len(rows):
        at = np.searchsorted(rows, wanted).astype(np.int64)
        found = at < len(rows)
        found[found] = rows[at[found]] == wanted[found]
        return found, at
    top = int(rows[-1])
    table = np.empty(top + 1, dtype=np.int32 if len(rows) < 2**31 else np.int64)  # unset items: any value
    table[rows] = np.arange(len(rows), dtype=table.dtype)
    inside = (wanted >= 0) & (wanted <= top)
    at = np.zeros(len(wanted), dtype=np.int64)
    at[inside] = table[wanted[inside]]
    np.clip(at, 0, len(rows) - 1, out=at)  # an unset item's garbage: in range, then found False below
    found = inside & (rows[at] == wanted)
    return found, at


class SourceColumns(Mapping[str, FloatArray]):
    """Every source's score per session, each column built on first use: the record's own score in
    its source's column, then each layer's sessions (`rows`) as scored densely, a later layer over an
    earlier one (a rescoring after an append: `rescored`)."""

    def __init__(
        self, own: FloatArray, own_source: CodeArray, layers: tuple[tuple[IntArray, Mapping[str, FloatArray]], ...]
    ):
        self._own, self._own_source, self.layers = own, own_source, layers
        self._built: dict[str, FloatArray] = {}

    def __getitem__(self, source: str) -> FloatArray:
        column = self._built.get(source)
        if column is None:
            if source not in SOURCES:
                raise KeyError(source)
            code = SOURCES.index(source)
            column = np.full(len(self._own), np.nan)
            np.copyto(column, self._own, where=self._own_source == code)
            for rows, scored in self.layers:
                column[rows] = scored[source]
            self._built[source] = column
        return column

    def __iter__(self) -> Iterator[str]:
        return iter(SOURCES)

    def __len__(self) -> int:
        return len(SOURCES)
