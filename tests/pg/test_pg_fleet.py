"""Many agents, one database: concurrent writers lose nothing and duplicate nothing, and a server
killed in the middle of a transaction leaves nothing half-written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import psycopg
import pytest

from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line, log_path, make_workspace
from tests.pg.pg_server import NoServer, create_database, start_server, wait_until_accepting
from tests.support.cli_run import run, run_json

REPO = Path(__file__).parents[2]
WORKER = Path(__file__).with_name("agent_worker.py")
AGENTS = ["alpha", "bravo", "charlie", "delta"]
N_OWN = 12
CONTESTED = [f"contested-{i}" for i in range(6)]
PROCESS_TIMEOUT_S = 240


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


def test_agents_writing_concurrently_lose_and_duplicate_nothing(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    go = tmp_path / "go"
    roots = {agent: make_workspace(tmp_path / agent) for agent in AGENTS}
    procs = {
        agent: subprocess.Popen(
            [sys.executable, str(WORKER), str(root), pg_url, agent, str(N_OWN), str(go), *CONTESTED],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        for agent, root in roots.items()
    }
    time.sleep(0.5)
    go.touch()
    reports = {}
    try:
        for agent, proc in procs.items():
            out, err = proc.communicate(timeout=PROCESS_TIMEOUT_S)
            assert proc.returncode == 0, err
            reports[agent] = json.loads(out)
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    with psycopg.connect(pg_url) as conn:
        rows = conn.execute("SELECT type, session_id, agent FROM lesson_credit.events ORDER BY position").fetchall()
    sessions = [(sid, agent) for kind, sid, agent in rows if kind == "session"]
    grades = [(sid, agent) for kind, sid, agent in rows if kind == "grade"]
    # 0 lost: every acknowledged write is there
    acknowledged = {sid for r in reports.values() for sid in r["recorded"] + r["won"]}
    assert {sid for sid, _ in sessions} == acknowledged
    assert len(acknowledged) == len(AGENTS) * N_OWN + len(CONTESTED)
    # 0 duplicated: one session event per id, one grade event per grade call
    assert len(sessions) == len(acknowledged)
    assert Counter(sid for sid, _ in grades) == Counter(sid for r in reports.values() for sid in r["graded"])
    # exactly one winner per contested id, and the database says it was that agent
    winners = {sid: agent for agent, r in reports.items() for sid in r["won"]}
    assert Counter(sid for r in reports.values() for sid in r["won"]) == Counter(CONTESTED)
    for r in reports.values():
        assert sorted(r["won"] + r["lost"]) == sorted(CONTESTED)
    assert {sid: agent for sid, agent in sessions if sid in winners} == winners
    assert all(sid.startswith(agent + "-") for sid, agent in sessions if sid not in winners)
    assert all(sid.startswith(agent + "-") for sid, agent in grades)

    # the fold: any workspace on the database, and a file holding the same events, agree
    one = roots["alpha"]
    on_db = run_json(capsys, "replay", "-w", str(one), "--store", pg_url, "--strategy", "uniform")
    pulled = make_workspace(tmp_path / "pulled")
    run_json(capsys, "store", "pull", str(log_path(pulled)), "-w", str(one), "--store", pg_url)
    assert run_json(capsys, "replay", "-w", str(pulled), "--strategy", "uniform") == on_db
    # (each workspace's warnings are about its own derived files: delta's bandit-state.json is behind
    # the other agents' writes)
    from_file = run_json(capsys, "status", "-w", str(pulled))
    from_db = run_json(capsys, "status", "-w", str(roots["delta"]), "--store", pg_url)
    assert {**from_file, "warnings": None} == {**from_db, "warnings": None}
    # and the numbers by hand: uniform credit gives every injected lesson the session's grade in
    # force: quote.md is in every agent's own sessions, graded last ((i + 2) % 5) / 4
    rows_by_path = {row["path"]: row for row in on_db["lessons"]}
    latest = [((i + 2) % 5) / 4 for i in range(N_OWN)] * len(AGENTS)
    quote = rows_by_path["tools/quote.md"]
    assert quote["n"] == len(AGENTS) * N_OWN
    assert quote["alpha"] == pytest.approx(1 + sum(latest))
    assert quote["beta"] == pytest.approx(1 + sum(1 - b for b in latest))
    git = rows_by_path["tools/git.md"]  # plus the contested sessions, 0.5 each
    assert git["n"] == len(AGENTS) * N_OWN + len(CONTESTED)
    assert git["alpha"] == pytest.approx(1 + sum(latest) + 0.5 * len(CONTESTED))


def test_server_killed_mid_transaction_leaves_nothing_half_written(tmp_path: Path) -> None:
    try:
        server = start_server()  # its own server: this test kills it
    except NoServer as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a PostgreSQL server: {exc}")
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
    push: subprocess.Popen[str] | None = None
    try:
        url = create_database(server, "killed")
        setup = PgStore(url, agent="setup")
        assert setup.size() == 0  # the schema is in place before the push
        setup.close()
        root = make_workspace(tmp_path / "ws")
        n, blocked_at = 4000, 2500
        with log_path(root).open("wb") as handle:
            for i in range(n):
                handle.write(
                    line(
                        {
                            "type": "session",
                            "session_id": f"s{i}",
                            "base_reward": 0.5,
                            "lessons": [{"path": "tools/git.md", "salience": 0.5}],
                        }
                    )  # fmt: skip
                )
        # Another client holds an uncommitted session event for s2500: the push, in file order,
        # writes s0..s2499 and then waits on that id. Then the server dies.
        blocker = psycopg.connect(url)
        blocker.execute(
            "INSERT INTO lesson_credit.events (type, session_id, raw, agent, digest, occurrence)"
            " VALUES ('session', %s, '{}', 'blocker', '\\x01', 0)",
            (f"s{blocked_at}",),
        )
        push = subprocess.Popen(
            [sys.executable, "-m", "lesson_credit.cli.main", "store", "push", "-w", str(root), "--store", url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            cwd=REPO,
        )
        deadline = time.monotonic() + PROCESS_TIMEOUT_S
        with psycopg.connect(server.url(), autocommit=True) as watcher:
            while True:
                row = watcher.execute(
                    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'lesson-credit'"
                    " AND wait_event_type = 'Lock' AND query LIKE '%lesson_credit.events%'"
                ).fetchone()
                if row and row[0]:
                    break
                assert push.poll() is None, push.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.01)
        server.kill()
        out, err = push.communicate(timeout=PROCESS_TIMEOUT_S)
        blocker.close()
        assert push.returncode == 75 and out == ""  # the server went away: nothing written, retry later
        assert err.count("\n") == 1 and err.startswith("lesson-credit: postgresql://lc@127.0.0.1:"), err
        server.start()
        wait_until_accepting(server)
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM lesson_credit.events").fetchone() == (0,)  # none of 2500
        # pushing again writes everything, once
        code, out, err = subprocess_run(["store", "push", "-w", str(root), "--store", url, "--json"])
        assert code == 0, err
        assert json.loads(out)["added"] == n
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(DISTINCT session_id) FROM lesson_credit.events").fetchone() == (n,)
    finally:
        if push is not None and push.poll() is None:
            push.kill()
            push.wait()
        server.stop()


def subprocess_run(argv: list[str]) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "lesson_credit.cli.main", *argv],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=REPO,
        timeout=PROCESS_TIMEOUT_S,
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_a_killed_server_then_a_write_fails_cleanly_and_the_next_client_reconnects(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        server = start_server()
    except NoServer as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs a PostgreSQL server: {exc}")
        pytest.skip(f"no PostgreSQL server could be started: {exc}")
    try:
        from lesson_credit.core.log.store import StoreError
        from lesson_credit.core.workspace import Workspace

        url = create_database(server, "restart")
        root = make_workspace(tmp_path / "ws")
        ws = Workspace(root, store=PgStore(url, agent="a1"))  # a long-lived client (a dashboard)
        ws.record("s1", root / "j.txt", ["tools/git.md"], reward=0.5)
        server.kill()
        with pytest.raises(StoreError, match="postgresql://lc@127.0.0.1") as failed:
            ws.grade("s1", 0.9)
        assert "\n" not in str(failed.value)
        server.start()
        wait_until_accepting(server)
        ws.grade("s1", 0.8)  # the same client goes on, on a new connection
        assert [g.base_reward for g in ws.grade_history("s1")] == [0.5, 0.8]
        code, out, err = run(capsys, "status", "-w", str(root), "--store", url, "--json")
        assert code == 0, err
        assert json.loads(out)["sessions"] == 1
    finally:
        server.stop()
