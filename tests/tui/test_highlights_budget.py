"""The session screen's highlights are found within a budget (tui/highlights.py): a hostile lesson's keywords past
it are not highlighted, the journal pane says so in plain words, and each lesson's spans are found once."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import pytest

from lesson_credit.core.library import salience
from lesson_credit.core.library.casefold import lower_same_length
from lesson_credit.core.library.salience import salience_breakdowns
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui import highlights
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.highlights import hit_spans
from lesson_credit.tui.widgets.journal_view import JournalView
from tests.tui.tui_fixture import (
    HOSTILE_JOURNAL,
    HOSTILE_KEYWORDS,
    add_hostile_session,
    fixed_clock,
    open_session,
    settle,
)

# The budget these tests give: 1,000,000. Each `kNNNx` keyword's finds read the 60,000 characters of the journal,
# and its last letter `x` occurs 10,000 times there, where a plain search (a keyword under 6 letters) compares its
# 5 letters: 60,000 + 5 x 10,000 = 110,000; its 50 matches 50 x SPAN_CHARS (600) = 30,000; the first keyword also
# pays for counting the `x`s (60,000). After 6 keywords, 60,000 + 6 x 140,000 = 900,000 spent; the 7th's read alone
# (110,000) does not fit: the first 6 of 200 are highlighted.
BUDGET = 1_000_000
SHOWN = 6


class _Counted(str):
    """The lowered journal, adding up the characters `str.count` and `str.find` read of it and the matches found."""

    read = 0
    found = 0

    def count(self, sub: str, start: Any = None, end: Any = None) -> int:
        begin, stop, _ = slice(start, end).indices(len(self))
        _Counted.read += max(0, stop - begin)
        return super().count(sub, start, end)

    def find(self, sub: str, start: Any = None, end: Any = None) -> int:
        begin, stop, _ = slice(start, end).indices(len(self))
        at = super().find(sub, start, end)
        _Counted.read += max(0, (stop if at == -1 else at + len(sub)) - begin)
        _Counted.found += at != -1
        return at


def test_a_hostile_lessons_highlights_do_no_more_work_than_the_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every keyword's matches were found (200 x 60,000 characters read, 10,000 matches: 18,000,000 with a match
    at 600): now those of the first 6 (see BUDGET), within it."""
    monkeypatch.setattr(highlights, "HIGHLIGHT_CHARS", BUDGET, raising=False)
    monkeypatch.setattr(salience, "lower_same_length", lambda *a, **k: (_Counted(lower_same_length(*a, **k)[0]), None))
    (breakdown,) = salience_breakdowns(HOSTILE_JOURNAL, [("hostile.md", HOSTILE_KEYWORDS)])
    _Counted.read = _Counted.found = 0
    spans = hit_spans(breakdown)
    assert _Counted.read + 600 * _Counted.found <= BUDGET, (_Counted.read, _Counted.found)
    # keyword i's matches: at 6 i on each 1,200-character line, 5 long (a space or newline apart: never touching)
    assert spans == sorted((1200 * line + 6 * i, 1200 * line + 6 * i + 5) for line in range(50) for i in range(SHOWN))


def test_the_note_says_how_many_keywords_are_highlighted_and_nothing_when_all_are() -> None:
    (breakdown,) = salience_breakdowns(HOSTILE_JOURNAL, [("hostile.md", HOSTILE_KEYWORDS)])
    found = highlights.highlights([("hostile.md", breakdown)], budget=BUDGET)
    assert (found.shown, found.hit) == (SHOWN, 200)
    assert found.note() == ("highlights: first 6 of 200 keywords shown, the rest too slow to find")
    assert found.by_lesson == {"hostile.md": found.spans}
    assert highlights.highlights([("hostile.md", breakdown)]).note() is None  # the default budget: all 200
    # a keyword two lessons name is found once, counted once
    (one, other) = salience_breakdowns("git worktree", [("a.md", ["git worktree"]), ("b.md", ["git worktree", "x"])])
    both = highlights.highlights([("a.md", one), ("b.md", other)])
    assert (both.shown, both.hit, both.spans, both.by_lesson["b.md"]) == (1, 1, [(0, 12)], [(0, 12)])


@pytest.fixture
def hostile_app(ws_root: Path, monkeypatch: pytest.MonkeyPatch) -> LessonCreditApp:
    monkeypatch.setattr(highlights, "HIGHLIGHT_CHARS", BUDGET)
    add_hostile_session(ws_root)
    return LessonCreditApp(Workspace(ws_root, clock=fixed_clock), seed=0, poll_seconds=0)


async def test_the_journal_pane_says_a_hostile_lessons_keywords_past_the_budget_are_not_highlighted(
    hostile_app: LessonCreditApp,
) -> None:
    async with hostile_app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s6")
        journal = detail.query_one("#journal", JournalView)
        assert journal.message == ("highlights: first 6 of 200 keywords shown, the rest too slow to find")
        text = journal.display_text
        shown = sorted({text[s:e] for s, e in journal._hits})
        assert shown == HOSTILE_KEYWORDS[:SHOWN] and len(journal._hits) == 50 * SHOWN
        assert journal._focus == journal._hits  # the lesson in focus: the only one
        rendered = "".join(journal.render_line(y).text for y in range(2))
        assert rendered.startswith("highlights: first 6 of 200 keywords shown")


async def test_a_focus_change_finds_no_match_again(app: LessonCreditApp, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each lesson's spans were found again on every focus change, on the UI thread; now once, as the session is
    read."""
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        detail = await open_session(pilot, "s1")
        journal = detail.query_one("#journal", JournalView)

        def refused(*_: object) -> NoReturn:
            raise AssertionError("a keyword's matches found again")

        monkeypatch.setattr(salience.KeywordHit, "spans_before", refused)
        await pilot.press("down")
        await settle(pilot)
        assert detail.focused_lesson == "testing/run-tests.md"
        assert [journal.display_text[s:e] for s, e in journal._focus] == ["pytest"]
