"""The event log in PostgreSQL: one append-only table, shared by many agents.

Schema (created on first use, versioned in `lesson_credit.migrations`):

- `lesson_credit.events`: `position` (bigserial: the fold's order), `type` ('session' for
  records in the published shape too), `session_id`, `event_time` (the event's own
  timestamp, as written), `event` (JSONB, for queries), `raw` (the event's JSON text exactly
  as written: the fold decodes these bytes, as it decodes a line of the file), `agent` (who
  wrote it), `committed_at`, and `digest`/`occurrence` (which copy of these exact bytes this
  is: `store push` adds a line only once however often it runs).
- A unique partial index on `session_id` for session events: a second session event for one
  id cannot be stored, whoever writes it. Indexes for reading after a position (the primary
  key) and by session.
- A statement trigger NOTIFYs `lesson_credit_events` on every insert; others refuse UPDATE,
  DELETE and TRUNCATE (migration 2): what was read up to a position stays what it was.

The statements go through core/libpq.py (libpq over ctypes), not psycopg: importing psycopg
would cost a short command like `record` more than its whole allowance over the file store.

Writers hold a session-level advisory lock from before they read until after their insert
has committed, so positions are handed out in commit order: a reader that has read up to
position p never later finds a smaller position committed. Every insert commits on its own
(the file store's fsync), so a crash leaves whole events or none.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lesson_credit.core.log.events import InvalidEvent, decode_event, decode_raw, is_session
from lesson_credit.core.log.eventstore import DuplicateSession, EventStore, ParsedLogCache, check_event
from lesson_credit.core.log.store import CHUNK_BYTES, LOCK_TIMEOUT_S, LogProblem, ReadResult, StoreError, parse_chunk

if TYPE_CHECKING:
    from lesson_credit.core.log.libpq import Connection

SCHEMA = "lesson_credit"
CHANNEL = "lesson_credit_events"
WRITE_LOCK = 0x4C43_0001  # pg_advisory_lock key of the writers' lock ("LC", 1)
MIGRATE_LOCK = 0x4C43_0002  # and of schema migrations
CONNECT_TIMEOUT_S = 5
KEEPALIVES = (("keepalives", 1), ("keepalives_idle", 10), ("keepalives_interval", 5), ("keepalives_count", 3))
READ_ROWS = 10_000  # events fetched per round trip when reading after a position

MIGRATIONS: tuple[tuple[int, str, str], ...] = (
    (
        1,
        "events table, one session event per id, read indexes, NOTIFY on insert",
        """
        CREATE SCHEMA IF NOT EXISTS lesson_credit;
        CREATE TABLE lesson_credit.store (
            id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
            created_at timestamptz NOT NULL DEFAULT now()
        );
        INSERT INTO lesson_credit.store DEFAULT VALUES;
        CREATE TABLE lesson_credit.events (
            position bigserial PRIMARY KEY,
            type text NOT NULL,
            session_id text,
            event_time text,
            event jsonb,
            raw text NOT NULL CHECK (raw <> '' AND strpos(raw, E'\\n') = 0),
            agent text NOT NULL,
            committed_at timestamptz NOT NULL DEFAULT now(),
            digest bytea NOT NULL,
            occurrence integer NOT NULL,
            CONSTRAINT events_copy UNIQUE (digest, occurrence)
        );
        CREATE UNIQUE INDEX events_one_session ON lesson_credit.events (session_id) WHERE type = 'session';
        CREATE INDEX events_by_session ON lesson_credit.events (session_id, position);
        CREATE FUNCTION lesson_credit.notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM pg_notify('lesson_credit_events', '');
            RETURN NULL;
        END $$;
        CREATE TRIGGER events_notify AFTER INSERT ON lesson_credit.events
            FOR EACH STATEMENT EXECUTE FUNCTION lesson_credit.notify_events();
        """,
    ),
    (
        2,
        "events are append-only: UPDATE, DELETE and TRUNCATE are refused",
        """
        CREATE FUNCTION lesson_credit.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'lesson_credit.events is append-only: % refused', TG_OP
                USING HINT = 'a later grade event supersedes an earlier one';
        END $$;
        CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON lesson_credit.events
            FOR EACH ROW EXECUTE FUNCTION lesson_credit.refuse_change();
        CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON lesson_credit.events
            FOR EACH STATEMENT EXECUTE FUNCTION lesson_credit.refuse_change();
        """,
    ),
)
LATEST = MIGRATIONS[-1][0]

_INSERT = """
INSERT INTO lesson_credit.events (type, session_id, event_time, event, raw, agent, digest, occurrence)
VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, (SELECT count(*) FROM lesson_credit.events WHERE digest = $7))
"""
_READ = """
SELECT count(*), max(position), string_agg(raw, E'\\n' ORDER BY position) FROM (
    SELECT position, raw FROM lesson_credit.events WHERE position > $1 ORDER BY position LIMIT $2
) AS chunk
"""

# Only what one agent wrote: its sessions, selections and priors, and every grade of its sessions
# (whoever gave it). Read up to a bound taken first, so that the position read to is the store's.
_READ_WRITTEN_BY = """
SELECT count(*), max(position), string_agg(raw, E'\\n' ORDER BY position) FROM (
    SELECT position, raw FROM lesson_credit.events AS e
    WHERE position > $1 AND position <= $2 AND (
        (agent = $3 AND type <> 'grade')
        OR (type = 'grade' AND EXISTS (
            SELECT 1 FROM lesson_credit.events AS s
            WHERE s.type = 'session' AND s.session_id = e.session_id AND s.agent = $3))
    )
    ORDER BY position LIMIT $4
) AS chunk
"""


def display_url(url: str) -> str:
    """The store's URL for messages: user, host, port and database, never the password."""
    from lesson_credit.core.log.libpq import LibpqMissing, PgError, parse_conninfo

    try:
        params = parse_conninfo(url)
    except LibpqMissing:
        return "postgresql (libpq not found)"
    except PgError:
        return "postgresql (unparseable connection string)"
    user = f"{params['user']}@" if params.get("user") else ""
    host = str(params.get("host") or params.get("hostaddr") or "")
    port = f":{params['port']}" if params.get("port") else ""
    dbname = f"/{params['dbname']}" if params.get("dbname") else ""
    return f"postgresql://{user}{host}{port}{dbname}"


def _row_fields(raw_line: bytes) -> dict[str, Any]:
    """The columns of one validated event line (no newline)."""
    raw = decode_raw(raw_line)
    text = raw_line.decode("utf-8")
    kind = "session" if is_session(raw) else str(raw.type)
    return {
        "type": kind,
        "session_id": None if raw.session_id is None else str(raw.session_id),
        "event_time": raw.timestamp,
        # JSONB cannot hold U+0000; such an event keeps only its raw text (which the fold reads)
        "event": None if b"\\u0000" in raw_line else text,
        "raw": text,
        "digest": hashlib.sha256(raw_line).digest(),
    }


class PositionCheck:
    """For a reader of a database store, what `lesson_credit.core.log.logcheck.PrefixCheck` is for the file's: whether
    what was read up to a position is still there. The table is append-only (migration 2), so it
    is while the database is the same one (its store id); one created afresh starts the read over.
    The reader's hasher is kept for its interface; nothing feeds it."""

    def __init__(self, store: EventStore) -> None:
        import xxhash

        self.store = store
        self.hasher = xxhash.xxh3_64()
        self._store_id: str | None = None  # of the database the events read so far came from

    def signature(self) -> None:
        return None

    def reset(self) -> None:
        import xxhash

        self.hasher = xxhash.xxh3_64()
        self._store_id = None

    def adopt(self, hasher: Any) -> None:
        self.hasher = hasher

    def trust_once(self) -> None:
        """Nothing to skip: the check reads no events."""

    def intact(self, end: int, signature: object) -> bool:
        if end <= 0 or self._store_id is None or not isinstance(self.store, PgStore):
            return True
        return self.store.store_id() == self._store_id

    def checked(self, signature: object) -> None:
        if isinstance(self.store, PgStore):
            self._store_id = self.store.store_id()


@dataclass
class PushReport:
    """What `store push` did with a JSONL log."""

    lines: int = 0  # non-blank lines read
    added: int = 0  # events now in the database that were not before
    present: int = 0  # valid events not added: already there, or a second session event for an id
    problems: list[LogProblem] = field(default_factory=list)  # lines that are not valid events (not pushed)


class PgStore:
    """The event log in a PostgreSQL database. One connection, opened on first use."""

    def __init__(self, url: str, *, agent: str) -> None:
        self.url = url
        self.agent = agent
        self._name = display_url(url)
        self._conn: Connection | None = None
        self._connecting = threading.Lock()
        self._listener: Connection | None = None
        self._store_id: str | None = None
        self._locked_conn: Connection | None = None  # the connection holding the writers' lock
        self.written_by: str | None = None  # when set, reads see only what this agent wrote (and its grades)

    @property
    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"PgStore({self._name!r}, agent={self.agent!r})"

    is_local = False
    notifies = True  # LISTEN/NOTIFY: `wait()` is told of each commit

    def prefix_check(self) -> PositionCheck:
        return PositionCheck(self)

    def log_cache(self, cache_dir: Path) -> ParsedLogCache:
        """The per-position cache, in the workspace's cache folder."""
        from lesson_credit.core.log.pgcache import PgLogCache

        return PgLogCache(self, cache_dir)

    def glued(self, end: int) -> bool:
        """Never: every event is stored whole, as one row."""
        return False

    def raw_bytes(self) -> bytes:
        return b"".join(self.raw_lines())

    def session_agents(self, after: int, upto: int) -> dict[str, str]:
        """Who wrote each session event at positions in (after, upto] (the first one for an id counts)."""
        # one JSON text for the whole range: a value per row through libpq costs ~13 s at 1M sessions
        # (two calls per row), the one text and json.loads well under a second
        with self._db("cannot read") as conn:
            text = conn.value(
                "SELECT json_agg(json_build_array(session_id, agent) ORDER BY position)::text"
                " FROM lesson_credit.events WHERE type = 'session' AND position > $1 AND position <= $2",
                (after, upto),
            )
        agents: dict[str, str] = {}
        for session_id, agent in json.loads(text) if text else ():
            agents.setdefault(str(session_id), str(agent))
        return agents

    # ------------------------------------------------------------ connection

    def _fail(self, exc: Exception, doing: str) -> StoreError:
        """A one-line StoreError naming the URL without its password."""
        text = " ".join(str(exc).split()) or type(exc).__name__
        params_password = self._password()
        if params_password:
            text = text.replace(params_password, "***")
        return StoreError(f"{self._name}: {doing}: {text}")

    def _password(self) -> str | None:
        from lesson_credit.core.log.libpq import PgError, parse_conninfo

        try:
            value = parse_conninfo(self.url).get("password")
        except PgError:
            return None
        return str(value) if value else None

    def _connect(self) -> Connection:
        from lesson_credit.core.log.libpq import Connection, LibpqMissing, PgError, parse_conninfo

        try:
            parse_conninfo(self.url)
        except LibpqMissing as exc:
            raise StoreError(f"{self._name}: {exc}") from None
        except PgError:
            raise StoreError(f"{self._name}: invalid PostgreSQL connection string") from None
        # bounded waits: a server that does not answer the connection, or goes silent mid-query
        # (a dead host, a partitioned network), fails the command instead of hanging it
        extra: dict[str, str | int] = {"application_name": "lesson-credit", "connect_timeout": CONNECT_TIMEOUT_S}
        extra.update(KEEPALIVES)
        try:
            return Connection(self.url, **extra)
        except PgError as exc:
            raise self._fail(exc, "cannot connect") from None

    @property
    def conn(self) -> Connection:
        """The open connection, with the schema in place (created or migrated on first use)."""
        with self._connecting:  # the dashboard's warm-up thread and a screen's load may both ask first
            if self._conn is None or self._conn.closed:
                self._store_id = None  # a new connection may find a database created afresh
                conn = self._connect()
                try:
                    self._migrate(conn)
                except BaseException:
                    conn.close()
                    raise
                self._conn = conn
            return self._conn

    @contextlib.contextmanager
    def _db(self, doing: str) -> Iterator[Connection]:
        """The connection, with any database error turned into a one-line StoreError. A broken
        connection is dropped, so the next call connects afresh. (A unique violation is left to
        the caller.)"""
        from lesson_credit.core.log.libpq import UNIQUE_VIOLATION, PgError

        conn = self.conn
        try:
            yield conn
        except PgError as exc:
            if conn.broken or conn.closed:
                self._conn = None
            if exc.sqlstate == UNIQUE_VIOLATION:
                raise
            raise self._fail(exc, doing) from None

    def _migrate(self, conn: Connection) -> None:
        from lesson_credit.core.log.libpq import PgError

        try:
            if self._applied(conn) == LATEST:
                return
            # A session lock taken in its own transaction: the check below then runs in a new
            # one, which sees the catalog another process may have committed while we waited.
            conn.execute("SELECT pg_advisory_lock($1)", (MIGRATE_LOCK,))
            try:
                self._apply_migrations(conn)
            finally:
                if not conn.broken:
                    conn.execute("SELECT pg_advisory_unlock($1)", (MIGRATE_LOCK,))
        except PgError as exc:
            raise self._fail(exc, "cannot create or migrate the schema") from None

    def _apply_migrations(self, conn: Connection) -> None:
        with conn.transaction():
            applied = self._applied(conn, in_transaction=True)  # another process may have migrated meanwhile
            if applied > LATEST:
                raise StoreError(
                    f"{self._name}: the database's schema (version {applied}) is newer than this "
                    f"lesson-credit's (version {LATEST}); upgrade lesson-credit"
                )
            if applied == 0:
                conn.execute(
                    "CREATE SCHEMA IF NOT EXISTS lesson_credit; "
                    "CREATE TABLE lesson_credit.migrations (version integer PRIMARY KEY, "
                    "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
                )
            for version, description, sql in MIGRATIONS[applied:]:
                conn.execute(sql)
                conn.execute(
                    "INSERT INTO lesson_credit.migrations (version, description) VALUES ($1, $2)",
                    (version, description),
                )

    @staticmethod
    def _applied(conn: Connection, *, in_transaction: bool = False) -> int:
        """The schema's version (0: none). Outside a transaction one round trip: the version is
        read and a missing table means none (an error inside a transaction would abort it)."""
        from lesson_credit.core.log.libpq import PgError

        version = "SELECT coalesce(max(version), 0) FROM lesson_credit.migrations"
        if not in_transaction:
            try:
                return int(conn.value(version) or 0)
            except PgError as exc:
                if exc.sqlstate in ("42P01", "3F000"):  # undefined table, undefined schema
                    return 0
                raise
        if conn.value("SELECT to_regclass('lesson_credit.migrations') IS NOT NULL") != "t":
            return 0
        return int(conn.value(version) or 0)

    def close(self) -> None:
        for conn in (self._conn, self._listener):
            if conn is not None:
                with contextlib.suppress(Exception):
                    conn.close()
        self._conn = self._listener = None

    # ------------------------------------------------------------ the seam

    def prepare(self) -> None:
        """Connect (and create the schema) ahead of the first read or write. A failure is left
        for that read or write to report (the dashboard calls this in a worker at start-up)."""
        with contextlib.suppress(StoreError), self._db("cannot connect"):
            pass

    @contextlib.contextmanager
    def locked(self, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold the writers' lock (a session-level advisory lock: a dead client's is released)."""
        from lesson_credit.core.log.libpq import LOCK_NOT_AVAILABLE, PgError

        with self._db("cannot take the writers' lock") as conn:
            # the lock wait is bounded (lock_timeout, for this statement only), in one round trip
            try:
                conn.execute(
                    f"SET lock_timeout = '{int(timeout * 1000)}ms'; SELECT pg_advisory_lock({WRITE_LOCK}); "
                    "SET lock_timeout = 0"
                )
            except PgError as exc:
                if exc.sqlstate != LOCK_NOT_AVAILABLE:
                    raise
                if not conn.broken:
                    conn.execute("SET lock_timeout = 0")
                raise StoreError(f"{self._name}: another writer held the lock for {timeout:.0f} s") from None
        self._locked_conn = conn
        try:
            yield
        finally:
            self._locked_conn = None
            if not conn.closed and not conn.broken:
                with contextlib.suppress(PgError):
                    conn.execute("SELECT pg_advisory_unlock($1)", (WRITE_LOCK,))

    def _holding_lock(self) -> None:
        """Writes happen only on the connection that holds the writers' lock: one that broke and
        was replaced no longer holds it, and positions must stay in commit order."""
        if self._locked_conn is None or self._locked_conn is not self._conn or self._conn.closed:
            raise StoreError(f"{self._name}: not holding the writers' lock (connection lost?); nothing appended")

    def append_locked(self, line: bytes) -> None:
        """Insert one event (validated; committed on return); the caller holds `locked()`."""
        from lesson_credit.core.log.libpq import PgError

        session_id = check_event(line)
        f = _row_fields(line.strip())
        self._holding_lock()
        values = (f["type"], f["session_id"], f["event_time"], f["event"], f["raw"], self.agent, f["digest"])
        with self._db("cannot append") as conn:
            try:
                conn.execute(_INSERT, values)
            except PgError:  # _db lets only a unique violation through
                if session_id is not None:
                    raise DuplicateSession(session_id) from None
                raise StoreError(f"{self._name}: cannot append: a copy of this event is already stored") from None

    def append_event(self, line: bytes) -> None:
        with self.locked():
            self.append_locked(line)

    def size(self) -> int:
        """The position of the last event (0: none). The first call on a connection also learns the
        store's identity (`store_id`) in the same round trip."""
        with self._db("cannot read") as conn:
            if self._store_id is not None:
                return int(conn.value("SELECT coalesce(max(position), 0) FROM lesson_credit.events") or 0)
            rows = conn.rows(
                "SELECT coalesce(max(position), 0), (SELECT id::text FROM lesson_credit.store LIMIT 1)"
                " FROM lesson_credit.events"
            )
            self._store_id = rows[0][1] or "none"
            return int(rows[0][0] or 0)

    def store_id(self) -> str:
        """The identity the schema was created with: a database dropped and created again has another."""
        if self._store_id is None:
            with self._db("cannot read") as conn:
                self._store_id = conn.value("SELECT id::text FROM lesson_credit.store LIMIT 1") or "none"
        return self._store_id

    def fingerprint(self, end: int) -> str:
        """The database's identity and the position. The table is append-only (migration 2), so
        the events up to a position of one database never change."""
        if end <= 0:
            return "0:"
        return f"pg:{self.store_id()}:{end}"

    def read_chunks(
        self,
        start: int,
        first_line: int,
        decode: Callable[[bytes], Any] = decode_event,
        continues_line: bool = False,
        decode_lines: Callable[[memoryview], list[Any] | None] | None = None,
        chunk_bytes: int = CHUNK_BYTES,
        hasher: Any = None,
    ) -> Iterator[ReadResult]:
        """The events after position `start`, numbered from `first_line` in position order, in
        results of up to READ_ROWS events. They are decoded by the same code as the file's lines
        (the raw texts joined by newlines, one event per line)."""
        position, line = start, first_line
        bound = self.size() if self.written_by is not None else None
        while True:
            with self._db("cannot read") as conn:
                if bound is None:
                    rows = conn.rows(_READ, (position, READ_ROWS))
                else:
                    rows = conn.rows(_READ_WRITTEN_BY, (position, bound, self.written_by, READ_ROWS))
            count, last, text = (0, None, None) if not rows else (int(rows[0][0] or 0), rows[0][1], rows[0][2])
            if not count or last is None or text is None:
                yield ReadResult(end=position if bound is None else max(bound, position))
                return
            data = text.encode("utf-8") + b"\n"
            result = parse_chunk(data, 0, line, at_eof=True, decode=decode, decode_lines=decode_lines)
            done = count < READ_ROWS
            end = int(last) if bound is None or not done else max(bound, int(last))
            result.end, result.lines, result.partial = end, int(count), False
            yield result
            if done:
                return
            position, line = int(last), line + int(count)

    def wait(self, after: int, timeout: float) -> int:
        """The store's end position as soon as it is past `after` (told by NOTIFY, no polling),
        or when `timeout` seconds have passed. It uses a connection of its own, so one thread
        may wait while another reads and writes through the store."""
        from lesson_credit.core.log.libpq import PgError

        deadline = time.monotonic() + max(timeout, 0.0)
        try:
            if self._listener is None or self._listener.closed:
                listener = self._connect()
                self._migrate(listener)
                listener.execute(f"LISTEN {CHANNEL}")
                self._listener = listener
            listener = self._listener
            while True:  # listening before looking: a commit in between is still told
                end = int(listener.value("SELECT coalesce(max(position), 0) FROM lesson_credit.events") or 0)
                left = deadline - time.monotonic()
                if end > after or left <= 0:
                    return end
                listener.notifies(timeout=left)
        except PgError as exc:
            if self._listener is not None:
                with contextlib.suppress(Exception):
                    self._listener.close()
            self._listener = None
            raise self._fail(exc, "cannot wait for events") from None

    # ------------------------------------------------------------ moving in and out

    def push(self, lines: Iterable[bytes]) -> PushReport:
        """Copy a JSONL log's events (its lines, in order) into the database, in one transaction:
        all of them or, on any failure, none. A line already stored (the same bytes, the same
        how-many-th copy) is not added again; a second session event for an id is not added
        (the first counts, as on the file); a line that is not a valid event is reported."""
        from lesson_credit.core.log.libpq import PgError

        report = PushReport()
        seen: dict[bytes, int] = {}
        rows: list[tuple[Any, ...]] = []
        for number, line in enumerate(lines, start=1):
            stripped = line.strip()
            if not stripped:
                continue
            report.lines += 1
            try:
                decode_event(stripped)  # the reader's validation: what it would skip is not pushed
                fields = _row_fields(stripped)
            except (InvalidEvent, UnicodeDecodeError) as exc:
                report.problems.append(LogProblem(number, str(exc)))
                continue
            digest = fields["digest"]
            occurrence = seen.get(digest, 0)
            seen[digest] = occurrence + 1
            rows.append(
                (
                    len(rows),
                    fields["type"],
                    fields["session_id"],
                    fields["event_time"],
                    fields["event"] is not None,
                    fields["raw"],
                    digest,
                    occurrence,
                )
            )
        with self.locked(), self._db("cannot push") as conn:
            self._holding_lock()
            try:
                with conn.transaction():
                    conn.execute(
                        "CREATE TEMPORARY TABLE incoming (ord bigint, type text, session_id text, event_time text,"
                        " has_json boolean, raw text, digest bytea, occurrence integer) ON COMMIT DROP"
                    )
                    conn.execute(
                        "COPY incoming (ord, type, session_id, event_time, has_json, raw, digest, occurrence)"
                        " FROM STDIN",
                        copy_rows=rows,
                    )
                    added = conn.execute(
                        "INSERT INTO lesson_credit.events"
                        " (type, session_id, event_time, event, raw, agent, digest, occurrence)"
                        " SELECT type, session_id, event_time, CASE WHEN has_json THEN raw::jsonb END, raw, $1,"
                        " digest, occurrence FROM incoming ORDER BY ord ON CONFLICT DO NOTHING",
                        (self.agent,),
                    )
                    report.added = added if isinstance(added, int) else 0
            except PgError as exc:  # a unique violation (not expected: ON CONFLICT covers both)
                raise self._fail(exc, "cannot push") from None
        report.present = len(rows) - report.added
        return report

    def session_record(self, session_id: str, *, unique: bool = False) -> dict[str, Any] | None:
        """The session event stored for the id (the unique index allows one), through the index by session."""
        with self._db("cannot read") as conn:
            raw = conn.value(
                "SELECT raw FROM lesson_credit.events WHERE type = 'session' AND session_id = $1", (session_id,)
            )
        if raw is None:
            return None
        record = json.loads(raw)
        return record if isinstance(record, dict) else None

    def raw_lines(self) -> Iterator[bytes]:
        """Every event's JSON text, in position order, each with its newline."""
        position = 0
        while True:
            with self._db("cannot read") as conn:
                rows = conn.rows(
                    "SELECT position, raw FROM lesson_credit.events WHERE position > $1 ORDER BY position LIMIT $2",
                    (position, READ_ROWS),
                )
            for _, text in rows:
                yield (text or "").encode("utf-8") + b"\n"
            if len(rows) < READ_ROWS:
                return
            position = int(rows[-1][0] or 0)
