"""`import-gptme` of a file with more arms than any library has lessons (a million arms took 80 s and 2.6 GB
to import, and every command after it ran out of memory), and of a pipe no one writes to (it read as
"not valid JSON (Input data was truncated)"): one line each, nothing logged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lesson_credit.core.bandit import interop
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_LESSONS, LOG_REL, make_workspace, session

NOW = "2026-11-01T00:00:00Z"


def state_file(path: Path, arms: int) -> Path:
    entries = {
        f"m/{i}.md": {"arm_id": f"m/{i}.md", "alpha": 2.0, "beta": 3.0, "total_selections": 1, "total_rewards": 0}
        for i in range(arms)
    }
    path.write_text(json.dumps({"arms": entries, "total_sessions": 1, "created": NOW, "last_updated": NOW}))
    return path


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_workspace(tmp_path / "ws", BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 0.5})])


def test_more_arms_than_the_cap_are_refused_in_one_line(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the cap is 100,000 arms (a 15 MB file); 3 here, so that the file is small
    monkeypatch.setattr(interop, "MAX_IMPORT_ARMS", 3, raising=False)
    log = (ws / LOG_REL).read_bytes()
    code, out, err = run_cli("--workspace", str(ws), "import-gptme", str(state_file(tmp_path / "four.json", 4)))
    assert (code, out) == (1, "") and err.strip().count("\n") == 0, err
    assert (
        "four.json: more than 3 arms (keys of its arms object, a key given twice counted twice); at most 3 are imported"
        in err
    )  # (counted from its bytes that far)
    assert (ws / LOG_REL).read_bytes() == log
    code, _, err = run_cli("--workspace", str(ws), "import-gptme", str(state_file(tmp_path / "three.json", 3)))
    assert code == 0, err
    assert (ws / LOG_REL).read_bytes() != log  # three arms: logged as a prior


def test_a_pipe_no_one_writes_to_is_empty_not_truncated_json(ws: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "state.json"
    os.mkfifo(fifo)
    log = (ws / LOG_REL).read_bytes()
    code, out, err = run_cli("--workspace", str(ws), "import-gptme", str(fifo))
    assert (code, out) == (1, ""), err
    assert err.strip() == f"lesson-credit: {fifo}: empty; expected a gptme bandit-state.json"
    assert (ws / LOG_REL).read_bytes() == log
