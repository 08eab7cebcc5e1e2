"""Help says what the Lessons columns mean and which way `n` goes, typed in one burst as the dashboard opens.

At 80 columns the Lessons table's headers are the only words for its numbers: "ranking +0.027" said nothing of what
it estimates or on what scale (the Analysis screen's panel says "ranking (shrunk joint estimate)", Lessons said
nothing, nor did its help). The Sessions and session helps said `n` follows the grading queue's order; it follows
the Sessions list's, for a session opened from it."""

from __future__ import annotations

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.help import HelpScreen
from tests.tui.tui_fixture import burst, open_session, settle, wait_until


def help_plain(app: LessonCreditApp) -> str:
    return " ".join(str(app.screen.query_one("#help-text").render()).split())  # the words, not the wrapping


async def test_lessons_help_says_what_each_column_is(app: LessonCreditApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        burst(pilot, "question_mark")  # typed as it opens: the help waits for the Lessons screen
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        text = help_plain(app)
        assert "mean, the posterior mean of its reward rate (0 to 1), and its 95% CI" in text
        assert "n, the graded sessions it was injected in" in text
        assert "ranking, the shrunk joint estimate of its effect on a session's reward" in text
        assert "not Analysis's effect, whose sign can differ" in text and "last, its latest credit" in text


async def test_sessions_and_session_help_say_n_goes_down_the_list(app: LessonCreditApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "s", "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        text = help_plain(app)
        assert "n the first pending one from the highlighted row down" in text
        assert "n on a session opened from here the next one down this list (as sorted and filtered" in text
        burst(pilot, "escape")
        await settle(pilot)
        await open_session(pilot, "s4")
        burst(pilot, "question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        assert "down the Sessions list when the session was opened from it, else in the grading queue's order" in (
            help_plain(app)
        )
