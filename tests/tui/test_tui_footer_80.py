"""At 80 columns every screen's footer shows its screens group, `? Help` and `q Quit`, spaced apart."""

from __future__ import annotations

import pytest
from tui_fixture import open_session, settle

from core.workspace import Workspace
from tui.app import LessonCreditApp


def footer_line(app: LessonCreditApp) -> str:
    return app.screen._compositor.render_strips()[-1].text


@pytest.mark.parametrize("keys", [(), ("s",), ("h",), ("a",)], ids=["lessons", "sessions", "health", "analysis"])
async def test_footer_at_80_columns_shows_every_key_spaced(workspace: Workspace, keys: tuple[str, ...]) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        line = footer_line(app)
        assert "screens ? Help" in line, line
        assert line.rstrip().endswith("q Quit"), line


async def test_session_detail_footer_at_80_columns(workspace: Workspace) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_session(pilot, "s1")
        line = footer_line(app)
        assert "screens ? Help" in line, line
        assert line.rstrip().endswith("q Quit"), line
