"""The footer: at 80 columns every screen shows its screens group, `? Help` and `q Quit`, spaced
apart; a click presses the key under it, the key under the mouse says what it does, and a key
the screen disables is shown dim and only rings the bell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import Static

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.app import LessonCreditApp
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.screens.lesson_pick import LessonPickScreen
from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen
from lesson_credit.tui.screens.sessions import SessionsScreen
from lesson_credit.tui.widgets.key_footer import KeyFooter
from tests.support.textual_private import screen_lines
from tests.tui.test_tui_whole_headers import demo_app
from tests.tui.tui_fixture import burst, open_session, settle


def footer_line(app: LessonCreditApp) -> str:
    return screen_lines(app)[-1].text


@pytest.mark.parametrize(
    "keys",
    [(), ("s",), ("h",), ("a",), ("m",), ("I",)],
    ids=["lessons", "sessions", "health", "analysis", "simulation", "queue"],
)
async def test_footer_at_80_columns_shows_every_key_spaced(workspace: Workspace, keys: tuple[str, ...]) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        line = footer_line(app)
        assert "screens ? Help" in line, line
        assert line.rstrip().endswith("q Quit"), line


# each screen's footer at 80x24 as it reads, written out by hand: every key named (o and r, and on What-if
# the screens, left to `?` help, which lists every key of every screen); on the old code Lessons read
# "... p Pin w d  l s a m ...", What-if "t T Policy b [ Floor- ] ^s Save esc Back ...", and neither
# Analysis nor Sessions said that x unfolds what a 24-row terminal folds
FOOTERS_80x24 = {
    (): "⏎ Open / Filter p Pin w What-if d Over time  l s a m h A I screens ? Help q Quit",
    ("w",): "t Strategy T Policy b Rewards [ Floor- ] Floor+ ^s Save esc Back ? Help q Quit",
    ("a",): "⏎ Distributions ^s Write x Panel  l s a m h A I screens ? Help q Quit",
    ("s",): "⏎ Open v Pending n Next / Filter x Plot  l s a m h A I screens ? Help q Quit",
}


@pytest.mark.parametrize("keys", list(FOOTERS_80x24), ids=["lessons", "what-if", "analysis", "sessions"])
async def test_footer_at_80_columns_names_every_key_it_shows(workspace: Workspace, keys: tuple[str, ...]) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, *keys)
        await settle(pilot)
        assert footer_line(app).rstrip() == FOOTERS_80x24[keys]


async def test_x_is_in_the_footer_only_where_it_folds(workspace: Workspace) -> None:
    """x unfolds Analysis' panel and Sessions' plot on a 24-row terminal; at 40 rows nothing is folded
    and the footer does not offer it (a resize brings it back)."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 40)) as pilot:
        for key, offered in (("a", "x Panel"), ("s", "x Plot")):
            burst(pilot, key)
            await settle(pilot)
            assert " x " not in footer_line(app), footer_line(app)
            await pilot.resize_terminal(80, 24)
            await settle(pilot)
            assert offered in footer_line(app), footer_line(app)
            await pilot.resize_terminal(80, 40)
            await settle(pilot)


async def test_agreement_footer_at_80_columns_says_what_plus_and_minus_do(workspace: Workspace) -> None:
    """The line is too long for "Threshold +0.05" at 80 columns: the kappa threshold's keys said "+ Up - Down",
    which does not say what goes up, then "+ Threshold+ - Threshold-", which read as a typo. They are one entry,
    `+ - Threshold`, as the screens' keys are (help names each with its step)."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("A")
        await settle(pilot)
        line = footer_line(app)
        assert line.startswith(" + - Threshold esc Back  l s a m h A I screens ? Help q Quit"), line


async def test_session_detail_footer_at_80_columns(workspace: Workspace) -> None:
    """At 80x24 the credit plot is below "why this credit": `x` scrolls to it, and the footer names it before the
    screens' keys, which it leaves to `?` help (as What-if does, for its knobs)."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await open_session(pilot, "s1")
        line = footer_line(app)
        assert line.rstrip() == "0-9 Draft c Commit u Undo n Next esc Back x Plot ? Help q Quit", line
        await pilot.resize_terminal(80, 40)  # the plot in view under the box: no x, the screens' keys back
        await settle(pilot)
        assert "esc Back  l s a m h A I screens ? Help" in footer_line(app), footer_line(app)


async def test_clicking_a_key_in_the_footer_presses_it(workspace: Workspace) -> None:
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot)
        line = footer_line(app)
        # the screens group reads " l s a m h A I screens": `s` is two cells after `l`
        x = line.index(" l s a m h A I screens") + 3
        assert line[x] == "s"
        await pilot.click(KeyFooter, offset=(x, 0))
        await settle(pilot)
        assert isinstance(app.screen, SessionsScreen)


class Keys(App[None]):
    """Two keys: `x` enabled, `y` shown but disabled (check_action answers None)."""

    BINDINGS = [Binding("x", "mark('x')", "Mark x"), Binding("y", "mark('y')", "Mark y", tooltip="why not")]

    def __init__(self) -> None:
        super().__init__()
        self.marks: list[str] = []
        self.bells = 0

    def compose(self) -> ComposeResult:
        yield Static("body")
        yield KeyFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return None if parameters == ("y",) else True

    def action_mark(self, name: str) -> None:
        self.marks.append(name)

    def bell(self) -> None:
        self.bells += 1


async def test_a_disabled_key_is_dim_and_a_click_on_it_only_rings() -> None:
    app = Keys()
    async with app.run_test(size=(120, 10)) as pilot:
        await pilot.pause()
        strip = screen_lines(app)[-1]
        # 120 columns (not compact): " x Mark x  y Mark y " and the palette's key on the right
        assert strip.text.startswith(" x Mark x  y Mark y "), strip.text
        # Textual draws dim text by blending its colour toward the background: `y` and `Mark y` sit
        # nearer the background than `x` and `Mark x` do
        colour = {segment.text.strip(): segment.style for segment in strip if segment.style and segment.text.strip()}
        for enabled, disabled in (("x", "y"), ("Mark x", "Mark y")):
            assert contrast(colour[disabled]) < contrast(colour[enabled]), (enabled, disabled)
        await pilot.click(KeyFooter, offset=(1, 0))  # on `x`
        await pilot.click(KeyFooter, offset=(14, 0))  # on `Mark y`
        await pilot.pause()
        assert app.marks == ["x"]
        assert app.bells == 1


async def test_the_key_under_the_mouse_is_highlighted_and_says_what_it_does() -> None:
    app = Keys()
    async with app.run_test(size=(120, 10)) as pilot:
        await pilot.pause()
        footer = app.query_one(KeyFooter)
        plain = screen_lines(app)[-1]
        await pilot.hover(KeyFooter, offset=(14, 0))  # `Mark y`
        await pilot.pause()
        assert footer.tooltip == "why not"
        hovered = screen_lines(app)[-1]
        changed = {i for i, (a, b) in enumerate(zip(cells(plain), cells(hovered), strict=True)) if a != b}
        assert changed == set(range(10, 20))  # " y " and "Mark y ": cells 10-19, and nothing else
        await pilot.hover(Static, offset=(0, 0))
        await pilot.pause()
        assert footer.tooltip is None
        assert cells(screen_lines(app)[-1]) == cells(plain)


def contrast(style: Any) -> int:
    """How far a cell's text colour is from its background (sum over red, green and blue)."""
    fg, bg = style.color.triplet, style.bgcolor.triplet
    return sum(abs(a - b) for a, b in zip(fg, bg, strict=True))


def cells(strip: Strip) -> list[tuple[str, object]]:
    """(character, background) per cell of a rendered line."""
    return [(char, segment.style.bgcolor if segment.style else None) for segment in strip for char in segment.text]


async def test_the_rewards_footer_lists_its_scroll_keys_while_there_is_more_to_see(tmp_path: Path) -> None:
    """At 80x24 the panel and both plots do not fit and the body scrolls; on the old code the footer said so
    nowhere ("esc Back  l s a m h A I screens ? Help q Quit", with 34 cells to spare). At 160x48 everything
    is in view: no scroll keys listed, and down goes on to the screen as before."""
    app = demo_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "a", "enter")
        await settle(pilot)
        assert isinstance(app.screen, LessonRewardsScreen)
        line = footer_line(app)
        assert line.startswith(" ↑ ↓ home end pgup pgdn scroll esc Back"), line
        assert line.rstrip().endswith("q Quit"), line
        body = app.screen.query_one("#rewards-body")
        await pilot.press("end")
        assert body.scroll_y == body.max_scroll_y > 0
        await pilot.resize_terminal(160, 48)
        await settle(pilot)
        assert body.max_scroll_y == 0
        assert footer_line(app).startswith(" esc Back  l s a m h A I screens  ? Help  q Quit"), footer_line(app)


async def test_the_help_has_a_footer_of_its_own(workspace: Workspace) -> None:
    """Over a session's screen the help's bottom line showed that screen's keys (`0-9 Draft c Commit u Undo ...`),
    none of which does anything while the help is up; it says how to close the help instead."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_session(pilot, "s4")
        burst(pilot, "question_mark")
        await settle(pilot)
        line = footer_line(app)
        assert line.startswith("esc Close help ") and line.rstrip().endswith("scroll"), line  # (then its scroll keys)
        assert "Draft" not in line and "Commit" not in line, line


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
async def test_a_question_has_a_footer_of_its_own(workspace: Workspace, size: tuple[int, int]) -> None:
    """`3 l` on a session asks whether to discard the draft: the bottom line under the question showed the session's
    keys (`0-9 Draft c Commit u Undo n Next to grade q Quit`), none of which does anything while it is up (each is
    refused in the dialog). It says the question's own keys, as the help does."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=size) as pilot:
        await open_session(pilot, "s4")
        burst(pilot, "3", "l")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        line = footer_line(app)
        assert line.split()[:4] == ["y", "Yes", "esc", "No"], line
        assert "Draft" not in line and "Commit" not in line and "Quit" not in line, line


async def test_the_lesson_pick_has_a_footer_of_its_own(workspace: Workspace) -> None:
    """Health's enter on a finding that names several lessons asks which to open: under that list the bottom line
    showed Health's keys (`^r Re-read, re-check ⏎ Open its session or lesson q Quit`), ctrl+r doing nothing there.
    It says the list's own keys."""
    app = LessonCreditApp(workspace, seed=0, poll_seconds=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        burst(pilot, "h")
        await settle(pilot)
        await app.push_screen(LessonPickScreen(["testing/run-tests.md", "workflow/small-commits.md"], "broad-keywords"))
        await settle(pilot)
        line = footer_line(app)
        assert line.startswith("⏎ Open over time esc Back"), line
        assert "Re-read" not in line, line
