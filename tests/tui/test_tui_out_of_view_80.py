"""At 80x24 what is out of view says so: Analysis's columns past w/o (naive Δ, cat, IPW, flags) and Health's
findings below the list's bottom edge. On the old code only a scrollbar said either: the table's sideways one (and
right moved it one cell a key, the lesson names scrolling away), the findings' at the right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lesson_credit.tui.screens.health import FindingCard
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.widgets.phrase_text import PhraseText
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.tui.test_tui_whole_headers import demo_app, row_text
from tests.tui.tui_fixture import burst, settle, wait_until

SIZE = (80, 24)


def table_words(app: Any, row: int) -> list[str]:
    table = app.screen.query_one("#loo-table", ThemedTable)
    return row_text(app, table.region.y + row)[table.region.x : table.region.right].split()


def panel_edge(app: Any) -> str:
    """The row of the Analysis panel's top edge, as drawn."""
    return row_text(app, app.screen.query_one("#loo-detail", PhraseText).region.y)


async def test_analysis_names_the_columns_out_of_view_and_right_brings_each_whole(tmp_path: Path) -> None:
    """The demo at 80 columns shows lesson to w/o. The panel's top edge names the four columns to the right; each
    `right` scrolls one of them into view whole, the lesson names staying at the left; `left` goes back."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "a")
        await settle(pilot)
        assert table_words(app, 0) == ["lesson", "effect", "▼", "95%", "CI", "p", "BH", "with", "w/o"]
        assert "more columns → naive Δ, cat, IPW, flags" in panel_edge(app)
        # the summary's two rows: the counts in one (they wrapped, and pushed the effect marks' line off the rows)
        top = app.screen.query_one("#analysis-summary").region.y
        assert (
            row_text(app, top).split()
            == "153 graded sessions · 28 of 28 lessons with enough for LOO · 3 flagged (2 ⚠)".split()
        )
        assert (
            row_text(app, top + 1).strip()
            == "effect: joint, ʳ randomized, ˡ later half, (…) claims nothing · ?: columns"
        )
        first_lesson = table_words(app, 1)[0]
        burst(pilot, "right")
        await settle(pilot)
        header = table_words(app, 0)
        assert header[0] == "lesson" and header[-2:] == ["naive", "Δ"], header  # whole, at the right edge
        assert table_words(app, 1)[0] == first_lesson  # the names stay
        assert "more columns ← effect · → cat, IPW, flags" in panel_edge(app)
        burst(pilot, "right", "right", "right", "right")  # to flags; the last finds none further
        await settle(pilot)
        header = table_words(app, 0)
        assert header[0] == "lesson" and header[-1] == "flags", header
        assert "→" not in panel_edge(app) and "more columns ←" in panel_edge(app)
        burst(pilot, *["left"] * 8)
        await settle(pilot)
        assert table_words(app, 0) == ["lesson", "effect", "▼", "95%", "CI", "p", "BH", "with", "w/o"]
        assert "more columns → naive Δ, cat, IPW, flags" in panel_edge(app)


async def test_analysis_at_160_columns_shows_every_column_and_no_hint(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        burst(pilot, "a")
        await settle(pilot)
        assert table_words(app, 0)[-1] == "flags"
        assert "more columns" not in panel_edge(app)
        assert app.screen.query_one("#loo-table", ThemedTable).fixed_columns == 0


async def test_help_lists_every_analysis_column_and_the_keys_for_those_out_of_view(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "a")
        await settle(pilot)
        burst(pilot, "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        text = " ".join(str(app.screen.query_one("#help-text").render()).split())
        section = text[text.index("Analysis columns") :]
        for header in ("effect", "95% CI", "p BH", "w/o", "naive Δ", "cat", "IPW", "flags"):
            assert header in section, header
        assert "← / → where the table is wider than the screen" in section


CODES = ["broad-keywords", "records-not-joined", "sessions-pending"]  # the demo's warnings, in order


def more_line(app: Any) -> str:
    line = app.screen.query_one("#findings-more")
    return str(line.render()) if line.display else ""


async def test_health_says_how_many_findings_are_below_and_above_the_view(tmp_path: Path) -> None:
    """The demo's three warnings at 80x24: broad-keywords whole (11 rows), records-not-joined cut at the bottom
    edge, sessions-pending wholly below (on the old code nothing said so). At the end of the list the first is
    wholly above."""
    app = demo_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        burst(pilot, "h")
        await settle(pilot)
        assert [card.finding.code for card in app.screen.query(FindingCard)] == CODES
        assert more_line(app) == "↓ 1 more finding below (down / up)"
        burst(pilot, "end")
        await settle(pilot)
        assert more_line(app) == "↑ 1 more finding above (down / up)"
        burst(pilot, "home")
        await settle(pilot)
        assert more_line(app) == "↓ 1 more finding below (down / up)"


async def test_health_at_160x48_has_every_finding_in_view_and_no_line(tmp_path: Path) -> None:
    app = demo_app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await settle(pilot)
        burst(pilot, "h")
        await settle(pilot)
        assert len(app.screen.query(FindingCard)) == 3
        assert more_line(app) == ""
