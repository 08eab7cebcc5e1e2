"""gptme's bandit prunes an arm of the workspace's own bandit-state.json (its defaults: an arm not updated in 90
days), then one of its sessions draws that lesson again before lesson-credit's next command: `get_or_create_arm`
makes it anew at Beta(1, 1), the session's update moves it (alpha + r, beta + 1 - r, one selection) and stamps it
with gptme's clock (`isoformat()`, `+00:00`, to the microsecond). Its numbers are then gptme's session alone, not
our copy's plus an update. Before, the increments were taken over our copy: the update lost (the arm equal to the
copy), logged with 0 selections (numbers above), or the file kept for good (numbers below), and the outcome
differed with and without `.cache`. The files here are written as gptme's `save` writes them (its five top-level
keys, `json.dumps(..., indent=2)`); the numbers are worked out by hand in the comments."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, STATE_REL, make_workspace, session
from tests.support.two_arms import LESSONS, A, B, ok
from tests.support.two_arms import rows_said as rows

LAST = [dt.datetime.min.replace(tzinfo=dt.UTC)]  # gptme's clock's last look


def gptme_clock(state: dict[str, Any]) -> dt.datetime:
    """gptme's clock at its prune or its session: this machine's, as gptme's is (so later than our write of the file
    it loaded, its `created`, which it keeps, and than its look before). Its stamps are its clock's `isoformat()`,
    `+00:00`, to the microsecond (a fraction of 0 it would not write so)."""
    created = dt.datetime.fromisoformat(state["created"]).astimezone(dt.UTC)
    step = dt.timedelta(microseconds=1)
    moment = max(dt.datetime.now(dt.UTC), created + step, LAST[0] + step)
    LAST[0] = moment + step if moment.microsecond == 0 else moment
    return LAST[0]


def gptme_prune(state: dict[str, Any], max_age_days: int = 90, min_selections: int = 0) -> None:
    """gptme-sessions' `prune_stale`: an arm whose `last_updated` is over `max_age_days` old, or with at most
    `min_selections` selections, is dropped."""
    now = gptme_clock(state)
    for key, arm in list(state["arms"].items()):
        old = arm["last_updated"] and (now - dt.datetime.fromisoformat(arm["last_updated"])).days > max_age_days
        if old or arm["total_selections"] <= min_selections:
            del state["arms"][key]


def gptme_update(state: dict[str, Any], key: str, reward: float) -> None:
    """gptme-sessions' `update_session` of one arm: made at Beta(1, 1) when missing, alpha + r, beta + 1 - r, a
    selection (a reward when r > 0.5), restamped; the session counted."""
    stamp = gptme_clock(state).isoformat()
    arm = state["arms"].setdefault(
        key,
        {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0, "total_rewards": 0, "last_updated": ""},
    )
    arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1.0 - reward, last_updated=stamp)
    arm.update(total_selections=arm["total_selections"] + 1, total_rewards=arm["total_rewards"] + (reward > 0.5))
    state["total_sessions"] += 1
    state["last_updated"] = stamp


def gptme_load(root: Path) -> dict[str, Any]:
    """The file as gptme's bandit holds it once loaded: its keys only (ours dropped on its save)."""
    data = json.loads((root / STATE_REL).read_text())
    keys = ("arm_id", "alpha", "beta", "total_selections", "total_rewards", "last_updated")
    arms = {key: {name: arm[name] for name in keys} for key, arm in data["arms"].items()}
    return {"arms": arms, "total_sessions": data["total_sessions"], "created": data["created"], "last_updated": ""}


def gptme_save(root: Path, state: dict[str, Any]) -> None:
    (root / STATE_REL).write_text(json.dumps(state, indent=2) + "\n")


def increments(root: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]
    return [event for event in events if event.get("increments")]


def workspace(tmp_path: Path, reward: float, salience: float, config: str | None = None) -> Path:
    """s1 (2026-08-01) names a, s2 (2026-12-01, graded 0) names b; our file written (and its copy kept)."""
    events = [
        session("s1", reward, {A: salience}, timestamp="2026-08-01T10:00:00Z"),
        session("s2", 0.0, {B: 1.0}, timestamp="2026-12-01T10:00:00Z"),
    ]
    root = make_workspace(tmp_path, LESSONS, events=events, config=config)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    return root


def caches(root: Path, kept: bool) -> None:
    if not kept:
        shutil.rmtree(root / STATE_REL.parent / ".cache")


def near(found: dict[str, tuple[float, float, int]]) -> dict[str, tuple[float, float, int]]:
    return {key: (round(a, 9), round(b, 9), n) for key, (a, b, n) in found.items()}


@pytest.mark.parametrize("cache", [True, False], ids=["copy", "no-copy"])
def test_an_arm_pruned_and_made_again_equal_to_our_copy_is_logged(tmp_path: Path, cache: bool) -> None:
    # seed, s1 1.0 on a (salience 1): a = (2, 1) n 1, stamped 2026-08-01 (128 days before gptme's prune);
    # s2 0.0 on b: b = (1, 2) n 1. gptme prunes a, then its session on a at 1.0 makes it (1, 1) + (1, 0) = (2, 1)
    # n 1, our copy's numbers exactly: before, "1 session it counted, moving no arm" and the update lost.
    root = workspace(tmp_path, 1.0, 1.0)
    state = gptme_load(root)
    gptme_prune(state)
    assert set(state["arms"]) == {B}
    gptme_update(state, A, 1.0)
    gptme_save(root, state)
    caches(root, cache)
    found, err = rows(root)
    # by hand: a = ours (2, 1) n 1 + gptme's session (+1, +0, one selection) = (3, 1) n 2; b (1, 2) n 1
    assert found == {A: (3.0, 1.0, 2), B: (1.0, 2.0, 1)}, err
    [event] = increments(root)
    assert event["arms"] == {A: {"alpha": 1.0, "beta": 0.0, "n": 1, "rewards": 1}} and event["sessions"] == 1
    written = json.loads((root / STATE_REL).read_text())
    # the file follows the log again: our evidence (gptme's prune dropped it from the file) and gptme's session
    assert written["arms"][A]["alpha"] == 3.0 and written["arms"][A]["total_selections"] == 2
    assert written["total_sessions"] == 3  # s1, s2 and gptme's session
    again, err = rows(root)
    assert again == found and not err and len(increments(root)) == 1  # counted once


@pytest.mark.parametrize("cache", [True, False], ids=["copy", "no-copy"])
def test_an_arm_pruned_and_made_again_above_our_copy_is_logged_with_its_selection(tmp_path: Path, cache: bool) -> None:
    # evidence, s1 0.6 on a at salience 0 (w the floor, 0.3): a = (1 + 0.6 * 0.3, 1 + 0.4 * 0.3) = (1.18, 1.12) n 1.
    # gptme prunes a, its session at 0.6 makes it (1.6, 1.4) n 1: over our copy by 0.42 / 0.28 with no selection,
    # which was logged as such (a Beta(1.6, 1.4) n 1)
    root = workspace(tmp_path, 0.6, 0.0, config='strategy = "evidence"\n')
    assert rows(root)[0][A] == (1.18, 1.12, 1)
    state = gptme_load(root)
    gptme_prune(state)
    gptme_update(state, A, 0.6)
    gptme_save(root, state)
    caches(root, cache)
    found, err = rows(root)
    # by hand: a = (1.18, 1.12) n 1 + gptme's (+0.6, +0.4, one selection) = (1.78, 1.52) n 2
    assert found[A] == (1.78, 1.52, 2), err
    [event] = increments(root)
    assert near({A: (event["arms"][A]["alpha"], event["arms"][A]["beta"], event["arms"][A]["n"])}) == {A: (0.6, 0.4, 1)}
    assert rows(root)[0] == found and len(increments(root)) == 1


@pytest.mark.parametrize("cache", [True, False], ids=["copy", "no-copy"])
def test_an_arm_pruned_and_made_again_below_our_copy_is_logged_and_the_file_followed_again(
    tmp_path: Path, cache: bool
) -> None:
    # seed; s1 1.0 on a, then s3 and s4 on a (all 2026-08): a = (1 + 1 + 1 + 0, 1 + 0 + 0 + 1) = (3, 2) n 3.
    # gptme prunes a (its stamp, s4's, over 90 days old), then two sessions of its own on a, 0.8 then 0.6:
    # (1, 1) + (0.8, 0.2) + (0.6, 0.4) = (2.4, 1.6) n 2, below our copy: before, the file was kept for good
    # ("went from 3 to 2.4") and every later gptme session there went unlogged
    events = [
        session("s1", 1.0, {A: 1.0}, timestamp="2026-08-01T10:00:00Z"),
        session("s3", 1.0, {A: 1.0}, timestamp="2026-08-02T10:00:00Z"),
        session("s4", 0.0, {A: 1.0}, timestamp="2026-08-03T10:00:00Z"),
        session("s2", 0.0, {B: 1.0}, timestamp="2026-12-01T10:00:00Z"),
    ]
    root = make_workspace(tmp_path, LESSONS, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    state = gptme_load(root)
    gptme_prune(state)
    gptme_update(state, A, 0.8)
    gptme_save(root, state)
    state = gptme_load(root)  # (its next session loads the file it saved)
    gptme_update(state, A, 0.6)
    gptme_save(root, state)
    caches(root, cache)
    found, err = rows(root)
    # by hand: a = (3, 2) n 3 + (1.4, 0.6) n 2 = (4.4, 2.6) n 5; b (1, 2) n 1
    assert found == {A: (4.4, 2.6, 5), B: (1.0, 2.0, 1)}, err
    assert "left as it is" not in err, err
    if not cache:  # (gptme's update of an arm of ours with no copy left is kept, not logged: docs/format.md §7)
        return
    state = gptme_load(root)  # a later session of gptme's is logged too (before, the file was kept for good)
    gptme_update(state, A, 1.0)
    gptme_save(root, state)
    assert rows(root)[0] == {A: (5.4, 2.6, 6), B: (1.0, 2.0, 1)}
    assert len(increments(root)) == 2


@pytest.mark.parametrize("cache", [True, False], ids=["copy", "no-copy"])
def test_an_increment_moving_alpha_with_no_selection_is_refused_and_the_file_kept(tmp_path: Path, cache: bool) -> None:
    # a = (2, 1) n 1 in our file; the file now says alpha 2.5 with no selection and our stamp: no update of gptme's
    # (each adds a selection and restamps), no arm it made (alpha + beta = 2 + n fails: 3.5 for 3). Before, logged as
    # an increment of alpha 0.5, n 0 (with the copy)
    root = workspace(tmp_path, 1.0, 1.0)
    state = gptme_load(root)
    state["arms"][A]["alpha"] = 2.5
    gptme_save(root, state)
    saved, log = (root / STATE_REL).read_bytes(), (root / LOG_REL).read_bytes()
    caches(root, cache)
    found, err = rows(root)
    assert found[A] == (2.0, 1.0, 1), err
    assert (root / LOG_REL).read_bytes() == log and (root / STATE_REL).read_bytes() == saved
    lines = [line for line in err.splitlines() if "bandit-state.json" in line]
    assert len(lines) == 1 and "left as it is" in lines[0], err


def test_gptmes_own_arm_logged_before_is_not_made_again_by_a_later_save(tmp_path: Path) -> None:
    # c.md no session of ours names: gptme's session makes it (1, 1) + (1, 0) = (2, 1) n 1, logged; our rewrite
    # keeps its stamp (gptme's: no session of ours credits it). gptme's next session moves b only: c, unchanged
    # under gptme's stamp, is no arm made again (it was counted once already)
    lessons = {**LESSONS, "tools/c.md": (["gamma"], "active")}
    events = [
        session("s1", 1.0, {A: 1.0}, timestamp="2026-12-01T10:00:00Z"),
        session("s2", 0.0, {B: 1.0}, timestamp="2026-12-01T11:00:00Z"),
    ]
    root = make_workspace(tmp_path, lessons, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    state = gptme_load(root)
    gptme_update(state, "tools/c.md", 1.0)
    gptme_save(root, state)
    assert rows(root)[0]["tools/c.md"] == (2.0, 1.0, 1)
    state = gptme_load(root)
    gptme_update(state, B, 0.0)
    gptme_save(root, state)
    found, err = rows(root)
    # by hand: c (2, 1) n 1 still; b (1, 2) n 1 + (0, 1) n 1 = (1, 3) n 2
    assert found["tools/c.md"] == (2.0, 1.0, 1) and found[B] == (1.0, 3.0, 2), err
    assert len(increments(root)) == 2


def test_an_arm_gptme_keyed_under_another_mount_keeps_gptmes_key(tmp_path: Path) -> None:
    # our file keys a as `tools/a.md`; gptme, its lessons mounted at /workspace/lessons, does not find it by
    # `/workspace/lessons/tools/a.md`, makes that arm and updates it (1, 1) + (1, 0). The lesson's arm is written
    # under gptme's key alone (docs/format.md §7 "Key style"): before, under our own absolute path, neither key,
    # and gptme's next session started it at Beta(1, 1) again
    root = workspace(tmp_path, 1.0, 1.0)
    other = "/workspace/lessons/tools/a.md"
    state = gptme_load(root)
    gptme_update(state, other, 1.0)
    gptme_save(root, state)
    found, err = rows(root)
    assert found[A] == (3.0, 1.0, 2), err  # (2, 1) n 1 + (1, 0) n 1
    arms = json.loads((root / STATE_REL).read_text())["arms"]
    assert set(arms) == {other, B}, sorted(arms)
    assert (arms[other]["alpha"], arms[other]["beta"], arms[other]["total_selections"]) == (3.0, 1.0, 2)
    state = gptme_load(root)  # gptme's next session finds its key
    gptme_update(state, other, 0.0)
    gptme_save(root, state)
    assert rows(root)[0][A] == (3.0, 2.0, 3)


def test_the_refusal_exit_is_unchanged_for_status(tmp_path: Path) -> None:
    # (the command itself succeeds: the file is derived)
    root = workspace(tmp_path, 1.0, 1.0)
    state = gptme_load(root)
    state["arms"][A]["beta"] = 1.5
    gptme_save(root, state)
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0, err


def test_an_arm_pruned_and_made_again_by_gptme_on_a_machine_whose_clock_is_behind_is_logged(tmp_path: Path) -> None:
    # seed, s1 1.0 on a (salience 1): a = (2, 1) n 1; s2 0.0 on b: b = (1, 2) n 1; our copy kept. gptme's bandit runs
    # on another machine whose clock is a year behind ours: `prune --min-selections 1` drops both arms (one selection
    # each), its session on a at 0.0 makes it (1, 1) + (0, 1) = (1, 2) n 1, stamped 2025-12. That stamp is not our
    # copy's (gptme restamps only what it updates), but it is earlier than the file's `created`: it was not told as
    # made again, a's alpha "went from 2 to 1", and the file was kept for good, every later gptme session there out
    # of the log. By hand: a = ours (2, 1) n 1 + gptme's (+0, +1, one selection) = (2, 2) n 2; b (1, 2) n 1 (gone
    # from the file by the prune, the log's); 3 sessions.
    root = workspace(tmp_path, 1.0, 1.0)
    state = gptme_load(root)
    for key in list(state["arms"]):
        del state["arms"][key]  # (gptme's prune --min-selections 1)
    gptme_update(state, A, 0.0)
    behind = (dt.datetime.now(dt.UTC) - dt.timedelta(days=365)).isoformat()
    state["arms"][A]["last_updated"] = state["last_updated"] = behind
    gptme_save(root, state)
    found, err = rows(root)
    assert "left as it is" not in err and found == {A: (2.0, 2.0, 2), B: (1.0, 2.0, 1)}, err
    [event] = increments(root)
    assert event["arms"] == {A: {"alpha": 0.0, "beta": 1.0, "n": 1, "rewards": 0}} and event["sessions"] == 1
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 3


def test_with_no_copy_an_arm_made_again_at_our_numbers_by_a_clock_behind_ours_is_said(tmp_path: Path) -> None:
    # As above, with no copy left (`.cache` deleted), and gptme's session on a at 1.0: a made again is (1, 1) + (1, 0)
    # = (2, 1) n 1, our numbers exactly, stamped a year before our write. Nothing tells it from our a with a stamp of
    # gptme's our write kept (taken so, by time: a (2, 1) n 1, the session's count logged, b (1, 2) n 1, 3 sessions),
    # but such a stamp would be one an increments event of the log saw, and none did: that it may be a session of
    # gptme's not logged is said (it was not). A stamp the log saw (gptme's update of a, logged) says nothing.
    root = workspace(tmp_path, 1.0, 1.0)
    state = gptme_load(root)
    for key in list(state["arms"]):
        del state["arms"][key]  # (gptme's prune --min-selections 1)
    gptme_update(state, A, 1.0)
    behind = (dt.datetime.now(dt.UTC) - dt.timedelta(days=365)).isoformat()
    state["arms"][A]["last_updated"] = state["last_updated"] = behind
    gptme_save(root, state)
    caches(root, False)
    found, err = rows(root)
    assert found == {A: (2.0, 1.0, 1), B: (1.0, 2.0, 1)}, err
    assert f"{A} is at numbers lesson-credit wrote, stamped {behind}" in err and "may have pruned it" in err, err
    [event] = increments(root)
    assert event.get("arms") == {} and event["sessions"] == 1
    assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 3
