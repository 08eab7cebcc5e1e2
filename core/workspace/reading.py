"""Reading a workspace: the posteriors, the sessions, a session's grades, sources and explanation.

Every method answers from the snapshot of the log as read (`WorkspaceBase.data`) and the library;
nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from msgspec.structs import replace

from lesson_credit.core import grading, views
from lesson_credit.core.bandit.fold import Posterior, fold
from lesson_credit.core.base.ids import unicode_forms
from lesson_credit.core.joined_records import trajectory_for
from lesson_credit.core.log.columns import ids_starting
from lesson_credit.core.log.events import GradeEvent, SelectionEvent
from lesson_credit.core.log.eventstore import JsonlStore
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.model.sources import HUMAN, OUTCOME, SOURCES
from lesson_credit.core.reader import nan_column
from lesson_credit.core.views import (
    Explanation,
    GradeRecord,
    LessonUsage,
    PosteriorTable,
    SessionSummary,
    SessionTable,
    SourceScore,
)
from lesson_credit.core.workspace.base import WorkspaceBase

if TYPE_CHECKING:  # imported where used: the analysis and the joint fit are not needed to show posteriors
    from lesson_credit.core.log.snapshot import FoldData
    from lesson_credit.core.model.kinds import KindNames
    from lesson_credit.core.sessions.record_file import Record
    from lesson_credit.core.sessions.trajectory import Trajectory


MATCHES_SHOWN = 5  # ids an ambiguous prefix's message names


class Reading(WorkspaceBase):
    """What the log and the library say: posteriors, sessions, grades, explanations."""

    _analysis_data: tuple[FoldData, FoldData] | None = None  # (data(), as the estimates read it)

    def posterior(self, settings: CreditSettings | None = None, base: np.ndarray | None = None) -> Posterior:
        """The fold's per-arm arrays (see `lesson_table` for the table by lesson)."""
        settings, data = settings or self.settings, self.data()
        return self._reader.posterior(settings) if base is None else fold(data, settings, base)

    def lesson_table(
        self,
        settings: CreditSettings | None = None,
        base: np.ndarray | None = None,
        *,
        details: bool = True,
        intervals: bool = True,
    ) -> PosteriorTable:
        """The status table: every lesson of the library and every arm of the log (see views.lesson_table)."""
        own = self._reader.caches and settings is None and base is None  # what-if tables keep no intervals
        settings = settings or self.settings
        post, data, lessons = self.posterior(settings, base), self.data(), self.library().lessons
        cache = self.state_dir / ".cache" / "intervals" if own else None
        return views.lesson_table(
            post,
            data,
            lessons,
            self._reader.session_ids,
            settings,
            base,
            details=details,
            intervals=intervals,
            interval_cache=cache,
        )

    def lesson_usage(self) -> dict[str, LessonUsage]:
        """Per arm: sessions injected in, how many of those it was salient in, mean salience."""
        return views.lesson_usage(self.data())

    def session_categories(self) -> Sequence[str | None]:
        """Each session's category as of the current snapshot (a copy: later reads do not change it)."""
        return tuple(self._reader.session_categories()[: self.data().n_sessions])

    def kind_names(self) -> KindNames:
        """The kinds of work of the current snapshot's sessions and the name each is shown by (`KindNames`:
        counted once, then the sessions appended since)."""
        self._kinds.update(self._reader.generation, self.data().n_sessions, self._reader.category_counts)
        return self._kinds

    def session_agents(self) -> Sequence[str | None]:
        """Who wrote each session of the current snapshot (a database store; () for the file)."""
        return tuple(self._reader.session_agents(self.data().n_sessions))

    def sessions(self) -> list[SessionSummary]:
        table = self.session_table()
        return [table.summary(row) for row in range(len(table))]

    def session_table(self) -> SessionTable:
        """Every session as columns (see SessionTable); what a view of a big log should use."""
        data = self.data()
        c = self._reader.session_columns(data.n_sessions)
        names = self.kind_names().names(c.categories)  # a session's kind by its name, as sessions are grouped
        table = views.session_table(data, c.session_ids, c.timestamps, c.categories, c.journal_paths, c.lines, names)
        # the snapshot names the grader of the event in force; where that is an undo, who it is owed to
        rows = self._reader.rows_noted(_is_undo, data.n_sessions)
        owed = {row: self._owed_grader(row) for row in rows if _undo_in_force(data.grader_source.event_in_force(row))}
        if not any(owed.values()):
            return table
        graders = list(table.graders)
        for row, grader in owed.items():
            graders[row] = grader or graders[row]
        return replace(table, graders=tuple(graders))

    def session_row(self, session_id: str) -> int:
        """The session's row: its place in log order (found by id, not by listing every session)."""
        self.data()
        return self._row(session_id)

    def session(self, session_id: str) -> SessionSummary:
        data, row = self.data(), self._row(session_id)
        summary = views.session_summary(self._reader.session(row), row, self._reader.session_line(row), data)
        return self._with_owed_grader(self._kind_named(summary), row)

    def _kind_named(self, summary: SessionSummary) -> SessionSummary:
        """`summary` with its category shown by its kind's name (`kind_names`), as the session table shows it."""
        return replace(summary, category=self.kind_names().name(summary.recorded_category))

    def _with_owed_grader(self, summary: SessionSummary, row: int) -> SessionSummary:
        if not any(_is_undo(g.note or "") for _, g in self._reader.grades_of(row)):
            return summary
        owed = self._owed_grader(row)
        return summary if owed is None else replace(summary, grader=owed)

    def _owed_grader(self, row: int) -> str | None:
        """Who gave the score in force: the grader of its event, or when that is an undo (logged under the undoer:
        a score they never gave) of the grade still standing that holds it (`_owed`), the record's own when every
        grade since is withdrawn; None: a gptme-sessions record's score or none (the snapshot's grader says it)."""
        in_force = next((s for s in self._sources_at(row) if s.in_force), None)
        return in_force.grader if in_force is not None and in_force.line is not None else None

    def grade_history(self, session_id: str) -> list[GradeRecord]:
        """Every grade event the session has had (its record's own first), oldest first. Which one
        is in force is the reward priority's choice (`reward_sources`)."""
        self.data()
        return self._reader.grade_history(self._row(session_id))

    def reward_sources(self, session_id: str, priority: Sequence[str] | None = None) -> tuple[SourceScore, ...]:
        """Every reward source's score of the session, the one in force (under `priority`, default
        the configured one) marked (docs/records.md)."""
        self.data()
        return self._sources_at(self._row(session_id), priority)

    def _sources_at(self, row: int, priority: Sequence[str] | None = None) -> tuple[SourceScore, ...]:
        """The session's sources, each read once: its event, its grade events and (with an undo among them)
        one undo walk serve every source."""
        data = self.data()
        session, grades = self._reader.grading_fields(row), self._reader.grades_of(row)  # (no lessons: not read)
        line = self._reader.session_line(row)
        label = self._reader.outcome_label(row)
        outcome = self.config.outcomes.get(label) if label is not None else None
        record, outside = self.record_at(row), self._record_scores(row)
        sources = views.source_breakdown(
            session,
            line,
            grades,
            outcome,
            outside,
            priority or data.scores().priority,
            None if record is None else record.timestamp,
        )
        if not any(_is_undo(g.note or "") for _, g in grades):
            return sources
        history = self._reader.grade_history(row, session, grades)
        walk = grading.undo_walk(history, line)
        return tuple(_owed(s, history, walk) for s in sources)

    def record_scores(self, session_id: str) -> dict[str, float]:
        """The scores the session's gptme-sessions record gives, per reward source (the log's own of a source
        outrank its record's; a retraction of it lets the record's count again): empty when none is joined."""
        self.data()
        return self._record_scores(self._row(session_id))

    def _record_scores(self, row: int) -> dict[str, float]:
        if self.record_at(row) is None:
            return {}
        scores = self.records().scores
        return {s: float(v[row]) for s, v in scores.items() if row < len(v) and not np.isnan(v[row])}

    def person_scores(self) -> dict[str, np.ndarray]:
        """Per person (a grader of the people's source): their latest score of each session, NaN where none."""
        n = self.data().n_sessions
        scores = self._reader.grader_scores(n, SOURCES.index(HUMAN))
        for row in self._reader.rows_noted(_is_undo, n):
            people = [g for g in self._reader.grade_history(row) if g.source == HUMAN]
            left = grading.undo_walk(people, self._reader.session_line(row)).standing(people)
            for grader in {g.grader for g in people}:  # an undo's score is not the undoer's grade
                kept = left.get(grader)
                value = np.nan if kept is None or kept.base_reward is None else kept.base_reward
                nan_column(scores, grader, n)[row] = value
        return scores

    def record_at(self, row: int) -> Record | None:
        """The gptme-sessions record joined to the session at `row` (None: none joined)."""
        return self.records().record_at(row) if self.session_records.has_records() else None

    def record_of(self, session_id: str) -> Record | None:
        self.data()
        return self.record_at(self._row(session_id))

    def trajectory_of(self, session_id: str) -> tuple[Trajectory | None, str | None]:
        """(the session's trajectory, why there is none): see core.joined_records.trajectory_for."""
        record, settings = self.record_of(session_id), self.config.records
        return trajectory_for(self.root, record, session_id, settings, self.allow_outside_journals)

    def priority_base(self, priority: Sequence[str]) -> np.ndarray:
        """Each session's score in force under another reward priority (a what-if; NaN: pending)."""
        return self.data().scores().in_force(tuple(priority))

    def outcome_labels(self) -> dict[int, str]:
        """Row -> string outcome of each record logged without base_reward (see lesson_credit.core.bandit.config)."""
        self.data()
        return self._reader.outcome_labels()

    def outcome_label(self, session_id: str) -> str | None:
        """The string outcome of the session's record when it was logged without base_reward."""
        self.data()
        return self._reader.outcome_label(self._row(session_id))

    def outcome_words(self) -> dict[int, str]:
        """Row -> the gptme outcome word a session's reward in force comes from: sessions logged with a
        word and no base_reward (imported from gptme, or `record --reward WORD`) whose score in force is
        the outcome source's (no source before it in the priority scores them) and still the word's
        (no `outcome` grade since, no record's outcome in its place)."""
        labels = self._reader.outcome_labels()
        if not labels:
            return {}
        scores = self.data().scores()
        outcome = SOURCES.index(OUTCOME)
        index = self._reader.index
        regraded = {row for row, code in zip(index.grade_rows, index.grade_source, strict=True) if code == outcome}
        outside = set(scores.external_rows.tolist())
        n = len(scores.chosen)
        return {
            row: word
            for row, word in labels.items()
            if row < n and scores.chosen[row] == outcome and row not in regraded and row not in outside
        }

    def session_ids_between(self, start: int, stop: int) -> tuple[str, ...]:
        """The ids of the sessions at rows [start, stop), as read."""
        self.data()
        return tuple(self._reader.session_ids().between(start, stop))

    def session_id_of(self, text: str) -> str:
        """The one session id `text` names: itself when logged, else the only id it starts. An
        unknown or ambiguous prefix raises QueryError naming the matches (one line). Neither reads
        every id: an id is looked up by its hash, a prefix compared with the ids' stored bytes.
        Text not found as typed is tried in its other Unicode forms (NFC, NFD): 'é' typed as one code
        point names an id logged with 'e' and a combining accent, which looks the same everywhere; such an
        id comes before the longer ids the text starts in any form."""
        if text:
            self.data()
            if self._reader.row_of(text) is not None:
                return text
        from lesson_credit.core.query import QueryError, ambiguous  # a logged id (grade, show) needs neither

        if not text:
            raise QueryError("session id must not be empty")
        ids = self._reader.session_ids()
        forms = unicode_forms(text)
        for form in forms[1:]:  # an id logged in another form before any longer id the text starts
            if self._reader.row_of(form) is not None:
                return form
        # the ids that start with it in any form: two that look as if they do are ambiguous, whatever their form
        rows = sorted({row for form in forms for row in ids_starting(ids, form, self.data().n_sessions)})
        if not rows:
            if self._reader.index.latest_selection(text) is not None:  # (the session-end hook never ran)
                raise QueryError(
                    f"session {text!r} has a selection but no record: `lesson-credit record --session-id {text} "
                    "--journal FILE --lessons-file FILE` logs it (the session-end hook)"
                )
            raise QueryError(f"unknown session {text!r}")
        if len(rows) > 1:
            raise QueryError(ambiguous(text, [ids[row] for row in rows[:MATCHES_SHOWN]], len(rows)))
        return ids[rows[0]]

    def session_record(self, session_id: str) -> dict[str, Any]:
        """The session's record as logged ({} if it cannot be read back): read where the index says
        it starts in the file, else searched for in the store."""
        from lesson_credit.core.log.records import record_at

        self.data()
        row = self._row(session_id)
        offset = self._reader.session_offset(row)
        if offset is not None and isinstance(self.log, JsonlStore):
            found = record_at(self.log.path, offset, session_id)
            if found is not None:
                return found
        duplicated = any(p.session_id == session_id and p.reason.startswith("duplicate") for p in self.log_problems())
        return self.log.session_record(session_id, unique=not duplicated) or {}

    def retired_arms(self) -> dict[str, int]:
        """Arm -> line of the retire event (`prune`) that retired it."""
        self.data()
        return self._reader.retired()

    def selections(self) -> list[tuple[int, SelectionEvent]]:
        self.data()
        return self._reader.selections()

    def selected_never_recorded(self) -> list[tuple[str, int]]:
        """(session id, line of its latest selection) of the sessions a selection names and no record
        has, though a session was recorded after it (the session-end hook did not run), in line order."""
        self.data()
        return self._reader.selected_never_recorded()

    def analysis_data(self) -> FoldData:
        """`data()` as the effect estimates read it: a lesson the session's selection passed over is among those
        included during the session (core/log/unchosen.py); kept until the log is read again."""
        from lesson_credit.core.log.unchosen import with_passed_over

        data = self.data()
        kept = self._analysis_data
        if kept is None or kept[0] is not data:
            kept = self._analysis_data = (data, with_passed_over(self._reader.index, data))
        return kept[1]

    def passed_over(self) -> list[tuple[str, tuple[str, ...]]]:
        """(session id, lessons) of the sessions whose record names lessons their selection did not choose, without
        marking them "during": read as included during the session (core/log/unchosen.py), in log order."""
        self.data()
        return self._reader.passed_over()

    def recorded_without_selection(self, back: int = 1_000) -> tuple[list[str], str | None]:
        """The ids of the sessions recorded last with no selection logged for them (in log order), and the latest
        session before them that had one; ([], None) when none of the last `back` sessions had one (a log whose
        sessions are recorded without `select`)."""
        self.data()
        return self._reader.recorded_unselected(back)

    def explain(
        self,
        session_id: str,
        *,
        lesson: str | None = None,
        base_reward: float | None = None,
        settings: CreditSettings | None = None,
        with_journal: bool = True,
    ) -> Explanation:
        """Why each lesson of a session got its credit; `base_reward` previews another grade."""
        settings = settings or self.settings
        data = self.data()
        row = self._row(session_id)
        session = self._reader.session(row)
        wanted, used = views.explain_inputs(session, lesson, base_reward, float(data.base[row]))
        current = self.posterior(settings)
        journal = self._journal(session.journal_path) if with_journal else (None, None)
        lessons, line, grades = self.library().by_id(), self._reader.session_line(row), self.grade_history(session_id)
        exp = views.explanation(session, row, line, data, current, used, lessons, journal, grades, wanted)
        return replace(exp, session=self._with_owed_grader(self._kind_named(exp.session), row))

    def missing_salience_count(self) -> int:
        self.data()
        return self._reader.missing_salience_count()


def _is_undo(note: str) -> bool:
    return grading.UNDO_NOTE.match(note) is not None


def _undo_in_force(event: GradeEvent | None) -> bool:
    return event is not None and _is_undo(event.note or "")


def _owed(score: SourceScore, history: Sequence[GradeRecord], walk: grading.UndoWalk) -> SourceScore:
    """A source's score whose latest event is an undo, as the grade still standing that holds it gave it
    (the undo logs it under the undoer's name: not their grade)."""
    latest = next((g for g in history if g.line == score.line), None)
    if latest is None or not _is_undo(latest.note or ""):
        return score
    owed = walk.attributed(history, score.source)
    if owed is None:
        return score
    return replace(score, grader=owed.grader, line=owed.line, timestamp=owed.timestamp)
