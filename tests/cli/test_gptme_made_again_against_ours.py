"""Whether gptme's bandit made an arm of the workspace's own bandit-state.json again after its `prune` is told against
what lesson-credit wrote (docs/format.md §7 *Made again*): the copy of the file when one is left; with none, every
reading of the log as of that write (the sessions up to the latest a stamp of ours in the file names, or up to a
later session of that lesson, each under the grades then). Before, with no copy, the arm was compared with the log's
numbers now: after a regrade or a record of the lesson, gptme's ordinary update of an arm of ours it never pruned was
read as made again and the lesson's earlier evidence was logged a second time. And an arm stamped in gptme's form
before the file's `created` (a file copied from another workspace: its write stamped it) is no update gptme made since
our write. gptme's `prune` drops any arm its options ask for (`--max-age-days`, `--min-selections`): no age is
required. Numbers are worked out by hand in the comments; gptme's prune, sessions and saves are the helpers of
tests/cli/test_gptme_prune_recreate.py (its clock later than our write, as gptme's is)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from tests.cli.test_gptme_prune_recreate import gptme_load, gptme_prune, gptme_save, gptme_update, increments
from tests.support.engine_helpers import LOG_REL, STATE_REL, event_line, make_workspace, session
from tests.support.two_arms import LESSONS, A, B, ok
from tests.support.two_arms import rows_said as rows

C = "tools/c.md"
L3 = {**LESSONS, C: (["gamma"], "active")}


def ours_then_gptme(tmp_path: Path) -> Path:
    """s1 (a, 1.0) and s2 (b, 0.0), our file written: a (2, 1) n 1, b (1, 2) n 1 (seed, salience 1, Beta(1, 1)).
    Then gptme's sessions on that file: a at 1.0 (its ordinary update: a never pruned, (3, 1) n 2, restamped), c at
    1.0 twice (its own arm, (3, 1) n 2). Its total_sessions: 2 + 3 = 5."""
    events = [
        session("s1", 1.0, {A: 1.0}, timestamp="2026-12-01T10:00:00.250000Z"),
        session("s2", 0.0, {B: 1.0}, timestamp="2026-12-01T11:00:00.500000Z"),
    ]
    root = make_workspace(tmp_path, L3, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    state = gptme_load(root)
    gptme_update(state, A, 1.0)
    gptme_update(state, C, 1.0)
    gptme_update(state, C, 1.0)
    gptme_save(root, state)
    return root


# ours now after the command, with the copy: the command's session or grade, gptme's increments (a +1, +0, one
# selection over our (2, 1) n 1; c from Beta(1, 1): +2, +0, two selections) each once
# - grade s1 0: a = (1, 2) n 1 (s1 at 0) + (1, 0) n 1 = (2, 2) n 2; c = (3, 1) n 2
# - record s3 on a at 0: a = (2, 1) n 1 + (0, 1) n 1 (s3) + (1, 0) n 1 = (3, 2) n 3; c = (3, 1) n 2
# with no copy, gptme's update of an arm of ours cannot be told from the log: the file is kept, nothing of gptme's
# logged, the log's own numbers shown: a (1, 2) n 1 after the grade, (2, 2) n 2 after the record; c at the prior.
# Before, a was read as made again (not the log's (1, 2) n 1 plus whole updates, and (3, 1) n 2 is an arm gptme makes):
# logged as (2, 0) n 2 over Beta(1, 1), s1's evidence a second time: (3, 2) n 3 and (4, 2) n 4
CASES = {
    "grade": (["grade", "s1", "0"], {A: (2.0, 2.0, 2), C: (3.0, 1.0, 2)}, {A: (1.0, 2.0, 1), C: (1.0, 1.0, 0)}),
    "record": (
        ["record", "--session-id", "s3", "--journal", "JOURNAL", "--lessons", A, "--reward", "0"],
        {A: (3.0, 2.0, 3), C: (3.0, 1.0, 2)},
        {A: (2.0, 2.0, 2), C: (1.0, 1.0, 0)},
    ),
}


@pytest.mark.parametrize("cache", [True, False], ids=["copy", "no-copy"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_gptmes_update_of_an_arm_it_never_pruned_is_not_made_again_after_a_regrade_or_a_record(
    tmp_path: Path, case: str, cache: bool
) -> None:
    root = ours_then_gptme(tmp_path)
    saved = (root / STATE_REL).read_bytes()
    if not cache:
        shutil.rmtree(root / STATE_REL.parent / ".cache")
    (root / "j.md").write_text("alpha\n")
    argv, with_copy, without = CASES[case]
    ok(*[str(root / "j.md") if arg == "JOURNAL" else arg for arg in argv], "-w", str(root))
    found, err = rows(root)
    assert found[B] == (1.0, 2.0, 1), err
    if cache:
        assert {A: found[A], C: found[C]} == with_copy, err
        [event] = increments(root)
        assert event["arms"][A] == {"alpha": 1.0, "beta": 0.0, "n": 1, "rewards": 1}
        assert event["sessions"] == 3
        assert json.loads((root / STATE_REL).read_text())["total_sessions"] == 5 + (case == "record")
        return
    assert {A: found[A], C: found[C]} == without, err
    assert increments(root) == []  # nothing of gptme's counted, s1's evidence once
    assert (root / STATE_REL).read_bytes() == saved  # kept as gptme saved it: its sessions there not lost
    lines = [line for line in err.splitlines() if "bandit-state.json" in line]
    assert len(lines) == 1 and "left as it is" in lines[0] and f"{A} is not the log's" in lines[0], err


def test_a_file_copied_from_another_workspace_is_not_made_again(tmp_path: Path) -> None:
    # m1: s1 (a, 1.0), s2 (b, 0.0); m2: s2, s3 (a, 0.0) of 2026-12-02. m2's file (a (1, 2) n 1 stamped with s3's time,
    # 2026-12-02T10:00:00.750000+00:00: gptme's form, a day after s1, before m2's write) synced over m1's; gptme's
    # session on m1 makes c (2, 1) n 1. m1 has no copy of m2's file. Its arm a is no arm gptme made since a write:
    # its stamp is older than the file's `created`. The file is kept (m2's s3 is no evidence of m1's log), nothing
    # logged: m1 shows its own a (2, 1) n 1. Before, a was read as made again and logged as (0, 1) n 1: m2's s3
    # counted in m1 as gptme's, (2, 2) n 2
    s2 = session("s2", 0.0, {B: 1.0}, timestamp="2026-12-01T11:00:00.500000Z")
    s1 = session("s1", 1.0, {A: 1.0}, timestamp="2026-12-01T10:00:00.250000Z")
    s3 = session("s3", 0.0, {A: 1.0}, timestamp="2026-12-02T10:00:00.750000Z")
    m1 = make_workspace(tmp_path, L3, events=[s1, s2], name="m1")
    m2 = make_workspace(tmp_path, L3, events=[s2, s3], name="m2")
    ok("export-gptme", str(m1 / STATE_REL), "-w", str(m1))
    ok("export-gptme", str(m2 / STATE_REL), "-w", str(m2))
    shutil.copy(m2 / STATE_REL, m1 / STATE_REL)
    state = gptme_load(m1)
    gptme_update(state, C, 1.0)
    gptme_save(m1, state)
    saved, log = (m1 / STATE_REL).read_bytes(), (m1 / LOG_REL).read_bytes()
    found, err = rows(m1)
    assert found == {A: (2.0, 1.0, 1), B: (1.0, 2.0, 1), C: (1.0, 1.0, 0)}, err
    assert (m1 / STATE_REL).read_bytes() == saved and (m1 / LOG_REL).read_bytes() == log
    assert "left as it is" in err and f"{A} is not the log's" in err, err


@pytest.mark.parametrize("cache", [True, False], ids=["copy", "no-copy"])
@pytest.mark.parametrize("prune", ["45-days", "min-selections"])
def test_an_arm_pruned_by_any_of_gptmes_settings_and_made_again_is_counted_once(
    tmp_path: Path, prune: str, cache: bool
) -> None:
    # s1 (a, 1.0) sixty days before our write, s2 (b, 0.0) a day before: a (2, 1) n 1, b (1, 2) n 1. gptme prunes a
    # with `--max-age-days 45` (a's stamp, s1's, is 60 days old: over 45, under the default 90), or with
    # `--min-selections 1` (a and b, one selection each: both dropped whatever their age), then its session on a at
    # 0.0 makes it (1, 1) + (0, 1) = (1, 2) n 1: not (2, 1) n 1 plus whole updates (alpha went down). By hand:
    # a = (2, 1) n 1 + (0, 1) n 1 = (2, 2) n 2; b (1, 2) n 1 (kept in the log: gptme's prune of it loses nothing);
    # the file written again holds both; gptme's session counted once (total_sessions 3)
    now = dt.datetime.now(dt.UTC)
    events = [
        session("s1", 1.0, {A: 1.0}, timestamp=(now - dt.timedelta(days=60)).strftime("%Y-%m-%dT%H:%M:%SZ")),
        session("s2", 0.0, {B: 1.0}, timestamp=(now - dt.timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")),
    ]
    root = make_workspace(tmp_path, LESSONS, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    state = gptme_load(root)
    if prune == "45-days":
        gptme_prune(state, max_age_days=45)
        assert set(state["arms"]) == {B}
    else:
        gptme_prune(state, min_selections=1)
        assert state["arms"] == {}
    gptme_update(state, A, 0.0)
    gptme_save(root, state)
    if not cache:
        shutil.rmtree(root / STATE_REL.parent / ".cache")
    found, err = rows(root)
    assert found == {A: (2.0, 2.0, 2), B: (1.0, 2.0, 1)}, err
    [event] = increments(root)
    assert event["arms"] == {A: {"alpha": 0.0, "beta": 1.0, "n": 1, "rewards": 0}} and event["sessions"] == 1
    written = json.loads((root / STATE_REL).read_text())
    assert written["total_sessions"] == 3
    assert (written["arms"][A]["alpha"], written["arms"][A]["beta"], written["arms"][A]["total_selections"]) == (
        2,
        2,
        2,
    )
    assert rows(root)[0] == found and len(increments(root)) == 1  # counted once


def test_a_prior_logged_after_our_write_leaves_an_arm_none_made_again(tmp_path: Path) -> None:
    # our file: a (2, 1) n 1 (s1), b (1, 2) n 1 (s2); gptme's ordinary update of a at 1.0: (3, 1) n 2. Then, with no
    # copy left, a prior for a lands in the log (an import, or a log merged): a = (1, 3) n 2 + s1 = (2, 3) n 3. The
    # readings of what we wrote hold the prior in force now, not the one a was written with: what we wrote is not
    # known, the arm is none made again and the file is kept (the log shows its own (2, 3) n 3, nothing of gptme's).
    # Before, (3, 1) n 2 (no reading of (2, 3) n 3 plus updates) was taken as made again, logged as (2, 0) n 2 over
    # Beta(1, 1): s1 a second time, (4, 3) n 5
    root = ours_then_gptme(tmp_path)
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    prior = {"type": "prior", "timestamp": "2026-12-02T10:00:00Z", "arms": {A: {"alpha": 1, "beta": 3, "n": 2}}}
    with (root / LOG_REL).open("ab") as log:
        log.write(event_line(prior))
    saved = (root / STATE_REL).read_bytes()
    found, err = rows(root)
    assert found[A] == (2.0, 3.0, 3), err
    assert increments(root) == [] and (root / STATE_REL).read_bytes() == saved
    assert "left as it is" in err and f"{A} is not the log's" in err, err


def test_an_arm_bearing_gptmes_stamp_from_before_our_write_is_ours_as_written(tmp_path: Path) -> None:
    # s1 (a) and s2 (b) pending: our file a, b at (1, 1) n 0. gptme's session on b at 0.0: (1, 2) n 1, logged by our
    # `grade s1 0` with no copy (an arm at Beta(1, 1) with no selection: from Beta(1, 1) either way): b = (1, 2) n 1
    # (its increments), a = (1, 2) n 1 (s1); our write keeps gptme's stamp on b (no session of ours credits it).
    # gptme then prunes a (its stamp, s1's, of 2026-08) and makes it again at 0.0: (1, 2) n 1. `grade s2 0` with no
    # copy: b, stamped by gptme before that write and at a reading of it ((1, 2) n 1), is as we wrote it; a is made
    # again. By hand: a = (1, 2) n 1 + (0, 1) n 1 = (1, 3) n 2; b = (0, 1) n 1 + s2's (0, 1) n 1 = (1, 3) n 2.
    # Before, b was read as made again too (not (1, 3) n 2 plus updates): gptme's update logged twice, (1, 4) n 3
    events = [
        session("s1", None, {A: 1.0}, timestamp="2026-08-01T10:00:00Z"),
        session("s2", None, {B: 1.0}, timestamp="2026-08-02T10:00:00Z"),
    ]
    root = make_workspace(tmp_path, LESSONS, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))
    state = gptme_load(root)
    gptme_update(state, B, 0.0)
    gptme_save(root, state)
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    ok("grade", "s1", "0", "-w", str(root))
    assert rows(root)[0] == {A: (1.0, 2.0, 1), B: (1.0, 2.0, 1)}
    state = gptme_load(root)
    gptme_prune(state)
    assert set(state["arms"]) == {B}
    gptme_update(state, A, 0.0)
    gptme_save(root, state)
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    ok("grade", "s2", "0", "-w", str(root))
    found, err = rows(root)
    assert found == {A: (1.0, 3.0, 2), B: (1.0, 3.0, 2)}, err
    assert len(increments(root)) == 2 and json.loads((root / STATE_REL).read_text())["total_sessions"] == 4
