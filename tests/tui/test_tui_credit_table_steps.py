"""Pilot regression test: after fast `+`/`-` presses the Session detail's credit
table kept every column, at full width, with the draft's numbers (it once collapsed to `+0 +0`
with truncated cells).

s1's journal: "Set up a git worktree for the fix.\\nRan pytest; the git worktree was stale.\\n".
Its lessons, by hand (docs/format.md §3-4, seed strategy, floor 0.3, w = 0.3 + 0.7 * salience, r = base * w,
alpha += r, beta += 1 - r):
  tools/git-worktree.md   keywords "git worktree" (hit), "stale branch" (missed): salience 1/2, w 0.65
  testing/run-tests.md    "pytest" (hit), "tests pass" (missed): salience 1/2, w 0.65
  tools/shell-quoting.md  "quote", "shell", "xargs" all missed: salience 0, w 0.30
From the logged 0.8, `+ - + + - +` (steps of 0.05) leaves the draft at 0.9:
  w 0.65: r = 0.9 * 0.65 = 0.585, 1 - r = 0.415;  w 0.30: r = 0.27, 1 - r = 0.73.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.pilot import Pilot

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.textual_private import type_ahead
from tests.tui.tui_fixture import settle

EXPECTED = {  # lesson: (salience, weight, credited, d_alpha, d_beta, hit, missed)
    "tools/git-worktree": ("0.50", "0.650", "0.585", "+0.585", "+0.415", "git worktree", "stale branch"),
    "testing/run-tests": ("0.50", "0.650", "0.585", "+0.585", "+0.415", "pytest", "tests pass"),
    "tools/shell-quoting": ("0.00", "0.300", "0.270", "+0.270", "+0.730", "none", "quote, shell, xargs"),
}
HEADERS = ["lesson", "salience", "weight", "credited", "Δα", "Δβ", "hit", "missed"]
# below 100 columns: salience and weight headed sal and wt, lessons by file name (the help says so), and Δα, Δβ
# in "why this credit" (the keywords hit then fit whole)
NARROW_HEADERS = ["lesson", "sal", "wt", "credited", "hit", "missed"]
NARROW_EXPECTED = {lesson.rsplit("/", 1)[-1]: cells[:3] + cells[5:] for lesson, cells in EXPECTED.items()}


def burst(pilot: Pilot[None], *keys: str) -> None:
    """All keys queued at once, as a terminal delivers fast typing (no idle between them)."""
    type_ahead(pilot.app, *keys)


def rows(table: ThemedTable) -> dict[str, tuple[str, ...]]:
    out = {}
    for index in range(table.row_count):
        cells = [str(c.plain if isinstance(c, Text) else c).strip() for c in table.get_row_at(index)]
        out[cells[0]] = tuple(cells[1:])
    return out


async def check_after_fast_steps(app: LessonCreditApp, size: tuple[int, int]) -> None:
    narrow = size[0] < 100
    headers, expected = (NARROW_HEADERS, NARROW_EXPECTED) if narrow else (HEADERS, EXPECTED)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        detail = SessionDetailScreen(app.source, "s1")  # graded 0.8
        await app.push_screen(detail)
        burst(pilot, "plus", "minus", "plus", "plus", "minus", "plus")  # before the screen has loaded, too
        await settle(pilot)
        assert detail.draft == 0.9
        table = detail.query_one("#credits", ThemedTable)
        assert [str(column.label) for column in table.columns.values()] == headers
        assert rows(table) == expected
        for column in table.columns.values():  # no cell cut to its header's width
            widest = max(len(str(column.label)), *(len(str(cell).rstrip()) for cell in table.get_column(column.key)))
            assert column.get_render_width(table) >= widest + 2 * table.cell_padding, column.label
        burst(pilot, *(["minus"] * 20))  # clamps at 0: every reward 0, beta +1
        await settle(pilot)
        assert detail.draft == 0.0
        zero = ("0.000",) if narrow else ("0.000", "0.000", "+1.000")  # reward (Δα, Δβ; a zero has no sign)
        assert {lesson: cells[2 : 2 + len(zero)] for lesson, cells in rows(table).items()} == {
            lesson: zero for lesson in expected
        }


async def test_fast_steps_keep_the_credit_table_whole_at_80x24(app: LessonCreditApp, ws_root: Path) -> None:
    await check_after_fast_steps(app, (80, 24))


async def test_fast_steps_keep_the_credit_table_whole_at_160x45(app: LessonCreditApp, ws_root: Path) -> None:
    await check_after_fast_steps(app, (160, 45))
