"""Sessions recorded without a lock: agents insert independently, the unique index decides
who records a contested session, identical events racing are both kept, and a reader never moves
past a position that a transaction still in flight may commit (positions are drawn at insert and
transactions commit in any order); and the writers' lock for writes checked against the log."""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.grading import GradeConflict
from lesson_credit.core.log import pgconn
from lesson_credit.core.log.events import decode_raw
from lesson_credit.core.log.eventstore import DuplicateSession
from lesson_credit.core.log.pgstore import PgStore
from lesson_credit.core.workspace import Workspace
from tests.pg.pg_helpers import insert_raw, line, wait_until, waiting_on_a_lock

JOIN_S = 120.0  # a generous bound for "it finished"; never a speed assertion


def session(sid: str, base: float | None = 0.5) -> bytes:
    return line({"type": "session", "session_id": sid, "base_reward": base, "timestamp": "2026-03-05T16:30:00Z",
                 "lessons": [{"path": "tools/git.md", "salience": 0.5}]})  # fmt: skip


def grade(sid: str, base: float) -> bytes:
    return line({"type": "grade", "session_id": sid, "base_reward": base, "grader": "manual",
                 "timestamp": "2026-03-06T10:00:00Z"})  # fmt: skip


def read(store: PgStore, after: int, first: int = 1) -> tuple[list[str], int]:
    """(session ids of the events read after `after`, the end to read after next)."""
    results = list(store.read_since(after, first, decode=decode_raw))
    return [str(raw.session_id) for r in results for _, raw in r.events], results[-1].end


class Background:
    """A call run in a thread; `result()` is its value (or raises its exception)."""

    def __init__(self, call: Callable[[], Any]) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=(call,), daemon=True)
        self.thread.start()

    def _run(self, call: Callable[[], Any]) -> None:
        try:
            self.value = call()
        except BaseException as exc:  # handed to the test by result()
            self.error = exc

    @property
    def done(self) -> bool:
        return not self.thread.is_alive()

    def result(self) -> Any:
        self.thread.join(JOIN_S)
        assert self.done, "the call did not finish"
        if self.error is not None:
            raise self.error
        return self.value


@pytest.fixture
def pg_url(pg_url: str) -> str:
    """A new database with the store's schema in place (the tests' raw inserts need the table)."""
    store = PgStore(pg_url, agent="setup")
    assert store.size() == 0
    store.close()
    return pg_url


def positions(url: str) -> list[tuple[str, str]]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT type, session_id FROM lesson_credit.events ORDER BY position").fetchall()
    return [(str(kind), str(sid)) for kind, sid in rows]


# ---------------------------------------------------------------- reading past gaps


@pytest.mark.parametrize("outcome", ["commit", "rollback"])
def test_a_reader_never_skips_an_event_committed_out_of_order(pg_url: str, outcome: str) -> None:
    writer, reader = PgStore(pg_url, agent="w"), PgStore(pg_url, agent="r")
    writer.append(session("s1"))  # position 1
    holder = psycopg.connect(pg_url)  # a transaction left open: it holds position 2
    try:
        assert insert_raw(holder, session("s2")) == 2
        writer.append(session("s3"))  # position 3, committed before 2
        # 3 is there, but 2 may still come: the reader stops before it (the old store read s3 and
        # went on from 3, so s2 was never read)
        assert read(reader, 0) == (["s1"], 1)
        assert reader.wait(0, 0.0) == 1  # following sees the same settled end
        getattr(holder, outcome)()
    finally:
        holder.close()
    expected = ["s2", "s3"] if outcome == "commit" else ["s3"]  # a rolled-back insert leaves a gap for good
    assert read(reader, 1, 2) == (expected, 3)
    assert reader.wait(1, 0.0) == 3
    writer.close()
    reader.close()


def test_following_is_told_when_an_insert_in_flight_rolls_back(pg_url: str) -> None:
    # a rollback sends no notification: the follower looks again while a gap waits for an insert
    writer, follower = PgStore(pg_url, agent="w"), PgStore(pg_url, agent="f")
    holder = psycopg.connect(pg_url)
    try:
        insert_raw(holder, session("s1"))  # position 1, in flight
        writer.append(session("s2"))  # position 2
        assert follower.wait(0, 0.0) == 0
        waiting = Background(lambda: follower.wait(0, JOIN_S))
        holder.rollback()
        assert waiting.result() == 2
    finally:
        holder.close()
    writer.close()
    follower.close()


def test_a_writer_reads_its_own_event_past_another_clients_insert_in_flight(
    pg_url: str, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = psycopg.connect(pg_url)
    insert_raw(holder, session("other"))  # position 1, in flight while our record commits position 2
    waited: list[float] = []

    def pause(seconds: float) -> None:  # the writer waits for the insert in flight: now let it commit
        waited.append(seconds)
        if not holder.closed:
            holder.commit()
            holder.close()

    monkeypatch.setattr(PgStore, "_pause", staticmethod(pause))
    ws = Workspace(ws_root, store=PgStore(pg_url, agent="w"))
    try:
        explained = ws.record("mine", ws_root / "j.txt", ["tools/git.md"], reward=0.5)
    finally:
        holder.close()
    assert waited  # it did wait for the other insert, instead of stopping before it or skipping it
    assert explained.session.session_id == "mine"
    assert [s.session_id for s in ws.sessions()] == ["other", "mine"]  # in position order
    assert positions(pg_url) == [("session", "other"), ("session", "mine")]


def test_reading_back_past_an_insert_that_does_not_end_says_the_event_is_stored(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pgconn, "STATEMENT_TIMEOUT_S", 0.5)  # how long a read waits for an insert in flight
    holder = psycopg.connect(pg_url)
    store = PgStore(pg_url, agent="w")
    try:
        insert_raw(holder, session("other"))  # position 1, left open
        store.append(session("mine"))  # position 2: committed
        with pytest.raises(StoreUnavailable, match="the event was stored, but cannot be read back in order yet"):
            list(store.read_since(0, 1))
        assert positions(pg_url) == [("session", "mine")]
        other = PgStore(pg_url, agent="r")  # a reader that wrote nothing does not wait: it stops before 1
        assert read(other, 0) == ([], 0)
        other.close()
    finally:
        holder.close()
    store.close()


def test_a_read_ahead_older_than_ones_append_does_not_hide_it(pg_url: str) -> None:
    # The dashboard reads and writes through one store from two threads: a size() that began before
    # an append may leave its read-ahead (older than the append) for the read that follows it.
    store = PgStore(pg_url, agent="w")
    store.append(session("s1"))
    assert read(store, 0) == (["s1"], 1)
    assert store.size() == store.size() == 1  # the second reads ahead after position 1: nothing yet
    stale = store._ahead
    assert stale is not None and (stale.after, stale.count) == (1, 0)
    store.append(session("s2"))
    store._ahead = stale  # as that size() would, finishing after the append
    assert read(store, 1, 2) == (["s2"], 2)
    store.close()


# ---------------------------------------------------------------- writing without a lock


def test_agents_insert_independently(pg_url: str, ws_root: Path) -> None:
    # One agent's insert waits (on a contested id another transaction holds); a second agent's
    # record commits meanwhile. Under the old writers' lock the second waited for the first, which
    # held the lock while it waited. (Reading its record back, the second agent then waits for the
    # insert in flight before its own: the fold's order is the positions'.)
    first, second = PgStore(pg_url, agent="a"), PgStore(pg_url, agent="b")
    holder = psycopg.connect(pg_url)
    try:
        insert_raw(holder, session("contested"))
        stuck = Background(lambda: first.append(session("contested")))
        wait_until(lambda: waiting_on_a_lock(pg_url), "the first agent's insert waits for the contested id")
        ws = Workspace(ws_root, store=second)
        recording = Background(lambda: ws.record("free", ws_root / "j.txt", ["tools/git.md"], reward=1.0))
        wait_until(lambda: ("session", "free") in positions(pg_url), "the second agent's event is committed")
        assert not stuck.done  # the first still waits: the second did not wait for it
        holder.commit()
        with pytest.raises(DuplicateSession, match="'contested' is already recorded"):
            stuck.result()
        assert recording.result().session.session_id == "free"
    finally:
        holder.close()
    assert [s.session_id for s in ws.sessions()] == ["contested", "free"]
    first.close()
    second.close()


def test_no_advisory_lock_is_taken(pg_url: str) -> None:
    # the old store's writers' lock key, held by someone else, does not stop a write
    with psycopg.connect(pg_url, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(%s)", (0x4C43_0001,))
        store = PgStore(pg_url, agent="a")
        Background(lambda: store.append(session("s1"))).result()
        with psycopg.connect(pg_url) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)"
                " WHERE l.locktype = 'advisory' AND a.application_name = 'lesson-credit'"
            ).fetchone()
        assert row == (0,)
        store.close()
    assert positions(pg_url) == [("session", "s1")]


@pytest.mark.parametrize("outcome", ["commit", "rollback"])
def test_a_session_two_clients_race_for_is_stored_once(pg_url: str, outcome: str) -> None:
    holder = psycopg.connect(pg_url)
    store = PgStore(pg_url, agent="b")
    try:
        insert_raw(holder, session("s1", 0.1), agent="a")
        racing = Background(lambda: store.append(session("s1", 0.9)))
        wait_until(lambda: waiting_on_a_lock(pg_url), "the second insert waits on the unique index")
        getattr(holder, outcome)()
        if outcome == "commit":
            with pytest.raises(DuplicateSession, match="'s1' is already recorded"):
                racing.result()
        else:
            racing.result()
    finally:
        holder.close()
    with psycopg.connect(pg_url) as conn:
        agents = conn.execute("SELECT agent FROM lesson_credit.events WHERE session_id = 's1'").fetchall()
    assert agents == [("a",)] if outcome == "commit" else [("b",)]
    store.close()


def test_identical_events_racing_are_both_stored(pg_url: str) -> None:
    # The same grade, byte for byte, from two clients at once: both are events (as two equal lines
    # of the file are). The second insert numbered its copy 0 too and waited on the first; when the
    # first commits it counts again (the old store reported "a copy of this event is already stored").
    store = PgStore(pg_url, agent="b")
    store.append(session("s1"))
    holder = psycopg.connect(pg_url)
    try:
        insert_raw(holder, grade("s1", 0.7), agent="a", occurrence=0)
        racing = Background(lambda: store.append(grade("s1", 0.7)))
        wait_until(lambda: waiting_on_a_lock(pg_url), "the second insert waits for the first copy")
        holder.commit()
        racing.result()
    finally:
        holder.close()
    with psycopg.connect(pg_url) as conn:
        copies = conn.execute(
            "SELECT agent, occurrence FROM lesson_credit.events WHERE type = 'grade' ORDER BY position"
        ).fetchall()
    assert copies == [("a", 0), ("b", 1)]
    assert read(store, 0)[0] == ["s1", "s1", "s1"]
    store.close()


def test_concurrent_writers_and_a_follower_agree_on_the_order(pg_url: str) -> None:
    # Writers commit in whatever order the server lets them (some inserts roll back: contested
    # ids), while a reader reads on from where it stopped. What it read, in order, is the table's
    # order: no event skipped, none twice.
    n_writers, per_writer = 4, 30
    stores = [PgStore(pg_url, agent=f"w{k}") for k in range(n_writers)]
    done = threading.Event()

    def write(k: int) -> None:
        for i in range(per_writer):
            stores[k].append(session(f"w{k}-{i}"))
            if i % 10 == 0:
                with pytest.raises(DuplicateSession):
                    stores[k].append(session(f"w{k}-{i}"))

    def follow() -> list[str]:
        seen: list[str] = []
        reader, end = PgStore(pg_url, agent="r"), 0
        while True:
            finished = done.is_set()  # read once more after the writers finish
            got, end = read(reader, end, len(seen) + 1)
            seen += got
            if finished:
                reader.close()
                return seen
            reader.wait(end, 0.2)

    follower = Background(follow)
    writers = [Background(functools.partial(write, k)) for k in range(n_writers)]
    for writer in writers:
        writer.result()
    done.set()
    seen = follower.result()
    table = [sid for _, sid in positions(pg_url)]
    assert len(table) == n_writers * per_writer
    assert seen == table
    for store in stores:
        store.close()


# ---------------------------------------------------------------- the writers' lock


def test_two_grades_checked_against_the_same_latest_grade_are_not_both_written(pg_url: str, ws_root: Path) -> None:
    # Two clients grade a session, each expecting the grade it was shown (line 2) to be the latest:
    # the one grade write path's check-then-act. The first checks and pauses before appending; the
    # second then runs. The old store's locked() did nothing on a database: the second checked,
    # appended, and the first appended too, superseding a grade it never saw. With the writers'
    # advisory lock the second waits, then finds the first's grade and writes nothing.
    setup = PgStore(pg_url, agent="setup")
    Workspace(ws_root, store=setup).record("s1", ws_root / "j.txt", ["tools/git.md"], reward=0.5)
    shown = Workspace(ws_root, store=setup).grade("s1", 0.6).line  # the grade both clients were shown
    first, second = (
        Workspace(ws_root, store=PgStore(pg_url, agent="a")),
        Workspace(ws_root, store=PgStore(pg_url, agent="b")),
    )
    checked, go = threading.Event(), threading.Event()
    history = first.grade_history

    def paused_history(session_id: str) -> Any:
        found = history(session_id)
        if not checked.is_set():  # the check's history, taken under the lock: hold the first there
            checked.set()
            go.wait(JOIN_S)
        return found

    first.grade_history = paused_history  # type: ignore[method-assign]
    grading_first = Background(lambda: first.append_grade("s1", 0.1, expect_line=shown))
    wait_until(checked.is_set, "the first client checked the latest grade")
    grading_second = Background(lambda: second.append_grade("s1", 0.9, expect_line=shown))
    wait_until(
        lambda: grading_second.done or waiting_on_a_lock(pg_url, "pg_advisory_lock"),
        "the second client is done or waits for the writers' lock",
    )
    go.set()
    outcomes = []
    for grading in (grading_first, grading_second):
        try:
            outcomes.append(grading.result().record.base_reward)
        except GradeConflict:
            outcomes.append("conflict")
    assert outcomes == [0.1, "conflict"]
    grades = [row for row in positions(pg_url) if row[0] == "grade"]
    assert grades == [("grade", "s1"), ("grade", "s1")]  # the shown grade and the first client's


def test_a_record_s_state_file_never_replaces_a_later_one(pg_url: str, ws_root: Path) -> None:
    # Two agents in one workspace record at once on a database, where records take no lock to append.
    # The first has appended and folded, and is about to replace bandit-state.json; the second records
    # in full meanwhile. Before, the second's file (both sessions) was then replaced by the first's
    # (its own session only): gptme read one selection of tools/git.md where the log held two. The
    # state file is now rewritten under the writers' lock, from the log as it is under it.
    first, second = (
        Workspace(ws_root, store=PgStore(pg_url, agent="a")),
        Workspace(ws_root, store=PgStore(pg_url, agent="b")),
    )
    folded, go = threading.Event(), threading.Event()
    own_state = first._own_state

    def paused_state(existing: dict[str, Any]) -> dict[str, Any]:
        payload = own_state(existing)
        if not folded.is_set():
            folded.set()
            go.wait(JOIN_S)
        return payload

    first._own_state = paused_state  # type: ignore[method-assign]
    recording_first = Background(lambda: first.record("s1", ws_root / "j.txt", ["tools/git.md"], reward=1.0))
    wait_until(folded.is_set, "the first agent folded the log for its state file")
    recording_second = Background(lambda: second.record("s2", ws_root / "j.txt", ["tools/git.md"], reward=0.0))
    wait_until(
        lambda: recording_second.done or waiting_on_a_lock(pg_url, "pg_advisory_lock"),
        "the second agent is done or waits for the writers' lock",
    )
    go.set()
    assert recording_first.result().session.session_id == "s1"
    assert recording_second.result().session.session_id == "s2"
    state = json.loads((ws_root / "state" / "lesson-thompson" / "bandit-state.json").read_text())
    (git,) = [arm for key, arm in state["arms"].items() if "git" in key]
    assert git["total_selections"] == 2  # s1 and s2 each injected tools/git.md
    assert [row for row in positions(pg_url) if row[0] == "session"] == [("session", "s1"), ("session", "s2")]


def test_a_record_is_logged_when_the_state_file_s_lock_is_held_too_long(
    pg_url: str, ws_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writers' lock, which a record on a database takes only to rewrite bandit-state.json, held by
    # another client past the wait: the session is logged (the command succeeded) and the warning says
    # the file was not rewritten, not "nothing written" (the lock's own message).
    holder = PgStore(pg_url, agent="holder")
    ws = Workspace(ws_root, store=PgStore(pg_url, agent="a"))
    monkeypatch.setenv("LESSON_CREDIT_LOCK_TIMEOUT", "0.2")
    with holder.locked():
        explanation = ws.record("s1", ws_root / "j.txt", ["tools/git.md"], reward=1.0)
    assert explanation.session.session_id == "s1"
    assert positions(pg_url) == [("session", "s1")]
    assert ws.warnings == [
        "bandit-state.json not rewritten: another writer held the log's lock too long; the event is logged,"
        " and the next write or `status` rewrites bandit-state.json"
    ]
    assert not (ws_root / "state" / "lesson-thompson" / "bandit-state.json").exists()
