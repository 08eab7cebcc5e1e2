"""A plot of Beta posterior densities on [0, 1], coloured from the app theme.

The plot itself (tui/widgets/density_plot.py: plotext) is mounted after the screen's first frame
with curves: importing and drawing it does not delay the first rows of the table beside it. Its
modules are imported in a worker thread (30-70 ms that held the event loop while a big table filled)."""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from lesson_credit.core.api import shorten_lesson
from lesson_credit.tui.text import one_line
from lesson_credit.tui.textual_private import after_shown
from lesson_credit.tui.widgets.curves import Curve, curve_variable

__all__ = ["BetaPlot", "Curve", "short_label"]  # Curve is the screens' name for a plotted curve

LEGEND_MARK = "━━"


def short_label(lesson_id: str, width: int = 28) -> str:
    """A lesson id short enough for a legend: no `.md`; its folders, then its file name's middle, left out
    where it is too long (`shorten_lesson`)."""
    return shorten_lesson(one_line(lesson_id.removesuffix(".md")), width)


class Legend(Widget):
    """One entry per curve (mark and label); entries share a line only when both fit whole, and a
    label too long for a line is shortened (file name, then an ellipsis): an id never wraps."""

    entries: reactive[tuple[tuple[Style, str], ...]] = reactive((), layout=True)

    def lines(self, width: int) -> list[Text]:
        out: list[Text] = []
        room = max(1, width - len(LEGEND_MARK) - 1)
        for style, label in self.entries:
            entry = Text(end="")
            entry.append(LEGEND_MARK, style=style)  # only the mark in the curve's colour
            entry.append(" " + short_label(label, room))
            if out and out[-1].cell_len + 2 + entry.cell_len <= width:
                out[-1].append("  ")
                out[-1].append_text(entry)
            else:
                out.append(entry)
        return out

    def render(self) -> Text:
        return Text("\n", end="").join(self.lines(self.size.width))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines(width))


class BetaPlot(Widget):
    """Densities of the given curves with their legend below. Set `curves` and `plot_title`."""

    DEFAULT_CSS = """
    BetaPlot {
        height: 1fr;
        min-height: 8;
    }
    BetaPlot DensityPlot, BetaPlot #plot-area {
        height: 1fr;
    }
    BetaPlot #legend {
        height: auto;
        padding: 0 1;
    }
    """

    curves: reactive[tuple[Curve, ...]] = reactive((), always_update=True)
    plot_title: reactive[str] = reactive("")

    def __init__(self, *, plot_rows: int | None = None, id: str | None = None) -> None:  # noqa: A002 (Textual's name)
        super().__init__(id=id)
        # with plot_rows the min-height is that many rows of densities plus the legend's lines: a legend of
        # every curve (the prior, three pins and the highlighted lesson: five lines at 80 columns) takes its
        # rows from what is below the plot, not from the densities
        self.plot_rows = plot_rows
        self._plot: Widget | None = None  # the DensityPlot, once mounted
        self._mounting = False

    def compose(self) -> ComposeResult:
        yield Static(id="plot-area")  # the DensityPlot takes its place (see _mount_plot)
        yield Legend(id="legend")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._show_legend())

    def watch_curves(self, curves: tuple[Curve, ...]) -> None:
        if self._plot is not None:
            self._plot.curves = curves  # type: ignore[attr-defined]
        elif curves and not self._mounting:
            self._mounting = True
            after_shown(self, self._import_plot)  # after the frame that shows the data
        self._show_legend()

    class PlotImported(Message):
        """The plot's modules are imported: it can be mounted."""

    @work(thread=True, group="plot-import", description="import the density plot")
    def _import_plot(self) -> None:
        import lesson_credit.tui.widgets.density_plot  # noqa: F401  (imported here, off the UI thread)

        self.post_message(self.PlotImported())

    @on(PlotImported)
    async def _plot_imported(self) -> None:
        await self._mount_plot()

    def watch_plot_title(self, title: str) -> None:
        if self._plot is not None:
            self._plot.plot_title = title  # type: ignore[attr-defined]

    async def _mount_plot(self) -> None:
        from lesson_credit.tui.widgets.density_plot import DensityPlot

        if not self.is_mounted or self._plot is not None:
            return
        areas = self.query("#plot-area")
        if not areas:  # being taken down (its screen closing) before this ran: nothing to mount into
            return
        area = areas.first()
        plot = DensityPlot()
        plot.curves, plot.plot_title = self.curves, self.plot_title
        await self.mount(plot, before=area)
        await area.remove()
        self._plot = plot
        plot.curves, plot.plot_title = self.curves, self.plot_title  # what changed while it mounted

    def legend(self) -> tuple[tuple[Style, str], ...]:
        """(mark style, label) per curve, in the theme's colours."""
        return tuple(
            (Style(color=Color.parse(self._colour(curve_variable(curve))).rich_color), curve.label)
            for curve in self.curves
        )

    def _colour(self, variable: str) -> str:
        variables = self.app.theme_variables
        return variables.get(variable) or variables["foreground"]

    def _show_legend(self) -> None:
        for legend in self.query("#legend").results(Legend):
            legend.entries = self.legend()
        self._fit_legend()

    def on_resize(self) -> None:
        self._fit_legend()  # a new width can wrap the legend into more lines, or fewer

    def _fit_legend(self) -> None:
        if self.plot_rows is None or not self.size.width:
            return
        for legend in self.query("#legend").results(Legend):
            lines = len(legend.lines(self.size.width - legend.styles.gutter.width))
            self.styles.min_height = self.plot_rows + lines + self.styles.gutter.height
