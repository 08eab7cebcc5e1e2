"""Screen 5: re-fold the whole log under another strategy or floor and see what would move; pick
the selection policy `select` uses.

Nothing is written unless the operator saves the settings and confirms.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.validation import Function
from textual.widgets import Input, Label, Select, Static

from lesson_credit.core.api import (
    DEFAULT_PRIORITY,
    HEURISTIC,
    HUMAN,
    JUDGE,
    OUTCOME,
    POLICIES,
    STRATEGIES,
    CreditSettings,
    decimal,
    index_names,
    lesson_labels,
)
from lesson_credit.tui.grading import Grading
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.screens.confirm import ConfirmScreen
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import (
    counted,
    fmt,
    fmt_signed,
    lesson_name_text,
    one_line,
    phrase_lines,
    rank_arrow,
    spaced,
)
from lesson_credit.tui.what_if_view import WhatIfView
from lesson_credit.tui.widgets.filter_box import LEAVE_BY_TAB, TextBox
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import NARROW_BELOW
from lesson_credit.tui.write_state import SettingsSave

FLOOR_STEP = 0.05

# (key, label, label below 100 columns): the numbers first, the lesson last (cut to what they leave), so
# that every column is in view at 80 columns. Below 100 columns the labels are two lines, the same words as the
# one-line ones (at 80 the one-word "from", "what-if", "now" and "Δ" said nothing to a reader new to them), and the
# columns one space apart (no cell padding) for the room the second line takes
COLUMNS = (
    ("rank", "rank", "rank\nwhat-if"),
    ("was", "rank now", "rank\nnow"),
    ("move", "move", "\nmove"),
    ("then", "mean what-if", "mean\nwhat-if"),
    ("now", "mean now", "mean\nnow"),
    ("delta", "Δ mean", "Δ\nmean"),
    ("n", "n", "\nn"),
    ("status", "status", "\nstatus"),
    ("lesson", "lesson", "\nlesson"),
)
LEFT = ("move", "status", "lesson")  # the other columns are numbers, right-aligned


ColumnNames = tuple[dict[str, str], frozenset[str]]  # each lesson's name in the table, and the set of them


def column_names(view: WhatIfView, narrow: bool) -> ColumnNames:
    """Each lesson's name in the table (narrow: its file name, the whole id where file names are alike), and
    the set of them made one line, for the names' cuts."""
    labels = lesson_labels(row.path for row in view.rows) if narrow else {}
    names = {row.path: labels[row.path] if narrow else row.path for row in view.rows}
    return names, frozenset(one_line(name) for name in names.values())


def floor_of(text: str) -> float | None:
    """The floor typed in the box: a plain decimal number from 0 to 1 (not "0_5": core.api.decimal)."""
    value = decimal(text)
    return value if value is not None and 0.0 <= value <= 1.0 else None


def describe(settings: CreditSettings) -> str:
    return SettingsSave(settings, None, None).describe()  # (one wording, the write queue's toasts too)


# the reward priorities `b` goes through: the default, then each automatic source first, people only
PRIORITIES: tuple[tuple[str, ...], ...] = (
    DEFAULT_PRIORITY,
    (JUDGE, HUMAN, HEURISTIC, OUTCOME),
    (HEURISTIC, HUMAN, JUDGE, OUTCOME),
    (OUTCOME, HUMAN, JUDGE, HEURISTIC),
    (HUMAN,),
)


def next_priority(priority: tuple[str, ...]) -> tuple[str, ...]:
    choices = PRIORITIES if priority in PRIORITIES else (priority, *PRIORITIES)
    return choices[(choices.index(priority) + 1) % len(choices)]


def setting(name: str, saved: str, proposed: str) -> Text:
    """One setting: "floor 0.3" as saved, "floor 0.3 → 0.35" when the what-if proposes another value."""
    if saved == proposed:
        return Text(f"{name} {proposed}", style="bold")
    return Text.assemble((f"{name} ", "bold"), f"{saved} → ", (proposed, "bold"))


def summary(view: WhatIfView, policy: str = "", width: int = 0) -> Text:
    """What the what-if settings change, in lines of `width` cells (0: as long as they come) that break
    between phrases, never inside one ("0 lessons up" is not cut after its count); `policy`: the selection
    policy proposed ("": the saved one). Each setting gives its saved value and the proposed one together
    ("strategy seed → evidence"): at 80 columns four lines when every setting changes, not six."""
    policy = policy or view.policy
    saved, proposed = view.current, view.proposed
    settings = [
        Text.assemble(("what-if ", "bold"), setting("strategy", saved.strategy, proposed.strategy)),
        setting("floor", f"{saved.floor:g}", f"{proposed.floor:g}"),
    ]
    if policy:
        settings.append(setting("policy", view.policy, policy))
    priority = setting("rewards by", ">".join(view.current_priority), ">".join(view.proposed_priority))
    settings.append(priority.append(" (b)", style="dim"))
    up = sum(1 for r in view.rows if r.rank_change > 0)
    down = sum(1 for r in view.rows if r.rank_change < 0)
    same = saved == proposed and view.proposed_priority == view.current_priority and policy == view.policy
    moves = [
        Text("same as the saved settings", style="dim")
        if same
        else Text("nothing is written until ctrl+s", style="italic"),
        Text(f"{counted(up, 'lesson')} up in rank, {down} down", style="dim"),
    ]
    biggest = max(view.rows, key=lambda r: (abs(r.delta), r.path), default=None)
    if biggest is not None and abs(biggest.delta) >= 5e-4:
        moves.append(Text(f"largest mean change {fmt_signed(biggest.delta)} ({one_line(biggest.path)})", style="dim"))
    return phrase_lines([settings, moves], width)


class WhatIfScreen(DataScreen):
    """Pick a strategy and floor; every lesson's mean and rank under them, against the saved ones."""

    AUTO_FOCUS = "#what-if-table"
    DEFAULT_CSS = screen_css("what_if.tcss")
    # keys typed before the first fold (`]`, `t`, `b` step from the saved settings it reads) wait for it
    HOLDS_KEYS_UNTIL_LOADED = True
    HELP = (
        "Re-fold the log under another strategy or floor, and pick the selection policy `select` uses "
        "(seed, evidence, uniform: the Beta posteriors under that strategy; joint: the joint estimate). "
        "b tries another reward priority (which source's score the posteriors use first: docs/records.md). "
        "Only ctrl+s (after a confirmation) writes anything."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("t", "cycle_strategy", "Next strategy"),
        Binding("T", "cycle_policy", "Next policy"),  # t is the next strategy; p pins a lesson
        Binding("b", "cycle_priority", "Rewards by…"),
        Binding("left_square_bracket", f"floor_step({-FLOOR_STEP})", "Floor -0.05", key_display="["),
        Binding("right_square_bracket", f"floor_step({FLOOR_STEP})", "Floor +0.05", key_display="]"),
        Binding("ctrl+s", "save", "Save settings…"),
        Binding("escape", "back", "Back"),
    ]

    class Folded(Message):
        def __init__(self, view: WhatIfView, names: dict[bool, ColumnNames]) -> None:
            super().__init__()
            self.view = view
            self.names = names  # the table's names at either width (narrow: True), their sets sorted for the cuts

    def __init__(self, source: WorkspaceSource, lesson: str | None = None) -> None:
        """`lesson`: the lesson the cursor starts on (the one highlighted where `w` was typed)."""
        super().__init__(source)
        self._start_on = lesson
        self.settings: CreditSettings | None = None  # the what-if settings; None until the saved ones load
        self.view: WhatIfView | None = None
        self.policy = ""  # the selection policy proposed; "" until the saved one loads
        self.priority: tuple[str, ...] | None = None  # the reward priority proposed; None: the saved one
        self._adopt_policy = True  # the next fold shows the policy in force (first load, after a save)
        self._names: dict[bool, ColumnNames] = {}  # the view's names (Folded)

    def compose(self) -> ComposeResult:
        yield TitleBar()
        with Horizontal(id="what-if-controls"):
            yield Label("strategy")
            yield Select([(s, s) for s in STRATEGIES], allow_blank=False, id="strategy")
            yield Label("floor")
            yield TextBox(  # enter and escape both leave it for the table, the floor as typed kept
                id="floor",
                validators=[Function(lambda text: floor_of(text) is not None)],
                placeholder="0 to 1",
                footer_keys=(("enter", "Keep floor"), ("escape", "Back"), *LEAVE_BY_TAB),
            )
            yield Label("policy")
            yield Select([(p, p) for p in POLICIES], allow_blank=False, id="policy")
        # on a line of its own, shown while the floor typed is not one: beside the boxes, 80 columns left it 4 cells
        yield Static(id="floor-error")
        yield Static(id="what-if-summary")
        yield ThemedTable(id="what-if-table", cursor_type="row", zebra_stripes=True)
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = "What-if"
        self.sub_title = self.source.name
        table = self.query_one("#what-if-table", ThemedTable)
        table.focus()
        self.busy(table, delay=0)

    # ---------------------------------------------------------------- workers

    def reload(self) -> None:
        self._fold(self.settings, self.priority)

    @work(thread=True, exclusive=True, group="what-if")
    def _fold(self, settings: CreditSettings | None, priority: tuple[str, ...] | None = None) -> None:
        def compute() -> tuple[WhatIfView, dict[bool, ColumnNames]]:
            view = self.source.what_if(settings or self.source.settings(), priority)
            # sorted here, not at their first cut on the UI thread; the table cuts with the sorted sets' very
            # objects (Lessons' names are What-if's narrow ones: an equal set is compared name by name at each cut)
            names = {narrow: column_names(view, narrow) for narrow in (True, False)}
            return view, {narrow: (labels, index_names(alike)) for narrow, (labels, alike) in names.items()}

        self.post_result(compute, lambda result: self.Folded(*result), choice=(settings, priority))

    @on(Folded)
    def _folded(self, event: Folded) -> None:
        if self.settings is not None and event.view.proposed != self.settings:
            return  # an older fold arriving late
        if self.priority is not None and event.view.proposed_priority != self.priority:
            return
        first = self.settings is None
        previous, self.view, self._names = self.view, event.view, event.names
        self.settings = event.view.proposed
        self.priority = event.view.proposed_priority
        self.done(self.query_one("#what-if-table", ThemedTable))
        if first:
            with self.prevent(Select.Changed, Input.Changed):
                self.query_one("#strategy", Select).value = self.settings.strategy
                self.query_one("#floor", Input).value = f"{self.settings.floor:g}"
        if self._adopt_policy:
            self._adopt_policy = False
            self.policy = event.view.policy
            if self.policy in POLICIES:
                with self.prevent(Select.Changed):
                    self.query_one("#policy", Select).value = self.policy
        # the log read again under the same settings: the cursor stays on its lesson; new settings: on the row
        # it is on, the first unless keys typed since the change (`_refold`) moved it
        same = previous is not None and (previous.proposed, previous.proposed_priority) == (
            event.view.proposed,
            event.view.proposed_priority,
        )
        self._show(keep_row=same, keep_place=not same)
        self.ready_for_keys()

    def _saved(self) -> None:
        """A save of this screen's was written (the app said so): the reload it starts shows the policy
        now in force."""
        self._adopt_policy = True

    # ---------------------------------------------------------------- display

    def resized(self, rebuild: bool) -> None:
        # the summary's lines; the labels at 100 columns, the cursor kept on its lesson
        self._show(table=rebuild, keep_row=True)

    def _show(self, table: bool = True, keep_row: bool = False, keep_place: bool = False) -> None:
        view = self.view
        if view is None:
            return
        box = self.query_one("#what-if-summary", Static)
        box.update(summary(view, self.policy, box.content_region.width or self.size.width - 2))
        if table:
            self._show_table(view, keep_row, keep_place)

    def _show_table(self, view: WhatIfView, keep_row: bool = False, keep_place: bool = False) -> None:
        """The table of `view`, the cursor on the first row, with `keep_row` on the lesson it is on, with
        `keep_place` on the row it is on (the n-th)."""
        table = self.query_one("#what-if-table", ThemedTable)
        narrow = self.size.width < NARROW_BELOW
        rows = table.ordered_rows
        keep = rows[table.cursor_row].key.value if keep_row and 0 <= table.cursor_row < len(rows) else None
        keep, self._start_on = keep or self._start_on, None
        place = table.cursor_row if keep_place else 0
        table.clear(columns=True)
        table.cell_padding = 0 if narrow else 1
        table.header_height = 2 if narrow else 1
        for key, label, short in COLUMNS:
            header = Text(" " + short.replace("\n", "\n ") if narrow else label)
            header.justify = "left" if key in LEFT else "right"
            table.add_column(header, key=key)
        # cut to the column: its folders, then its middle, give way
        ours = view is self.view and narrow in self._names
        names, alike = self._names[narrow] if ours else column_names(view, narrow)
        for row in view.rows:
            change = row.rank_change
            tone = "up" if change > 0 else "down" if change < 0 else "muted"
            delta_tone = "up" if row.delta > 5e-4 else "down" if row.delta < -5e-4 else "muted"
            cells = [
                Text(str(row.rank_then), justify="right"),
                Text(str(row.rank_now), justify="right"),
                table.toned(rank_arrow(change), tone),
                Text(fmt(row.mean_then, 3), justify="right"),
                Text(fmt(row.mean_now, 3), justify="right"),
                Text(fmt_signed(row.delta), style=table.tone(delta_tone), justify="right"),
                Text(str(row.n), justify="right"),
                table.toned(one_line(row.status), "warning" if row.status == "missing" else None),
            ]
            # (the name's space its lead: a cut keeps it, as Lessons' pin mark)
            name = lesson_name_text(names[row.path], alike=alike, lead=Text(" ") if narrow else None)
            table.add_row(*(spaced(cell) for cell in cells) if narrow else cells, name, key=row.path)
        table.fit_name_column(keep=0, at=len(COLUMNS) - 1)  # the ids, last, take what the numbers leave
        paths = [row.path for row in view.rows]
        table.restore_cursor(paths, keep, place)

    # ---------------------------------------------------------------- changing the settings

    def _propose(self, **changes: Any) -> None:
        if self.settings is None:
            return
        try:
            settings = self.settings.with_(**changes)
        except ValueError as exc:
            self.notify(str(exc), severity="error", markup=False)
            return
        if settings == self.settings:
            return
        self.settings = settings
        self._refold()

    def _refold(self) -> None:
        """Fold the log under the settings proposed. The new table's cursor starts on its first row: it goes
        there now, so that keys typed before the fold lands move from where they will be on it (the fold
        keeps the row they moved to) rather than be undone by it."""
        table = self.query_one("#what-if-table", ThemedTable)
        table.move_cursor(row=0, animate=False)
        self.busy(table)
        self._fold(self.settings, self.priority)

    @on(Select.Changed, "#strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str):
            self._propose(strategy=event.value)

    @on(Select.Changed, "#policy")
    def _policy_changed(self, event: Select.Changed) -> None:
        if isinstance(event.value, str) and self.view is not None and event.value != self.policy:
            self.policy = event.value
            self._show(table=False)  # the summary says it; the table's rows do not depend on it

    @on(Input.Changed, "#floor")
    def _floor_changed(self, event: Input.Changed) -> None:
        error = self.query_one("#floor-error", Static)
        if event.validation_result is not None and not event.validation_result.is_valid:
            error.update("the floor is a number from 0 to 1")
            error.display = True
            event.input.border_subtitle = "0 to 1"  # in view where the line beside has no room (80 columns)
            return
        error.update("")
        error.display = False
        event.input.border_subtitle = ""
        floor = floor_of(event.value)
        if floor is not None:
            self._propose(floor=floor)

    @on(Input.Submitted, "#floor")
    def _floor_submitted(self) -> None:
        self.query_one("#what-if-table", ThemedTable).focus()

    # Keys change the settings at once (not through the widgets' Changed messages, which arrive
    # later): four quick ] from 0.5 are 0.7, never a step lost.

    def action_cycle_strategy(self) -> None:
        if self.settings is None:
            return
        index = STRATEGIES.index(self.settings.strategy)
        strategy = STRATEGIES[(index + 1) % len(STRATEGIES)]
        self._propose(strategy=strategy)
        with self.prevent(Select.Changed):
            self.query_one("#strategy", Select).value = strategy

    def action_cycle_policy(self) -> None:
        if self.view is None or not self.policy:
            return
        index = POLICIES.index(self.policy) if self.policy in POLICIES else -1
        self.policy = POLICIES[(index + 1) % len(POLICIES)]
        with self.prevent(Select.Changed):
            self.query_one("#policy", Select).value = self.policy
        self._show(table=False)  # the summary says it; the table's rows do not depend on it

    def action_floor_step(self, step: float) -> None:
        if self.settings is None:
            return
        floor = min(1.0, max(0.0, round(self.settings.floor + float(step), 4)))
        self._propose(floor=floor)
        with self.prevent(Input.Changed):
            self.query_one("#floor", Input).value = f"{floor:g}"
            self.query_one("#floor", Input).border_subtitle = ""
            self.query_one("#floor-error", Static).update("")
            self.query_one("#floor-error", Static).display = False

    def action_cycle_priority(self) -> None:
        if self.settings is None or self.priority is None:
            return
        self.priority = next_priority(self.priority)
        self._refold()

    def action_save(self) -> None:
        settings, policy, view, proposed = self.settings, self.policy, self.view, self.priority
        if settings is None or view is None or proposed is None:
            return
        floor = self.query_one("#floor", Input)
        if not floor.is_valid:  # the table shows the last valid floor typed, not what the box says
            self.notify(
                f"The floor box says {one_line(floor.value)!r}, not a number from 0 to 1: fix it before saving; "
                "nothing was written.",
                severity="warning",
                markup=False,
            )
            return
        # the priority proposed, not the last fold's (`b ctrl+s` in a burst saves before b's fold lands)
        priority = proposed if proposed != view.current_priority else None
        pending = cast(Grading, self.app).writes.saving_settings()  # then the saved settings are about to change
        if not pending and settings == view.current and policy == view.policy and priority is None:
            self.notify("These are already the saved settings.", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:  # the policy is written only when it was changed here (else it keeps following the strategy)
                save = SettingsSave(settings, policy if policy != view.policy else None, priority)
                cast(Grading, self.app).commit_settings(save, then=self._saved)

        self.app.push_screen(
            ConfirmScreen(
                f"Save {describe(settings)}"
                + (f", selection policy {policy}" if policy != view.policy else "")
                + (f", rewards by {'>'.join(priority)}" if priority else "")
                + " as the workspace settings?",
                "Writes state/lesson-thompson/config.toml and rewrites bandit-state.json; "
                "the event log is not touched, so this can be changed back at any time.",
            ),
            answered,
        )

    def action_back(self) -> None:
        if isinstance(self.focused, Input):
            self.query_one("#what-if-table", ThemedTable).focus()
            return
        self.dismiss()
