"""A new operator on the demo at 80x24 and 200x50: a grade reads with the CLI's places, the trajectory row has
the CLI's name, the "why this credit" box's more-lines mark fits a narrow box whole, the queue survives an
information summed a hair below zero, and the word-break cuts sort a new set of names off the UI thread and
keep no set they no longer show."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from rich.text import Text
from textual.app import App, ComposeResult
from textual.widget import Widget
from textual.widgets import Input, Select

from lesson_credit.core.analysis import informative
from lesson_credit.core.base import shorten
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.grading_queue import GradingQueueScreen
from lesson_credit.tui.screens.simulation import SimulationScreen
from lesson_credit.tui.screens.what_if import WhatIfScreen
from lesson_credit.tui.widgets.credit_panel import CreditPanel
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.cli_run import run_cli
from tests.tui.test_tui_whole_headers import demo_app, row_text
from tests.tui.tui_fixture import burst, open_session, open_sessions, settle, table_keys, wait_until

SIZES = [(80, 24), (200, 50)]


def screen_rows(app: LessonCreditApp) -> list[str]:
    return [row_text(app, y) for y in range(app.size.height)]


def cli_rows(tmp_path: Path, *argv: str) -> list[list[str]]:
    code, out, err = run_cli("--workspace", str(tmp_path / "demo"), *argv)
    assert code == 0, err
    return [line.split() for line in out.splitlines()[2:] if line.strip()]


@pytest.mark.parametrize("size", SIZES)
async def test_a_grade_reads_to_the_cli_s_places_in_sessions_and_the_queue(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The demo's 2026-10-23-158, scored 0.6 by its record's judge: `sessions` prints 0.600; the Sessions table
    said 0.60 and the queue's "in force" 0.60 record:judge (two places for the CLI's three)."""
    app = demo_app(tmp_path)
    cli = {row[0]: row for row in cli_rows(tmp_path, "sessions", "--limit", "200")}
    reward = cli["2026-10-23-158"][3]
    assert reward == "0.600", cli["2026-10-23-158"]
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        sessions = await open_sessions(pilot)
        table = sessions.query_one("#sessions-table", ThemedTable)
        assert str(table.get_row("2026-10-23-158")[3]).strip() == reward
        burst(pilot, "I", "o")  # the informative order lists sessions no person graded, the judge's among them
        await settle(pilot)
        assert isinstance(app.screen, GradingQueueScreen)
        queue = app.screen.query_one("#queue-table", ThemedTable)
        in_force = str(queue.get_cell("2026-10-23-158", "in force"))
        assert in_force == f"{reward} record:judge", in_force


@pytest.mark.parametrize("size", SIZES)
async def test_a_shift_summed_a_hair_below_zero_reads_as_none(
    tmp_path: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each session's information is a sum of squares; summed in floating point it may come out as -1e-18. The
    queue took its square root and raised ("math domain error"): the dashboard closed on `I o`. Now such a
    session's shift is 0.000 (the root of zero, to the CLI's three places)."""
    real = informative._entry_scores

    def a_hair_below(*args: Any) -> Any:
        return real(*args) * 0.0 - 1e-18

    monkeypatch.setattr(informative, "_entry_scores", a_hair_below)
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        burst(pilot, "I", "o")
        await settle(pilot)
        assert isinstance(app.screen, GradingQueueScreen)
        table = app.screen.query_one("#queue-table", ThemedTable)
        first = table.get_row_at(0)
        shift = str(first[-1]).split()[-1]  # the shift column, or the narrow "why next" ending "shift 0.000"
        assert shift == "0.000", first


async def test_the_trajectory_row_has_the_cli_s_name(tmp_path: Path) -> None:
    """`show 2026-10-26-167` names its trajectory file on a row "trajectory"; the dashboard's record panel named
    the same file on a row "transcript" (the view `V` opens is the transcript: "V shows it" says so)."""
    app = demo_app(tmp_path)
    code, out, _ = run_cli("--workspace", str(tmp_path / "demo"), "show", "2026-10-26-167")
    row = next(line.split() for line in out.splitlines() if line.endswith("tool calls)"))
    assert code == 0 and row[:2] == ["trajectory", "state/sessions/trajectories/f6f85156-47b9-5a4f.jsonl"], row
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        await open_session(pilot, "2026-10-26-167")
        line = next(line.split() for line in screen_rows(app) if row[1] in line)
        assert line == [*row[:2], "·", "V", "shows", "it"], line


class StoryBox(App[None]):
    """A "why this credit" box `width` cells wide (border and padding included) with a story of ten lines."""

    AUTO_FOCUS = None  # the box unfocused until the test focuses it

    def __init__(self, width: int) -> None:
        super().__init__()
        self.width = width

    def compose(self) -> ComposeResult:
        yield CreditPanel("story", id="box")

    def on_mount(self) -> None:
        box = self.query_one(CreditPanel)
        box.styles.width = self.width
        box.styles.max_height = 6  # 4 rows inside the border: 3 story lines and the mark
        box.story = Text("\n".join(f"line {i}" for i in range(1, 11)))


def inside(app: App[Any], box: CreditPanel) -> list[str]:
    return [row_text(app, y)[box.region.x + 2 : box.region.right - 2] for y in range(box.region.y, box.region.bottom)]


@pytest.mark.parametrize(
    ("width", "unfocused", "focused"),
    [
        # 10 lines in 3 rows above the mark: 7 below it; inside a box of W cells, W - 4 for the text
        (70, "▼ 7 more lines: tab to this box and ↓ (or the mouse wheel)", "▼ 7 more lines: ↓ shows them"),
        (40, "▼ 7 more lines: tab here, ↓", "▼ 7 more lines: ↓ shows them"),  # 36 cells: the long form is 58
        (20, "▼ 7 more lines", "▼ 7 more lines"),  # 16 cells: "▼ 7 more lines: ↓ shows them" is 28
        (14, "▼ 7 more", "▼ 7 more"),  # 10 cells: "▼ 7 more lines" is 14
    ],
)
async def test_the_more_lines_mark_fits_the_box_whole(width: int, unfocused: str, focused: str) -> None:
    """The mark was one sentence of 58 cells, cut at a narrower box's edge ("▼ 7 more lines: tab to this box
    an"; at 16 cells "▼ 7 more lines: "): now the longest form that fits, the count always whole."""
    app = StoryBox(width)
    async with app.run_test(size=(80, 12)) as pilot:
        await pilot.pause()
        box = app.query_one(CreditPanel)
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert inside(app, box)[-2].rstrip() == unfocused, inside(app, box)
        box.focus()
        await pilot.pause()
        await pilot.pause()
        assert inside(app, box)[-2].rstrip() == focused, inside(app, box)


async def test_a_new_set_of_names_is_sorted_off_the_ui_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At 80x24 the Lessons table cuts the demo's longer names at word breaks ("check-ci-…-done"): the cut asks
    the sorted index of the column's names, which its first render built on the UI thread (30,000 names: a tenth
    of a second of a frozen screen). The worker that builds the cells builds it now."""
    real = shorten._by_file
    real.cache_clear()  # (the counts of cuts go with the indexes; a count cache of its own is cleared too)
    getattr(shorten._reads_as, "cache_clear", lambda: None)()
    built_on: list[str] = []

    def by_file(alike: frozenset[str]) -> Any:
        misses = real.cache_info().misses
        index = real(alike)
        if real.cache_info().misses > misses:
            built_on.append(threading.current_thread().name)
        return index

    monkeypatch.setattr(shorten, "_by_file", by_file)
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.screen.query_one("#lessons-table", ThemedTable)
        drawn = [row_text(app, y)[1:19].strip() for y in range(table.region.y + 1, table.region.bottom)]
        assert "check-ci-…-done" in drawn, drawn  # a word-break cut was drawn
    assert built_on and threading.main_thread().name not in built_on, built_on


def test_the_cuts_keep_no_set_of_names_they_no_longer_show() -> None:
    """The count of names a cut reads as was cached by (set, width, cut), 4096 entries: each entry held its set
    (every name of a column) long after the column showed another one. The counts now live with the set's
    index, of which four are kept: after four other sets, nothing holds the first."""
    names = frozenset({"check-ci-before-done", "issue-triage-before-coding"})
    held = sys.getrefcount(names)
    cut = shorten.shorten_lesson("check-ci-before-done", 15, names)
    assert cut == "check-…-done", cut  # the plain cut "check-c…re-done" moved to word breaks: the count was asked
    for i in range(4):
        others = frozenset({f"check-{i}-before-done", f"check-{i}-after-done"})
        shorten.shorten_lesson(f"check-{i}-before-done", 15, others)
    assert sys.getrefcount(names) == held


async def test_the_lesson_panel_s_last_lines_scroll_into_view_at_80x24(tmp_path: Path) -> None:
    """At 80x24 the side column is 20 rows: the plot keeps 11 (9 and its legend's two lines), the panel needs 16
    (its title on two lines at 26 columns, eleven numbers' and usage lines, the id, category, description, the
    border). From "avg salience" on, with the last credit, it ran under the footer: no scrollbar, no key, no mark.
    Its box now takes the 9 rows left and scrolls, its bar shown; tab reaches it and end brings the panel's last
    line and its border into view. The plot keeps its width (the axis's 1.00)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        side = app.screen.query_one("#lessons-side")
        plot = app.screen.query_one("#lesson-plot")
        panel = app.screen.query_one("#lesson-panel")
        box = panel.parent  # the box it scrolls in
        assert isinstance(box, Widget) and box.region.bottom == side.region.bottom
        assert box.show_vertical_scrollbar and box.max_scroll_y > 0
        assert plot.region.width == side.region.width and "1.00" in row_text(app, plot.region.bottom - 4)

        def shown() -> list[str]:
            return [row_text(app, y)[side.region.x : side.region.right] for y in range(box.region.y, box.region.bottom)]

        assert not any("avg salience" in row or "last credit" in row for row in shown()), shown()
        burst(pilot, "tab", "end")
        await settle(pilot)
        assert app.focused is box and shown()[-1].startswith("╰"), shown()
        seen = set()
        for _ in range(int(box.max_scroll_y)):
            burst(pilot, "up")
            await settle(pilot)
            seen.update(shown())
        assert any("avg salience" in row for row in seen) and any("last credit" in row for row in seen), seen


@pytest.mark.parametrize("size", [(80, 24), (160, 45)])
async def test_the_simulation_s_best_marks_keep_the_numbers_aligned(
    size: tuple[int, int], workspace: Workspace
) -> None:
    """Each metric column right-aligns its numbers; the best one's cell ends in " ★" and the others were padded
    with two spaces to match, but a right-aligned cell drops its trailing spaces: the marked number stood two
    cells left of the rest ("0.459 ±0.044 ★" over "0.133 ±0.072" ending two columns further right). Every drawn
    row's number now ends in the same column."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("m")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, SimulationScreen)
        screen.query_one("#scenario", Select).value = "few-sessions"
        screen.query_one("#seeds", Input).value = "2"
        await pilot.press("ctrl+r")
        await settle(pilot)
        await wait_until(pilot, lambda: screen.report is not None and screen.running is None)
        await settle(pilot)
        table = screen.query_one("#sim-table", ThemedTable)
        widths = [column.get_render_width(table) for column in table.columns.values()]
        rows = [row_text(app, table.region.y + 1 + i)[table.region.x :] for i in range(table.row_count)]
        marked = 0
        for column in range(1, len(widths)):
            start = sum(widths[:column])
            cells = [row[start : start + widths[column]] for row in rows]
            marked += sum("★" in cell for cell in cells)
            ends = {len(cell.replace("★", " ").rstrip()) for cell in cells if cell.strip()}
            assert len(ends) == 1, cells
        assert marked >= 4  # one best (or more, tied) per metric


async def test_what_if_cuts_its_names_with_the_set_its_worker_sorted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What-if on a narrow terminal (72x24: at 80 the demo's names now fit whole) cuts the demo's names at word breaks
    too ("rate-…-backoff"). Its name set was built and sorted on the UI thread at the first cut; then, sorted in the
    worker, the table cut with another, equal set, which the cuts' cache compares with the sorted one name by name
    at every cut. The worker's set is the one the cells carry now (Lessons sorted an equal one first: the very set
    it sorted), and no set is sorted on the UI thread."""
    real = shorten._by_file
    real.cache_clear()
    sorted_sets: dict[int, str] = {}

    def by_file(alike: frozenset[str]) -> Any:
        misses = real.cache_info().misses
        index = real(alike)
        if real.cache_info().misses > misses:
            sorted_sets[id(alike)] = threading.current_thread().name
        return index

    monkeypatch.setattr(shorten, "_by_file", by_file)
    app = demo_app(tmp_path)
    async with app.run_test(size=(72, 24)) as pilot:
        await settle(pilot)
        await pilot.press("w")
        await settle(pilot)
        assert isinstance(app.screen, WhatIfScreen)
        table = app.screen.query_one("#what-if-table", ThemedTable)
        names = [table.get_row(key)[-1] for key in table_keys(table)]
        drawn = [
            row_text(app, table.region.y + 2 + i)[table.region.x : table.region.right].split()[-1] for i in range(3)
        ]
        assert "rate-…-backoff" in drawn, drawn  # a word-break cut was drawn
        alike = {id(getattr(name, "alike", None)) for name in names}
        assert len(alike) == 1 and alike <= set(sorted_sets), (alike, sorted_sets)
    assert threading.main_thread().name not in sorted_sets.values(), sorted_sets


@pytest.mark.parametrize("size", [(100, 24), (120, 30), (200, 50)])
async def test_the_informative_queue_shows_each_session_s_shift_at_every_width(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The shift is what the informative order sorts by. At 100 columns the full table's last column, `shift`,
    ran off the right edge (a sideways scrollbar the only sign) while 80 columns showed it in the one-column
    form: the full table is shown where it fits, else that form. Either way every row's shift is on screen."""
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        burst(pilot, "I", "o")
        await settle(pilot)
        assert isinstance(app.screen, GradingQueueScreen)
        table = app.screen.query_one("#queue-table", ThemedTable)
        await wait_until(pilot, lambda: table.row_count > 0)
        assert table.virtual_size.width <= table.scrollable_content_region.width, (table.virtual_size, table.size)
        first = [str(cell) for cell in table.get_row_at(0)]
        shift = first[-1].split()[-1]  # the shift column, or the one-column form's "why next" ending "shift 0.063"
        assert shift.replace(".", "", 1).isdigit(), first
        assert any(shift in line for line in screen_rows(app)), shift


async def test_the_oldest_order_shows_no_columns_it_has_no_numbers_for(tmp_path: Path) -> None:
    """Oldest first, the queue computes no expected grade, spread or shift: its table showed those four columns
    with a dash in every row. It shows the columns it fills; `o` brings the informative order's back."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        burst(pilot, "I")
        await settle(pilot)
        assert isinstance(app.screen, GradingQueueScreen)
        table = app.screen.query_one("#queue-table", ThemedTable)
        await wait_until(pilot, lambda: table.row_count > 0)
        labels = [str(column.label) for column in table.columns.values()]
        assert labels == ["#", "session", "time", "category", "in force"], labels
        assert all("—" not in str(cell) for cell in table.get_row_at(0)[3:]), table.get_row_at(0)
        burst(pilot, "o")
        await settle(pilot)
        await wait_until(pilot, lambda: len(table.columns) == 9 and table.row_count > 0)
        assert [str(column.label) for column in table.columns.values()][5:] == ["expected", "±", "spread", "shift"]
