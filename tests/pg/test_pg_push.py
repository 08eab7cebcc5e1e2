"""`store push` (core/log/pgpush.py): each event once, copies of an identical line numbered in log
order after those already stored, the first session event for an id counts, also when another
client stores one while the push runs."""

from __future__ import annotations

import threading

import psycopg
from pg_helpers import insert_raw, line, wait_until, waiting_on_a_lock

from lesson_credit.core.log import pgpush
from lesson_credit.core.log.pgstore import PgStore


def session(sid: str, base: float = 0.5) -> bytes:
    return line({"type": "session", "session_id": sid, "base_reward": base,
                 "lessons": [{"path": "tools/git.md", "salience": 0.5}]})  # fmt: skip


GRADE = line({"type": "grade", "session_id": "s1", "base_reward": 0.9, "grader": "manual"})


def stored(url: str) -> list[tuple[str, str, int]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT type, session_id, occurrence FROM lesson_credit.events ORDER BY position")
        return [(str(kind), str(sid), int(occurrence)) for kind, sid, occurrence in rows.fetchall()]


def test_each_event_once_and_copies_numbered_after_those_stored(pg_url: str) -> None:
    store = PgStore(pg_url, agent="a")
    store.append_event(GRADE)  # the database holds one copy of the grade already
    log = [session("s1"), GRADE, GRADE, b"not json\n", session("s2"), session("s1", 0.9), b"\n", GRADE]
    report = store.push(log)
    # by hand: 6 valid lines. The grade's copies in the log are its 1st, 2nd and 3rd: the 1st is the
    # one stored, the others are added as copies 1 and 2; the second session event for s1 is not.
    assert (report.lines, report.invalid, report.added, report.present) == (7, 1, 4, 2)
    assert [p.line for p in report.problems] == [4]
    assert stored(pg_url) == [("grade", "s1", 0), ("session", "s1", 0), ("grade", "s1", 1), ("session", "s2", 0),
                              ("grade", "s1", 2)]  # fmt: skip
    again = store.push(log)
    assert (again.added, again.present) == (0, 6)
    store.close()


def test_a_session_another_client_stores_while_pushing_is_theirs(pg_url: str) -> None:
    store = PgStore(pg_url, agent="a")
    assert store.size() == 0  # the schema
    holder = psycopg.connect(pg_url)
    reports: list[object] = []
    try:
        insert_raw(holder, session("s2", 0.1), agent="other")  # not committed yet: the push waits on s2
        pushing = threading.Thread(target=lambda: reports.append(store.push([session(f"s{i}") for i in (1, 2, 3)])))
        pushing.start()
        wait_until(lambda: waiting_on_a_lock(pg_url, "lesson_credit.events"), "the push waits on s2")
        holder.commit()
        pushing.join(120)
        assert not pushing.is_alive()
    finally:
        holder.close()
    report = reports[0]
    assert isinstance(report, pgpush.PushReport) and (report.added, report.present) == (2, 1)
    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT session_id, agent FROM lesson_credit.events ORDER BY position").fetchall()
    assert rows == [("s2", "other"), ("s1", "a"), ("s3", "a")]  # the first committed counts
    store.close()
