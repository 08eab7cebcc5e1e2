"""The event log in PostgreSQL: one append-only table shared by many agents.

Schema (created on first use, versioned in `lesson_credit.migrations`):

- `lesson_credit.events`: `position` (bigserial: the fold's order), `type` ('session' for
  records in the published shape too), `session_id`, `event_time` (the event's own
  timestamp, as written), `event` (JSONB, for queries), `raw` (the event's JSON text exactly
  as written: the fold decodes these bytes, as it decodes a line of the file), `agent` (who
  wrote it), `committed_at`, and `digest`/`occurrence` (which copy of these exact bytes this
  is: `store push` adds a line only once however often it runs).
- A unique partial index on `session_id` for session events: a second session event for one
  id cannot be stored, whoever writes it (and a session's event is found through it). The
  primary key serves reading after a position. Nothing else is indexed: each index is paid for
  by every append (migration 3 dropped the one by session of every event).
- Triggers refuse UPDATE, DELETE and TRUNCATE (migration 2); one run past them is counted
  (migration 4). No trigger NOTIFYs (migration 3 dropped it): PostgreSQL serializes the commits
  of all transactions that notify, under one lock. A follower polls the position.

Writing. Each event is one autocommit INSERT (committed on return, the file store's fsync). The unique index
refuses a second session event for an id however writers race (`DuplicateSession`), so recording a session
takes no lock; a write checked against the log (a grade against the latest) is made under `locked()`, an
advisory lock. Clients storing identical bytes at once each get their copy (an insert losing the race for an
`occurrence` counts again). Errors are classified by SQLSTATE (core/log/pgconn.py).

Reading. Positions are drawn when a row is inserted, but transactions commit in any order: a reader may see
position 11 committed while 10 is still in flight. A reader never moves past a position that may still appear.
It takes the events up to the first gap in the positions, and past a gap only once no transaction that was
inserting when the gap was seen is still running; then the gap is final (a rolled-back insert) and it reads
that stretch again. Why this is sound: a gap g below a committed position h was drawn before h (the sequence
hands out values in time order, CACHE 1), so before the reader's snapshot; its inserter holds ROW EXCLUSIVE on
the table from before it draws until it ends (pg_locks shows it), so it is either one of the inserters the
reader lists after its snapshot, or has ended; once those have ended, a fresh snapshot shows g, or g will
never be. A reader that appended waits for the gaps below its own event (bounded by the statement timeout), so
a command sees what it wrote.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import errors as pg_errors

from lesson_credit.core.base.files import LockHeld, StoredUnread, StoreUnavailable
from lesson_credit.core.base.logged import note_logged
from lesson_credit.core.log import pgconn
from lesson_credit.core.log.events import decode_event, is_session
from lesson_credit.core.log.eventstore import DuplicateSession, Hasher, checked_raw
from lesson_credit.core.log.pgschema import LAST_UP_TO, LATEST, migrate, row_fields
from lesson_credit.core.log.store import ReadResult, StoreError, lock_timeout, parse_chunk

if TYPE_CHECKING:
    from lesson_credit.core.log.pgpush import Lines, PushReport, PushWatch

READ_ROWS = 10_000  # events fetched per round trip when reading after a position
AHEAD_ROWS = 1_000  # events fetched ahead by `size()` and an append, for the read that follows
BULK_DECODE = 64  # events from which decoding them in one call pays (below: one by one, the same result)
GAP_POLL_S = 0.05  # longest pause between looks at in-flight inserts, when waiting for one to end
FOLLOW_POLL_S = 0.1  # pause between looks at the position when following (`wait`)
COPY_RACE_RETRIES = 50  # an identical event stored meanwhile by another client: count its copies again
MAX_POSITION = 2**63 - 1
WRITE_LOCK = 0x4C43_0003  # pg_advisory_lock key of the writers' lock, one per database ("LC", 3)

__all__ = ["LATEST", "PgStore", "display_url"]
display_url = pgconn.display_url

_LOCK = f"SELECT pg_advisory_lock({WRITE_LOCK})"  # the writers' lock (see `PgStore.locked`)
# count, last position and texts of up to %s events after position %s (part of the two statements below)
_AHEAD = """SELECT count(*), max(position), string_agg(raw, E'\\n' ORDER BY position) FROM (
    SELECT position, raw FROM lesson_credit.events WHERE position > %s ORDER BY position LIMIT %s
) AS chunk"""
# An event in, and (in the same round trip) the events committed after the last read when it began:
# they all precede it (see `_after_append`). The first copy of these bytes is copy 0; when the
# unique index on (digest, occurrence) refuses it, the event is stored again as the next copy.
_INSERT = """WITH new AS (
    INSERT INTO lesson_credit.events (type, session_id, event_time, event, raw, agent, digest, occurrence)
    VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s, {occurrence}) RETURNING position
) SELECT (SELECT position FROM new), ahead.* FROM ({ahead}) AS ahead
"""
_COPIES = "(SELECT count(*) FROM lesson_credit.events WHERE digest = %s)"
_INSERT_FIRST = _INSERT.format(occurrence="0", ahead=_AHEAD)
_INSERT_COPY = _INSERT.format(occurrence=_COPIES, ahead=_AHEAD)
# without a read to continue (none yet, or an append since): the event in, its position back
_INSERT_ONLY = """INSERT INTO lesson_credit.events (type, session_id, event_time, event, raw, agent, digest, occurrence)
VALUES (%s, %s, %s, %s::jsonb, %s, %s, %s, {occurrence}) RETURNING position"""
_INSERT_ONLY_FIRST = _INSERT_ONLY.format(occurrence="0")
_INSERT_ONLY_COPY = _INSERT_ONLY.format(occurrence=_COPIES)
# where the log ends, and the events after the last read, in one snapshot
_SIZE_AHEAD = f"SELECT (SELECT coalesce(max(position), 0) FROM lesson_credit.events), ahead.* FROM ({_AHEAD}) AS ahead"
_READ = """SELECT count(*), max(position), string_agg(raw, E'\\n' ORDER BY position) FROM (
    SELECT position, raw FROM lesson_credit.events WHERE position > %s AND position <= %s ORDER BY position LIMIT %s
) AS chunk
"""
_COUNT_AFTER = "SELECT count(*), coalesce(max(position), %s) FROM lesson_credit.events WHERE position > %s"
# the position just before the first gap in (after, top]; no row when there is none
_BEFORE_GAP = """SELECT previous FROM (
    SELECT position, lag(position, 1, %(after)s) OVER (ORDER BY position) AS previous
    FROM lesson_credit.events WHERE position > %(after)s AND position <= %(top)s
) AS s WHERE position <> previous + 1 ORDER BY position LIMIT 1
"""
# the transactions (other than ours) inserting into the table now: they hold ROW EXCLUSIVE on it
_INSERTERS = """SELECT coalesce(array_agg(virtualtransaction), '{}') FROM pg_locks
WHERE locktype = 'relation' AND relation = 'lesson_credit.events'::regclass
  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND mode = 'RowExclusiveLock' AND pid IS DISTINCT FROM pg_backend_pid()
"""
# Only what one agent wrote: its sessions, selections and priors, and every grade of its sessions
# (whoever gave it), up to a settled bound taken first.
_READ_WRITTEN_BY = """SELECT count(*), max(position), string_agg(raw, E'\\n' ORDER BY position) FROM (
    SELECT position, raw FROM lesson_credit.events AS e
    WHERE position > %(after)s AND position <= %(bound)s AND (
        (agent = %(agent)s AND type <> 'grade')
        OR (type = 'grade' AND EXISTS (
            SELECT 1 FROM lesson_credit.events AS s
            WHERE s.type = 'session' AND s.session_id = e.session_id AND s.agent = %(agent)s))
    )
    ORDER BY position LIMIT %(rows)s
) AS chunk
"""


@dataclass(frozen=True)
class _Ahead:
    """Events read in the round trip of another statement (`size()`, an append), for the next read
    after `after`: up to `limit` of them, as that statement's snapshot had them."""

    after: int
    count: int
    top: int  # the last one's position (`after` when none)
    text: bytes | None
    limit: int
    size: int  # where the log ended in that snapshot
    appended: bool  # made by our append: `size()` answers from it until it is read


class _TextAsBytes(psycopg.adapt.Loader):
    """Event text straight to bytes, as the fold decodes it (no str round trip)."""

    def load(self, data: Any) -> bytes:
        return bytes(data)


class PgStore:
    """The event log in a PostgreSQL database. One connection, opened on first use (and a second
    one, for `wait`, while something waits for commits)."""

    def __init__(self, url: str, *, agent: str) -> None:
        self.url = url
        self.agent = agent
        self._name = display_url(url)
        self._conn: pgconn.Connection | None = None
        self._connecting = threading.Lock()
        self._follower: pgconn.Connection | None = None  # `wait`'s
        self._store_id: str | None = None
        self._own_end = 0  # position of this client's last append: a read waits until it is settled
        self._read_end: int | None = None  # where this client's last read ended (None: none yet)
        self._ahead: _Ahead | None = None
        self._writing = threading.local()  # depth: inside `locked()` in this thread; its write cursor
        self._threads = threading.Lock()  # the threads of this process, one at a time in `locked()`
        self.written_by: str | None = None  # when set, reads see only what this agent wrote (and its grades)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"PgStore({self._name!r}, agent={self.agent!r})"

    def identity(self) -> str:
        return f"database {self.store_id()}"  # see store_id

    def _password(self) -> str | None:
        try:
            value = pgconn.parse_url(self.url).get("password")
        except ValueError:
            return None
        return str(value) if value else None

    def _failure(self, exc: psycopg.Error, doing: str, writing: bool = False) -> StoreError:
        return pgconn.failure(exc, self._name, doing, self._password(), writing)

    def _open(self) -> pgconn.Connection:
        """A new connection with the schema in place (created or migrated on first use)."""
        conn = pgconn.connect(self.url, self._name)
        conn.adapters.register_loader("text", _TextAsBytes)  # every text column comes back as bytes
        try:
            migrate(conn, self._name)
        except psycopg.Error as exc:
            conn.close()
            raise self._failure(exc, "cannot create or migrate the schema") from None
        except BaseException:
            conn.close()
            raise
        return conn

    @property
    def conn(self) -> pgconn.Connection:
        """The open connection (the dashboard's warm-up thread and a screen's load may both ask first)."""
        with self._connecting:
            if self._conn is None or self._conn.closed:
                self._store_id = None  # a new connection may find a database created afresh
                self._read_end, self._ahead = None, None  # (`_own_end` stays: a read still waits for it)
                self._conn = self._open()
            return self._conn

    @contextlib.contextmanager
    def _db(self, doing: str, writing: bool = False) -> Iterator[pgconn.Connection]:
        """The connection, with a database error turned into a one-line StoreError (StoreUnavailable
        when it may pass). A broken connection is dropped, so the next call connects afresh. A
        unique violation is left to the caller."""
        conn = self.conn
        try:
            yield conn
        except psycopg.Error as exc:
            if conn.closed or conn.broken:
                self._conn = None
            if isinstance(exc, pg_errors.UniqueViolation):
                raise
            raise self._failure(exc, doing, writing) from None

    def close(self) -> None:
        for conn in (self._conn, self._follower):
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        self._conn = self._follower = None

    # ------------------------------------------------------------ writing

    @contextlib.contextmanager
    def locked(self, timeout: float | None = None) -> Iterator[None]:
        """The writers' lock (the file lock's meaning): a session-level advisory lock (WRITE_LOCK, one
        per database) on this client's connection, released when the block ends or the connection
        does, and held by one thread of the process at a time; re-entered by its holder. Appends in
        it commit on return: what follows them (bandit-state.json) never describes an uncommitted
        event. Waiting over `timeout` (default `lock_timeout()`) is a LockHeld (StoreUnavailable)."""
        depth = getattr(self._writing, "depth", 0)
        wait = lock_timeout() if timeout is None else timeout
        held = f"{self._name}: another writer held the lock for {wait:g} s; nothing written, retry later"
        if not depth and not self._threads.acquire(timeout=wait):
            raise LockHeld(held)
        try:
            if not depth:
                self._lock(wait, held)
            self._writing.depth = depth + 1
            try:
                yield
            finally:
                self._writing.depth = depth
                if not depth:
                    self._unlock()
        finally:
            if not depth:
                self._threads.release()

    def _lock(self, wait: float, held: str) -> None:
        """WRITE_LOCK in one round trip: its bounds (SET LOCAL) end with the implicit transaction, the lock stays."""
        conn = self.conn
        ms = max(int(wait * 1000), 1)
        try:
            conn.execute(f"SET LOCAL lock_timeout = {ms}; SET LOCAL statement_timeout = {ms + 1000}; {_LOCK}".encode())
        except psycopg.Error as exc:
            if exc.sqlstate in (pgconn.LOCK_NOT_AVAILABLE, pgconn.QUERY_CANCELED):
                raise LockHeld(held) from None
            if conn.closed or conn.broken:
                self._conn = None
            raise self._failure(exc, "cannot take the writers' lock") from None

    def _unlock(self) -> None:
        conn = self._conn
        if conn is None or conn.closed:
            return  # the server released it with the connection
        try:
            conn.execute(f"SELECT pg_advisory_unlock({WRITE_LOCK})")
        except psycopg.Error:
            with contextlib.suppress(Exception):
                conn.close()  # the lock goes with the connection
            self._conn = None

    def append(self, line: bytes) -> None:
        """Insert one event (validated; committed on return). DuplicateSession for a second session
        event for an id; StoreUnavailable when the database cannot take it now."""
        raw = checked_raw(line)
        session_id = str(raw.session_id) if is_session(raw) else None
        fields = row_fields(line.strip(), raw)
        head = tuple(fields[key] for key in ("type", "session_id", "event_time", "event", "raw"))
        values: tuple[Any, ...] = (*head, self.agent, fields["digest"])
        copy = False
        for _ in range(COPY_RACE_RETRIES):
            read_end, self._ahead = self._read_end, None
            if read_end is None or self._own_end > read_end or self.written_by is not None:
                read_end = None  # no read yet, or appended since: nothing to read ahead for
            params = (*values, fields["digest"]) if copy else values
            if read_end is None:
                statement = _INSERT_ONLY_COPY if copy else _INSERT_ONLY_FIRST
            else:
                statement, params = (_INSERT_COPY if copy else _INSERT_FIRST), (*params, read_end, AHEAD_ROWS)
            try:
                with self._db("cannot append", writing=True) as conn:
                    cursor = self._write_cursor(conn)
                    cursor.execute(statement, params)
                    row = cursor.fetchone()
            except pg_errors.UniqueViolation as exc:
                if exc.diag.constraint_name == "events_copy":
                    copy = True  # these bytes are stored already (maybe just now): count them, store the next copy
                    continue
                if session_id is not None and exc.diag.constraint_name == "events_one_session":
                    raise DuplicateSession(session_id) from None
                raise self._failure(exc, "cannot append") from None
            assert row is not None
            note_logged()
            self._own_end = max(self._own_end, int(row[0]))
            if read_end is not None:
                self._ahead = _after_append(read_end, row, line.strip())
            return
        raise StoreUnavailable(f"{self._name}: cannot append: identical events kept arriving; nothing appended")

    def _write_cursor(self, conn: pgconn.Connection) -> psycopg.Cursor[tuple[Any, ...]]:
        """This thread's cursor for appends on `conn`, kept from one append to the next (a cursor
        made per statement is about a fifth of an append's client time; cursors are per thread)."""
        kept = getattr(self._writing, "cursor", None)
        if kept is None or kept.connection is not conn or kept.closed:
            kept = self._writing.cursor = conn.cursor()
        return kept

    def push(self, lines: Lines, watch: PushWatch | None = None) -> PushReport:
        """Copy a JSONL log's events into the database, in one transaction (core/log/pgpush.py `push`)."""
        from lesson_credit.core.log.pgpush import push

        with self._db("cannot push", writing=True) as conn:
            return push(conn, lines, self.agent, watch)

    # ------------------------------------------------------------ positions

    def size(self) -> int:
        """The position of the last event committed (0: none); events below it may still be in
        flight (`read_since` reads only what is settled). The first call on a connection also
        learns the store's identity (`store_id`) in the same round trip."""
        ahead = self._ahead
        if ahead is not None and ahead.appended:
            return ahead.size  # as our append found it: no newer than a read, no older than our event
        with self._db("cannot read") as conn:
            if self._store_id is not None and (self._read_end is None or self.written_by is not None):
                row = conn.execute("SELECT coalesce(max(position), 0) FROM lesson_credit.events").fetchone()
                return int(row[0]) if row else 0
            if self._store_id is not None and self._read_end is not None:
                # read ahead: a reader asks the size before it reads on
                row = conn.execute(_SIZE_AHEAD, (self._read_end, AHEAD_ROWS)).fetchone()
                assert row is not None
                count = int(row[1] or 0)
                top = int(row[2]) if row[2] is not None else self._read_end
                self._ahead = _Ahead(self._read_end, count, top, row[3], AHEAD_ROWS, int(row[0]), appended=False)
                return int(row[0])
            row = conn.execute(
                "SELECT coalesce(max(position), 0), (SELECT id::text FROM lesson_credit.store LIMIT 1)"
                " FROM lesson_credit.events"
            ).fetchone()
            self._store_id = row[1].decode() if row and row[1] else "none"
            return int(row[0]) if row else 0

    def store_id(self) -> str:
        """The identity the schema was created with: a database dropped and created again has another."""
        if self._store_id is None:
            with self._db("cannot read") as conn:
                row = conn.execute("SELECT id::text FROM lesson_credit.store LIMIT 1").fetchone()
                self._store_id = row[0].decode() if row and row[0] else "none"
        return self._store_id

    def fingerprint(self, end: int) -> str:
        """What identifies the events up to position `end`: the database's identity, the position, the
        count of changes made past the append-only triggers (migration 4: every UPDATE, DELETE and
        TRUNCATE, even with the triggers skipped), and the last event at or below it (position, digest
        of its text as it is now, copy, commit time). A database restored to an earlier point (a backup, a
        failover that lost commits) has other events, or none, or the same bytes committed later, at the positions
        past it. Unseen: a row edited with every trigger disabled (only reading every event would see it)."""
        if end <= 0:
            return "0:"
        with self._db("cannot read") as conn:
            row = conn.execute(LAST_UP_TO, (end,)).fetchone()
        changes = row[0] if row else None
        last = f"{row[1]}:{bytes(row[2]).hex()}:{row[3]}:{row[4]}" if row and row[1] is not None else "none"
        return f"pg:{self.store_id()}:{end}:{changes}:{last}"

    @staticmethod
    def _inserters(conn: pgconn.Connection) -> list[str]:
        row = conn.execute(_INSERTERS).fetchone()
        return list(row[0]) if row else []

    def _settled_end(self, conn: pgconn.Connection, after: int) -> tuple[int, list[str]]:
        """(end, inserters): every position in (after, end] is settled (committed, or never to be);
        `inserters` are the transactions a gap right after `end` waits for ([] when none)."""
        row = conn.execute(_COUNT_AFTER, (after, after)).fetchone()
        count, top = (int(row[0]), int(row[1])) if row else (0, after)
        if top - after == count:
            return top, []
        holders = self._inserters(conn)
        if not holders:
            return top, []
        row = conn.execute(_BEFORE_GAP, {"after": after, "top": top}).fetchone()
        return (int(row[0]) if row else top), holders

    def _await(self, holders: list[str], deadline: float, own: bool) -> None:
        """Until none of the inserting transactions `holders` is still running. `own`: what waits
        is reading back this client's own append (which is stored whatever happens here)."""
        pause = 0.001
        waiting = set(holders)
        while True:
            with self._db("cannot read") as conn:
                waiting &= set(self._inserters(conn))
            if not waiting:
                return
            if time.monotonic() > deadline:
                late = f"a write another client began earlier is not committed after {pgconn.STATEMENT_TIMEOUT_S:.0f} s"
                if own:
                    raise StoredUnread(
                        f"{self._name}: the event was stored, but cannot be read back in order yet: {late} "
                        "(a retry finds it stored)"
                    )
                raise StoreUnavailable(f"{self._name}: cannot read: {late}")
            self._pause(pause)
            pause = min(pause * 2, GAP_POLL_S)

    @staticmethod
    def _pause(seconds: float) -> None:
        time.sleep(seconds)

    # ------------------------------------------------------------ reading

    def _chunk(self, conn: pgconn.Connection, after: int, upto: int) -> tuple[int, int, bytes | None]:
        """(count, last position, the raw texts joined by newlines) of up to READ_ROWS events in (after, upto]."""
        row = conn.execute(_READ, (after, upto, READ_ROWS)).fetchone()
        if not row or not row[0]:
            return 0, after, None
        return int(row[0]), int(row[1]), row[2]

    def _settled_chunk(self, after: int) -> tuple[int, int, bytes | None, bool, list[str]]:
        """(count, end, text, more, inserters): the next settled events after `after`; `more`: read on;
        `inserters`: the read stopped at a gap they may still fill."""
        with self._db("cannot read") as conn:
            ahead, self._ahead = self._ahead, None
            if ahead is not None and ahead.after == after:
                count, top, text, limit = ahead.count, ahead.top, ahead.text, ahead.limit
                # an older snapshot than our last append (another thread's size()): ask the server too
                short = top < self._own_end
            else:
                (count, top, text), limit, short = self._chunk(conn, after, MAX_POSITION), READ_ROWS, False
            if top - after == count:  # no gap (or nothing)
                return count, top, text, count == limit or short, []
            holders = self._inserters(conn)  # after the rows' snapshot: see the module docstring
            if not holders:  # every position up to `top` is final: read them again, with what committed meanwhile
                count, end, text = self._chunk(conn, after, top)
                return count, (top if count < READ_ROWS else end), text, True, []
            row = conn.execute(_BEFORE_GAP, {"after": after, "top": top}).fetchone()
            before_gap = int(row[0]) if row else top
            if before_gap == after:
                return 0, after, None, False, holders
            count, end, text = self._chunk(conn, after, before_gap)
            reached = end == before_gap
            return count, end, text, not reached, holders if reached else []

    def _settled_texts(self, after: int, reach: int, own: bool = False) -> Iterator[tuple[int, int, bytes]]:
        """(count, end, text) of the settled events after `after`, in position order; waits for
        in-flight inserts below position `reach` to end (bounded by the statement timeout)."""
        position, deadline = after, None
        while True:
            count, end, text, more, holders = self._settled_chunk(position)
            if count and text is not None:
                yield count, end, text
            position = end
            if holders and position < reach:
                deadline = deadline or time.monotonic() + pgconn.STATEMENT_TIMEOUT_S
                self._await(holders, deadline, own)
            elif not more:
                return

    def read_since(
        self,
        after: int,
        first: int,
        decode: Callable[[bytes], object] = decode_event,
        decode_lines: Callable[[memoryview], Sequence[object] | None] | None = None,
        hasher: Hasher | None = None,
    ) -> Iterator[ReadResult]:
        """The settled events after position `after`, numbered from `first` in position order, in
        results of up to READ_ROWS events, decoded by the same code as the file's lines (the raw
        texts joined by newlines). The last result's `end` is where the next read starts."""
        if self.written_by is not None:
            yield from self._read_written_by(after, first, decode, decode_lines)
            return
        number, end = first, after
        for count, end, text in self._settled_texts(after, self._own_end, own=self._own_end > after):
            many = decode_lines if count >= BULK_DECODE else None  # a few lines: one by one is quicker
            result = parse_chunk(text + b"\n", 0, number, at_eof=True, decode=decode, decode_lines=many)
            result.end, result.lines, result.partial = end, count, False
            result.offsets = None  # no file: no byte offsets
            yield result
            number += count
        self._read_end = end
        yield ReadResult(end=end)

    def _read_written_by(
        self,
        after: int,
        first: int,
        decode: Callable[[bytes], object],
        decode_lines: Callable[[memoryview], Sequence[object] | None] | None,
    ) -> Iterator[ReadResult]:
        with self._db("cannot read") as conn:
            bound = max(self._settled_end(conn, after)[0], after)
        position, number = after, first
        while True:
            with self._db("cannot read") as conn:
                params = {"after": position, "bound": bound, "agent": self.written_by, "rows": READ_ROWS}
                row = conn.execute(_READ_WRITTEN_BY, params).fetchone()
            count = int(row[0]) if row and row[0] else 0
            if not count or row is None or row[2] is None:
                yield ReadResult(end=bound)
                return
            result = parse_chunk(row[2] + b"\n", 0, number, at_eof=True, decode=decode, decode_lines=decode_lines)
            done = count < READ_ROWS
            result.end, result.lines, result.partial = (bound if done else int(row[1])), count, False
            result.offsets = None
            yield result
            if done:
                return
            position, number = int(row[1]), number + count

    def raw_lines(self) -> Iterator[bytes]:
        """Every event's JSON text, in position order, each with its newline: all that was
        committed when the read began (waiting for inserts in flight below it)."""
        for _, _, text in self._settled_texts(0, self.size()):
            yield from (line + b"\n" for line in text.split(b"\n"))

    def session_record(self, session_id: str, *, unique: bool = False) -> dict[str, Any] | None:
        """The session event stored for the id (the unique index allows one, and finds it)."""
        with self._db("cannot read") as conn:
            row = conn.execute(
                "SELECT raw FROM lesson_credit.events WHERE type = 'session' AND session_id = %s", (session_id,)
            ).fetchone()
        if not row or row[0] is None:
            return None
        record = json.loads(row[0])
        return record if isinstance(record, dict) else None

    def session_agents(self, after: int, upto: int) -> dict[str, str]:
        """Who wrote each session event at positions in (after, upto] (the first one for an id counts)."""
        # one JSON text for the whole range: a value per row costs more than the one text and json.loads
        with self._db("cannot read") as conn:
            row = conn.execute(
                "SELECT json_agg(json_build_array(session_id, agent) ORDER BY position)::text"
                " FROM lesson_credit.events WHERE type = 'session' AND position > %s AND position <= %s",
                (after, upto),
            ).fetchone()
        agents: dict[str, str] = {}
        for session_id, agent in json.loads(row[0]) if row and row[0] else ():
            agents.setdefault(str(session_id), str(agent))
        return agents

    def wait(self, after: int, timeout: float) -> int:
        """Follow the store: its settled end as soon as it is past `after`, or when `timeout` seconds
        have passed. It looks every FOLLOW_POLL_S (every GAP_POLL_S while a gap waits for an insert
        in flight), one cheap statement each time, on a connection of its own: one thread may wait
        while another reads and writes through the store."""
        deadline = time.monotonic() + max(timeout, 0.0)
        try:
            if self._follower is None or self._follower.closed:
                self._follower = self._open()
            while True:
                end, holders = self._settled_end(self._follower, after)
                left = deadline - time.monotonic()
                if end > after or left <= 0:
                    return end
                self._pause(min(left, GAP_POLL_S if holders else FOLLOW_POLL_S))
        except psycopg.Error as exc:
            if self._follower is not None:
                with contextlib.suppress(Exception):
                    self._follower.close()
            self._follower = None
            raise self._failure(exc, "cannot wait for events") from None


def _after_append(read_end: int, row: tuple[Any, ...], own: bytes) -> _Ahead | None:
    """What a read after `read_end` will find, from our INSERT's answer `row` (our position, then the
    events committed after `read_end` when the statement began), when that is known: those events
    are settled and our position follows the last of them. They all precede ours: each drew its
    position before it committed, so before our statement began and drew ours."""
    position, count = int(row[0]), int(row[1] or 0)
    top = int(row[2]) if row[2] is not None else read_end
    if count >= AHEAD_ROWS or top - read_end != count or position != top + 1:
        return None  # more than fetched, a gap, or events in flight below ours: the read asks the server
    text = own if row[3] is None else row[3] + b"\n" + own
    return _Ahead(read_end, count + 1, position, text, AHEAD_ROWS, position, appended=True)
