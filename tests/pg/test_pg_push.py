"""`store push` (core/log/pgpush.py): each event once, copies of an identical line numbered in log
order after those already stored, the first session event for an id counts, also when another
client stores one while the push runs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lesson_credit.core.log import pgpush
from lesson_credit.core.log.eventstore import JsonlStore
from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import insert_raw, line, log_path, wait_until, waiting_on_a_lock
from tests.support.cli_run import run_cli, run_json


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
    store.append(GRADE)  # the database holds one copy of the grade already
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


def grade(sid: str, base: float) -> bytes:
    return line({"type": "grade", "session_id": sid, "base_reward": base, "grader": "manual"})


def test_into_an_empty_store_the_lines_are_copied_straight_in(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_staging(*args: object) -> None:
        raise AssertionError("staged")

    monkeypatch.setattr(pgpush, "_staged", no_staging)
    store = PgStore(pg_url, agent="a")
    log = [session("s1"), GRADE, b"not json\n", GRADE, session("s2"), GRADE]
    report = store.push(log)
    assert (report.lines, report.invalid, report.added, report.present) == (6, 1, 5, 0)
    # by hand: the grade's three copies are copies 0, 1, 2, in log order
    assert stored(pg_url) == [("session", "s1", 0), ("grade", "s1", 0), ("grade", "s1", 1), ("session", "s2", 0),
                              ("grade", "s1", 2)]  # fmt: skip
    store.close()


@pytest.mark.parametrize("window", [2, pgpush.COPY_WINDOW])
def test_what_a_direct_copy_must_not_add_sends_the_push_the_staged_way(
    pg_url: str, window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Copies of a line further apart than the window (numbered too low by it), and a second session
    # event for an id: the unique indexes refuse the COPY, the push starts over staged, and the result
    # is the staged push's (the first session event counts; copies numbered in log order).
    monkeypatch.setattr(pgpush, "COPY_WINDOW", window)
    staged: list[int] = []
    original = pgpush._staged

    def counting(*args: Any) -> pgpush.PushReport:
        staged.append(1)
        return original(*args)

    monkeypatch.setattr(pgpush, "_staged", counting)
    store = PgStore(pg_url, agent="a")
    far_apart = [grade("s1", 0.1), session("s1"), session("s2"), session("s3"), grade("s1", 0.1)]
    report = store.push(far_apart)
    assert (report.added, report.present, len(staged)) == (5, 0, 1 if window == 2 else 0)
    assert [occurrence for _, _, occurrence in stored(pg_url)] == [0, 0, 0, 0, 1]
    store.close()
    other = PgStore(create_empty(pg_url), agent="b")
    report = other.push(lambda: iter([session("s1", 0.1), session("s2"), session("s1", 0.9)]))  # read twice
    assert (report.added, report.present, len(staged)) == (2, 1, 2 if window == 2 else 1)
    with psycopg.connect(other.url) as conn:
        first = conn.execute("SELECT raw FROM lesson_credit.events WHERE session_id = 's1'").fetchall()
    assert [json.loads(raw)["base_reward"] for (raw,) in first] == [0.1]
    other.close()


def create_empty(url: str) -> str:
    """Another empty database on the same server."""
    name = f"{url.rsplit('/', 1)[1]}_b"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{url.rsplit('/', 1)[0]}/{name}"


def test_push_json_does_not_read_the_database(
    pg_url: str, ws_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # reading the events back to list the log's problems held the whole log in memory (272 MB at
    # 105,000 events); the pushed file's invalid lines are listed under "invalid"
    log_path(ws_root).write_bytes(session("s1") + b"not json\n")

    def no_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("read the database")

    monkeypatch.setattr(PgStore, "read_since", no_read)
    out = run_json(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert (out["added"], out["invalid_lines"], out["warnings"]) == (1, 1, [])


def test_a_second_session_event_stops_the_direct_copy_where_it_is(pg_url: str) -> None:
    # The unique index refuses a second session event for an id only when the COPY ends, after the
    # whole log; the direct COPY stops at the line (within its window) and the push goes staged.
    log = [session("s1", 0.1), session("s2"), session("s1", 0.9), session("s3"), session("s4")]
    passes: list[int] = []

    def lines() -> Iterator[bytes]:
        passes.append(0)
        for text in log:
            passes[-1] += 1
            yield text

    store = PgStore(pg_url, agent="a")
    report = store.push(lines)
    assert passes == [3, 5]  # the direct COPY read up to the second s1; the staged push all of it
    assert (report.added, report.present) == (4, 1)
    assert stored(pg_url) == [("session", sid, 0) for sid in ("s1", "s2", "s3", "s4")]
    with psycopg.connect(pg_url) as conn:
        first = conn.execute("SELECT raw FROM lesson_credit.events WHERE session_id = 's1'").fetchall()
    assert [json.loads(raw)["base_reward"] for (raw,) in first] == [0.1]
    store.close()


def test_undo_walks_on_back_after_a_push_into_a_store_holding_other_events(pg_url: str, ws_root: Path) -> None:
    # the workspace's log, written by the CLI: s1 pending, graded 0.9 (line 2) and 0.5 (line 3), the 0.5
    # undone (line 4, "undid manual's grade on line 3"). The database holds another agent's two events first, so s1's
    # grades are at lines 4 and 5 there, and the undo's note names line 3: s1's session event there.
    store = PgStore(pg_url, agent="other")
    store.append(session("s0", 0.2))
    store.append(grade("s0", 0.3))
    store.close()
    log_path(ws_root).write_bytes(line({"type": "session", "session_id": "s1", "base_reward": None,
                                        "lessons": [{"path": "tools/git.md", "salience": 1.0}]}))  # fmt: skip
    for argv in (("grade", "s1", "0.9"), ("grade", "s1", "0.5"), ("undo", "s1"), ("store", "push", "--store", pg_url)):
        code, _, err = run_cli(*argv, "-w", str(ws_root))
        assert code == 0, err
    code, out, err = run_cli("undo", "s1", "-w", str(ws_root), "--store", pg_url)
    assert code == 0, err
    # the second undo reverts the 0.9 (position 4): pending again, as the same undo on the file gives;
    # before, it reverted the 0.5 a second time and logged 0.9 again
    assert out.startswith("s1: undid manual's grade on line 4: 0.9 back to pending\n"), out
    code, out, err = run_cli("status", "-w", str(ws_root), "--store", pg_url, "--json")
    assert code == 0, err
    git = next(r for r in json.loads(out)["lessons"] if r["path"] == "tools/git.md")
    # git's one graded session is the other agent's s0, graded 0.3 at salience 0.5: w = 0.3 + 0.7 x 0.5 = 0.65,
    # r = 0.195 (seed); s1 counts for nothing (before, its 0.9 did: 1 + 0.195 + 0.9)
    assert (round(git["alpha"], 9), round(git["beta"], 9), git["n"]) == (1.195, 1.805, 1)


def test_store_push_reads_the_first_line_after_a_bom(tmp_path: Path) -> None:
    log = JsonlStore(tmp_path / "sessions.jsonl")
    log.path.write_bytes("\ufeff".encode() + session("s1") + session("s2"))
    report = pgpush.PushReport()
    rows = list(pgpush._rows(log.raw_lines(), report))  # what `store push` copies into the database
    assert [row["session_id"] for row in rows] == ["s1", "s2"]
    assert (report.lines, report.invalid) == (2, 0)
