"""A plotext plot coloured from the app's theme variables, so plots follow light and dark themes."""

from __future__ import annotations

from textual.app import App
from textual.color import Color
from textual_plotext import Plot, PlotextPlot


def theme_rgb(app: App[object], variable: str) -> tuple[int, int, int]:
    """The theme's `$variable` as an RGB triple for plotext (the foreground if it is not defined)."""
    variables = app.theme_variables
    return Color.parse(variables.get(variable) or variables["foreground"]).rgb


class ThemedPlot(PlotextPlot):
    """Drawn by `draw()` on mount, on `replot()` (when what it shows changes) and when the theme changes."""

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.replot())
        self.replot()

    def colour(self, variable: str) -> tuple[int, int, int]:
        return theme_rgb(self.app, variable)

    def replot(self) -> None:
        if not self.is_mounted:
            return
        plt = self.plt
        plt.clear_data()
        self.draw(plt)
        self.refresh()

    def draw(self, plt: Plot) -> None:
        """Plot the data on the cleared `plt`, colours from `colour()`."""
        raise NotImplementedError
