"""What the health checks look at (`HealthData`, gathered once from a workspace) and what they say (`Finding`)."""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.select import category_problems
from lesson_credit.core.base.numbers import listed
from lesson_credit.core.derived_state import StateCheck, check_state
from lesson_credit.core.id_spellings import Spellings, prefixed_id_count
from lesson_credit.core.joined_records import RecordFinding, record_findings, records_health
from lesson_credit.core.library.lessons import LessonProblem
from lesson_credit.core.log.store import LogProblem
from lesson_credit.core.views import LessonUsage, SessionSummary

if TYPE_CHECKING:
    from lesson_credit.core.workspace import Workspace

ERROR, WARNING = "error", "warning"
PROBLEM = ERROR  # the name the dashboard imports
PENDING_STALE_DAYS = 7
MIN_SESSIONS_FOR_NEVER_INJECTED = 30
MIN_INJECTED_FOR_NEVER_SALIENT = 5
COLLAPSE_SPREAD = 0.01


@dataclass(frozen=True)
class Finding:
    code: str
    severity: str
    message: str
    advice: str
    items: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()  # per item, why it is listed (default: the finding's message)

    def as_json(self) -> dict[str, Any]:
        reasons = self.reasons or (self.message,) * len(self.items)
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "advice": self.advice,
            "items": [{"item": item, "reason": reason} for item, reason in zip(self.items, reasons, strict=True)],
        }


def parse_time(stamp: str | None) -> dt.datetime | None:
    if not stamp:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def agree(n: int, one: str, many: str) -> str:
    """The verb that agrees with a count: `agree(1, "is", "are")`."""
    return one if n == 1 else many


def names(items: list[str], limit: int = 8) -> str:
    return listed(items, limit)


@dataclass(frozen=True)
class HealthData:
    """What the checks look at, gathered once from a workspace."""

    log_problems: Sequence[LogProblem]
    lesson_problems: Sequence[LessonProblem]
    sessions: Sequence[SessionSummary]
    now: dt.datetime
    rewards: npt.NDArray[np.float64]  # the graded sessions' rewards in force
    n: npt.NDArray[np.int64]  # per arm of the log: sessions counted, and posterior mean
    mean: npt.NDArray[np.float64]
    arm_ids: tuple[str, ...]
    n_sessions: int
    known: frozenset[str]  # lesson ids of the library
    active: frozenset[str]  # of those, the active ones
    usage: dict[str, LessonUsage]
    prefixed_ids: Spellings  # how log entries spell lesson ids other than as the library does
    missing_salience: int  # log entries without a salience
    broad_keywords: dict[str, str]  # lesson id -> why its keyword is too broad
    root: str  # the workspace folder
    retired: frozenset[str]  # arms retired by `prune`
    outcome_labels: Sequence[str]  # string outcomes of records without base_reward, one per such record
    outcomes: dict[str, float]  # the outcome -> reward mapping in force
    stale_state: StateCheck | None = None  # how bandit-state.json disagrees with the log, if it does
    listed_twice: tuple[int, tuple[str, ...]] = (0, ())  # (lessons listed again, ids of their sessions)
    retracted: tuple[tuple[str, str], ...] = ()  # (session id, what was retracted) where the latest grade is one
    records: tuple[RecordFinding, ...] = ()  # what the gptme-sessions records' reading and joins found (lint)
    dropout_problems: tuple[str, ...] = ()  # lines and files of the dropout logs not used, a line each
    never_recorded: tuple[tuple[str, int], ...] = ()  # (session id, line of its selection): selected, no record
    passed_over: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (session id, lessons its selection did not choose)
    unselected: tuple[tuple[str, ...], str | None] = ((), None)  # the last sessions with no selection, the one before
    lesson_kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)  # active lesson -> its kinds of work, if any
    session_kinds: frozenset[str] = frozenset()  # the sessions' kinds of work (categories), as logged
    category_problems: dict[str, list[str]] = field(default_factory=dict)  # [categories] name -> keywords not used
    torn: tuple[str, int, int] | None = None  # the log's `.torn` file holding lines: (its path, lines, bytes)


def gather(ws: Workspace) -> HealthData:
    from lesson_credit.core.attribution import dropout_log

    data = ws.data()
    sessions = ws.sessions()
    library = ws.library()
    post = ws.posterior()
    usage = ws.lesson_usage()
    kinds = {lesson.id: lesson.session_categories for lesson in library.lessons if lesson.status == "active"}
    kinds = {lesson_id: named for lesson_id, named in kinds.items() if named}  # match.session_categories
    wanted = kinds and data.n_sessions >= MIN_SESSIONS_FOR_NEVER_INJECTED  # (the sessions' kinds: for never-injected)
    session_kinds = _session_kinds(ws) if wanted else frozenset()
    log_problems = ws.log_problems()
    return HealthData(
        log_problems=log_problems,
        lesson_problems=library.problems,
        sessions=sessions,
        now=ws.clock(),
        rewards=data.base[~np.isnan(data.base)],
        n=post.n,
        mean=post.mean,
        arm_ids=data.arm_ids,
        n_sessions=data.n_sessions,
        known=frozenset(lesson.id for lesson in library.lessons),
        active=frozenset(lesson.id for lesson in library.lessons if lesson.status == "active"),
        usage=usage,
        prefixed_ids=prefixed_id_count(ws.log, {problem.line for problem in log_problems}),
        missing_salience=ws.missing_salience_count(),
        broad_keywords=ws.broad_keywords(),
        root=str(ws.root),
        retired=frozenset(ws.retired_arms()),
        outcome_labels=tuple(ws.outcome_labels().values()),
        outcomes=ws.config.outcomes,
        stale_state=check_state(ws),
        listed_twice=_listed_twice(data.entry_session, data.entry_arm, data.n_arms, sessions),
        retracted=_retracted(ws, sessions),
        records=tuple(record_findings(records_health(ws.records()))) if ws.session_records.file().present else (),
        dropout_problems=dropout_log(ws.root, library).problems,
        never_recorded=tuple(ws.selected_never_recorded()),
        passed_over=tuple(ws.passed_over()),
        unselected=_unselected(ws),
        lesson_kinds=kinds,
        session_kinds=session_kinds,
        category_problems=category_problems(ws.config.categories),
        torn=_torn(ws),
    )


TORN_READ_MAX = 16 * 1024 * 1024  # bytes of `.torn` whose lines are counted (a bigger one: "at least")


def _torn(ws: Workspace) -> tuple[str, int, int] | None:
    """The torn last lines writers moved out of the log file (core/log/store.py), when `<log>.torn` holds any: its
    path as shown, its lines (those in its first TORN_READ_MAX bytes) and bytes. None: no such regular file."""
    from lesson_credit.core.base.safe_read import UnsafeFile, read_regular
    from lesson_credit.core.workspace.base import LOG_FILE

    path = ws.state_dir / f"{LOG_FILE}.torn"
    try:
        size = os.lstat(path).st_size
        data = read_regular(path, TORN_READ_MAX, longer=True) if size else b""
    except (OSError, UnsafeFile):
        return None
    if not size:
        return None
    shown = str(path.relative_to(ws.root)) if path.is_relative_to(ws.root) else str(path)
    return shown, data[:TORN_READ_MAX].count(b"\n"), size


def _unselected(ws: Workspace) -> tuple[tuple[str, ...], str | None]:
    tail, before = ws.recorded_without_selection()
    return tuple(tail), before


def _session_kinds(ws: Workspace) -> frozenset[str]:
    """The kinds of work (categories) the sessions were logged with, blank ones left out: one name a kind
    (as the estimates group them, `Code` and `code` one), the spelling most of its sessions use."""
    from lesson_credit.core.analysis.joint import kind_codes

    categories = ws.session_categories()
    names = kind_codes(categories, np.arange(len(categories), dtype=np.int64))[1]
    return frozenset(name for name in names if name.strip())


def _retracted(ws: Workspace, sessions: Sequence[SessionSummary]) -> tuple[tuple[str, str], ...]:
    """Pending sessions whose latest grade event is a retraction (`base_reward: null`, an undo of a
    first grade), with the line of the retraction and the grade it withdrew."""
    found = []
    for s in sessions:
        if not s.pending:
            continue
        history = ws.grade_history(s.session_id)
        if history and history[-1].base_reward is None:
            earlier = [g.base_reward for g in history[:-1] if g.base_reward is not None]
            was = f"was {earlier[-1]:g}" if earlier else "no grade before it"
            found.append((s.session_id, f"retracted at line {history[-1].line} ({was})"))
    return tuple(found)


def _listed_twice(
    entry_session: npt.NDArray[np.int32],
    entry_arm: npt.NDArray[np.int32],
    n_arms: int,
    sessions: Sequence[SessionSummary],
) -> tuple[int, tuple[str, ...]]:
    """How many (session, lesson) pairs a session record lists more than once, and those sessions' ids."""
    if not len(entry_arm):
        return 0, ()
    width = max(n_arms, 1)
    values, counts = np.unique(np.asarray(entry_session, dtype=np.int64) * width + entry_arm, return_counts=True)
    twice = values[counts > 1]
    rows = sorted({int(v) // width for v in twice.tolist()})
    return len(twice), tuple(sessions[row].session_id for row in rows)
