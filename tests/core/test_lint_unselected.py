"""`lint`'s `recorded-without-selection`: the sessions recorded last had no selection logged for them, though an
earlier session had one. A hook whose `select` fails (a context file moved, a bad option) still runs `record`: its
error line is a `#` comment in the file `record --lessons-file` reads, so each session is logged with no lessons and
nothing else says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lesson_credit.core.health import WARNING, Finding, lint
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.health_logs import LESSONS, VARIED

CODE = "recorded-without-selection"


def selection(session_id: str) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "selection", "candidates": ["a.md", "b.md"], "selected": ["a.md"]}
    return {**event, "propensity": {"a.md": 0.6, "b.md": 0.4}, "session_id": session_id}


def selected(session_id: str, i: int) -> list[dict[str, Any]]:
    return [selection(session_id), session(session_id, VARIED[i], {"a.md": 1.0})]


def bare(session_id: str, i: int) -> dict[str, Any]:
    return session(session_id, VARIED[i], {})  # what a record of a failed select's file logs: no lessons


def found(root: Path) -> dict[str, Finding]:
    return {f.code: f for f in lint(Workspace(root, clock=fixed_clock))}


def test_the_last_sessions_recorded_with_no_selection_after_selected_ones_are_a_warning(tmp_path: Path) -> None:
    events = [*selected("s0", 0), *selected("s1", 1), bare("x2", 2), bare("x3", 3), bare("x4", 4)]
    f = found(make_workspace(tmp_path, lessons=LESSONS, events=events))[CODE]
    assert f.severity == WARNING
    assert f.items == ("x2", "x3", "x4")  # in log order, back to s1 (selected)
    assert f.message == (
        "the last 3 sessions were recorded with no lessons chosen before them and no selection logged for them, "
        "though s1 before them had one: x2, x3, x4"
    )
    assert "select" in f.advice and "# comment" in f.advice


def test_no_warning_for_a_log_that_never_selects_a_short_gap_or_a_selected_last_session(tmp_path: Path) -> None:
    never = [bare(f"x{i}", i) for i in range(5)]  # `select` never used: sessions recorded by hand
    assert CODE not in found(make_workspace(tmp_path / "never", lessons=LESSONS, events=never))
    two = [*selected("s0", 0), bare("x1", 1), bare("x2", 2)]  # two sessions recorded by hand: not a streak yet
    assert CODE not in found(make_workspace(tmp_path / "two", lessons=LESSONS, events=two))
    last = [*selected("s0", 0), bare("x1", 1), bare("x2", 2), bare("x3", 3), *selected("s4", 4)]  # fixed since
    assert CODE not in found(make_workspace(tmp_path / "last", lessons=LESSONS, events=last))


def test_sessions_recorded_with_lessons_but_no_selection_are_no_failing_select(tmp_path: Path) -> None:
    """A hook whose select failed records sessions with no lessons: sessions recorded with lessons and no selection
    (gptme's own choice, another agent that never selects) are not that, and end the streak (before: listed)."""
    chosen = [session(f"g{i}", VARIED[i], {"a.md": 1.0}) for i in range(2, 5)]
    events = [*selected("s0", 0), *selected("s1", 1), *chosen]
    assert CODE not in found(make_workspace(tmp_path / "chosen", lessons=LESSONS, events=events))
    mixed = [*selected("s0", 0), bare("x1", 1), chosen[0], bare("x3", 3), bare("x4", 4)]  # b's g2 among them
    assert CODE not in found(make_workspace(tmp_path / "mixed", lessons=LESSONS, events=mixed))


def test_a_session_with_only_lessons_included_during_it_counts_as_recorded_with_none(tmp_path: Path) -> None:
    """A hook records `--lessons-file selected.txt --during tools/debug.md`: when its select failed, each session
    holds the lessons included during it only; those are no choice of select's (before: the run ended there, no
    warning)."""
    during = [
        {**session(f"x{i}", VARIED[i], {}), "lessons": [{"path": "a.md", "salience": 1.0, "included": "during"}]}
        for i in range(2, 5)
    ]
    f = found(make_workspace(tmp_path, lessons=LESSONS, events=[*selected("s0", 0), *selected("s1", 1), *during]))
    assert f[CODE].items == ("x2", "x3", "x4")
    # each holds a.md (`show x2` lists it): they were recorded with no lesson chosen before them (it said "with no
    # lessons")
    assert f[CODE].message.startswith("the last 3 sessions were recorded with no lessons chosen before them and ")
