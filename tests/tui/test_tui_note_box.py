"""Enter and escape leave a grade's note box even while the credits table shows a preview loading.

A draft's preview is computed in a worker; when it takes over LOADING_DELAY the credits table shows a
loading indicator, and Textual gives no focus to a widget that is loading. Before, enter (or escape)
in the note box then tried to focus that table, failed, and left the focus in the box: the `c` typed
next went into the note ("tc") instead of committing, and the next escape failed the same way. On the
demo, `s v enter 5 c u u 7 e note enter c` typed in a burst on a busy machine left "notec" in the box
and logged nothing. s4 is the fixture's pending session.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.source import WorkspaceSource
from tests.tui.tui_fixture import burst, log_lines, open_session, settle, wait_until

SIZE = (120, 40)
SLOW_PREVIEW_S = 1.0  # far over LOADING_DELAY (0.15 s): the table shows its loading indicator meanwhile


@pytest.fixture
def slow_previews(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A draft's preview (explain with a draft, in its worker thread) takes SLOW_PREVIEW_S longer, as on a busy
    machine; the session's own load is not slowed."""
    explain = WorkspaceSource.explain

    def slow(self: WorkspaceSource, session_id: str, *args: Any, **kwargs: Any) -> Any:
        if args and args[0] is not None:
            time.sleep(SLOW_PREVIEW_S)
        return explain(self, session_id, *args, **kwargs)

    monkeypatch.setattr(WorkspaceSource, "explain", slow)
    yield


def grades(root: Path) -> list[tuple[str, float | None, str | None]]:
    return [(e["session_id"], e["base_reward"], e.get("note")) for e in log_lines(root) if e.get("type") == "grade"]


async def draft_seven_while_loading(pilot: Any) -> SessionDetailScreen:
    """Open s4, type 7, and wait until the credits table shows the preview loading."""
    detail = await open_session(pilot, "s4")
    burst(pilot, "7")
    table = detail.query_one("#credits", DataTable)
    await wait_until(pilot, lambda: table.loading)
    return detail


async def test_enter_in_the_note_box_while_the_preview_loads_then_c_commits(
    app: LessonCreditApp, ws_root: Path, slow_previews: None
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        detail = await draft_seven_while_loading(pilot)
        burst(pilot, "e", "t", "enter", "c")
        await settle(pilot)
        assert detail.query_one("#note", Input).value == ""  # committed with the grade, not "tc"
        assert not isinstance(app.focused, Input)
        burst(pilot, "3")  # a digit is a draft again once out of the box
        await settle(pilot)
        assert detail.draft == 0.3
    assert grades(ws_root) == [("s4", 0.7, "t")]


async def test_escape_in_the_note_box_while_the_preview_loads_leaves_it(
    app: LessonCreditApp, ws_root: Path, slow_previews: None
) -> None:
    async with app.run_test(size=SIZE) as pilot:
        detail = await draft_seven_while_loading(pilot)
        burst(pilot, "e", "t", "escape", "3")
        await settle(pilot)
        assert detail.query_one("#note", Input).value == "t"  # the 3 is a new draft, not text
        assert detail.draft == 0.3
        table = detail.query_one("#credits", DataTable)
        assert not table.loading and app.focused is table  # the table has the focus back once loaded
    assert grades(ws_root) == []
