"""One pair of reward sources, session by session: the person's score against the other's (docs/records.md).

Each session is a point; the diagonal (x = y) and the kappa threshold are dotted, so nothing reads as a
line joining the points. The pair is named in the title (and by the screen, in the plot's border)."""

from __future__ import annotations

from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.tui.text import counted
from lesson_credit.tui.widgets.themed_plot import ThemedPlot

Points = tuple[tuple[float, ...], tuple[float, ...]]
DOTS = 20  # the dotted lines' steps
KEY = "● a session · dotted: x = y and the threshold"  # what the marks are: the title's end, or all of it
AXIS_CELLS = 6  # the y axis's labels and tick ("1.00┤") and the box's right side: plotext drops a wider title


class AgreementPlot(ThemedPlot):
    """Set `pair` ((label a, label b), (xs, ys)) and `threshold`; the plot redraws itself."""

    DEFAULT_CSS = """
    AgreementPlot {
        height: 1fr;
        min-height: 8;
    }
    """

    pair: reactive[tuple[tuple[str, str], Points] | None] = reactive(None)
    threshold: reactive[float] = reactive(0.5)

    def watch_pair(self) -> None:
        self.replot()

    def watch_threshold(self) -> None:
        self.replot()

    def shown(self) -> object:
        return (self.pair, self.threshold, self.size.width)  # the width: which title fits

    def on_resize(self) -> None:
        self.replot()

    def heading(self) -> str:
        """The pair, its count and the key where that fits the plot; else the key alone (plotext draws no
        title wider than its canvas: at 80 columns the dotted lines were unexplained). The pair and its
        count are in the border's title too (the screen's)."""
        if self.pair is None:
            return "no pair chosen"
        (a, b), (xs, _) = self.pair
        full = f"{a} (x) vs {b} (y): {counted(len(xs), 'session')} · {KEY}"
        return full if len(full) <= self.size.width - AXIS_CELLS else KEY

    def draw(self, plt: Plot) -> None:
        plt.title(self.heading())
        if self.pair is not None:
            _, (xs, ys) = self.pair
            t = self.threshold
            dots = [i / DOTS for i in range(DOTS + 1)]
            plt.scatter([t] * len(dots), dots, color=self.colour("warning"), marker="·")
            plt.scatter(dots, [t] * len(dots), color=self.colour("warning"), marker="·")
            plt.scatter(dots, dots, color=self.colour("primary"), marker="·")
            if xs:
                plt.scatter(list(xs), list(ys), color=self.colour("secondary"), marker="●")
        plt.xlim(0.0, 1.0)
        plt.ylim(0.0, 1.0)
        plt.xticks([0.0, 0.5, 1.0])
        plt.yticks([0.0, 0.5, 1.0])
