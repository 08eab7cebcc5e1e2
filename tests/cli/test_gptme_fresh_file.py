"""gptme's bandit starting the workspace's bandit-state.json afresh where lesson-credit has a log but no file (a
log that came without one, or the file deleted to take it back): every arm of that file is gptme's evidence from
Beta(1, 1), and the next write, `status` or `import-gptme` counts it once. A file of ours holds an arm for every
lesson a session of the log named when it was written, so a file lacking one of them was, if ours, written before
the first session naming it: an arm with no evidence before then was not in it, and is gptme's from Beta(1, 1)
either way. Where that cannot be said (an arm with evidence before then, a file started by us whose arms gptme's
`prune` may have dropped) the file is kept, its warning advising nothing that loses gptme's update. The numbers
of each test are worked out by hand in its comments."""

from __future__ import annotations

import json
import shutil
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, STATE_REL, make_workspace, session

A, B = "tools/a.md", "tools/b.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active")}
GPTME_TIME = "2026-12-06T08:19:27.925928+00:00"  # gptme's bandit's stamps and `created`: isoformat, +00:00
# both lessons in s1 (0.5) and s2 (1.0), salience 1 (w = 1): Beta(1 + 0.5 + 1.0, 1 + 0.5 + 0.0) = (2.5, 1.5) n 2
BOTH = [session("s1", 0.5, {A: 1.0, B: 1.0}), session("s2", 1.0, {A: 1.0, B: 1.0})]


def gptme_file(arms: dict[str, tuple[float, float, int]], sessions: int, created: str = GPTME_TIME) -> dict[str, Any]:
    """What gptme-sessions' `Bandit(state_dir=...).update(...)` saves when it found no file: its own `created`,
    each arm it updated from Beta(1, 1), stamped with its time."""
    return {
        "arms": {
            key: {"arm_id": key, "alpha": a, "beta": b, "total_selections": n, "total_rewards": 1,
                  "last_updated": GPTME_TIME}
            for key, (a, b, n) in arms.items()
        },
        "total_sessions": sessions, "created": created, "last_updated": GPTME_TIME,
    }  # fmt: skip


def ok(*argv: str) -> tuple[str, str]:
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return out, err


def status(root: Path) -> tuple[dict[str, tuple[float, float, int]], str]:
    out, err = ok("status", "--json", "-w", str(root))
    lessons = json.loads(out)["lessons"]
    return {row["path"]: (round(row["alpha"], 9), round(row["beta"], 9), row["n"]) for row in lessons}, err


def increments_events(root: Path) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines() if line.strip()]
    return [event for event in events if event.get("type") == "prior" and event.get("increments")]


def test_a_file_gptme_started_afresh_is_counted_once(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, events=BOTH)
    # gptme's bandit finds no file, starts from an empty state (its own created) and saves one session of
    # tools/b.md at reward 0.8: Beta(1.8, 1.2), n 1, total_sessions 1 (gptme-sessions' update_session)
    (root / STATE_REL).write_text(json.dumps(gptme_file({B: (1.8, 1.2, 1)}, 1), indent=2) + "\n")
    rows, err = status(root)
    assert "logged as an increments event" in err, err
    # by hand: tools/a.md = (2.5, 1.5) n 2 (the log only); tools/b.md = the log's (2.5, 1.5) n 2 plus gptme's
    # +0.8 / +0.2, n +1 = (3.3, 1.7) n 3. Before, b stayed at (2.5, 1.5) n 2 and the file was kept for good
    assert rows == {A: (2.5, 1.5, 2), B: (3.3, 1.7, 3)}
    # the file follows the log again: both arms, and gptme's session on top of the log's two graded ones
    state = json.loads((root / STATE_REL).read_text())
    assert set(state["arms"]) == {A, B} and state["total_sessions"] == 3
    again, err = status(root)  # counted once: nothing more logged
    assert again == rows and not err and len(increments_events(root)) == 1


def test_import_gptme_of_a_file_gptme_started_afresh_logs_its_sessions(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, events=BOTH)
    (root / STATE_REL).write_text(json.dumps(gptme_file({B: (1.8, 1.2, 1)}, 1)) + "\n")
    # before: refused ("importing it would count the log's evidence twice"), exit 1
    ok("import-gptme", str(root / STATE_REL), "-w", str(root))
    rows, _ = status(root)
    assert rows == {A: (2.5, 1.5, 2), B: (3.3, 1.7, 3)}  # as above, by hand
    assert len(increments_events(root)) == 1


def test_a_fresh_file_with_another_form_of_a_lessons_id_counts_it(tmp_path: Path) -> None:
    """The log names tools/café.md with é as one code point (NFC), gptme's file by `e` and a combining accent
    (NFD): one lesson. Its session on it is counted once, over Beta(1, 1)."""
    cafe = "tools/café.md"
    lessons = {A: (["alpha"], "active"), cafe: (["cafe"], "active")}
    root = make_workspace(tmp_path, lessons, events=[session("s1", 0.5, {A: 1.0, cafe: 1.0})])
    nfd = unicodedata.normalize("NFD", cafe)
    (root / STATE_REL).write_text(json.dumps(gptme_file({nfd: (1.8, 1.2, 1)}, 1)) + "\n")
    rows, _ = status(root)
    # by hand: a = (1.5, 1.5) n 1; café = the log's (1.5, 1.5) n 1 plus gptme's +0.8 / +0.2, n + 1 = (2.3, 1.7) n 2
    assert rows == {A: (1.5, 1.5, 1), cafe: (2.3, 1.7, 2)}


def test_a_fresh_file_holding_every_lesson_in_another_form_is_kept(tmp_path: Path) -> None:
    """gptme's file holds both lessons the log names, one in another Unicode form: none is missing, so the file
    could be ours written after s1 with b updated by gptme since (its base the log's, or Beta(1, 1): not known).
    Taken for missing, café would have counted b from Beta(1, 1): the log's evidence of b twice."""
    cafe = "tools/café.md"
    lessons = {B: (["beta"], "active"), cafe: (["cafe"], "active")}
    root = make_workspace(tmp_path, lessons, events=[session("s1", 0.5, {B: 1.0, cafe: 1.0})])
    nfd = unicodedata.normalize("NFD", cafe)
    (root / STATE_REL).write_text(json.dumps(gptme_file({nfd: (1.5, 1.5, 1), B: (2.3, 1.7, 2)}, 2)) + "\n")
    rows, err = status(root)
    assert rows == {B: (1.5, 1.5, 1), cafe: (1.5, 1.5, 1)}  # by hand: the log's s1 only, each (1 + 0.5, 1 + 0.5) n 1
    assert "left as it is" in err and "tools/b.md" in err, err
    assert "export-gptme" not in err, err


def test_an_arm_with_evidence_before_the_first_missing_lesson_is_kept(tmp_path: Path) -> None:
    """s1 names b only, s2 names a and b. A file lacking a, if ours, was written before s2, but maybe after s1:
    its b may be the log's after s1 (1.5, 1.5) n 1, updated by gptme, or gptme's own from Beta(1, 1). Not known:
    the file is kept, and its warning no longer advises `export-gptme` onto it (which loses gptme's update)."""
    events = [session("s1", 0.5, {B: 1.0}), session("s2", 1.0, {A: 1.0, B: 1.0})]
    root = make_workspace(tmp_path, LESSONS, events=events)
    (root / STATE_REL).write_text(json.dumps(gptme_file({B: (2.3, 1.7, 2)}, 2)) + "\n")
    rows, err = status(root)
    # by hand: a = (1 + 1.0, 1 + 0.0) n 1; b = (1 + 0.5 + 1.0, 1 + 0.5 + 0.0) n 2, the log's only
    assert rows == {A: (2.0, 1.0, 1), B: (2.5, 1.5, 2)}
    assert "left as it is" in err and "tools/b.md is not the log's" in err, err
    assert "export-gptme" not in err, err  # before: "`lesson-credit export-gptme ...` replaces it"
    code, _, err = run_cli("import-gptme", str(root / STATE_REL), "-w", str(root))
    assert code == 1 and "count the log's evidence twice" in err, err


def test_an_arm_with_a_prior_before_the_first_missing_lesson_is_kept(tmp_path: Path) -> None:
    """An import logged b's prior Beta(3, 2) n 4 before s1, which names a and b. A file lacking a, if ours, was
    written before s1 but maybe after that prior: its b may be the prior, updated by gptme. Not known: kept."""
    prior = {"type": "prior", "timestamp": "2026-11-01T09:00:00Z", "arms": {B: {"alpha": 3, "beta": 2, "n": 4}}}
    root = make_workspace(tmp_path, LESSONS, events=[prior, session("s1", 0.5, {A: 1.0, B: 1.0})])
    (root / STATE_REL).write_text(json.dumps(gptme_file({B: (3.8, 2.2, 5)}, 1)) + "\n")
    rows, err = status(root)
    # by hand: a = (1.5, 1.5) n 1; b = the prior (3, 2) n 4 + s1's +0.5 / +0.5 = (3.5, 2.5) n 5, the log's only
    assert rows == {A: (1.5, 1.5, 1), B: (3.5, 2.5, 5)}
    assert "left as it is" in err and "tools/b.md" in err, err


def test_our_file_whose_arm_gptme_pruned_is_kept(tmp_path: Path) -> None:
    """A file we wrote (our `created`, which gptme keeps) after s1 and s2, from which gptme's `prune` dropped a (its
    stamp over 90 days old, say) before its session on b. Missing a, it is not a file written before s1: gptme's b
    grew from ours, the log's (2.5, 1.5) n 2. Taken for gptme's own from Beta(1, 1), b would have counted the log's
    two sessions twice: (2.5 + 1.5 + 0.8, 1.5 + 0.5 + 0.2) n 5."""
    root = make_workspace(tmp_path, LESSONS, events=BOTH)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))  # our file: a and b at (2.5, 1.5) n 2
    state = json.loads((root / STATE_REL).read_text())
    assert state["created"].endswith("Z")
    del state["arms"][A], state["lesson_credit_written"]  # gptme's prune, then its save (our stamp gone)
    state["arms"][B].update(alpha=3.3, beta=1.7, total_selections=3, last_updated=GPTME_TIME)  # +0.8 / +0.2
    state["total_sessions"] += 1
    (root / STATE_REL).write_text(json.dumps(state))
    shutil.rmtree(root / STATE_REL.parent / ".cache")  # no copy of what we wrote
    rows, err = status(root)
    assert rows == {A: (2.5, 1.5, 2), B: (2.5, 1.5, 2)}  # the log's only, as worked out in the first test
    assert "left as it is" in err and "lacks tools/a.md" in err, err


@pytest.mark.parametrize("decay", [False, True], ids=["no-decay", "decay"])
def test_a_fresh_file_under_another_prior_counts_gptmes_from_beta_1_1(tmp_path: Path, decay: bool) -> None:
    """s1 names a (missing from gptme's file), s2 names b: b has no evidence before s1, so it is gptme's from
    Beta(1, 1), whatever our [prior] (Beta(2, 3)) and decay (0.9): its update is the file's numbers less (1, 1),
    added undecayed after the fold."""
    config = ("decay = 0.9\n" if decay else "") + "[prior]\nalpha = 2.0\nbeta = 3.0\n"
    events = [session("s1", 1.0, {A: 1.0}), session("s2", 0.5, {B: 1.0})]
    root = make_workspace(tmp_path, LESSONS, events=events, config=config)
    (root / STATE_REL).write_text(json.dumps(gptme_file({B: (1.8, 1.2, 1)}, 1)) + "\n")
    rows, _ = status(root)
    # by hand: a = Beta(2 + 1.0, 3 + 0.0) = (3, 3) n 1, decayed before s2 toward (2, 3): (2 + 0.9 * 1, 3) = (2.9, 3);
    # b = Beta(2, 3) (nothing to decay) + s2's +0.5 / +0.5 = (2.5, 3.5) n 1, + gptme's +0.8 / +0.2 = (3.3, 3.7) n 2
    assert rows == {A: (2.9 if decay else 3.0, 3.0, 1), B: (3.3, 3.7, 2)}


@pytest.mark.parametrize("logged_form", [False, True], ids=["stamped-as-gptme-writes", "stamped-as-logged"])
def test_an_old_file_of_ours_with_gptmes_created_whose_arm_gptme_pruned_is_kept(
    tmp_path: Path, logged_form: bool
) -> None:
    """Versions before the copies kept the `created` of the gptme file they first replaced: a file of ours then has
    gptme's `created`. gptme's `prune` dropped a, its session updated b (restamped); c still bears our stamp (the
    time of its last session: as gptme writes a time, or as the log has it, as versions before wrote it). That arm
    is ours: the file is not one gptme started, and b grew from the log's (2.5, 1.5) n 2. Taken for gptme's fresh
    file, b counted the log's two sessions twice: (4.8, 2.2) n 5."""
    lessons = {**LESSONS, "tools/c.md": (["gamma"], "active")}
    times = ["2026-10-01T10:00:00Z", "2026-10-02T10:00:00Z"]
    events = [
        session(sid, reward, {A: 1.0, B: 1.0, "tools/c.md": 1.0}, timestamp=at)
        for sid, reward, at in (("s1", 0.5, times[0]), ("s2", 1.0, times[1]))
    ]
    root = make_workspace(tmp_path, lessons, events=events)
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))  # ours: each arm (2.5, 1.5) n 2, stamped at s2
    state = json.loads((root / STATE_REL).read_text())
    assert state["arms"]["tools/c.md"]["last_updated"] == "2026-10-02T10:00:00+00:00"  # s2's time, as gptme writes
    if logged_form:
        state["arms"]["tools/c.md"]["last_updated"] = times[1]  # as versions before this one wrote it
    del state["arms"][A], state["lesson_credit_written"]  # gptme's prune, then its save
    state["created"] = GPTME_TIME  # (as an old version kept it)
    state["arms"][B].update(alpha=3.3, beta=1.7, total_selections=3, last_updated=GPTME_TIME)  # +0.8 / +0.2
    state["total_sessions"] += 1
    (root / STATE_REL).write_text(json.dumps(state))
    shutil.rmtree(root / STATE_REL.parent / ".cache")  # no copy of what we wrote
    rows, err = status(root)
    assert rows[B] == (2.5, 1.5, 2) and "left as it is" in err, (rows, err)
    assert not increments_events(root)


def test_a_gptme_file_imported_then_made_the_own_file_is_counted_once(tmp_path: Path) -> None:
    """gptme's file imported (a prior event naming its `created`), then put in as the workspace's own (copied, or
    linked as docs/trust.md's sharing does): its numbers are the log's already. Taken for a file gptme started
    afresh, b's +0.8 / +0.2 was counted a second time: (4.1, 1.9) n 4."""
    root = make_workspace(tmp_path, LESSONS, events=BOTH)
    theirs = tmp_path / "g.json"
    theirs.write_text(json.dumps(gptme_file({B: (1.8, 1.2, 1)}, 1)) + "\n")
    ok("import-gptme", str(theirs), "-w", str(root))
    rows, _ = status(root)
    assert rows[B] == (3.3, 1.7, 3)  # the log's (2.5, 1.5) n 2 and the import's +0.8 / +0.2, one session
    shutil.copyfile(theirs, root / STATE_REL)
    shutil.rmtree(root / STATE_REL.parent / ".cache", ignore_errors=True)
    rows, err = status(root)
    assert rows[B] == (3.3, 1.7, 3), (rows, err)
