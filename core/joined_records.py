"""A workspace's gptme-sessions records: the file read and verified, joined to the log's sessions, and
the scores they give each reward source (docs/records.md).

The records are an input from outside the log, like journals: read again only when the file
changed (its size, modification or change time, or inode: a copy that keeps the modification time
still moves the change time) or changed within RACY_NS of the read (checked by its bytes), and
then known by the hash of its bytes, so equal contents are the same input whatever the file's time
says. The join and the scores are kept until the records or the number of logged sessions change,
or the log is read again from its start (a grade changes none of them).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from msgspec import Struct, field

from lesson_credit.core.bandit.config import RecordsSettings
from lesson_credit.core.base.numbers import and_more, counted, listed
from lesson_credit.core.model.sources import HEURISTIC, JUDGE, OUTCOME, FloatArray
from lesson_credit.core.sessions.records_path import records_path

RACY_NS = 2_000_000_000  # as the lesson cache's (core/library/lessons.py): a coarse clock's tick, with margin

if TYPE_CHECKING:  # imported where used: a workspace without records (every write) needs none of them
    from lesson_credit.core.sessions.join import Join, JoinProblem
    from lesson_credit.core.sessions.record_file import Record, RecordFile
    from lesson_credit.core.sessions.trajectory import Trajectory


class JoinedRecords(Struct, frozen=True):
    """The records as joined to the first `n_sessions` sessions of the log."""

    file: RecordFile
    join: Join
    n_sessions: int
    weights: dict[str, float]
    weights_problem: str | None
    scores: Mapping[str, FloatArray] = field(default_factory=dict)  # per source, by session row
    token: tuple[object, ...] = ()

    def record_at(self, row: int) -> Record | None:
        index = self.join.record_of_row.get(row)
        return None if index is None else self.file.records[index]


class SessionRecords:
    """The records file of a workspace, read when it changes."""

    def __init__(self, root: Path, settings: RecordsSettings, environ: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.settings = settings
        self.path = records_path(root, settings.path, environ)
        self._signature: tuple[int, ...] | None = None
        self._racy = False  # the stat does not vouch for the bytes yet (changed within RACY_NS of the read)
        self._file: RecordFile | None = None
        self._joined: JoinedRecords | None = None

    def _stat(self) -> tuple[int, ...] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)

    def file(self) -> RecordFile:
        """The records as the file holds them now: read again when its stat changed, and by its bytes while
        its last change is within RACY_NS of the read that vouched for the stat (a coarse clock may not have
        ticked since: a rewrite of the same size would keep the whole stat)."""
        signature = self._stat()
        if self._file is None or signature is None or signature != self._signature or self._racy:
            from lesson_credit.core.sessions.record_file import read_records

            read_ns = time.time_ns()  # before the read: a change after it only looks racier
            self._file = read_records(self.path, self._file)
            self._signature = signature
            self._racy = signature is not None and max(signature[1], signature[2]) >= read_ns - RACY_NS
        return self._file

    def has_records(self) -> bool:
        """Whether the file holds a record (`file().records`); without a file, known without reading."""
        return self._stat() is not None and bool(self.file().records)

    def joined(
        self,
        n_sessions: int,
        columns: Callable[[], tuple[Sequence[str], Sequence[str | None]]],
        outcomes: Mapping[str, float],
        generation: int = 0,
    ) -> JoinedRecords:
        """The records joined to the first `n_sessions` sessions, with each source's scores; kept while
        the records, the join window, the weights, the outcome mapping, the number of sessions and the
        log's read `generation` stay the same (a log read again from its start, edited or replaced, may
        hold other sessions in those rows). `columns()` gives the sessions' ids and timestamps, asked for
        only when a join is made."""
        from lesson_credit.core.sessions.record_file import read_weights

        file = self.file()
        weights, weights_problem = read_weights(self.root)
        token = (
            file.digest,
            self.settings.window,  # another window joins other sessions (config.toml changed while open)
            n_sessions,
            generation,
            tuple(sorted(weights.items())),
            tuple(sorted(outcomes.items())),
        )
        cached = self._joined
        if cached is not None and cached.token == token:
            return cached
        session_ids, timestamps = columns()
        from lesson_credit.core.sessions.join import join_records

        join = join_records(file.records, session_ids[:n_sessions], timestamps[:n_sessions], self.settings.window)
        scores = _scores(file.records, join, n_sessions, weights, outcomes)
        self._joined = JoinedRecords(file, join, n_sessions, weights, weights_problem, scores, token)
        return self._joined


def _scores(
    records: Sequence[Record], join: Join, n: int, weights: Mapping[str, float], outcomes: Mapping[str, float]
) -> dict[str, FloatArray]:
    """Per source, the joined records' scores by session row (NaN where a record gives none)."""
    judge, heuristic, outcome = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    for row, index in join.record_of_row.items():
        record = records[index]
        if record.llm_judge_score is not None:
            judge[row] = record.llm_judge_score
        score = record.heuristic_score(weights)
        if score is not None:
            heuristic[row] = score
        if record.outcome is not None and record.outcome in outcomes:
            outcome[row] = outcomes[record.outcome]
    return {JUDGE: judge, HEURISTIC: heuristic, OUTCOME: outcome}


class RecordsHealth(Struct, frozen=True):
    """What `lint` reports about the records: lines that could not be used, joins not made."""

    path: str
    records: int
    joined: int
    file_problems: tuple[str, ...]  # "line N: reason" (or the file's one problem)
    file_problem_count: int
    join_problems: tuple[JoinProblem, ...]
    weights_problem: str | None


def records_health(joined: JoinedRecords) -> RecordsHealth:
    file = joined.file
    return RecordsHealth(
        str(file.path),
        len(file.records),
        len(joined.join.record_of_row),
        tuple(str(p) for p in file.problems),
        file.problem_count,
        joined.join.problems,
        joined.weights_problem,
    )


def trajectory_for(
    root: Path, record: Record | None, session_id: str, settings: RecordsSettings, allow_outside: bool
) -> tuple[Trajectory | None, str | None]:
    """(a session's trajectory, why there is none): from its record's trajectory_path, else found by
    id in [records] trajectory_dirs; read only where allowed (core.sessions.locate)."""
    from lesson_credit.core.sessions.locate import locate
    from lesson_credit.core.sessions.trajectory import TrajectoryError, read_trajectory

    named = record.trajectory_path if record is not None else None
    found = locate(root, named, session_id, settings.trajectory_dirs, allow_outside)
    if found.path is None:
        return None, found.problem
    try:
        return read_trajectory(found.path, found.shown), None
    except TrajectoryError as exc:
        return None, str(exc)


def _names(items: list[str], limit: int = 8) -> str:
    return listed(items, limit)


RecordFinding = tuple[str, str, str, tuple[str, ...], tuple[str, ...]]  # (code, message, advice, items, reasons)


def record_findings(r: RecordsHealth) -> list[RecordFinding]:
    """What `lint` warns about the records: `records-unreadable` (lines or a weights file that could not
    be used) and `records-not-joined` (ambiguous and unmatched records, each with why)."""
    out: list[RecordFinding] = []
    problems = r.file_problems + ((r.weights_problem,) if r.weights_problem else ())
    if problems:
        hidden = r.file_problem_count - len(r.file_problems)
        more = f" ({and_more(hidden)})" if hidden > 0 else ""
        message = f"{counted(len(problems), 'problem')} reading gptme-sessions records {r.path}{more}: "
        advice = "The rest of the file is used; fix or remove those lines (gptme-sessions rewrites the file)."
        out.append(("records-unreadable", message + _names(list(problems), 3), advice, problems, problems))
    if r.join_problems:
        items = tuple(f"{p.record_id} (line {p.line})" for p in r.join_problems)
        kinds = " or ".join(sorted({p.kind for p in r.join_problems}))
        joined = f"({r.joined} of {r.records} joined)"
        message = f"{counted(len(items), 'gptme-sessions record')} {kinds}, not joined to a session {joined}: "
        advice = (
            "A record joins the session with its id (or a unique prefix either way; the exact id wins over a "
            "prefix), else the one session logged within [records] window seconds; an ambiguous join is never "
            "guessed. Log sessions with gptme's ids."
        )
        reasons = tuple(f"{p.kind}: {p.reason}" for p in r.join_problems)
        out.append(("records-not-joined", message + _names(list(items)), advice, items, reasons))
    return out
