"""A histogram of session rewards on [0, 1] as shares, with the group's mean as a vertical line."""

from __future__ import annotations

from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.tui.series import RewardHistogram
from lesson_credit.tui.text import fmt
from lesson_credit.tui.widgets.themed_plot import ThemedPlot

BAR_WIDTH = 0.7  # of a bin: a gap between bars keeps neighbouring bins apart
ROLE_VARIABLE = {"with": "primary", "without": "secondary"}


class RewardHistogramPlot(ThemedPlot):
    """Set `histogram` (and `y_max`, shared with a plot it is compared to unless `own_scale`); the plot redraws
    itself."""

    DEFAULT_CSS = """
    RewardHistogramPlot {
        height: 1fr;
        min-height: 8;
    }
    """

    histogram: reactive[RewardHistogram | None] = reactive(None, always_update=True)
    y_max: reactive[float] = reactive(1.0)
    own_scale: reactive[bool] = reactive(False)  # its y range is not the plot's it is compared to (its title says so)

    def __init__(self, label: str, role: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = label
        self.role = role

    def watch_histogram(self) -> None:
        self.replot()

    def watch_y_max(self) -> None:
        self.replot()

    def watch_own_scale(self) -> None:
        self.replot()

    def shown(self) -> object:
        return (self.histogram, self.y_max, self.own_scale, self.label, self.role)

    def draw(self, plt: Plot) -> None:
        histogram = self.histogram
        top = max(self.y_max, 1e-9)
        if histogram is None:
            plt.title(self.label)
        elif not histogram.n:
            plt.title(f"{self.label}: no graded sessions")
        else:
            scale = " · own y scale" if self.own_scale else ""
            plt.title(f"{self.label}: n={histogram.n}, mean {fmt(histogram.mean, 3)} (line){scale}")
            colour = self.colour(ROLE_VARIABLE.get(self.role, "primary"))
            plt.bar(list(histogram.centres), list(histogram.shares), width=BAR_WIDTH, color=colour)
            if histogram.mean is not None:
                plt.vline(histogram.mean, color=self.colour("accent"))
        plt.xlim(0.0, 1.0)
        plt.xticks([0.0, 0.25, 0.5, 0.75, 1.0])
        plt.ylim(0.0, top)
        ticks = [0.0, top / 2, top]
        plt.yticks(ticks, [f"{t:.0%}" for t in ticks])
        plt.xlabel("session reward")
