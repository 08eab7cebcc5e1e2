"""Lesson names cut to a narrow column keep what tells them apart: the folders give way first, then the middle
of the file name (its end stays). The fixture's lessons plus four whose names only differ at their ends or in
their folders: at 80 columns What-if named lessons by their file names, cut at the end, so
tools/retry.md and workflow/retry.md were both "retry", and the two escalate-when-blocked lessons one
"escalate-when-blo…"."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.test_tui_whole_headers import row_text
from tests.tui.tui_fixture import fixed_clock, lesson, settle, table_keys

ALIKE = {
    "tools/escalate-when-blocked-on-review.md": ["review queue"],
    "workflow/escalate-when-blocked-on-ci.md": ["ci queue"],
    "tools/retry.md": ["retry"],
    "workflow/retry.md": ["backoff"],
}


def add_alike(root: Path) -> None:
    for lesson_id, keywords in ALIKE.items():
        path = root / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lesson(keywords, lesson_id), encoding="utf-8")


async def test_what_if_at_80_columns_names_every_lesson_apart(ws_root: Path) -> None:
    """Each drawn name is another, and ends as its lesson's id ends (the id's last four characters, `.md`
    apart): the end of a name is what tells escalate-when-blocked-on-review from -on-ci."""
    add_alike(ws_root)
    app = LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, WhatIfScreen)
        table = app.screen.query_one("#what-if-table", ThemedTable)
        keys = table_keys(table)
        drawn = [
            row_text(app, table.region.y + table.header_height + i)[table.region.x : table.region.right].split()[-1]
            for i in range(len(keys))
        ]
        assert len(set(drawn)) == len(keys), drawn
        for key, name in zip(keys, drawn, strict=True):
            assert name.endswith(key.removesuffix(".md")[-4:]), (key, name)
        assert "escalate-when-blo…" not in drawn
