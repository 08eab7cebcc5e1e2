"""The app's stylesheet (tui/stylesheet.py): a screen shown for the first time parses only its own
CSS, and the rules are always those a fresh parse of every source with the current theme gives."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import textual.css.stylesheet as textual_stylesheet
from textual.css.parse import parse as textual_parse
from textual.css.stylesheet import Stylesheet

from lesson_credit.tui.app import LessonCreditApp
from tests.tui.tui_fixture import settle


@contextmanager
def counted_parses() -> Iterator[list[tuple[str, str]]]:
    """Every CSS source Textual's parser reads meanwhile (its location), one entry per parse."""
    parsed: list[tuple[str, str]] = []
    original = textual_parse  # what textual.css.stylesheet imported as `parse`

    def counting(scope: str, css: str, read_from: tuple[str, str], **kwargs: Any) -> Any:
        parsed.append(read_from)
        return original(scope, css, read_from, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(textual_stylesheet, "parse", counting)
        yield parsed


def rules(stylesheet: Stylesheet) -> list[tuple[str, dict[str, str], bool, int]]:
    """Each rule: its selectors, its declarations (values after the variables; by repr, as a layout
    is an object without equality), default or not, tie breaker."""
    return [
        (
            rule.selectors,
            {name: repr(value) for name, value in rule.styles.get_rules().items()},
            rule.is_default_rules,
            rule.tie_breaker,
        )
        for rule in stylesheet.rules
    ]


def fresh_rules(app: LessonCreditApp) -> list[tuple[str, dict[str, str], bool, int]]:
    """The second way: Textual's own Stylesheet, every source of the app's parsed from scratch with
    the app's current variables."""
    fresh = Stylesheet(variables=app.get_css_variables())
    for read_from, (css, is_defaults, tie_breaker, scope) in app.stylesheet.source.items():
        fresh.add_source(css, read_from=read_from, is_default_css=is_defaults, tie_breaker=tie_breaker, scope=scope)
    return rules(fresh)


async def test_a_screen_shown_for_the_first_time_parses_only_its_new_css(app: LessonCreditApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        before = set(app.stylesheet.source)
        with counted_parses() as parsed:
            await pilot.press("s")
            await settle(pilot)
        new = set(app.stylesheet.source) - before
        # Sessions brings its screen's and its plot's CSS, and the loading indicator's if the view is
        # still loading when the screen is drawn (on a fast machine it may not be). Textual re-parsed
        # all 21 sources twice more (once when the mode's screen was made, once when it was switched
        # to): every parse now is of a source that is new, each parsed once.
        assert 2 <= len(new) <= 3
        assert sorted(parsed) == sorted(new)


async def test_the_rules_match_a_fresh_parse_across_screens_and_themes(app: LessonCreditApp) -> None:
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in "shaml":
            await pilot.press(key)
            await settle(pilot)
            assert rules(app.stylesheet) == fresh_rules(app), key
        dark = rules(app.stylesheet)
        # a new theme: new variables, every source parsed again with them
        app.theme = "textual-light"
        await settle(pilot)
        light = rules(app.stylesheet)
        assert light == fresh_rules(app)
        assert light != dark
        await pilot.press("s")
        await settle(pilot)
        assert rules(app.stylesheet) == fresh_rules(app)
