"""Analysis: every lesson's headline effect (core.analysis.estimates' rule: randomized with enough
kept and withheld sessions, else the joint estimate; the same as `loo` and loo-results.json) first,
then the leave-one-out lifts (naive, by category, propensity-weighted) as a second opinion.

Computing the table writes nothing; only the write key saves loo-results.json.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Static

from lesson_credit.core.api import (
    AGAINST_AVERAGE_MARK,
    LooResult,
    against_average_line,
    marks_against_average,
    nothing_line,
)
from lesson_credit.tui.loo_text import (
    LATER_MARK,
    RANDOMIZED_MARK,
    describe,
    headline_interval,
    headline_text,
    lift,
    p_text,
    short_flags,
    span,
)
from lesson_credit.tui.screens.base import screen_css
from lesson_credit.tui.screens.sortable import SortableScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.source_views import AnalysisView
from lesson_credit.tui.text import counted, lesson_name_text, one_line, spaced
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.phrase_text import PhraseText
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import NARROW_BELOW

# column key -> (header, value to sort by; None sorts last whichever the direction)
SORTS: dict[str, tuple[str, Callable[[LooResult], Any]]] = {
    "lesson": ("lesson", lambda r: r.path),
    # headlines that claim an interval, by estimate; the rest sort last (the `loo` table's order)
    "effect": ("effect", lambda r: r.effect.estimate if r.effect is not None and r.effect.claims else None),
    "ci": ("95% CI", lambda r: None if headline_interval(r)[0] is None else headline_interval(r)),
    "p_bh": ("p (BH)", lambda r: None if r.effect is None else r.effect.p_adjusted),
    "with": ("with", lambda r: r.n_with),
    "without": ("without", lambda r: r.n_without),
    "delta": ("naive Δ", lambda r: r.delta),
    "category": ("by cat", lambda r: r.delta_category),
    "ipw": ("IPW", lambda r: r.delta_ipw),
    "flags": ("flags", lambda r: len(short_flags(r))),
}
RIGHT = ("effect", "ci", "p_bh", "with", "without", "delta", "category", "ipw")  # columns of numbers


def has_estimate(result: LooResult) -> bool:
    """A row whose headline claims an interval or with a leave-one-out lift; the rest are dimmed and
    sorted last, as in the `loo` table (core.analysis.estimates.order_key)."""
    return (result.effect is not None and result.effect.claims) or result.sufficient


def sorted_results(results: tuple[LooResult, ...], column: str, reverse: bool) -> list[LooResult]:
    """Rows with an effect estimate first, then the dimmed rest; within each, by the column (equal values in id
    order), missing values last."""
    key = SORTS[column][1]
    out: list[LooResult] = []
    for sufficient in (True, False):
        group = [r for r in results if has_estimate(r) == sufficient]
        present = [r for r in group if key(r) is not None]
        missing = [r for r in group if key(r) is None]
        by_id = sorted(present, key=lambda r: r.path)  # equal values stay in id order either way, as `loo` lists them
        out += sorted(by_id, key=key, reverse=reverse)
        out += sorted(missing, key=lambda r: r.path)
    return out


def summary(view: AnalysisView, narrow: bool = False) -> Text:
    """Two lines: the counts, then what the marks of the effect column say. `narrow` (below 100 columns): each fits
    a line of 80 (the counts wrapped, and pushed the marks' line off the summary's two rows)."""
    enough = sum(1 for r in view.results if r.sufficient)
    flagged = sum(1 for r in view.results if r.flags())  # the lessons `loo` lists under flags:
    warned = sum(1 for r in view.results if r.confounded)  # of those, the ⚠ rows: a comparison to distrust
    out = Text()
    if narrow:  # (the thresholds are in each lesson's reason in the panel)
        out.append(counted(view.graded, "graded session"), style="bold")
        out.append(f" · {enough} of {counted(len(view.results), 'lesson')} with enough for LOO")
    else:
        out.append(f"Effect per lesson over {counted(view.graded, 'graded session')}", style="bold")
        out.append(f" · {enough} of {counted(len(view.results), 'lesson')} with enough data for LOO")
        out.append(f" (at least {counted(view.min_with, 'session')} with, {view.min_without} without)")
    out.append(f" · {flagged} flagged" + (f" ({warned} ⚠)" if warned else ""), style="bold" if warned else "")
    if narrow:
        legend = (
            f"\neffect: joint, {RANDOMIZED_MARK} randomized, {LATER_MARK} later half, (…) claims nothing · ?: columns"
        )
    else:
        legend = (
            f"\neffect: joint estimate, {RANDOMIZED_MARK} randomized (dropout), {LATER_MARK} later half (drifted),"
            " (…) claims nothing · naive Δ: with − without · by cat · IPW"  # (ctrl+s: in the footer)
        )
    out.append(legend, style="dim")
    return out


def empty_line(view: AnalysisView) -> str | None:
    """What fills the table, when nothing can: no session logged, or none graded (None: there are graded ones)."""
    if not view.sessions:
        return (
            "No session is logged yet: each lesson's effect shows here once sessions are recorded (lesson-credit "
            "record --session-id ID --journal JOURNAL.md --lessons LESSON_ID ...) and graded."
        )
    if not view.graded:
        return (
            "No session is graded yet: the effects compare the rewards of graded sessions (grade one here: s, "
            "enter on a session, 0-9 then c; or record sessions with --reward)."
        )
    if not view.results:
        return (
            f"No lesson was injected in the {counted(view.graded, 'graded session')}: each lesson's effect shows "
            "here once sessions that had it (recorded with --lessons) are graded."
        )
    return None


def more_columns(left: list[str], right: list[str]) -> str:
    """The panel's top edge where columns are out of view: `more columns → naive Δ, cat, IPW, flags`, then
    `← effect ...` once scrolled (the keys are the arrows it names)."""
    parts = [f"← {', '.join(left)}"] * bool(left) + [f"→ {', '.join(right)}"] * bool(right)
    return "more columns " + " · ".join(parts)


NARROW_FLAGS = 30  # below 100 columns a row's flags are cut to this many cells (the panel gives them whole)
TABLE_KEEPS = 2  # rows: the table's header and the highlighted row, under the panel shown all


class AnalysisScreen(SortableScreen):
    """The LOO table; enter opens a lesson's reward distributions with and without it."""

    # keys typed before its first load (enter, a cursor move) wait for it (tui/keys.py)
    HOLDS_KEYS_UNTIL_LOADED = True
    LESSON_IN_VIEW = "highlighted"

    AUTO_FOCUS = "#loo-table"
    DEFAULT_CSS = screen_css("analysis.tcss")
    HELP = (
        "Effect: each lesson's change in reward per injection, the headline `loo` prints (not the Lessons "
        "screen's ranking, a shrunk estimate to rank by, whose sign can differ): randomized kept-minus-"
        "withheld (ʳ) when the dropout logs have 20 kept and 20 withheld sessions and it is at least as "
        "precise, else one regression over every lesson with category baselines (ˡ: its later half, the "
        "effect drifted). In parentheses: nothing claimed (too little data, or always injected with other "
        "lessons: see the panel). Then the leave-one-out lifts: mean reward with minus without, within "
        "categories, propensity-weighted. Rows without an estimate are dimmed and sorted last; when no "
        "lesson's effect is distinguishable from zero, a line under the summary says so, as `loo` does. On a "
        "24-row terminal the panel shows its first two lines: x shows all of it."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_rewards", "Distributions", priority=True),
        Binding("o", "cycle_sort", "Sort by next column", show=False),
        Binding("r", "reverse_sort", "Reverse order", show=False),
        Binding("ctrl+s", "write", "Write loo-results.json"),
        Binding("x", "toggle_expand", "Show / fold the panel"),  # in the footer where it folds (check_action)
        # priority: the table's own move one cell sideways; these a column, the lesson names staying (MORE_COLUMNS)
        Binding("right", "scroll_columns(1)", "Next column out of view", show=False, priority=True),
        Binding("left", "scroll_columns(-1)", "Previous column out of view", show=False, priority=True),
    ]
    SORT_COLUMNS = SORTS
    # a first choice sorts lesson and p (BH) smallest first, the rest largest first
    DESCENDING_FIRST = tuple(key for key in SORTS if key not in ("lesson", "p_bh"))
    NARROW_HEADERS = {"p_bh": "p BH", "without": "w/o", "category": "cat"}  # 80 columns: one word a header

    class Loaded(Message):
        def __init__(self, view: AnalysisView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, source: WorkspaceSource) -> None:
        super().__init__(source, sort_column="effect")
        self.view: AnalysisView | None = None
        self.highlighted: str | None = None
        self.shown: list[str] = []  # lesson ids in table order

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="analysis-summary")
        # `loo`'s lines above its table (no lesson's effect distinguishable from zero; effects against the average
        # lesson's); hidden when it has none
        yield Static(id="analysis-caveat")
        yield ThemedTable(id="loo-table", cursor_type="row", zebra_stripes=True, cell_padding=0)
        yield PhraseText(id="loo-detail")  # laid out at its width: an interval is never cut across lines
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "Analysis"
        self.sub_title = self.source.name
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._rebuild())
        table = self.query_one("#loo-table", ThemedTable)
        table.focus()
        self.busy(table, delay=0)
        self.watch(table, "scroll_x", lambda _x: self._show_more_columns(), init=False)

    # ---------------------------------------------------------------- workers

    def reload(self) -> None:
        self.busy(self.query_one("#loo-table", ThemedTable))
        self._load(write=False)

    @work(thread=True, exclusive=True, group="analysis")
    def _load(self, write: bool) -> None:
        self.post_result(lambda: self.source.analysis(write=write), self.Loaded)

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        self.view = event.view
        self.done(self.query_one("#loo-table", ThemedTable))
        view = event.view
        empty = empty_line(view)
        effects = [r.effect for r in view.results]
        lines = [empty] if empty else [nothing_line(effects), against_average_line(effects)]
        said = "\n".join(line for line in lines if line)
        caveat = self.query_one("#analysis-caveat", Static)
        caveat.update(Text(said))
        caveat.display = bool(said)
        self._rebuild()
        self.call_after_refresh(self._fit_panel)
        if event.view.written is not None:
            self.notify(f"Wrote {one_line(event.view.written)}.", markup=False)
        self.refresh_bindings()
        self.ready_for_keys()

    # ---------------------------------------------------------------- table

    def _rebuild(self) -> None:
        if self.view is None or not self.is_mounted:
            return
        narrow = self.size.width < NARROW_BELOW
        self.query_one("#analysis-summary", Static).update(summary(self.view, narrow))
        table = self.query_one("#loo-table", ThemedTable)
        rows = sorted_results(self.view.results, self.sort_column, self.sort_reverse)
        marked = marks_against_average([r.effect for r in rows])  # (the caveat's line names the mark)
        keep = table.row_to_keep(self.highlighted)
        table.clear(columns=True)
        for key, label in self.sort_headers():
            # one space before each cell instead of padding on both sides: ten columns fit in 120 cells
            table.add_column(Text(" " + label, justify="right" if key in RIGHT else "left"), key=key)
        for result in rows:
            table.add_row(*[spaced(cell) for cell in self._cells(table, result, marked)], key=result.path)
        self.shown = [r.path for r in rows]
        self.highlighted = table.restore_cursor(self.shown, keep) or self.highlighted  # told now: `enter` reads it
        self._fit_lesson_column()
        self._show_highlighted()
        self.call_after_refresh(self._show_more_columns)

    def _fit_lesson_column(self) -> None:
        """No column cut in part at the table's right edge ("n" for naive Δ at 80 columns), and the
        columns to w/o (and the sort column) in sight, the names cut if need be (the panel shows the id)."""
        order = list(SORTS)
        self.query_one("#loo-table", ThemedTable).fit_name_column(
            max(order.index("without"), order.index(self.sort_column))
        )

    def _show_more_columns(self) -> None:
        """Where the table is wider than the screen (80 columns: naive Δ, cat, IPW and flags to the right), the
        lesson names stay in place (a fixed column) and the panel's top edge names the columns out of view and the
        keys that bring them: the sideways scrollbar alone said so before."""
        if not self.is_mounted:
            return
        table = self.query_one("#loo-table", ThemedTable)
        wider = table.virtual_size.width > table.scrollable_content_region.width > 0
        if table.fixed_columns != int(wider):
            table.fixed_columns = int(wider)
        left, right = table.columns_out_of_view() if wider else ([], [])
        names = [column.label.plain.strip(" ▼▲") for column in table.ordered_columns]  # (the sort mark apart)
        panel = self.query_one("#loo-detail", PhraseText)
        said = more_columns([names[i] for i in left], [names[i] for i in right]) if left or right else None
        panel.border_title = None if said is None else Text(said)

    def on_themed_table_resized(self, message: ThemedTable.Resized) -> None:
        if message.table.id == "loo-table":
            self._fit_lesson_column()
            self.call_after_refresh(self._show_more_columns)
            if message.table.row_count:  # (a taller panel, the next lesson's shown all, leaves the table fewer
                message.table.move_cursor(row=message.table.cursor_row, animate=False)  # rows: back into view)

    def _cells(self, table: ThemedTable, result: LooResult, marked: bool = False) -> list[Text]:
        """`marked`: a row against the average says so first among its flags (`marks_against_average`)."""
        narrow = self.size.width < NARROW_BELOW
        dim = table.tone("muted") if not has_estimate(result) else ""

        def number(value: str) -> Text:
            return Text(value, style=dim, justify="right")

        against = marked and result.effect is not None and result.effect.against_average
        flags = " · ".join([AGAINST_AVERAGE_MARK] * against + [one_line(f) for f in short_flags(result)])
        if result.confounded:
            flags_cell = table.toned("⚠ " + flags, "warning")
        else:
            flags_cell = Text(flags, style=dim, end="")
        if narrow:  # beside the lesson names, which stay when the table scrolls sideways: the panel has them whole
            flags_cell.truncate(NARROW_FLAGS, overflow="ellipsis")
        return [
            lesson_name_text(result.path.removesuffix(".md"), dim),  # its folders, then its middle, give way
            number(headline_text(result)),
            number(span(*headline_interval(result))),
            number(p_text(None if result.effect is None else result.effect.p_adjusted)),
            number(str(result.n_with)),
            number(str(result.n_without)),
            number(lift(result.delta)),
            number(lift(result.delta_category)),
            number(lift(result.delta_ipw)),
            flags_cell,
        ]

    def _show_highlighted(self) -> None:
        result = self.view.result(self.highlighted) if self.view and self.highlighted else None
        hint = "enter: its reward distributions"
        self.query_one("#loo-detail", PhraseText).show(lambda width: describe(result, hint, width))

    @on(DataTable.RowHighlighted, "#loo-table")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return  # an empty table (filtered to nothing, or nothing yet)
        self.highlighted = event.row_key.value
        self._show_highlighted()

    @on(DataTable.RowSelected, "#loo-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key is None or event.row_key.value is None:
            return  # an empty table (filtered to nothing, or nothing yet)
        self.highlighted = event.row_key.value
        self.action_open_rewards()

    # ---------------------------------------------------------------- actions

    def action_open_rewards(self) -> None:
        from lesson_credit.tui.screens.lesson_rewards import LessonRewardsScreen

        if self.view is None or self.highlighted not in self.shown or self.highlighted is None:
            return
        self.app.push_screen(LessonRewardsScreen(self.source, self.highlighted))

    def action_scroll_columns(self, step: int) -> None:
        """right / left: the next column out of view, whole (the table's own keys moved it a cell a key)."""
        self.query_one("#loo-table", ThemedTable).scroll_to_column(step)

    def action_toggle_expand(self) -> None:
        """x: on a 24-row terminal the panel under the table shows its first two lines; x shows it all."""
        self.toggle_class("-expanded")
        self.call_after_refresh(self._fit_panel)

    def resized(self, rebuild: bool) -> None:
        super().resized(rebuild)
        self.call_after_refresh(self._fit_panel)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return action != "toggle_expand" or self.has_class("-short")  # the panel folds on a short terminal only

    def _fit_panel(self) -> None:
        """The panel shown all (x, on a short terminal): every line of it, up to what leaves the table its
        header and a row, the highlighted one (past that the panel scrolls). It was capped at 12 rows, and a
        lesson's last lines (its warnings) were cut."""
        panel = self.query_one("#loo-detail", PhraseText)
        if not (self.has_class("-short") and self.has_class("-expanded")):
            panel.styles.max_height = None
            return
        others = (TitleBar, "#analysis-summary", "#analysis-caveat", KeyFooter)
        taken = sum(w.outer_size.height for w in (self.query_one(o) for o in others) if w.display)
        panel.styles.max_height = max(3, self.size.height - taken - TABLE_KEEPS)
        table = self.query_one("#loo-table", ThemedTable)
        self.call_after_refresh(lambda: table.move_cursor(row=table.cursor_row, animate=False))

    def action_write(self) -> None:
        self.busy(self.query_one("#loo-table", ThemedTable))
        self._load(write=True)
