"""Which of our sessions a gptme-sessions record describes (docs/records.md): by id, else by time; never a guess.

A record joins the session whose id equals its own; else the one session whose id starts with
the record's id or is the start of it (gptme-sessions often keeps 8 characters of a longer id;
the shorter id must have at least MIN_PREFIX characters); else the one session logged within
`window` seconds of the record's end (`end_time`, else `timestamp`). When more than one session
fits, or two records claim one session, the join is reported as ambiguous and not made, unless one of
them has the session's own id: it joins, and the others are reported as unmatched. A record that fits
no session is reported as unmatched.
"""

from __future__ import annotations

import bisect
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from lesson_credit.core.base.numbers import listed
from lesson_credit.core.sessions.record_file import Record

MIN_PREFIX = 4  # characters of the shorter id for a prefix to join (a 1-character id would join everything)
BY_ID, BY_PREFIX, BY_TIME = "id", "prefix", "time"
NAMES_SHOWN = 3


@dataclass(frozen=True)
class JoinProblem:
    kind: str  # "ambiguous" or "unmatched"
    record_id: str
    line: int  # of the record in its file
    reason: str
    file: str = ""  # the rotated file the record is in ("" for the records file)

    @property
    def where(self) -> str:
        return f"{self.file} line {self.line}" if self.file else f"line {self.line}"


@dataclass(frozen=True)
class Join:
    """Session row -> index of its record in the records tuple, and how each was joined."""

    record_of_row: dict[int, int] = field(default_factory=dict)
    how: dict[int, str] = field(default_factory=dict)  # row -> BY_ID, BY_PREFIX or BY_TIME
    problems: tuple[JoinProblem, ...] = ()


def epoch(stamp: str | None) -> float | None:
    """An ISO-8601 time (naive means UTC, `Z` allowed) as seconds since the epoch; None if unreadable."""
    if not stamp:
        return None
    try:
        moment = dt.datetime.fromisoformat(stamp.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)).timestamp()


def _names(ids: list[str]) -> str:
    return listed([repr(i) for i in ids[:NAMES_SHOWN]], NAMES_SHOWN, total=len(ids))


class _Sessions:
    """Lookups over our sessions' ids and times, built once per join."""

    def __init__(self, session_ids: Sequence[str], timestamps: Sequence[str | None]) -> None:
        self.ids = session_ids
        self.row_of: dict[str, int] = {}
        for row, session_id in enumerate(session_ids):
            self.row_of.setdefault(session_id, row)
        self.sorted_ids = sorted(self.row_of)
        timed = sorted((t, row) for row, t in ((row, epoch(s)) for row, s in enumerate(timestamps)) if t is not None)
        self.times = [t for t, _ in timed]
        self.time_rows = [row for _, row in timed]

    def by_id(self, record_id: str) -> tuple[str, list[int]]:
        exact = self.row_of.get(record_id)
        if exact is not None:
            return BY_ID, [exact]
        rows: list[int] = []
        if len(record_id) >= MIN_PREFIX:  # sessions whose id starts with the record's
            at = bisect.bisect_left(self.sorted_ids, record_id)
            while at < len(self.sorted_ids) and self.sorted_ids[at].startswith(record_id):
                rows.append(self.row_of[self.sorted_ids[at]])
                at += 1
                if len(rows) > NAMES_SHOWN:
                    break
        for length in range(MIN_PREFIX, len(record_id)):  # sessions whose id the record's starts with
            row = self.row_of.get(record_id[:length])
            if row is not None:
                rows.append(row)
        return BY_PREFIX, rows

    def by_time(self, moments: list[float], window: float) -> list[int]:
        rows: set[int] = set()
        for moment in moments:
            low = bisect.bisect_left(self.times, moment - window)
            high = bisect.bisect_right(self.times, moment + window)
            rows.update(self.time_rows[low:high])
        return sorted(rows)


def join_records(
    records: Sequence[Record], session_ids: Sequence[str], timestamps: Sequence[str | None], window: float
) -> Join:
    """Join records to sessions (rows of `session_ids`); see the module's docstring for the rules."""
    sessions = _Sessions(session_ids, timestamps)
    problems: list[JoinProblem] = []
    claims: dict[int, list[tuple[int, str]]] = {}  # row -> (record index, how)
    by_time: list[int] = []
    for index, record in enumerate(records):
        how, rows = sessions.by_id(record.session_id)
        if len(rows) == 1:
            claims.setdefault(rows[0], []).append((index, how))
        elif rows:
            names = _names([sessions.ids[row] for row in rows])
            problems.append(
                JoinProblem(
                    "ambiguous",
                    record.session_id,
                    record.line,
                    f"its id starts or is the start of {names}",
                    record.file,
                )
            )
        else:
            by_time.append(index)
    joined: dict[int, int] = {}
    how_of: dict[int, str] = {}
    for row, found in claims.items():
        exact = [(i, how) for i, how in found if how == BY_ID]
        chosen = exact if len(exact) == 1 else found
        if len(chosen) == 1:
            joined[row], how_of[row] = chosen[0]
            won = records[chosen[0][0]]
            for i, _ in (claim for claim in found if claim != chosen[0]):  # by prefix, beaten by the exact id
                reason = (
                    f"its id starts or is the start of session {sessions.ids[row]!r}, which record {won.session_id!r} "
                    f"({won.where}) joined: the exact id wins"
                )
                problems.append(
                    JoinProblem("unmatched", records[i].session_id, records[i].line, reason, records[i].file)
                )
        else:
            for i, _ in chosen:
                others = _names([records[j].session_id for j, _ in chosen if j != i])
                reason = f"session {sessions.ids[row]!r} is also claimed by {others}"
                problems.append(
                    JoinProblem("ambiguous", records[i].session_id, records[i].line, reason, records[i].file)
                )
    _join_by_time(records, by_time, sessions, window, joined, how_of, problems)
    problems.sort(key=lambda p: (p.file != "", p.file, p.line))
    return Join(joined, how_of, tuple(problems))


def _join_by_time(
    records: Sequence[Record],
    indices: list[int],
    sessions: _Sessions,
    window: float,
    joined: dict[int, int],
    how_of: dict[int, str],
    problems: list[JoinProblem],
) -> None:
    """The records no id joined: by time, to a session no other record claims."""
    claims: dict[int, list[int]] = {}
    for index in indices:
        record = records[index]
        moments = [m for m in (epoch(record.end_time), epoch(record.timestamp)) if m is not None]
        near = sessions.by_time(moments, window)
        rows = [row for row in near if row not in joined]
        if near and not rows:
            names = _names([sessions.ids[row] for row in near])
            reason = f"the sessions within the window ({names}) are joined to other records by id"
            problems.append(JoinProblem("unmatched", record.session_id, record.line, reason, record.file))
        elif len(rows) == 1:
            claims.setdefault(rows[0], []).append(index)
        elif rows:
            names = _names([sessions.ids[row] for row in rows])
            reason = f"{len(rows)} sessions within the window: {names}"
            problems.append(JoinProblem("ambiguous", record.session_id, record.line, reason, record.file))
        else:
            why = "no session has its id" + (
                f" or was logged within {window:g} s of it" if moments else " (and it has no readable time)"
            )
            problems.append(JoinProblem("unmatched", record.session_id, record.line, why, record.file))
    for row, found in claims.items():
        if len(found) == 1:
            joined[row], how_of[row] = found[0], BY_TIME
            continue
        for index in found:
            others = _names([records[j].session_id for j in found if j != index])
            reason = f"session {sessions.ids[row]!r} is as close in time to {others}"
            problems.append(
                JoinProblem("ambiguous", records[index].session_id, records[index].line, reason, records[index].file)
            )
