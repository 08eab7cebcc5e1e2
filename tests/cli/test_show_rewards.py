"""`show` prints rewards as `sessions` does (three places) in its text, and exactly in --json. It printed them
with `:g`: a 0.1 + 0.2 typed by a script read 0.3 (the float it is, 0.30000000000000004, only in --json),
and a score of 0.00001 read 1e-05 where `sessions` says 0.000."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws, run_json
from tests.support.cli_run import run
from tests.support.engine_helpers import grade, session


def test_show_prints_rewards_to_three_places_and_json_exactly(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [session("s1", 0.00001, {"a.md": 1.0}), grade("s1", 0.1 + 0.2), grade("s1", 0.66666, "judge")]
    root = make_ws(tmp_path, {"a.md": ["alpha"]}, events)
    code, text, err = run(capsys, "show", "s1", "-w", str(root))
    assert code == 0, err
    lines = text.splitlines()
    # the grade in force (the person's), the history (the record's own, then two grades), every source
    assert "grade     0.300 (manual)" in lines
    history = [line.split()[1] for line in lines[lines.index("grade history:") + 1 :][:3]]
    assert history == ["0.000", "0.300", "0.667"]  # 0.00001, 0.30000000000000004, 0.66666 to three places
    sources = next(line for line in lines if line.startswith("sources"))
    assert "human 0.300 (manual, line 2) in force" in sources and "judge 0.667 (judge, line 3)" in sources
    assert "heuristic 0.000 (heuristic, line 1)" in sources
    out = run_json(capsys, "show", "s1", "-w", str(root))
    assert out["base_reward"] == 0.30000000000000004  # (0.1 + 0.2 as a float: exact in --json)
    assert [g["base_reward"] for g in out["grades"]] == [0.00001, 0.30000000000000004, 0.66666]
    assert {s["source"]: s["score"] for s in out["sources"]} == {
        "heuristic": 0.00001,
        "human": 0.30000000000000004,
        "judge": 0.66666,
    }
