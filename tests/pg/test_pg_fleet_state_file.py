"""A fleet on one database, a workspace per agent: each agent's `bandit-state.json` (what its gptme reads) falls
behind whenever another agent records, which is how a shared log is used, not a fault. `status` brings it up to
date without a warning; a file another tool changed is still kept and said."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import make_workspace
from tests.pg.test_pg_tampering import as_dba
from tests.support.cli_run import run

GIT = "tools/git.md"
STATE = Path("state/lesson-thompson/bandit-state.json")


def _record(capsys: pytest.CaptureFixture[str], root: Path, url: str, sid: str, agent: str) -> None:
    argv = ["record", "-w", str(root), "--store", url, "--agent", agent, "--session-id", sid, "--journal"]
    code, _, err = run(capsys, *argv, str(root / "j.txt"), "--lessons", GIT, "--reward", "1")
    assert code == 0, err


def _fleet(tmp_path: Path, url: str, capsys: pytest.CaptureFixture[str]) -> Path:
    """alpha's workspace, whose file is behind: alpha recorded s1, then bravo s2 (in a workspace of its own)."""
    alpha, bravo = make_workspace(tmp_path / "alpha"), make_workspace(tmp_path / "bravo")
    _record(capsys, alpha, url, "s1", "alpha")
    _record(capsys, bravo, url, "s2", "bravo")
    return alpha


def _git_arm(root: Path) -> dict[str, float]:
    arm: dict[str, float] = json.loads((root / STATE).read_text())["arms"][GIT]
    return arm


def test_a_file_behind_what_other_agents_recorded_is_brought_up_to_date_without_a_warning(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha = _fleet(tmp_path, pg_url, capsys)
    assert _git_arm(alpha)["total_selections"] == 1  # alpha's file: written before bravo's record
    code, _, err = run(capsys, "status", "-w", str(alpha), "--store", pg_url)
    assert code == 0, err
    assert "bandit-state.json" not in err, err
    # rewritten from the log: git in s1 and s2, reward 1 at salience 1 (both keywords hit): w 1, alpha 1 + 1 + 1
    arm = _git_arm(alpha)
    assert (arm["alpha"], arm["beta"], arm["total_selections"]) == (3.0, 1.0, 2)


def test_a_file_another_tool_changed_is_still_said(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    alpha = _fleet(tmp_path, pg_url, capsys)
    state = json.loads((alpha / STATE).read_text())
    state["arms"][GIT]["alpha"] = 7.5  # gptme's bandit (or a person) moved it
    (alpha / STATE).write_text(json.dumps(state))
    code, _, err = run(capsys, "status", "-w", str(alpha), "--store", pg_url)
    assert code == 0, err
    assert "bandit-state.json" in err, err


def test_lint_finds_no_fault_in_a_file_behind_other_agents(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """lint's stale-bandit-state warning said the same of every agent's file whenever another agent recorded."""
    alpha = _fleet(tmp_path, pg_url, capsys)
    code, out, err = run(capsys, "lint", "-w", str(alpha), "--store", pg_url)
    assert "stale-bandit-state" not in out + err, out
    assert _git_arm(alpha)["total_selections"] == 1  # lint reads; the next write or status rewrites it


def test_a_file_ahead_of_the_database_is_said(tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A session gone from the database (an operator's delete, an older backup restored): the file counts two
    sessions, the log one. That is no file behind other agents: said, as on the file store."""
    alpha = make_workspace(tmp_path / "alpha")
    _record(capsys, alpha, pg_url, "s1", "alpha")
    _record(capsys, alpha, pg_url, "s2", "alpha")
    as_dba(pg_url, "DELETE FROM lesson_credit.events WHERE session_id = 's2'")
    code, out, _ = run(capsys, "lint", "-w", str(alpha), "--store", pg_url)
    assert "stale-bandit-state" in out, out
    code, _, err = run(capsys, "status", "-w", str(alpha), "--store", pg_url)
    assert code == 0 and "bandit-state.json disagrees with the log" in err, err


def test_a_file_of_other_settings_is_said(tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    """config.toml edited by hand (another prior): the file counts as many sessions as the log, other numbers."""
    alpha = make_workspace(tmp_path / "alpha")
    _record(capsys, alpha, pg_url, "s1", "alpha")
    (alpha / "state/lesson-thompson/config.toml").write_text("[prior]\nalpha = 5.0\n")
    code, _, err = run(capsys, "status", "-w", str(alpha), "--store", pg_url)
    assert code == 0 and "bandit-state.json disagrees with the log" in err, err


def test_a_file_behind_while_another_agent_holds_the_lock_says_nothing_false(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """status said "another writer holds the log's lock, and its write rewrites the file": another agent's write
    rewrites its own workspace's file, not this one. Behind, the file waits for the next status, without a word."""
    alpha = _fleet(tmp_path, pg_url, capsys)
    with PgStore(pg_url, agent="bravo").locked():
        code, _, err = run(capsys, "status", "-w", str(alpha), "--store", pg_url)
    assert code == 0 and "bandit-state.json" not in err, err
    assert _git_arm(alpha)["total_selections"] == 1  # left for the next status


def test_a_folder_that_is_not_a_workspace_is_refused_on_a_database_too(
    tmp_path: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--store URL status` in an empty folder printed an empty table and left the database's caches there
    (state/lesson-thompson/.cache), which made the folder a workspace: a plain `record` there then started a
    second log. Refused as on the file store, nothing written; `store pull`, which writes only the file it is
    given, still runs from anywhere."""
    alpha = make_workspace(tmp_path / "alpha")
    _record(capsys, alpha, pg_url, "s1", "alpha")
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv in (["status"], ["sessions"], ["select", "--context", str(alpha / "j.txt"), "--dry-run"]):
        code, out, err = run(capsys, *argv, "-w", str(empty), "--store", pg_url)
        assert (code, out) == (1, "") and "is not a lesson-credit workspace" in err, (argv, err)
    assert list(empty.iterdir()) == []
    pulled = tmp_path / "pulled.jsonl"
    code, _, err = run(capsys, "store", "pull", str(pulled), "-w", str(empty), "--store", pg_url)
    assert code == 0, err
    assert '"s1"' in pulled.read_text() and list(empty.iterdir()) == []
