"""Simulation: run a named scenario of the ground-truth simulator and compare the estimators.

The simulator is pure CPU work (about a second per seed for the default scenario), so it runs
in a thread worker; its progress callback posts messages and is where a cancel takes effect.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import fields
from typing import ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.validation import Number
from textual.widgets import DataTable, Input, Label, ProgressBar, Select, Static
from textual.worker import get_current_worker

from lesson_credit.core.api import METRICS, SCENARIOS, EstimatorSummary, MetricSummary, Scenario, SimulationReport
from lesson_credit.tui.messages import WorkFailed
from lesson_credit.tui.screens.base import describe_failure, screen_css
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import Phrase, counted, phrase_lines
from lesson_credit.tui.widgets.filter_box import LEAVE_BY_TAB, TextBox
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.phrase_text import PhraseText
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import NARROW_BELOW, SHORT_BELOW

DEFAULT_SEEDS = 5
MAX_SEEDS = 500
BEST_MARK = "★ "  # before the number: a right-aligned cell drops trailing spaces, so a mark after it shifted it

# metric -> (column header, digits of the mean and sd, lower is better)
METRIC_COLUMNS: dict[str, tuple[str, int, bool]] = {
    "spearman": ("spearman ρ", 3, False),
    "precision_at_10": ("precision@10", 2, False),
    "harmful_detection": ("harmful in bottom 10%", 2, False),
    "regret": ("cumulative regret", 0, True),
}
# below 100 columns every metric is in view: the headers short, a cell its mean and sd only
NARROW_HEADERS = {"precision_at_10": "prec@10", "harmful_detection": "harmful", "regret": "regret"}
LEGEND = (
    "mean ±sd [p10, p90] across seeds · ★ best per metric among the estimators (random and oracle are "
    "references, never marked) · regret: lower is better"
)
ONE_SEED = "one seed's values (no spread)"  # a run of one seed (or cancelled after its first): each cell its value
ONE_SEED_LEGEND = ONE_SEED + LEGEND.removeprefix("mean ±sd [p10, p90] across seeds")
NARROW_LEGEND = (
    "mean ±sd across seeds",
    "★ best among estimators",
    "random, oracle: references",
    "harmful: share of harmful ones ranked bottom 10%",  # ("in the bottom 10%" said not of what, nor a share)
    "regret: lower is better",  # (the `?` screen's Simulation columns say each metric whole)
)


class SimulationCancelled(Exception):
    """Raised from the progress callback to stop a run the operator cancelled."""


def kind_and_description(kind: str, description: str) -> str:
    """The estimator's kind in parentheses, then its description, the kind said once: a description whose
    first words (to its first ": " or ", ") start with the kind gives them as the kind ("(reference
    selection): k candidates ...", not "(reference): reference selection: k candidates ...")."""
    cuts = [i for i in (description.find(": "), description.find(", ")) if i >= 0]
    head = description[: min(cuts)] if cuts else ""
    if head == kind or head.startswith(kind + " "):
        return f"({head}): {description[len(head) + 2 :]}"
    return f"({kind}): {description}"


def metric_cell(summary: MetricSummary | None, digits: int, spread: bool = True) -> str:
    """mean ±sd [p10, p90]; without `spread`, mean ±sd. One seed has no spread to show: its value alone."""
    if summary is None or not summary.n or not math.isfinite(summary.mean):
        return "—"
    if summary.n == 1:
        return f"{summary.mean:.{digits}f}"
    cell = f"{summary.mean:.{digits}f} ±{summary.std:.{digits}f}"
    return f"{cell} [{summary.p10:.{min(digits, 2)}f}, {summary.p90:.{min(digits, 2)}f}]" if spread else cell


OPERATORS = frozenset({"+=", "-=", "=", "+", "-", "*", "/"})


def formula_phrases(text: str) -> list[str]:
    """`text`'s words as phrases to lay out, a formula's kept together: an operator standing alone
    ("alpha += base*w", "1 - base*w") binds the words on both sides of it."""
    phrases: list[str] = []
    for word in text.split(" "):
        if phrases and (word in OPERATORS or phrases[-1].rsplit(" ", 1)[-1] in OPERATORS):
            phrases[-1] += " " + word
        else:
            phrases.append(word)
    return phrases


def best_estimators(report: SimulationReport) -> dict[str, set[str]]:
    """Per metric, the estimators (references excluded) with the best mean; ties all count."""
    best: dict[str, set[str]] = {}
    for metric in METRICS:
        lower = METRIC_COLUMNS[metric][2]
        scored = [
            (s.name, m.mean)
            for s in report.estimators
            if s.kind != "reference" and (m := s.metric(metric)) is not None and m.n and math.isfinite(m.mean)
        ]
        if not scored:
            best[metric] = set()
            continue
        target = min(v for _, v in scored) if lower else max(v for _, v in scored)
        best[metric] = {name for name, v in scored if abs(v - target) <= 1e-12}
    return best


def scenario_text(sc: Scenario, width: int = 0) -> Text:
    """The scenario's size and what it changes from the default world, in lines of `width` cells (0: as
    long as they come) broken between phrases."""
    default = Scenario()
    changed = [
        f"{f.name} {value:g}" if isinstance(value := getattr(sc, f.name), float) else f"{f.name} {value!r}"
        for f in fields(Scenario)
        if f.name != "name" and getattr(sc, f.name) != getattr(default, f.name)
    ]
    world = [
        counted(sc.n_lessons, "lesson"),
        counted(sc.n_sessions, "session"),
        f"k {sc.k}",
        f"floor {sc.floor:g}",
        f"noise {sc.noise:g}",
        f"{'keyword breadth' if width <= 0 or width >= NARROW_BELOW - 2 else 'breadth'} {sc.keyword_breadth:g}",
    ]
    how = [
        Text("changes from default: " + ", ".join(changed) if changed else "the default world", style="dim"),
        Text("log-based estimates on every strategy's log", style="dim"),
    ]
    return phrase_lines([[Text(p) for p in world], how], width)


def report_title(report: SimulationReport) -> str:
    seeds = report.seeds
    span = f"seed {seeds[0]}" if len(seeds) == 1 else f"seeds {seeds[0]}–{seeds[-1]}"
    return f"scenario {report.scenario.name} · {span} · ceiling {report.ceiling_mean:.3f}"


class SimulationScreen(Screen[None]):
    """Pick a scenario and a number of seeds; ctrl+r runs it in a worker, escape cancels."""

    AUTO_FOCUS = "#sim-table"
    DEFAULT_CSS = screen_css("simulation.tcss")
    HELP = (
        "Simulate worlds whose true lesson effects are known and score every estimator against them. "
        "Same scenario and seeds, same numbers. Nothing touches the workspace."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "run", "Run"),
        Binding("escape", "cancel", "Cancel run"),
    ]

    class Progressed(Message):
        def __init__(self, run: int, done: int, total: int, report: SimulationReport | None = None) -> None:
            super().__init__()
            self.run = run
            self.done = done
            self.total = total
            self.report = report  # the seeds done so far

    class Finished(Message):
        def __init__(self, run: int, report: SimulationReport) -> None:
            super().__init__()
            self.run = run
            self.report = report

    class Stopped(Message):
        """The run ended without a report: cancelled, or it failed (`reason`)."""

        def __init__(self, run: int, done: int, total: int, reason: str | None = None) -> None:
            super().__init__()
            self.run = run
            self.done = done
            self.total = total
            self.reason = reason

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__()
        self.source = source
        self.report: SimulationReport | None = None
        self.running: int | None = None  # the id of the run in progress
        self.running_name = ""  # its scenario (the Select may change while it runs)
        self.cancelling = False
        self.runs = 0
        self.highlighted: str | None = None
        self.compact_cells = False  # the table's short headers and cells in view (`_compact`)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="sim-controls"):
            yield Label("scenario")
            yield Select([(name, name) for name in SCENARIOS], value="default", allow_blank=False, id="scenario")
            yield Label("seeds")
            yield TextBox(  # (escape cancels a run, from the box too: the screen's key, in the footer)
                str(DEFAULT_SEEDS),
                footer_keys=(("enter", "Run"), ("escape", "Back"), *LEAVE_BY_TAB),
                type="integer",
                validators=[Number(minimum=1, maximum=MAX_SEEDS)],
                id="seeds",
            )
            yield Static(id="sim-status")
        yield Static(id="scenario-info")
        yield ProgressBar(total=1, show_eta=False, id="sim-progress")
        yield Static(id="report-title")
        # the estimator stays at the left when the metrics scroll (at 80 columns the last is past the edge)
        yield ThemedTable(id="sim-table", cursor_type="row", zebra_stripes=True, fixed_columns=1)
        yield Static(id="sim-legend")
        yield PhraseText(id="estimator-info")  # laid out at its width: a formula is never cut across lines
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "Simulation"
        self.sub_title = self.source.name
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._show_report())
        self._show_scenario()
        self._set_status(Text("ctrl+r runs the scenario · escape cancels a run", style="dim"))
        self._show_report()

    # ---------------------------------------------------------------- state shown

    def scenario_name(self) -> str:
        value = self.query_one("#scenario", Select).value
        return value if isinstance(value, str) else "default"

    @property
    def narrow(self) -> bool:
        return self.size.width < NARROW_BELOW

    def on_resize(self) -> None:
        """Below 100 columns the short headers and legend (every metric in view), below 32 rows no progress
        bar (the status says how far a run is) and no blank lines: the estimators, the legend and the
        highlighted one's detail all in view at 80x24."""
        self.set_class(self.narrow, "-narrow")
        self.set_class(self.size.height < SHORT_BELOW, "-short")
        self._show_scenario()
        if self._compact() != self.compact_cells:  # the cells' form goes with the width
            self._show_report()

    def _show_scenario(self) -> None:
        width = self.size.width - 2  # (the padding)
        self.query_one("#scenario-info", Static).update(scenario_text(SCENARIOS[self.scenario_name()], width))

    def _set_status(self, text: Text | str) -> None:
        self.query_one("#sim-status", Static).update(text)

    def _no_report_title(self) -> Text:
        if self.running is not None and self.cancelling:
            return Text("No results yet: the first run stops after the seed being simulated.", style="italic")
        if self.running is not None:
            return Text("No results yet: the first run is going (escape cancels it).", style="italic")
        return Text("No run yet: pick a scenario and the number of seeds, then press ctrl+r.", style="italic")

    def _show_report(self) -> None:
        table = self.query_one("#sim-table", ThemedTable)
        title = self.query_one("#report-title", Static)
        report = self.report
        narrow = self.compact_cells = self._compact()
        one = report is not None and len(report.seeds) == 1
        phrases = [ONE_SEED, *NARROW_LEGEND[1:]] if one else NARROW_LEGEND
        wide = ONE_SEED_LEGEND if one else LEGEND
        legend = phrase_lines([[Text(p) for p in phrases]], self.size.width - 2) if narrow else Text(wide)
        self.query_one("#sim-legend", Static).update(legend)
        keep = table.row_to_keep(self.highlighted)  # the row a key moved to, maybe not reported yet
        table.clear(columns=True)
        table.add_column("estimator", key="estimator")
        for metric, (header, _, _) in METRIC_COLUMNS.items():
            header = NARROW_HEADERS.get(metric, header) if narrow else header
            table.add_column(Text(header, justify="right"), key=metric)
        if report is None:
            table.fit_name_column(len(METRIC_COLUMNS))  # the headers whole or at the edge
            title.update(self._no_report_title())
            self._show_estimator()
            return
        title.update(Text(report_title(report), style="bold"))
        best = best_estimators(report)
        for summary in report.estimators:
            table.add_row(*self._cells(table, summary, best), key=summary.name)
        table.fit_name_column(len(METRIC_COLUMNS))  # no metric cut in part at the edge
        names = [s.name for s in report.estimators]
        # told now: the detail below is the row's, not the one before a key's move
        self.highlighted = table.restore_cursor(names, keep) or self.highlighted
        self._show_estimator()

    def _compact(self) -> bool:
        """The short headers and cells (mean ±sd, no [p10, p90]) below 100 columns, and wherever the full ones
        would put a metric past the table's edge: at 100x30 `cumulative regret` was out of view."""
        if self.narrow:
            return True
        report = self.report
        if report is None:
            return False
        table = self.query_one("#sim-table", ThemedTable)
        padding = 2 * table.cell_padding
        needed = padding + max(len("estimator"), *(len(s.name) for s in report.estimators))
        best = best_estimators(report)
        for metric, (header, digits, _) in METRIC_COLUMNS.items():
            marks = {s.name: len(BEST_MARK) if s.name in best[metric] else 0 for s in report.estimators}
            cells = [len(metric_cell(s.metric(metric), digits)) + marks[s.name] for s in report.estimators]
            needed += padding + max(len(header), *cells)
        # the table spans the screen; a scrollbar beside the rows only when they pass its highest
        limit = table.styles.max_height
        if limit is not None and len(report.estimators) + table.header_height > limit.value:
            needed += table.styles.scrollbar_size_vertical
        return needed > self.size.width

    def _cells(self, table: ThemedTable, summary: EstimatorSummary, best: dict[str, set[str]]) -> list[Text]:
        reference = summary.kind == "reference"
        cells = [table.toned(summary.name, "muted" if reference else None)]
        for metric, (_, digits, _) in METRIC_COLUMNS.items():
            value = metric_cell(summary.metric(metric), digits, spread=not self.compact_cells)
            if summary.name in best[metric]:  # the mark first: every number ends at the column's right edge
                cells.append(Text(BEST_MARK + value, style=table.tone("accent"), justify="right"))
            else:
                cells.append(Text(value, style=table.tone("muted") if reference else "", justify="right"))
        return cells

    def _show_estimator(self) -> None:
        info = self.query_one("#estimator-info", PhraseText)
        report = self.report
        summary = None
        if report is not None and self.highlighted is not None:
            with contextlib.suppress(KeyError):
                summary = report.estimator(self.highlighted)
        if report is None or summary is None:
            info.show(lambda _width: Text(""))
            return
        words = formula_phrases(kind_and_description(summary.kind, summary.description))
        paragraphs: list[list[Phrase]] = [[Text(summary.name, style="bold"), *((" ", Text(w)) for w in words)]]
        by_count: dict[int, list[str]] = {}  # metrics defined in fewer seeds than ran, by in how many
        for m in METRICS:
            if (s := summary.metric(m)) is not None and s.n < len(report.seeds):
                by_count.setdefault(s.n, []).append(METRIC_COLUMNS[m][0])
        partial = [
            f"{', '.join(names)} defined in {n} of {counted(len(report.seeds), 'seed')}"
            for n, names in by_count.items()
        ]
        if partial:
            paragraphs.append([("; ", Text(p, style="dim")) for p in partial])
        info.show(lambda width: phrase_lines(paragraphs, width))

    @on(DataTable.RowHighlighted, "#sim-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return  # an empty table (filtered to nothing, or nothing yet)
        self.highlighted = event.row_key.value
        self._show_estimator()

    @on(Select.Changed, "#scenario")
    def _scenario_changed(self) -> None:
        self._show_scenario()

    @on(Input.Submitted, "#seeds")
    def _seeds_submitted(self) -> None:
        self.action_run()

    # ---------------------------------------------------------------- running

    def seeds(self) -> int | None:
        box = self.query_one("#seeds", Input)
        result = box.validate(box.value)
        if result is not None and not result.is_valid:
            return None
        try:
            return int(box.value)
        except ValueError:
            return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel":
            # hidden from the footer while nothing runs, but in the seeds box: there it leaves the box
            return self.running is not None or isinstance(self.focused, Input)
        return True

    def action_run(self) -> None:
        if self.running is not None:
            self.notify("A run is already going: escape cancels it.", severity="warning", markup=False)
            return
        seeds = self.seeds()
        if seeds is None:
            self.notify(f"Seeds must be a whole number from 1 to {MAX_SEEDS}.", severity="error", markup=False)
            return
        name = self.scenario_name()
        self.runs += 1
        self.running = self.runs
        self.running_name = name
        self.cancelling = False
        self.add_class("-ran")  # the progress bar shows from the first run on
        bar = self.query_one("#sim-progress", ProgressBar)
        bar.update(total=seeds, progress=0)
        self._set_status(Text(f"running {name}: 0 of {counted(seeds, 'seed')} · escape cancels", style="bold"))
        if self.report is None:
            self.query_one("#report-title", Static).update(self._no_report_title())
        self.query_one("#sim-table", ThemedTable).focus()
        self.refresh_bindings()
        self._simulate(self.running, name, seeds)

    def action_cancel(self) -> None:
        if self.running is None or self.cancelling:
            if isinstance(self.focused, Input):  # no run to cancel: escape leaves the seeds box (only tab did)
                self.query_one("#sim-table", ThemedTable).focus()
            return
        self.cancelling = True
        self.workers.cancel_group(self, "simulation")
        self._set_status(Text("cancelling: stops after the seed being simulated", style="bold"))
        if self.report is None:  # (the title said the run was going and escape would cancel it)
            self.query_one("#report-title", Static).update(self._no_report_title())

    @work(thread=True, exclusive=True, group="simulation")
    def _simulate(self, run: int, name: str, seeds: int) -> None:
        worker = get_current_worker()
        reached = 0
        so_far: list[SimulationReport] = []

        def progress(done: int, total: int) -> None:
            # called after each seed (its report so far shown): a cancel stops the run before the next starts
            nonlocal reached
            reached = done
            self.post_message(self.Progressed(run, done, total, so_far.pop() if so_far else None))
            if worker.is_cancelled and done < total:
                raise SimulationCancelled

        try:
            report = self.source.simulate(name, seeds, progress, so_far.append)
        except SimulationCancelled:
            self.post_message(self.Stopped(run, reached, seeds))
            return
        except Exception as exc:  # reported, not raised: a worker must not take the app down
            self.post_message(self.Stopped(run, reached, seeds, describe_failure(exc)))
            return
        self.post_message(self.Finished(run, report))  # every seed ran: worth showing even if cancelled late

    @on(Progressed)
    def _progressed(self, event: Progressed) -> None:
        if event.run != self.running:
            return
        self.query_one("#sim-progress", ProgressBar).update(total=event.total, progress=event.done)
        if event.report is not None and event.done < event.total:  # (the last one comes with Finished)
            self.report = event.report
            self._show_report()
        if not self.cancelling:
            self._set_status(
                Text(
                    f"running {self.running_name}: {event.done} of {counted(event.total, 'seed')} · escape cancels",
                    "bold",
                )
            )

    @on(Finished)
    def _finished(self, event: Finished) -> None:
        if event.run != self.running:
            return
        self.running = None
        self.cancelling = False
        self.report = event.report
        self.query_one("#sim-progress", ProgressBar).update(progress=len(event.report.seeds))
        self._set_status(Text(f"done: {counted(len(event.report.seeds), 'seed')}", style="dim"))
        self.refresh_bindings()
        self._show_report()

    @on(Stopped)
    def _stopped(self, event: Stopped) -> None:
        if event.run != self.running:
            return
        self.running = None
        self.cancelling = False
        self.refresh_bindings()
        if self.report is None:
            self.query_one("#report-title", Static).update(self._no_report_title())
        if event.reason is None:
            kept = "" if event.done else ": no report"  # (else the table is the seeds done, its title says which)
            self._set_status(Text(f"cancelled after {event.done} of {counted(event.total, 'seed')}{kept}", "bold"))
        else:
            self._set_status(Text("failed", style="bold"))
            self.post_message(WorkFailed(event.reason))
