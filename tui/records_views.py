"""What the dashboard shows of sessions as gptme keeps them (docs/records.md): read models built in workers.

A session's record and reward sources (the Session detail's record panel and grade bar), its
transcript with each lesson's keyword hits, agreement between people and the other sources, and
the grading queue in the order in force. Each is a frozen value made from one Workspace read
under the source's lock (`WorkspaceSource.call`), so the screens only ever read them. A door to the
engine beside tui/source.py: the screens pass these functions their source, never a Workspace.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from lesson_credit.core.base.numbers import counted
from lesson_credit.core.library.journals import journal_changed
from lesson_credit.core.library.salience import salience_breakdowns
from lesson_credit.core.model.sources import HUMAN, JUDGE
from lesson_credit.core.reward_report import AgreementReport, GradingQueue, agreement_report, grading_queue
from lesson_credit.core.sessions.locate import locate
from lesson_credit.core.sessions.record_file import logged_judge, record_lines
from lesson_credit.core.sessions.transcript import transcript
from lesson_credit.core.views import SourceScore
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.highlights import highlights

if TYPE_CHECKING:
    from lesson_credit.tui.source import WorkspaceSource

Span = tuple[int, int]


@dataclass(frozen=True)
class SessionOutside:
    """A session's gptme-sessions record (as lines of plain text), its reward sources, and where its
    trajectory is (not read: the transcript view reads it when opened)."""

    session_id: str
    has_records: bool  # the workspace has a records file at all (else the panel stays hidden)
    record_lines: tuple[str, ...]  # empty: no record joins the session
    record_note: str | None  # why there is no record
    sources: tuple[SourceScore, ...]
    trajectory: str | None  # the trajectory's path, when one may be read
    trajectory_note: str | None  # why there is none
    priority: tuple[str, ...] = ()  # [rewards] priority: the first source with a score is in force
    words: tuple[tuple[str, float], ...] = ()  # gptme's grading words and their rewards ([outcomes])
    read_at: int | None = None  # the source's version it was read at (WriteQueue.expected_person)
    journal_changed: bool | None = None  # the journal's sha256 is not the one its session record logged (None: unknown)

    def score(self, source: str) -> float | None:
        return next((s.score for s in self.sources if s.source == source), None)

    @property
    def judge(self) -> float | None:
        return self.score(JUDGE)

    @property
    def person(self) -> float | None:
        return self.score(HUMAN)


def outside_view(source: WorkspaceSource, session_id: str) -> SessionOutside:
    return source.call(lambda ws: replace(_outside(ws, session_id), read_at=source.version))


def _outside(ws: Workspace, session_id: str) -> SessionOutside:
    sources = ws.reward_sources(session_id)
    file = ws.session_records.file()
    lines: tuple[str, ...] = ()
    note = file.note
    if note is not None and file.path is not None and file.path.is_relative_to(ws.root):  # the panel is 80 cells
        note = note.replace(str(file.path), str(file.path.relative_to(ws.root)))
    record = None
    if file.present:
        joined = ws.records()
        row = ws.session_table().session_ids.index(session_id)
        record = joined.record_at(row)
        if record is not None:  # (the judge's score logged since replaces the record's: said on its line)
            how, judge = joined.join.how.get(row), logged_judge(sources)
            lines = tuple(record_lines(record, joined.weights, how, outcomes=ws.config.outcomes, logged_judge=judge))
        note = None if record is not None else (note or "no gptme-sessions record joins this session")
    settings = ws.config.records
    named = record.trajectory_path if record is not None else None
    found = locate(ws.root, named, session_id, settings.trajectory_dirs, ws.allow_outside_journals)
    shown = found.shown if found.path is not None else None
    words = tuple(sorted(ws.config.outcomes.items()))
    # as `show` and `explain` warn: "changed since the session was recorded (sha256 differs)"
    changed, _ = journal_changed(ws.root, ws.session_record(session_id), ws.allow_outside_journals)
    return SessionOutside(
        session_id,
        file.present,
        lines,
        note,
        sources,
        shown,
        found.problem,
        ws.config.reward_priority,
        words,
        journal_changed=changed,
    )


@dataclass(frozen=True)
class TranscriptData:
    """A session's trajectory as one text, with every lesson's keyword hits in it."""

    session_id: str
    text: str | None  # None: no trajectory (see `note`)
    note: str | None
    heading: str  # path, format, messages, tool calls
    hits: tuple[Span, ...] = ()
    lesson_hits: dict[str, tuple[Span, ...]] = field(default_factory=dict)
    collapsed: int = 0
    expanded: bool = False


def transcript_data(source: WorkspaceSource, session_id: str, expand: bool = False) -> TranscriptData:
    """Read, normalise and lay out the session's trajectory; its lessons' keyword hits in the text."""
    return source.call(lambda ws: _transcript(ws, session_id, expand))


def _transcript(ws: Workspace, session_id: str, expand: bool) -> TranscriptData:
    found, problem = ws.trajectory_of(session_id)
    if found is None:
        return TranscriptData(session_id, None, problem or "no trajectory", "")
    shown = transcript(found, expand=expand)
    lessons = ws.library().by_id()
    injected = [credit.path for credit in ws.explain(session_id, with_journal=False).lessons]
    present = [(lid, lessons[lid].keywords) for lid in injected if lid in lessons]
    breakdowns = salience_breakdowns(shown.text, present)
    highlighted = highlights([(b.lesson_id, b) for b in breakdowns])  # within its budget
    by_lesson = {lesson: tuple(spans) for lesson, spans in highlighted.by_lesson.items()}
    hits = tuple(highlighted.spans)
    counts = f"{counted(len(found.messages), 'message')} · {counted(found.tool_calls, 'tool call')}"
    heading = f"{found.path} · {found.format} · {counts}"
    if found.skipped_lines:
        heading += f" · {counted(found.skipped_lines, 'line')} skipped"
    if found.truncated:
        heading += " · only the start of the file was read"
    if (note := highlighted.note()) is not None:
        heading += f" · {note}"
    return TranscriptData(session_id, shown.text, None, heading, hits, by_lesson, shown.collapsed, expand)


def agreement_view(source: WorkspaceSource, threshold: float) -> AgreementReport:
    return source.call(lambda ws: agreement_report(ws, None, threshold))


def queue_view(source: WorkspaceSource, order: str) -> tuple[int, GradingQueue]:
    """(the source's version it was read at, the queue): WriteQueue.graded_unread."""
    return source.call(lambda ws: (source.version, grading_queue(ws, order)))


def next_in_order(
    order: Sequence[str],
    after: str | None,
    expected: Callable[[str, float | None], float | None],
    touched: Collection[str],
    grade_of: Callable[[str], float | None],
) -> str | None:
    """The session after `after` in `order` (wrapping round, never `after` itself), skipping those
    this dashboard has queued a grade for (a queued undo back to pending leaves them in)."""
    if not order:
        return None
    start = order.index(after) + 1 if after in order else 0
    for session_id in [*order[start:], *order[:start]]:
        if session_id == after:
            continue
        if session_id in touched:
            value = expected(session_id, grade_of(session_id))
            if value is not None and not math.isnan(value):
                continue
        return session_id
    return None
