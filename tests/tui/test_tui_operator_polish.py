"""What an operator missed at 80 columns on the demo (the operator review of 2026-12-07): the Lessons panel cut a
lesson's path mid-word, the Agreement view hid its tp/fp/fn/tn counts past the table's right edge without a word,
and the session's history line cut the older grades (a note, the earlier ones) with an ellipsis and no way to read
them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.tui.screens.agreement import AgreementScreen
from lesson_credit.tui.screens.grade_history import GradeHistoryScreen
from lesson_credit.tui.screens.session_detail import SessionDetailScreen
from lesson_credit.tui.text import break_words
from lesson_credit.tui.widgets.lesson_panel import LessonPanel
from lesson_credit.tui.widgets.themed_table import ThemedTable
from tests.support.cli_run import run_cli
from tests.tui.test_tui_whole_headers import demo_app, row_text
from tests.tui.tui_fixture import burst, open_session, settle

SIZES = [(80, 24), (200, 50)]
SESSION = "2026-09-02-002"  # the demo's session with four grades (a heuristic's, then manual, erik, manual)
LOG = Path("state") / "lesson-thompson" / "sessions.jsonl"
SEPARATORS = "/-_"  # (not "."; `edit.` then `md` was the cut)


def test_break_words_breaks_a_long_word_after_its_separators() -> None:
    # by hand: 28 characters in 25 columns break after the last separator that fits ("before-" ends at 21)
    assert break_words("patterns/read-before-edit.md", 25) == "patterns/read-before-\nedit.md"
    assert break_words("a short line", 25) == "a short line"  # words that fit: the widget wraps at spaces
    assert break_words("in x/yyyyyyyyyyyyyyyyyy", 10) == "in x/\nyyyyyyyyyy\nyyyyyyyy"  # no separator: at the width
    assert break_words("anything", 0) == "anything"  # 0: not laid out yet


async def test_the_lesson_panel_breaks_a_path_between_its_parts_at_80_columns(tmp_path: Path) -> None:
    """patterns/read-before-edit.md in the 25 columns of the panel read `patterns/read-before-edit` then `.md`
    (the panel was cut mid-word wherever a path passed its width). 80 columns, 60 rows: the panel is whole."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 60)) as pilot:
        await settle(pilot)
        panel = app.screen.query_one("#lesson-panel", LessonPanel)
        assert panel.detail is not None
        path = panel.detail.row.path
        region = panel.content_region
        assert len(path) > region.width, (path, region.width)
        rows = [row_text(app, y)[region.x : region.right].strip() for y in range(region.y, region.bottom)]
        start = next(i for i, row in enumerate(rows) if row and path.startswith(row))
        pieces = [rows[start]]
        while "".join(pieces) != path and path.startswith("".join(pieces) + rows[start + len(pieces)]):
            pieces.append(rows[start + len(pieces)])
        assert "".join(pieces) == path, rows
        assert all(piece[-1] in SEPARATORS for piece in pieces[:-1]), pieces


@pytest.mark.parametrize("size", SIZES)
async def test_agreement_shows_the_highlighted_pair_s_counts_at_every_width(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """At 80 columns the table ended at kappa: the tp/fp/fn/tn column was past its edge, with no sign of it. Now
    it is drawn at every width, the highlighted pair's counts in it (the CLI's `agreement`: human against judge,
    19/4/5/4)."""
    app = demo_app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        burst(pilot, "A")
        await settle(pilot)
        assert isinstance(app.screen, AgreementScreen)
        cli = cli_counts(tmp_path, "human", "judge")
        table = app.screen.query_one("#agreement-table", ThemedTable)
        header, first = (row_text(app, table.region.y + i)[table.region.x : table.region.right] for i in (0, 1))
        assert header.split()[-1] == "tp/fp/fn/tn" and first.split()[-1] == cli, (header, first)
        assert table.get_row_at(0)[-1].plain.strip() == cli


def cli_counts(tmp_path: Path, reference: str, compared: str) -> str:
    """The tp/fp/fn/tn cell of `agreement`'s overall row for the pair, as the CLI prints it."""
    code, out, err = run_cli("agreement", "-w", str(tmp_path / "demo"))
    assert code == 0, err
    row = next(line.split() for line in out.splitlines() if line.split()[:2] == [reference, compared])
    return row[-1]


@pytest.mark.parametrize("size", SIZES)
async def test_the_whole_grade_history_is_a_key_away(tmp_path: Path, size: tuple[int, int]) -> None:
    """The demo's 2026-09-02-002 has four grades: at 80x24 the history line read `... ← 0.9 erik 2026-10-26 14:46
    “second opini…`, the 0.92's note and the first grade out of reach (at 200x50 the first was `(+N earlier)`
    once a session had five). `H` shows every grade whole, newest first; escape goes back to the session."""
    app = demo_app(tmp_path)
    # the log's grade events of the session, oldest first, read from the file (not through the dashboard)
    events = [json.loads(line) for line in (tmp_path / "demo" / LOG).read_text().splitlines() if line.strip()]
    notes = [e["note"] for e in events if e.get("type") == "grade" and e["session_id"] == SESSION and e.get("note")]
    assert "operator: the PR needed more rework than the heuristic saw" in notes
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, SESSION)
        line = row_text(app, detail.query_one("#grade-history").region.y)
        assert "history (H)" in line, line
        burst(pilot, "H")
        await settle(pilot)
        assert isinstance(app.screen, GradeHistoryScreen)
        shown = " ".join(" ".join(row_text(app, y).split()) for y in range(app.size.height))
        for note in notes:
            assert " ".join(f"“{note}”".split()) in shown, (note, shown)
        for grade in ("0.6 manual 2026-10-26 14:49", "0.9 erik 2026-10-26 14:46", "0.92 manual 2026-09-02 03:49"):
            assert grade in shown, (grade, shown)
        assert shown.index("0.6 manual") < shown.index("0.9 erik") < shown.index("0.92 manual")  # newest first
        burst(pilot, "escape")
        await settle(pilot)
        assert isinstance(app.screen, SessionDetailScreen) and app.screen.session_id == SESSION
