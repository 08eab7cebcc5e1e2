"""Screen 3: why each lesson of a session got its credit, and grading it with a live preview.

The journal is shown with every keyword hit highlighted (the focused lesson's hits more
strongly). A draft grade re-folds in a worker and every number and curve on the screen
shows what committing it would do; nothing is written until the commit key.
"""

from __future__ import annotations

from typing import ClassVar

from msgspec.structs import replace
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from lesson_credit.core.api import Explanation, LessonCredit
from lesson_credit.tui.highlights import Highlights
from lesson_credit.tui.records_views import SessionOutside, outside_view
from lesson_credit.tui.screens.base import DataScreen, screen_css
from lesson_credit.tui.screens.credit_cells import (
    CREDIT_COLUMNS,
    HIT,
    HIT_KEPT,
    MISSED,
    NARROW_HIDDEN,
    NARROW_LABELS,
    credit_cells,
    journal_highlights,
)
from lesson_credit.tui.screens.detail_side import SidePane
from lesson_credit.tui.screens.session_grading import STEP, GradingKeys, step_grade
from lesson_credit.tui.screens.session_line import JOURNAL_LABEL, pane_title, session_info
from lesson_credit.tui.screens.session_reads import ReadFailed, UndoHold, graded_elsewhere, reporting
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.text import one_line
from lesson_credit.tui.textual_private import after_shown
from lesson_credit.tui.widgets.beta_plot import BetaPlot, Curve, short_label
from lesson_credit.tui.widgets.credit_panel import CreditPanel, credit_story, no_lessons_story, story_title
from lesson_credit.tui.widgets.grade_bar import GradeBar
from lesson_credit.tui.widgets.journal_view import JournalView
from lesson_credit.tui.widgets.key_footer import KeyFooter
from lesson_credit.tui.widgets.record_panel import RecordPanel
from lesson_credit.tui.widgets.themed_table import ThemedTable
from lesson_credit.tui.widgets.title_bar import TitleBar
from lesson_credit.tui.widths import (
    MIN_NAME_CELLS,
    NARROW_BELOW,
    SHORT_BELOW,
    share_cut,
    short_detail_heights,
    wide_side_width,
)

Span = tuple[int, int]
__all__ = ["STEP", "SessionDetailScreen", "step_grade"]


class SessionDetailScreen(GradingKeys, DataScreen):
    """One session: journal with hits, per-lesson credit, before/after densities, grading."""

    AUTO_FOCUS = "#credits"
    REBUILD_ON = ("-narrow", "-short")
    LESSON_IN_VIEW = "focused_lesson"
    DEFAULT_CSS = screen_css("session_detail.tcss")
    # the keys typed for it wait for its credits and its reward sources: `c` asks a question that
    # names the source in force, and the credits table's keys move a cursor over rows (tui/keys.py)
    HOLDS_KEYS_UNTIL_LOADED = True
    HELP = (
        "Why each lesson was credited. Digits set a draft grade in tenths and everything previews it; "
        "c commits it to the log (a new grade event; over a person's grade it asks first), u undoes your "
        "latest grade on the session, further back each time (as lesson-credit undo), n opens the next one "
        "to grade: down the Sessions list when the session was opened from it, else in the grading queue's order. "
        "Writes are queued and applied in key order; each is confirmed by a message. The "
        "gptme-sessions record and every reward source's score show under the session's line; V opens the "
        "transcript, J drafts the judge's score as your grade (c commits it, a grade like any other: u undoes it), "
        "H shows every grade of the session whole (the history line shows the latest, cut at the edge). On a "
        'small terminal the credit plot is below "why this credit": x scrolls to it, x again back to the credits '
        "(the arrows still move between lessons, the plot naming the one highlighted); so does the mouse wheel."
    )

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("0", "set_draft(0.0)", "Draft", key_display="0-9"),
        *[Binding(str(d), f"set_draft({d / 10})", f"Draft {d / 10:.1f}", show=False) for d in range(1, 10)],
        # the grade bar lists f, +/- and g; the footer keeps room for every key of the grading flow
        Binding("f", "set_draft(1.0)", "Draft 1.0", show=False),
        Binding("plus,equals_sign", f"step({STEP})", f"Draft +{STEP}", key_display="+", show=False),
        Binding("minus", f"step({-STEP})", f"Draft -{STEP}", key_display="-", show=False),
        Binding("g", "type_grade", "Exact grade…", show=False),
        Binding("c", "commit", "Commit"),
        Binding("u", "undo", "Undo"),
        Binding("n", "next_pending", "Next to grade"),
        Binding("e", "focus_note", "Note", show=False),
        Binding("j", "focus_journal", "Journal", show=False),
        Binding("escape", "back", "Back / discard draft", key_display="esc"),
        Binding("V", "transcript", "Transcript", key_display="V", show=False),
        Binding("J", "take_judge", "Judge's score as draft", key_display="J", show=False),
        Binding("H", "grade_history", "Every grade, whole", key_display="H", show=False),
        # below 100 columns the plot is under "why this credit", where the side pane scrolls (check_action)
        Binding("x", "toggle_expand", "Scroll to the plot / back"),
    ]

    class OutsideLoaded(Message):
        def __init__(self, outside: SessionOutside) -> None:
            super().__init__()
            self.outside = outside

    class Loaded(Message):
        def __init__(self, explanation: Explanation, highlights: Highlights, read_at: int) -> None:
            super().__init__()
            self.explanation, self.highlights, self.read_at = explanation, highlights, read_at

    class Previewed(Message):
        def __init__(self, explanation: Explanation, draft: float) -> None:
            super().__init__()
            self.explanation, self.draft = explanation, draft

    def __init__(self, source: WorkspaceSource, session_id: str, focus_lesson: str | None = None) -> None:
        super().__init__(source)
        self.session_id = session_id
        self.focused_lesson = focus_lesson
        self.base: Explanation | None = None  # latest grade, with the journal and breakdowns
        self.highlights = Highlights()  # where base's lessons hit its journal (found as it was read)
        self.shown: Explanation | None = None  # what the screen shows: base, or the draft preview
        self.draft: float | None = None
        self.draft_word: str | None = None  # the gptme grading word the draft was typed as (g productive)
        self.draft_note: str | None = None  # the note the draft is committed with if none is typed (J's)
        self.note = ""
        self.rows: list[str] = []
        self.outside: SessionOutside | None = None  # the record and reward sources (docs/records.md)
        self._explained_at: int | None = None  # the source version `base` holds at least (read before it)
        self._built_for = 0  # the credits table's width when its columns were last fitted
        self._table_needs = 0  # the credits table's width with every column whole (`_show`)
        self.rows_in_view: int | None = None  # the credit rows in view when fewer than the table's rows
        self._undo_hold = UndoHold(session_id)

    @property
    def keys_held(self) -> bool:  # also while an undo of the log's is not in the view: the keys after it read it
        return super().keys_held or self._undo_hold.held(self.grading.writes, *self._seen())

    def _seen(self) -> tuple[int | None, int | None]:
        """The source versions the explanation and the record were read at (None: not loaded)."""
        return self._explained_at, self.outside.read_at if self.outside is not None else None

    def compose(self) -> ComposeResult:
        yield TitleBar()
        yield Static(id="session-info")
        yield RecordPanel(id="record-panel")
        with Horizontal(id="detail-body"):
            yield JournalView(id="journal")
            with SidePane(id="detail-side"):
                yield ThemedTable(id="credits", cursor_type="row")
                yield CreditPanel("credit-story", id="credit-box")
                yield BetaPlot(id="credit-plot")
        yield GradeBar(id="grade-bar")
        yield KeyFooter()

    def on_mount(self) -> None:
        self.title = f"Session {one_line(self.session_id)}"
        self.sub_title = self.source.name
        self._show_size()
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._show())
        table = self.query_one("#credits", ThemedTable)
        table.focus()
        self.busy(table, delay=0)
        # a sideways scrollbar takes a row without resizing the table (a layout between two sessions' widths)
        self.watch(table, "show_horizontal_scrollbar", lambda _: self._count_rows_in_view(), init=False)
        if hasattr(self.app, "saving"):  # (the writes waiting to be retried: the dashboard's app says when they change)
            self.watch(self.app, "saving", lambda _: self._show_unsaved())

    def resized(self, rebuild: bool) -> None:
        if rebuild:
            self._show_size()
            self._show()
        else:
            self._show_info()  # its words fitted to the new width
            after_shown(self, self._fit_side)

    def _show_size(self) -> None:
        """The compact forms of the header, record, story and grade bar, as the terminal's size asks."""
        short = self.size.height < SHORT_BELOW
        self.query_one("#record-panel", RecordPanel).compact = short
        self.query_one("#grade-bar", GradeBar).compact = short
        self._show_info()

    def _show_info(self) -> None:
        """The session's line, fitted to the width, and the journal pane's title: its path where the line
        has no room for it (below 100 columns always)."""
        wide = self.has_class("-wide") and self._table_needs  # from 150 columns the side pane widens for its table
        width = wide_side_width(self.size.width, self._table_needs) if wide else None
        self.query_one("#detail-side").styles.width = width
        journal = self.query_one("#journal", JournalView)
        if self.base is None:
            journal.border_title = pane_title(None, self.size.width)
            return
        compact, width = self.size.width < NARROW_BELOW, self.size.width - 2  # (its padding)
        info = session_info(self.base, compact, self.rows_in_view, width)
        self.query_one("#session-info", Static).update(info)
        path = self.base.session.journal_path
        on_line = not compact and JOURNAL_LABEL in info.plain.split("\n", 1)[0]
        pane = journal.outer_size.width if self.has_class("-wide") else None  # (the side pane fits its table there)
        journal.border_title = pane_title(None if on_line or not path else path, self.size.width, pane)

    def _count_rows_in_view(self) -> None:
        """The credit rows in view when the table has more (it scrolls): said on the session's line, where
        the lessons are counted, so a session of 11 lessons with 8 rows in view does not look like 8."""
        table = self.query_one("#credits", ThemedTable)
        in_view = table.scrollable_content_region.height - (table.header_height if table.show_header else 0)
        shown = in_view if table.size.height and 0 <= in_view < table.row_count else None
        if shown != self.rows_in_view:
            self.rows_in_view = shown
            self._show_info()

    # ---------------------------------------------------------------- workers

    def reload(self) -> None:
        self._load()
        self._load_outside()

    @work(thread=True, exclusive=True, group="detail-outside")
    def _load_outside(self) -> None:
        session_id, read_at = self.session_id, self.source.version
        outside = reporting(self.post_message, read_at, lambda: outside_view(self.source, session_id))
        self.post_result(outside, self.OutsideLoaded)

    @on(OutsideLoaded)
    def _outside_loaded(self, event: OutsideLoaded) -> None:
        self.outside = event.outside
        if self.base is not None:
            self.ready_for_keys()
        self.query_one("#record-panel", RecordPanel).outside = event.outside
        if self.has_class("-short") and self.has_class("-narrow"):  # 80x24: the record's first line gets its rows
            self._show()
        else:
            self._show_focused()  # "why this credit" says whether the journal changed since the record
        self.query_one("#grade-bar", GradeBar).others = tuple(
            (s.source, s.score) for s in event.outside.sources if not s.in_force and s.score is not None
        )

    @work(thread=True, exclusive=True, group="detail-load")
    def _load(self) -> None:
        read_at = self.source.version
        explain = reporting(self.post_message, read_at, lambda: self.source.explain(self.session_id))

        def read() -> tuple[Explanation, Highlights]:  # the highlights found here, never on the UI thread
            found = explain()
            return found, journal_highlights(found)

        self.post_result(read, lambda found: self.Loaded(*found, read_at))

    @on(ReadFailed)
    def _read_failed(self, event: ReadFailed) -> None:
        said = self._undo_hold.read_failed(self.grading.writes, event.read_at, *self._seen())
        if said is not None:  # (the WorkFailed after it hands on the keys; none when a newer view was shown)
            self.notify(said, title="Keys no longer held", severity="warning", markup=False)

    @work(thread=True, exclusive=True, group="detail-preview")
    def _preview(self, draft: float) -> None:
        self.post_result(
            lambda: self.source.explain(self.session_id, draft, with_journal=False),
            lambda explanation: self.Previewed(explanation, draft),
            choice=draft,
        )

    # ---------------------------------------------------------------- results

    @on(Loaded)
    def _loaded(self, event: Loaded) -> None:
        first = self.base is None
        said = graded_elsewhere(self.session_id, self.base, event.explanation, self.draft, self.grading.writes)
        if said is not None:  # another process graded it under the draft: the draft stays a draft
            self.notify(said, title="Graded elsewhere", severity="warning", markup=False)
        self.base, self._explained_at = event.explanation, event.read_at
        self.highlights = event.highlights
        self.done(self.query_one("#credits", ThemedTable))
        self._show_size()
        bar = self.query_one("#grade-bar", GradeBar)
        bar.committed = event.explanation.session.base_reward
        bar.grader = event.explanation.session.grader
        bar.grades = event.explanation.grades
        self._show_unsaved()
        if self.focused_lesson not in [c.path for c in event.explanation.lessons]:
            self.focused_lesson = event.explanation.lessons[0].path if event.explanation.lessons else None
        self._show_journal(scroll=first)
        if self.draft is None:
            self.shown = event.explanation
            self._show()
        else:
            self._preview(self.draft)
        if self.outside is not None:
            self.ready_for_keys()

    @on(Previewed)
    def _previewed(self, event: Previewed) -> None:
        if event.draft != self.draft:
            return  # an older draft's answer arriving late
        self.done(self.query_one("#credits", ThemedTable))
        self.shown = event.explanation
        self._show()

    # ---------------------------------------------------------------- display

    def credits(self) -> list[LessonCredit]:
        """The shown credits, with the keyword breakdowns of the full explanation (previews skip the journal)."""
        if self.shown is None:
            return []
        full = {c.path: c for c in self.base.lessons} if self.base else {}
        out = []
        for credit in self.shown.lessons:
            original = full.get(credit.path)
            if credit.breakdown is None and original is not None:
                credit = replace(credit, breakdown=original.breakdown, note=original.note)
            out.append(credit)
        return out

    def _show(self) -> None:
        if self.shown is None or not self.is_mounted:
            return
        table = self.query_one("#credits", ThemedTable)
        credits = self.credits()
        # 80x24: the table's rows in view, taken from the journal and the record; else as the stylesheet says
        fit = self.has_class("-short") and self.has_class("-narrow")
        first = self.query_one("#record-panel", RecordPanel).first_rows(self.size.width - 2)  # (padding, scrollbar)
        journal, record, most, open_box, open_journal, box = (
            short_detail_heights(len(credits), first) if fit else (None, None, None, False, False, None)
        )
        if fit or not self.has_class("-narrow"):  # (narrow and taller: as `_fit_side` sets it, not reset)
            self.query_one("#journal").styles.height = journal
            self.query_one("#credit-box").styles.max_height = box
        self.query_one("#record-panel").styles.max_height = record
        table.styles.max_height = most
        self.set_class(open_box, "-open-credit-box").set_class(open_journal, "-open-journal")
        if (kept := table.row_to_keep(self.focused_lesson)) != self.focused_lesson:  # a key's move, not told yet
            self.focused_lesson = kept  # (its RowHighlighted, once rebuilt, finds it focused already)
            self.query_one("#journal", JournalView).set_focus_spans(self._focus_spans())
        table.clear(columns=True)
        # the full columns where they fit the table (at 150 columns), else the compact ones, as below 100:
        # lessons by file name, salience and weight headed sal and wt, Δα and Δβ left to "why this credit" (at
        # 100-149 columns the full ones ran past the table's edge: "credi" cut, a sideways scrollbar on a row)
        compact = self.size.width < NARROW_BELOW
        rows = self._credit_rows(credits, compact)
        shown, labels, widths, over = self._credit_widths(rows, compact)
        self._table_needs = over + (table.size.width or self.size.width)  # (its scrollbar in): `_show_info`
        slack = sum(widths[i] - len(labels[i]) for i in (HIT, MISSED))  # what the keywords' columns can give
        if over > slack and not compact:
            compact = True
            rows = self._credit_rows(credits, compact)
            shown, labels, widths, over = self._credit_widths(rows, compact)
        # the keywords hit and missed share what is left of the line, the wider cut first (to HIT_KEPT, to the header);
        # where names would be cut, the keywords missed are left to "why this credit", then names are cut (to 12)
        if compact and over > widths[MISSED] - len(labels[MISSED]):
            shown.remove(MISSED)
            over -= widths[MISSED] + 2 * table.cell_padding
        keep = {HIT: max(len(labels[HIT]), HIT_KEPT), MISSED: len(labels[MISSED])}
        over = share_cut(widths, {i: cells for i, cells in keep.items() if i in shown}, over)
        for i, least in ((0, MIN_NAME_CELLS), (HIT, len(labels[HIT]))):
            cut = max(0, min(over, widths[i] - least)) if i in shown else 0
            widths[i] -= cut
            over -= cut
        for i in shown:
            key, label = CREDIT_COLUMNS[i]
            table.add_column(labels[i], key=key, width=widths[i])
        for path, cells in rows:
            table.add_row(*[cells[i] for i in shown], key=path)
        self.rows = [c.path for c in credits]
        table.restore_cursor(self.rows, self.focused_lesson)
        self._show_focused()
        after_shown(self, self._count_rows_in_view)  # its rows laid out
        after_shown(self, self._fit_side)
        after_shown(self, self._show_info)  # the journal pane's title fitted to its width

    def _credit_rows(self, credits: list[LessonCredit], compact: bool) -> list[tuple[str, list[Text]]]:
        assert self.shown is not None
        table = self.query_one("#credits", ThemedTable)
        tone = "warning" if self.draft is not None else None
        return credit_cells(credits, compact, self.shown.base_reward is None, tone, table.toned)

    def _credit_widths(
        self, rows: list[tuple[str, list[Text]]], compact: bool
    ) -> tuple[list[int], dict[int, str], dict[int, int], int]:
        """The columns shown, their labels and widths (explicit, from the cells: a table refilled by previews
        arriving fast, keys typed right after opening, otherwise kept its header widths and cut every cell to
        them), and by how many cells they are wider than the table."""
        table = self.query_one("#credits", ThemedTable)
        shown = [i for i, (key, _) in enumerate(CREDIT_COLUMNS) if not (compact and key in NARROW_HIDDEN)]
        labels = {
            i: NARROW_LABELS.get(label, label) if compact else label for i, (_, label) in enumerate(CREDIT_COLUMNS)
        }
        widths = {i: max([len(labels[i]), *(row[i].cell_len for _, row in rows)]) for i in shown}
        self._built_for = table.size.width  # not laid out yet (0): its first Resized builds it again
        limit = table.styles.max_height  # in cells: the table's scrollbar is there when its rows are more
        scrollbar = 2 if limit is not None and len(rows) + 1 > limit.value else 0
        used = sum(widths[i] + 2 * table.cell_padding for i in shown)
        return shown, labels, widths, used - (table.size.width or self.size.width) + scrollbar

    def on_themed_table_resized(self, message: ThemedTable.Resized) -> None:
        """The credits' widths are the table's (`_show`): on its first layout or a resize, built again."""
        if message.table.id != "credits":
            return
        if message.table.size.width != self._built_for:
            self._show()
        self._count_rows_in_view()
        after_shown(self, self._fit_side)  # its height: the rows left for "why this credit"

    def _show_journal(self, scroll: bool) -> None:
        base = self.base
        if base is None:
            return
        journal = self.query_one("#journal", JournalView)
        if base.journal_text is None:
            journal.show_message(f"No journal to show: {base.journal_problem or 'the session names none'}.")
            return
        notice = " ".join(said for said in (base.journal_problem, self.highlights.note()) if said)
        journal.show_journal(base.journal_text, self.highlights.spans, self._focus_spans(), notice=notice or None)
        if scroll:
            journal.set_focus_spans(self._focus_spans())

    def _focus_spans(self) -> list[Span]:
        if self.focused_lesson is None:  # (None focused: none)
            return []
        return self.highlights.by_lesson.get(self.focused_lesson, [])  # (found with base: never again here)

    def _fit_side(self) -> None:
        if self.is_mounted:
            self.query_one(SidePane).fit()  # "why this credit" in the rows the side pane has left

    def _show_focused(self) -> None:
        if self.shown is None:
            return
        credit = next((c for c in self.credits() if c.path == self.focused_lesson), None)
        story = self.query_one("#credit-box", CreditPanel)
        plot = self.query_one("#credit-plot", BetaPlot)
        if credit is None:  # a session without lessons has none to select: the box says what it does instead
            story.story = None if self.credits() else no_lessons_story(self.shown.base_reward is None)
            plot.curves = ()
            return
        compact = self.size.width < NARROW_BELOW
        story.border_title = story_title(credit.path, compact)
        changed = self.outside is not None and self.outside.journal_changed is True
        story.story = credit_story(credit, self.shown.settings, self.shown.base_reward, compact, changed)
        after = "after (draft)" if self.draft is not None else "after"
        rest = f": before → {after} this session"  # the lesson cut to the plot's width (its axis's 6 cells apart)
        plot.plot_title = short_label(credit.path, max(22, plot.size.width - 6 - len(rest))) + rest
        plot.curves = (
            Curve("before", credit.alpha_before, credit.beta_before, "before"),
            Curve(after, credit.alpha_after, credit.beta_after, "draft" if self.draft is not None else "after"),
        )
        after_shown(self, self._fit_side)  # its story's lines laid out

    @on(DataTable.RowHighlighted, "#credits")
    def _credit_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is None or event.row_key.value is None:
            return  # an empty table (filtered to nothing, or nothing yet)
        changed = event.row_key.value != self.focused_lesson
        self.focused_lesson = event.row_key.value
        self._show_focused()
        if changed:
            self.query_one("#journal", JournalView).set_focus_spans(self._focus_spans())

    # ---------------------------------------------------------------- other keys (grading: session_grading.py)

    def action_transcript(self) -> None:
        from lesson_credit.tui.screens.transcript import TranscriptScreen

        self.app.push_screen(TranscriptScreen(self.source, self.session_id, self.focused_lesson))

    def action_grade_history(self) -> None:
        from lesson_credit.tui.screens.grade_history import GradeHistoryScreen

        self.app.push_screen(GradeHistoryScreen(self.session_id, self.query_one("#grade-bar", GradeBar)))

    def action_focus_note(self) -> None:
        self.query_one("#grade-bar", GradeBar).focus_note()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action != "toggle_expand":
            return super().check_action(action, parameters)
        pane = next(iter(self.query(SidePane).results(SidePane)), None)  # (none: taken down part by part)
        return pane is not None and pane.allow_vertical_scroll  # the plot below the fold, or scrolled to (x again)

    def action_toggle_expand(self) -> None:
        """x: the side pane scrolled to the credit plot where it is below "why this credit" (80x24), x again back to
        the credits; the arrows still move between lessons meanwhile, the plot naming the one highlighted."""
        pane = self.query_one(SidePane)
        pane.show_plot(not pane.plot_in_view())

    def action_focus_journal(self) -> None:
        self.query_one("#journal", JournalView).focus()

    def action_back(self) -> None:
        # the note box, the journal (j), the record or "why this credit" (tab): back to the credits. From the last
        # two escape left the session (tab to the box to read its story, escape: the screen under it)
        if isinstance(self.focused, Input | JournalView | RecordPanel | CreditPanel):
            self.focus_from_box(self.query_one("#credits", ThemedTable))
            return
        if self.draft is not None:
            self.discard_draft()
            self.notify("Draft discarded; nothing was written.", markup=False)
            return
        if self.note.strip():  # (leaving, it went without a word: a note typed is a draft too)
            self.discard_draft()
            self.notify("Note discarded; nothing was written.", markup=False)
            return
        self.dismiss()

    @on(GradeBar.NoteChanged)
    def _note_changed(self, event: GradeBar.NoteChanged) -> None:
        self.note = event.note

    @on(GradeBar.NoteSubmitted)
    def _note_submitted(self) -> None:
        self.focus_from_box(self.query_one("#credits", ThemedTable))
