"""The log's evidence on each session's reward sources, as columns (`SourceInputs`), and which sessions it ever
gave a result (`scored_by_log`: gptme's `total_sessions`, docs/format.md §7).

`core.log.snapshot.source_scores` scores sessions from these columns; `core.log.index.LogIndex.snapshot` and
`core.workspace.late_evidence` build them (`source_inputs`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from msgspec import Struct
from msgspec import field as struct_field

if TYPE_CHECKING:
    from lesson_credit.core.model.sources import CodeArray

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
PENDING_WORD = "unknown"  # the outcome word that is no result (docs/format.md §5.2; core.bandit.config)


def _no_rows() -> IntArray:
    return np.zeros(0, dtype=np.int64)


class SourceInputs(Struct, frozen=True):
    """The log's evidence on each session's sources, as columns (see `source_scores`)."""

    own: FloatArray  # the record's own score (NaN: pending or a string outcome)
    own_source: CodeArray  # its source
    outcome_rows: IntArray  # records with a string outcome that maps to a number
    outcome_values: FloatArray
    grade_rows: IntArray  # the row each grade event names (-1: unknown session)
    grade_base: FloatArray  # NaN: a retraction
    grade_source: CodeArray
    worded_rows: IntArray = struct_field(default_factory=_no_rows)  # records with an outcome word but `unknown`
    outside_rows: IntArray = struct_field(default_factory=_no_rows)  # sessions scored from outside, any source


def source_inputs(
    labels: Iterable[tuple[int, str]],
    outcomes: Mapping[str, float],
    external: Mapping[str, FloatArray],
    own: tuple[FloatArray, CodeArray],
    grades: tuple[IntArray, FloatArray, CodeArray],
) -> SourceInputs:
    """The columns of a log whose records' outcome words are `labels` (row, word), mapped by `outcomes`, its
    records' own scores and sources `own`, its grade events' rows, scores and sources `grades`, and `external`
    the scores from outside the log per source (core.model.sources.RewardInputs)."""
    pairs = list(labels)
    labelled = [(row, outcomes[label]) for row, label in pairs if label in outcomes]
    outside = [np.flatnonzero(~np.isnan(column)) for column in external.values()]
    return SourceInputs(
        *own,
        outcome_rows=np.array([row for row, _ in labelled], dtype=np.int64),
        outcome_values=np.array([value for _, value in labelled], dtype=np.float64),
        grade_rows=grades[0],
        grade_base=grades[1],
        grade_source=grades[2],
        worded_rows=np.array([row for row, label in pairs if label != PENDING_WORD], dtype=np.int64),
        outside_rows=np.unique(np.concatenate(outside)).astype(np.int64) if outside else _no_rows(),
    )


def scored_by_log(log: SourceInputs, n: int) -> npt.NDArray[np.bool_]:
    """Per session of the first `n`: whether the log gave it a result once, whatever came after and whatever
    config.toml says now: a number (its record's reward or outcome, a grade of any source), an outcome word but
    `unknown` (mapped now or not), or a score from outside the log (of any source). gptme's bandit counted the
    session then and never counts back; a priority or an `[outcomes]` table edited since (which makes the session
    pending, or its source not the one in force) takes nothing from the count (docs/format.md §7)."""
    once = np.zeros(n, dtype=np.bool_)
    m = min(n, len(log.own))
    once[:m] = ~np.isnan(log.own[:m])
    for rows in (log.outcome_rows, log.worded_rows, log.outside_rows):
        once[rows[rows < n]] = True
    graded = (log.grade_rows >= 0) & (log.grade_rows < n) & ~np.isnan(log.grade_base)
    once[log.grade_rows[graded]] = True
    return once
