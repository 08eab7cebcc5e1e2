"""One pair of reward sources, session by session: the person's score against the other's (docs/records.md)."""

from __future__ import annotations

from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.tui.widgets.themed_plot import ThemedPlot

Points = tuple[tuple[float, ...], tuple[float, ...]]


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
        return (self.pair, self.threshold)

    def draw(self, plt: Plot) -> None:
        if self.pair is None:
            plt.title("no pair chosen")
        else:
            (a, b), (xs, ys) = self.pair
            plt.title(f"{a} (x) against {b} (y): {len(xs)} sessions · diagonal x = y · thin: the kappa threshold")
            t = self.threshold
            plt.plot([t, t], [0.0, 1.0], color=self.colour("warning"), marker="braille")
            plt.plot([0.0, 1.0], [t, t], color=self.colour("warning"), marker="braille")
            plt.plot([0.0, 1.0], [0.0, 1.0], color=self.colour("primary"), marker="braille")
            if xs:
                plt.scatter(list(xs), list(ys), color=self.colour("secondary"), marker="●")
        plt.xlim(0.0, 1.0)
        plt.ylim(0.0, 1.0)
        plt.xticks([0.0, 0.5, 1.0])
        plt.yticks([0.0, 0.5, 1.0])
