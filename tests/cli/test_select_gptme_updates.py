"""A logged `select` is a write: gptme's bandit's updates of bandit-state.json since our last write are logged
(an increments event) before the draw, as every write logs them, so a credit policy draws from posteriors that
hold them. Before, the draw left them out (a lesson gptme rewarded six times drew as if it had not been) and the
selection event was logged without them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, LOG_REL, STATE_REL, make_workspace, session

GIT = "tools/git.md"


def _gptme_saves(root: Path, times: int) -> None:
    """gptme's bandit loading the file and saving one session's update to git, reward 1, `times` times: alpha + 1,
    a selection and a reward each, total_sessions + 1; its own keys only, `created` kept."""
    for i in range(times):
        loaded = json.loads((root / STATE_REL).read_text())
        arm = loaded["arms"][GIT]
        arm.update(alpha=arm["alpha"] + 1.0, total_selections=arm["total_selections"] + 1)
        arm.update(total_rewards=arm["total_rewards"] + 1, last_updated=f"2026-12-06T12:00:0{i}.000001+00:00")
        saved = {key: loaded[key] for key in ("arms", "created")}
        saved["total_sessions"] = loaded["total_sessions"] + 1
        (root / STATE_REL).write_text(json.dumps(saved, indent=2) + "\n")


def _select(capsys: pytest.CaptureFixture[str], root: Path) -> dict[str, Any]:
    (root / "context.txt").write_text("git and a quote")
    argv = ["select", "-w", str(root), "--context", str(root / "context.txt"), "--k", "1", "--seed", "11"]
    code, out, err = run(capsys, *argv, "--policy", "seed", "--session-id", "sel-1", "--json")
    assert code == 0, err
    return dict(json.loads(out))


def _events(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]


def test_a_logged_select_logs_gptmes_updates_before_it_draws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(
        tmp_path / "a", BASIC_LESSONS, events=[session("s1", 0.8, {GIT: 1.0})], journals={"j.txt": BASIC_JOURNAL}
    )
    code, _, err = run(capsys, "grade", "s1", "0.9", "--workspace", str(root))  # bandit-state.json written by us
    assert code == 0, err
    _gptme_saves(root, 6)
    other = tmp_path / "b"
    shutil.copytree(root, other)
    code, _, err = run(capsys, "status", "--workspace", str(other))  # the second way: status logs them first
    assert code == 0 and "increments" in err, err
    drawn, expected = _select(capsys, root), _select(capsys, other)
    kinds = [("increments" if event.get("increments") else event.get("type", "session")) for event in _events(root)]
    assert kinds[-2:] == ["increments", "selection"], kinds
    # six sessions of reward 1: alpha + 6, beta + 0, six selections and rewards
    assert _events(root)[-2]["arms"][GIT] == {"alpha": 6.0, "beta": 0.0, "n": 6, "rewards": 6}
    # git Beta(1 + 0.9 + 6, 1 + 0.1) against quote's Beta(1, 1): the same draw as after `status`
    assert drawn["propensity"] == expected["propensity"]
    assert drawn["selected"] == expected["selected"]


def test_a_select_says_the_file_is_left_and_status_names_the_lesson_gptme_keyed_its_own_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gptme's bandit, not finding our key `tools/git.md`, made its own `lessons/tools/git.md` beside it. A select
    logs that update but does not rewrite the file (before, it said "the file follows the log again", the file still
    holding both keys); the next `status` says the file has our key beside gptme's for that lesson (before: "it has
    tools/git.md, which the log does not", a lesson of 2 sessions in the log) and rewrites it under gptme's alone."""
    root = make_workspace(
        tmp_path / "a", BASIC_LESSONS, events=[session("s1", 0.8, {GIT: 1.0})], journals={"j.txt": BASIC_JOURNAL}
    )
    code, _, err = run(capsys, "grade", "s1", "0.9", "--workspace", str(root))  # bandit-state.json written by us
    assert code == 0, err
    loaded = json.loads((root / STATE_REL).read_text())
    theirs = "lessons/" + GIT
    stamp = "2026-12-06T12:00:00.000001+00:00"
    loaded["arms"][theirs] = {  # Beta(1, 1) and one session of reward 1
        "arm_id": theirs, "alpha": 2.0, "beta": 1.0, "total_selections": 1, "total_rewards": 1, "last_updated": stamp
    }  # fmt: skip
    saved = {"arms": loaded["arms"], "created": loaded["created"], "total_sessions": loaded["total_sessions"] + 1}
    (root / STATE_REL).write_text(json.dumps(saved, indent=2) + "\n")
    said = _select(capsys, root)["warnings"]
    assert said == [
        f"{root / STATE_REL} was updated by another tool (gptme's bandit) since lesson-credit wrote it: its increments "
        "to 1 arm (up to 1 selection each) are logged as an increments event from gptme-bandit, and the file is left "
        "as it is until a write or `status` rewrites it from the log"
    ], said
    assert _events(root)[-2]["arms"] == {GIT: {"alpha": 1.0, "beta": 0.0, "n": 1, "rewards": 1}}  # (2, 1) less (1, 1)
    assert set(json.loads((root / STATE_REL).read_text())["arms"]) >= {GIT, theirs}  # left as it is
    code, out, err = run(capsys, "status", "--workspace", str(root), "--json")
    assert code == 0, err
    assert [w for w in json.loads(out)["warnings"] if "bandit-state.json" in w] == [
        f"bandit-state.json disagrees with the log: it has {GIT} beside the key gptme looks that lesson up by, "
        f"{theirs}, the one the log's numbers go under; rewritten from the log"
    ]
    arms = json.loads((root / STATE_REL).read_text())["arms"]
    assert theirs in arms and GIT not in arms
    # s1 at 0.9 (Beta(1.9, 1.1), n 1) and gptme's session (+1, +0, n 1): Beta(2.9, 1.1), n 2
    assert (arms[theirs]["alpha"], arms[theirs]["beta"], arms[theirs]["total_selections"]) == (2.9, 1.1, 2)
