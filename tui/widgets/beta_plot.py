"""A plot of Beta posterior densities on [0, 1], coloured from the app theme."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from textual.reactive import reactive
from textual_plotext import Plot

from core.beta import density
from tui.text import one_line
from tui.widgets.themed_plot import ThemedPlot

GRID = np.linspace(0.0, 1.0, 401)

# theme variable per curve role; pins take the next free one of PIN_VARIABLES
ROLE_VARIABLE = {"main": "primary", "after": "primary", "before": "secondary", "prior": "foreground-muted"}
PIN_VARIABLES = ("accent", "success", "warning")


@dataclass(frozen=True)
class Curve:
    label: str
    alpha: float
    beta: float
    role: str = "main"  # main | pin | prior | before | after


def short_label(lesson_id: str, width: int = 28) -> str:
    """A lesson id short enough for a legend: no `.md`; only the file name if the id is too long."""
    label = one_line(lesson_id.removesuffix(".md"))
    if len(label) > width:
        label = label.rsplit("/", 1)[-1]
    return label if len(label) <= width else label[: width - 1] + "…"


class BetaPlot(ThemedPlot):
    """Densities of the given curves. Set `curves`; the plot redraws itself."""

    DEFAULT_CSS = """
    BetaPlot {
        height: 1fr;
        min-height: 8;
    }
    """

    curves: reactive[tuple[Curve, ...]] = reactive((), always_update=True)
    plot_title: reactive[str] = reactive("")

    def watch_curves(self) -> None:
        self.replot()

    def watch_plot_title(self) -> None:
        self.replot()

    def draw(self, plt: Plot) -> None:
        plt.title(one_line(self.plot_title))
        pins = 0
        for curve in self.curves:
            if curve.role == "pin":
                variable = PIN_VARIABLES[pins % len(PIN_VARIABLES)]
                pins += 1
            else:
                variable = ROLE_VARIABLE.get(curve.role, "primary")
            # rounded: the same posterior reached by another float path must draw the same picture
            y = np.round(density(round(curve.alpha, 9), round(curve.beta, 9), GRID), 9)
            colour = self.colour(variable)
            plt.plot(GRID.tolist(), y.tolist(), label=one_line(curve.label), color=colour, marker="braille")
        plt.xlim(0.0, 1.0)
        plt.xticks([0.0, 0.25, 0.5, 0.75, 1.0])
        plt.xlabel("reward rate")
