"""Finding sessions: filters, sorting and id prefixes over the session table's columns.

Pure functions of the columns `Workspace.session_table()` hands out (and, for the lesson
filter, the log's entry columns): a query over a million sessions is a few numpy passes,
never a million objects. Times are compared as seconds since the epoch; a timestamp that
cannot be read never matches a time filter.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.analysis.joint import kind_of
from lesson_credit.core.base.errors import UserError
from lesson_credit.core.base.ids import one_form
from lesson_credit.core.base.numbers import listed

if TYPE_CHECKING:
    from lesson_credit.core.views import SessionTable

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# column name -> what it sorts by; "time" is the session's timestamp, "line" its place in the log
SORT_COLUMNS = ("line", "id", "time", "category", "reward", "grader", "lessons", "salience")
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
MAX_MATCHES_SHOWN = 5
NO_ROWS: IntArray = np.zeros(0, dtype=np.int64)


class QueryError(UserError):
    """A query that cannot be run: the message is one line for the user."""


@dataclass(frozen=True)
class SessionQuery:
    """Which sessions, in what order. None (or False) means "no filter"."""

    pending: bool = False
    graded: bool = False
    category: str | None = None
    grader: str | None = None
    lesson_rows: IntArray | None = None  # rows the lesson was injected in (see rows_with_arm)
    min_reward: float | None = None
    max_reward: float | None = None
    since: float | None = None  # seconds since the epoch, inclusive
    until: float | None = None  # exclusive
    sort: str = "line"
    descending: bool = False
    limit: int | None = None


def parse_time(text: str, now: dt.datetime) -> float:
    """`2h`, `30m`, `7d`, `90s`, `2w` (that long before `now`), or an ISO date or date-time
    (naive means UTC), as seconds since the epoch."""
    value = text.strip()
    relative = _RELATIVE.match(value.lower())
    if relative:
        amount = float(relative.group(1)) * UNITS[relative.group(2)]
        return now.timestamp() - amount
    moment = _iso(value)
    if moment is None:
        raise QueryError(f"not a time: {text!r} (use e.g. 30m, 2h, 7d, 2026-03-01 or 2026-03-01T12:00:00Z)")
    return moment.timestamp()


def _iso(value: str) -> dt.datetime | None:
    if not value:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def parse_sort(text: str) -> tuple[str, bool]:
    """`COLUMN`, `COLUMN:asc` or `COLUMN:desc` -> (column, descending)."""
    column, _, direction = text.partition(":")
    column = column.strip().lower()
    direction = direction.strip().lower() or "asc"
    if column not in SORT_COLUMNS:
        raise QueryError(f"cannot sort by {column!r}: choose one of {', '.join(SORT_COLUMNS)}")
    if direction not in ("asc", "desc"):
        raise QueryError(f"sort direction must be asc or desc, got {direction!r}")
    return column, direction == "desc"


_CANONICAL_LEN = 20  # YYYY-MM-DDTHH:MM:SSZ, the form this tool writes
_FILLER = "x" * _CANONICAL_LEN
_SEPARATORS = {4: "-", 7: "-", 10: "T", 13: ":", 16: ":", 19: "Z"}
_DIGITS = [i for i in range(_CANONICAL_LEN) if i not in _SEPARATORS]
_MONTH_DAYS = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])


def epoch_seconds(timestamps: Sequence[str | None]) -> FloatArray:
    """Each timestamp as seconds since the epoch; NaN where missing or unreadable.

    The form this tool writes (`YYYY-MM-DDTHH:MM:SSZ`) is read for all rows at once from
    their bytes (a million in well under a second); any other ISO form (offsets,
    fractions) one at a time."""
    n = len(timestamps)
    out = np.full(n, np.nan)
    if not n:
        return out
    fixed = [t if t.__class__ is str and len(t) == _CANONICAL_LEN and t.isascii() else _FILLER for t in timestamps]
    chars = np.frombuffer("".join(fixed).encode("ascii"), dtype=np.uint8).reshape(n, _CANONICAL_LEN)
    ok = np.ones(n, dtype=np.bool_)
    for position, separator in _SEPARATORS.items():
        ok &= chars[:, position] == ord(separator)
    digits = chars - np.uint8(ord("0"))  # wraps around below "0": a non-digit is > 9 either way
    for position in _DIGITS:
        ok &= digits[:, position] <= 9

    def number(start: int, width: int) -> IntArray:
        value = digits[:, start].astype(np.int64)
        for position in range(start + 1, start + width):
            value = value * 10 + digits[:, position]
        return value

    year, month, day = number(0, 4), number(5, 2), number(8, 2)
    hour, minute, second = number(11, 2), number(14, 2), number(17, 2)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_ok = (month >= 1) & (month <= 12)
    length = _MONTH_DAYS[np.where(month_ok, month, 1)] + ((month == 2) & leap)
    ok &= (year >= 1) & month_ok & (day >= 1) & (day <= length) & (hour < 24) & (minute < 60) & (second < 60)
    seconds = _days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second
    out[ok] = seconds[ok]
    slow = np.flatnonzero(~ok).tolist()
    for row in slow:
        stamp = timestamps[row]
        moment = _iso(stamp) if stamp else None
        if moment is not None:
            out[row] = moment.timestamp()
    return out


def _days_from_civil(year: IntArray, month: IntArray, day: IntArray) -> IntArray:
    """Days since 1970-01-01 of proleptic Gregorian dates (H. Hinnant's days_from_civil)."""
    y = year - (month <= 2)
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days: IntArray = era * 146097 + doe - 719468
    return days


def rows_with_arm(entry_arm: npt.NDArray[Any], entry_session: npt.NDArray[Any], arm: int) -> IntArray:
    """Rows of the sessions an arm was injected in, ascending."""
    rows: IntArray = np.unique(entry_session[entry_arm == arm]).astype(np.int64)
    return rows


def _strings_equal(column: Sequence[str | None], value: str) -> npt.NDArray[np.bool_]:
    return np.fromiter((item == value for item in column), dtype=np.bool_, count=len(column))


def select_rows(table: SessionTable, query: SessionQuery, now: dt.datetime | None = None) -> IntArray:
    """The rows of `table` that match `query`, in the query's order, before the limit."""
    n = len(table)
    keep = np.ones(n, dtype=np.bool_)
    base = np.asarray(table.base, dtype=np.float64)
    pending = np.isnan(base)
    if query.pending:
        keep &= pending
    if query.graded:
        keep &= ~pending
    if query.min_reward is not None:
        keep &= ~pending & (np.where(pending, -math.inf, base) >= query.min_reward)
    if query.max_reward is not None:
        keep &= ~pending & (np.where(pending, math.inf, base) <= query.max_reward)
    if query.category is not None:  # a kind of work, as the estimates and `select` group them
        same = {c: kind_of(c) == kind_of(query.category) for c in set(table.categories)}
        keep &= np.fromiter((same[c] for c in table.categories), dtype=np.bool_, count=n)
    if query.grader is not None:
        keep &= _strings_equal(table.graders, one_form(query.grader))  # the log's graders are read in one form
    if query.lesson_rows is not None:
        injected = np.zeros(n, dtype=np.bool_)
        injected[query.lesson_rows] = True
        keep &= injected
    times: FloatArray | None = None
    if query.since is not None or query.until is not None:
        times = epoch_seconds(table.timestamps)
        readable = ~np.isnan(times)
        keep &= readable
        safe_times = np.where(readable, times, 0.0)
        if query.since is not None:
            keep &= safe_times >= query.since
        if query.until is not None:
            keep &= safe_times < query.until
    rows: IntArray = np.flatnonzero(keep).astype(np.int64)
    return _ordered(table, rows, query, times)


def order_rows(table: SessionTable, rows: IntArray, column: str, descending: bool) -> IntArray:
    """`rows` (in log order) sorted by `column` as `sessions --sort column[:desc]` sorts them: the
    dashboard's Sessions table orders its rows with this, so both agree, ties included."""
    return _ordered(table, rows, SessionQuery(sort=column, descending=descending), None)


def _ordered(table: SessionTable, rows: IntArray, query: SessionQuery, times: FloatArray | None) -> IntArray:
    """Rows sorted stably by one column; missing values (pending reward, no timestamp or
    category) come last in either direction; ties keep log order."""
    column = query.sort
    if column == "line":
        return rows[::-1].copy() if query.descending else rows
    numeric: dict[str, Callable[[], FloatArray]] = {
        "reward": lambda: np.asarray(table.base, dtype=np.float64)[rows],
        "lessons": lambda: np.asarray(table.n_lessons, dtype=np.float64)[rows],
        "salience": lambda: np.asarray(table.mean_salience, dtype=np.float64)[rows],
        "time": lambda: (times if times is not None else epoch_seconds(table.timestamps))[rows],
    }
    if column in numeric:
        values = numeric[column]()
        missing = np.isnan(values)
        keys = np.where(missing, 0.0, -values if query.descending else values)
        order = np.lexsort((np.arange(len(rows)), keys, missing))  # last key is the primary one
        result: IntArray = rows[order]
        return result
    strings: Sequence[str | None] = {"id": table.session_ids, "category": table.categories, "grader": table.graders}[
        column
    ]
    present = [row for row in rows.tolist() if strings[row] is not None]
    absent = [row for row in rows.tolist() if strings[row] is None]
    present.sort(key=lambda row: strings[row] or "", reverse=query.descending)  # reverse=True is stable too
    return np.array(present + absent, dtype=np.int64)


def ambiguous(text: str, shown: Sequence[str], count: int) -> str:
    """The message for a prefix `count` sessions start with (`shown`: the first few of them)."""
    return f"session id prefix {text!r} is ambiguous: {count} sessions match ({listed(shown, len(shown), total=count)})"
