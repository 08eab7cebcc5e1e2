"""A lesson included during a session (`record --during`: gptme pulled it in mid-session) is credited as the
others, but the effect estimates never count it as a treatment. `record`, `show` and `explain` say which lessons
were, in one line under their credit table, and their --json marks each lesson's `during`: the log's mark was
shown nowhere, so the lesson read as one chosen before the session while `loo` counted the session without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws
from tests.support.cli_run import run_cli, run_cli_on_terminal

GIT, QUOTE, BASH = "tools/git.md", "style/quote.md", "tools/bash.md"
LINE = "included during the session (record --during), not chosen before it: "


def _recorded(tmp_path: Path, *during: str) -> tuple[Path, str]:
    """A workspace with one session, GIT chosen before it and `during` pulled in; record's piped answer."""
    lessons = {GIT: ["git"], QUOTE: ["quote"], BASH: ["bash"]}
    root = make_ws(tmp_path, lessons=lessons, events=[], journals={"j.md": "a git rebase; quote the bash glob"})
    argv = ["record", "-w", str(root), "--session-id", "d1", "--journal", str(root / "j.md"), "--lessons", GIT]
    code, out, err = run_cli(*argv, "--during", *during, "--reward", "0.8")
    assert code == 0, err
    return root, out


def _during_lines(out: str) -> list[str]:
    """The line that names the lessons included during the session, its wrapped rest joined."""
    lines = out.split("\n")
    at = [i for i, line in enumerate(lines) if line.startswith("included during")]
    return [" ".join([lines[i], *(r.strip() for r in _continued(lines[i + 1 :]))]) for i in at]


def _continued(rest: list[str]) -> list[str]:
    out = []
    for line in rest:
        if not line.startswith("  ") or line.startswith("  hit") or line.startswith("  miss"):
            break
        out.append(line)
    return out


def test_record_show_and_explain_name_the_lessons_included_during_the_session(tmp_path: Path) -> None:
    root, recorded = _recorded(tmp_path, QUOTE, BASH)
    code, shown, err = run_cli("show", "d1", "-w", str(root))
    assert code == 0, err
    code, explained, err = run_cli("explain", "d1", "-w", str(root))
    assert code == 0, err
    for out in (recorded, shown, explained):
        (said,) = _during_lines(out)
        assert said.startswith(LINE + f"{QUOTE}, {BASH}"), out  # in the session's order; GIT not named
        assert GIT not in said
    # they are credited as the others: seed, floor 0.3, salience 1 (one keyword, hit): w = 1, 0.8 credited each
    row = next(line for line in shown.split("\n") if line.startswith(QUOTE))
    assert row.split()[1:4] == ["1.000", "1.000", "0.800"], shown


def test_json_marks_each_lesson_included_during_the_session(tmp_path: Path) -> None:
    root, _ = _recorded(tmp_path, QUOTE)
    for command in ("show", "explain"):
        code, out, err = run_cli(command, "d1", "-w", str(root), "--json")
        assert code == 0, err
        assert [(c["path"], c["during"]) for c in json.loads(out)["lessons"]] == [(GIT, False), (QUOTE, True)]
    # the log's mark, read a second way
    (event,) = [json.loads(line) for line in (root / "state/lesson-thompson/sessions.jsonl").read_text().splitlines()]
    assert [e.get("included") for e in event["lessons"]] == [None, "during"]


def test_a_session_with_nothing_included_during_it_has_no_such_line(tmp_path: Path) -> None:
    root, recorded = _recorded(tmp_path)
    code, shown, _ = run_cli("show", "d1", "-w", str(root))
    assert code == 0
    assert "included during" not in recorded + shown


def test_the_line_fits_a_terminal_of_80_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)  # -w ws: the paths it says (the records file looked in) short
    _recorded(tmp_path, QUOTE, BASH)
    code, out, err = run_cli_on_terminal("show", "d1", "-w", "ws")
    assert code == 0, err
    credit = out[out.index("credit of grade") :]  # (above it, the records file's path is said whole)
    assert max(len(line) for line in credit.split("\n")) <= 80, out
    (said,) = _during_lines(out)
    assert said.startswith(LINE + f"{QUOTE}, {BASH}")


def test_a_lesson_given_both_before_and_during_the_session_is_refused_saying_so(tmp_path: Path) -> None:
    """A hook passing `--lessons-file selected.txt --during X` with X in the file (no select logged) was told
    `lesson given twice: X`, as for one listed twice in the file; it says the lesson was given as both now.
    Nothing is logged."""
    root, _ = _recorded(tmp_path)
    log = (root / "state/lesson-thompson/sessions.jsonl").read_bytes()
    argv = ["record", "-w", str(root), "--session-id", "d2", "--journal", str(root / "j.md")]
    code, out, err = run_cli(*argv, "--lessons", GIT, QUOTE, "--during", QUOTE, "--reward", "0.5")
    assert (code, out) == (1, "")
    assert err == (
        f"lesson-credit: given both as chosen before the session and as included during it (--during): {QUOTE}\n"
    )
    code, _, err = run_cli(*argv, "--lessons", GIT, GIT, "--reward", "0.5")  # twice in one list: as before
    assert (code, err) == (1, f"lesson-credit: lesson given twice: {GIT}\n")
    assert (root / "state/lesson-thompson/sessions.jsonl").read_bytes() == log


def test_explain_of_a_lesson_not_in_the_session_says_which_of_its_lessons_were_included_during_it(
    tmp_path: Path,
) -> None:
    """`explain ID --lesson X` for a lesson the session lacks listed the lessons included during the session among
    "its lessons" as if chosen before it: they are named apart, as `show` names them."""
    lessons = {GIT: ["git"], QUOTE: ["quote"], BASH: ["bash"], "idle.md": ["idle"]}
    root = make_ws(tmp_path, lessons=lessons, events=[], journals={"j.md": "a git rebase; quote the bash glob"})
    argv = ["record", "-w", str(root), "--session-id", "d1", "--journal", str(root / "j.md"), "--lessons", GIT]
    assert run_cli(*argv, "--during", QUOTE, "--reward", "0.8")[0] == 0
    code, out, err = run_cli("explain", "d1", "-w", str(root), "--lesson", "idle.md")
    assert (code, out) == (1, "")
    said = f"lesson 'idle.md' was not injected in session 'd1'; its lessons: {GIT} (included during it: {QUOTE})"
    assert err == f"lesson-credit: {said}\n"


def test_explain_of_a_lesson_not_in_a_session_of_only_lessons_included_during_it_says_so(tmp_path: Path) -> None:
    lessons = {GIT: ["git"], QUOTE: ["quote"], "idle.md": ["idle"]}
    root = make_ws(tmp_path, lessons=lessons, events=[], journals={"j.md": "quote"})
    argv = ["record", "-w", str(root), "--session-id", "d1", "--journal", str(root / "j.md"), "--lessons"]
    assert run_cli(*argv, "--during", QUOTE, GIT, "--reward", "0.8")[0] == 0
    code, _, err = run_cli("explain", "d1", "-w", str(root), "--lesson", "idle.md")
    said = "lesson 'idle.md' was not injected in session 'd1'; its lessons, all included during it: "
    assert (code, err) == (1, f"lesson-credit: {said}{QUOTE}, {GIT}\n")  # in the session's order
