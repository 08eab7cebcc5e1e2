"""A record on a database store rewrites the workspace's bandit-state.json too (under the writers' lock, after the
commit): gptme's bandit saving the file at that moment (`write_text`: emptied, not written yet) has it left to
gptme, one warning, and the next command logs gptme's session once its text has landed (tests/cli/test_slow_save.py
for the file store)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.support.cli_run import run, run_json

STATE = Path("state") / "lesson-thompson" / "bandit-state.json"
GIT = "tools/git.md"


def _record(capsys: pytest.CaptureFixture[str], root: Path, store: str, sid: str, reward: str) -> str:
    argv = ["--session-id", sid, "--journal", str(root / "j.txt"), "--lessons", GIT, "--reward", reward]
    code, _, err = run(capsys, "record", "--workspace", str(root), "--store", store, *argv)
    assert code == 0, err
    return err


def test_a_record_on_a_database_leaves_a_file_gptme_is_saving_and_the_next_command_logs_it(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    _record(capsys, ws_root, pg_url, "s1", "0.8")
    path = ws_root / STATE
    state = json.loads(path.read_text())  # gptme's bandit loads it, and adds a session: git not rewarded
    state["arms"][GIT]["beta"] += 1.0
    state["arms"][GIT]["total_selections"] += 1
    saved = {key: state[key] for key in ("arms", "created")} | {"total_sessions": state["total_sessions"] + 1}
    with path.open("w") as saving:  # its save has emptied the file
        ahead = time.time() + 60  # (a time ahead of the clock is recent: no timing luck)
        os.utime(path, (ahead, ahead))
        err = _record(capsys, ws_root, pg_url, "s2", "0.6")
        assert len(err.strip().splitlines()) == 1 and "may be saving it" in err and "next command" in err, err
        assert path.read_bytes() == b""
        saving.write(json.dumps(saved, indent=2) + "\n")
    report = run_json(capsys, "status", "--workspace", str(ws_root), "--store", pg_url)
    (row,) = [r for r in report["lessons"] if r["path"] == GIT]
    # by hand: git alone credited (weight 1): Beta(1, 1) + s1 (0.8, 0.2) + s2 (0.6, 0.4) + gptme's (0, 1); n 3
    assert (row["alpha"], row["beta"], row["n"]) == pytest.approx((2.4, 2.6, 3))
    arm = json.loads(path.read_text())["arms"][GIT]
    assert (arm["alpha"], arm["beta"], arm["total_selections"]) == pytest.approx((2.4, 2.6, 3))
    _record(capsys, ws_root, pg_url, "s3", "1")  # once: nothing more logged
    report = run_json(capsys, "status", "--workspace", str(ws_root), "--store", pg_url)
    (row,) = [r for r in report["lessons"] if r["path"] == GIT]
    assert (row["alpha"], row["beta"], row["n"]) == pytest.approx((3.4, 2.6, 4))  # + s3 (1, 0)
