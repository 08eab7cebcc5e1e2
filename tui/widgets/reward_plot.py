"""Reward per graded session in log order, with a rolling mean (series built by tui.series)."""

from __future__ import annotations

from textual.reactive import reactive
from textual_plotext import PlotextPlot

from tui.series import ROLLING_WINDOW, RewardSeries
from tui.widgets.theme_colour import theme_rgb


class RewardPlot(PlotextPlot):
    """Set `series`; the plot redraws itself."""

    DEFAULT_CSS = """
    RewardPlot {
        height: 12;
    }
    """

    series: reactive[RewardSeries | None] = reactive(None, always_update=True)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.replot())
        self.replot()

    def watch_series(self) -> None:
        self.replot()

    def _colour(self, variable: str) -> tuple[int, int, int]:
        return theme_rgb(self.app, variable)

    def replot(self) -> None:
        if not self.is_mounted:
            return
        plt = self.plt
        plt.clear_data()
        series = self.series
        size = series.group if series else 1
        what = "reward per graded session" if size == 1 else f"mean reward of every {size} graded sessions"
        plt.title(f"{what} (log order) · rolling mean of {ROLLING_WINDOW}")
        if series is not None and series.xs:
            xs, ys = list(series.xs), list(series.ys)
            plt.scatter(xs, ys, color=self._colour("secondary"), marker="dot", label="reward")
            plt.plot(xs, list(series.smooth), color=self._colour("primary"), marker="braille", label="rolling mean")
            plt.xticks([float(t) for t in series.ticks], [str(t) for t in series.ticks])
        plt.ylim(0.0, 1.0)
        plt.yticks([0.0, 0.5, 1.0])
        self.refresh()
