"""Reward per graded session in log order, with a rolling mean (series built by lesson_credit.tui.series).

The title is the legend: each series named after the mark it is drawn with. plotext's own legend is drawn in
the plot's top left corner, over the points there (at 80x24, two of the five rows of points)."""

from __future__ import annotations

from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.tui.series import ROLLING_WINDOW, RewardSeries
from lesson_credit.tui.widgets.themed_plot import ThemedPlot

POINT = "•"  # plotext's "dot" marker, each session's reward
LINE = "⠒⠒"  # a level stretch of the braille line, the rolling mean


class RewardPlot(ThemedPlot):
    """Set `series`; the plot redraws itself."""

    DEFAULT_CSS = """
    RewardPlot {
        height: 12;
    }
    """

    series: reactive[RewardSeries | None] = reactive(None, always_update=True)

    def watch_series(self) -> None:
        self.replot()

    def shown(self) -> object:
        return self.series

    def draw(self, plt: Plot) -> None:
        series = self.series
        size = series.group if series else 1
        what = "reward per graded session" if size == 1 else f"mean reward per {size} graded sessions"
        plt.title(f"{POINT} {what} (log order) · {LINE} rolling mean of {ROLLING_WINDOW}")
        if series is not None and series.xs:
            xs, ys = list(series.xs), list(series.ys)
            plt.scatter(xs, ys, color=self.colour("secondary"), marker="dot")
            plt.plot(xs, list(series.smooth), color=self.colour("primary"), marker="braille")
            plt.xticks([float(t) for t in series.ticks], [str(t) for t in series.ticks])
        plt.ylim(0.0, 1.0)
        plt.yticks([0.0, 0.5, 1.0])
