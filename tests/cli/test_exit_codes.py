"""Exit codes of a wrong command line against bad input: a usage error (an unknown command, option or
choice; an option's value out of its form or range) exits 2 with the command's usage, as argparse's own
errors do, before anything is read; what a command is given to act on (a reward to log, a session id,
a file) and cannot use exits 1 with one line. Nothing is written either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_fixtures import log_bytes, make_ws, run, session

GIT = "tools/git.md"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_ws(tmp_path, lessons={GIT: ["git"]}, events=[session("s1", None, {GIT: 1.0})])


@pytest.mark.parametrize(
    ("argv", "prog", "needle"),
    [
        (["nonsense"], "lesson-credit", "unknown command 'nonsense' (lesson-credit --help lists the commands)"),
        (["help", "nonsense"], "lesson-credit help", "unknown command 'nonsense' (lesson-credit --help lists"),
        (["help", "stauts"], "lesson-credit help", "unknown command 'stauts'; did you mean 'status'?"),
        (["sessions", "--order", "bogus"], "lesson-credit sessions", "invalid choice: 'bogus'"),
        (["sessions", "--sort", "bogus"], "lesson-credit sessions", "cannot sort by 'bogus'"),
        (["sessions", "--sort", "reward:up"], "lesson-credit sessions", "asc or desc"),
        (["sessions", "--since", "yesterday"], "lesson-credit sessions", "not a time: 'yesterday'"),
        (["sessions", "--until", "soon"], "lesson-credit sessions", "not a time: 'soon'"),
        (["sessions", "--min-reward", "x"], "lesson-credit sessions", "reward must be a number"),
        (["sessions", "--max-reward", "1.5"], "lesson-credit sessions", "reward must be in [0, 1]"),
        (["replay", "--floor", "2"], "lesson-credit replay", "floor must be in [0, 1]"),
        (["select", "--context", "-", "--policy", "bogus"], "lesson-credit select", "invalid choice: 'bogus'"),
        (["replay", "--priority", "judge,robot"], "lesson-credit replay", "unknown reward source 'robot'"),
        (["simulate", "--noise", "-1", "--seeds", "1"], "lesson-credit simulate", "noise must be"),
        (["simulate", "--noise", "x"], "lesson-credit simulate", "invalid float value"),
    ],
)
def test_a_wrong_command_line_exits_2_with_its_usage(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], prog: str, needle: str
) -> None:
    before = log_bytes(ws)
    with pytest.raises(SystemExit) as info:
        run(capsys, *argv, "-w", str(ws))
    out, err = capsys.readouterr()
    assert (info.value.code, out) == (2, ""), err
    lines = err.splitlines()
    if argv[0] == "select":  # (its stderr's lines are comments when it is not a terminal: a hook's `2>&1` file)
        assert all(line.startswith("# ") for line in lines), err
        lines = [line.removeprefix("# ") for line in lines]
    assert lines[0].startswith(f"usage: {prog} "), err
    assert lines[-1].startswith(f"{prog}: error: ") and needle in lines[-1], err
    assert log_bytes(ws) == before


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["statsu"], "lesson-credit: error: unknown command 'statsu'; did you mean 'status'?"),
        (["-w", ".", "recrod"], "lesson-credit: error: unknown command 'recrod'; did you mean 'record'?"),
        (["--agent", "a", "hlep"], "lesson-credit: error: unknown command 'hlep'; did you mean 'help'?"),
    ],
)
def test_a_mistyped_command_names_the_nearest_in_one_short_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    """argparse's own line listed all twenty commands (250 characters) and named none of them."""
    with pytest.raises(SystemExit) as info:
        run(capsys, *argv)
    err = capsys.readouterr().err.splitlines()
    assert info.value.code == 2
    assert err[-1] == line + " (lesson-credit --help lists the commands)"
    assert len(err[-1]) <= 120 and not any("choose from" in x for x in err)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["grade", "s1", "2"], "reward must be in [0, 1]"),  # the value to log: data, not the command line
        (["grade", "s1", "abc"], "got 'abc'"),
        (["grade", "nope", "0.5"], "unknown session 'nope'"),
        (["sessions", "--lesson", "tools/nope.md"], "neither in the library nor in the log"),
        (["select", "--context", "missing.txt", "--dry-run"], "context file not found"),
    ],
)
def test_bad_input_exits_1_with_one_line(
    ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    before = log_bytes(ws)
    code, out, err = run(capsys, *argv, "-w", str(ws))
    assert (code, out) == (1, ""), err
    start = "# lesson-credit: " if argv[0] == "select" else "lesson-credit: "  # (select's stderr: # comments)
    assert len(err.splitlines()) == 1 and err.startswith(start) and needle in err, err
    assert log_bytes(ws) == before


def test_a_record_naming_a_lesson_whose_file_is_not_loaded_says_why(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lesson file over the 1 MB a lesson is read to is skipped by the library (lint's broken-lessons says so); a
    record naming it said only "not in the lesson library", as for a name that is no file at all."""
    big = ws / "lessons" / "tools" / "big.md"
    big.write_text("---\nmatch:\n  keywords: [git]\n---\n# Big\n" + "x" * (1 << 20), encoding="utf-8")
    (ws / "j.md").write_text("git worktree\n", encoding="utf-8")
    before = log_bytes(ws)
    argv = ["record", "-w", str(ws), "--journal", "j.md", "--lessons", "tools/big.md", "--reward", "0.5"]
    code, out, err = run(capsys, *argv, "--session-id", "s9")
    said = f"tools/big.md (its file {big} is not loaded: larger than 1 MB; not read)"
    assert (code, out, err) == (1, "", f"lesson-credit: not in the lesson library: {said}\n")
    assert log_bytes(ws) == before


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("git.md", "git.md (did you mean tools/git.md?)"),  # its file name: other commands take it, a record not
        ("git", "git (did you mean tools/git.md?)"),
        ("tools/gti.md", "tools/gti.md (did you mean tools/git.md?)"),  # a slip of the keys
        ("tools/zebra.md", "tools/zebra.md"),  # nothing near it
        ("gitt", "gitt (did you mean tools/git.md?)"),  # a file name alone, mistyped
        ("tools/git.md,tools/x.md", "tools/git.md,tools/x.md (lesson ids are separated by spaces, not commas)"),
    ],
)
def test_a_record_naming_no_lesson_says_which_it_may_have_meant(
    ws: Path, capsys: pytest.CaptureFixture[str], given: str, said: str
) -> None:
    (ws / "j.md").write_text("git worktree\n", encoding="utf-8")
    before = log_bytes(ws)
    argv = ["record", "-w", str(ws), "--journal", "j.md", "--lessons", given, "--reward", "0.5", "--session-id", "s9"]
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (1, "", f"lesson-credit: not in the lesson library: {said}\n")
    assert log_bytes(ws) == before


def test_selects_policy_choices_are_the_engines() -> None:
    from lesson_credit.cli.commands.selection import POLICIES as CHOICES
    from lesson_credit.core.bandit.policy import POLICIES

    assert CHOICES == POLICIES
