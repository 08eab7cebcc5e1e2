"""What a new user of the command trips on first: counts that disagree with their noun."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import STATE_DIR
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import make_workspace, session

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
    assert ": 1 of 1 matching lesson (seed" in err, err
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
    assert out.splitlines()[-1].startswith("1 error, 1 warning; failing on errors"), out
