"""A plotext plot coloured from the app's theme variables, so plots follow light and dark themes.

plotext draws a whole plot as one ANSI string (6-20 ms at the dashboard's sizes), and PlotextPlot
builds it again on every render, whatever made the widget repaint. A ThemedPlot draws only when
what it shows (`shown()`) or the theme changed, and keeps the rendered text until it draws again or
its size changes.
"""

from __future__ import annotations

from textual.app import App, RenderResult
from textual.color import Color
from textual.geometry import Size
from textual_plotext import Plot, PlotextPlot


def theme_rgb(app: App[object], variable: str) -> tuple[int, int, int]:
    """The theme's `$variable` as an RGB triple for plotext (the foreground if it is not defined)."""
    variables = app.theme_variables
    return Color.parse(variables.get(variable) or variables["foreground"]).rgb


class ThemedPlot(PlotextPlot):
    """Drawn by `draw()` on mount, on `replot()` and when the theme changes; `replot()` does nothing
    while `shown()` and the theme are what was last drawn."""

    _drawn: tuple[object, str] | None = None  # (shown(), theme) of the last draw
    _rendered: tuple[Size, RenderResult] | None = None  # the last draw rendered at a size

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.replot())
        self.replot()

    def colour(self, variable: str) -> tuple[int, int, int]:
        return theme_rgb(self.app, variable)

    def shown(self) -> object:
        """Everything `draw()` reads except the theme (compared with ==): a subclass's reactives."""
        raise NotImplementedError

    def replot(self) -> None:
        if not self.is_mounted:
            return
        drawn = (self.shown(), self.app.theme)
        if drawn == self._drawn:
            return
        plt = self.plt
        plt.clear_data()
        self.draw(plt)
        self._drawn = drawn
        self._rendered = None
        self.refresh()

    def draw(self, plt: Plot) -> None:
        """Plot the data on the cleared `plt`, colours from `colour()`."""
        raise NotImplementedError

    def render(self) -> RenderResult:
        if self._rendered is None or self._rendered[0] != self.size:
            self._rendered = (self.size, super().render())
        return self._rendered[1]
