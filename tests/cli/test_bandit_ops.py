"""replay --decay and prune."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.bandit.config import load_config
from lesson_credit.core.log.cache import LogCache
from lesson_credit.core.log.store import EventLog
from lesson_credit.core.workspace import Workspace
from tests.cli.cli_fixtures import CONFIG_REL, LOG_REL, lesson_text, log_bytes, make_ws, run, run_json, session

GIT, GONE = "tools/git.md", "tools/gone.md"


def test_replay_decay_what_if_and_write(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # seed, salience 1 -> w 1: s1 (base 1) alpha +1, s2 (base 0) beta +1 -> Beta(2, 2), mean 0.5.
    # decay 0.5: the increment of graded session t of T = 2 counts 0.5**(2 - t): alpha 1 + 0.5, beta 1 + 1
    ws = make_ws(
        tmp_path, lessons={GIT: ["git"]}, events=[session("s1", 1.0, {GIT: 1.0}), session("s2", 0.0, {GIT: 1.0})]
    )
    before = log_bytes(ws)
    payload = run_json(capsys, "replay", "-w", str(ws), "--decay", "0.5")
    (row,) = payload["lessons"]
    assert (row["alpha"], row["beta"]) == pytest.approx((1.5, 2.0))
    assert row["change"] == pytest.approx(1.5 / 3.5 - 0.5)
    assert (payload["decay"], payload["written"]) == (0.5, False)
    assert not (ws / CONFIG_REL).exists() and log_bytes(ws) == before
    code, out, err = run(capsys, "replay", "-w", str(ws), "--decay", "0.5", "--write")
    assert code == 0, err
    assert "decay 0.5 (written)" in out
    assert load_config(ws / CONFIG_REL).credit.decay == 0.5
    status = run_json(capsys, "status", "-w", str(ws))
    assert (status["lessons"][0]["alpha"], status["lessons"][0]["beta"]) == pytest.approx((1.5, 2.0))
    state = json.loads((ws / "state/lesson-thompson/bandit-state.json").read_text(encoding="utf-8"))
    assert (state["arms"][GIT]["alpha"], state["arms"][GIT]["beta"]) == pytest.approx((1.5, 2.0))


@pytest.mark.parametrize("value", ["0", "1.5", "x", "-0.1"])
def test_replay_refuses_a_decay_outside_0_1(tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    ws = make_ws(tmp_path, lessons={GIT: ["git"]})
    with pytest.raises(SystemExit) as info:
        run(capsys, "replay", "-w", str(ws), "--decay", value)
    assert info.value.code == 2 and "decay" in capsys.readouterr().err


@pytest.fixture
def ghost_ws(tmp_path: Path) -> Path:
    # git: s1 0.8 at salience 1 -> Beta(1.8, 1.2); gone: 0.8 at salience 0 -> w .3, r .24 -> Beta(1.24, 1.76)
    return make_ws(tmp_path, lessons={GIT: ["git"]}, events=[session("s1", 0.8, {GIT: 1.0, GONE: 0.0})])


def rows(capsys: pytest.CaptureFixture[str], ws: Path, *extra: str) -> dict[str, tuple[float, float, str]]:
    payload = run_json(capsys, "status", "-w", str(ws), *extra)
    return {r["path"]: (r["alpha"], r["beta"], r["status"]) for r in payload["lessons"]}


def test_prune_retires_missing_arms_and_keeps_their_history(ghost_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert set(rows(capsys, ghost_ws)) == {GIT, GONE}
    before = log_bytes(ghost_ws)
    expected = {"retired": [GONE], "written": False, "warnings": []}
    assert run_json(capsys, "prune", "-w", str(ghost_ws), "--dry-run") == expected
    assert log_bytes(ghost_ws) == before
    assert run_json(capsys, "prune", "-w", str(ghost_ws)) == {"retired": [GONE], "written": True, "warnings": []}
    after = log_bytes(ghost_ws)
    assert after is not None and before is not None and after.startswith(before)
    retire = json.loads(after[len(before) :])
    assert retire == {"type": "retire", "timestamp": "2026-03-05T16:30:00Z", "retired": [GONE]}
    # hidden from status; with --all it is there, its evidence unchanged
    assert set(rows(capsys, ghost_ws)) == {GIT}
    everything = rows(capsys, ghost_ws, "--all")
    assert everything[GONE][:2] == pytest.approx((1.24, 1.76)) and everything[GONE][2] == "missing"
    assert everything[GIT][:2] == pytest.approx((1.8, 1.2))
    assert {r["path"] for r in run_json(capsys, "replay", "-w", str(ghost_ws))["lessons"]} == {GIT}
    # nothing new to retire; the log reads without problems; lint no longer calls it a ghost
    assert run(capsys, "prune", "-w", str(ghost_ws))[1].startswith("nothing to prune")
    assert log_bytes(ghost_ws) == after
    assert Workspace(ghost_ws).log_problems() == []
    lint = run_json(capsys, "lint", "-w", str(ghost_ws))
    assert "ghost-arms" not in {f["code"] for f in lint["findings"]}
    # through the parsed-log cache too
    assert Workspace(ghost_ws, cache_threshold=0).retired_arms() == {GONE: 2}  # writes the parsed-log cache
    log = Workspace(ghost_ws).log
    assert isinstance(log, EventLog) and LogCache(log).load() is not None
    assert Workspace(ghost_ws, cache_threshold=0).retired_arms() == {GONE: 2}


def test_restoring_the_file_brings_a_retired_lesson_back(ghost_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "prune", "-w", str(ghost_ws))[0] == 0
    (ghost_ws / "lessons" / GONE).write_text(lesson_text(["gone"]), encoding="utf-8")
    restored = rows(capsys, ghost_ws)
    assert restored[GONE][:2] == pytest.approx((1.24, 1.76)) and restored[GONE][2] == "active"


def test_a_bad_retire_event_is_reported_and_skipped(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, lessons={GIT: ["git"]}, events=[session("s1", 0.8, {GONE: 0.0}), {"type": "retire"}])
    problems = Workspace(ws).log_problems()
    assert [(p.line, "retire event without" in p.reason) for p in problems] == [(2, True)]
    assert (ws / LOG_REL).exists()
