"""The session screen's grading keys (a mixin of SessionDetailScreen, tui/screens/session_detail.py): a draft
grade set by digits, steps, the exact-grade box or the judge's score, previewed on the screen; `c` commits it
through the app's write queue (asking first over a person's grade: tui/screens/confirm.py), `u` undoes, `n` opens
the next session to grade."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from lesson_credit.tui.grading import Grading, unsaved_write
from lesson_credit.tui.screens.confirm import ConfirmCommit, commit_question
from lesson_credit.tui.screens.grade_value import GradeValueScreen, TypedGrade
from lesson_credit.tui.text import fmt_grade, one_line
from lesson_credit.tui.widgets.grade_bar import GradeBar
from lesson_credit.tui.widgets.themed_table import ThemedTable

if TYPE_CHECKING:
    from lesson_credit.core.api import Explanation
    from lesson_credit.tui.records_views import SessionOutside
    from lesson_credit.tui.screens.base import DataScreen

    _Base = DataScreen
else:
    _Base = object

STEP = 0.05
JUDGE_NOTE = "the judge's score, taken as the grade"


def step_grade(current: float | None, step: float) -> float:
    """current + step, clamped to [0, 1] and rounded so repeated steps do not drift."""
    base = 0.5 if current is None else current
    return min(1.0, max(0.0, round(base + step, 4)))


class GradingKeys(_Base):
    """The grading keys of a session's screen (a mixin of SessionDetailScreen, which has these attributes)."""

    if TYPE_CHECKING:
        session_id: str
        base: Explanation | None
        shown: Explanation | None
        outside: SessionOutside | None
        draft: float | None
        draft_word: str | None
        draft_note: str | None
        note: str

        def _show(self) -> None: ...
        def _preview(self, draft: float) -> object: ...

    @property
    def grading(self) -> Grading:
        return cast(Grading, self.app)

    def _set_draft(self, value: float | None, word: str | None = None, note: str | None = None) -> None:
        self.draft = value
        self.draft_word = word if value is not None else None
        self.draft_note = note if value is not None else None
        bar = self.query_one("#grade-bar", GradeBar)
        bar.draft_word = self.draft_word
        bar.draft = value
        if value is None:
            if self.base is not None:  # no preview to wait for: the credits as logged (else the first load's)
                self.done(self.query_one("#credits", ThemedTable))
            self.shown = self.base
            self._show()
        else:
            self.busy(self.query_one("#credits", ThemedTable))
            self._preview(value)

    def _show_unsaved(self) -> None:
        grading = self.grading
        unsaved = unsaved_write(grading.writes, self.session_id, grading.write_waiting_for_lock())
        self.query_one("#grade-bar", GradeBar).unsaved = unsaved

    def committed(self) -> float | None:
        """The grade in force as this screen knows it: its explanation's, or before that has loaded
        the app's latest snapshot's (keys typed right after opening are not lost)."""
        if self.base is not None:
            return self.base.session.base_reward
        snapshot = self.grading.snapshot
        return snapshot.grade_of(self.session_id) if snapshot is not None else None

    def in_force(self) -> float | None:
        """The grade in force as typed: after the commits and undos queued for it (they may not be in
        the log yet), else `committed()`. A step or the exact-grade box starts from it."""
        return self.grading.writes.expected(self.session_id, self.committed())

    def action_set_draft(self, value: float) -> None:
        self._set_draft(float(value))

    def action_step(self, step: float) -> None:
        current = self.draft if self.draft is not None else self.in_force()
        self._set_draft(step_grade(current, float(step)))

    def action_type_grade(self) -> None:

        def typed(value: TypedGrade | None) -> None:
            if value is not None:
                self._set_draft(*value)

        current = self.draft if self.draft is not None else self.in_force()
        words = dict(self.outside.words) if self.outside is not None else None
        self.app.push_screen(GradeValueScreen(self.session_id, current, words), typed)

    async def action_commit(self) -> None:
        if self.draft is None:
            self.notify(
                "No draft grade to commit: set one with 0-9, f, +/- or g first.", severity="warning", markup=False
            )
            return
        value, word, sid, writes = self.draft, self.draft_word, self.session_id, self.grading.writes
        note = self.note.strip() or self.draft_note
        in_force = self.in_force()
        seen = self.outside
        person, read_at = (seen.person, seen.read_at) if seen is not None else (None, None)
        queued, unsure = writes.expected_person(sid, person, read_at), writes.log_undo_queued(sid)
        question = (sid, value, word, in_force, queued, seen, unsure, writes.operator)
        asked = None if in_force is None else commit_question(*question)
        # asked or not, no grade that would have asked (another person's) logged since the view is written over
        shown_line = self._seen_line()  # (tui/write_events.py `seen_over`)
        if asked is None:  # pending, or over a source ranked below a person's: nothing shown is replaced
            self._queue_commit(value, note, word, queued, seen_line=shown_line)
            return

        # the grade it is asked over: the view's latest grade event (written only if the log's latest is still it, or
        # this dashboard's latest write on the session: tui/write_events.py `asked_over`): `y` replaces no grade unseen
        grades = self.base.grades if self.base is not None else ()
        asked_line = grades[-1].line if grades else 0

        def answered(replace_it: bool) -> None:
            if replace_it:
                self._queue_commit(value, note, word, queued, asked_line, shown_line)

        await self.app.push_screen(ConfirmCommit(*asked, on_answer=answered))

    def _seen_line(self) -> int | None:
        """The line of the latest grade event the screen shows (0: none): its explanation's, else the record
        panel's reward sources'; None before either has loaded (nothing shown to check against)."""
        if self.base is not None:
            return self.base.grades[-1].line if self.base.grades else 0
        if self.outside is not None:
            return max((s.line or 0 for s in self.outside.sources), default=0)
        return None

    given_back: tuple[int, float] | None = None  # (key order, value) of the refused grade last made the draft

    def restore_refused(self, value: float, note: str | None, word: str | None, seq: int) -> bool:
        """A grade of this session's that the writer refused (its grade changed after the question) back as the
        draft, with its note and word, unless another draft is open (one given back so, of a grade typed before
        `seq` and not changed since, is replaced: the later grade is what the operator meant last): `c` then asks
        over the grade in force."""
        given = self.given_back
        if self.draft is not None and not (given is not None and given[0] < seq and self.draft == given[1]):
            return False
        self._set_draft(value, word, note)
        self.given_back = (seq, value)
        return True

    def _queue_commit(
        self,
        value: float,
        note: str | None,
        word: str | None,
        person: float | None,
        asked_line: int | None = None,
        seen_line: int | None = None,
    ) -> None:
        """Queue the write now (key order is write order) and free the draft for the next key; `person`:
        the person's score it replaces, as typed; `asked_line`: confirmed over a question, `seen_line`: committed
        without one (AppWrites.commit_grade)."""
        self.grading.commit_grade(self.session_id, value, note, self.committed(), word, person, asked_line, seen_line)
        self._set_draft(None)
        self.note = ""
        self.query_one("#grade-bar", GradeBar).clear_note()

    def action_undo(self) -> None:
        """Take back the latest change: a draft (nothing was written), else the operator's latest grade on
        the session not undone yet, as `lesson-credit undo` does (a new grade event, through the write queue)."""
        if self.draft is not None:
            draft = self.draft
            self.discard_draft()
            self.notify(
                f"Draft {fmt_grade(draft)} on {one_line(self.session_id)} discarded (nothing written); "
                "u again undoes the last commit.",
                markup=False,
            )
            return
        self.grading.undo_grade(self.session_id)  # (its outcome, or why there was nothing to undo, is a toast)

    async def action_next_pending(self) -> None:
        await self.grading.open_next_pending(self.session_id)

    def action_take_judge(self) -> None:
        """The judge's score as the draft, previewed like any other; c commits it as the operator's grade
        (noted as the judge's score unless a note is typed), escape discards it."""
        judge = self.outside.judge if self.outside is not None else None
        if judge is None:
            self.notify(f"No judge's score for {one_line(self.session_id)}.", severity="warning", markup=False)
            return
        self._set_draft(judge, note=JUDGE_NOTE)

    def discard_draft(self) -> None:
        """The draft and the note typed for it go (nothing was written)."""
        self._set_draft(None)
        self.note = ""
        self.query_one("#grade-bar", GradeBar).clear_note()
