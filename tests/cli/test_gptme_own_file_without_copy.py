"""The workspace's own bandit-state.json updated by gptme's bandit, then `.cache` deleted (or the caches off): no
copy of what we last wrote is left. Caches only save time, so the file is told arm by arm from the log, as an
earlier copy of ours is (its arms' `last_updated`): gptme's part is logged once by the next write, the import or
the export, and the file follows the log again; an arm that cannot be told apart is kept or refused, never
counted twice. The numbers of each test are worked out by hand in its comments."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, STATE_REL
from tests.support.gptme_timed import gptme_saved, refused, rows, timed_workspace

GIT, QUOTE, PLAIN, OTHER = "tools/git.md", "tools/quote.md", "workflow/plain.md", "tools/other.md"
STAMP = "lesson_credit_written"  # our stamp: gptme's save drops it
# git: s1 w 1 +0.8/+0.2, s2 w 0.3 +0.12/+0.88 over Beta(1, 1); quote: s1 w 0.65 +0.52/+0.48 (see `timed`)
LOGGED = {GIT: (1.92, 2.08, 2), QUOTE: (1.52, 1.48, 1)}


def ok(*argv: str) -> tuple[str, str]:
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return out, err


def near(numbers: Mapping[str, tuple[float, ...]]) -> dict[str, Any]:
    return {key: pytest.approx(value) for key, value in numbers.items()}


def arms_of(root: Path) -> dict[str, tuple[float, float, int, int]]:
    arms: dict[str, Any] = json.loads((root / STATE_REL).read_text())["arms"]
    return {k: (a["alpha"], a["beta"], a["total_selections"], a["total_rewards"]) for k, a in arms.items()}


@pytest.fixture
def timed(tmp_path: Path) -> Path:
    """s1 and s2 with their times, git Beta(1.92, 2.08) n 2 (by hand: tests/support/gptme_timed.py)."""
    return timed_workspace(tmp_path)


def gptme_saves(root: Path, added: dict[str, tuple[float, float, int, int]], sessions: int) -> None:
    """gptme's bandit's `sessions` on the workspace's own file: each arm of `added` up by its (alpha, beta,
    total_selections, total_rewards), from Beta(1, 1) for an arm it lacks, restamped with gptme's time; saved with
    its own keys only (our stamp gone, our `created` kept)."""
    state = json.loads((root / STATE_REL).read_text())
    assert STAMP in state  # (ours as we wrote it, before)
    (root / STATE_REL).write_text(gptme_saved(state, added, sessions))


def lose_copies(root: Path, how: str, tmp_path: Path) -> None:
    """No copy of what we wrote: `.cache` deleted, or a `.cache` leading out of the workspace (the caches off)."""
    cache = root / STATE_REL.parent / ".cache"
    shutil.rmtree(cache)
    if how == "caches-off":
        (tmp_path / "elsewhere").mkdir()
        cache.symlink_to(tmp_path / "elsewhere")


@pytest.mark.parametrize("how", ["cache-deleted", "caches-off"])
@pytest.mark.parametrize("lesson", [OTHER, PLAIN], ids=["not-in-the-library", "library-lesson"])
def test_the_next_write_logs_gptmes_arm_on_the_own_file_with_no_copy_left(
    timed: Path, tmp_path: Path, how: str, lesson: str
) -> None:
    """Our git arm Beta(1.92, 2.08) n 2 (stamped s2) and quote's, and gptme's new arm: Beta(1, 1) + four rewarded
    of five = Beta(5, 2) n 5. With no copy the record kept the file with a warning (it stopped following the log,
    every later write said so) and the new arm never reached the log. Now the record logs it (git and quote,
    ours as we wrote them, not at all) and rewrites the file from the log: it holds both, stamped ours again."""
    gptme_saves(timed, {lesson: (4.0, 1.0, 5, 4)}, sessions=5)
    lose_copies(timed, how, tmp_path)
    argv = ("record", "--workspace", str(timed), "--session-id", "s3", "--journal", str(timed / "j.txt"))
    _, err = ok(*argv, "--lessons", "--reward", "0.5")  # s3 names no lesson: no arm moves
    assert "logged as an increments event" in err, err
    expected = {**LOGGED, lesson: (5.0, 2.0, 5)}
    assert rows(timed) == near(expected)
    # (total_rewards: git s1's 0.8 > 0.5, s2's 0.12 not; quote s1's 0.52; gptme's 4)
    assert arms_of(timed) == near({GIT: (1.92, 2.08, 2, 1), QUOTE: (1.52, 1.48, 1, 1), lesson: (5.0, 2.0, 5, 4)})
    assert STAMP in json.loads((timed / STATE_REL).read_text())  # follows the log again
    log = (timed / LOG_REL).read_bytes()
    _, err = ok("grade", "s3", "0.5", "--workspace", str(timed))  # another write: nothing more to log
    assert "another tool" not in err, err
    assert (timed / LOG_REL).read_bytes().count(b"gptme-bandit") == log.count(b"gptme-bandit") == 1
    assert rows(timed) == near(expected)


def test_importing_the_own_file_with_no_copy_left_logs_gptmes_part_once(timed: Path) -> None:
    """The import of the own file changed by gptme with `.cache` deleted was refused ('would count twice'):
    gptme's arm could not be logged by it. Now it logs gptme's Beta(5, 2) n 5 once (git and quote not at all);
    a second import adds nothing, and the numbers stay."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    own = str(timed / STATE_REL)
    out, _ = ok("import-gptme", "--workspace", str(timed), own)
    assert "increments" in out, out
    expected = {**LOGGED, OTHER: (5.0, 2.0, 5)}
    assert rows(timed) == near(expected)
    log = (timed / LOG_REL).read_bytes()
    out, _ = ok("import-gptme", "--workspace", str(timed), own)
    assert "nothing" in out and (timed / LOG_REL).read_bytes() == log, out
    assert rows(timed) == near(expected)


def test_gptmes_file_back_after_its_arm_was_logged_is_not_counted_again(timed: Path) -> None:
    """The write that logged gptme's arm did not get to replace the file (gptme's save back in its place: the same
    `created`, other.md Beta(5, 2) n 5), `.cache` deleted again: the increments event's `seen` says other.md was
    Beta(5, 2) n 5 there, so nothing is added; other.md stays Beta(5, 2) n 5, not Beta(9, 3) n 10."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    saved = (timed / STATE_REL).read_bytes()
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    ok("import-gptme", "--workspace", str(timed), str(timed / STATE_REL))
    (timed / STATE_REL).write_bytes(saved)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    log = (timed / LOG_REL).read_bytes()
    ok("grade", "s2", "0.4", "--workspace", str(timed))  # a write: the file is rewritten, nothing logged but it
    assert (timed / LOG_REL).read_bytes().count(b"gptme-bandit") == log.count(b"gptme-bandit") == 1
    assert rows(timed) == near({**LOGGED, OTHER: (5.0, 2.0, 5)})
    assert STAMP in json.loads((timed / STATE_REL).read_text())


def test_an_export_onto_the_own_file_with_no_copy_left_logs_gptmes_arm_first(timed: Path) -> None:
    """The reviewer's case: gptme adds tools/other.md at Beta(5, 2) n 5 to the own file, `.cache` is deleted, and
    `export-gptme` onto it replaced it with a warning: other.md was gone, from the file and the log. Now the
    export logs it first and writes the log's numbers: the file holds git Beta(1.92, 2.08) n 2 and other.md."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    _, err = ok("export-gptme", "--workspace", str(timed), str(timed / STATE_REL))
    assert "is lost" not in err and "logged" in err, err
    assert arms_of(timed) == near({GIT: (1.92, 2.08, 2, 1), QUOTE: (1.52, 1.48, 1, 1), OTHER: (5.0, 2.0, 5, 4)})
    assert rows(timed) == near({**LOGGED, OTHER: (5.0, 2.0, 5)})


def test_an_arm_of_ours_gptme_updated_with_no_copy_left_is_kept_never_counted_twice(timed: Path) -> None:
    """gptme's bandit updated our git arm (+1/+0, one selection, restamped) beside its new arm: what it added to git
    cannot be told from the log's Beta(1.92, 2.08) n 2 without a copy of ours. As before: the record keeps the
    file (one warning), the import is refused (one line: it would count twice); the log's numbers stay."""
    gptme_saves(timed, {GIT: (1.0, 0.0, 1, 1), OTHER: (4.0, 1.0, 5, 4)}, sessions=6)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    before = (timed / STATE_REL).read_bytes()
    argv = ("record", "--workspace", str(timed), "--session-id", "s3", "--journal", str(timed / "j.txt"))
    _, err = ok(*argv, "--lessons", "--reward", "0.5")
    assert "left as it is" in err and f"{GIT} is not the log's" in err, err  # (the arm that cannot be told, named)
    assert (timed / STATE_REL).read_bytes() == before
    log = (timed / LOG_REL).read_bytes()
    err = refused("import-gptme", "--workspace", str(timed), str(timed / STATE_REL))
    assert "twice" in err and GIT in err, err
    assert (timed / LOG_REL).read_bytes() == log and (timed / STATE_REL).read_bytes() == before
    assert rows(timed) == near(LOGGED)


def test_gptme_saving_again_from_the_old_file_with_no_copy_left_logs_only_its_new_session(timed: Path) -> None:
    """gptme's bandit holds the file it loaded (our `created`, other.md Beta(5, 2) n 5): the next write logged
    that and rewrote the file; gptme then saves again from what it holds, one more rewarded session of other.md
    (Beta(6, 2) n 6, 8 sessions), and `.cache` is gone again. Only that session is logged, over what the first
    increments event saw there: other.md Beta(6, 2) n 6 (not Beta(10, 3) n 11), git and quote as logged."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    held = json.loads((timed / STATE_REL).read_text())
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    ok("grade", "s2", "0.4", "--workspace", str(timed))  # logs other.md Beta(5, 2) n 5, rewrites the file
    held["arms"][OTHER].update(alpha=6.0, total_selections=6, total_rewards=5)
    held["total_sessions"] = 8
    (timed / STATE_REL).write_text(json.dumps(held))
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    _, err = ok("grade", "s2", "0.4", "--workspace", str(timed))
    assert "logged as an increments event" in err, err
    assert rows(timed) == near({**LOGGED, OTHER: (6.0, 2.0, 6)})
    assert arms_of(timed)[OTHER] == pytest.approx((6.0, 2.0, 6, 5))


def test_a_lesson_moved_in_the_library_with_no_copy_left_is_not_counted_as_gptmes(timed: Path) -> None:
    """gptme adds other.md at Beta(5, 2) n 5 to the own file; then the library moves tools/git.md to
    x/tools/git.md (the file's key `tools/git.md` now matches it by its path's end) and `.cache` is deleted. The
    file's git arm is the log's own tools/git.md, Beta(1.92, 2.08) n 2 as written (stamped s2): it was taken for
    gptme's new arm of x/tools/git.md, counted from Beta(1, 1), and its 0.92/1.08 over 2 sessions logged again
    (x/tools/git.md Beta(1.92, 2.08) n 2 beside tools/git.md's). As with a copy, only other.md is logged now."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    (timed / "lessons" / "x" / "tools").mkdir(parents=True)
    (timed / "lessons" / GIT).rename(timed / "lessons" / "x" / GIT)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    argv = ("record", "--workspace", str(timed), "--session-id", "s3", "--journal", str(timed / "j.txt"))
    _, err = ok(*argv, "--lessons", "--reward", "0.5")
    assert "increments to 1 arm " in err, err  # (other.md alone)
    assert rows(timed) == near({**LOGGED, OTHER: (5.0, 2.0, 5)})


def test_an_earlier_copy_imported_after_a_lesson_moved_is_not_counted_again(timed: Path, tmp_path: Path) -> None:
    """The same through `import-gptme` of an earlier copy (a backup of the own file, gptme's other.md Beta(5, 2) n 5
    in it), tools/git.md moved to x/tools/git.md and `.cache` deleted: the import logged 2 arms, git's Beta(1.92,
    2.08) n 2 a second time under x/tools/git.md. Now other.md alone (Beta(5, 2) n 5), git as logged."""
    gptme_saves(timed, {OTHER: (4.0, 1.0, 5, 4)}, sessions=5)
    backup = tmp_path / "backup.json"
    shutil.copy(timed / STATE_REL, backup)
    (timed / "lessons" / "x" / "tools").mkdir(parents=True)
    (timed / "lessons" / GIT).rename(timed / "lessons" / "x" / GIT)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    out, _ = ok("import-gptme", "--workspace", str(timed), str(backup))
    assert "to 1 arm," in out, out
    assert rows(timed) == near({**LOGGED, OTHER: (5.0, 2.0, 5)})


def test_gptmes_update_of_our_arm_that_the_log_matched_since_is_kept_not_dropped(timed: Path) -> None:
    """gptme's bandit rewarded git fully once (+1/+0, one selection, restamped with its time: Beta(2.92, 2.08) n 3,
    3 sessions), `.cache` is deleted, and s3 is recorded on git at 1.0 with salience 1 (w 1: +1/+0), so the log's
    git is Beta(2.92, 2.08) n 3 too and counts 3 sessions. The arm was taken for ours at the log's numbers now
    (though its stamp names no session of the log's, where every write of ours stamps s3's) and the file
    rewritten: gptme's session was gone from it without a word (right: Beta(3.92, 2.08) n 4, 4 sessions). As
    with any update of our arm that cannot be told apart, the file is now kept with a warning naming git."""
    gptme_saves(timed, {GIT: (1.0, 0.0, 1, 1)}, sessions=1)
    shutil.rmtree(timed / STATE_REL.parent / ".cache")
    before = (timed / STATE_REL).read_bytes()
    argv = ("record", "--workspace", str(timed), "--session-id", "s3", "--journal", str(timed / "j.txt"))
    _, err = ok(*argv, "--lessons", GIT, "--reward", "1.0")
    assert rows(timed) == near({**LOGGED, GIT: (2.92, 2.08, 3)})  # (the log's own, gptme's part not counted)
    assert "left as it is" in err and f"{GIT} is not the log's" in err, err
    assert (timed / STATE_REL).read_bytes() == before  # gptme's Beta(2.92, 2.08) n 3 over 3 sessions, kept
    assert arms_of(timed)[GIT] == pytest.approx((2.92, 2.08, 3, 2))
