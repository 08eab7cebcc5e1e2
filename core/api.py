"""Core's public types for a front end: the value types, read models and pure helpers the dashboard
may use without going through its door (tui/source.py, which makes the engine's calls).

Nothing here reads the log or runs an analysis. Each name is imported from its home module when it
is first asked for (a module `__getattr__`): importing this module costs nothing, and a name whose
module is heavy (the simulator, LOO) loads only with the screen that imports it. `_HOME` says where
each name lives; the `TYPE_CHECKING` imports give mypy the same names (tests/tui/test_tui_door.py
checks the two agree).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same names for mypy (re-exported: pyproject.toml's override for this module)
    from lesson_credit.core.analysis.agreement import DEFAULT_THRESHOLD, Agreement
    from lesson_credit.core.analysis.effects import LooResult
    from lesson_credit.core.analysis.estimates import (
        AGAINST_AVERAGE_MARK,
        Effect,
        against_average_line,
        kind,
        marks_against_average,
        notes,
        nothing_line,
        some_of,
    )
    from lesson_credit.core.analysis.over_time import OverTime
    from lesson_credit.core.bandit.policy import POLICIES
    from lesson_credit.core.base.errors import LessonCreditError, WorkspaceError
    from lesson_credit.core.base.files import LockHeld, StoredUnread, StoreError
    from lesson_credit.core.base.gc_pause import gc_paused
    from lesson_credit.core.base.numbers import counted, decimal, fixed, listed, signed, span
    from lesson_credit.core.base.shorten import cells, index_names, lesson_labels, shorten, shorten_lesson
    from lesson_credit.core.grading import (
        GradeAppended,
        GradeConflict,
        NothingToUndo,
        Undone,
        UndoRefusal,
        grade_text,
        undo_note,
        undo_walk,
        undo_words,
    )
    from lesson_credit.core.health import ERROR, Finding
    from lesson_credit.core.library.lessons import MISSING, Lesson, LessonProblem
    from lesson_credit.core.library.salience import SalienceBreakdown
    from lesson_credit.core.log.store import LogProblem
    from lesson_credit.core.model.beta import density
    from lesson_credit.core.model.credit import STRATEGIES
    from lesson_credit.core.model.settings import CreditSettings
    from lesson_credit.core.model.sources import DEFAULT_PRIORITY, HEURISTIC, HUMAN, JUDGE, OUTCOME
    from lesson_credit.core.query import order_rows
    from lesson_credit.core.reward_report import AgreementReport, GradingQueue
    from lesson_credit.core.sessions.record_file import logged_judge
    from lesson_credit.core.sessions.transcript import find_all
    from lesson_credit.core.sim.simulate import (
        METRICS,
        SCENARIOS,
        EstimatorSummary,
        MetricSummary,
        Scenario,
        SimulationReport,
    )
    from lesson_credit.core.views import (
        Explanation,
        GradeRecord,
        LessonCredit,
        LessonRow,
        LessonUsage,
        PosteriorTable,
        SessionSummary,
        SessionTable,
        SourceScore,
    )

_HOME: dict[str, str] = {
    name: "lesson_credit.core." + module
    for module, names in {
        "analysis.agreement": ("DEFAULT_THRESHOLD", "Agreement"),
        "analysis.effects": ("LooResult",),
        "analysis.estimates": (
            "AGAINST_AVERAGE_MARK",
            "Effect",
            "against_average_line",
            "kind",
            "marks_against_average",
            "notes",
            "nothing_line",
            "some_of",
        ),
        "analysis.over_time": ("OverTime",),
        "bandit.policy": ("POLICIES",),
        "base.errors": ("LessonCreditError", "WorkspaceError"),
        "base.files": ("LockHeld", "StoreError", "StoredUnread"),
        "base.numbers": ("counted", "decimal", "fixed", "listed", "signed", "span"),
        "base.shorten": ("cells", "index_names", "lesson_labels", "shorten", "shorten_lesson"),
        "grading": (
            "GradeAppended",
            "GradeConflict",
            "NothingToUndo",
            "UndoRefusal",
            "Undone",
            "grade_text",
            "undo_note",
            "undo_walk",
            "undo_words",
        ),
        "health": ("ERROR", "Finding"),
        "library.lessons": ("MISSING", "Lesson", "LessonProblem"),
        "library.salience": ("SalienceBreakdown",),
        "log.store": ("LogProblem",),
        "model.beta": ("density",),
        "model.credit": ("STRATEGIES",),
        "model.settings": ("CreditSettings",),
        "model.sources": ("DEFAULT_PRIORITY", "HEURISTIC", "HUMAN", "JUDGE", "OUTCOME"),
        "query": ("order_rows",),
        "reward_report": ("AgreementReport", "GradingQueue"),
        "base.gc_pause": ("gc_paused",),
        "sessions.record_file": ("logged_judge",),
        "sessions.transcript": ("find_all",),
        "sim.simulate": ("METRICS", "SCENARIOS", "EstimatorSummary", "MetricSummary", "Scenario", "SimulationReport"),
        "views": (
            "Explanation",
            "GradeRecord",
            "LessonCredit",
            "LessonRow",
            "LessonUsage",
            "PosteriorTable",
            "SessionSummary",
            "SessionTable",
            "SourceScore",
        ),
    }.items()
    for name in names
}

if not TYPE_CHECKING:  # hidden from mypy, which would otherwise accept any name as this module's

    def __getattr__(name: str) -> object:
        home = _HOME.get(name)
        if home is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value  # asked once: later reads find it without this call
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_HOME})
