"""The database client as a user meets it (psycopg 3 under core/log/pgconn.py): Ctrl-C while a
statement waits, a statement timeout on every read, connection errors as one line without the
password, a clear line when psycopg is missing, event text byte for byte through push and pull."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import psycopg
import pytest

from lesson_credit.core.log import pgconn
from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line, log_path, wait_until
from tests.pg.pg_server import PASSWORD, Server
from tests.support.cli_run import run

ROOT = Path(__file__).resolve().parents[2]
SESSION = line({"type": "session", "session_id": "s1", "base_reward": 0.5,
                "lessons": [{"path": "tools/git.md", "salience": 0.5}]})  # fmt: skip


def with_schema(url: str) -> None:
    store = PgStore(url, agent="owner")
    store.append(SESSION)
    store.close()


def lesson_credit_waiting(url: str) -> bool:
    with psycopg.connect(url, autocommit=True) as watcher:
        row = watcher.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lesson-credit'"
            " AND datname = current_database() AND state = 'active' AND wait_event_type = 'Lock'"
        ).fetchone()
    return bool(row and row[0])


def test_ctrl_c_cancels_a_read_that_waits(pg_url: str, ws_root: Path) -> None:
    with_schema(pg_url)
    # a statement timeout longer than the test: only Ctrl-C can end the wait (exit 130, not 75)
    url = pg_url + "?options=-c%20statement_timeout%3D600000"
    # The child installs Python's Ctrl-C handler whatever this process was started with (a job a
    # shell puts in the background has SIGINT ignored, and its children inherit that).
    script = (
        "import signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from lesson_credit.cli.main import main\nsys.exit(main(sys.argv[1:]))\n"
    )
    with psycopg.connect(pg_url) as locker:
        locker.execute("LOCK TABLE lesson_credit.events IN ACCESS EXCLUSIVE MODE")  # held until the end
        proc = subprocess.Popen(
            [sys.executable, "-c", script, "status", "-w", str(ws_root), "--store", url],
            env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            wait_until(lambda: proc.poll() is not None or lesson_credit_waiting(pg_url), "status waits for the lock")
            assert proc.poll() is None, proc.communicate()
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=120)  # "it stopped": the statement alone would wait 10 minutes
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert (proc.returncode, out) == (130, ""), err
        assert "Traceback" not in err
        # the statement was cancelled on the server, not left waiting for the lock
        wait_until(lambda: not lesson_credit_waiting(pg_url), "the server no longer runs the cancelled statement")


def test_every_statement_has_a_timeout_unless_the_url_sets_one(pg_url: str) -> None:
    store = PgStore(pg_url, agent="a")
    row = store.conn.execute("SHOW statement_timeout").fetchone()
    assert row == (f"{int(pgconn.STATEMENT_TIMEOUT_S)}s".encode(),)  # the store reads text as bytes
    store.close()
    own = PgStore(pg_url + "?options=-c%20statement_timeout%3D4321", agent="a")
    assert own.conn.execute("SHOW statement_timeout").fetchone() == (b"4321ms",)
    own.close()


def test_a_held_table_lock_makes_status_fail_with_one_line(
    pg_url: str, ws_root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_schema(pg_url)
    monkeypatch.setattr(pgconn, "STATEMENT_TIMEOUT_S", 0.5)
    outcome: list[tuple[int, str, str]] = []
    with psycopg.connect(pg_url) as locker:
        locker.execute("LOCK TABLE lesson_credit.events IN ACCESS EXCLUSIVE MODE")
        status = threading.Thread(target=lambda: outcome.append(run(capsys, "status", "-w", str(ws_root),
                                                                    "--store", pg_url)), daemon=True)  # fmt: skip
        status.start()
        status.join(120)  # the old client waited here for as long as the lock was held
        finished = not status.is_alive()
    status.join(120)  # the lock is released: an old client finishes now
    assert finished, "status waited for the lock instead of timing out"
    code, out, err = outcome[0]
    assert (code, out) == (75, "")
    assert err.count("\n") == 1 and "statement timeout" in err and "lock" in err and PASSWORD not in err


@pytest.mark.parametrize(
    ("url", "code", "says"),
    [
        ("postgresql://lc:{pw}@127.0.0.1:{port}/no_such_database", 1, 'database "no_such_database" does not exist'),
        ("postgresql://nobody:{pw}@127.0.0.1:{port}/postgres", 1, "authentication failed"),
        ("host=127.0.0.1 port={port} password='{pw}", 1, "invalid PostgreSQL connection string"),
        # the test server has no SSL: a retry cannot succeed (it exited 75, "retry later")
        ("postgresql://lc:{pw}@127.0.0.1:{port}/postgres?sslmode=require", 1, "SSL was required"),
    ],
)
def test_connection_errors_are_one_line_without_the_password(
    pg_server: Server, ws_root: Path, capsys: pytest.CaptureFixture[str], url: str, code: int, says: str
) -> None:
    got, out, err = run(capsys, "status", "-w", str(ws_root), "--store", url.format(pw=PASSWORD, port=pg_server.port))
    assert (got, out) == (code, "")
    assert err.count("\n") == 1 and says in err and PASSWORD not in err, err


@pytest.mark.parametrize("password", ["s", "ion"])
def test_a_short_password_is_hidden_without_garbling_the_message(
    pg_server: Server, ws_root: Path, capsys: pytest.CaptureFixture[str], password: str
) -> None:
    # A password is hidden where it stands alone (an echoed connection string), not inside the
    # words of the message: with "s" it read "pa***word authentication failed for u***er", and
    # with "ion" "authenticat*** failed", which then exited 75 ("retry later"): the wrong password
    # was told from a failure that may pass by the words it had hidden
    code, out, err = run(capsys, "status", "-w", str(ws_root), "--store", pg_server.url(password=password))
    assert (code, out) == (1, "")
    assert 'connection failed: connection to server at "127.0.0.1"' in err, err
    assert 'password authentication failed for user "lc"' in err, err


def test_a_wrong_password_that_is_a_word_of_the_message_exits_1(
    pg_server: Server, ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # hidden ("authentication *** for user"), and still a refusal for good: before, exit 75
    code, out, err = run(capsys, "status", "-w", str(ws_root), "--store", pg_server.url(password="failed"))
    assert (code, out) == (1, ""), err
    assert "password authentication *** for user" in err, err


def test_without_psycopg_a_command_says_so_in_one_line(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in [m for m in sys.modules if m == "psycopg" or m.startswith(("psycopg.", "lesson_credit.core.log.pg"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "psycopg", None)  # `import psycopg` raises ImportError
    code, out, err = run(capsys, "status", "-w", str(ws_root), "--store", "postgresql://lc:secret@db.example/x")
    assert (code, out) == (1, "")
    assert err == "lesson-credit: postgresql: the database store needs psycopg (pip install 'psycopg[binary]')\n"


def test_server_notices_are_not_printed(pg_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    store = PgStore(pg_url, agent="a")
    store.conn.execute("CREATE SCHEMA IF NOT EXISTS lesson_credit")  # the server sends a NOTICE
    store.close()
    assert capfd.readouterr().err == ""


def test_pushed_lines_with_tabs_and_escapes_come_back_byte_for_byte(
    ws_root: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # JSON allows a tab between tokens; a string holds escapes that COPY's text format must keep
    event = {"type": "session", "session_id": "s\\t1", "base_reward": 0.5, "note": "a\tb\\n\\\\ \\u0000 ünï ✓",
             "lessons": [{"path": "tools/git.md", "salience": 0.5}]}  # fmt: skip
    text = json.dumps(event).replace('", "', '",\t"', 1).encode() + b"\n"
    log_path(ws_root).write_bytes(text + line({"type": "grade", "session_id": "s\\t1", "base_reward": 0.7}))
    assert run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)[0] == 0
    out = ws_root / "pulled.jsonl"
    assert run(capsys, "store", "pull", str(out), "-w", str(ws_root), "--store", pg_url)[0] == 0
    assert out.read_bytes() == log_path(ws_root).read_bytes()
