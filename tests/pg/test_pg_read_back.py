"""A write whose event committed, then the database went away before the command read it back (a
restart or failover right after the commit). The command never prints numbers of the log as it was
before its own event, never says the event was not stored, and never blames another writer."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from lesson_credit.core.base.files import StoreUnavailable
from lesson_credit.core.log.events import decode_raw
from lesson_credit.core.log.pgconn import parse_url
from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import insert_raw, line
from tests.support.cli_run import run

GIT = "tools/git.md"


def session(sid: str) -> bytes:
    # heuristic 0.5, salience 1.0: weight 1, so (seed) alpha 1 + 0.5, beta 1 + 0.5
    return line(
        {
            "type": "session",
            "session_id": sid,
            "timestamp": "2026-03-05T16:30:00Z",
            "base_reward": 0.5,
            "grader": "heuristic",
            "lessons": [{"path": GIT, "salience": 1.0}],
        }
    )


def admin_url(url: str) -> str:
    return url.rsplit("/", 1)[0] + "/postgres"


def allow_connections(url: str, allow: bool) -> None:
    with psycopg.connect(admin_url(url), autocommit=True) as admin:
        admin.execute(f'ALTER DATABASE "{parse_url(url)["dbname"]}" ALLOW_CONNECTIONS {str(allow).lower()}')


def rows(url: str) -> list[tuple[str, str]]:
    """The events stored (the database taking connections again first)."""
    allow_connections(url, True)
    with psycopg.connect(url) as conn:
        found = conn.execute("SELECT type, session_id FROM lesson_credit.events ORDER BY position").fetchall()
    return [(str(kind), str(sid)) for kind, sid in found]


def cut_after_commit(url: str, monkeypatch: pytest.MonkeyPatch, refuse: bool = True) -> None:
    """`url` with s1 recorded; from then on each append commits, and then its connection is cut
    (a failover, a pooler's restart) and, when `refuse`, the database takes no new one (as a
    server stopped right after the commit)."""
    store = PgStore(url, agent="setup")
    store.append(session("s1"))
    store.close()
    original = PgStore.append

    def append(self: PgStore, event: bytes) -> None:
        original(self, event)
        allow_connections(url, not refuse)
        with psycopg.connect(admin_url(url), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (self.conn.info.backend_pid,))

    monkeypatch.setattr(PgStore, "append", append)


def test_a_grade_read_back_after_the_database_went_away_prints_no_stale_numbers(
    pg_url: str, ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = pg_url
    cut_after_commit(url, monkeypatch)
    # another agent's insert in flight: the grade's position follows a gap, so reading it back
    # takes statements of its own (the append's answer alone does not settle it)
    with psycopg.connect(url) as other:
        insert_raw(other, session("s2"), agent="other")
        code, out, err = run(capsys, "grade", "s1", "0.9", "-w", str(ws_root), "--store", url)
        other.rollback()
    assert rows(url) == [("session", "s1"), ("grade", "s1")]  # the grade committed
    # Before, exit 0 and the log as it was before the grade: "manual 0.9 logged; 0.5 (heuristic)
    # stays in force" (a person's grade is first in the default priority: 0.9 is in force) and
    # the table's reward 0.500
    assert "stays in force" not in out and "0.500" not in out
    # stored: the grade succeeded (exit 0) and says it cannot show the log now; it exited 75, and
    # a hook that retried logged the grade twice
    assert (code, out) == (0, ""), err
    assert err.count("\n") == 1 and err.startswith("warning: the event was stored, but cannot be read back now"), err
    assert err.endswith("(the command succeeded: its event is logged)\n") and "another writer" not in err, err


def test_a_grade_whose_connection_was_cut_after_the_commit_is_read_back_on_a_new_one(
    pg_url: str, ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cut_after_commit(pg_url, monkeypatch, refuse=False)
    with psycopg.connect(pg_url) as other:  # an insert rolled back: a gap for good below the grade's position
        insert_raw(other, session("s2"), agent="other")
        other.rollback()
    code, out, err = run(capsys, "grade", "s1", "0.9", "-w", str(ws_root), "--store", pg_url)
    assert code == 0, err
    assert rows(pg_url) == [("session", "s1"), ("grade", "s1")]
    # Before: "manual 0.9 logged; 0.5 (heuristic) stays in force", the log without the grade.
    # A person's grade comes first in the default priority: 0.5 -> 0.9, and (salience 1, weight 1)
    # the lesson's reward 0.900, alpha +0.900, beta +0.100
    assert out.startswith("graded s1: 0.500 -> 0.900 (manual)"), out
    assert "+0.900  +0.100" in out, out
    # the writers' lock went with the old connection: bandit-state.json is left to the next write
    assert err.count("\n") == 1 and "bandit-state.json" in err and "another writer" not in err, err


def test_a_record_read_back_after_the_database_went_away_says_it_was_stored(
    pg_url: str, ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = pg_url
    cut_after_commit(url, monkeypatch)
    journal = str(ws_root / "j.txt")
    code, out, err = run(
        capsys,
        "record",
        "--session-id",
        "s3",
        "--journal",
        journal,
        "--lessons",
        GIT,
        "-w",
        str(ws_root),
        "--store",
        url,
    )
    assert rows(url) == [("session", "s1"), ("session", "s3")]
    # Before: a warning that another writer held the log's lock too long (none did), then
    # "cannot connect" (exit 75) with no word of the session being recorded
    assert "another writer" not in err, err
    # the session is stored: the record succeeded (a hook that retried after 75 was refused: recorded)
    assert (code, out) == (0, ""), err
    assert "the event was stored" in err.splitlines()[-1] and "the command succeeded" in err.splitlines()[-1], err


def test_a_record_whose_connection_was_cut_after_the_commit_blames_no_other_writer(
    pg_url: str, ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # the connection cut, the database still there: the record is read back on a new connection,
    # but the writers' lock (taken on the old one, to rewrite bandit-state.json) was not had
    cut_after_commit(pg_url, monkeypatch, refuse=False)
    journal = str(ws_root / "j.txt")
    argv = ["--session-id", "s3", "--journal", journal, "--lessons", GIT, "--reward", "1", "-w", str(ws_root)]
    code, out, err = run(capsys, "record", *argv, "--store", pg_url, "--json")
    assert code == 0, err
    assert rows(pg_url) == [("session", "s1"), ("session", "s3")]
    # s3 read back: reward 1.0, salience 1 (weight 0.3 + 0.7 * 1 = 1): alpha += 1, beta += 0
    lesson = json.loads(out)["lessons"][0]
    assert (lesson["path"], lesson["reward"], lesson["alpha_delta"], lesson["beta_delta"]) == (GIT, 1.0, 1.0, 0.0)
    # Before: "another writer held the log's lock too long"; none did: the connection was lost
    assert "another writer" not in err and "connection" in err, err
    assert "bandit-state.json" in err, err


def test_a_writer_connected_afresh_still_waits_for_an_insert_in_flight_below_its_own_event(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    holder = psycopg.connect(pg_url)
    waited: list[float] = []

    def pause(seconds: float) -> None:  # the reader waits for the insert in flight: now let it commit
        waited.append(seconds)
        if not holder.closed:
            holder.commit()

    monkeypatch.setattr(PgStore, "_pause", staticmethod(pause))
    store = PgStore(pg_url, agent="w")
    try:
        store.size()  # the schema in place
        insert_raw(holder, session("other"))  # position 1, in flight
        store.append(session("mine"))  # position 2: committed
        with psycopg.connect(admin_url(pg_url), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (store.conn.info.backend_pid,))
        with pytest.raises(StoreUnavailable, match="terminating connection"):
            store.size()  # the lost connection is found, and dropped
        assert store.size() == 2  # connected afresh (as a reader's refresh asks the size first)
        # Before, the new connection forgot the client's own append: the read stopped before
        # position 1 (in flight) and gave nothing, not even its own event
        results = list(store.read_since(0, 1, decode=decode_raw))
    finally:
        holder.close()
        store.close()
    assert waited
    assert [str(raw.session_id) for r in results for _, raw in r.events] == ["other", "mine"]
    assert results[-1].end == 2


def test_a_selection_logged_then_not_read_back_is_the_one_printed(
    pg_url: str, ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    cut_after_commit(pg_url, monkeypatch)
    (ws_root / "ctx.txt").write_text("git commit, a quote, the style guide")
    argv = ["--context", str(ws_root / "ctx.txt"), "--seed", "7", "--session-id", "picked", "--offline-ok"]
    code, out, err = run(capsys, "select", *argv, "-w", str(ws_root), "--store", pg_url, "--json")
    allow_connections(pg_url, True)
    with psycopg.connect(pg_url) as conn:
        found = conn.execute("SELECT raw FROM lesson_credit.events WHERE type = 'selection'").fetchall()
    logged = [json.loads(raw) for (raw,) in found]
    assert [event["session_id"] for event in logged] == ["picked"]  # the selection committed
    # Before: --offline-ok took the failed read back for an unreachable store and printed a draw
    # from bandit-state.json, "not logged", beside the one logged (which a record then links to)
    assert code == 0, err
    assert "not logged" not in err, err
    printed = json.loads(out)
    assert (printed["selected"], printed["propensity"]) == (logged[0]["selected"], logged[0]["propensity"])
    assert any("the selection is logged, but the log cannot be read back now" in w for w in printed["warnings"]), out
