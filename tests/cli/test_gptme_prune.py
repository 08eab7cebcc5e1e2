"""gptme's bandit's `prune` on the workspace's own bandit-state.json: with its defaults it drops every arm never
selected (a lesson of a pending session: n 0) and every arm whose `last_updated` is over 90 days old (ours is the
time of the arm's latest session), then saves. An arm gone that way held no update of gptme's (gptme's update
gives an arm a selection and stamps it now), and the log holds ours: the file's other arms' updates are logged as
every update of it is, and the file written again from the log (the arm back at the log's numbers). Before, the
file was kept for good ("it lacks tools/b.md, which lesson-credit wrote"): every later session gptme's bandit
saved there stayed out of the log. So in a file `export-gptme` wrote elsewhere, whose import refused it (and the
export onto it) until the arm was put back. The numbers are worked out by hand in the comments."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, STATE_REL, make_workspace, session
from tests.support.two_arms import GPTME_TIME, LESSONS, A, B, ok
from tests.support.two_arms import rows_said as rows

NOW = dt.datetime(2026, 12, 6, 12, 0, tzinfo=dt.UTC)  # 188 days after 2026-06-01, 5 after 2026-12-01


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
    assert state["arms"][A]["last_updated"] == "2026-06-01T10:00:00Z"
    del state["arms"][A], state["lesson_credit_written"]  # gptme's prune: a's stamp over 90 days old
    gptme_session(state, B, 0.8)
    path.write_text(json.dumps(state, indent=2) + "\n")
    found, err = rows(root)
    # by hand: a the log's (2, 1) n 1; b = (1.5, 1.5) n 1 + gptme's +0.8 / +0.2, n + 1 = (2.3, 1.7) n 2
    assert found == {A: (2.0, 1.0, 1), B: (2.3, 1.7, 2)}, err
    assert set(json.loads(path.read_text())["arms"]) == {A, B}


def test_gptmes_sessions_in_an_exported_file_it_pruned_are_imported(tmp_path: Path) -> None:
    """The same prune on a file `export-gptme` wrote elsewhere (gptme's own bandit's folder): its other arms' updates
    are imported, once, and b, made again by a later session of gptme's, counts from Beta(1, 1). Before, the import
    was refused ("it lacks tools/b.md"), and so was an export onto the file: its sessions could not be logged."""
    events = [session("s1", 0.5, {A: 1.0}), session("s2", None, {B: 1.0})]  # a (1.5, 1.5) n 1; b (1, 1) n 0
    root = make_workspace(tmp_path, LESSONS, events=events)
    path = tmp_path / "gptme" / "bandit-state.json"
    path.parent.mkdir()
    ok("export-gptme", str(path), "-w", str(root))  # a and b, total_sessions 1
    state = json.loads(path.read_text())
    del state["arms"][B]  # gptme's prune: b never selected (gptme saves its own keys only)
    gptme_session(state, A, 1.0)
    path.write_text(json.dumps(state, indent=2) + "\n")
    ok("import-gptme", str(path), "-w", str(root))
    # by hand: a = (1.5, 1.5) n 1 + gptme's +1 / +0, n + 1 = (2.5, 1.5) n 2; b the log's (1, 1) n 0
    assert rows(root)[0] == {A: (2.5, 1.5, 2), B: (1.0, 1.0, 0)}
    ok("import-gptme", str(path), "-w", str(root))  # nothing new: counted once
    assert rows(root)[0] == {A: (2.5, 1.5, 2), B: (1.0, 1.0, 0)} and len(increments(root)) == 1
    state = json.loads(path.read_text())
    state["arms"][B] = {"arm_id": B, "alpha": 1.0, "beta": 1.0, "total_selections": 0, "total_rewards": 0}
    gptme_session(state, B, 0.0)  # b made again at Beta(1, 1): (1, 2) n 1
    path.write_text(json.dumps(state, indent=2) + "\n")
    ok("import-gptme", str(path), "-w", str(root))
    # b = the log's (1, 1) n 0 + gptme's +0 / +1, n + 1 = (1, 2) n 1; total_sessions: s1 and gptme's two
    assert rows(root)[0] == {A: (2.5, 1.5, 2), B: (1.0, 2.0, 1)}
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 3
    ok("export-gptme", str(path), "-w", str(root))  # every update imported: the file is replaced
    assert {key: arm["alpha"] for key, arm in json.loads(path.read_text())["arms"].items()} == {A: 2.5, B: 1.0}


def test_an_exported_files_arm_gone_that_gptmes_prune_does_not_drop_is_still_refused(tmp_path: Path) -> None:
    """In the file exported elsewhere, a (stamped 2026-06-01, over 90 days before the import's clock) is gone as
    gptme's prune drops it: b's update is imported. b (selected, stamped 2026-12-01) gone too is no prune of
    gptme's (a hand, another tool): refused, nothing logged."""
    events = [
        session("s1", 1.0, {A: 1.0}, timestamp="2026-06-01T10:00:00Z"),  # a (2, 1) n 1
        session("s2", 0.5, {B: 1.0}, timestamp="2026-12-01T10:00:00Z"),  # b (1.5, 1.5) n 1
    ]
    root = make_workspace(tmp_path, LESSONS, events=events)
    path = tmp_path / "gptme" / "bandit-state.json"
    path.parent.mkdir()
    ok("export-gptme", str(path), "-w", str(root))
    exported = json.loads(path.read_text())
    state = json.loads(path.read_text())
    del state["arms"][A]
    gptme_session(state, B, 0.8)
    path.write_text(json.dumps(state, indent=2) + "\n")
    code, _, err = run_cli("import-gptme", str(path), "-w", str(root), clock=lambda: NOW)
    assert code == 0, err
    # by hand: a the log's (2, 1) n 1; b = (1.5, 1.5) n 1 + gptme's +0.8 / +0.2, n + 1 = (2.3, 1.7) n 2
    assert rows(root)[0] == {A: (2.0, 1.0, 1), B: (2.3, 1.7, 2)}
    del exported["arms"][B]  # b gone, a kept: not what gptme's prune does
    exported["arms"][A]["alpha"] += 1.0
    exported["arms"][A].update(total_selections=2, total_rewards=2, last_updated=GPTME_TIME)
    exported["total_sessions"] += 1
    path.write_text(json.dumps(exported, indent=2) + "\n")
    log = (root / LOG_REL).read_bytes()
    code, _, err = run_cli("import-gptme", str(path), "-w", str(root), clock=lambda: NOW)
    assert code == 1 and f"it lacks {B}" in err and (root / LOG_REL).read_bytes() == log, err
