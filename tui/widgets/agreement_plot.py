"""One pair of reward sources, session by session: the person's score against the other's (docs/records.md).

Each session is a point; the diagonal (x = y) and the kappa threshold are dotted, so nothing reads as a
line joining the points. The pair is named by the screen, in the plot's border; the title says what the marks are."""

from __future__ import annotations

from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.tui.widgets.themed_plot import ThemedPlot

Points = tuple[tuple[float, ...], tuple[float, ...]]
DOTS = 20  # the dotted lines' steps
KEY = "● a session · dotted: x = y and the threshold"  # what the marks are: the plot's title


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
        return (self.pair, self.threshold, self.size.width)

    def on_resize(self) -> None:
        self.replot()

    def heading(self) -> str:
        """What the marks are. The pair and its count are the border's title (the screen's): said here too, at 200
        columns the plot repeated them a line below it."""
        return "no pair chosen" if self.pair is None else KEY

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
