"""One lesson's rewards: graded sessions with it and without it, the two groups its LOO lift compares."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message

from lesson_credit.tui.loo_text import describe
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import LessonRewards
from lesson_credit.tui.text import one_line
from lesson_credit.tui.textual_private import after_shown
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.key_scroll import FootedKeyScroll
from lesson_credit.tui.widgets.phrase_text import PhraseText
from lesson_credit.tui.widgets.reward_histogram import RewardHistogramPlot
from lesson_credit.tui.widgets.title_bar import TitleBar

Y_STEP = 0.1  # a y axis tops out at the next multiple of this above the tallest bar


class RewardsBody(FootedKeyScroll):
    """The screen's one scrolling body, its scroll keys in the footer while it has more than it shows (the
    panel and both plots at 24 rows: at 80 columns the keys fit the footer beside the screen's own)."""


def y_tops(rewards: LessonRewards) -> tuple[float, float]:
    """The two plots' y ranges: one for both, so bar heights compare across them, unless a group's tallest bar
    would be under half of it. Then each plot has its own (its title says so): a group of 5 sessions all in one
    bin set the range to 100%, and the other group's bins, 1% to 20% of its sessions, were all drawn one row tall."""
    tallest = [max(group.shares, default=0.0) for group in (rewards.with_lesson, rewards.without_lesson)]
    own = [_top(value) for value in tallest]
    shared = max(own)
    if min(tallest) * 2 < shared and all(group.n for group in (rewards.with_lesson, rewards.without_lesson)):
        return own[0], own[1]
    return shared, shared


def _top(tallest: float) -> float:
    """The next multiple of Y_STEP at or above the tallest bar, within [Y_STEP, 1]."""
    steps = int(tallest / Y_STEP + 1 - 1e-9)
    return min(1.0, max(Y_STEP, steps * Y_STEP))


class LessonRewardsScreen(DataScreen):
    """Histograms of session rewards with and without a lesson, as shares of each group."""

    DEFAULT_CSS = screen_css("lesson_rewards.tcss")
    # keys typed before its load (end, pgdn) wait for it (tui/keys.py): until then there is nothing to scroll
    HOLDS_KEYS_UNTIL_LOADED = True
    LESSON_IN_VIEW = "lesson_id"

    AUTO_FOCUS = "#rewards-body"
    HELP = (
        "The reward distributions behind a lesson's leave-one-out lift: graded sessions it was injected in, "
        "and all the others. Bars are shares of each group, on one y scale unless a group's tallest bar would be "
        "under half of it (then each plot has its own, as its title says); the line is the group's mean. When the "
        "panel and both plots do not fit (a 24-row terminal), down / up, pgdn / pgup and home / end scroll."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
    ]

    class Loaded(Message):
        def __init__(self, rewards: LessonRewards) -> None:
            super().__init__()
            self.rewards = rewards

    def __init__(self, source: WorkspaceSource, lesson_id: str) -> None:
        super().__init__(source)
        self.lesson_id = lesson_id
        self.rewards: LessonRewards | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        # one scrolling body: at 24 rows the panel and two readable plots do not fit (each keeps its min-height)
        with RewardsBody(id="rewards-body"):
            yield PhraseText(id="rewards-info")  # laid out at its width: an interval is never cut across lines
            yield RewardHistogramPlot("with the lesson", "with", id="with-plot")
            yield RewardHistogramPlot("without it", "without", id="without-plot")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = f"Rewards · {one_line(self.lesson_id)}"
        self.sub_title = self.source.name
        name = Text(one_line(self.lesson_id), style="bold")
        self.query_one("#rewards-info", PhraseText).show(lambda _width: name)
        self.busy(self.query_one("#rewards-body", RewardsBody), delay=0)

    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="lesson-rewards")
    def _load(self) -> None:
        self.post_result(lambda: self.source.lesson_rewards(self.lesson_id), self.Loaded)

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        rewards = self.rewards = event.rewards
        self.done(self.query_one("#rewards-body", RewardsBody))
        info = self.query_one("#rewards-info", PhraseText)
        result = rewards.result
        if result is None:
            absent = Text(f"{one_line(self.lesson_id)} is not in the log: no sessions to compare.", style="bold")
            info.show(lambda _width: absent)
        else:
            info.show(lambda width: describe(result, width=width))
        tops = y_tops(rewards)
        plots = (("#with-plot", rewards.with_lesson), ("#without-plot", rewards.without_lesson))
        for (selector, histogram), top in zip(plots, tops, strict=True):
            plot = self.query_one(selector, RewardHistogramPlot)
            plot.own_scale = tops[0] != tops[1]
            plot.y_max = top
            plot.histogram = histogram
        # after the layout for the panel's new lines: a scroll key handed on sooner sees nothing to scroll
        after_shown(self, self.ready_for_keys)

    def action_back(self) -> None:
        self.dismiss()
