"""The views the dashboard's door (tui/source.py) hands the screens: immutable answers, each as of
one version of the log, read on the UI thread without a lock.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:  # imported where used: the health and analysis modules load when their screen opens, the
    # Sessions screen's search and series when it first reads, numpy and the engine's types after the
    # first frame (tests/tui/test_tui_first_frame.py)
    import numpy as np
    import numpy.typing as npt

    from lesson_credit.core.api import (
        Finding,
        Lesson,
        LessonProblem,
        LessonRow,
        LessonUsage,
        LogProblem,
        LooResult,
        PosteriorTable,
        SessionSummary,
        SessionTable,
    )
    from lesson_credit.tui.series import RewardHistogram, RewardSeries
    from lesson_credit.tui.session_search import Found, SessionSearch

BROKEN = "broken"  # status shown for lesson files the library could not load
MAX_PINS = 3


@dataclass(frozen=True, eq=False)
class LessonsView:
    """Everything the Lessons screen shows, as of one version of the log."""

    version: int
    table: PosteriorTable
    rows: tuple[LessonRow, ...]  # the table's rows plus broken lesson files not in the log
    usage: Mapping[str, LessonUsage]
    p_top_k: Mapping[str, float] | None  # None: still being estimated (see WorkspaceSource.p_top_k)
    k: int
    lessons: Mapping[str, Lesson]
    problems: Mapping[str, str]  # lesson id -> what is wrong with its file
    effects: Mapping[str, float] | None = None  # joint effect per lesson; None: still being computed
    effects_of: int | None = None  # the log version `effects` were fitted on (an older one while refitting)
    retired: frozenset[str] = frozenset()  # arms `prune` retired whose file is still gone: hidden, as `status` does
    policy: str = ""  # the selection policy in force (config.toml's [select] policy, else the strategy)

    @property
    def intervals_missing(self) -> bool:
        """Read without intervals (the first paint): `WorkspaceSource.with_intervals` adds them."""
        return any(row.ci_low != row.ci_low for row in self.rows)  # NaN

    def row(self, path: str) -> LessonRow | None:
        for row in self.rows:
            if row.path == path:
                return row
        return None


class SessionRows(Sequence["SessionSummary"]):
    """A table's sessions as SessionSummary objects, each built when read (a big log has a million)."""

    def __init__(self, table: SessionTable) -> None:
        self.table = table

    def __len__(self) -> int:
        return len(self.table)

    @overload
    def __getitem__(self, index: int) -> SessionSummary: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[SessionSummary]: ...
    def __getitem__(self, index: int | slice) -> SessionSummary | Sequence[SessionSummary]:
        n = len(self.table)
        if isinstance(index, slice):
            return tuple(self.table.summary(row) for row in range(*index.indices(n)))
        row = index + n if index < 0 else index
        if not 0 <= row < n:
            raise IndexError(index)
        return self.table.summary(row)


@dataclass(frozen=True, eq=False)
class SessionsView:
    """Every session as columns (not an object each), with what the Sessions screen derives from them."""

    version: int
    read_at: int  # the source's version it was read at (WriteQueue.graded_unread: a later write is not in it)
    table: SessionTable  # log order
    log_problems: tuple[LogProblem, ...]
    rewards: RewardSeries
    search: SessionSearch  # the filter over the table's columns
    troubled: frozenset[str] = frozenset()  # sessions a problem line names (a reused id, say)

    lesson_entries: tuple[tuple[str, ...], npt.NDArray[np.int32], npt.NDArray[np.int32]] | None = None
    """(arm ids, each entry's arm, each entry's session row): which lessons each session had."""
    words: dict[str, str] = field(default_factory=dict)  # session -> the gptme outcome word its reward comes from

    @property
    def pending(self) -> int:
        """Sessions not graded yet."""
        return len(self.search.pending_rows)

    def with_lesson(self, needle: str, pending_only: bool, limit: int) -> Found:
        """Sessions (newest first, up to `limit`) that had a lesson whose id contains `needle`."""
        import numpy as np

        from lesson_credit.tui.session_search import Found
        from lesson_credit.tui.text import folded

        if self.lesson_entries is None or not needle:
            return self.search.find("", pending_only, limit)
        arm_ids, entry_arm, entry_session = self.lesson_entries
        needle = folded(needle)  # (either Unicode form of a lesson id, as the jump's session ids)
        arms = [i for i, arm in enumerate(arm_ids) if needle in folded(arm)]
        rows = np.unique(entry_session[np.isin(entry_arm, arms)]).astype(np.int64)
        if pending_only:
            rows = np.intersect1d(rows, self.search.pending_rows)
        newest = rows[::-1]
        return Found(newest[:limit].copy(), len(newest))

    @property
    def sessions(self) -> Sequence[SessionSummary]:
        """In log order, each built when read: use `table` (columns) to go over many."""
        return SessionRows(self.table)


@dataclass(frozen=True, eq=False)
class AnalysisView:
    """Leave-one-out lift of every lesson in the log, as of one version of the log."""

    version: int
    results: tuple[LooResult, ...]
    graded: int  # graded sessions the lifts are computed over
    min_with: int
    min_without: int
    written: str | None = None  # where loo-results.json was written (relative to the workspace), when it was
    sessions: int = 0  # sessions logged, graded or not

    def result(self, path: str) -> LooResult | None:
        for result in self.results:
            if result.path == path:
                return result
        return None


@dataclass(frozen=True, eq=False)
class LessonRewards:
    """One lesson's LOO result and the rewards of graded sessions with and without it."""

    version: int
    result: LooResult | None  # None: the lesson is not in the log
    with_lesson: RewardHistogram
    without_lesson: RewardHistogram


@dataclass(frozen=True, eq=False)
class HealthView:
    version: int
    findings: tuple[Finding, ...]  # problems first, as lesson_credit.core.health.lint orders them
    library_changed: bool = False  # a re-check re-read the lesson files and found them changed
    read_at: int = 0  # the source's version it was read at (WriteQueue.graded_unread: a later write is not in it)
    lessons: frozenset[str] = frozenset()  # the lesson ids a finding's items may be: the library's and the log's


@dataclass(frozen=True)
class Problems:
    log: tuple[LogProblem, ...]
    lessons: tuple[LessonProblem, ...]
    log_missing: str | None = None  # the log file is gone (Workspace.log_missing): why every lesson is unused
    config: str | None = None  # why config.toml cannot be read now (Workspace.config_problem)
    records_missing: str | None = None  # the records rewards came from are gone (Workspace.records_missing)


@dataclass(frozen=True, eq=False)
class SourceSnapshot:
    """What changed, as one frozen value: posted once per write or poll that changed the workspace."""

    version: int  # the source's version: +1 per change, whoever caused it
    log_version: int  # the Workspace's read of the log
    session_ids: Sequence[str]  # log order
    base: npt.NDArray[np.float64]  # read-only: each session's grade in force, NaN = pending
    problems: Problems

    @property
    def sessions(self) -> int:
        return len(self.session_ids)

    def grade_of(self, session_id: str) -> float | None:
        """The session's grade in force as of this snapshot (None: pending or unknown)."""
        try:
            value = float(self.base[self.session_ids.index(session_id)])
        except ValueError:
            return None
        return None if value != value else value

    def next_pending(
        self,
        after: str | None,
        expected: Callable[[str, float | None], float | None] = lambda _sid, value: value,
        touched: Collection[str] = (),
    ) -> str | None:
        """The first pending session after `after` in log order (wrapping round; never `after` itself).

        `expected(session_id, grade here)` is the grade a session will have once queued writes are
        applied; `touched` names the sessions it may differ for (the rest are pending as here)."""
        import numpy as np

        pending = np.isnan(self.base)  # a copy: one flag per session, in log order
        ids = self.session_ids
        for sid in touched:
            if sid in ids:  # (the ids' own lookup, not a scan)
                pending[ids.index(sid)] = expected(sid, self.grade_of(sid)) is None
        start = ids.index(after) + 1 if after is not None and after in ids else 0
        for rows in (np.flatnonzero(pending[start:]) + start, np.flatnonzero(pending[:start])):
            for at in range(0, len(rows), 256):  # (a chunk at a time: the first is nearly always the one)
                for row in rows[at : at + 256].tolist():
                    if (session_id := ids[int(row)]) != after:
                        return session_id
        return None
