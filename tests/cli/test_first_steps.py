"""What a new user of the command trips on first: counts that disagree with their noun, an empty
credit table for a session without lessons, a selection logged under an id nobody was told to pass
on, a file given as the workspace, a device given as the lessons file."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from lesson_credit.core.workspace import STATE_DIR
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, make_workspace, session

LESSONS = {"tools/git.md": (["git"], "active"), "tools/shell.md": (["shell"], "active")}


def ok(*argv: str) -> tuple[str, str]:
    code, out, err = run_cli(*argv)
    assert code == 0, err
    return out, err


def one_graded(tmp_path: Path) -> Path:
    """A workspace whose log holds one session, graded, with one lesson (recorded as a hook does)."""
    root = make_workspace(tmp_path, LESSONS, journals={"j.md": "git\n"})
    ok(
        "record",
        "-w",
        str(root),
        "--session-id",
        "s1",
        "--journal",
        "j.md",
        "--lessons",
        "tools/git.md",
        "--reward",
        "0.8",
    )
    return root


def test_status_says_1_session_cold_and_warm(tmp_path: Path) -> None:
    root = one_graded(tmp_path)
    cold, _ = ok("status", "-w", str(root))
    assert cold.splitlines()[0].startswith("1 session (1 graded);"), cold
    assert (root / STATE_DIR / ".cache" / "status-summary").is_file()  # the next one is printed from it
    warm, _ = ok("status", "-w", str(root))
    assert warm == cold
    ok("record", "-w", str(root), "--session-id", "s2", "--journal", "j.md", "--lessons", "tools/shell.md")
    two, _ = ok("status", "-w", str(root))
    assert two.splitlines()[0].startswith("2 sessions (1 graded);"), two  # s2 is pending


def test_counts_agree_with_their_noun_in_every_command(tmp_path: Path) -> None:
    root = one_graded(tmp_path)
    out, _ = ok("replay", "-w", str(root), "--floor", "0.5")
    assert out.startswith("replayed 1 session under strategy seed"), out
    out, _ = ok("sessions", "-w", str(root))
    assert out.splitlines()[-1] == "1 of 1 session matches", out
    _, err = ok("select", "-w", str(root), "--context", str(root / "j.md"), "--dry-run")
    assert err.startswith("# 1 of 1 matching lesson (seed"), err  # a dry run names no session
    (root / "lessons" / "tools" / "git.md").unlink()  # s1's lesson is gone: one arm to prune
    out, _ = ok("prune", "-w", str(root))
    assert out.startswith("retired 1 arm whose lesson file is gone"), out


def test_a_status_with_one_lesson_never_used_says_it_is_listed_last(tmp_path: Path) -> None:
    root = one_graded(tmp_path)  # tools/shell.md was never injected
    out, _ = ok("status", "-w", str(root))
    assert "\n1 lesson never used (n 0, the prior's mean) is listed last\n" in out, out


def test_one_problem_more_than_the_five_shown_is_one_problem(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, ["not json\n"] * 6)
    code, _, err = run_cli("status", "-w", str(root))
    assert code == 0
    assert "warning: 1 more problem in sessions.jsonl\n" in err, err


def test_lint_counts_one_error_and_one_warning(tmp_path: Path) -> None:
    # the library is empty (an error) and s1 is pending (a warning)
    root = make_workspace(tmp_path, {}, [session("s1", None, {})])
    code, out, _ = run_cli("lint", "-w", str(root))
    assert code == 1
    assert out.splitlines()[-1].startswith("1 error, 1 warning; failed (--fail-on error)"), out


# -- a session without lessons


PENDING = "no lessons: no posterior moves; once graded, it counts for the baseline only"
GRADED = "no lessons: no posterior moves; it counts for the baseline only"


def no_lessons_line(out: str) -> str:
    (line,) = [line for line in out.splitlines() if line.startswith("no lessons")]
    return line


def test_record_grade_and_undo_of_a_session_without_lessons_say_so_in_one_line(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, journals={"j.md": "git\n"})
    out, _ = ok("record", "-w", str(root), "--session-id", "s1", "--journal", "j.md", "--lessons")
    assert "lesson  salience" not in out, out  # no empty credit table
    assert no_lessons_line(out) == PENDING
    out, _ = ok("grade", "-w", str(root), "s1", "0.5")
    assert out.startswith("graded s1: pending -> 0.500 (manual)\n"), out
    assert "lesson  salience" not in out
    assert no_lessons_line(out) == GRADED
    out, _ = ok("undo", "-w", str(root), "s1")
    assert "lesson  salience" not in out
    assert no_lessons_line(out) == PENDING  # pending again
    out, _ = ok("show", "-w", str(root), "s1")
    assert "lesson  salience" not in out
    assert no_lessons_line(out) == PENDING
    out, _ = ok("explain", "-w", str(root), "s1")
    assert "lesson  salience" not in out
    assert no_lessons_line(out) == PENDING
    data = json.loads(ok("grade", "-w", str(root), "s1", "0.4", "--json")[0])
    assert data["lessons"] == []  # --json keeps its shape


def test_a_session_with_lessons_still_prints_its_credit_table(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, journals={"j.md": "git\n"})
    out, _ = ok("record", "-w", str(root), "--session-id", "s1", "--journal", "j.md", "--lessons", "tools/git.md")
    assert "lesson        salience" in out and not out.startswith("no lessons")
    assert all(not line.startswith("no lessons") for line in out.splitlines())


# -- select without --session-id


def test_select_without_a_session_id_says_to_pass_the_generated_one_to_record(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, journals={"task.md": "git\n"})
    out, err = ok("select", "-w", str(root), "--context", str(root / "task.md"))
    assert out == "tools/git.md\n"  # stdout stays the ids alone (a --lessons-file, `--lessons $(cat ...)`)
    logged = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()]
    generated = logged[-1]["session_id"]
    assert f"pass --session-id {generated} to record" in err, err
    data = json.loads(ok("select", "-w", str(root), "--context", str(root / "task.md"), "--json")[0])
    assert data["session_id"] == json.loads((root / LOG_REL).read_text().splitlines()[-1])["session_id"]
    _, err = ok("select", "-w", str(root), "--context", str(root / "task.md"), "--session-id", "mine")
    assert "pass --session-id" not in err  # the caller chose it
    _, err = ok("select", "-w", str(root), "--context", str(root / "task.md"), "--dry-run")
    assert "pass --session-id" not in err  # nothing was logged


# -- --workspace and --lessons-file


def test_a_file_given_as_the_workspace_is_not_a_folder(tmp_path: Path) -> None:
    (tmp_path / "selected.txt").write_text("tools/git.md\n")
    code, out, err = run_cli("status", "-w", str(tmp_path / "selected.txt"))
    assert (code, out) == (1, "")
    assert err == f"lesson-credit: workspace {tmp_path / 'selected.txt'} is a file, not a folder\n"
    code, _, err = run_cli("status", "-w", str(tmp_path / "nowhere"))
    assert code == 1 and err == f"lesson-credit: workspace not found: {tmp_path / 'nowhere'}\n"


@pytest.mark.parametrize("name", ["/dev/null", "fifo"])
def test_a_lessons_file_that_is_no_regular_file_says_what_to_pass_instead(tmp_path: Path, name: str) -> None:
    """/dev/null is refused as any device (the rule: regular files only); the message says how to
    record no lessons, and how to pass a pipe. A FIFO with no writer is refused, not read (or waited on)."""
    root = make_workspace(tmp_path, LESSONS, journals={"j.md": "git\n"})
    where = name if name.startswith("/") else str(root / name)
    if name == "fifo":
        os.mkfifo(where)
    record = ("record", "-w", str(root), "--session-id", "s1", "--journal", "j.md")
    code, out, err = run_cli(*record, "--lessons-file", where)
    assert (code, out) == (1, "")
    kind = "a device" if name == "/dev/null" else "a FIFO"
    assert err == (
        f"lesson-credit: lessons file {where}: {kind}, not a regular file; for no lessons pass --lessons with no "
        "ids; for a pipe, --lessons-file - reads stdin\n"
    )
    assert not (root / LOG_REL).exists()  # nothing written
    (root / "folder").mkdir()
    code, _, err = run_cli(*record, "--lessons-file", str(root / "folder"))
    assert code == 1 and err == f"lesson-credit: lessons file {root / 'folder'} is a folder, not a file\n"
    missing = str(root / "missing.txt")
    code, _, err = run_cli(*record, "--lessons-file", missing)
    assert code == 1 and err == f"lesson-credit: lessons file not found: {missing}\n"
    assert not (root / LOG_REL).exists()
    ok(*record, "--lessons")  # what the message says to pass instead
