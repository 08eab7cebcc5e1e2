"""gptme's bandit's `prune` on the workspace's own bandit-state.json: with its defaults it drops every arm never
selected (a lesson of a pending session: n 0) and every arm whose `last_updated` is over 90 days old (ours is the
time of the arm's latest session), then saves. An arm gone that way held no update of gptme's (gptme's update
gives an arm a selection and stamps it now), and the log holds ours: the file's other arms' updates are logged as
every update of it is, and the file written again from the log (the arm back at the log's numbers). Before, the
file was kept for good ("it lacks tools/b.md, which lesson-credit wrote"): every later session gptme's bandit
saved there stayed out of the log. The numbers are worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, STATE_REL, make_workspace, session
from tests.support.two_arms import GPTME_TIME, LESSONS, A, B, ok
from tests.support.two_arms import rows_said as rows


def gptme_session(state: dict[str, Any], key: str, reward: float) -> None:
    """gptme-sessions' update_session of one arm at `reward`: alpha + r, beta + 1 - r, a selection, restamped."""
    arm = state["arms"][key]
    arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward, last_updated=GPTME_TIME)
    arm.update(total_selections=arm["total_selections"] + 1, total_rewards=arm["total_rewards"] + (reward > 0.5))
    state["total_sessions"] += 1


def increments(root: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]
    return [event for event in events if event.get("increments")]


def test_gptmes_session_after_it_pruned_an_arm_never_selected_is_logged(tmp_path: Path) -> None:
    # s1 graded 0.5 names a (salience 1, w = 1): a = Beta(1.5, 1.5) n 1; s2 pending names b: b = Beta(1, 1) n 0
    events = [session("s1", 0.5, {A: 1.0}), session("s2", None, {B: 1.0})]
    root = make_workspace(tmp_path, LESSONS, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))  # our file (and its copy): a and b
    path = root / STATE_REL
    state = json.loads(path.read_text())
    assert state["arms"][B]["total_selections"] == 0
    del state["arms"][B], state["lesson_credit_written"]  # gptme's prune: b never selected
    gptme_session(state, A, 1.0)  # then its session on a
    path.write_text(json.dumps(state, indent=2) + "\n")
    found, err = rows(root)
    # by hand: a = (1.5, 1.5) n 1 + gptme's +1 / +0, n + 1 = (2.5, 1.5) n 2; b the log's (1, 1) n 0
    assert found == {A: (2.5, 1.5, 2), B: (1.0, 1.0, 0)}, err  # before: a (1.5, 1.5) n 1, the file kept
    assert "left as it is" not in err and len(increments(root)) == 1, err
    written = json.loads(path.read_text())
    assert set(written["arms"]) == {A, B} and written["total_sessions"] == 2  # s1 and gptme's session
    again, err = rows(root)  # counted once
    assert again == found and not err and len(increments(root)) == 1


def test_gptmes_session_after_it_pruned_an_arm_not_updated_in_90_days_is_logged(tmp_path: Path) -> None:
    # s1 (2026-06-01, graded 1.0) names a: a = (2, 1) n 1, stamped 2026-06-01 (over 90 days before gptme's prune);
    # s2 (graded 0.5) names b: b = (1.5, 1.5) n 1
    events = [
        session("s1", 1.0, {A: 1.0}, timestamp="2026-06-01T10:00:00Z"),
        session("s2", 0.5, {B: 1.0}, timestamp="2026-12-01T10:00:00Z"),
    ]
    root = make_workspace(tmp_path, LESSONS, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    path = root / STATE_REL
    state = json.loads(path.read_text())
    assert state["arms"][A]["last_updated"] == "2026-06-01T10:00:00+00:00"  # s1's time, as gptme writes one
    del state["arms"][A], state["lesson_credit_written"]  # gptme's prune: a's stamp over 90 days old
    gptme_session(state, B, 0.8)
    path.write_text(json.dumps(state, indent=2) + "\n")
    found, err = rows(root)
    # by hand: a the log's (2, 1) n 1; b = (1.5, 1.5) n 1 + gptme's +0.8 / +0.2, n + 1 = (2.3, 1.7) n 2
    assert found == {A: (2.0, 1.0, 1), B: (2.3, 1.7, 2)}, err
    assert set(json.loads(path.read_text())["arms"]) == {A, B}


def test_an_exported_file_gptme_pruned_is_refused_with_the_arm_to_put_back_not_a_double_count(
    tmp_path: Path,
) -> None:
    """gptme's prune dropped b (never selected) from a file `export-gptme` wrote elsewhere, then a session of gptme's
    moved a. Which arms an import may take as pruned cannot be told safely here (an arm made again, a file moved
    since), so the import is refused, nothing logged; it advised deleting the file's `created` key, which imports the
    file as another bandit's and counts a's logged evidence twice ((3, 2) n 3 for (2.5, 1.5) n 2: the file's a as a
    prior, the log's s1 on it again). It now names the arm with the numbers lesson-credit wrote: put back, the import
    logs gptme's session, once."""
    events = [session("s1", 0.5, {A: 1.0}), session("s2", None, {B: 1.0})]  # a (1.5, 1.5) n 1; b (1, 1) n 0
    root = make_workspace(tmp_path, LESSONS, events=events)
    path = tmp_path / "gptme" / "bandit-state.json"
    path.parent.mkdir()
    ok("export-gptme", str(path), "-w", str(root))
    state = json.loads(path.read_text())
    pruned = state["arms"].pop(B)  # gptme's prune: b never selected
    gptme_session(state, A, 1.0)
    path.write_text(json.dumps(state, indent=2) + "\n")
    log = (root / LOG_REL).read_bytes()
    code, _, err = run_cli("import-gptme", str(path), "-w", str(root))
    assert code == 1 and (root / LOG_REL).read_bytes() == log, err
    assert f"it lacks {B}, which lesson-credit wrote as alpha 1, beta 1, 0 selections" in err, err
    assert "put the arm back" in err and '"created"' not in err, err  # before: delete its "created" key
    state["arms"][B] = pruned
    path.write_text(json.dumps(state, indent=2) + "\n")
    ok("import-gptme", str(path), "-w", str(root))
    # by hand: a = (1.5, 1.5) n 1 + gptme's +1 / +0, n + 1 = (2.5, 1.5) n 2; b the log's (1, 1) n 0
    assert rows(root)[0] == {A: (2.5, 1.5, 2), B: (1.0, 1.0, 0)}
