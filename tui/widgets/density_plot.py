"""The Beta densities drawn with plotext (imported when the first BetaPlot has curves to show)."""

from __future__ import annotations

import numpy as np
from textual.reactive import reactive
from textual_plotext import Plot

from core.beta import density
from tui.text import one_line
from tui.widgets.curves import Curve, curve_variable
from tui.widgets.themed_plot import ThemedPlot

GRID = np.linspace(0.0, 1.0, 401)


class DensityPlot(ThemedPlot):
    """The densities themselves; the legend is drawn below the plot by BetaPlot, never over the peaks."""

    curves: reactive[tuple[Curve, ...]] = reactive((), always_update=True)
    plot_title: reactive[str] = reactive("")

    def watch_curves(self) -> None:
        self.replot()

    def watch_plot_title(self) -> None:
        self.replot()

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
