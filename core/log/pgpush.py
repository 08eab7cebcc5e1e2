"""`store push`: a JSONL log's events into the database store, streamed.

The lines are validated as the reader validates them and streamed through COPY into a
temporary table, then moved into `lesson_credit.events` by one INSERT ... SELECT in file order
(read through the staging table's index: the events' text is never sorted), all in one
transaction: every event or, on any failure, none. The client holds one line at a time (and
COPY's buffer), whatever the size of the log; which copy of an identical line each one is
(`occurrence`) is numbered by the server, so pushing the same log again adds nothing. A second
session event for an id is not added (the first counts, as on the file).

(Copying each batch straight into the events table after checking its keys costs more: one probe
of three indexes per line took the server ~2 s more CPU per 100k events than staging the text.)

Into an empty store (the first push of a workspace's log, the common case) the lines go through
COPY straight into `lesson_credit.events`, which costs what a COPY of the same rows costs: each
copy of an identical line is numbered by counting the copies among the previous COPY_WINDOW lines
(a bounded window: memory does not grow with the log). Any line that must not be added makes the
table's unique indexes refuse the COPY when it ends (a second session event for an id; a copy of
a line whose previous copies lie further apart than the window, which the window numbers too low;
an event another client stored meanwhile), or stops it at once (a second session event for an id
within the window): the transaction then leaves nothing, and the push starts over the staged way,
reading the log again.

A `PushWatch` (core/log/pushmemory.py: what the workspace pushed to this store before) is told
each valid line of a pass, and the pass's outcome before its transaction commits, which it may
refuse (an exception: the transaction then leaves nothing).
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter, deque
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeAlias

from psycopg import errors as pg_errors

from lesson_credit.core.log import pgconn
from lesson_credit.core.log.events import InvalidEvent, decode_raw, validate
from lesson_credit.core.log.pgschema import row_fields
from lesson_credit.core.log.store import LogProblem

MAX_PROBLEMS = 1_000  # invalid lines reported by number (all are counted)
COPY_WINDOW = 50_000  # lines among which a direct COPY numbers the copies of an identical line

Lines = Iterable[bytes] | Callable[[], Iterable[bytes]]  # a log's lines, or how to read them from the start
# the events of a pass (0, 1, ... in log order) not added: those the database holds (stored before), those it refused
Unadded: TypeAlias = "tuple[array[int], array[int]]"

_STAGE = (
    "CREATE TEMPORARY TABLE incoming (ord bigint PRIMARY KEY, type text, session_id text, event_time text,"
    " has_json boolean, raw text, digest bytea, line bigint) ON COMMIT DROP"
)
_COPY = "COPY incoming (ord, type, session_id, event_time, has_json, raw, digest, line) FROM STDIN"
_COPY_DIRECT = (
    "COPY lesson_credit.events (type, session_id, event_time, event, raw, agent, digest, occurrence) FROM STDIN"
)
# which copy of an identical line each line is, for the lines that are not the first (few): a sort
# of (digest, ord) pairs only, never of the events' text
_COPIES = """CREATE TEMPORARY TABLE copies ON COMMIT DROP AS
SELECT ord, copy - 1 AS occurrence FROM (
    SELECT ord, row_number() OVER (PARTITION BY digest ORDER BY ord) AS copy FROM incoming
) AS numbered WHERE copy > 1"""
# in file order by the index on `ord` (the rows are in it already: no sort of the events' text)
_MOVE = """INSERT INTO lesson_credit.events (type, session_id, event_time, event, raw, agent, digest, occurrence)
SELECT i.type, i.session_id, i.event_time, CASE WHEN i.has_json THEN i.raw::jsonb END, i.raw, %s, i.digest,
    coalesce(c.occurrence, 0)
FROM incoming AS i LEFT JOIN copies AS c ON c.ord = i.ord
ORDER BY i.ord
ON CONFLICT DO NOTHING
"""

# the first staged line the move added: its copy of those bytes, inserted by this very transaction (its
# 32-bit id, as xmin holds it: txid_current() is that with the epoch above, on every server version)
_FIRST_ADDED = """SELECT min(i.ord) FROM incoming AS i LEFT JOIN copies AS c ON c.ord = i.ord
JOIN lesson_credit.events AS e ON e.digest = i.digest AND e.occurrence = coalesce(c.occurrence, 0)
WHERE e.xmin = (txid_current() % 4294967296)::text::xid"""
# the staged events from an `ord` on that this transaction did not add, each with whether the database holds it
# (stored before, by anyone) or not (refused: a second session event for an id): one probe of the events' unique
# index per staged event from there, never a read of the database's other events
_UNADDED = """SELECT coalesce(string_agg(int8send(ord), '' ORDER BY ord) FILTER (WHERE held), ''::bytea),
    coalesce(string_agg(int8send(ord), '' ORDER BY ord) FILTER (WHERE NOT held), ''::bytea)
FROM (SELECT i.ord, e.digest IS NOT NULL AS held FROM incoming AS i LEFT JOIN copies AS c ON c.ord = i.ord
    LEFT JOIN lesson_credit.events AS e ON e.digest = i.digest AND e.occurrence = coalesce(c.occurrence, 0)
    WHERE i.ord >= %s AND (e.digest IS NULL OR NOT e.xmin = (txid_current() %% 4294967296)::text::xid)) AS unadded"""
# the first staged event (by its line) the database holds before an earlier one whose order against it decides a
# number (see `Disagreement`: the earlier one is that of them the database holds last), or the first session event
# of an id that the database does not hold (it holds another: the log's later line, or one not in the log): each
# staged event's position is one probe of the events' unique index, then a sort of (session id, ord) pairs by bytes
# and one of the ords, never of the events' text
_DISAGREEING = """WITH placed AS (
    SELECT i.ord, i.line, i.type, i.session_id, e.position FROM incoming AS i LEFT JOIN copies AS c ON c.ord = i.ord
    LEFT JOIN lesson_credit.events AS e ON e.digest = i.digest AND e.occurrence = coalesce(c.occurrence, 0)
), marked AS (
    SELECT ord, line, type, session_id, position,
        min(ord) FILTER (WHERE type = 'session') OVER same AS first_at,
        min(line) FILTER (WHERE type = 'session' AND position IS NOT NULL) OVER same AS held_line,
        max(position) FILTER (WHERE type = 'grade') OVER same_before AS grade_at,
        max(position) FILTER (WHERE type IN ('selection', 'session')) OVER same_before AS pick_at,
        max(position) FILTER (WHERE type = 'session') OVER before AS session_at,
        max(position) FILTER (WHERE session_id IS NULL) OVER before AS unnamed_at
    FROM placed
    WINDOW same AS (PARTITION BY session_id COLLATE "C"),
        same_before AS (same ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING),
        before AS (ORDER BY ord ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
), found AS (
    SELECT line, held_line AS other, NULL::bigint AS other_at, 0 AS kind FROM marked
        WHERE type = 'session' AND ord = first_at AND position IS NULL
    UNION ALL SELECT line, NULL, session_at, 1 FROM marked WHERE type = 'session' AND session_at > position
    UNION ALL SELECT line, NULL, grade_at, 2 FROM marked WHERE type = 'grade' AND session_id IS NOT NULL
        AND grade_at > position
    UNION ALL SELECT line, NULL, pick_at, 3 FROM marked WHERE type IN ('selection', 'session')
        AND session_id IS NOT NULL AND pick_at > position
    UNION ALL SELECT line, NULL, unnamed_at, 4 FROM marked WHERE session_id IS NULL AND unnamed_at > position
    ORDER BY 1 LIMIT 1
)
SELECT f.line, coalesce(f.other, (SELECT p.line FROM placed AS p WHERE p.position = f.other_at)), f.kind
FROM found AS f"""


_KINDS = ("first", "sessions", "grades", "selections", "unnamed")  # what _DISAGREEING's third column numbers


class Disagreement(NamedTuple):
    """Where the log's order and the database's (after the push) differ on something that decides a number. `kind`:
    `sessions` (two session events: sessions fold in order), `grades` (two grades of one session: the later is in
    force), `selections` (two selections of a session, or one and its record: the last before the record gives the
    propensities), `unnamed` (two events naming no session, priors and exports: a later one replaces an earlier)
    (`line` is the later in the log, `other` the earlier, which the database holds after it); or `first` (`line`
    is a session's first session event, which the database does not hold: it holds the one on line `other`, or,
    None, one the log does not have)."""

    line: int
    other: int | None
    kind: str


@dataclass
class PushReport:
    """What `store push` did with a JSONL log."""

    lines: int = 0  # non-blank lines read
    added: int = 0  # events now in the database that were not before
    present: int = 0  # valid events not added: already there, or a second session event for an id
    invalid: int = 0  # lines that are not valid events (not pushed)
    problems: list[LogProblem] = field(default_factory=list)  # the first MAX_PROBLEMS of them


class PushWatch(Protocol):
    """Told what a push reads, pass by pass (a push may read the log twice: see the module docstring)."""

    def start(self) -> None:
        """A pass over the log begins, at its first line."""

    def row(self, number: int, digest: bytes, session: str | None = None) -> None:
        """The valid event on line `number` of the log, by its digest (the `digest` column's); `session`: its
        session id when it is a session event."""

    def end(
        self,
        report: PushReport,
        first_added: Callable[[], int | None],
        unadded: Callable[[int], Unadded],
        disagreeing: Callable[[], Disagreement | None] | None = None,
    ) -> None:
        """The pass is done and its transaction not committed yet: an exception rolls it back.
        `first_added()`: the first of the pass's valid events (0, 1, ... in log order) that the push
        added, None when none; `unadded(start)`: the pass's valid events from `start` on that the push
        did not add, in log order: those the database holds (stored before), and those it refused (a
        second session event for an id); `disagreeing()`: the first place where the database's order
        of the log's events, this push's added, differs from the log's on what decides a number
        (None: nowhere; the argument None: the database holds them in the log's order). All are
        queries: asked only when needed."""


def _rows(lines: Iterable[bytes], report: PushReport, watch: PushWatch | None = None) -> Iterator[dict[str, Any]]:
    """The columns of the valid events among `lines`, counting and reporting the rest."""
    if watch is not None:
        watch.start()
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if not stripped:
            continue
        report.lines += 1
        try:
            raw = decode_raw(stripped)
            validate(raw)  # the reader's validation: what it would skip is not pushed
            fields = row_fields(stripped, raw)
        except (InvalidEvent, UnicodeDecodeError) as exc:
            report.invalid += 1
            if len(report.problems) < MAX_PROBLEMS:
                report.problems.append(LogProblem(number, str(exc)))
            continue
        if watch is not None:
            watch.row(number, fields["digest"], fields["session_id"] if fields["type"] == "session" else None)
        fields["line"] = number
        yield fields


def _limits(conn: pgconn.Connection) -> None:
    """A big log takes minutes: no statement timeout, but a lock held by another session is still
    waited for only as long as any statement would be."""
    conn.execute("SET LOCAL statement_timeout = 0")
    conn.execute(f"SET LOCAL lock_timeout = {int(pgconn.STATEMENT_TIMEOUT_S * 1000)}")


def push(conn: pgconn.Connection, lines: Lines, agent: str, watch: PushWatch | None = None) -> PushReport:
    """Push a JSONL log's lines, in order, through `conn` in one transaction (see the module
    docstring). `lines`: the lines, or a function that reads them from the start (what lets a push
    into an empty store copy them straight in); `watch`: told each pass's lines and outcome.
    psycopg errors are the caller's to classify, and `watch`'s are its."""
    again: Callable[[], Iterable[bytes]]
    if callable(lines):
        again = lines
    elif isinstance(lines, Collection):
        collection = lines
        again = lambda: collection  # noqa: E731
    else:
        return _staged(conn, lines, agent, watch)  # read once: no starting over
    row = conn.execute("SELECT NOT EXISTS (SELECT FROM lesson_credit.events)").fetchone()
    if row and row[0]:
        report = PushReport()
        try:
            with conn.transaction():
                _limits(conn)
                _copy_direct(conn, _rows(again(), report, watch), agent, report)
                if watch is not None:
                    # an empty store: all of them
                    watch.end(report, lambda: 0 if report.added else None, lambda start: (array("q"), array("q")))
            return report
        except (pg_errors.UniqueViolation, _Refused):
            pass  # a line that must not be added (see the module docstring): the staged way
    return _staged(conn, again(), agent, watch)


class _Refused(Exception):
    """A second session event for an id within the window: the COPY stops there (the unique index
    would refuse it only when the COPY ends)."""


def _copy_direct(conn: pgconn.Connection, rows: Iterable[dict[str, Any]], agent: str, report: PushReport) -> None:
    """COPY the rows into the events table, numbering copies within the last COPY_WINDOW lines."""
    recent: deque[tuple[bytes, str | None]] = deque()
    seen: Counter[bytes | str] = Counter()  # digests, and the ids of session events, in the window
    with conn.cursor() as cursor, cursor.copy(_COPY_DIRECT) as copy:
        for fields in rows:
            digest, session = fields["digest"], fields["session_id"] if fields["type"] == "session" else None
            if session is not None and seen[session]:
                raise _Refused
            copy.write_row(
                (
                    fields["type"],
                    fields["session_id"],
                    fields["event_time"],
                    fields["event"],
                    fields["raw"],
                    agent,
                    digest,
                    seen[digest],
                )
            )
            recent.append((digest, session))
            seen[digest] += 1
            if session is not None:
                seen[session] += 1
            if len(recent) > COPY_WINDOW:
                for key in recent.popleft():
                    if key is not None:
                        seen[key] -= 1
                        if not seen[key]:
                            del seen[key]
            report.added += 1


def _staged(conn: pgconn.Connection, lines: Iterable[bytes], agent: str, watch: PushWatch | None) -> PushReport:
    """Through the staging table: what is stored already is left out (ON CONFLICT DO NOTHING)."""
    report = PushReport()
    copied = 0
    with conn.transaction():
        _limits(conn)
        conn.execute("SET LOCAL work_mem = '64MB'")  # numbering the copies sorts in memory
        conn.execute(_STAGE)
        with conn.cursor() as cursor, cursor.copy(_COPY) as copy:
            for fields in _rows(lines, report, watch):
                copy.write_row(
                    (
                        copied,
                        fields["type"],
                        fields["session_id"],
                        fields["event_time"],
                        fields["event"] is not None,
                        fields["raw"],
                        fields["digest"],
                        fields["line"],
                    )
                )
                copied += 1
        conn.execute("ANALYZE incoming")  # so the plan reads it by its index, in order
        conn.execute(_COPIES)
        moved = conn.execute(_MOVE, (agent,))
        report.added = max(moved.rowcount, 0)
        report.present = copied - report.added
        if watch is not None:
            watch.end(
                report, lambda: _first_added(conn), lambda start: _unadded(conn, start), lambda: _disagreeing(conn)
            )
    return report


def _first_added(conn: pgconn.Connection) -> int | None:
    """The first staged event (`ord`) this transaction added to the events table, None when none."""
    row = conn.execute(_FIRST_ADDED).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def _disagreeing(conn: pgconn.Connection) -> Disagreement | None:
    """The first place where the database's order of the staged events differs from the log's (see `_DISAGREEING`)."""
    row = conn.execute(_DISAGREEING).fetchone()
    if row is None:
        return None
    return Disagreement(int(row[0]), None if row[1] is None else int(row[1]), _KINDS[int(row[2])])


def _unadded(conn: pgconn.Connection, start: int) -> Unadded:
    """The staged events from `start` on that this transaction did not add: those the database holds,
    those it refused (see _UNADDED; 8 bytes each, as the server sends them)."""
    row = conn.execute(_UNADDED, (start,)).fetchone()
    assert row is not None
    held, refused = array("q", bytes(row[0])), array("q", bytes(row[1]))
    if sys.byteorder == "little":  # (int8send: big-endian)
        held.byteswap()
        refused.byteswap()
    return held, refused
