"""The rewards a gptme-sessions records file gives (its judge's scores) are not in the log: a records file gone
(deleted, emptied, another one named in a hook's environment) changed those sessions' rewards without a word, and
the next `status` or write rewrote `bandit-state.json`, what gptme's bandit reads, from the fold without them. The
file now says how many sessions took their reward from which records file; while none takes one now, it is left as
it is (as with the log gone) and every command says why, until the records are back (or the file is deleted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run_cli
from tests.support.records_helpers import RECORDS, judged_workspace, write_judge_records

STATE = Path("state/lesson-thompson/bandit-state.json")


def _record(root: Path, sid: str) -> tuple[int, str, str]:
    argv = ["record", "-w", str(root), "--session-id", sid, "--journal", str(root / "j.md"), "--lessons", "a.md"]
    return run_cli(*argv, "--reward", "0.5")


def _arm(root: Path) -> tuple[float, float, int]:
    arm = json.loads((root / STATE).read_text())["arms"]["a.md"]
    return arm["alpha"], arm["beta"], arm["total_selections"]


def test_a_records_file_gone_leaves_the_state_file_as_it_is_and_says_why(tmp_path: Path) -> None:
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    # seed, floor 0.3, salience 1 (w 1): alpha 1 + 0.8 + 0.6 + 0.5, beta 1 + 0.2 + 0.4 + 0.5
    assert _arm(root) == pytest.approx((2.9, 2.1, 3))
    written = (root / STATE).read_bytes()
    (root / RECORDS).unlink()
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0, err
    said = "was written with the rewards of 2 sessions from the gptme-sessions records in " + str(RECORDS)
    assert said in err and "is missing" in err and "left as it is" in err, err
    assert (root / STATE).read_bytes() == written
    code, _, err = _record(root, "s4")  # a write: the session is logged, the file still left
    assert code == 0 and said in err, err
    assert (root / STATE).read_bytes() == written
    code, out, _ = run_cli("lint", "-w", str(root))
    assert "records-missing" in out, out
    write_judge_records(root)
    code, _, err = run_cli("status", "-w", str(root))  # the records back: rewritten, s4 in it
    assert code == 0 and "gptme-sessions records" not in err, err
    assert _arm(root) == pytest.approx((3.4, 2.6, 4))


def test_an_emptied_records_file_is_said_so(tmp_path: Path) -> None:
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    (root / RECORDS).write_text("")
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "(no record can be read from it)" in err and "left as it is" in err, err


def test_another_records_file_named_by_the_environment_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook's environment with $GPTME_SESSIONS_DIR set and a shell's without (or the other way round) rewrote
    the file back and forth."""
    root = judged_workspace(tmp_path)
    elsewhere = tmp_path / "gptme-sessions"
    elsewhere.mkdir()
    (root / RECORDS).rename(elsewhere / "session-records.jsonl")
    monkeypatch.setenv("GPTME_SESSIONS_DIR", str(elsewhere))
    assert _record(root, "s3")[0] == 0
    assert _arm(root) == pytest.approx((2.9, 2.1, 3))
    written = (root / STATE).read_bytes()
    monkeypatch.delenv("GPTME_SESSIONS_DIR")
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and str(elsewhere / "session-records.jsonl") in err and str(RECORDS) in err, err
    assert (root / STATE).read_bytes() == written


def test_deleting_the_state_file_takes_the_log_without_the_records(tmp_path: Path) -> None:
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    (root / RECORDS).unlink()
    (root / STATE).unlink()
    code, _, err = _record(root, "s4")
    assert code == 0 and "gptme-sessions records" not in err, err
    # s1, s2 pending now: alpha 1 + 0.5 + 0.5, beta 1 + 0.5 + 0.5
    assert _arm(root)[:2] == pytest.approx((2.0, 2.0))
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and err == "", err


def test_people_grading_every_judged_session_leave_nothing_frozen(tmp_path: Path) -> None:
    """With the records there, no session taking its reward from them (each graded by a person since) is no
    records gone: the file follows the log (it stayed frozen, saying the records were missing)."""
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    for sid in ("s1", "s2"):
        code, _, err = run_cli("grade", sid, "0.1", "-w", str(root))
        assert code == 0 and "gptme-sessions records" not in err, err
    # manual 0.1 over the judge's: alpha 1 + 0.1 + 0.1 + 0.5, beta 1 + 0.9 + 0.9 + 0.5
    assert _arm(root) == pytest.approx((1.7, 3.3, 3))
    code, out, _ = run_cli("lint", "-w", str(root))
    assert "records-missing" not in out, out


def test_a_reward_priority_that_puts_the_judge_last_leaves_nothing_frozen(tmp_path: Path) -> None:
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    config = root / "state/lesson-thompson/config.toml"
    config.write_text('[rewards]\npriority = ["human", "heuristic", "outcome"]\n')
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "gptme-sessions records" not in err, err
    # the judge's scores out of force: s1 and s2 pending; alpha 1 + 0.5, beta 1 + 0.5
    assert _arm(root)[:2] == pytest.approx((1.5, 1.5))


def test_the_same_records_file_named_by_another_path_is_the_same_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$GPTME_SESSIONS_DIR naming the workspace's own records folder through a link: the same file, read. With the
    judge's scores out of force (a priority without it), no session took a reward from it, and the paths' text
    differing was taken for another file: the state file froze."""
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    (root / "state/lesson-thompson/config.toml").write_text('[rewards]\npriority = ["human", "heuristic"]\n')
    link = tmp_path / "link"
    link.symlink_to(root)
    monkeypatch.setenv("GPTME_SESSIONS_DIR", str(link / RECORDS.parent))
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "gptme-sessions records" not in err, err
    assert _arm(root)[:2] == pytest.approx((1.5, 1.5))  # s1, s2 pending under that priority: s3's 0.5 alone


def test_a_records_link_to_nothing_is_missing(tmp_path: Path) -> None:
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    (root / RECORDS).unlink()
    (root / RECORDS).symlink_to(tmp_path / "gone.jsonl")
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "(it is missing)" in err and "left as it is" in err, err


def _gptme_saves(root: Path) -> bytes:
    """gptme's bandit saving the file it loaded with one session's update to a.md (reward 1: alpha + 1, one
    selection and reward, total_sessions + 1), its own keys only: ours (the records the rewards came from) go."""
    loaded = json.loads((root / STATE).read_text())
    arm = loaded["arms"]["a.md"]
    arm.update(alpha=arm["alpha"] + 1.0, total_selections=arm["total_selections"] + 1)
    arm["total_rewards"] += 1
    saved = {
        "arms": loaded["arms"],
        "total_sessions": loaded["total_sessions"] + 1,
        "created": loaded["created"],
        "last_updated": "2026-12-06T12:00:00+00:00",
    }
    (root / STATE).write_text(json.dumps(saved, indent=2) + "\n")
    return (root / STATE).read_bytes()


def test_a_records_file_gone_after_gptme_saved_the_file_is_still_said(tmp_path: Path) -> None:
    """gptme's bandit saves what it loaded with its own keys only: the file no longer names the records its
    rewards came from. The copy of the file we wrote (kept under its `created`) still does: with the records
    gone, the file is left as it is (it was rewritten from the fold without the judge's scores)."""
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    saved = _gptme_saves(root)
    (root / RECORDS).unlink()
    code, _, err = run_cli("status", "-w", str(root))
    said = "was written with the rewards of 2 sessions from the gptme-sessions records in " + str(RECORDS)
    assert code == 0 and said in err and "is missing" in err, err
    assert (root / STATE).read_bytes() == saved
    write_judge_records(root)
    code, _, err = run_cli("status", "-w", str(root))  # the records back: rewritten, gptme's session kept
    assert code == 0 and "gptme-sessions records" not in err, err
    # as the first test's 2.9, 2.1 (3 selections), with gptme's session: alpha + 1, one selection more
    assert _arm(root) == pytest.approx((3.9, 2.1, 4))


def test_gptmes_update_of_a_file_left_as_it_is_is_logged_so_deleting_it_loses_nothing(tmp_path: Path) -> None:
    """The records gone, the file is left as it is; gptme's bandit goes on saving its sessions into it. The way out
    (the records gone for good: delete the file) threw those sessions away: they were in the file only. Every
    command that leaves the file as it is now logs them first (an increments event)."""
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    (root / RECORDS).unlink()
    _gptme_saves(root)
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "is left as it is" in err and "increments" in err, err
    _gptme_saves(root)
    code, _, err = _record(root, "s4")  # a write left it as it is too, and logged gptme's second session
    assert code == 0 and "is left as it is" in err and "increments" in err, err
    (root / STATE).unlink()
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0, err
    code, _, err = _record(root, "s5")
    assert code == 0 and "gptme-sessions records" not in err, err
    # s1, s2 pending now; s3, s4, s5 at 0.5; gptme's two sessions of reward 1:
    # alpha 1 + 3 x 0.5 + 2 = 4.5, beta 1 + 3 x 0.5 = 2.5
    assert _arm(root)[:2] == pytest.approx((4.5, 2.5))


def test_an_export_onto_the_own_file_names_the_records_it_holds_now(tmp_path: Path) -> None:
    """`export-gptme` onto the workspace's own file kept the records key of the file it replaced: exported while
    the records were gone, the new file (without their rewards, as asked) still claimed them, and every later
    command froze it again. Exported with the records there, it did not name them: their loss was not caught."""
    root = judged_workspace(tmp_path)
    assert _record(root, "s3")[0] == 0
    (root / RECORDS).unlink()
    code, _, err = run_cli("export-gptme", str(root / STATE), "-w", str(root))
    assert code == 0 and "not read now" in err and "written without their rewards" in err, err
    assert "lesson_credit_records" not in json.loads((root / STATE).read_text())
    assert _arm(root)[:2] == pytest.approx((1.5, 1.5))  # s1, s2 pending without the records: s3's 0.5 alone
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "gptme-sessions records" not in err, err
    write_judge_records(root)
    code, _, err = run_cli("export-gptme", str(root / STATE), "-w", str(root))
    assert code == 0 and "gptme-sessions records" not in err, err
    named = json.loads((root / STATE).read_text())["lesson_credit_records"]
    assert named == {"path": str(RECORDS), "sessions": 2}


def test_a_relative_sessions_dir_is_the_folder_of_the_command_that_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$GPTME_SESSIONS_DIR relative (`gs`) is a folder of the working folder, as for gptme-sessions. The file named
    the records by that relative text: a command run from another folder, whose `gs` holds other records, took them
    for the same file and rewrote bandit-state.json without the judge's rewards, without a word."""
    root = judged_workspace(tmp_path)
    here, there = tmp_path / "here", tmp_path / "there"
    for folder in (here, there):
        (folder / "gs").mkdir(parents=True)
    (root / RECORDS).rename(here / "gs" / "session-records.jsonl")
    (there / "gs" / "session-records.jsonl").write_text(json.dumps({"session_id": "zz", "llm_judge_score": 0.1}) + "\n")
    monkeypatch.setenv("GPTME_SESSIONS_DIR", "gs")
    monkeypatch.chdir(here)
    assert _record(root, "s3")[0] == 0
    assert _arm(root) == pytest.approx((2.9, 2.1, 3))  # s1 0.8, s2 0.6, s3 0.5 over Beta(1, 1)
    written = (root / STATE).read_bytes()
    assert json.loads(written)["lesson_credit_records"]["path"] == str(here / "gs" / "session-records.jsonl")
    monkeypatch.chdir(there)
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0 and "which are not read now" in err and str(there / "gs") in err, err
    assert (root / STATE).read_bytes() == written
