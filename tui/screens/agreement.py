"""Agreement: how far the judge, heuristics and outcome words agree with people (docs/records.md).

The numbers of `lesson-credit agreement` (core.reward_report), overall then per category, and the
highlighted pair's sessions as a scatter plot. + / - move the kappa threshold by 0.05.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from lesson_credit.core.api import DEFAULT_THRESHOLD, HEURISTIC, JUDGE, OUTCOME, Agreement, AgreementReport, fixed
from lesson_credit.tui.records_views import agreement_view
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import counted, one_line, spaced
from lesson_credit.tui.widgets.agreement_plot import AgreementPlot
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import NARROW_BELOW

STEP = 0.05
THRESHOLD = Binding.Group("Threshold")  # the kappa threshold's keys, + and -
COLUMNS = ("category", "reference", "compared", "n", "MAE", "Pearson", "Spearman", "kappa", "tp/fp/fn/tn")
LEFT = ("category", "reference", "compared")  # the other columns are numbers, right-aligned
# below 100 columns: with one space between columns (no cell padding) and `ref`, every column is in view at 80
NARROW_LABELS = {"reference": "ref"}


def number(value: float | None) -> Text:
    return Text("—" if value is None else fixed(value), justify="right")  # (-0.0004: 0.000, no sign)


def two_people(pair: Agreement) -> bool:
    """Whether the pair is a person's grades against another person's (not a judge, heuristic or word)."""
    return pair.source_b not in (JUDGE, HEURISTIC, OUTCOME)


def pair_title(category: str, pair: Agreement) -> Text:
    """The plotted pair, named (plain text: people's names come from the log), its category and count, and
    "two people" for a person's grades against another's ("erik vs manual"). Short enough for an 80-column
    border: with its confusion counts and "a person against the judge source" it was cut there (the counts are
    the highlighted row's last column, in view at every width)."""
    where = "" if category == "all" else f" · {one_line(category)}"
    names = f"{one_line(pair.source_a)} (x) vs {one_line(pair.source_b)} (y)"
    kind = ": two people" if two_people(pair) else ""
    return Text(f"{names}{where} · {counted(pair.n, 'session')}{kind}")


def confusion(pair: Agreement) -> str:
    """`tp/fp/fn/tn` as the table's column and the CLI print them: 19/4/5/4."""
    c = pair.confusion
    return f"{c.tp}/{c.fp}/{c.fn}/{c.tn}"


def pair_cells(category: str, pair: Agreement, narrow: bool) -> list[Text]:
    """The row's cells; `narrow` (below 100 columns), each with one space before it (no cell padding there)."""
    cells = [
        Text(one_line(category), overflow="ellipsis"),
        Text(one_line(pair.source_a)),
        Text(one_line(pair.source_b)) + (Text("*", style="bold") if two_people(pair) else Text("")),
        Text(str(pair.n), justify="right"),
        number(pair.mae),
        number(pair.pearson),
        number(pair.spearman),
        number(pair.kappa),
        Text(confusion(pair), justify="right"),
    ]
    return [spaced(cell) for cell in cells] if narrow else cells


def column_label(label: str, narrow: bool) -> Text:
    """A column's header; `narrow` (below 100 columns), short and with one space before it, as its cells."""
    shown = " " + NARROW_LABELS.get(label, label) if narrow else label
    return Text(shown, justify="left" if label in LEFT else "right")


def rows_of(report: AgreementReport) -> list[tuple[str, str, Agreement]]:
    """(row key, category label, pair): every overall pair, then each category's."""
    rows = [(f"all|{p.source_a}|{p.source_b}", "all", p) for p in report.pairs]
    for category, pairs in report.by_category:
        rows += [(f"{category}|{p.source_a}|{p.source_b}", category or "(none)", p) for p in pairs]
    return rows


class AgreementScreen(DataScreen):
    """People against the other reward sources; the highlighted pair plotted."""

    # keys typed before its first load (enter, a cursor move) wait for it (tui/keys.py)
    HOLDS_KEYS_UNTIL_LOADED = True

    AUTO_FOCUS = "#agreement-table"
    DEFAULT_CSS = screen_css("agreement.tcss")
    HELP = (
        "For the sessions a person graded and another source scored: n, mean absolute difference, Pearson and "
        "Spearman correlation, Cohen's kappa with the confusion counts (the person is the reference; a score at or "
        "above the threshold is positive), overall then per category, and two people against each other. "
        "+ / - move the threshold; the plot shows the highlighted pair's sessions."
    )

    # one footer entry, `+ - Threshold` (at 80 columns each in a word read "+ Threshold+ - Threshold-"); help and
    # the palette name each with its step
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus,equals_sign", f"threshold_step({STEP})", "Threshold +0.05", key_display="+", group=THRESHOLD),
        Binding("minus", f"threshold_step({-STEP})", "Threshold -0.05", key_display="-", group=THRESHOLD),
        Binding("escape", "back", "Back"),
    ]

    class Loaded(Message):
        def __init__(self, report: AgreementReport) -> None:
            super().__init__()
            self.report = report

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__(source)
        self.threshold = DEFAULT_THRESHOLD
        self.report: AgreementReport | None = None
        self.rows: list[tuple[str, str, Agreement]] = []
        self.highlighted: str | None = None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="agreement-summary")
        yield ThemedTable(id="agreement-table", cursor_type="row", zebra_stripes=True)
        yield AgreementPlot(id="agreement-plot")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "Agreement"
        self.sub_title = self.source.name
        self.busy(self.query_one("#agreement-table", ThemedTable), delay=0)

    def reload(self) -> None:
        self._load(self.threshold)

    @work(thread=True, exclusive=True, group="agreement")
    def _load(self, threshold: float) -> None:
        self.post_result(lambda: agreement_view(self.source, threshold), self.Loaded, choice=threshold)

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        if event.report.threshold != self.threshold:
            return  # an older threshold's answer arriving late
        self.report = event.report
        table = self.query_one("#agreement-table", ThemedTable)
        self.done(table)
        self.rows = rows_of(event.report)
        self._show_table()
        self._summary()
        self._plot()
        self.ready_for_keys()

    def _show_table(self) -> None:
        table = self.query_one("#agreement-table", ThemedTable)
        keep = table.row_to_keep(self.highlighted)
        table.clear(columns=True)
        narrow = self.size.width < NARROW_BELOW
        # below 100 columns one space between columns, not two cells of padding: at 80 every column fits
        # (tp/fp/fn/tn was past the edge)
        table.cell_padding = 0 if narrow else 1
        for label in COLUMNS:
            table.add_column(column_label(label, narrow), key=label)
        for key, category, pair in self.rows:
            table.add_row(*pair_cells(category, pair, narrow), key=key)
        # every column in view, the categories cut if need be (a long name); where even that is not enough,
        # tp/fp/fn/tn whole or at the edge, not cut to "tp/fp"
        table.fit_name_column(len(COLUMNS) - 1)
        keys = [key for key, _, _ in self.rows]
        # told now: `enter` typed ahead reads it (a pair no longer listed: the first, as the plot shows)
        self.highlighted = table.restore_cursor(keys, keep) or self.highlighted

    def resized(self, rebuild: bool) -> None:
        if rebuild and self.report is not None:  # the short header (ref) came or went
            self._show_table()

    def _summary(self) -> None:
        out = Text()
        out.append(f"kappa threshold {self.threshold:.2f}", style="bold")
        out.append(" (+/-) · a score at or above it is positive; kappa takes the reference as true", style="dim")
        if self.report is not None and any(two_people(p) for p in self.report.pairs):
            out.append(" · * two people (a person's grades against another's)", style="dim")
        if self.report is not None and not any(p.n for p in self.report.pairs):
            out.append(
                "\nNo session has both a person's grade and another source's score yet: grade sessions by hand "
                "(0-9 in a session) to compare.",
                style="italic",
            )
        self.query_one("#agreement-summary", Static).update(out)

    def _plot(self) -> None:
        plot = self.query_one("#agreement-plot", AgreementPlot)
        plot.threshold = self.threshold
        found = next(((category, pair) for key, category, pair in self.rows if key == self.highlighted), None)
        if found is None and self.rows:
            found = (self.rows[0][1], self.rows[0][2])
        if found is None:
            plot.border_title = None
            plot.pair = None
            return
        category, chosen = found
        plot.border_title = pair_title(category, chosen)
        plot.pair = ((chosen.source_a, chosen.source_b), (tuple(chosen.a.tolist()), tuple(chosen.b.tolist())))

    @on(DataTable.RowHighlighted, "#agreement-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return
        self.highlighted = event.row_key.value
        self._plot()

    def action_threshold_step(self, step: float) -> None:
        """`+`/`-`, a number up or down by a step, as the draft grade is on the Session detail: here the threshold."""
        self.threshold = min(1.0, max(0.0, round(self.threshold + float(step), 4)))
        self._summary()
        self.busy(self.query_one("#agreement-table", ThemedTable))
        self._load(self.threshold)

    def action_back(self) -> None:
        self.dismiss()
