"""One series of the over-time view: a mean per window with its 90% interval, in log order."""

from __future__ import annotations

from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.tui.over_time_view import Series
from lesson_credit.tui.widgets.themed_plot import ThemedPlot


class OverTimePlot(ThemedPlot):
    """Set `series`; `zero` draws the line y = 0 (an effect's sign), `unit` fixes y to [0, 1] (a mean reward)."""

    DEFAULT_CSS = """
    OverTimePlot {
        height: 1fr;
        min-height: 8;
    }
    """

    series: reactive[Series | None] = reactive(None, always_update=True)

    def __init__(self, title: str, *, zero: bool = False, unit: bool = False, id: str | None = None) -> None:
        super().__init__(id=id)
        self.heading = title
        self.zero = zero
        self.unit = unit

    def watch_series(self) -> None:
        self.replot()

    def shown(self) -> object:
        return self.series

    def draw(self, plt: Plot) -> None:
        series = self.series
        plt.title(self.heading)
        if series is None or not series.xs:
            plt.title(f"{self.heading}: none")
            return
        xs = list(series.xs)
        if self.zero:
            plt.hline(0.0, color=self.colour("warning"))
        for x, low, high in zip(xs, series.low, series.high, strict=True):  # each window's interval, upright
            plt.plot([x, x], [low, high], color=self.colour("secondary"), marker="braille")
        if len(xs) > 1:
            plt.plot(xs, list(series.mean), color=self.colour("primary"), marker="braille")
        plt.scatter(xs, list(series.mean), color=self.colour("primary"), marker="●")
        if self.unit:
            plt.ylim(0.0, 1.0)
            plt.yticks([0.0, 0.5, 1.0])
        if series.x_max > 0:
            plt.xlim(0.0, float(series.x_max))
        ticks = sorted({0, *(int(round(x)) for x in xs), series.x_max})
        plt.xticks([float(t) for t in ticks], [str(t) for t in ticks])
        plt.xlabel("graded session (log order)")
