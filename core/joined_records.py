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
from lesson_credit.core.model.sources import HEURISTIC, JUDGE, OUTCOME
from lesson_credit.core.sessions import records_path as record_paths
from lesson_credit.core.sessions.records_path import records_path

RACY_NS = 2_000_000_000  # as the lesson cache's (core/library/lessons.py): a coarse clock's tick, with margin

if TYPE_CHECKING:
    from lesson_credit.core.model.sources import FloatArray  # (a numpy type, named for the type checker only)

    # imported where used: a workspace without records (every write) needs none of them
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


Signature = tuple[tuple[str, tuple[int, ...]], ...]  # (name, stat) of each file there ("": the records file)


def _stat_of(path: Path, own: bool = True) -> tuple[int, ...] | None:
    """A file's stat (None: not there); with `own`, a link to nothing or a loop by the link's own stat."""
    try:
        st = os.stat(path)
    except OSError:
        try:
            if not own:
                return None
            st = os.lstat(path)
        except OSError:
            return None
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev, st.st_mode)


class SessionRecords:
    """The records file of a workspace and the rotated files beside it (core/sessions/record_set.py), read
    when one of them changes, appears or goes."""

    def __init__(
        self,
        root: Path,
        settings: RecordsSettings,
        environ: Mapping[str, str] | None = None,
        allow_outside: bool = False,
    ) -> None:
        self.root = root
        self.settings = settings
        self.allow_outside = allow_outside  # a rotated file linking outside the workspace is read
        self.path = records_path(root, settings.path, environ)
        self._signature: tuple[object, ...] | None = None
        self._racy = False  # the stat does not vouch for the bytes yet (changed within RACY_NS of the read)
        self._file: RecordFile | None = None
        self._files: dict[str, RecordFile] = {}  # each file as read, by name ("": the records file)
        self._joined: JoinedRecords | None = None

    def _stat(self) -> tuple[Signature, list[str], str | None] | None:
        """(each file's stat, the rotated files' names, a problem listing them); None when none is there."""
        names, problem = record_paths.rotated_names(self.path)
        read = names[: record_paths.ROTATED_MAX_FILES]  # (the rest: by their names, which one problem lists)
        stats = [("", _stat_of(self.path, own=False))] + [(name, _stat_of(self.path.parent / name)) for name in read]
        there = tuple((name, st) for name, st in stats if st is not None)
        return (there, names, problem) if there else None

    def file(self) -> RecordFile:
        """The records as the files hold them now: read again when a file's stat changed (or one appeared or
        went), and by their bytes while a last change is within RACY_NS of the read that vouched for the stats
        (a coarse clock may not have ticked since: a rewrite of the same size would keep the whole stat)."""
        return self._file_of(self._stat())

    def _file_of(self, found: tuple[Signature, list[str], str | None] | None) -> RecordFile:
        """`file` from the files' stats `found` (`_stat`, taken once by the caller)."""
        signature = None if found is None else (found[0], tuple(found[1]), found[2])
        if self._file is None or signature is None or signature != self._signature or self._racy:
            from lesson_credit.core.sessions.record_set import read_record_set

            read_ns = time.time_ns()  # before the read: a change after it only looks racier
            names, problem = (found[1], found[2]) if found is not None else ([], None)
            self._file, self._files = read_record_set(
                self.path, names, problem, self.root, self.allow_outside, self._files
            )
            self._signature = signature
            latest = max((max(st[1], st[2]) for _, st in found[0]), default=0) if found is not None else 0
            self._racy = signature is not None and latest >= read_ns - RACY_NS
        return self._file

    def there(self) -> bool:
        """Whether the records file or a rotated file beside it is there (a link to nothing is not)."""
        return self._stat() is not None

    def has_records(self) -> bool:
        """Whether the files hold a record (`file().records`); without a file, known without reading."""
        found = self._stat()  # (the records' folder listed once)
        return found is not None and bool(self._file_of(found).records)

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
        items = tuple(f"{p.record_id} ({p.where})" for p in r.join_problems)
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
