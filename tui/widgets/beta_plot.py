"""A plot of Beta posterior densities on [0, 1], coloured from the app theme."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.color import Color
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static
from textual_plotext import Plot

from core.beta import density
from tui.text import one_line
from tui.widgets.themed_plot import ThemedPlot

GRID = np.linspace(0.0, 1.0, 401)

# theme variable per curve role: the draft is never the colour of the grade in force
ROLE_VARIABLE = {
    "main": "primary",
    "after": "primary",
    "draft": "warning",
    "before": "secondary",
    "prior": "foreground-muted",
}
PIN_VARIABLES = ("accent", "success", "error")
LEGEND_MARK = "━━"


@dataclass(frozen=True)
class Curve:
    label: str
    alpha: float
    beta: float
    role: str = "main"  # main | pin | prior | before | after | draft
    slot: int = 0  # a pin's place in the pin list: its colour stays while the cursor moves


def short_label(lesson_id: str, width: int = 28) -> str:
    """A lesson id short enough for a legend: no `.md`; only the file name if the id is too long."""
    label = one_line(lesson_id.removesuffix(".md"))
    if len(label) > width:
        label = label.rsplit("/", 1)[-1]
    return label if len(label) <= width else label[: width - 1] + "…"


def curve_variable(curve: Curve) -> str:
    if curve.role == "pin":
        return PIN_VARIABLES[curve.slot % len(PIN_VARIABLES)]
    return ROLE_VARIABLE.get(curve.role, "primary")


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


class BetaPlot(Widget):
    """Densities of the given curves with their legend below. Set `curves` and `plot_title`."""

    DEFAULT_CSS = """
    BetaPlot {
        height: 1fr;
        min-height: 8;
    }
    BetaPlot DensityPlot {
        height: 1fr;
    }
    BetaPlot #legend {
        height: auto;
        max-height: 3;
        padding: 0 1;
    }
    """

    curves: reactive[tuple[Curve, ...]] = reactive((), always_update=True)
    plot_title: reactive[str] = reactive("")

    def compose(self) -> ComposeResult:
        yield DensityPlot()
        yield Static(id="legend")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._show_legend())

    def watch_curves(self, curves: tuple[Curve, ...]) -> None:
        for plot in self.query(DensityPlot).results(DensityPlot):
            plot.curves = curves
        self._show_legend()

    def watch_plot_title(self, title: str) -> None:
        for plot in self.query(DensityPlot).results(DensityPlot):
            plot.plot_title = title

    def legend(self) -> Text:
        out = Text()
        for i, curve in enumerate(self.curves):
            if i:
                out.append("  ")
            out.append(LEGEND_MARK, style=Style(color=Color.parse(self._colour(curve_variable(curve))).rich_color))
            out.append(" " + one_line(curve.label))
        return out

    def _colour(self, variable: str) -> str:
        variables = self.app.theme_variables
        return variables.get(variable) or variables["foreground"]

    def _show_legend(self) -> None:
        for legend in self.query("#legend").results(Static):
            legend.update(self.legend())
