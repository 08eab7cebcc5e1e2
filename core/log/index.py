"""The log index: every event read so far, as columns (docs/format.md §5).

`LogIndex` grows as the log is read (a refresh only decodes the appended tail) and hands out `FoldData` snapshots
for the fold. Sessions are stored as columns, not objects (core/log/columns.py, which says how an index
loaded from the parsed-log cache reads its blocks)."""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence
from typing import Any, cast

import msgspec
import numpy as np
import numpy.typing as npt

from lesson_credit.core.base.ids import one_form
from lesson_credit.core.log import arm_names, events, scoring
from lesson_credit.core.log.arm_names import ArmNames
from lesson_credit.core.log.columns import Column, HeldChunk, Objects, RowMap, StoredChunk
from lesson_credit.core.log.events import (
    GRADE,
    INCLUDED,
    PRIOR,
    SESSION,
    Event,
    ExportEvent,
    GradeEvent,
    InvalidEvent,
    PriorEvent,
    RawEvent,
    RetireEvent,
    SelectionEvent,
    SessionColumns,
    SessionEvent,
    grader_name,
    is_session,
    normalize_ids,
    outcome_label,
    session_columns,
    to_event,
)
from lesson_credit.core.log.evidence import source_inputs
from lesson_credit.core.log.exports import Exports
from lesson_credit.core.log.lookup import IdChunk, SessionLookup, id_hash
from lesson_credit.core.log.prior_counts import PriorCounts
from lesson_credit.core.log.snapshot import BlockCache, Entries, FoldData, Graders
from lesson_credit.core.log.steps import Steps
from lesson_credit.core.log.store import LogProblem
from lesson_credit.core.model.sources import DEFAULT_INPUTS, RewardInputs, code_of

_SESSION_KINDS = frozenset({None, SESSION})  # no "type": a record in the published shape
NO_OFFSET = -1  # a session whose byte offset in the log is not known (a database store's)


def _in_order_of_appearance(wanted: set[Any], items: list[Any]) -> list[Any]:
    """The wanted items in the order they first appear in `items` (stops once all are found)."""
    ordered: list[Any] = []
    if wanted:
        remaining = set(wanted)
        for item in items:
            if item in remaining:
                ordered.append(item)
                remaining.discard(item)
                if not remaining:
                    break
    return ordered


class LogIndex(ArmNames):
    """Columns of a log read so far. Grows by `add()`/`add_raw()`/`add_many()`; never rewritten.

    Sessions are stored as columns, not objects: a million-session log would otherwise
    hold millions of Python objects. Numbers live in append-only numpy columns; per-session
    values in `Objects` (settled into tuples after a big read: the cyclic GC stops tracking a
    tuple whose items are all strings, numbers or None, while every full collection walks a
    list of a million items). `session(row)` rebuilds one event on demand.
    """

    def __init__(self) -> None:
        super().__init__()  # the arms: one per lesson, whatever Unicode form it was logged in (core/log/arm_names.py)
        self.session_ids: Objects[str] = Objects()
        self.session_times: Objects[str | None] = Objects()
        # few distinct values each, one object per value (a million equal strings otherwise)
        self.session_categories: Objects[str | None] = Objects(shared=True)
        self.session_journals: Objects[str | None] = Objects(shared=True)
        self.session_graders: Objects[str | None] = Objects(shared=True)
        self.session_strategies: Objects[str | None] = Objects(shared=True)
        self.session_floors: Objects[float | None] = Objects(shared=True)
        self.missing_salience: RowMap[tuple[int, ...]] = RowMap()  # row -> lesson positions
        self.propensities: RowMap[tuple[float | None, ...]] = RowMap()  # row -> per lesson
        self.during: RowMap[tuple[int, ...]] = RowMap()  # row -> positions of lessons included during the session
        self.outcome_labels: RowMap[str] = RowMap()  # row -> string outcome of a record without base_reward
        self.grades: Objects[tuple[int, GradeEvent]] = Objects()
        self.selections: Objects[tuple[int, SelectionEvent]] = Objects()
        self.retired: dict[str, int] = {}  # arm -> line of the retire event that retired it
        self.session_lines = Column(np.int64)
        self.session_offsets = Column(np.int64)  # byte offset of the record's line (NO_OFFSET: unknown)
        self.session_base = Column(np.float64)  # the record's own; NaN = pending
        self.session_published = Column(np.bool_)  # no "type": the published record shape
        self.session_source = Column(np.int8)  # the source of the record's own score (core.model.sources)
        self.session_start = Column(np.int64, [0])  # entries of session i: [start[i], start[i + 1])
        self.entry_arm = Column(np.int32)
        self.entry_salience = Column(np.float64)
        self.entry_session = Column(np.int32)
        # grades are few next to sessions, and added one at a time: plain arrays, copied by snapshot
        self.grade_rows = array("q")  # the graded session's row, -1 if unknown when read
        self.grade_base = array("d")
        self.grade_source = array("b")  # the reward source of each grade event, from its grader
        self.priors: dict[str, tuple[float, float, int]] = {}
        self.prior_rewards: dict[str, int] = {}
        # per arm, the sum of increment events (alpha, beta, n, rewards) in file order (docs/format.md §5.5)
        self.increments: dict[str, tuple[float, float, int, int]] = {}
        self.increment_steps = Steps()  # each event's (sessions before, arm, a, b), per arm it names
        self.prior_steps = Steps()  # each prior event's likewise (its start)
        self.prior_from: dict[str, int] = {}  # arm -> the line of the prior event its prior comes from
        self.prior_counts = PriorCounts()  # the sessions each imported file counted
        self.added_sessions = 0  # sessions other tools counted, as increments events say
        self.exports = Exports()  # what export-gptme wrote to other files, as far as the log knows
        self.problems: list[LogProblem] = []
        self.end = 0  # bytes of the log consumed
        self.lines = 0  # lines of the log consumed
        self.blocks = BlockCache()  # per-arm sums of blocks of sessions, reused across snapshots
        self.lookup = SessionLookup(self.session_ids)  # session id -> row
        self.selection_chunks: list[IdChunk] = []  # the cached blocks' selections, by the session they name
        self.parts: list[Any] = []  # the parsed-log cache's blocks this index starts with (core/log/cache.py)
        self._raw_arm: dict[str, int] = {}  # lesson path as written -> arm
        self._scored: scoring.Scored | None = None  # the last snapshot's scoring

    @property
    def n_sessions(self) -> int:
        return len(self.session_base)

    @property
    def prior_sessions(self) -> int:
        """The sessions counted by the files of the prior events in force, added up (docs/format.md §5.5)."""
        return self.prior_counts.total()

    def _strings(self) -> tuple[Objects[Any], ...]:
        return (
            self.session_ids,
            self.session_times,
            self.session_categories,
            self.session_journals,
            self.session_graders,
            self.session_strategies,
            self.session_floors,
        )

    def _numbers(self) -> tuple[Column, ...]:
        return (
            self.session_lines,
            self.session_offsets,
            self.session_base,
            self.session_published,
            self.session_source,
            self.session_start,
            self.entry_arm,
            self.entry_salience,
            self.entry_session,
        )

    def _marks(self) -> tuple[RowMap[Any], ...]:
        return (self.missing_salience, self.propensities, self.during, self.outcome_labels)

    def settle(self) -> None:
        """After reading a big stretch of log: what was added to the per-session columns becomes tuples."""
        for column in self._strings():
            column.settle()

    def row_of(self, session_id: str) -> int | None:
        """The row of a session id (None: no session has it)."""
        return self.lookup.row_of(session_id)

    def latest_selection(self, session_id: str) -> SelectionEvent | None:
        """The latest selection logged for a session id: those read into memory are scanned from the
        end, the cached blocks' found through their hash tables."""
        selections = self.selections
        for _, chunk in selections.reversed_chunks():
            if isinstance(chunk, StoredChunk):
                break
            for _, selection in reversed(selections.tail() if chunk is None else chunk.items()):
                if selection.session_id == session_id:
                    return selection
        digest = id_hash(session_id)
        for ids in reversed(self.selection_chunks):
            for position in sorted(ids.candidates(digest), reverse=True):
                selection = selections[position][1]
                if selection.session_id == session_id:
                    return selection
        return None

    def _add_session(self, line: int, raw: RawEvent, columns: SessionColumns, offset: int = NO_OFFSET) -> None:
        session_id = columns.session_id
        known = self.row_of(session_id)
        if known is not None:
            first = self.session_lines[known]
            self.problems.append(
                LogProblem(line, f"duplicate session {session_id!r} (first on line {first}; ignored)", session_id)
            )
            return
        if (why := self.room_for(columns.lesson_ids)) is not None:
            self.problems.append(LogProblem(line, f"session {session_id!r} names {why}; ignored", session_id))
            return
        row = self.n_sessions
        self.lookup.added(session_id, row)
        ids, times, categories, journals, graders, strategies, floors = self._strings()
        ids.append(session_id)
        self.session_lines.append(line)
        self.session_offsets.append(offset)
        times.append(raw.timestamp)
        self.session_base.append(math.nan if columns.base_reward is None else columns.base_reward)
        categories.append(raw.category)
        journals.append(raw.journal_path)
        grader = grader_name(raw.grader)
        graders.append(grader)
        strategies.append(raw.strategy)
        floors.append(raw.floor)
        self.session_published.append(raw.type is None)
        self.session_source.append(code_of(grader))
        label = outcome_label(raw)
        if label is not None:
            self.outcome_labels[row] = label
        if columns.missing_salience:
            self.missing_salience[row] = columns.missing_salience
        if columns.propensities is not None:
            self.propensities[row] = columns.propensities
        if columns.during:
            self.during[row] = columns.during
        arms = [self.arm(lesson_id) for lesson_id in columns.lesson_ids]
        self.entry_arm.extend(arms)
        self.entry_salience.extend(columns.saliences)
        self.entry_session.extend([row] * len(arms))
        self.session_start.append(len(self.entry_arm))

    def add_many(self, items: list[tuple[int, RawEvent]], offsets: Sequence[int] | None = None) -> list[LogProblem]:
        """Add decoded lines in order; returns the problems of lines that are not valid events.

        Between two prior events (the only kind that creates arms besides sessions), the
        ordinary session records go through `_add_sessions_fast` in one batch (column-wise
        comprehensions) and the grades and selections between them are added afterwards, in
        their own order; a grade then finds its session's row at once, which is where
        `snapshot` would have looked it up. If any session is unusual, the stretch is added
        one line at a time with the exact per-line checks. `offsets`: where each item's line
        starts in the log (None: not known).
        """
        problems: list[LogProblem] = []
        at = [NO_OFFSET] * len(items) if offsets is None else list(offsets)

        def add_one(i: int) -> None:
            line, raw = items[i]
            try:
                self.add_raw(line, raw, at[i])
            except InvalidEvent as exc:
                problems.append(LogProblem(line, str(exc)))

        kinds = [raw.type for _, raw in items]
        self.lookup.prefetch([raw.session_id for _, raw in items if raw.type == GRADE])
        bounds = [i for i, kind in enumerate(kinds) if kind == PRIOR]
        start = 0
        for stop in [*bounds, len(items)]:
            positions = [i for i in range(start, stop) if kinds[i] in _SESSION_KINDS]
            if positions and self._add_sessions_fast([items[i] for i in positions], [at[i] for i in positions]):
                for i in range(start, stop):
                    if kinds[i] not in _SESSION_KINDS:
                        add_one(i)
            else:
                for i in range(start, stop):
                    add_one(i)
            if stop < len(items):
                add_one(stop)
            start = stop + 1
        return problems

    def _add_sessions_fast(self, run: list[tuple[int, RawEvent]], offsets: list[int]) -> bool:
        """Add a run of session records column-wise if every one is ordinary (a new, unique string id;
        base_reward a number in [0, 1] or null; every lesson an object with a path and a salience in
        [0, 1]: what this tool writes); False to fall back to the exact per-line checks. Nothing changes
        before every check has passed; they lean on C-level work (a None salience makes array('d') raise)."""
        raws = [raw for _, raw in run]
        ids = [raw.session_id for raw in raws]
        if set(map(type, ids)) != {str} or "" in ids:
            return False
        first_row = self.n_sessions
        new_rows = dict(zip(cast(list[str], ids), range(first_row, first_row + len(ids)), strict=True))
        if len(new_rows) != len(ids) or (first_row and self.lookup.any_known(list(new_rows))):
            return False
        bases = [raw.base_reward for raw in raws]
        if msgspec.UNSET in bases:
            return False
        numbers = [b for b in bases if b is not None]
        if numbers and not (min(numbers) >= 0.0 and max(numbers) <= 1.0):  # type: ignore[type-var,operator]
            return False
        lessons = [raw.lessons for raw in raws]
        if None in lessons or max(map(len, lessons)) > events.MAX_SESSION_LESSONS:  # type: ignore[arg-type]
            return False
        try:
            paths = [entry.path for group in lessons for entry in group]  # type: ignore[union-attr]
            saliences = [entry.salience for group in lessons for entry in group]  # type: ignore[union-attr]
            salience = array("d", cast(list[float], saliences))  # a None raises TypeError
        except (AttributeError, TypeError):  # a plain string entry, or a lesson without a salience
            return False
        values = np.frombuffer(salience, dtype=np.float64)
        if len(values) and not (values.min() >= 0.0 and values.max() <= 1.0):  # NaN fails too
            return False
        raw_arm = self._raw_arm  # (only valid paths: when every path is in it, none is None or "")
        found = list(map(raw_arm.get, cast(list[str], paths)))
        unseen: list[Any] = []  # paths not seen before: arms in order of first appearance, once every check passed
        if None in found:
            distinct = set(paths)
            if None in distinct or "" in distinct:
                return False
            unseen = _in_order_of_appearance(distinct.difference(raw_arm), paths)
            lesson_ids = normalize_ids(cast(list[str], unseen))
            if "" in lesson_ids or len(self.arm_ids) + len(unseen) > arm_names.MAX_LOG_LESSONS:  # (line checks: why)
                return False
        counts = [len(group) for group in lessons]  # type: ignore[arg-type]
        if not self._add_marks(lessons, counts, first_row):  # (a line it refuses makes no arm: the per-line path)
            return False
        for path, lesson_id in zip(unseen, lesson_ids if unseen else [], strict=True):
            raw_arm[cast(str, path)] = self.arm(lesson_id)
        arms = np.array(list(map(raw_arm.__getitem__, cast(list[str], paths))) if unseen else found, dtype=np.int32)
        self.lookup.added_many(new_rows)
        folded = {grader: grader_name(grader) for grader in {raw.grader for raw in raws}}
        graders_of = [folded[raw.grader] for raw in raws]
        all_ids, times, categories, journals, graders, strategies, floors = self._strings()
        all_ids.extend(cast(list[str], ids))
        self.session_lines.extend([line for line, _ in run])
        self.session_offsets.extend(offsets)
        times.extend([raw.timestamp for raw in raws])
        self.session_base.extend([math.nan if b is None else b for b in bases])
        categories.extend([raw.category for raw in raws])
        journals.extend([raw.journal_path for raw in raws])
        graders.extend(graders_of)
        strategies.extend([raw.strategy for raw in raws])
        floors.extend([raw.floor for raw in raws])
        self.session_published.extend([raw.type is None for raw in raws])
        codes = {grader: code_of(grader) for grader in set(graders_of)}
        self.session_source.extend(list(map(codes.__getitem__, graders_of)))
        self.entry_arm.extend(arms)
        self.entry_salience.extend(salience)
        sizes = np.array(counts, dtype=np.int64)
        self.entry_session.extend(np.repeat(np.arange(first_row, first_row + len(ids), dtype=np.int32), sizes))
        self.session_start.extend(self.session_start[-1] + np.cumsum(sizes))
        return True

    def _add_marks(self, lessons: list[Any], counts: list[int], first_row: int) -> bool:
        """The lessons' propensities and "during" inclusions of a run of records from `first_row`;
        False (nothing kept) when an inclusion is not a known word: the per-line path reports it."""
        # one pass finds the entries that mark a propensity or an inclusion (most records mark none)
        if not [1 for group in lessons for e in group if e.propensity is not None or e.included is not None]:
            return True
        propensities = [entry.propensity for group in lessons for entry in group]
        included = [entry.included for group in lessons for entry in group]
        if not set(included) <= {None, *INCLUDED}:
            return False
        if "during" in included:
            for row, chunk in _rows_of(included, counts, first_row):
                if "during" in chunk:
                    self.during[row] = tuple(i for i, value in enumerate(chunk) if value == "during")
        if propensities.count(None) != len(propensities):
            for row, chunk in _rows_of(propensities, counts, first_row):
                if any(p is not None for p in chunk):
                    self.propensities[row] = tuple(chunk)
        return True

    def part(self) -> dict[str, Any] | None:
        """What this index read of a later stretch of the log, as plain values for `add_part` (a child process's
        read, core/log/halves.py); None when the stretch held more than sessions, grades and selections (an
        increments event naming no arm, an export too) or had a problem (then read again in order)."""
        if self.problems or self.priors or self.increments or self.added_sessions or self.retired or self.exports:
            return None
        return {
            "arm_ids": self.logged_ids(),
            "raw_arm": self._raw_arm,
            "strings": [column.between(0, len(column)) for column in self._strings()],
            "numbers": [column.view() for column in self._numbers()],
            "marks": [dict(mark.items()) for mark in self._marks()],
            "grades": (list(self.grades), self.grade_rows, self.grade_base, self.grade_source),
            "selections": list(self.selections),
            "end": self.end,
            "lines": self.lines,
        }

    def add_part(self, part: dict[str, Any]) -> bool:
        """Append the `part()` of an index that read the log from where this one ends (its lines
        numbered from 1): the same columns, arms and rows as reading on would give (arms new to
        this index in the order the stretch first names them). False, nothing changed, when the
        stretch repeats a session id read here, or names lessons past MAX_LOG_LESSONS with this index's: reading it
        on reports the duplicates, or the events past it."""
        ids = part["strings"][0]
        first_row, shift = self.n_sessions, self.lines
        if (first_row and ids and self.lookup.any_known(list(ids))) or self.room_for(part["arm_ids"]) is not None:
            return False
        arms = np.array([self.arm(lesson_id) for lesson_id in part["arm_ids"]], dtype=np.int32)
        for path, arm in part["raw_arm"].items():
            self._raw_arm.setdefault(path, int(arms[arm]))
        self.lookup.added_many(dict(zip(ids, range(first_row, first_row + len(ids)), strict=True)))
        for column, values in zip(self._strings(), part["strings"], strict=True):
            column.settle()  # the stretch's values as they came (shared there): a chunk of their own, not copied
            column.add_chunk(HeldChunk(values))
        lines, offsets, base, published, source, start, entry_arm, salience, entry_session = part["numbers"]
        self.session_lines.extend(lines + shift)
        self.session_offsets.extend(offsets)
        self.session_base.extend(base)
        self.session_published.extend(published)
        self.session_source.extend(source)
        self.session_start.extend(start[1:] + self.session_start[-1])
        self.entry_arm.extend(arms[entry_arm])
        self.entry_salience.extend(salience)
        self.entry_session.extend(entry_session + first_row)
        for mark, values in zip(self._marks(), part["marks"], strict=True):
            for row, value in values.items():
                mark[row + first_row] = value
        grades, rows, grade_base, grade_source = part["grades"]
        for (line, grade), row in zip(grades, rows, strict=True):
            self.grades.append((line + shift, grade))
            found = row + first_row if row >= 0 else self.row_of(grade.session_id)
            self.grade_rows.append(-1 if found is None else found)
        self.grade_base.extend(grade_base)
        self.grade_source.extend(grade_source)
        self.selections.extend([(line + shift, selection) for line, selection in part["selections"]])
        self.end = part["end"]
        self.lines += part["lines"]
        return True

    def add_raw(self, line: int, raw: RawEvent, offset: int = NO_OFFSET) -> None:
        """Add a decoded line (which starts at byte `offset` of the log); InvalidEvent when it is not a valid event."""
        if is_session(raw):
            self._add_session(line, raw, session_columns(raw), offset)
        else:
            self.add(line, to_event(raw))

    def add(self, line: int, event: Event) -> None:
        if isinstance(event, SessionEvent):
            raw = RawEvent(
                type=None if event.published_shape else "session",
                session_id=event.session_id,
                timestamp=event.timestamp,
                journal_path=event.journal_path,
                category=event.category,
                grader=event.grader,
                strategy=event.strategy,
                floor=event.floor,
            )
            columns = SessionColumns(
                event.session_id,
                event.base_reward,
                list(event.lesson_ids),
                list(event.saliences),
                event.missing_salience,
                event.propensities,
                event.during,
            )
            self._add_session(line, raw, columns)
        elif isinstance(event, GradeEvent):
            self.grades.append((line, event))
            row = self.row_of(event.session_id)
            self.grade_rows.append(-1 if row is None else row)
            self.grade_base.append(math.nan if event.base_reward is None else event.base_reward)  # NaN: retracted
            self.grade_source.append(code_of(event.grader))
        elif isinstance(event, SelectionEvent):
            self.selections.append((line, event))
        elif isinstance(event, RetireEvent):
            for arm in event.arms:
                self.retired.setdefault(arm, line)  # as written: `Reader.retired` shows it as its arm
        elif isinstance(event, PriorEvent) and (why := self.room_for(event.arms)) is not None:
            raise InvalidEvent(f"{'increments' if event.increments else 'prior'} event naming {why}")
        elif isinstance(event, PriorEvent) and event.increments:
            for lesson_id, (a, b, n) in event.arms.items():
                key = one_form(lesson_id)  # one key per lesson, whatever its form
                sum_a, sum_b, sum_n, sum_r = self.increments.get(key, (0.0, 0.0, 0, 0))
                self.increments[key] = (sum_a + a, sum_b + b, sum_n + n, sum_r + event.rewards.get(lesson_id, 0))
                self.increment_steps.add(self.n_sessions, self.arm(lesson_id), a, b)
            self.added_sessions += event.sessions
            if event.seen is not None:
                self.exports.seen(line, event.seen, event.sessions)
        elif isinstance(event, PriorEvent):
            before = set(self.prior_from.values())
            for lesson_id, prior in event.arms.items():
                key = one_form(lesson_id)  # one key per lesson, whatever its form
                self.priors[key] = prior
                self.prior_steps.add(self.n_sessions, self.arm(lesson_id), prior[0], prior[1])
                self.prior_rewards[key] = event.rewards.get(lesson_id, 0)
                self.prior_from[key] = line
            self.prior_counts.imported(line, event.sessions, event.created, before, set(self.prior_from.values()))
        elif isinstance(event, ExportEvent):  # no evidence: the base of a later import of that file
            self.exports.exported(line, event.numbers)

    def session(self, row: int, lessons: bool = True) -> SessionEvent:
        """The session event at a row, rebuilt from the columns (`lessons=False`: without anything of its lessons)."""
        start, stop = int(self.session_start[row]), int(self.session_start[row + 1 if lessons else row])
        base = float(self.session_base[row])
        arm_ids = self.arm_ids
        return SessionEvent(
            session_id=self.session_ids[row],
            timestamp=self.session_times[row],
            base_reward=None if math.isnan(base) else base,
            lesson_ids=tuple(arm_ids[a] for a in self.entry_arm[start:stop].tolist()),
            saliences=tuple(self.entry_salience[start:stop].tolist()),
            missing_salience=(self.missing_salience.get(row) or ()) if lessons else (),
            propensities=self.propensities.get(row) if lessons else None,
            during=(self.during.get(row) or ()) if lessons else (),
            journal_path=self.session_journals[row],
            category=self.session_categories[row],
            grader=self.session_graders[row],
            strategy=self.session_strategies[row],
            floor=self.session_floors[row],
            published_shape=bool(self.session_published[row]),
        )

    def snapshot(self, outcomes: dict[str, float] | None = None, rewards: RewardInputs = DEFAULT_INPUTS) -> FoldData:
        """Read-only arrays of everything read so far, with each session's score in force: per reward
        source its latest event (core.model.sources), the first source of `rewards.priority` with one.
        `outcomes` maps string outcomes of records without base_reward to rewards (unmapped: pending)."""
        rows = np.array(self.grade_rows, dtype=np.int64)
        orphan: list[LogProblem] = []
        unknown = np.flatnonzero(rows < 0)
        if len(unknown):  # the grade came before its session (or names none): look it up now
            grades = self.grades
            for position in unknown.tolist():
                line, grade = grades[position]
                found = self.row_of(grade.session_id)
                row = -1 if found is None else found
                rows[position] = row
                if row < 0:
                    orphan.append(LogProblem(line, f"grade for unknown session {grade.session_id!r}", grade.session_id))
        log = source_inputs(
            self.outcome_labels.items(),
            outcomes or {},
            rewards.external,
            (self.session_base.view(), self.session_source.view()),
            (rows, np.array(self.grade_base, dtype=np.float64), np.array(self.grade_source, dtype=np.int8)),
        )
        # as source_scores, densely only where sessions have evidence besides their own score, and after our
        # own append only for the sessions it named (core/log/scoring.py)
        if self._scored is not None:  # a block whose rewards changed in a few rows is patched (core/log/blockpatch.py)
            self.blocks.earlier = self._scored.result[0]
        self._scored = scoring.rescored(self._scored, log, rewards)
        base, scores, applied, applied_rows = self._scored.result
        n_arms = len(self.arm_ids)
        prior_alpha = np.full(n_arms, np.nan)
        prior_beta = np.full(n_arms, np.nan)
        prior_n = np.zeros(n_arms, dtype=np.int64)
        for lesson_id, (a, b, n) in self.priors.items():
            index = self.arm_index[lesson_id]
            prior_alpha[index], prior_beta[index], prior_n[index] = a, b, n
        prior_rewards = np.zeros(n_arms, dtype=np.int64)
        for lesson_id, count in self.prior_rewards.items():
            prior_rewards[self.arm_index[lesson_id]] = count
        added_alpha = np.zeros(n_arms)
        added_beta = np.zeros(n_arms)
        for lesson_id, (a, b, n, r) in self.increments.items():
            index = self.arm_index[lesson_id]
            added_alpha[index], added_beta[index] = a, b
            prior_n[index] += n
            prior_rewards[index] += r
        entries = Entries(
            self.entry_arm, self.entry_salience, self.entry_session, self.session_start, len(base), len(self.entry_arm)
        )
        return FoldData(
            arm_ids=tuple(self.arm_ids),
            entries=entries,
            base=base,
            grader_source=Graders(
                self.session_graders, self.session_published.view(), applied, applied_rows, self.grades, scores
            ),
            prior_alpha=prior_alpha,
            prior_beta=prior_beta,
            prior_n=prior_n,
            prior_rewards=prior_rewards,
            added_alpha=added_alpha,
            added_beta=added_beta,
            added_after=self.increment_steps.arrays(),
            prior_after=self.prior_steps.arrays(),
            counted_sessions=self.prior_sessions + self.added_sessions,
            problems=tuple(self.problems) + tuple(orphan),
            blocks=self.blocks,
            sources=scores,
            during=self.during_entries(),
            evidence=log,
        )

    def during_entries(self) -> npt.NDArray[np.int64]:
        """The entries (positions in the entry columns) of lessons included during their session."""
        starts = self.session_start
        found = [int(starts[row]) + i for row, positions in self.during.items() for i in positions]
        return np.array(sorted(found), dtype=np.int64)


def _rows_of(values: list[Any], counts: list[int], first_row: int) -> Iterator[tuple[int, list[Any]]]:
    """(row, its slice of `values`) for consecutive groups of `counts[i]` items, rows from `first_row`."""
    offset = 0
    for row, count in enumerate(counts, start=first_row):
        yield row, values[offset : offset + count]
        offset += count
