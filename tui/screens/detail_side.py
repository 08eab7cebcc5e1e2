"""Session detail's side pane: the credits table, "why this credit" and the plot, with "why this credit" fitted
to the rows the pane has left under the table (tui/widths.py detail_heights)."""

from __future__ import annotations

from textual import events
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.dom import NoScreen
from textual.widget import Widget
from textual.widgets import DataTable

from lesson_credit.tui.textual_private import after_shown, refresh_scrollbars
from lesson_credit.tui.widgets.credit_panel import CreditPanel
from lesson_credit.tui.widths import detail_heights

PLOT_LEAST = 8  # the plot's least height (its stylesheet's min-height)
PLOT_IN_VIEW = 10  # 80x24: the rows under "why this credit" that the plot takes in view (four rows of curves)


class SidePane(Vertical):
    """Holds #credits, #credit-box and #credit-plot beside #journal in #detail-body. `fit` sets the credit box's
    most rows (and below 100 columns the journal's height) once laid out; its screen calls it when the table's
    rows or the story change, and the pane when its own size does (a relayout between two measures left the box
    fitted to a pane a row shorter, or its bottom below the pane's and the grade bar's top)."""

    _plot_sized = False  # the plot's height set for 80x24 (`_fit_short`)
    plot_shown = False  # `x` (where the pane scrolls, below 100 columns): kept scrolled to the plot, redrawn or not

    def on_resize(self, _event: events.Resize) -> None:
        after_shown(self, self.fit)
        self._offer_x()

    def _offer_x(self) -> None:
        """`x` is offered while the pane has something to scroll to (the screen's check_action)."""
        if self.is_attached:  # (not once taken off its screen)
            self.screen.refresh_bindings()

    def watch_virtual_size(self) -> None:
        """Its content grew or shrank (a draft's preview, another lesson's story): the plot kept in view where `x`
        showed it, and `x` offered or not."""
        if self.plot_shown:
            self._scroll()
        self._offer_x()

    def on_descendant_focus(self, _event: events.DescendantFocus) -> None:
        self.plot_shown = False  # `tab` to "why this credit" scrolls to it: the plot no longer held in view

    def plot_in_view(self) -> bool:
        """Every row of the plot is in the pane's view (scrolled to it, or under the box where it fits)."""
        plot = self.query_one("#credit-plot").virtual_region
        top = self.scroll_offset.y
        return bool(plot.height) and top <= plot.y and plot.bottom <= top + self.scrollable_content_region.height

    def show_plot(self, shown: bool) -> None:
        """`x`: the pane scrolled to the plot (its title, the lesson, at the pane's top), or back to the credits."""
        self.plot_shown = shown
        self._scroll()

    def _scroll(self) -> None:
        plot = next(iter(self.query("#credit-plot")), None)  # (none: taken down part by part)
        if plot is not None:
            self.scroll_to(y=plot.virtual_region.y if self.plot_shown else 0, animate=False, immediate=True)

    def fit(self) -> None:
        """Shows "why this credit" whole under the credit rows, else its box cut (closed: it scrolls and its more-lines
        mark says so); below 100 columns from SHORT_BELOW rows the journal gives up to two lines for it first.
        At 80x24 the stylesheet's heights hold (tui/widths.py short_detail_heights). From 100 columns the plot
        under the box is drawn only where its rows are all in the pane (else it is hidden: cut, it lost its
        axis and legend from the bottom up, at 100x28 all but its title); below 100 the pane scrolls to it."""
        if not self.is_mounted:
            return
        try:
            self._fit()
        except (NoMatches, NoScreen):  # taken down part by part (its screen dismissed as it opened: `enter escape`
            return  # typed fast), or the pane itself off its screen before its queued fit ran

    def _fit(self) -> None:
        screen, plot = self.screen, self.query_one("#credit-plot")
        if (narrow := screen.has_class("-narrow")) and screen.has_class("-short"):
            plot.styles.visibility = "visible"
            self._fit_short(plot)
            return
        if self._plot_sized:  # (from 80x24: the stylesheet's height again)
            plot.styles.height = None
            self._plot_sized = False
        body, table = screen.query_one("#detail-body"), self.query_one("#credits", DataTable)
        refresh_scrollbars(table)  # (a stale sideways scrollbar from a wider layout takes a row: from 99 to 100)
        box = self.query_one("#credit-box", CreditPanel)
        story = story_rows(box)
        journal, box_most = detail_heights(body.size.height, table.outer_size.height, story, narrow)
        if body.size.height and table.outer_size.height:
            screen.query_one("#journal").styles.height = journal
            box.styles.max_height = box_most
            most = box.styles.max_height  # (None set: the stylesheet's)
            room = body.size.height - table.outer_size.height - min(story, int(most.value) if most else story)
            least = plot.styles.min_height
            whole = narrow or room >= (int(least.value) if least else 1)
            plot.styles.visibility = "visible" if whole else "hidden"

    def _fit_short(self, plot: Widget) -> None:
        """80x24: the plot whole in the rows under "why this credit" where they hold four rows of curves, else as
        tall as the pane, below them where the pane scrolls (it was a row taller: its title, the lesson, always
        out of view), their rows then the journal's: a first row or two of the plot under the box read as a flat
        curve (a session of two lessons and no record)."""
        pane = self.scrollable_content_region.height
        table, box = self.query_one("#credits"), self.query_one("#credit-box")
        if not pane or not table.outer_size.height:
            return
        left = pane - table.outer_size.height - box.outer_size.height
        plot.styles.height = left if left >= PLOT_IN_VIEW else max(pane, PLOT_LEAST)
        self._plot_sized = True
        if 0 < left < PLOT_IN_VIEW:
            journal = self.screen.query_one("#journal")
            journal.styles.height = journal.outer_size.height + left


def story_rows(box: CreditPanel) -> int:
    """The rows "why this credit" needs in `box`, its borders in: its story's lines as they are now (set and
    not laid out yet), wrapped to the box's width."""
    text = box.query_one(f"#{box.text_id}")
    inner = box.scrollable_content_region.width - text.styles.gutter.width
    lines = text.get_content_height(box.size, box.screen.size, inner)
    return lines + text.styles.gutter.height + box.styles.gutter.height
