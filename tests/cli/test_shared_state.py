"""Another tool's update of the shared bandit-state.json is never thrown away by our commands:
the file is left as it is, with one warning; our own stale file is still
rewritten. Numbers in the warning are printed without repr noise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import run
from engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace, session

GIT = "tools/git.md"


@pytest.fixture
def ws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = make_workspace(
        tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {GIT: 1.0})], journals={"j.txt": BASIC_JOURNAL}
    )
    code, _, err = run(capsys, "grade", "s1", "0.9", "--workspace", str(root))  # bandit-state.json written by us
    assert code == 0, err
    return root


def gptme_update(root: Path) -> bytes:
    """What gptme-sessions' bandit does to the file: load, add a session's update to an arm, and
    save exactly its own keys (arms, total_sessions, created, last_updated; any other key dropped)."""
    path = root / STATE_REL
    state = json.loads(path.read_text())
    arm = state["arms"][GIT]
    arm["alpha"] = 3.5199999999999996  # the value the issue saw printed raw
    arm["total_selections"] += 1
    saved = {
        "arms": state["arms"],
        "total_sessions": state["total_sessions"] + 1,
        "created": state["created"],
        "last_updated": "2026-10-30T12:00:00+00:00",
    }
    path.write_text(json.dumps(saved, indent=2) + "\n")
    return path.read_bytes()


def test_status_keeps_another_tools_update_and_says_so_once(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    theirs = gptme_update(ws)
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0
    assert (ws / STATE_REL).read_bytes() == theirs
    lines = [line for line in err.splitlines() if "bandit-state.json" in line]
    assert len(lines) == 1 and "another tool" in lines[0], err
    assert "3.5199999999999996" not in err and "3.52" in lines[0]
    code, out, _ = run(capsys, "status", "--workspace", str(ws), "--json")
    assert code == 0 and (ws / STATE_REL).read_bytes() == theirs
    assert any("another tool" in w for w in json.loads(out)["warnings"])


def test_a_write_keeps_it_too_and_its_event_is_committed(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    theirs = gptme_update(ws)
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0
    assert (ws / STATE_REL).read_bytes() == theirs
    assert b'"base_reward":0.5' in (ws / LOG_REL).read_bytes().replace(b" ", b"")
    assert any("another tool" in line for line in err.splitlines())


def test_lint_reports_it_with_the_way_to_take_the_file_back(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    theirs = gptme_update(ws)
    code, out, _ = run(capsys, "lint", "--workspace", str(ws), "--json")
    (finding,) = [f for f in json.loads(out)["findings"] if "bandit-state" in f["code"]]
    assert "another tool" in finding["message"] and "export-gptme" in finding["advice"]
    assert (ws / STATE_REL).read_bytes() == theirs
    # taking it back, as the advice says: export over it; then our writes rewrite it again
    code, _, err = run(capsys, "export-gptme", "--workspace", str(ws), str(ws / STATE_REL))
    assert code == 0, err
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0 and "another tool" not in err
    assert json.loads((ws / STATE_REL).read_text())["arms"][GIT]["alpha"] != 3.5199999999999996


def test_our_own_stale_file_is_still_rewritten(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Killed between the append and the rewrite: the file is ours (as we wrote it), only behind."""
    with open(ws / LOG_REL, "ab") as handle:
        handle.write(b'{"type":"grade","session_id":"s1","base_reward":0.0,"grader":"manual"}\n')
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "rewritten from the log" in err
    arm = json.loads((ws / STATE_REL).read_text())["arms"][GIT]
    # seed, floor 0.3, salience 1 -> w 1; the latest grade 0 counts: alpha 1 + 0, beta 1 + 1
    assert (arm["alpha"], arm["beta"]) == (1.0, 2.0)


def test_a_file_folded_from_the_database_store_is_left_by_a_status_on_the_file(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workspace used with both stores: status repairs only a file folded from its own store, so
    it is not rewritten back and forth; a write rewrites it from the write's store (tests/pg too)."""
    from lesson_credit.core.bandit.interop import SOURCE_KEY, STAMP_KEY, state_stamp

    path = ws / STATE_REL
    state = json.loads(path.read_text())
    state["arms"][GIT]["total_selections"] = 7  # the database's fold, seven sessions of git.md
    state[SOURCE_KEY] = "database 1234"
    state[STAMP_KEY] = state_stamp(state)  # as lesson-credit wrote it on that store
    path.write_text(json.dumps(state, indent=2) + "\n")
    written = path.read_bytes()
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert (code, err) == (0, "") and path.read_bytes() == written
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert (code, err) == (0, "")
    after = json.loads(path.read_text())
    assert after["arms"][GIT]["total_selections"] == 1 and SOURCE_KEY not in after  # the file's fold
