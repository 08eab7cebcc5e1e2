"""Health checks: the ways real lesson bandits have silently broken, each with what to do.

`gather` collects what the checks look at from a workspace's log, library and journals
(`HealthData`); each check is a function of that data returning findings that name the
lessons or sessions involved. An `error` fails `lesson-credit lint` (exit 1, for an
agent's CI); a `warning` is reported and fails it only with `--fail-on warning`. Sessions
waiting for a grade are warnings: a fresh session is pending by design.

`data` holds `HealthData`, `gather` and `Finding`; the checks are grouped by what they look at
(`log_checks`: the log and what is derived from it; `library_checks`: the library and its
configuration), and `CHECKS` below runs them in `lint`'s order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from lesson_credit.core.health.data import (
    COLLAPSE_SPREAD,
    ERROR,
    MIN_INJECTED_FOR_NEVER_SALIENT,
    MIN_SESSIONS_FOR_NEVER_INJECTED,
    PENDING_STALE_DAYS,
    PROBLEM,
    WARNING,
    Finding,
    HealthData,
    gather,
)
from lesson_credit.core.health.library_checks import (
    broad_keywords,
    category_keywords,
    lesson_problems,
    library_config,
    never_injected,
    never_salient,
    no_lessons,
    unmapped_outcomes,
    unpassable_ids,
)
from lesson_credit.core.health.log_checks import (
    STATE_FINDINGS,
    collapsed_posteriors,
    constant_rewards,
    dropout_lines_skipped,
    duplicate_session_ids,
    ghost_arms,
    grades_retracted,
    lesson_listed_twice,
    missing_salience,
    prefixed_ids,
    recorded_passed_over,
    recorded_without_selection,
    selected_never_recorded,
    sessions_never_graded,
    sessions_pending,
    stale_bandit_state,
    torn_lines,
    unreadable_lines,
)

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace

__all__ = [  # what this package has always offered: the dashboard, the CLI and the tests import from here
    "COLLAPSE_SPREAD",
    "ERROR",
    "MIN_INJECTED_FOR_NEVER_SALIENT",
    "MIN_SESSIONS_FOR_NEVER_INJECTED",
    "PENDING_STALE_DAYS",
    "PROBLEM",
    "STATE_FINDINGS",
    "WARNING",
    "CHECKS",
    "Finding",
    "HealthData",
    "gather",
    "lint",
    "run_checks",
    "broad_keywords",
    "category_keywords",
    "collapsed_posteriors",
    "constant_rewards",
    "dropout_lines_skipped",
    "duplicate_session_ids",
    "ghost_arms",
    "grades_retracted",
    "lesson_listed_twice",
    "lesson_problems",
    "library_config",
    "missing_salience",
    "never_injected",
    "never_salient",
    "no_lessons",
    "prefixed_ids",
    "recorded_passed_over",
    "recorded_without_selection",
    "selected_never_recorded",
    "sessions_never_graded",
    "sessions_pending",
    "stale_bandit_state",
    "unmapped_outcomes",
    "unpassable_ids",
    "unreadable_lines",
]


def lint(ws: Workspace) -> list[Finding]:
    """All findings for a workspace, problems first."""
    return run_checks(gather(ws))


def run_checks(health: HealthData) -> list[Finding]:
    """Every check's findings, problems first (then by code)."""
    findings = [finding for check in CHECKS for finding in check(health)]
    findings.sort(key=lambda f: (f.severity != ERROR, f.code))
    return findings


CHECKS: tuple[Callable[[HealthData], list[Finding]], ...] = (
    no_lessons,
    unreadable_lines,
    torn_lines,
    stale_bandit_state,
    duplicate_session_ids,
    lesson_listed_twice,
    library_config,
    lesson_problems,
    unpassable_ids,
    category_keywords,
    dropout_lines_skipped,
    sessions_never_graded,
    sessions_pending,
    grades_retracted,
    selected_never_recorded,
    recorded_without_selection,
    recorded_passed_over,
    constant_rewards,
    collapsed_posteriors,
    ghost_arms,
    prefixed_ids,
    never_injected,
    never_salient,
    missing_salience,
    broad_keywords,
    unmapped_outcomes,
    lambda h: [Finding(code, WARNING, message, advice, items, why) for code, message, advice, items, why in h.records],
)
