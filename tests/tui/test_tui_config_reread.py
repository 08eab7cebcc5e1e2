"""The dashboard follows config.toml: a floor set by `replay --write` (or an editor) while it is open is the
one its Lessons view folds with, after the next poll; a config.toml that cannot be read keeps the settings
read before, said once; a lesson written while it is open is shown (the library is read again every few
seconds)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.lessons import LessonsScreen
from lesson_credit.tui.source_views import LessonsView
from tests.support.engine_helpers import CONFIG_REL, lesson_text
from tests.support.textual_private import notification_texts
from tests.tui.tui_fixture import fixed_clock, settle

SIZE = (120, 40)


def _means(rows: object) -> dict[str, float]:
    return {row.path: round(row.mean, 9) for row in rows}  # type: ignore[attr-defined]


async def _lessons(pilot: Any) -> LessonsScreen:
    """The Lessons screen once its first view has landed."""
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, LessonsScreen) and screen.view is not None
    return screen


def _view(screen: LessonsScreen) -> LessonsView:
    assert screen.view is not None
    return screen.view


async def test_a_floor_set_while_the_dashboard_is_open_is_the_one_it_shows(app: LessonCreditApp, ws_root: Path) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await _lessons(pilot)
        before = _means(_view(screen).table.rows)
        (ws_root / CONFIG_REL).write_text("floor = 0.9\n")
        app._check_source()  # the poll (off in this test)
        await settle(pilot)
        assert _view(screen).table.settings.floor == 0.9
        # the second way: a workspace opened on the file as it is now
        expected = _means(Workspace(ws_root, clock=fixed_clock).lesson_table().rows)
        assert _means(_view(screen).table.rows) == expected != before


async def test_a_config_toml_broken_while_open_is_said_once_and_the_numbers_stay(
    app: LessonCreditApp, ws_root: Path
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        screen = await _lessons(pilot)
        before = _means(_view(screen).table.rows)
        (ws_root / CONFIG_REL).write_text("floor = [\n")  # an editor's half-saved file
        for _ in range(2):
            app._check_source()
            await settle(pilot)
        said = [text for title, text in notification_texts(app) if title == "config.toml could not be read"]
        assert len(said) == 1 and "the settings read before stay in force" in said[0]
        assert _means(_view(screen).table.rows) == before


async def test_a_lesson_written_while_the_dashboard_is_open_is_shown(
    app: LessonCreditApp, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lesson_credit.core.workspace import base

    async with app.run_test(size=SIZE) as pilot:
        screen = await _lessons(pilot)
        assert "tools/new-one.md" not in _means(_view(screen).rows)
        (ws_root / "lessons" / "tools" / "new-one.md").write_text(lesson_text(["docker"], "active", title="New"))
        monkeypatch.setattr(base, "LIBRARY_RECHECK_S", 0.0, raising=False)
        app._check_source()  # the poll (off in this test)
        await settle(pilot)
        assert "tools/new-one.md" in _means(_view(screen).rows)
