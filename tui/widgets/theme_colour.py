"""Plot colours taken from the app's theme variables, so plots follow light and dark themes."""

from __future__ import annotations

from textual.app import App
from textual.color import Color


def theme_rgb(app: App[object], variable: str) -> tuple[int, int, int]:
    """The theme's `$variable` as an RGB triple for plotext (the foreground if it is not defined)."""
    variables = app.theme_variables
    return Color.parse(variables.get(variable) or variables["foreground"]).rgb
