"""A failed write on the database is reported as what it is: only a unique
violation means "already recorded". Permission denied exits 1 with its own message; a read-only
database and a server killed mid-write exit 75 (EX_TEMPFAIL: retry later). Nothing is written."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from lesson_credit.core.log.pgconn import parse_url
from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line, log_path, make_workspace, wait_until, waiting_on_a_lock
from tests.pg.pg_server import NoServer, create_database, start_server, wait_until_accepting
from tests.support.cli_run import run

REPO = Path(__file__).parents[2]
PROCESS_TIMEOUT_S = 240
GIT = "tools/git.md"


def session(sid: str) -> bytes:
    return line({"type": "session", "session_id": sid, "base_reward": 0.5, "lessons": [{"path": GIT, "salience": 0.5}]})


def count(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM lesson_credit.events").fetchone()
    return int(row[0]) if row else -1


def with_schema(url: str, *sessions: str) -> None:
    store = PgStore(url, agent="owner")
    for sid in sessions:
        store.append(session(sid))
    store.close()


def writes(root: Path) -> list[list[str]]:
    """A write of each kind the CLI makes: a session, a grade, a selection, a push."""
    (root / "ctx.txt").write_text("git")
    log_path(root).write_bytes(session("pushed"))
    return [
        ["record", "--session-id", "new", "--journal", str(root / "j.txt"), "--lessons", GIT, "--reward", "0.5"],
        ["grade", "s1", "0.9"],
        ["select", "--context", str(root / "ctx.txt"), "--seed", "1", "--session-id", "picked"],
        ["store", "push"],
    ]


def test_a_select_only_role_is_refused_with_its_own_message(
    pg_url: str, ws_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with_schema(pg_url, "s1")
    params = parse_url(pg_url)
    role = f"reader_{params['dbname']}"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'read-only-pw'")
        conn.execute(f"GRANT USAGE ON SCHEMA lesson_credit TO {role}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA lesson_credit TO {role}")
    url = f"postgresql://{role}:read-only-pw@{params['host']}:{params['port']}/{params['dbname']}"
    assert run(capsys, "status", "-w", str(ws_root), "--store", url, "--json")[0] == 0  # it may read
    for argv in writes(ws_root):
        code, out, err = run(capsys, *argv, "-w", str(ws_root), "--store", url)
        assert (code, out) == (1, ""), (argv, code, err)
        assert err.count("\n") == 1 and "permission denied" in err, (argv, err)
        assert "already" not in err and "read-only-pw" not in err, (argv, err)
    assert count(pg_url) == 1  # the owner's session only


def test_a_read_only_database_exits_75(pg_url: str, ws_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with_schema(pg_url, "s1")
    dbname = parse_url(pg_url)["dbname"]
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as a standby, or a database made read-only
        conn.execute(f'ALTER DATABASE "{dbname}" SET default_transaction_read_only = on')
    for argv in writes(ws_root):
        code, out, err = run(capsys, *argv, "-w", str(ws_root), "--store", pg_url)
        assert (code, out) == (75, ""), (argv, code, err)
        assert err.count("\n") == 1 and "read-only" in err and "already" not in err, (argv, err)
    assert count(pg_url) == 1


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


def test_a_server_killed_mid_write_exits_75_and_writes_nothing(tmp_path: Path) -> None:
    try:
        server = start_server()  # its own server: this test kills it
    except NoServer as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a PostgreSQL server: {exc}")
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
    root = make_workspace(tmp_path / "ws")
    journal = str(root / "j.txt")
    # Each write is made to wait inside its INSERT, then the server dies: a record of an id another
    # transaction holds uncommitted (the unique index), a grade while a table lock is held.
    hold_s2 = (
        "INSERT INTO lesson_credit.events (type, session_id, raw, agent, digest, occurrence)"
        " VALUES ('session', 's2', '{}', 'blocker', '\\x00', 0)"
    )
    scenarios = [
        (["record", "--session-id", "s2", "--journal", journal, "--lessons", GIT], hold_s2),
        (["grade", "s1", "0.9"], "LOCK TABLE lesson_credit.events IN SHARE MODE"),
    ]
    try:
        url = create_database(server, "killed")
        with_schema(url, "s1")
        for argv, hold in scenarios:
            blocker = psycopg.connect(url)
            blocker.execute(hold)
            proc = subprocess.Popen(
                [sys.executable, "-m", "lesson_credit.cli.main", *argv, "-w", str(root), "--store", url],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=REPO,
            )  # fmt: skip
            try:
                wait_until(lambda p=proc: p.poll() is not None or waiting_on_a_lock(url), "the write waits")
                assert proc.poll() is None, proc.communicate()
                server.kill()
                out, err = proc.communicate(timeout=PROCESS_TIMEOUT_S)
            finally:
                if proc.poll() is None:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait()
                blocker.close()
            assert (proc.returncode, out) == (75, ""), (argv, proc.returncode, err)
            assert err.count("\n") == 1 and err.startswith("lesson-credit: postgresql://lc@127.0.0.1:"), err
            assert "already" not in err and "connection" in err, err
            server.start()
            wait_until_accepting(server)
            assert count(url) == 1  # only the session written before: nothing of the failed write
    finally:
        server.stop()
