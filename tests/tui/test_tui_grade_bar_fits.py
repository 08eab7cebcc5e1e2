"""The grade bar's status line at 24 rows (one line) with a draft and three other sources: at 80 columns it read
"grade 0.6 (manual)  draft  0.7  not saved: c commits, esc discards  · judge 0.78 · heuristi…", the other sources'
scores cut (the compact record panel leaves them to this line). The draft's hint now gives way to the width
(shorter words, then none: the bar's heavy rule and the reversed draft still say it is a draft, the footer names
c), and every source's score is on the line whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.textual_private import screen_lines
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, open_session, settle, wait_until

SESSION = "2026-09-02-002"  # the demo's: manual 0.6 in force; the record's judge 0.78, heuristic 0.72, outcome 1.0
GRADE, DRAFT = "grade 0.6 (manual)", "  draft  0.7 "
OTHERS = " · judge 0.78 · heuristic 0.72 · outcome 1.0"  # 44 cells


@pytest.mark.parametrize(
    ("width", "hint"),
    [
        (80, ""),  # 18 + 13 + 44 = 75 of the 78 cells (padding 1 each side); " unsaved " (9) would be 84
        (100, " unsaved "),  # 18 + 13 + 25 + 44 = 100 > 98 with " c commits, esc discards ": 84 with this
        (110, " c commits, esc discards "),  # 100 of 108
        (120, " not saved: c commits, esc discards "),  # 18 + 13 + 36 + 44 = 111 of 118: the whole hint
    ],
)
async def test_a_draft_beside_three_sources_fits_the_line_at_24_rows(tmp_path: Path, width: int, hint: str) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(width, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, SESSION)
        burst(pilot, "7")
        await wait_until(pilot, lambda: detail.draft == 0.7)
        await settle(pilot)
        status = detail.query_one("#grade-status")
        line = screen_lines(app)[status.region.y].text[status.region.x : status.region.right].rstrip()
        assert line == GRADE + DRAFT + hint + OTHERS, line
        if width == 80:
            assert hint == "" and len(GRADE + DRAFT + " unsaved " + OTHERS) == 84 > status.region.width, line
        burst(pilot, "escape")  # the draft discarded: the line as before, without it
        await wait_until(pilot, lambda: detail.draft is None)
        await settle(pilot)
        line = screen_lines(app)[status.region.y].text[status.region.x : status.region.right].rstrip()
        assert line == GRADE + OTHERS, line
