"""The log's cap on distinct lessons at its real size (core/log/arm_names.py MAX_LOG_LESSONS, 100,000), once: the
other tests set it to 3. The log at the cap is one prior event naming 100,000 lessons (no session written); gptme's
bandit updates the workspace's own file (20 MB) under its own key for a lesson the log has and makes an arm for one
past the cap. About 8 s and 600 MB."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.log.arm_names import MAX_LOG_LESSONS
from tests.cli.cli_fixtures import LOG_REL, make_ws, run
from tests.support.engine_helpers import STATE_REL

STAMP = "2026-12-06T08:19:27.925928+00:00"  # gptme's bandit's (isoformat, +00:00)


@pytest.mark.long
def test_gptmes_update_of_the_own_file_at_the_real_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert MAX_LOG_LESSONS == 100_000
    arms = {f"x/{i}.md": {"alpha": 2.0, "beta": 1.0} for i in range(MAX_LOG_LESSONS)}
    ws = make_ws(tmp_path, {"tools/a.md": ["alpha"]}, events=[{"type": "prior", "arms": arms}])
    own = ws / STATE_REL
    assert run(capsys, "export-gptme", "-w", str(ws), str(own))[0] == 0
    state = json.loads(own.read_text())
    assert len(state["arms"]) == MAX_LOG_LESSONS
    for key in ("lessons/x/5.md", "lessons/tools/a.md"):  # not found under these keys: made at Beta(1, 1), reward 1
        state["arms"][key] = {"arm_id": key, "alpha": 2.0, "beta": 1.0, "total_selections": 1, "total_rewards": 1}
        state["arms"][key]["last_updated"] = STAMP
    state["total_sessions"] = state.get("total_sessions", 0) + 1
    state.pop("lesson_credit_written")
    own.write_text(json.dumps(state), encoding="utf-8")
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    assert [w for w in json.loads(out)["warnings"] if "tools/a.md" in w] == [
        f"{own} was updated by another tool (gptme's bandit) since lesson-credit wrote it: its increments to 1 arm "
        "(up to 1 selection each) are logged as an increments event from gptme-bandit, and the file follows the log "
        "again; its update of tools/a.md past the 100,000 lessons a log names is not logged, and is left out of the "
        "file"
    ]
    last = json.loads((ws / LOG_REL).read_bytes().splitlines()[-1])
    assert last["arms"] == {"x/5.md": {"alpha": 1.0, "beta": 0.0, "n": 1, "rewards": 1}}  # as gptme spelled it, read
    # as x/5.md: the log's lesson, not a new one. By hand: the prior (2, 1) + (1, 0) = (3, 1)
    arms_after = json.loads(own.read_text())["arms"]
    assert "lessons/tools/a.md" not in arms_after and len(arms_after) == MAX_LOG_LESSONS
    assert (arms_after["lessons/x/5.md"]["alpha"], arms_after["lessons/x/5.md"]["beta"]) == (3.0, 1.0)
