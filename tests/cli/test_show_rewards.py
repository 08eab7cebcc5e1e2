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


def test_grade_confirms_rewards_to_three_places_as_show_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`grade`'s line said `0.2 -> 1e-05` and `0.333333` (`:g`) where `show` and `sessions` say 0.000 and
    0.333: the same three places; --json keeps the value exact."""
    root = make_ws(
        tmp_path, {"a.md": ["alpha"]}, [session("s1", 0.2, {"a.md": 1.0}), session("s2", 0.5, {"a.md": 1.0})]
    )
    code, text, err = run(capsys, "grade", "s1", "0.00001", "-w", str(root))
    assert code == 0, err
    assert text.startswith("graded s1: 0.200 -> 0.000 (manual)\n"), text
    code, text, err = run(capsys, "grade", "s2", str(1 / 3), "--grader", "judge", "-w", str(root))
    # the person's grade is first in the default priority: none here, so the judge's is in force
    assert code == 0 and text.startswith("graded s2: 0.500 -> 0.333 (judge)\n"), text
    assert run_json(capsys, "grade", "s1", "0.00002", "-w", str(root))["base_reward"] == 0.00002
