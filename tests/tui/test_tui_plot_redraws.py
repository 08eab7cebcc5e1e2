"""A plot is built again only when what it shows, its size or the theme changes; a repaint for
another reason reuses the last build, and what it shows is always what a fresh plot shows."""

from __future__ import annotations

from typing import Any

from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.strip import Strip

from lesson_credit.tui.widgets.beta_plot import BetaPlot
from lesson_credit.tui.widgets.curves import Curve
from lesson_credit.tui.widgets.density_plot import DensityPlot
from tests.support.textual_private import screen_lines

ONE = (Curve("a", 3.0, 2.0),)
TWO = (Curve("a", 3.0, 2.0), Curve("b", 1.0, 4.0, role="pin"))


class Plotted(App[None]):
    def compose(self) -> ComposeResult:
        yield DensityPlot()


def count_builds(plot: DensityPlot) -> list[int]:
    """Appends 1 to the returned list each time plotext builds the plot."""
    builds: list[int] = []
    build = plot.plt.build

    def counting() -> Any:
        builds.append(1)
        return build()

    plot.plt.build = counting  # type: ignore[method-assign]  # counts this plot's builds
    return builds


def shown(app: App[None]) -> list[Strip]:
    return screen_lines(app)


async def fresh_rendering(curves: tuple[Curve, ...], title: str, size: tuple[int, int], theme: str) -> list[Strip]:
    """The screen of a new app whose plot was given `curves` and `title` once."""
    app = Plotted()
    app.theme = theme
    async with app.run_test(size=size) as pilot:
        plot = app.query_one(DensityPlot)
        plot.curves, plot.plot_title = curves, title
        await pilot.pause()
        return shown(app)


async def test_only_a_change_of_data_size_or_theme_builds_the_plot_again() -> None:
    # Each count is read after shown(app), which draws every widget waiting to be drawn: the counts do
    # not depend on how soon the app got round to it.
    app = Plotted()
    async with app.run_test(size=(60, 20)) as pilot:
        plot = app.query_one(DensityPlot)
        builds = count_builds(plot)
        plot.curves, plot.plot_title = ONE, "one"
        await pilot.pause()
        assert shown(app) == await fresh_rendering(ONE, "one", (60, 20), app.theme)
        assert len(builds) == 1

        # the same curves again (an equal tuple, as a cursor move back to the same lesson gives), a
        # repaint, a title set to what it is: nothing new to draw
        plot.curves = (Curve("a", 3.0, 2.0),)
        plot.plot_title = "one"
        plot.refresh()
        await pilot.pause()
        assert shown(app) == await fresh_rendering(ONE, "one", (60, 20), app.theme)
        assert len(builds) == 1

        plot.curves = TWO  # new data
        await pilot.pause()
        assert shown(app) == await fresh_rendering(TWO, "one", (60, 20), app.theme)
        assert len(builds) == 2

        await pilot.resize_terminal(70, 22)  # a new size
        for _ in range(3000):  # until the resize reaches the plot: "it got there", not a speed limit
            if plot.size == Size(70, 22):
                break
            await pilot.pause(0.01)
        assert shown(app) == await fresh_rendering(TWO, "one", (70, 22), app.theme)
        assert len(builds) == 3

        dark = app.theme
        app.theme = "textual-light"  # new colours
        await pilot.pause()
        light = shown(app)
        assert light == await fresh_rendering(TWO, "one", (70, 22), "textual-light")
        assert light != await fresh_rendering(TWO, "one", (70, 22), dark)
        assert len(builds) == 4


class WithBetaPlot(App[None]):
    def compose(self) -> ComposeResult:
        yield BetaPlot()


async def test_a_beta_plot_taken_down_before_its_plot_mounts_does_not_crash() -> None:
    """Curves arrive, and before the frame after which the plot would replace its placeholder the
    widget's children are being removed (its screen closing while a burst of keys moves on): the
    late mount finds no placeholder and must give up quietly, not end the app with NoMatches."""
    app = WithBetaPlot()
    async with app.run_test(size=(60, 20)) as pilot:
        beta = app.query_one(BetaPlot)
        beta.curves = ONE  # schedules the plot's mount after the next refresh
        await beta.query_one("#plot-area").remove()
        await pilot.pause()
        await pilot.pause()
        assert app.is_running and not app.query(DensityPlot)
