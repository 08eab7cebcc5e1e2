"""A floor saved from What-if changes the joint fit (the salience weights): Analysis and the Lessons screen's
ranking show the fit at the new floor, as `loo` on the workspace's files does, not the one computed before the
save (the dashboard's own save changed no byte of the log, and its views were kept per log version)."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.analysis import AnalysisScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from tests.tui.test_tui_flows import lessons_screen
from tests.tui.tui_fixture import fixed_clock, settle, wait_until

SIZE = (120, 40)


def _effects(results: object) -> dict[str, float | None]:
    return {r.path: (None if r.effect is None else round(r.effect.estimate, 9)) for r in results}  # type: ignore[attr-defined]


def _with_unmentioned(root: Path) -> Path:
    """The analysis fixture (every journal mentions its lessons: salience 1, where the floor weighs nothing) and
    twelve sessions whose journals mention none of their lessons (salience 0: weighed by the floor alone)."""
    ws = Workspace(root, clock=fixed_clock)
    for i in range(12):
        journal = root / "state" / "journals" / f"quiet{i:02d}.md"
        journal.write_text(f"Session quiet {i}: nothing of note.\n", encoding="utf-8")
        lessons = ["tools/retry-budget.md", "workflow/commit-often.md"][: 1 + i % 2]
        ws.record(
            f"quiet{i:02d}", journal, lessons, reward=0.1 + 0.05 * (i % 4), timestamp=f"2026-03-{i + 1:02d}T09:00:00Z"
        )
    return root


async def test_a_floor_saved_from_what_if_refits_analysis_and_the_ranking(analysis_root: Path) -> None:
    from lesson_credit.core.analysis.limits import MIN_WITH, MIN_WITHOUT

    _with_unmentioned(analysis_root)
    app = LessonCreditApp(Workspace(analysis_root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("a")
        await settle(pilot)
        analysis = app.screen
        assert isinstance(analysis, AnalysisScreen) and analysis.view is not None
        before = _effects(analysis.view.results)
        await pilot.press("l", "w")
        await settle(pilot)
        assert isinstance(app.screen, WhatIfScreen)
        await pilot.press(*["right_square_bracket"] * 8, "ctrl+s")
        await settle(pilot)
        await pilot.press("y")
        await settle(pilot)
        await pilot.press("escape", "a")
        await settle(pilot)
        # the second way: a workspace opened on the files as the save left them
        fresh = Workspace(analysis_root, clock=fixed_clock)
        assert fresh.settings.floor == 0.7  # the default 0.3 and eight steps of 0.05
        expected = _effects(fresh.loo(min_with=MIN_WITH, min_without=MIN_WITHOUT, write=False))
        assert expected != before  # the floor moves this fixture's estimates
        assert analysis.view is not None and _effects(analysis.view.results) == expected
        await pilot.press("l")
        await settle(pilot)
        lessons = lessons_screen(app)
        ranking = fresh.effects()
        await wait_until(pilot, lambda: lessons.view is not None and lessons.view.effects is not None)
        assert lessons.view is not None and lessons.view.effects is not None
        assert {k: round(v, 9) for k, v in lessons.view.effects.items()} == {k: round(v, 9) for k, v in ranking.items()}
