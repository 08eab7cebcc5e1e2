"""core/libpq.py, the small libpq client the database store uses: values in and out, COPY's text
format, errors with their SQLSTATE, notifications, and that a command on a database store never
imports psycopg (its import alone costs more than the 50 ms `record` may add over the file)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run
from pg_helpers import line, log_path

from lesson_credit.core.log.libpq import LOCK_NOT_AVAILABLE, UNIQUE_VIOLATION, Connection, PgError, parse_conninfo

ROOT = Path(__file__).resolve().parents[2]
AWKWARD = ["tab\there", "back\\slash", "cr\rlf\nnl", "\\N", "ünïcødé ✓", "", "quote ' and \" and $1 and %s"]


def test_values_round_trip_as_parameters_and_through_copy(pg_url: str) -> None:
    conn = Connection(pg_url)
    try:
        conn.execute("CREATE TABLE t (k integer, s text, b bytea)")
        blob = bytes(range(256))
        for k, text in enumerate(AWKWARD):  # as parameters
            assert conn.execute("INSERT INTO t VALUES ($1, $2, $3)", (k, text, blob)) == 1
        assert conn.execute("INSERT INTO t VALUES ($1, $2, $3)", (100, None, None)) == 1
        rows = [(200 + k, text, blob) for k, text in enumerate(AWKWARD)] + [(300, None, None)]
        assert conn.execute("COPY t (k, s, b) FROM STDIN", copy_rows=rows) == len(rows)  # COPY's text format
        got = conn.rows("SELECT k, s, encode(b, 'hex') FROM t ORDER BY k")
        expected = [[str(k), text, blob.hex()] for k, text in enumerate(AWKWARD)] + [["100", None, None]]
        expected += [[str(200 + k), text, blob.hex()] for k, text in enumerate(AWKWARD)] + [["300", None, None]]
        assert got == expected
        assert conn.value("SELECT count(*) FROM t WHERE s IS NULL") == "2"
        assert conn.value("SELECT s FROM t WHERE k = -1") is None  # no row
        with pytest.raises(PgError, match="U\\+0000"):
            conn.execute("SELECT $1::text", ("a\x00b",))
    finally:
        conn.close()


def test_errors_carry_their_sqlstate_and_leave_the_connection_usable(pg_url: str) -> None:
    conn = Connection(pg_url)
    try:
        conn.execute("CREATE TABLE u (k integer PRIMARY KEY)")
        conn.execute("INSERT INTO u VALUES (1)")
        with pytest.raises(PgError) as unique:
            conn.execute("INSERT INTO u VALUES ($1)", (1,))
        assert unique.value.sqlstate == UNIQUE_VIOLATION and "\n" not in str(unique.value)
        with pytest.raises(PgError) as syntax:
            conn.execute("SELEC 1")
        assert syntax.value.sqlstate == "42601"
        with pytest.raises(RuntimeError), conn.transaction():  # a failed block rolls back
            conn.execute("INSERT INTO u VALUES (2)")
            raise RuntimeError
        assert conn.rows("SELECT k FROM u ORDER BY k") == [["1"]]
        # a lock another session holds: lock_timeout gives LOCK_NOT_AVAILABLE
        other = Connection(pg_url)
        other.execute("SELECT pg_advisory_lock(7)")
        with pytest.raises(PgError) as locked:
            conn.execute("SET lock_timeout = '50ms'; SELECT pg_advisory_lock(7)")
        assert locked.value.sqlstate == LOCK_NOT_AVAILABLE
        other.close()
        assert not conn.broken and conn.value("SELECT 1") == "1"
    finally:
        conn.close()
    with pytest.raises(PgError, match="closed"):
        conn.execute("SELECT 1")


def test_notifications_and_quiet_notices(pg_url: str, capfd: pytest.CaptureFixture[str]) -> None:
    listener, talker = Connection(pg_url), Connection(pg_url)
    try:
        listener.execute("LISTEN ch")
        assert listener.notifies(0.05) == 0
        talker.execute("NOTIFY ch; NOTIFY ch, 'x'")
        assert listener.notifies(10.0) == 2
        talker.execute("CREATE SCHEMA IF NOT EXISTS public")  # the server sends a NOTICE
        assert capfd.readouterr().err == ""  # not printed on the user's terminal
    finally:
        listener.close()
        talker.close()


def test_conninfo_is_parsed_by_libpq(pg_url: str) -> None:
    params = parse_conninfo(pg_url)
    assert params["user"] == "lc" and params["host"] == "127.0.0.1" and "password" in params
    assert parse_conninfo("host=db.example dbname=lessons")["dbname"] == "lessons"
    with pytest.raises(PgError):
        parse_conninfo("postgresql://[not a host")
    with pytest.raises(PgError):
        Connection("postgresql://lc@127.0.0.1:1/none", connect_timeout=2)


def test_pushed_lines_with_tabs_and_escapes_come_back_byte_for_byte(
    ws_root: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # JSON allows a tab between tokens; a string holds escapes that COPY's text format must keep
    event = {"type": "session", "session_id": "s\\t1", "base_reward": 0.5, "note": "a\tb\\n\\\\",
             "lessons": [{"path": "tools/git.md", "salience": 0.5}]}  # fmt: skip
    text = json.dumps(event).replace('", "', '",\t"', 1).encode() + b"\n"
    log_path(ws_root).write_bytes(text + line({"type": "grade", "session_id": "s\\t1", "base_reward": 0.7}))
    assert run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)[0] == 0
    out = ws_root / "pulled.jsonl"
    assert run(capsys, "store", "pull", str(out), "-w", str(ws_root), "--store", pg_url)[0] == 0
    assert out.read_bytes() == log_path(ws_root).read_bytes()


def test_a_command_on_a_database_store_does_not_import_psycopg(ws_root: Path, pg_url: str) -> None:
    script = (
        "import sys\nfrom lesson_credit.cli.main import main\n"
        "code = main(sys.argv[1:])\n"
        "print('psycopg loaded' if any(m.split('.')[0] == 'psycopg' for m in sys.modules) else 'no psycopg')\n"
        "sys.exit(code)\n"
    )
    args = ["record", "-w", str(ws_root), "--store", pg_url, "--session-id", "s1", "--journal", "j.txt",
            "--lessons", "tools/git.md", "--reward", "0.8"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for argv in (args, ["status", "-w", str(ws_root), "--store", pg_url]):
        proc = subprocess.run([sys.executable, "-c", script, *argv], cwd=ws_root, env=env, capture_output=True,
                              text=True, timeout=120)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.rstrip().endswith("no psycopg"), proc.stdout[-300:]


def test_without_libpq_a_command_says_so_in_one_line(
    ws_root: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from lesson_credit.core.log import libpq

    monkeypatch.setattr(libpq, "_lib", None)
    monkeypatch.setattr(libpq, "_candidates", lambda: iter([str(ws_root / "no-such-libpq.so")]))
    code, out, err = run(capsys, "status", "-w", str(ws_root), "--store", "postgresql://lc:secret@db.example/x")
    assert code == 1 and out == ""
    assert err == "lesson-credit: postgresql (libpq not found): libpq not found (pip install 'psycopg[binary]', " \
        "or install the system's libpq)\n"  # fmt: skip


def test_ctrl_c_interrupts_a_query_that_waits(pg_url: str) -> None:
    import signal
    import time

    # The child starts with Python's Ctrl-C handler whatever this process was started with: a job a
    # shell puts in the background has SIGINT ignored, its children inherit that, and Python then
    # installs no handler (the signal would be dropped and the query wait out its 60 s).
    script = (
        "import signal, sys\nsignal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "from lesson_credit.core.log.libpq import Connection\nconn = Connection(sys.argv[1])\n"
        "print('connected', flush=True)\n"
        "try:\n    conn.execute('SELECT pg_sleep(60)')\nexcept KeyboardInterrupt:\n"
        "    print('interrupted', conn.closed, flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, pg_url], env={**os.environ, "PYTHONPATH": str(ROOT)},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline() == "connected\n"
    watcher = Connection(pg_url)
    waiting = "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query = 'SELECT pg_sleep(60)'"
    deadline = time.monotonic() + 30  # "it got there": a wait on a condition, never a speed assertion
    running = watcher.value(waiting) == "1"
    while not running and time.monotonic() < deadline:
        time.sleep(0.02)
        running = watcher.value(waiting) == "1"
    watcher.close()
    if not running:
        proc.kill()
        pytest.fail(f"the query never showed as running on the server: {proc.communicate()[1]}")
    proc.send_signal(signal.SIGINT)  # the query is on the server and the child waits for its answer
    out, err = proc.communicate(timeout=30)  # a generous "it stopped": the query alone would take 60 s
    assert proc.returncode == 0 and out == "interrupted True\n", err
