"""Posteriors as a pure fold of the event log (SPEC 5-6), vectorised over integer arm indices.

`LogIndex` turns events into columns as they are read (incrementally: a refresh only
decodes the appended tail). `fold()` is a pure function of those columns and the credit
settings, so a what-if, a regrade or a preview is just another call with other arguments.
"""

from __future__ import annotations

import math
from array import array
from dataclasses import dataclass, field, replace
from functools import cached_property
from itertools import accumulate
from typing import Any, cast

import msgspec
import numpy as np
import numpy.typing as npt

from core import credit as credit_mod
from core.events import (
    PRIOR,
    SESSION,
    Event,
    GradeEvent,
    InvalidEvent,
    PriorEvent,
    RawEvent,
    SelectionEvent,
    SessionColumns,
    SessionEvent,
    is_session,
    normalize_ids,
    session_columns,
    to_event,
)
from core.store import LogProblem

_SESSION_KINDS = frozenset({None, SESSION})  # no "type": a record in the published shape

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CreditSettings:
    """How evidence is counted. Validated on construction, so a bad config fails early."""

    strategy: str = credit_mod.DEFAULT_STRATEGY
    floor: float = credit_mod.DEFAULT_FLOOR
    decay: float = 1.0  # gamma in (0, 1]; 1 means no decay
    prior_alpha: float = 1.0
    prior_beta: float = 1.0

    def __post_init__(self) -> None:
        credit_mod.check_strategy(self.strategy)
        credit_mod.check_unit(self.floor, "floor")
        if not (0.0 < self.decay <= 1.0):
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        for name in ("prior_alpha", "prior_beta"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number, got {value!r}")

    def with_(self, **changes: object) -> CreditSettings:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})  # type: ignore[arg-type]


@dataclass
class LogIndex:
    """Columns of a log read so far. Grows by `add()`/`add_raw()`; never rewritten.

    Sessions are stored as columns, not objects: a million-session log would otherwise
    hold millions of Python objects. `session(row)` rebuilds one event on demand.
    """

    arm_ids: list[str] = field(default_factory=list)
    arm_index: dict[str, int] = field(default_factory=dict)
    session_ids: list[str] = field(default_factory=list)
    session_lines: list[int] = field(default_factory=list)
    session_times: list[str | None] = field(default_factory=list)
    session_base: array[float] = field(default_factory=lambda: array("d"))  # the record's own; NaN = pending
    session_categories: list[str | None] = field(default_factory=list)
    session_journals: list[str | None] = field(default_factory=list)
    session_graders: list[str | None] = field(default_factory=list)
    session_strategies: list[str | None] = field(default_factory=list)
    session_floors: list[float | None] = field(default_factory=list)
    session_published: list[bool] = field(default_factory=list)
    missing_salience: dict[int, tuple[int, ...]] = field(default_factory=dict)  # row -> lesson positions
    propensities: dict[int, tuple[float | None, ...]] = field(default_factory=dict)  # row -> per lesson
    entry_arm: array[int] = field(default_factory=lambda: array("i"))
    entry_salience: array[float] = field(default_factory=lambda: array("d"))
    session_start: array[int] = field(default_factory=lambda: array("q", [0]))
    grades: list[tuple[int, GradeEvent]] = field(default_factory=list)
    grade_rows: list[int] = field(default_factory=list)  # the graded session's row, -1 if unknown when read
    selections: list[tuple[int, SelectionEvent]] = field(default_factory=list)
    priors: dict[str, tuple[float, float, int]] = field(default_factory=dict)
    prior_rewards: dict[str, int] = field(default_factory=dict)
    problems: list[LogProblem] = field(default_factory=list)
    end: int = 0  # bytes of the log consumed
    lines: int = 0  # lines of the log consumed
    _raw_arm: dict[str, int] = field(default_factory=dict, repr=False)  # lesson path as written -> arm
    _session_index: dict[str, int] | None = field(default=None, repr=False)

    @property
    def session_index(self) -> dict[str, int]:
        """Session id -> row. Built on first use: a status from the cache never needs it."""
        if self._session_index is None:
            self._session_index = {sid: row for row, sid in enumerate(self.session_ids)}
        return self._session_index

    @property
    def n_sessions(self) -> int:
        return len(self.session_ids)

    def arm(self, lesson_id: str) -> int:
        index = self.arm_index.get(lesson_id)
        if index is None:
            index = self.arm_index[lesson_id] = len(self.arm_ids)
            self.arm_ids.append(lesson_id)
        return index

    def _add_session(self, line: int, raw: RawEvent, columns: SessionColumns) -> None:
        session_id = columns.session_id
        if session_id in self.session_index:
            first = self.session_lines[self.session_index[session_id]]
            self.problems.append(
                LogProblem(line, f"duplicate session {session_id!r} (first on line {first}; ignored)", session_id)
            )
            return
        row = len(self.session_ids)
        self.session_index[session_id] = row  # (builds the index if a cache left it unbuilt)
        self.session_ids.append(session_id)
        self.session_lines.append(line)
        self.session_times.append(raw.timestamp)
        self.session_base.append(math.nan if columns.base_reward is None else columns.base_reward)
        self.session_categories.append(raw.category)
        self.session_journals.append(raw.journal_path)
        self.session_graders.append(raw.grader)
        self.session_strategies.append(raw.strategy)
        self.session_floors.append(raw.floor)
        self.session_published.append(raw.type is None)
        if columns.missing_salience:
            self.missing_salience[row] = columns.missing_salience
        if columns.propensities is not None:
            self.propensities[row] = columns.propensities
        get = self.arm_index.get
        arms = [get(lesson_id) for lesson_id in columns.lesson_ids]
        if None in arms:
            arms = [self.arm(lesson_id) for lesson_id in columns.lesson_ids]
        self.entry_arm.extend(arms)  # type: ignore[arg-type]
        self.entry_salience.extend(columns.saliences)
        self.session_start.append(len(self.entry_arm))

    def add_many(self, items: list[tuple[int, RawEvent]]) -> list[LogProblem]:
        """Add decoded lines in order; returns the problems of lines that are not valid events.

        Between two prior events (the only kind that creates arms besides sessions), the
        ordinary session records go through `_add_sessions_fast` in one batch (column-wise
        comprehensions) and the grades and selections between them are added afterwards, in
        their own order; a grade then finds its session's row at once, which is where
        `snapshot` would have looked it up. If any session is unusual, the stretch is added
        one line at a time with the exact per-line checks.
        """
        problems: list[LogProblem] = []

        def add_one(line: int, raw: RawEvent) -> None:
            try:
                self.add_raw(line, raw)
            except InvalidEvent as exc:
                problems.append(LogProblem(line, str(exc)))

        kinds = [raw.type for _, raw in items]
        bounds = [i for i, kind in enumerate(kinds) if kind == PRIOR]
        start = 0
        for stop in [*bounds, len(items)]:
            stretch = items[start:stop]
            sessions = [item for item, kind in zip(stretch, kinds[start:stop], strict=True) if kind in _SESSION_KINDS]
            if sessions and self._add_sessions_fast(sessions):
                for line, raw in stretch:
                    if raw.type not in _SESSION_KINDS:
                        add_one(line, raw)
            else:
                for line, raw in stretch:
                    add_one(line, raw)
            if stop < len(items):
                add_one(*items[stop])
            start = stop + 1
        return problems

    def _add_sessions_fast(self, run: list[tuple[int, RawEvent]]) -> bool:
        """Add a run of session records column-wise if every one is ordinary; False to fall back.

        Ordinary: a new, unique string id; base_reward given (a number in [0, 1] or null);
        every lesson an object with a path and a salience in [0, 1]. That is what this tool
        writes, so a big log takes this path; everything else keeps its exact per-line checks.
        Nothing is changed before every check has passed. The checks lean on C-level work:
        a None among the saliences makes array('d') raise, a None or empty path shows up
        among the distinct paths.
        """
        raws = [raw for _, raw in run]
        ids = [raw.session_id for raw in raws]
        if not all(type(sid) is str and sid for sid in ids):
            return False
        first_row = len(self.session_ids)
        new_rows = dict(zip(cast(list[str], ids), range(first_row, first_row + len(ids)), strict=True))
        if len(new_rows) != len(ids) or (first_row and not new_rows.keys().isdisjoint(self.session_index)):
            return False
        bases = [raw.base_reward for raw in raws]
        if msgspec.UNSET in bases:
            return False
        numbers = [b for b in bases if b is not None]
        if numbers and not (min(numbers) >= 0.0 and max(numbers) <= 1.0):  # type: ignore[type-var,operator]
            return False
        lessons = [raw.lessons for raw in raws]
        if None in lessons:
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
        distinct = dict.fromkeys(paths)
        if None in distinct or "" in distinct:
            return False
        unseen = [path for path in distinct if path not in self._raw_arm]
        if unseen:  # paths not seen before get arms in order of first appearance
            lesson_ids = normalize_ids(cast(list[str], unseen))
            if "" in lesson_ids:
                return False
            for path, lesson_id in zip(unseen, lesson_ids, strict=True):
                self._raw_arm[cast(str, path)] = self.arm(lesson_id)
        arms = array("i", map(self._raw_arm.__getitem__, cast(list[str], paths)))
        propensities = [entry.propensity for group in lessons for entry in group]  # type: ignore[union-attr]
        counts = [len(group) for group in lessons]  # type: ignore[arg-type]
        if propensities.count(None) != len(propensities):
            offset = 0
            for row, count in enumerate(counts, start=first_row):
                chunk = propensities[offset : offset + count]
                offset += count
                if any(p is not None for p in chunk):
                    self.propensities[row] = tuple(chunk)
        if self._session_index is not None:
            self._session_index.update(new_rows)
        self.session_ids.extend(cast(list[str], ids))
        self.session_lines.extend([line for line, _ in run])
        self.session_times.extend([raw.timestamp for raw in raws])
        self.session_base.extend(array("d", [math.nan if b is None else b for b in bases]))  # type: ignore[misc]
        self.session_categories.extend([raw.category for raw in raws])
        self.session_journals.extend([raw.journal_path for raw in raws])
        self.session_graders.extend([raw.grader for raw in raws])
        self.session_strategies.extend([raw.strategy for raw in raws])
        self.session_floors.extend([raw.floor for raw in raws])
        self.session_published.extend([raw.type is None for raw in raws])
        self.entry_arm.extend(arms)
        self.entry_salience.extend(salience)
        self.session_start.extend(array("q", accumulate(counts, initial=self.session_start[-1]))[1:])
        return True

    def add_raw(self, line: int, raw: RawEvent) -> None:
        """Add a decoded line; raises InvalidEvent when it is not a valid event."""
        if is_session(raw):
            self._add_session(line, raw, session_columns(raw))
        else:
            self.add(line, to_event(raw))

    def add(self, line: int, event: Event) -> None:
        if isinstance(event, SessionEvent):
            raw = RawEvent(
                type="session",
                session_id=event.session_id,
                timestamp=event.timestamp,
                journal_path=event.journal_path,
                category=event.category,
                grader=event.grader,
                strategy=event.strategy,
                floor=event.floor,
            )
            if event.published_shape:
                raw.type = None
            columns = SessionColumns(
                event.session_id,
                event.base_reward,
                list(event.lesson_ids),
                list(event.saliences),
                event.missing_salience,
                event.propensities,
            )
            self._add_session(line, raw, columns)
        elif isinstance(event, GradeEvent):
            self.grades.append((line, event))
            self.grade_rows.append(self.session_index.get(event.session_id, -1))
        elif isinstance(event, SelectionEvent):
            self.selections.append((line, event))
        elif isinstance(event, PriorEvent):
            for lesson_id, prior in event.arms.items():
                self.arm(lesson_id)
                self.priors[lesson_id] = prior
                self.prior_rewards[lesson_id] = event.rewards.get(lesson_id, 0)

    def session(self, row: int) -> SessionEvent:
        """The session event at a row, rebuilt from the columns."""
        start, stop = self.session_start[row], self.session_start[row + 1]
        base = self.session_base[row]
        return SessionEvent(
            session_id=self.session_ids[row],
            timestamp=self.session_times[row],
            base_reward=None if math.isnan(base) else base,
            lesson_ids=tuple(self.arm_ids[a] for a in self.entry_arm[start:stop]),
            saliences=tuple(self.entry_salience[start:stop]),
            missing_salience=self.missing_salience.get(row, ()),
            propensities=self.propensities.get(row),
            journal_path=self.session_journals[row],
            category=self.session_categories[row],
            grader=self.session_graders[row],
            strategy=self.session_strategies[row],
            floor=self.session_floors[row],
            published_shape=self.session_published[row],
        )

    def snapshot(self) -> FoldData:
        """Immutable arrays of everything read so far, with each session's latest grade applied."""
        n_sessions = self.n_sessions
        base = np.frombuffer(self.session_base, dtype=np.float64, count=n_sessions).copy()
        grader_of: dict[int, str] = {}
        orphan: list[LogProblem] = []
        for (line, grade), row in zip(self.grades, self.grade_rows, strict=True):
            if row < 0:  # the grade came before its session (or names none)
                row = self.session_index.get(grade.session_id, -1)
            if row < 0:
                orphan.append(LogProblem(line, f"grade for unknown session {grade.session_id!r}", grade.session_id))
                continue
            base[row] = grade.base_reward
            grader_of[row] = grade.grader
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
        entries = len(self.entry_arm)
        session_start = np.frombuffer(self.session_start, dtype=np.int64, count=n_sessions + 1).copy()
        return FoldData(
            arm_ids=tuple(self.arm_ids),
            entry_arm=np.frombuffer(self.entry_arm, dtype=np.int32, count=entries).copy(),
            entry_salience=np.frombuffer(self.entry_salience, dtype=np.float64, count=entries).copy(),
            entry_session=np.repeat(np.arange(n_sessions, dtype=np.int32), np.diff(session_start)),
            session_start=session_start,
            base=base,
            grader_source=(self.session_graders, self.session_published, grader_of),
            prior_alpha=prior_alpha,
            prior_beta=prior_beta,
            prior_n=prior_n,
            prior_rewards=prior_rewards,
            problems=tuple(self.problems) + tuple(orphan),
        )


@dataclass(frozen=True)
class FoldData:
    """What the fold needs, as arrays. Shared read-only with the UI."""

    arm_ids: tuple[str, ...]
    entry_arm: npt.NDArray[np.int32]
    entry_salience: FloatArray
    entry_session: npt.NDArray[np.int32]
    session_start: IntArray  # entries of session i are [start[i], start[i+1])
    base: FloatArray  # effective base reward per session (latest grade); NaN = pending
    grader_source: tuple[list[str | None], list[bool], dict[int, str]] = field(repr=False, compare=False)
    prior_alpha: FloatArray  # NaN where no prior event set the arm's start
    prior_beta: FloatArray
    prior_n: IntArray
    prior_rewards: IntArray
    problems: tuple[LogProblem, ...] = ()

    @property
    def n_arms(self) -> int:
        return len(self.arm_ids)

    @property
    def n_sessions(self) -> int:
        return len(self.base)

    @cached_property
    def graders(self) -> tuple[str | None, ...]:
        """Who gave each session its grade in force (None: pending). Built on first use."""
        recorded, published, latest = self.grader_source
        n = self.n_sessions
        out: list[str | None] = [
            None if b != b else (g or ("imported" if p else "heuristic"))
            for b, g, p in zip(self.base.tolist(), recorded[:n], published[:n], strict=True)
        ]
        for row, grader in latest.items():
            out[row] = grader
        return tuple(out)

    @cached_property
    def stats(self) -> ArmStats:
        """Per-arm sums under this snapshot's grades (computed once, then shared by what-ifs)."""
        return arm_stats(self, self.base)

    def with_base(self, base: FloatArray) -> FoldData:
        return replace(self, base=base)


@dataclass(frozen=True)
class Posterior:
    """Per-arm Beta posterior after a fold. Arrays are indexed like `arm_ids`.

    `rewarded` and `last_session` are only needed for the state file and the status table,
    so they are computed on first use rather than on every (what-if, preview) fold.
    """

    arm_ids: tuple[str, ...]
    alpha: FloatArray
    beta: FloatArray
    n: IntArray
    settings: CreditSettings
    graded_sessions: int
    data: FoldData = field(repr=False, compare=False)
    base: FloatArray = field(repr=False, compare=False)  # the per-session rewards folded

    @property
    def mean(self) -> FloatArray:
        result: FloatArray = self.alpha / (self.alpha + self.beta)
        return result

    def index(self) -> dict[str, int]:
        return {arm: i for i, arm in enumerate(self.arm_ids)}

    @cached_property
    def rewarded(self) -> IntArray:
        """Graded sessions whose credited reward exceeded 0.5 (gptme's total_rewards)."""
        data, graded = self.data, ~np.isnan(self.base)
        rows = graded[data.entry_session]
        w = credit_mod.weight(data.entry_salience[rows], self.settings.floor)
        credited = credit_mod.credited_reward(self.base[data.entry_session[rows]], w, self.settings.strategy)
        counts = np.bincount(data.entry_arm[rows][credited > 0.5], minlength=data.n_arms)
        result: IntArray = data.prior_rewards + counts.astype(np.int64)
        return result

    @cached_property
    def last_session(self) -> IntArray:
        """Row of each arm's latest graded session, -1 if none."""
        data = self.data
        last = np.full(data.n_arms, -1, dtype=np.int64)
        graded = ~np.isnan(self.base)[data.entry_session]
        np.maximum.at(last, data.entry_arm[graded], data.entry_session[graded].astype(np.int64))
        return last


def _sum_by_arm(arms: npt.NDArray[np.int32], weights: npt.NDArray[Any], n_arms: int) -> FloatArray:
    return np.bincount(arms, weights=weights, minlength=n_arms).astype(np.float64, copy=False)


@dataclass(frozen=True)
class ArmStats:
    """Per-arm sums over graded sessions. Without decay every strategy's posterior is a linear
    function of these, so a what-if over strategy or floor costs O(arms), not O(entries)."""

    n: FloatArray  # graded sessions the arm was injected in
    sum_base: FloatArray  # sum of base rewards
    sum_base_salience: FloatArray  # sum of base * salience
    sum_salience: FloatArray  # sum of salience
    graded_sessions: int


def arm_stats(data: FoldData, base: FloatArray) -> ArmStats:
    n_arms, arms = data.n_arms, data.entry_arm
    graded_rows = ~np.isnan(base)
    entry_base = np.where(graded_rows, base, 0.0)[data.entry_session]  # 0 for pending
    graded = graded_rows[data.entry_session]
    return ArmStats(
        n=_sum_by_arm(arms, graded, n_arms),
        sum_base=_sum_by_arm(arms, entry_base, n_arms),
        sum_base_salience=_sum_by_arm(arms, entry_base * data.entry_salience, n_arms),
        sum_salience=_sum_by_arm(arms, data.entry_salience * graded, n_arms),
        graded_sessions=int(graded_rows.sum()),
    )


def fold(data: FoldData, settings: CreditSettings, base: FloatArray | None = None) -> Posterior:
    """Fold the whole log under `settings`; `base` overrides the per-session rewards (what-if).

    With w = floor + (1 - floor) * salience, the sums of w*base and of w over an arm's sessions
    are floor*sum(base) + (1-floor)*sum(base*salience) and floor*n + (1-floor)*sum(salience);
    seed, evidence and uniform are each a line in those (SPEC 5). Decay weighs every session
    differently, so it takes the entry-by-entry path.
    """
    session_base = data.base if base is None else base
    a0, b0 = settings.prior_alpha, settings.prior_beta
    start_alpha = np.where(np.isnan(data.prior_alpha), a0, data.prior_alpha)
    start_beta = np.where(np.isnan(data.prior_beta), b0, data.prior_beta)
    stats = data.stats if base is None else arm_stats(data, session_base)
    strategy, floor = settings.strategy, settings.floor
    if settings.decay < 1.0 and stats.graded_sessions:
        # Before each graded session every arm moves toward the prior by gamma, so an
        # increment from the t-th of T graded sessions is worth gamma**(T - t) at the end.
        arms, n_arms, total = data.entry_arm, data.n_arms, stats.graded_sessions
        graded_rows = ~np.isnan(session_base)
        entry_base = np.where(graded_rows, session_base, 0.0)[data.entry_session]
        w = credit_mod.weight(data.entry_salience, floor)
        d_alpha, d_beta = credit_mod.credit(entry_base, w, strategy)
        rank = np.cumsum(graded_rows)
        factor = (
            settings.decay ** (total - rank[data.entry_session]).astype(np.float64) * graded_rows[data.entry_session]
        )
        shrink = settings.decay**total
        alpha = a0 + shrink * (start_alpha - a0) + _sum_by_arm(arms, d_alpha * factor, n_arms)
        beta = b0 + shrink * (start_beta - b0) + _sum_by_arm(arms, d_beta * factor, n_arms)
    elif strategy == "uniform":  # alpha += base, beta += 1 - base
        alpha = start_alpha + stats.sum_base
        beta = start_beta + stats.n - stats.sum_base
    else:
        sum_wb = floor * stats.sum_base + (1.0 - floor) * stats.sum_base_salience
        alpha = start_alpha + sum_wb
        if strategy == "seed":  # alpha += base*w, beta += 1 - base*w
            beta = start_beta + stats.n - sum_wb
        else:  # evidence: alpha += w*base, beta += w*(1 - base) = w - w*base
            beta = start_beta + floor * stats.n + (1.0 - floor) * stats.sum_salience - sum_wb
    return Posterior(
        arm_ids=data.arm_ids,
        alpha=np.asarray(alpha, dtype=np.float64),
        beta=np.asarray(beta, dtype=np.float64),
        n=data.prior_n + stats.n.astype(np.int64),
        settings=settings,
        graded_sessions=stats.graded_sessions,
        data=data,
        base=session_base,
    )


def regrade(post: Posterior, row: int, reward: float | None) -> Posterior:
    """The posterior after changing one session's reward (None: pending), touching only that
    session's entries. Exact without decay; with decay every arm's weights change, so it re-folds."""
    data, settings = post.data, post.settings
    base = post.base.copy()
    old = base[row]
    base[row] = np.nan if reward is None else reward
    if settings.decay < 1.0:
        return fold(data, settings, base)
    start, stop = int(data.session_start[row]), int(data.session_start[row + 1])
    arms = data.entry_arm[start:stop]
    w = credit_mod.weight(data.entry_salience[start:stop], settings.floor)
    alpha, beta, n = post.alpha.copy(), post.beta.copy(), post.n.copy()
    for value, sign in ((old, -1.0), (base[row], 1.0)):
        if np.isnan(value):
            continue
        d_alpha, d_beta = credit_mod.credit(np.full_like(w, float(value)), w, settings.strategy)
        np.add.at(alpha, arms, sign * d_alpha)
        np.add.at(beta, arms, sign * d_beta)
        np.add.at(n, arms, int(sign))
    graded = post.graded_sessions + int(not np.isnan(base[row])) - int(not np.isnan(old))
    return Posterior(data.arm_ids, alpha, beta, n, settings, graded, data, base)


def fold_naive(events: list[Event], settings: CreditSettings) -> dict[str, tuple[float, float, int]]:
    """The same fold as a plain loop over events: the reference the vectorised one is checked against."""
    sessions: dict[str, SessionEvent] = {}
    order: list[str] = []
    base: dict[str, float | None] = {}
    priors: dict[str, tuple[float, float, int]] = {}
    for event in events:
        if isinstance(event, SessionEvent) and event.session_id not in sessions:
            sessions[event.session_id] = event
            order.append(event.session_id)
            base[event.session_id] = event.base_reward
        elif isinstance(event, PriorEvent):
            priors.update(event.arms)
    for event in events:
        if isinstance(event, GradeEvent) and event.session_id in sessions:
            base[event.session_id] = event.base_reward
    a0, b0 = settings.prior_alpha, settings.prior_beta
    state: dict[str, list[float]] = {arm: [a, b, n] for arm, (a, b, n) in priors.items()}
    for sid in order:
        reward = base[sid]
        if reward is None:
            continue
        for arm_state in state.values():
            arm_state[0] = a0 + settings.decay * (arm_state[0] - a0)
            arm_state[1] = b0 + settings.decay * (arm_state[1] - b0)
        session = sessions[sid]
        for lesson_id, sal in zip(session.lesson_ids, session.saliences, strict=True):
            arm_state = state.setdefault(lesson_id, [a0, b0, 0])
            w = settings.floor + (1 - settings.floor) * sal
            da, db = credit_mod.credit(reward, w, settings.strategy)
            arm_state[0] += da
            arm_state[1] += db
            arm_state[2] += 1
    return {arm: (s[0], s[1], int(s[2])) for arm, s in state.items()}
