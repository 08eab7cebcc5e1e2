"""The dashboard's one door to the engine: Workspace calls made thread-safe, answers as immutable views.

Workers run in threads and the Workspace caches what it has read, so every call goes
through one lock. The UI thread never calls the Workspace: it only reads the views.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core import beta as beta_mod
from core.fold import CreditSettings
from core.lessons import Lesson, LessonProblem
from core.store import LogProblem
from core.workspace import (
    Explanation,
    GradeRecord,
    LessonRow,
    LessonUsage,
    PosteriorTable,
    SessionSummary,
    Workspace,
)
from tui.series import RewardSeries, reward_series

BROKEN = "broken"  # status shown for lesson files the library could not load
MAX_PINS = 3


@dataclass(frozen=True, eq=False)
class LessonsView:
    """Everything the Lessons screen shows, as of one version of the log."""

    version: int
    table: PosteriorTable
    rows: tuple[LessonRow, ...]  # the table's rows plus broken lesson files not in the log
    usage: Mapping[str, LessonUsage]
    p_top_k: Mapping[str, float]
    k: int
    lessons: Mapping[str, Lesson]
    problems: Mapping[str, str]  # lesson id -> what is wrong with its file

    def row(self, path: str) -> LessonRow | None:
        for row in self.rows:
            if row.path == path:
                return row
        return None


@dataclass(frozen=True, eq=False)
class SessionsView:
    version: int
    sessions: tuple[SessionSummary, ...]  # log order
    log_problems: tuple[LogProblem, ...]
    rewards: RewardSeries


@dataclass(frozen=True)
class WhatIfRow:
    path: str
    category: str
    status: str
    n: int
    mean_now: float
    mean_then: float
    rank_now: int  # 1 = best mean
    rank_then: int

    @property
    def delta(self) -> float:
        return self.mean_then - self.mean_now

    @property
    def rank_change(self) -> int:
        """Places moved up (positive) or down (negative) under the what-if settings."""
        return self.rank_now - self.rank_then


@dataclass(frozen=True, eq=False)
class WhatIfView:
    current: CreditSettings
    proposed: CreditSettings
    rows: tuple[WhatIfRow, ...]  # by rank under the proposed settings


@dataclass(frozen=True)
class Problems:
    log: tuple[LogProblem, ...]
    lessons: tuple[LessonProblem, ...]


@dataclass(frozen=True)
class UndoOutcome:
    record: GradeRecord | None  # the grade appended, None when nothing was written
    message: str


def ranks(rows: tuple[LessonRow, ...]) -> dict[str, int]:
    """1-based rank by posterior mean, best first; ties broken by id so ranks are stable."""
    order = sorted(rows, key=lambda r: (-r.mean, r.path))
    return {row.path: i + 1 for i, row in enumerate(order)}


class WorkspaceSource:
    """Serialises access to one Workspace and turns its answers into views for the screens."""

    def __init__(self, workspace: Workspace, *, seed: int = 0) -> None:
        self.workspace = workspace
        self.seed = seed  # P(top-k) is a Monte Carlo estimate: a fixed seed keeps it steady
        self._lock = threading.RLock()

    @property
    def name(self) -> str:
        return self.workspace.root.name

    def refresh(self) -> bool:
        with self._lock:
            return self.workspace.refresh()

    def settings(self) -> CreditSettings:
        with self._lock:
            return self.workspace.settings

    def problems(self) -> Problems:
        with self._lock:
            return Problems(tuple(self.workspace.log_problems()), tuple(self.workspace.lesson_problems()))

    def lessons_view(self) -> LessonsView:
        with self._lock:
            ws = self.workspace
            ws.refresh()
            table = ws.posteriors()
            library = ws.library()
            problems = _problems_by_lesson(library.problems, library.roots)
            rows = list(table.rows)
            known = {row.path for row in rows}
            settings = table.settings
            for lesson_id in problems:
                if lesson_id not in known and lesson_id.endswith(".md"):
                    rows.append(_placeholder_row(lesson_id, settings))
            return LessonsView(
                version=ws.version,
                table=table,
                rows=tuple(rows),
                usage=ws.lesson_usage(),
                p_top_k=ws.p_top_k(seed=self.seed),
                k=ws.config.k,
                lessons=library.by_id(),
                problems=problems,
            )

    def sessions_view(self) -> SessionsView:
        with self._lock:
            ws = self.workspace
            ws.refresh()
            sessions = tuple(ws.sessions())
            problems = tuple(ws.log_problems())
            version = ws.version
        return SessionsView(version, sessions, problems, reward_series([s.base_reward for s in sessions]))

    def explain(self, session_id: str, draft: float | None = None, *, with_journal: bool = True) -> Explanation:
        with self._lock:
            return self.workspace.explain(session_id, base_reward=draft, with_journal=with_journal)

    def grade(self, session_id: str, reward: float, note: str | None = None) -> GradeRecord:
        with self._lock:
            return self.workspace.grade(session_id, reward, grader="manual", note=note or None)

    def undo_grade(self, session_id: str) -> UndoOutcome:
        """Append the grade before the latest one again: the log is append-only, so undo is a new grade."""
        with self._lock:
            ws = self.workspace
            ws.refresh()
            history = ws.grade_history(session_id)
            logged_line = ws.session(session_id).line
            if not history:
                return UndoOutcome(None, "Nothing to undo: this session has never been graded.")
            if len(history) == 1:
                if history[0].line == logged_line:
                    return UndoOutcome(None, "Nothing to undo: the session still has the grade it was logged with.")
                return UndoOutcome(
                    None,
                    "Undo cannot make a session pending again: a grade cannot be taken out of the "
                    "append-only log. Grade it again to change it.",
                )
            latest, previous = history[-1], history[-2]
            note = f"undo: back to {previous.base_reward:g} ({previous.grader}, line {previous.line})"
            record = ws.grade(session_id, previous.base_reward, grader="manual", note=note)
            return UndoOutcome(
                record, f"Undone: {latest.base_reward:g} → {previous.base_reward:g} (appended as a new grade)."
            )

    def what_if(self, settings: CreditSettings) -> WhatIfView:
        with self._lock:
            ws = self.workspace
            ws.refresh()
            current = ws.posteriors()
            proposed = ws.posteriors(settings)
        rank_now = ranks(current.rows)
        rank_then = ranks(proposed.rows)
        now = {row.path: row for row in current.rows}
        rows = [
            WhatIfRow(
                path=row.path,
                category=row.category,
                status=row.status,
                n=row.n,
                mean_now=now[row.path].mean if row.path in now else row.mean,
                mean_then=row.mean,
                rank_now=rank_now.get(row.path, rank_then[row.path]),
                rank_then=rank_then[row.path],
            )
            for row in proposed.rows
        ]
        rows.sort(key=lambda r: (r.rank_then, r.path))
        return WhatIfView(current.settings, settings, tuple(rows))

    def save_settings(self, settings: CreditSettings) -> None:
        with self._lock:
            self.workspace.save_settings(settings)


def _problems_by_lesson(problems: tuple[LessonProblem, ...], roots: tuple[str, ...]) -> dict[str, str]:
    """Lesson problems keyed by the lesson id the file would have had (its path when outside a root)."""
    out: dict[str, str] = {}
    for problem in problems:
        key = problem.path
        path = Path(problem.path)
        for root in roots:
            try:
                key = path.relative_to(root).as_posix()
                break
            except ValueError:
                continue
        out[key] = problem.reason
    return out


def _placeholder_row(lesson_id: str, settings: CreditSettings) -> LessonRow:
    """A row for a lesson file that failed to load and has no evidence: the prior, status broken."""
    a, b = settings.prior_alpha, settings.prior_beta
    low, high = beta_mod.interval(np.array([a]), np.array([b]))
    return LessonRow(
        path=lesson_id,
        title=lesson_id,
        category=lesson_id.split("/")[0] if "/" in lesson_id else "",
        status=BROKEN,
        n=0,
        alpha=a,
        beta=b,
        mean=a / (a + b),
        ci_low=float(low[0]),
        ci_high=float(high[0]),
        rewarded=0,
        last_session=None,
        last_credit=None,
    )
