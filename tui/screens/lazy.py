"""The screens the app opens by name, each imported when first shown: only the Lessons screen (the
first paint) is imported with the app; the others, and what they import, load when first needed.
"""

from __future__ import annotations

import sys
from typing import Any

from textual.screen import Screen

from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source import WorkspaceSource


def help_screens() -> tuple[tuple[str, type[Screen[Any]]], ...]:
    """Every screen's bindings for `?`. Imported here, not at start-up: only the Lessons screen
    (the first paint) is imported with the app; the others (and what they import) load when first
    shown."""
    from lesson_credit.tui.screens.agreement import AgreementScreen
    from lesson_credit.tui.screens.analysis import AnalysisScreen
    from lesson_credit.tui.screens.confirm import ConfirmCommit, ConfirmScreen
    from lesson_credit.tui.screens.grade_history import GradeHistoryScreen
    from lesson_credit.tui.screens.grade_value import GradeValueScreen
    from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
    from lesson_credit.tui.screens.health import HealthScreen
    from lesson_credit.tui.screens.jump import JumpScreen
    from lesson_credit.tui.screens.lesson_over_time import LessonOverTimeScreen
    from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
    from lesson_credit.tui.screens.session_detail import SessionDetailScreen
    from lesson_credit.tui.screens.sessions import SessionsScreen
    from lesson_credit.tui.screens.simulation import SimulationScreen
    from lesson_credit.tui.screens.transcript import TranscriptScreen
    from lesson_credit.tui.screens.what_if import WhatIfScreen

    return (
        ("Lessons", LessonsScreen),
        ("Sessions", SessionsScreen),
        ("Session detail", SessionDetailScreen),
        ("What-if", WhatIfScreen),
        ("Analysis", AnalysisScreen),
        ("Lesson rewards", LessonRewardsScreen),
        ("Lesson over time", LessonOverTimeScreen),
        ("Simulation", SimulationScreen),
        ("Health", HealthScreen),
        ("Transcript", TranscriptScreen),
        ("Agreement", AgreementScreen),
        ("Grading queue", GradingQueueScreen),
        ("Exact grade dialog", GradeValueScreen),
        ("Grade history", GradeHistoryScreen),
        ("Confirm dialog", ConfirmScreen),
        ("Replace grade dialog", ConfirmCommit),
        ("Go to session dialog", JumpScreen),
    )


def sessions_screen(source: WorkspaceSource) -> Screen[Any]:
    from lesson_credit.tui.screens.sessions import SessionsScreen

    return SessionsScreen(source)


def is_session_detail(screen: Screen[Any]) -> bool:
    """Without importing the Session detail screen (it loads when first opened)."""
    module = sys.modules.get("lesson_credit.tui.screens.session_detail")
    return module is not None and isinstance(screen, module.SessionDetailScreen)


def analysis_screen(source: WorkspaceSource) -> Screen[Any]:
    from lesson_credit.tui.screens.analysis import AnalysisScreen

    return AnalysisScreen(source)


def simulation_screen(source: WorkspaceSource) -> Screen[Any]:
    from lesson_credit.tui.screens.simulation import SimulationScreen

    return SimulationScreen(source)


def health_screen(source: WorkspaceSource) -> Screen[Any]:
    from lesson_credit.tui.screens.health import HealthScreen

    return HealthScreen(source)
