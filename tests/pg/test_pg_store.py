"""The event log on a real PostgreSQL server: schema, the seam's contract on both stores, the same
numbers as the file, push/pull, following, and what a user sees when the database is not there."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from lesson_credit.core.log import pgconn, pgschema, pgstore
from lesson_credit.core.log.events import InvalidEvent, decode_raw
from lesson_credit.core.log.eventstore import DuplicateSession, EventStore, JsonlStore
from lesson_credit.core.log.pgstore import LATEST, PgStore
from lesson_credit.core.log.store import StoreError
from lesson_credit.core.log.stores import raw_lines
from tests.pg.pg_helpers import grade, line, log_path, make_workspace, session
from tests.pg.pg_server import PASSWORD, Server
from tests.support.cli_run import run, run_json

GIT, QUOTE, PLAIN, STYLE = "tools/git.md", "tools/quote.md", "workflow/plain.md", "style.md"


# A log with every kind of event and every kind of trouble the reader tolerates.
VARIED = [
    line(session("s1", 0.82, {GIT: 1.0, QUOTE: 0.0, STYLE: 0.5})),
    line(session("s2", None, {GIT: 0.25, PLAIN: 0.5})),  # pending
    line({"session_id": "p1", "outcome": 0.4, "lessons": [{"path": "lessons/tools/git.md"}]}),  # published shape
    line(grade("s2", 0.6)),
    b"this is not json\n",
    line(session("s1", 0.1, {PLAIN: 1.0})),  # a second session event for s1: the first counts
    line(grade("s1", 0.9, "judge")),
    line(grade("ghost", 0.5)),  # grade for an unknown session
    line(
        {
            "type": "selection",
            "session_id": "s3",
            "timestamp": "2026-03-07T00:00:00Z",
            "candidates": [GIT, QUOTE],
            "selected": [GIT],
            "propensity": {GIT: 0.7, QUOTE: 0.3},
            "k": 1,
            "seed": 4,
        }
    ),  # fmt: skip
    line(session("s3", 0.3, {GIT: 0.75, QUOTE: 0.1}, category="tools")),
    line({"type": "prior", "timestamp": "2026-03-08T00:00:00Z", "arms": {"tools/quote.md": {"alpha": 3, "beta": 2}}}),
    line(session("s4", 0.5, {"lessons/style.md": 0.6, QUOTE: 0.9})),
    line(grade("s1", 0.7)),  # regrade: the latest counts
    line(session("s5", 1.0, {"tools/unknown.md": 0.5})),  # not in the library: status "missing"
]
INVALID_LINES = 1  # "this is not json"
DUPLICATE_SESSIONS = 1  # the second s1


def events(url: str, columns: str = "type, session_id, agent") -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT {columns} FROM lesson_credit.events ORDER BY position").fetchall()


# ---------------------------------------------------------------- schema


def test_schema_is_created_on_first_use_and_versioned(pg_url: str) -> None:
    store = PgStore(pg_url, agent="a1")
    assert store.size() == 0
    with psycopg.connect(pg_url) as conn:
        versions = conn.execute("SELECT version FROM lesson_credit.migrations").fetchall()
        indexes = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes WHERE schemaname = 'lesson_credit'")}
    assert versions == [(v,) for v in range(1, LATEST + 1)] == [(1,), (2,), (3,), (4,)]
    # migration 3 dropped the index by session of every event: the session events' unique one serves the reads
    assert indexes == {"events_pkey", "events_one_session", "events_copy", "migrations_pkey", "store_pkey"}
    PgStore(pg_url, agent="a2").size()  # a second client finds the schema in place: nothing re-applied
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM lesson_credit.migrations").fetchone() == (LATEST,)
    store.close()


def test_an_older_schema_is_migrated(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patch:  # a database made by a lesson-credit that knew only migration 1
        patch.setattr(pgschema, "MIGRATIONS", pgschema.MIGRATIONS[:1])
        patch.setattr(pgschema, "LATEST", 1)
        old = PgStore(pg_url, agent="old")
        old.append(line(session("s1", 0.5, {GIT: 0.5})))
        old.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE lesson_credit.events SET agent = 'renamed'")  # version 1 allowed it
    store = PgStore(pg_url, agent="new")
    assert store.size() == 1  # opening migrates
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert conn.execute("SELECT max(version) FROM lesson_credit.migrations").fetchone() == (4,)
        with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
            conn.execute("UPDATE lesson_credit.events SET agent = 'again'")
        triggers = conn.execute(
            "SELECT tgname FROM pg_trigger WHERE tgrelid = 'lesson_credit.events'::regclass AND NOT tgisinternal"
        ).fetchall()
    # the NOTIFY one dropped (migration 3); migration 4 counts the changes made past the refusals
    assert sorted(t for (t,) in triggers) == ["events_append_only", "events_changed", "events_no_truncate"]
    assert events(pg_url) == [("session", "s1", "renamed")]
    store.close()


def test_events_are_append_only(pg_url: str) -> None:
    store = PgStore(pg_url, agent="a1")
    store.append(line(session("s1", 0.5, {GIT: 0.5})))
    store.append(line(grade("s1", 0.9)))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement in (
            "UPDATE lesson_credit.events SET raw = '{}' WHERE type = 'grade'",
            "DELETE FROM lesson_credit.events WHERE type = 'grade'",
            "TRUNCATE lesson_credit.events",
        ):
            with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                conn.execute(statement)
    assert events(pg_url) == [("session", "s1", "a1"), ("grade", "s1", "a1")]
    store.close()


@pytest.mark.smoke
def test_the_database_itself_refuses_a_second_session_event(pg_url: str) -> None:
    # not only our code: a raw INSERT of a second session event for one id fails on the index
    store = PgStore(pg_url, agent="a1")
    store.append(line(session("s1", 0.5, {GIT: 0.5})))
    store.append(line(grade("s1", 0.9)))
    with psycopg.connect(pg_url) as conn, pytest.raises(psycopg.errors.UniqueViolation):
        conn.execute(
            "INSERT INTO lesson_credit.events (type, session_id, raw, agent, digest, occurrence)"
            " VALUES ('session', 's1', '{}', 'rogue', '\\x00', 0)"
        )
    assert events(pg_url) == [("session", "s1", "a1"), ("grade", "s1", "a1")]
    store.close()


def test_newer_schema_is_refused(pg_url: str) -> None:
    PgStore(pg_url, agent="a1").size()
    with psycopg.connect(pg_url) as conn:
        conn.execute("INSERT INTO lesson_credit.migrations (version, description) VALUES (99, 'future')")
    with pytest.raises(StoreError, match="version 99.* is newer"):
        PgStore(pg_url, agent="a1").size()


# ---------------------------------------------------------------- the seam, on both stores


@pytest.fixture(params=["file", "pg"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EventStore]:
    if request.param == "file":
        yield JsonlStore(tmp_path / "sessions.jsonl")
        return
    url = request.getfixturevalue("pg_url")
    pg = PgStore(url, agent="a1")
    yield pg
    pg.close()


def test_seam_contract(store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(store, EventStore)  # the seam's methods, all of them
    monkeypatch.setattr(pgstore, "READ_ROWS", 2)  # several round trips for the database
    first = [line(session(f"s{i}", 0.5, {GIT: 0.5})) for i in range(3)]
    for event in first:
        store.append(event)
    with pytest.raises(DuplicateSession):
        store.append(line(session("s1", 0.7, {QUOTE: 0.5})))
    with pytest.raises(InvalidEvent):
        store.append(line(session("s9", 0.5, {GIT: 2.0})))
    with pytest.raises(InvalidEvent):
        store.append(b'{"type": "grade", "session_id": "s1"}\n')
    # a note with U+0000 (JSONB cannot hold it; the raw text keeps it, and the fold reads that)
    store.append(line({**grade("s2", 0.4), "note": "a\x00b"}))
    middle = store.size()
    store.append(line(grade("s1", 0.9)))
    store.append(line(session("s3", None, {QUOTE: 0.25})))

    def read(start: int, first_line: int) -> tuple[list[tuple[int, str | int | None]], int]:
        results = list(store.read_since(start, first_line, decode=decode_raw))
        got = [(number, raw.session_id) for r in results for number, raw in r.events]
        assert sum(r.lines for r in results) == len(got)
        return got, results[-1].end

    everything, end = read(0, 1)
    assert everything == [(1, "s0"), (2, "s1"), (3, "s2"), (4, "s2"), (5, "s1"), (6, "s3")]
    assert end == store.size()
    tail, tail_end = read(middle, 5)  # after a position: only what came later, numbered on
    assert tail == [(5, "s1"), (6, "s3")] and tail_end == end
    assert read(end, 7) == ([], end)
    assert b"".join(raw_lines(store)) == b"".join(
        [
            *first,
            line({**grade("s2", 0.4), "note": "a\x00b"}),
            line(grade("s1", 0.9)),
            line(session("s3", None, {QUOTE: 0.25})),
        ]
    )
    notes = [raw.note for r in store.read_since(0, 1, decode=decode_raw) for _, raw in r.events]
    assert notes[3] == "a\x00b"


def test_an_append_notifies_nobody(pg_url: str) -> None:
    """A writer that NOTIFYs commits under a lock every notifying transaction of the cluster takes:
    writers would commit one at a time. Appends notify nobody; followers look at the position."""
    store = PgStore(pg_url, agent="w")
    store.size()  # the schema
    with psycopg.connect(pg_url, autocommit=True) as listener:
        listener.execute("LISTEN lesson_credit_events")
        store.append(line(session("s1", 0.5, {GIT: 0.5})))
        store.append(line(grade("s1", 0.9)))
        with psycopg.connect(pg_url, autocommit=True) as other:
            other.execute("NOTIFY lesson_credit_events, 'marker'")  # sent after the appends' commits
        payloads = [n.payload for n in listener.notifies(timeout=10.0, stop_after=1)]
    assert payloads == ["marker"]  # the first notification is the marker: none came from the appends
    store.close()


def test_wait_finds_another_clients_commit(pg_url: str) -> None:
    reader, writer = PgStore(pg_url, agent="r"), PgStore(pg_url, agent="w")
    assert reader.wait(0, 0.05) == 0  # nothing there: times out
    timer = threading.Timer(0.2, writer.append, args=(line(session("s1", 0.5, {GIT: 0.5})),))
    timer.start()
    try:
        started = time.monotonic()
        end = reader.wait(0, 30.0)
        waited = time.monotonic() - started
    finally:
        timer.join()
    assert end == writer.size() > 0
    assert waited < 30.0  # found by looking, not by the timeout
    assert reader.wait(end, 0.05) == end  # nothing after the end: times out with it
    assert reader.wait(0, 0.0) == end  # already there: no waiting
    reader.close()
    writer.close()


# ---------------------------------------------------------------- the same numbers as the file


def numbers(payload: dict[str, Any]) -> dict[str, Any]:
    """A command's JSON without its warnings: those name the store and its own derived files, and
    differ between a file and a database holding the same events."""
    return {key: value for key, value in payload.items() if key != "warnings"}


def test_file_and_database_give_identical_status(pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    root, url = pg_ws
    log_path(root).write_bytes(b"".join(VARIED))
    pushed = run_json(capsys, "store", "push", "-w", str(root), "--store", url, "--agent", "alice")
    valid = len(VARIED) - INVALID_LINES
    assert pushed["invalid"] == [{"line": 5, "reason": pushed["invalid"][0]["reason"]}]
    assert (pushed["lines"], pushed["added"], pushed["present"]) == (len(VARIED), valid - DUPLICATE_SESSIONS, 1)
    for sort in ("mean", "path"):
        on_file = numbers(run_json(capsys, "status", "-w", str(root), "--sort", sort))
        on_db = numbers(run_json(capsys, "status", "-w", str(root), "--store", url, "--sort", sort))
        assert on_db == on_file
    rows = {row["path"]: row for row in on_file["lessons"]}
    # by hand (seed, floor 0.3, w = 0.3 + 0.7 s): style.md is in s1 (s 0.5, latest grade 0.7)
    # and s4 (s 0.6, 0.5): r = 0.7 * 0.65 = 0.455 and 0.5 * 0.72 = 0.36
    assert rows[STYLE]["n"] == 2
    assert rows[STYLE]["alpha"] == pytest.approx(1 + 0.455 + 0.36)
    assert rows[STYLE]["beta"] == pytest.approx(1 + 0.545 + 0.64)
    assert rows["tools/unknown.md"]["status"] == "missing"
    assert on_file["sessions"] == 6  # s1 s2 p1 s3 s4 s5
    for sid in ("s1", "p1"):
        assert numbers(run_json(capsys, "explain", sid, "-w", str(root), "--store", url)) == numbers(
            run_json(capsys, "explain", sid, "-w", str(root))
        )
    # lint reads the raw events too (ids logged with a 'lessons/' prefix): the same findings,
    # except those about the lines the database never took (the bad line, the second s1)
    code_file, lint_file, _ = run(capsys, "lint", "-w", str(root), "--json")
    code_db, lint_db, _ = run(capsys, "lint", "-w", str(root), "--store", url, "--json")
    about_lines = {"log-unreadable-lines", "duplicate-session-ids"}
    on_file = {f["code"]: f for f in json.loads(lint_file)["findings"] if f["code"] not in about_lines}
    on_db = {f["code"]: f for f in json.loads(lint_db)["findings"] if f["code"] not in about_lines}
    assert on_db == on_file
    assert {"prefixed-ids", "missing-salience", "ghost-arms"} <= set(on_db)
    assert "duplicate-session-ids" not in {f["code"] for f in json.loads(lint_db)["findings"]}
    assert code_db == code_file == 1


def test_push_is_idempotent_and_pull_round_trips(pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    root, url = pg_ws
    log_path(root).write_bytes(b"".join(VARIED[:6]))
    assert run_json(capsys, "store", "push", "-w", str(root), "--store", url)["added"] == 4  # bad line, second s1
    again = run_json(capsys, "store", "push", "-w", str(root), "--store", url)
    assert (again["added"], again["present"]) == (0, 5)
    with log_path(root).open("ab") as handle:  # the workspace logs on; a later push adds only the new lines
        handle.writelines(VARIED[6:])
    assert run_json(capsys, "store", "push", "-w", str(root), "--store", url)["added"] == len(VARIED[6:])
    assert len(events(url)) == len(VARIED) - INVALID_LINES - DUPLICATE_SESSIONS
    # two identical grade lines are two events (the same grade given twice), pushed once each
    with log_path(root).open("ab") as handle:
        handle.writelines([line(grade("s3", 0.4)), line(grade("s3", 0.4))])
    assert run_json(capsys, "store", "push", "-w", str(root), "--store", url)["added"] == 2
    assert run_json(capsys, "store", "push", "-w", str(root), "--store", url)["added"] == 0

    other = make_workspace(root.parent / "other")
    target = log_path(other)
    pulled = run_json(capsys, "store", "pull", str(target), "-w", str(root), "--store", url)
    expected = [e for e in log_path(root).read_bytes().splitlines(keepends=True) if e not in (VARIED[4], VARIED[5])]
    assert pulled["events"] == len(expected)
    assert not [w for w in pulled["warnings"] if "agents" in w]  # one agent pushed it: no writer lost
    assert target.read_bytes() == b"".join(expected)  # the same bytes, in the same order
    pulled_status = numbers(run_json(capsys, "status", "-w", str(other)))
    assert pulled_status == numbers(run_json(capsys, "status", "-w", str(root), "--store", url))
    assert pulled_status == numbers(run_json(capsys, "status", "-w", str(root)))
    # pull refuses to overwrite; pushing the pulled log back adds nothing
    code, _, err = run(capsys, "store", "pull", str(target), "-w", str(root), "--store", url)
    assert code == 1 and "already exists" in err
    assert run_json(capsys, "store", "push", "-w", str(other), "--store", url)["added"] == 0


def test_commands_on_the_database(pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    root, url = pg_ws
    journal = str(root / "j.txt")
    base = ["-w", str(root), "--store", url, "--agent", "bob"]
    code, _, err = run(capsys, "record", *base, "--session-id", "s1", "--journal", journal,
                       "--lessons", GIT, QUOTE, "--reward", "0.8")  # fmt: skip
    assert code == 0, err
    code, _, err = run(capsys, "record", *base, "--session-id", "s1", "--journal", journal, "--lessons", STYLE)
    assert (code, err) == (1, "lesson-credit: session 's1' is already recorded\n")
    assert run_json(capsys, "grade", "s1", "0.3", *base)["base_reward"] == 0.3
    (root / "ctx.txt").write_text("git and a quote")
    chosen = run_json(capsys, "select", *base, "--context", str(root / "ctx.txt"), "--seed", "7", "--k", "1")
    assert chosen["candidates"] == [GIT, QUOTE] and len(chosen["selected"]) == 1
    assert [row[:3] for row in events(url)] == [("session", "s1", "bob"), ("grade", "s1", "bob"),
                                                 ("selection", chosen["session_id"], "bob")]  # fmt: skip
    # the file store knows none of it; the pulled log folds to the database's numbers
    assert run_json(capsys, "status", "-w", str(root))["sessions"] == 0
    copy = make_workspace(root.parent / "copy")
    run_json(capsys, "store", "pull", str(log_path(copy)), *base)
    assert numbers(run_json(capsys, "status", "-w", str(copy))) == numbers(run_json(capsys, "status", *base))
    assert numbers(run_json(capsys, "explain", "s1", "-w", str(copy))) == numbers(
        run_json(capsys, "explain", "s1", *base)
    )


def test_agent_defaults_to_the_hostname(pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    root, url = pg_ws
    code, _, err = run(capsys, "record", "-w", str(root), "--store", url, "--session-id", "s1",
                       "--journal", str(root / "j.txt"), "--lessons", GIT)  # fmt: skip
    assert code == 0, err
    assert events(url) == [("session", "s1", socket.gethostname())]


def test_store_chosen_by_environment_and_config(
    pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, url = pg_ws
    journal = str(root / "j.txt")
    monkeypatch.setenv("LESSON_CREDIT_STORE", url)
    code, _, err = run(capsys, "record", "-w", str(root), "--session-id", "env", "--journal", journal, "--lessons", GIT)
    assert code == 0, err
    monkeypatch.delenv("LESSON_CREDIT_STORE")
    (root / "state" / "lesson-thompson" / "config.toml").write_text(f'[store]\nurl = "{url}"\n')
    code, _, err = run(capsys, "record", "-w", str(root), "--session-id", "cfg", "--journal", journal, "--lessons", GIT)
    assert code == 0, err
    assert [row[1] for row in events(url)] == ["env", "cfg"]
    assert not log_path(root).exists()  # nothing went to the file


def test_a_workspace_a_script_builds_uses_the_store_config_toml_names(
    pg_ws: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Workspace(root)` in a script (no CLI) chooses the store as the CLI does: with `[store] url` in
    config.toml, the session goes to the database, not to a JSONL file nobody else reads."""
    from lesson_credit.core.workspace import Workspace

    root, url = pg_ws
    monkeypatch.delenv("LESSON_CREDIT_STORE", raising=False)
    (root / "state" / "lesson-thompson" / "config.toml").write_text(f'[store]\nurl = "{url}"\n')
    Workspace(root).record("scripted", root / "j.txt", [GIT], reward=0.5)
    assert [row[1] for row in events(url)] == ["scripted"]
    assert not log_path(root).exists()
    assert Workspace(root, store="").session_ids_between(0, 5) == ()  # store "": the file, explicitly


# ---------------------------------------------------------------- failure


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # nothing listens once it is closed


@pytest.mark.parametrize("command", [["status"], ["grade", "s1", "0.5"], ["store", "push"], ["tui"]])
def test_unreachable_server_one_line_exit_75_no_password(
    ws_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    if command == ["tui"]:  # on a terminal, drawn nowhere: the open fails after the first frame
        from tests.tui.tui_fixture import as_on_a_terminal, headless_run

        monkeypatch.setattr("lesson_credit.tui.app.LessonCreditApp.run", headless_run)
        as_on_a_terminal(monkeypatch)
    log_path(ws_root).write_bytes(VARIED[0])
    before = log_path(ws_root).read_bytes()
    url = f"postgresql://lc:{PASSWORD}@127.0.0.1:{_closed_port()}/lc"
    code, out, err = run(capsys, *command, "-w", str(ws_root), "--store", url)
    assert code == 75 and out == ""
    assert err.count("\n") == 1, err
    assert err.startswith("lesson-credit: postgresql://lc@127.0.0.1:") and "cannot connect" in err
    assert PASSWORD not in err
    assert log_path(ws_root).read_bytes() == before


def test_wrong_password_is_not_shown(pg_server: Server, ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = pg_server.url(password="wrong-" + PASSWORD)
    code, _, err = run(capsys, "status", "-w", str(ws_root), "--store", url)
    assert code == 1 and err.count("\n") == 1 and "password authentication failed" in err
    assert PASSWORD not in err


def test_select_offline_ok_falls_back_to_the_last_known_posteriors(
    pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    root, url = pg_ws
    base = ["-w", str(root), "--store", url]
    for sid, reward in (("s1", "0.9"), ("s2", "0.1")):
        code, _, err = run(capsys, "record", *base, "--session-id", sid, "--journal", str(root / "j.txt"),
                           "--lessons", GIT, QUOTE, "--reward", reward)  # fmt: skip
        assert code == 0, err
    (root / "ctx.txt").write_text("git, a quote and the style guide")
    # seed credit online: the offline fallback draws from the Beta posteriors bandit-state.json keeps
    select = ["select", "--context", str(root / "ctx.txt"), "--seed", "11", "--k", "2", "--session-id", "x",
              "--policy", "seed"]  # fmt: skip
    online = run_json(capsys, *select, *base, "--dry-run")
    down = ["-w", str(root), "--store", f"postgresql://lc:{PASSWORD}@127.0.0.1:{_closed_port()}/lc"]
    code, out, err = run(capsys, *select, *down, "--json")
    assert code == 75 and out == "" and err.count("\n") == 1 and PASSWORD not in err
    code, out, err = run(capsys, *select, *down, "--json", "--offline-ok")
    assert code == 0
    assert "last known posteriors" in err and PASSWORD not in err
    # bandit-state.json holds the posteriors the database folds to: the same draw, the same answer
    assert json.loads(out) == online
    assert len(events(url)) == 2  # nothing logged by either select


def test_status_written_by_one_agent(
    pg_ws: tuple[Path, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, url = pg_ws
    alice, bob = PgStore(url, agent="alice"), PgStore(url, agent="bob")
    a1, a2 = line(session("a1", 0.2, {GIT: 1.0})), line(session("a2", None, {QUOTE: 0.5, GIT: 0.0}))
    b1 = line(session("b1", 0.9, {GIT: 0.5, STYLE: 1.0}))
    alice.append(a1)
    bob.append(b1)
    alice.append(a2)
    bob.append(line(grade("a2", 0.6)))  # bob grades alice's session: it counts for alice
    alice.append(line(grade("b1", 0.1)))  # alice grades bob's: it does not
    bob.append(line(grade("a1", 1.0)))
    # by hand, alice's part of the log is a1, a2 and the grades of a1 and a2, in commit order
    only_alice = make_workspace(root.parent / "only-alice")
    log_path(only_alice).write_bytes(b"".join([a1, a2, line(grade("a2", 0.6)), line(grade("a1", 1.0))]))
    expected = run_json(capsys, "status", "-w", str(only_alice))
    assert run_json(capsys, "status", "-w", str(root), "--store", url, "--written-by", "alice") == expected
    assert expected["sessions"] == 2
    for rows in (1, 2):  # read in chunks of one and two events
        monkeypatch.setattr(pgstore, "READ_ROWS", rows)
        assert run_json(capsys, "status", "-w", str(root), "--store", url, "--written-by", "alice") == expected
    everyone = run_json(capsys, "status", "-w", str(root), "--store", url)
    assert everyone["sessions"] == 3 and everyone != expected
    nobody = run_json(capsys, "status", "-w", str(root), "--store", url, "--written-by", "carol")
    assert nobody["sessions"] == 0
    code, _, err = run(capsys, "status", "-w", str(root), "--written-by", "alice")
    assert code == 1 and "needs a database store" in err
    # loo too, and it leaves loo-results.json alone
    loo = ["loo", "--min-with", "1", "--min-without", "1"]
    by_alice = run_json(capsys, *loo, "-w", str(root), "--store", url, "--written-by", "alice")
    on_file = run_json(capsys, *loo, "-w", str(only_alice), "--no-write")
    assert by_alice["results"] == on_file["results"] and by_alice["meta"]["sessions"] == 2
    assert not (root / "state" / "lesson-thompson" / "loo-results.json").exists()
    alice.close()
    bob.close()


def test_a_server_that_never_answers_fails_instead_of_hanging(
    ws_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    # the bound the store sets (5 s), shortened to libpq's smallest (values under 2 count as 2) so
    # the test does not wait 5 s: the same code path gives up after 2 s
    monkeypatch.setattr(pgconn, "CONNECT_TIMEOUT_S", 2)
    with socket.socket() as silent:  # accepts connections (the kernel does), never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"postgresql://lc:{PASSWORD}@127.0.0.1:{silent.getsockname()[1]}/lc"
        started = time.monotonic()
        code, out, err = run(capsys, "status", "-w", str(ws_root), "--store", url)
        elapsed = time.monotonic() - started
    assert code == 75 and out == "" and err.count("\n") == 1 and PASSWORD not in err
    assert "cannot connect" in err and "timeout" in err
    assert elapsed < 120  # the connect timeout, not forever
