"""Help lists each key once for the screen it opens over. Over Lessons it listed `esc Clear filter` under
Lessons and `esc Back` under Anywhere (and `w` twice): on Lessons escape clears the filter, the app's `Back`
never runs there. The app's keys a screen binds itself are listed under the screen only; a priority key
(ctrl+d, which the app takes before any screen) stays under Anywhere. The help's footer says what closes it
first, then its scroll keys (it listed the focused body's scroll keys first)."""

from __future__ import annotations

import re

from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.help import HelpScreen
from lesson_credit.tui.screens.lessons import LessonsScreen
from tests.support.textual_private import screen_lines
from tests.tui.tui_fixture import burst, settle, wait_until


def help_plain(app: LessonCreditApp) -> str:
    return str(app.screen.query_one("#help-text").render())


def section(text: str, title: str) -> list[str]:
    """The lines of the help's section `title` (up to the blank line that ends it)."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start + 1, len(lines)) if not lines[i].strip()), len(lines))
    return lines[start + 1 : end]


def keys_listed(lines: list[str], key: str) -> list[str]:
    return [line.strip() for line in lines if re.match(rf"^\s+{re.escape(key)}  ", line)]


async def test_lessons_help_lists_escape_once_and_its_footer_says_close_first(app: LessonCreditApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, LessonsScreen)
        burst(pilot, "slash", "g", "i", "t", "escape", "question_mark")  # a filter typed and cleared, then help
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        text = help_plain(app)
        lessons, anywhere = section(text, "Lessons  (this screen)"), section(text, "Anywhere")
        assert keys_listed(lessons, "esc") == ["esc  Clear filter"], lessons
        assert keys_listed(anywhere, "esc") == [], anywhere  # the app's Back: not what escape does here
        assert keys_listed(anywhere, "w") == [] and keys_listed(lessons, "w") == ["w  What-if"], (lessons, anywhere)
        assert keys_listed(anywhere, "^d") == ["^d  Discard unsaved writes…"], anywhere  # priority: the app's
        assert keys_listed(anywhere, "q") == ["q  Quit"], anywhere
        footer = screen_lines(app)[-1].text.strip()
        assert footer.startswith("esc Close help") and footer.count("esc") == 1, footer
        assert footer.split() == ["esc", "Close", "help", "↑", "↓", "home", "end", "pgup", "pgdn", "scroll"], footer
        burst(pilot, "escape", "s", "question_mark")  # over Sessions: Anywhere keeps Back (Sessions binds escape
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))  # too: its own entry, Clear filter)
        await settle(pilot)
        text = help_plain(app)
        assert keys_listed(section(text, "Anywhere"), "esc") == [], section(text, "Anywhere")
        assert keys_listed(section(text, "Sessions  (this screen)"), "esc") == ["esc  Clear filter"]
        burst(pilot, "escape", "a", "question_mark")  # over Analysis, which binds no escape: the app's Back was
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))  # listed, and escape there did nothing
        await settle(pilot)  # (nothing under it to go back to: the palette lists no Back there either)
        assert keys_listed(section(help_plain(app), "Anywhere"), "esc") == []
        burst(pilot, "escape", "A", "question_mark")  # over Agreement, opened over Analysis: its own Back, once
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        text = help_plain(app)
        assert keys_listed(section(text, "Anywhere"), "esc") == []
        assert keys_listed(section(text, "Agreement  (this screen)"), "esc") == ["esc  Back"], text
