"""A database that holds no event yet (a new one, `store push` not run) in front of a bandit-state.json
that holds evidence is a fold of nothing, as a deleted log file is (tests/cli/test_log_missing.py): the
state file gptme reads is left as it is, and `status` says why in one line (it said nothing: every
lesson showed as never used)."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from tests.pg.pg_helpers import log_path
from tests.support.cli_run import run, run_json

STATE = Path("state") / "lesson-thompson" / "bandit-state.json"


def _record(capsys: pytest.CaptureFixture[str], root: Path, store: str, sid: str, reward: str) -> None:
    journal = str(root / "j.txt")
    argv = ["--session-id", sid, "--journal", journal, "--lessons", "tools/git.md", "--reward", reward]
    code, _, err = run(capsys, "record", "--workspace", str(root), "--store", store, *argv)
    assert code == 0, err


def _recorded_on_the_file(capsys: pytest.CaptureFixture[str], root: Path) -> bytes:
    for sid, reward in (("s1", "0.8"), ("s2", "0.6")):
        _record(capsys, root, "", sid, reward)
    state = (root / STATE).read_bytes()
    assert json.loads(state)["arms"]["tools/git.md"]["total_selections"] == 2  # what gptme reads
    assert log_path(root).exists()
    return state


def test_status_on_an_empty_database_keeps_the_state_file_and_says_why(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    state = _recorded_on_the_file(capsys, ws_root)
    code, out, err = run(capsys, "status", "--workspace", str(ws_root), "--store", pg_url)
    assert code == 0 and "tools/git.md" in out
    assert (ws_root / STATE).read_bytes() == state  # not rewritten from a fold of nothing
    assert err.count("\n") == 1 and "the event store holds no session" in err
    assert "bandit-state.json is left as it is" in err
    assert "store push" in err  # the way out
    report = run_json(capsys, "status", "--workspace", str(ws_root), "--store", pg_url)
    assert any("holds no session" in w for w in report["warnings"])
    code, out, _ = run(capsys, "lint", "--workspace", str(ws_root), "--store", pg_url, "--json")
    findings = {f["code"]: f for f in json.loads(out)["findings"]}
    assert code == 1 and "the event store holds no session" in findings["log-missing"]["message"]
    assert (ws_root / STATE).read_bytes() == state


def test_a_record_into_the_empty_database_writes_the_state_file_from_it(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    """The user chose the database: its first event is evidence, and the file follows the database."""
    _recorded_on_the_file(capsys, ws_root)
    _record(capsys, ws_root, pg_url, "s9", "0.7")
    assert json.loads((ws_root / STATE).read_bytes())["arms"]["tools/git.md"]["total_selections"] == 1


def test_status_on_a_database_emptied_keeps_the_state_file_written_from_it(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    """The database the state file was folded from, emptied (its schema dropped, a restore of an empty
    dump; the table itself refuses TRUNCATE): every lesson showed as never used, without a word why."""
    _record(capsys, ws_root, pg_url, "s1", "0.8")
    state = (ws_root / STATE).read_bytes()
    assert json.loads(state)["arms"]["tools/git.md"]["total_selections"] == 1
    with psycopg.connect(pg_url) as conn:
        conn.execute("DROP SCHEMA lesson_credit CASCADE")  # created again by the next client
    code, _, err = run(capsys, "status", "--workspace", str(ws_root), "--store", pg_url)
    assert (ws_root / STATE).read_bytes() == state
    assert code == 0 and "the event store holds no session" in err
