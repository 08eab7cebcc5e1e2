"""Session detail at 80x24: every pane is reached by keys (tab: "why this credit", the note, the record, the
journal; `j` the journal; `x` the plot) and `escape` from one goes back to the credits, as from the journal and the
note. From "why this credit" or the record, escape left the session: `tab down escape`, typed to read the story's
last lines and go back, landed on the screen under the session, and the next key acted there."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from tests.tui.test_tui_detail_plot_80 import rows_in_view
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, open_session, settle


async def test_escape_from_a_pane_goes_back_to_the_credits(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "2026-10-23-157")  # four lessons, the judge's record: both panes scroll
        box, record = detail.query_one("#credit-box"), detail.query_one("#record-panel")
        assert box.max_scroll_y > 0 and record.max_scroll_y > 0  # (what tab and the arrows are for here)
        chain = [widget.id for widget in detail.focus_chain]
        assert chain == ["record-panel", "journal", "credits", "credit-box", "note"], chain
        # as docs/keys.md says: the box's last lines, back, the next lesson, its plot, a draft previewed on it
        burst(pilot, "tab", "end", "escape", "down", "x", "7")
        await settle(pilot)
        assert app.screen is detail and detail.focused is detail.query_one("#credits")
        assert box.scroll_y == box.max_scroll_y and detail.focused_lesson == detail.rows[1]
        pane, plot = detail.query_one("#detail-side"), detail.query_one("#credit-plot")
        assert rows_in_view(plot, pane) == plot.outer_size.height and detail.draft == 0.7
        burst(pilot, "shift+tab", "shift+tab", "end", "escape", "8")  # the record's end, back, another draft
        await settle(pilot)
        assert app.screen is detail and detail.focused is detail.query_one("#credits")
        assert record.scroll_y == record.max_scroll_y and detail.draft == 0.8
        burst(pilot, "escape", "escape")  # the draft, then the session: one layer a press
        await settle(pilot)
        assert detail.draft is None and not isinstance(app.screen, SessionDetailScreen)
