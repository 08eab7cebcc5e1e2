"""The Beta densities drawn with plotext (imported when the first BetaPlot has curves to show)."""

from __future__ import annotations

import numpy as np
from textual.reactive import reactive
from textual_plotext import Plot

from lesson_credit.core.api import density
from lesson_credit.tui.text import one_line
from lesson_credit.tui.widgets.curves import Curve, curve_variable
from lesson_credit.tui.widgets.themed_plot import ThemedPlot

# 201 points, one every 0.005: as many as the widest plot has braille dot columns (~200 at 160 columns).
# plotext's build time grows with the points: 401 took 9 ms to build at the side panel's size and 20 ms
# at 100 columns, 201 takes 6 and 10 ms, and the curves pass through the same cells but a few dots.
GRID = np.linspace(0.0, 1.0, 201)


class DensityPlot(ThemedPlot):
    """The densities themselves; the legend is drawn below the plot by BetaPlot, never over the peaks."""

    curves: reactive[tuple[Curve, ...]] = reactive((), always_update=True)
    plot_title: reactive[str] = reactive("")

    def watch_curves(self) -> None:
        self.replot()

    def watch_plot_title(self) -> None:
        self.replot()

    def shown(self) -> object:
        return (self.curves, self.plot_title)

    def draw(self, plt: Plot) -> None:
        plt.title(one_line(self.plot_title))
        for curve in self.curves:
            # rounded: the same posterior reached by another float path must draw the same picture
            y = np.round(density(round(curve.alpha, 9), round(curve.beta, 9), GRID), 9)
            plt.plot(GRID.tolist(), y.tolist(), color=self.colour(curve_variable(curve)), marker="braille")
        plt.xlim(0.0, 1.0)
        plt.xticks([0.0, 0.25, 0.5, 0.75, 1.0])
        plt.xlabel("reward rate")
        plt.ylabel("density")
