"""One series of the over-time view: a mean per window with its 90% interval, in log order."""

from __future__ import annotations

import math

from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.tui.over_time_view import Series
from lesson_credit.tui.widgets.themed_plot import ThemedPlot


def zero_ticks(low: float, high: float, most: int = 6) -> tuple[list[float], list[str]]:
    """Y ticks for values from `low` to `high` and the line y = 0: a round step apart (1, 2 or 5 times a
    power of ten), zero one of them, at most `most` of them, with their labels (zero reads "0.00", never
    "-0.00"). plotext's own ticks are spread evenly between the ends, so the one on the zero line's row
    read "-0.008" or "0.017"."""
    low, high = min(low, 0.0), max(high, 0.0)
    high = max(high, low + 0.01)  # (one value: a small span around it)

    def ends(step: float) -> tuple[int, int]:
        return math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)

    power = math.floor(math.log10((high - low) / most))
    steps = (m * 10.0**p for p in range(power, power + 3) for m in (1, 2, 5))
    step = next(s for s in steps if ends(s)[1] - ends(s)[0] + 1 <= most)
    first, last = ends(step)
    digits = max(0, -math.floor(math.log10(step) + 1e-9))
    ticks = [round(i * step, digits) + 0.0 for i in range(first, last + 1)]  # (+ 0.0: no -0.0)
    return ticks, [f"{t:.{digits}f}" for t in ticks]


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
        elif self.zero:
            values = [v for v in (*series.low, *series.high) if math.isfinite(v)] or [0.0]
            ticks, labels = zero_ticks(min(values), max(values))
            plt.ylim(ticks[0], ticks[-1])
            plt.yticks(ticks, labels)
        if series.x_max > 0:
            plt.xlim(0.0, float(series.x_max))
        ticks = sorted({0, *(int(round(x)) for x in xs), series.x_max})
        plt.xticks([float(t) for t in ticks], [str(t) for t in ticks])
        plt.xlabel("graded session (log order)")
