"""The database store's schema and its migrations (core/log/pgstore.py describes the tables).

A connection checks the schema's version once when it opens (one round trip when it is
current). Migrating happens in one transaction holding a transaction-level advisory lock, so
two clients opening a new database at once create it once; nothing else takes a lock.
"""

from __future__ import annotations

import hashlib
from typing import Any

from psycopg import errors as pg_errors

from lesson_credit.core.log.events import RawEvent, decode_raw, is_session
from lesson_credit.core.log.pgconn import Connection
from lesson_credit.core.log.store import StoreError

MIGRATE_LOCK = 0x4C43_0002  # pg_advisory_xact_lock key of schema migrations ("LC", 2)

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
    (
        3,
        "no NOTIFY on insert (its commit-time lock serialized every writer's commit; followers poll) "
        "and no index by session for every event (the session events' unique index serves the reads)",
        """
        DROP TRIGGER events_notify ON lesson_credit.events;
        DROP FUNCTION lesson_credit.notify_events();
        DROP INDEX lesson_credit.events_by_session;
        """,
    ),
    (
        4,
        "a count of the changes made to events past the append-only triggers (UPDATE, DELETE, TRUNCATE "
        "with the triggers skipped): caches and long-lived readers vouch for what they read with it",
        """
        ALTER TABLE lesson_credit.store ADD COLUMN changes bigint NOT NULL DEFAULT 0;
        CREATE FUNCTION lesson_credit.count_change() RETURNS trigger LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = pg_catalog AS $$
        BEGIN
            UPDATE lesson_credit.store SET changes = changes + 1;
            RETURN NULL;
        END $$;
        CREATE TRIGGER events_changed AFTER UPDATE OR DELETE OR TRUNCATE ON lesson_credit.events
            FOR EACH STATEMENT EXECUTE FUNCTION lesson_credit.count_change();
        ALTER TABLE lesson_credit.events ENABLE ALWAYS TRIGGER events_changed;
        """,
    ),
)
LATEST = MIGRATIONS[-1][0]

# What vouches for the events up to a position (core/log/pgstore.py `PgStore.fingerprint`): the changes
# counted by migration 4, and the last event: its position, the digest of its text as it is now (a hand
# UPDATE leaves the digest column as it was), its copy
# the last event's commit time too (microseconds since the epoch, whatever the session's time zone): a database
# restored from a backup may take the very same bytes again at that position, never at the same moment
LAST_UP_TO = """SELECT (SELECT changes FROM lesson_credit.store LIMIT 1), last.position,
    sha256(convert_to(last.raw, 'UTF8')), last.occurrence,
    (extract(epoch FROM last.committed_at) * 1000000)::bigint FROM (SELECT 1) AS one LEFT JOIN LATERAL (
        SELECT position, raw, occurrence, committed_at FROM lesson_credit.events WHERE position <= %s
        ORDER BY position DESC LIMIT 1
    ) AS last ON true"""

_VERSION = "SELECT coalesce(max(version), 0) FROM lesson_credit.migrations"


def applied(conn: Connection) -> int:
    """The schema's version (0: none), in one round trip: a missing table means none."""
    try:
        row = conn.execute(_VERSION).fetchone()
    except (pg_errors.UndefinedTable, pg_errors.InvalidSchemaName):
        return 0
    return int(row[0]) if row else 0


def migrate(conn: Connection, name: str) -> None:
    """Bring the schema to LATEST (psycopg.Error on failure; StoreError when it is newer than ours)."""
    version = applied(conn)
    if version == LATEST:
        return
    if version > LATEST:
        raise _newer(name, version)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATE_LOCK,))
        # a new statement, a new snapshot: what another client migrated while we waited shows
        exists = conn.execute("SELECT to_regclass('lesson_credit.migrations') IS NOT NULL").fetchone()
        version = 0
        if exists and exists[0]:
            row = conn.execute(_VERSION).fetchone()
            version = int(row[0]) if row else 0
        if version > LATEST:
            raise _newer(name, version)
        if version == 0:
            conn.execute(
                "CREATE SCHEMA IF NOT EXISTS lesson_credit; "
                "CREATE TABLE lesson_credit.migrations (version integer PRIMARY KEY, "
                "description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())"
            )
        for number, description, sql in MIGRATIONS[version:]:
            conn.execute(sql.encode())  # bytes: several statements, no parameters
            conn.execute(
                "INSERT INTO lesson_credit.migrations (version, description) VALUES (%s, %s)", (number, description)
            )


def row_fields(raw_line: bytes, raw: RawEvent | None = None) -> dict[str, Any]:
    """The columns of one validated event line (no newline); `raw`: its decoded fields, if at hand."""
    raw = decode_raw(raw_line) if raw is None else raw
    text = raw_line.decode("utf-8")
    return {
        "type": "session" if is_session(raw) else str(raw.type),
        "session_id": None if raw.session_id is None else str(raw.session_id),
        "event_time": raw.timestamp,
        # JSONB cannot hold U+0000; such an event keeps only its raw text (which the fold reads)
        "event": None if b"\\u0000" in raw_line else text,
        "raw": text,
        "digest": hashlib.sha256(raw_line).digest(),
    }


def _newer(name: str, version: int) -> StoreError:
    return StoreError(
        f"{name}: the database's schema (version {version}) is newer than this lesson-credit's "
        f"(version {LATEST}); upgrade lesson-credit"
    )
