"""An earlier copy of the workspace's bandit-state.json (a backup, or the file copied to another gptme bandit's
folder) with no copy of ours left to tell what we wrote (`.cache` deleted, 32 of our writes since): known by its
arms' `last_updated` (the time of this log's session that last credited the arm; gptme's bandit restamps an arm
it updates). What gptme's bandit added to it that the log has not is never replaced without a word: an export
onto it is refused until `import-gptme` logs it, and that import logs it once, the log's own evidence in the
file (the arms as we wrote them) not at all. The numbers of each test are worked out by hand in its comments."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_ok as ok
from tests.support.engine_helpers import (
    BASIC_JOURNAL,
    BASIC_LESSONS,
    CONFIG_REL,
    LOG_REL,
    STATE_REL,
    make_workspace,
    session,
)
from tests.support.gptme_timed import GPTME_TIME, gptme_saved, refused, rows, timed_workspace

GIT, QUOTE, PLAIN, OTHER = "tools/git.md", "tools/quote.md", "workflow/plain.md", "tools/other.md"


@pytest.fixture
def timed(tmp_path: Path) -> Path:
    """s1 and s2 with their times, git Beta(1.92, 2.08) n 2 (by hand: tests/support/gptme_timed.py)."""
    return timed_workspace(tmp_path)


def earlier_copy(root: Path, where: Path, added: dict[str, tuple[float, float, int, int]], sessions: int) -> Path:
    """The workspace's file copied to `where`, then gptme's bandit's `sessions` there: each arm of `added` up by
    its (alpha, beta, total_selections, total_rewards), from Beta(1, 1) for an arm it lacks, restamped with
    gptme's time; saved with gptme's own keys only (our stamp gone). Then `.cache` is deleted: no copy of ours."""
    where.write_text(gptme_saved(json.loads((root / STATE_REL).read_text()), added, sessions))
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    return where


def near(numbers: Mapping[str, tuple[float, ...]]) -> dict[str, Any]:
    """Each lesson's numbers, to compare as pytest.approx does (it takes no dict of tuples)."""
    return {key: pytest.approx(value) for key, value in numbers.items()}


def arms_of(path: Path) -> dict[str, tuple[float, float, int, int]]:
    arms: dict[str, Any] = json.loads(path.read_text())["arms"]
    return {k: (a["alpha"], a["beta"], a["total_selections"], a["total_rewards"]) for k, a in arms.items()}


@pytest.mark.parametrize("lesson", [PLAIN, OTHER], ids=["library-lesson", "not-in-the-library"])
def test_an_export_over_an_earlier_copy_with_gptmes_new_arm_is_refused_then_imported_once(
    timed: Path, tmp_path: Path, lesson: str
) -> None:
    """Our git arm (and quote's) as an earlier write left them, and an arm gptme's bandit added since (five
    sessions, four rewarded): the export took the file for an earlier copy of ours and replaced it whole, and the
    new arm was gone; the import refused it as holding the log's evidence (its advice, to delete the file's
    `created`, logged git and quote a second time). Now the export is refused (one line, nothing written) until
    the import logs the new arm: once, git and quote not at all; then the export writes the log's numbers."""
    # gptme's new arm: Beta(1, 1) + four rewarded of five = Beta(5, 2), n 5, 4 rewarded; sessions 2 + 5 = 7
    copy = earlier_copy(timed, tmp_path / "backup.json", {lesson: (4.0, 1.0, 5, 4)}, sessions=5)
    before, log_before = copy.read_bytes(), (timed / LOG_REL).read_bytes()
    err = refused("export-gptme", "--workspace", str(timed), str(copy))
    assert "import-gptme" in err, err
    assert copy.read_bytes() == before and (timed / LOG_REL).read_bytes() == log_before

    out = ok("import-gptme", "--workspace", str(timed), str(copy))
    assert "increments" in out, out
    # git and quote as the fixture left them (not counted again); the new arm: Beta(1, 1) + (4, 1), n 5
    expected = {GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1), lesson: (5.0, 2.0, 5)}
    assert rows(timed) == near(expected)
    log_after = (timed / LOG_REL).read_bytes()
    out = ok("import-gptme", "--workspace", str(timed), str(copy))  # again: nothing new, nothing logged
    assert "nothing" in out and (timed / LOG_REL).read_bytes() == log_after
    assert rows(timed) == near(expected)

    state = json.loads(copy.read_text())  # gptme's bandit there again: one more session, the arm rewarded
    state["arms"][lesson].update(alpha=6.0, total_selections=6, total_rewards=5)
    state["total_sessions"] = 8
    copy.write_text(json.dumps(state))
    refused("export-gptme", "--workspace", str(timed), str(copy))
    ok("import-gptme", "--workspace", str(timed), str(copy))  # only that session: over what the last import saw
    assert rows(timed) == near({**expected, lesson: (6.0, 2.0, 6)})

    ok("export-gptme", "--workspace", str(timed), str(copy))  # logged: written, from the log
    assert arms_of(copy) == near(
        {GIT: (1.92, 2.08, 2, 1), QUOTE: (1.52, 1.48, 1, 1), lesson: (6.0, 2.0, 6, 5)}
    )  # (total_rewards: git s1's 0.8 > 0.5, s2's 0.12 not; quote s1's 0.52; gptme's 5)
    assert json.loads(copy.read_text())["total_sessions"] == 8  # s1, s2 and gptme's 6


def test_an_earlier_copy_whose_arm_we_wrote_gptme_updated_is_neither_replaced_nor_counted_twice(
    timed: Path, tmp_path: Path
) -> None:
    """gptme's bandit updated git there (+1/+0, one selection, restamped): what it added cannot be told from
    the log's Beta(1.92, 2.08) n 2 in it without a copy of ours. The export replaced it (gptme's session gone);
    now it is refused (one line: delete the file to replace it), and so is the import (it would count twice)."""
    copy = earlier_copy(timed, tmp_path / "backup.json", {GIT: (1.0, 0.0, 1, 1)}, sessions=1)
    before, log_before = copy.read_bytes(), (timed / LOG_REL).read_bytes()
    err = refused("export-gptme", "--workspace", str(timed), str(copy))
    assert GIT in err and "delete" in err, err
    err = refused("import-gptme", "--workspace", str(timed), str(copy))
    assert "twice" in err and GIT in err, err
    assert copy.read_bytes() == before and (timed / LOG_REL).read_bytes() == log_before
    copy.unlink()  # what the refusal says to do: the file goes, the export writes the log's numbers
    ok("export-gptme", "--workspace", str(timed), str(copy))
    assert arms_of(copy)[GIT] == pytest.approx((1.92, 2.08, 2, 1))


def test_an_earlier_copy_whose_update_of_our_arm_the_log_matched_since_is_not_replaced(
    timed: Path, tmp_path: Path
) -> None:
    """As above, and then s3 is recorded on git at 1.0 with salience 1 (w 1: +1/+0): the log's git is Beta(2.92,
    2.08) n 3, the copy's too (gptme's +1/+0 over our Beta(1.92, 2.08) n 2, restamped with gptme's time), and the
    log counts 3 sessions as the copy does. The arm was taken for ours at the log's numbers now: the import logged
    nothing of it ("updates since, to 0 arms") and the export replaced the copy, gptme's session gone (right:
    git Beta(3.92, 2.08) n 4 over 4 sessions). Its stamp names no session of the log (ours would be s3's), so
    both are refused as above, nothing written."""
    copy = earlier_copy(timed, tmp_path / "backup.json", {GIT: (1.0, 0.0, 1, 1)}, sessions=1)
    argv = ("record", "--workspace", str(timed), "--session-id", "s3", "--journal", str(timed / "j.txt"))
    ok(*argv, "--lessons", GIT, "--reward", "1.0")
    assert rows(timed) == near({GIT: (2.92, 2.08, 3), QUOTE: (1.52, 1.48, 1)})
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    before, log_before = copy.read_bytes(), (timed / LOG_REL).read_bytes()
    err = refused("import-gptme", "--workspace", str(timed), str(copy))
    assert "twice" in err and GIT in err, err
    err = refused("export-gptme", "--workspace", str(timed), str(copy))
    assert GIT in err and "delete" in err, err
    assert copy.read_bytes() == before and (timed / LOG_REL).read_bytes() == log_before


def test_an_earlier_copy_with_an_arm_we_wrote_changed_but_still_stamped_is_not_replaced(
    timed: Path, tmp_path: Path
) -> None:
    """quote's numbers changed there (alpha 1.52 -> 2.52, one more selection) but its `last_updated` is still
    s1's (a tool or a hand that kept it): the log held Beta(1.52, 1.48) n 1 right after s1, so this arm is not
    as we wrote it. The export took the file for ours and replaced it; now it is refused, nothing written."""
    copy = earlier_copy(timed, tmp_path / "backup.json", {}, sessions=0)
    state = json.loads(copy.read_text())
    state["arms"][QUOTE].update(alpha=2.52, total_selections=2, total_rewards=2)  # last_updated: s1's still
    copy.write_text(json.dumps(state))
    before = copy.read_bytes()
    err = refused("export-gptme", "--workspace", str(timed), str(copy))
    assert QUOTE in err, err
    assert copy.read_bytes() == before
    refused("import-gptme", "--workspace", str(timed), str(copy))
    assert rows(timed) == near({GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1)})


def test_an_earlier_copy_as_we_wrote_it_is_skipped_and_replaced(timed: Path, tmp_path: Path) -> None:
    """Every arm as the log held it at its stamp, s3 recorded since (git again): nothing of gptme's in the file.
    The import says so (it refused it: 'would count twice'), and the export replaces it, as before."""
    copy = earlier_copy(timed, tmp_path / "backup.json", {}, sessions=0)
    s3 = session("s3", 1.0, {GIT: 1.0}, timestamp="2026-11-03T10:00:00Z")
    with (timed / LOG_REL).open("a") as log:
        log.write(json.dumps(s3) + "\n")
    log_before = (timed / LOG_REL).read_bytes()
    out = ok("import-gptme", "--workspace", str(timed), str(copy))
    assert "nothing new" in out and (timed / LOG_REL).read_bytes() == log_before
    ok("export-gptme", "--workspace", str(timed), str(copy))
    # git: Beta(1.92, 2.08) n 2 + s3 (1.0, w 1): +1/+0 = Beta(2.92, 2.08) n 3
    assert arms_of(copy)[GIT] == pytest.approx((2.92, 2.08, 3, 2))


@pytest.mark.parametrize("change", ["alpha-down", "arm-gone"])
def test_an_export_over_an_exported_file_changed_otherwise_too_is_refused(tmp_path: Path, change: str) -> None:
    """A file export-gptme wrote (its numbers logged) where gptme's bandit added an arm since (five sessions) and
    git's alpha went down, or git's arm is gone (not an update gptme's bandit makes: a hand, another tool). The
    export took that for 'changed otherwise, replaced as asked' and the new arm was gone with it; import-gptme
    refuses such a file. Refused now (one line, nothing written); with git put back as written, import-gptme
    logs the new arm, then the export writes; an arm gone and nothing else changed (nothing lost) replaces it."""
    s1 = session("s1", 0.8, {GIT: 1.0})  # git: +0.8/+0.2 at w 1: Beta(1.8, 1.2) n 1
    root = make_workspace(tmp_path, BASIC_LESSONS, events=[s1], journals={"j.txt": BASIC_JOURNAL}, name="ws")
    target = tmp_path / "gptme.json"
    ok("export-gptme", "--workspace", str(root), str(target))
    state = json.loads(target.read_text())
    written = dict(state["arms"][GIT])
    new = {"arm_id": PLAIN, "alpha": 5.0, "beta": 2.0, "total_selections": 5, "total_rewards": 4}  # 1 + 4, 1 + 1
    state["arms"][PLAIN] = {**new, "last_updated": GPTME_TIME}
    if change == "alpha-down":
        state["arms"][GIT]["alpha"] = 1.5  # down from 1.8
    else:
        del state["arms"][GIT]
    state["total_sessions"] += 5
    target.write_text(json.dumps(state))
    before, log_before = target.read_bytes(), (root / LOG_REL).read_bytes()
    err = refused("export-gptme", "--workspace", str(root), str(target))
    assert GIT in err and "delete" in err, err
    assert target.read_bytes() == before and (root / LOG_REL).read_bytes() == log_before
    refused("import-gptme", "--workspace", str(root), str(target))  # (why the line says to put it back)
    state["arms"][GIT] = written  # put back as written
    target.write_text(json.dumps(state))
    refused("export-gptme", "--workspace", str(root), str(target))  # the new arm: import-gptme it first
    ok("import-gptme", "--workspace", str(root), str(target))
    assert rows(root) == near({GIT: (1.8, 1.2, 1), PLAIN: (5.0, 2.0, 5)})  # Beta(1, 1) + (4, 1), n 5
    del state["arms"][GIT]  # gone from the file (gptme's bandit dropped it), nothing else: the log still has it
    target.write_text(json.dumps(state))
    ok("export-gptme", "--workspace", str(root), str(target))
    assert arms_of(target) == near({GIT: (1.8, 1.2, 1, 1), PLAIN: (5.0, 2.0, 5, 4)})


def test_with_decay_an_earlier_copy_is_refused_not_taken_for_ours(timed: Path, tmp_path: Path) -> None:
    """With decay every later session moves every arm, so what the log held right after a session is not known
    per arm: an arm as we wrote it cannot be told from one changed since. The export replaced the file (with
    gptme's new arm in it, that arm was gone); refused now, both ways, nothing written or logged."""
    (timed / CONFIG_REL).write_text("decay = 0.5\n")
    copy = earlier_copy(timed, tmp_path / "backup.json", {PLAIN: (4.0, 1.0, 5, 4)}, sessions=5)
    before, log_before = copy.read_bytes(), (timed / LOG_REL).read_bytes()
    assert "decay" in refused("export-gptme", "--workspace", str(timed), str(copy))
    assert "decay" in refused("import-gptme", "--workspace", str(timed), str(copy))
    assert copy.read_bytes() == before and (timed / LOG_REL).read_bytes() == log_before


def test_an_earlier_copy_moved_after_its_import_logs_only_what_is_new(timed: Path, tmp_path: Path) -> None:
    """Imported at one path (gptme's new plain arm, Beta(5, 2) n 5, logged), then moved to another, where gptme's
    bandit saved one more session on plain (+1/+0): only that session is logged, from what the import saw."""
    first = earlier_copy(timed, tmp_path / "backup.json", {PLAIN: (4.0, 1.0, 5, 4)}, sessions=5)
    ok("import-gptme", "--workspace", str(timed), str(first))
    moved = tmp_path / "moved.json"
    first.rename(moved)
    state = json.loads(moved.read_text())
    state["arms"][PLAIN].update(alpha=6.0, total_selections=6, total_rewards=5)
    state["total_sessions"] = 8
    moved.write_text(json.dumps(state))
    out = ok("import-gptme", "--workspace", str(timed), str(moved))
    assert "increments" in out, out
    # plain: Beta(5, 2) n 5 + (1, 0, 1) = Beta(6, 2) n 6; git and quote as the fixture left them
    assert rows(timed) == near({GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1), PLAIN: (6.0, 2.0, 6)})


def test_an_export_over_a_gptme_file_import_gptme_cannot_read_is_refused(tmp_path: Path) -> None:
    """gptme's file of another project whose two arms name one lesson (`tools/git.md` and `lessons/tools/git.md`:
    import-gptme refuses it, it cannot tell which is the lesson's). The export took 'cannot be imported' for
    'no arm, nothing to lose' and replaced it: 4 sessions' evidence gone. Refused now, nothing written."""
    s1 = session("s1", 0.8, {GIT: 1.0})
    root = make_workspace(tmp_path, BASIC_LESSONS, events=[s1], journals={"j.txt": BASIC_JOURNAL}, name="ws")
    arm = {"arm_id": GIT, "alpha": 3.0, "beta": 2.0, "total_selections": 3, "total_rewards": 2, "last_updated": ""}
    other = {**arm, "arm_id": "lessons/" + GIT, "alpha": 2.0, "beta": 1.0, "total_selections": 1}
    target = tmp_path / "bandit-state.json"
    target.write_text(json.dumps({"arms": {GIT: arm, "lessons/" + GIT: other}, "total_sessions": 4, "created": "c"}))
    before, log_before = target.read_bytes(), (root / LOG_REL).read_bytes()
    err = refused("import-gptme", "--workspace", str(root), str(target))
    assert "same lesson" in err, err
    err = refused("export-gptme", "--workspace", str(root), str(target))
    assert "same lesson" in err and "delete" in err, err
    assert target.read_bytes() == before and (root / LOG_REL).read_bytes() == log_before


def test_gptmes_update_of_an_arm_whose_session_was_retracted_since_is_not_taken_for_gptmes_own(
    timed: Path, tmp_path: Path
) -> None:
    """s3 credited plain (graded 0.5: Beta(1.5, 1.5) n 1 in the file), gptme's bandit then updated plain in the
    copy (+1/+0: Beta(2.5, 1.5) n 2, restamped), and s3's grade was retracted since: the log holds no evidence of
    plain now, but the file's plain holds s3's. Taken for gptme's own arm it was imported whole, s3's
    evidence with it (Beta(2.5, 1.5) n 2 for a lesson the log credits nothing). Refused now, nothing logged."""
    s3 = session("s3", None, {PLAIN: 1.0}, timestamp="2026-11-03T10:00:00Z")
    with (timed / LOG_REL).open("a") as log:
        log.write(json.dumps(s3) + "\n")
    ok("grade", "s3", "0.5", "--workspace", str(timed))  # plain: +0.5/+0.5 at w 1
    copy = earlier_copy(timed, tmp_path / "backup.json", {PLAIN: (1.0, 0.0, 1, 1)}, sessions=1)
    assert arms_of(copy)[PLAIN] == pytest.approx((2.5, 1.5, 2, 1))
    with (timed / LOG_REL).open("a") as log:  # s3's grade retracted (a null grade: pending again)
        log.write(json.dumps({"type": "grade", "session_id": "s3", "base_reward": None, "grader": "manual"}) + "\n")
    log_before = (timed / LOG_REL).read_bytes()
    err = refused("import-gptme", "--workspace", str(timed), str(copy))
    assert PLAIN in err and "twice" in err, err
    assert (timed / LOG_REL).read_bytes() == log_before
    assert PLAIN not in rows(timed)  # (n 0: the log credits plain nothing)


def test_an_earlier_copy_taken_while_a_session_was_pending_is_as_we_wrote_it_once_that_session_is_graded(
    tmp_path: Path,
) -> None:
    """s1 (git, salience 1) recorded pending, s2 (git, salience 1) graded 0.4: the file then holds git at
    Beta(1.4, 1.6) n 1 (seed, w 1: +0.4/+0.6), stamped with s2's time. A copy taken then, where gptme's bandit adds
    tools/other.md (Beta(5, 2), 5 sessions); s1 is graded 0.6 afterwards (git now Beta(2, 2) n 2), and `.cache` is
    deleted. The copy's git is what we wrote before s1's grade, not an arm changed since: both commands took it
    for one ("tools/git.md was changed since lesson-credit wrote it") and refused the file. Now the import logs
    other.md once (git not at all), and the export then writes the log's numbers."""
    events = [
        session("s1", None, {GIT: 1.0}, timestamp="2026-11-01T10:00:00Z"),
        session("s2", 0.4, {GIT: 1.0}, timestamp="2026-11-02T10:00:00Z"),
    ]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL}, name="late")
    ok("grade", "s2", "0.4", "--workspace", str(root))  # writes bandit-state.json from the log
    assert arms_of(root / STATE_REL)[GIT][:3] == pytest.approx((1.4, 1.6, 1))
    copy = tmp_path / "backup.json"
    shutil.copy(root / STATE_REL, copy)
    state = json.loads(copy.read_text())  # gptme's bandit there: a new arm, five sessions, saved with its keys only
    state["arms"][OTHER] = {"arm_id": OTHER, "alpha": 5.0, "beta": 2.0, "total_selections": 5, "total_rewards": 4,
                            "last_updated": GPTME_TIME}  # fmt: skip
    state["total_sessions"] += 5
    copy.write_text(json.dumps({k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}))
    ok("grade", "s1", "0.6", "--workspace", str(root))
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    assert "import-gptme" in refused("export-gptme", "--workspace", str(root), str(copy))
    out = ok("import-gptme", "--workspace", str(root), str(copy))
    assert "increments" in out, out
    assert rows(root) == near({GIT: (2.0, 2.0, 2), OTHER: (5.0, 2.0, 5)})
    ok("export-gptme", "--workspace", str(root), str(copy))
    assert arms_of(copy)[GIT][:3] == pytest.approx((2.0, 2.0, 2))
    assert arms_of(copy)[OTHER][:3] == pytest.approx((5.0, 2.0, 5))


@pytest.mark.parametrize("git", [(2.0, 2.0, 2), (2.2, 2.0, 2)], ids=["as-written", "changed"])
def test_an_earlier_copy_taken_between_two_late_grades(tmp_path: Path, git: tuple[float, float, int]) -> None:
    """s0 and s1 (git, salience 1) pending, s2 graded 0.4; s0 graded 0.6, the copy taken, then s1 graded 0.2 (seed,
    w 1). By hand: the copy's git, written after s0's grade: Beta(1 + 0.6 + 0.4, 1 + 0.4 + 0.6) = Beta(2, 2) n 2,
    stamped with s2's time; the log's now Beta(2.2, 2.8) n 3. As written, the import logs other.md only; git at
    Beta(2.2, 2) n 2 is none of the log's numbers (by s2, without s1: Beta(2, 2); without s0 too: Beta(1.4, 1.6)
    n 1): refused both ways, nothing logged or written."""
    events = [
        session("s0", None, {GIT: 1.0}, timestamp="2026-11-01T09:00:00Z"),
        session("s1", None, {GIT: 1.0}, timestamp="2026-11-01T10:00:00Z"),
        session("s2", 0.4, {GIT: 1.0}, timestamp="2026-11-02T10:00:00Z"),
    ]
    root = make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL}, name="late2")
    ok("grade", "s0", "0.6", "--workspace", str(root))
    state = json.loads((root / STATE_REL).read_text())
    assert tuple(state["arms"][GIT][k] for k in ("alpha", "beta", "total_selections")) == pytest.approx((2, 2, 2))
    state["arms"][GIT].update(alpha=git[0], beta=git[1], total_selections=git[2])
    state["arms"][OTHER] = {"arm_id": OTHER, "alpha": 5.0, "beta": 2.0, "total_selections": 5, "total_rewards": 4,
                            "last_updated": GPTME_TIME}  # fmt: skip
    state["total_sessions"] += 5
    copy = tmp_path / "backup.json"
    copy.write_text(json.dumps({k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}))
    ok("grade", "s1", "0.2", "--workspace", str(root))
    shutil.rmtree(root / STATE_REL.parent / ".cache")
    assert rows(root) == near({GIT: (2.2, 2.8, 3)})
    if git == (2.2, 2.0, 2):
        before, log_before = copy.read_bytes(), (root / LOG_REL).read_bytes()
        assert "tools/git.md was changed since" in refused("import-gptme", "--workspace", str(root), str(copy))
        assert "tools/git.md was changed since" in refused("export-gptme", "--workspace", str(root), str(copy))
        assert copy.read_bytes() == before and (root / LOG_REL).read_bytes() == log_before
        return
    ok("import-gptme", "--workspace", str(root), str(copy))
    assert rows(root) == near({GIT: (2.2, 2.8, 3), OTHER: (5.0, 2.0, 5)})


def test_an_earlier_copy_taken_before_gptmes_update_of_the_own_file_was_logged_is_as_we_wrote_it(
    timed: Path, tmp_path: Path
) -> None:
    """The copy taken (git Beta(1.92, 2.08) n 2, stamped with s2's time), where gptme's bandit adds other.md
    (Beta(5, 2), 5 sessions). Then gptme's bandit updates the workspace's own file (git up by (1, 0), one
    selection) and the next write (`grade`) logs that as increments: the log's git is Beta(2.92, 2.08) n 3. The
    copy's git is still what we wrote (the increments came after it): both commands took it for an arm changed
    since and refused the copy. Now the import logs other.md once; git and quote as they were."""
    copy = tmp_path / "backup.json"
    copy.write_text(gptme_saved(json.loads((timed / STATE_REL).read_text()), {OTHER: (4.0, 1.0, 5, 4)}, 5))
    (timed / STATE_REL).write_text(gptme_saved(json.loads((timed / STATE_REL).read_text()), {GIT: (1.0, 0.0, 1, 1)}, 1))
    ok("grade", "s2", "0.4", "--workspace", str(timed))  # (a write: logs gptme's update of the own file)
    assert rows(timed) == near({GIT: (2.92, 2.08, 3), QUOTE: (1.52, 1.48, 1)})
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    assert "import-gptme" in refused("export-gptme", "--workspace", str(timed), str(copy))
    ok("import-gptme", "--workspace", str(timed), str(copy))
    assert rows(timed) == near({GIT: (2.92, 2.08, 3), QUOTE: (1.52, 1.48, 1), OTHER: (5.0, 2.0, 5)})
    ok("export-gptme", "--workspace", str(timed), str(copy))
    assert arms_of(copy)[GIT][:3] == pytest.approx((2.92, 2.08, 3))


def test_an_earlier_copy_taken_before_a_regrade_or_an_undo_is_as_we_wrote_it(timed: Path, tmp_path: Path) -> None:
    """The copy taken (git Beta(1.92, 2.08) n 2, quote Beta(1.52, 1.48) n 1), gptme's other.md added there; then s1
    (0.8) is regraded 0.5 by hand, and s2's grade is undone (back to its record's 0.4: no change), then s2 graded
    0.9. By hand (seed, floor 0.3): git now: s1 0.5 at w 1 (+0.5/+0.5), s2 0.9 at w 0.3 (+0.27/+0.73): Beta(1.77,
    2.23) n 2; quote: s1 0.5 at w 0.65 (+0.325/+0.675): Beta(1.325, 1.675) n 1. The copy's arms are the log's before
    those grades: both commands refused the copy as changed since. Now the import logs other.md only."""
    copy = tmp_path / "backup.json"
    copy.write_text(gptme_saved(json.loads((timed / STATE_REL).read_text()), {OTHER: (4.0, 1.0, 5, 4)}, 5))
    ok("grade", "s1", "0.5", "--workspace", str(timed))
    ok("undo", "s2", "--workspace", str(timed))
    ok("grade", "s2", "0.9", "--workspace", str(timed))
    assert rows(timed) == near({GIT: (1.77, 2.23, 2), QUOTE: (1.325, 1.675, 1)})
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    assert "import-gptme" in refused("export-gptme", "--workspace", str(timed), str(copy))
    ok("import-gptme", "--workspace", str(timed), str(copy))
    assert rows(timed) == near({GIT: (1.77, 2.23, 2), QUOTE: (1.325, 1.675, 1), OTHER: (5.0, 2.0, 5)})
