"""The write path's round trips: a write after a read is one statement (the INSERT brings back
what was committed since the read), the writers' section (an advisory lock) reads what others
committed and holds off other clients and threads, and identical events are numbered copy by copy."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest

from lesson_credit.core.log import pgstore
from lesson_credit.core.log.events import decode_raw
from lesson_credit.core.log.eventstore import StoreUnavailable
from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line


def session(sid: str) -> bytes:
    return line({"type": "session", "session_id": sid, "base_reward": 0.5, "timestamp": "2026-03-05T16:30:00Z",
                 "lessons": [{"path": "tools/git.md", "salience": 0.5}]})  # fmt: skip


def grade(sid: str) -> bytes:
    return line({"type": "grade", "session_id": sid, "base_reward": 0.7, "grader": "manual",
                 "timestamp": "2026-03-06T10:00:00Z"})  # fmt: skip


class Statements:
    """The statements one store's connection sends (counted on the client)."""

    def __init__(self, store: PgStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        execute = psycopg.Cursor.execute  # every statement: Connection.execute runs one through a cursor
        watched = store

        def counting(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            if cursor.connection is watched._conn:
                self.sent.append(" ".join(str(query).split())[:40])
            return execute(cursor, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", counting)


def read_new(store: PgStore, after: int, first: int) -> tuple[list[str], int, int]:
    """(session ids read, the end, the next line number): what a reader's refresh asks of the store."""
    if store.size() == after:
        return [], after, first
    ids: list[str] = []
    for result in store.read_since(after, first, decode=decode_raw):
        ids += [str(raw.session_id) for _, raw in result.events]
        after, first = result.end, first + result.lines
    return ids, after, first


@pytest.fixture
def stores(pg_url: str) -> Iterator[tuple[PgStore, PgStore]]:
    ours, other = PgStore(pg_url, agent="ours"), PgStore(pg_url, agent="other")
    yield ours, other
    ours.close()
    other.close()


def test_a_write_after_a_read_is_one_round_trip(
    stores: tuple[PgStore, PgStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a session's record takes no lock (the unique index refuses a second one): its append is the
    # write's one statement, and brings back what was committed since the read
    ours, other = stores
    other.append(session("a"))
    assert read_new(ours, 0, 1) == (["a"], 1, 2)
    other.append(session("b"))  # committed after our read: the write brings it back
    sent = Statements(ours, monkeypatch).sent
    ours.append(session("c"))
    assert read_new(ours, 1, 2) == (["b", "c"], 3, 4)  # what came before ours, then ours, in order
    assert len(sent) == 1 and sent[0].startswith("WITH new AS ( INSERT"), sent
    assert read_new(ours, 3, 4)[0] == []  # a size() asks the server
    assert len(sent) == 2


def test_the_writers_section_reads_what_others_committed(stores: tuple[PgStore, PgStore]) -> None:
    # inside locked() every read asks the server (the old section answered from the last read, so a
    # check made in it could miss what another writer had committed since)
    ours, other = stores
    other.append(session("a"))
    assert read_new(ours, 0, 1) == (["a"], 1, 2)
    other.append(session("b"))
    with ours.locked():
        assert ours.size() == 2
        assert read_new(ours, 1, 2) == (["b"], 2, 3)
        ours.append(session("c"))
        other.append(session("d"))  # a session's record takes no lock: the other writer goes on
        assert read_new(ours, 2, 3) == (["c"], 3, 4)  # read back as the append found the log
    assert read_new(ours, 3, 4) == (["d"], 4, 5)


def test_the_writers_lock_holds_off_other_clients_and_threads(pg_url: str, stores: tuple[PgStore, PgStore]) -> None:
    ours, other = stores
    entered: list[str] = []

    def enter(store: PgStore, who: str) -> None:
        with store.locked():
            entered.append(who)

    with ours.locked():
        with ours.locked():  # re-entered in the holding thread
            pass
        threads = [
            threading.Thread(target=enter, args=(other, "other")),
            threading.Thread(target=enter, args=(ours, "thread")),
        ]
        for thread in threads:
            thread.start()
        with psycopg.connect(pg_url, autocommit=True) as conn:  # the other client waits for the advisory lock
            for _ in range(600):
                row = conn.execute(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
                ).fetchone()
                if row and row[0] == 1:
                    break
                threading.Event().wait(0.05)
        assert entered == []  # neither the other client nor another thread of ours got in
        entered.append("ours")
    for thread in threads:
        thread.join(60)
    assert entered[0] == "ours" and sorted(entered[1:]) == ["other", "thread"]
    with pytest.raises(StoreUnavailable, match="another writer held the lock for 0.2 s"), ours.locked():
        with other.locked(timeout=0.2):
            pass
    with other.locked(timeout=5):  # released after a failure inside the block too
        pass


def test_appends_without_reads_do_not_bring_back_what_is_new_each_time(stores: tuple[PgStore, PgStore]) -> None:
    # A client that appends and does not read: each INSERT brought back up to 1,000 events after its
    # last read (the same ones again at every append), for a read that never came.
    ours, other = stores
    other.append(session("a"))
    assert read_new(ours, 0, 1) == (["a"], 1, 2)
    other.append(session("b"))
    ours.append(session("c"))  # the first append after a read brings back what is new for it
    assert ours._ahead is not None and ours._ahead.count == 2
    ours.append(session("d"))
    assert ours._ahead is None  # a second append without a read: nothing brought back
    assert read_new(ours, 1, 2) == (["b", "c", "d"], 4, 5)  # the read asks the server
    ours.append(session("e"))  # read since: the next append brings back again
    assert ours._ahead is not None and ours._ahead.count == 1


def test_identical_events_are_numbered_copy_by_copy(pg_url: str, stores: tuple[PgStore, PgStore]) -> None:
    ours, other = stores
    ours.append(session("s1"))
    for store in (ours, other, ours):
        store.append(grade("s1"))  # the same bytes three times: three events, copies 0, 1, 2
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute(
            "SELECT agent, occurrence FROM lesson_credit.events WHERE type = 'grade' ORDER BY position"
        ).fetchall()
    assert rows == [("ours", 0), ("other", 1), ("ours", 2)]


def test_statements_are_planned_once_unless_the_url_says_otherwise(pg_url: str) -> None:
    store = PgStore(pg_url, agent="a")
    assert store.conn.execute("SHOW plan_cache_mode").fetchone() == (b"force_generic_plan",)
    store.close()
    own = PgStore(pg_url + "?options=-c%20plan_cache_mode%3Dauto", agent="a")
    assert own.conn.execute("SHOW plan_cache_mode").fetchone() == (b"auto",)
    assert own.conn.execute("SHOW statement_timeout").fetchone() == (b"15s",)  # still ours
    own.close()


def test_a_look_at_the_position_starts_no_parallel_workers(pg_url: str) -> None:
    """`wait` looks at the position every 0.1 s (`_COUNT_AFTER`). As a generic plan `position > $1` is
    estimated at a third of the table, and at 1M events the server chose a parallel index scan:
    two worker processes started at every look (10 ms each), beside the dashboard on two cores."""
    store = PgStore(pg_url, agent="a")
    for i in range(20):
        store.append(session(f"s{i}"))
    conn = store.conn
    for setting in ("parallel_setup_cost", "parallel_tuple_cost", "min_parallel_index_scan_size",
                    "min_parallel_table_scan_size"):  # fmt: skip
        conn.execute(f"SET {setting} = 0")  # a parallel plan as cheap here as on a big table
    look = pgstore._COUNT_AFTER.replace("%s", "$1", 1).replace("%s", "$2", 1)
    conn.execute(f"PREPARE look(bigint, bigint) AS {look}")
    plan = " ".join(bytes(row[0]).decode() for row in conn.execute("EXPLAIN EXECUTE look(20, 20)"))
    assert "Parallel" not in plan and "Gather" not in plan, plan
    store.close()
    own = PgStore(pg_url + "?options=-c%20max_parallel_workers_per_gather%3D2", agent="a")
    assert own.conn.execute("SHOW max_parallel_workers_per_gather").fetchone() == (b"2",)  # the URL's own
    own.close()
