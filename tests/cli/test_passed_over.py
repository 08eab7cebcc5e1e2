"""`record --lessons` naming a lesson the session's selection passed over (a candidate it did not choose): gptme's
mid-session auto-include ends up there when a hook passes what gptme included. The record is written as given (a
hook's write is never refused into loss), says so in one line with the remedy (--during), and `lint` lists such
sessions; the log reads the lesson as included during the session (core/log/unchosen.py). Before, nothing said it,
and the estimates read it as chosen before, the IPW lift at the draw's P(chosen) as if the draw had chosen it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli.cli_fixtures import make_ws
from tests.support.cli_run import run_cli

GIT, QUOTE, BASH = "tools/git.md", "style/quote.md", "tools/bash.md"
LESSONS = {GIT: ["git"], QUOTE: ["quote"], BASH: ["bash"]}


def _selected(tmp_path: Path) -> tuple[Path, list[str]]:
    """A workspace whose session p1 was selected with k 1 among GIT and QUOTE (BASH: no candidate); the choice."""
    root = make_ws(tmp_path, lessons=LESSONS, events=[], journals={"j.md": "a git rebase; quote the bash glob"})
    (root / "ctx.txt").write_text("a git rebase, quote it", encoding="utf-8")
    code, out, err = run_cli("select", "-w", str(root), "--k", "1", "--seed", "2", "--session-id", "p1",
                             "--context", str(root / "ctx.txt"))  # fmt: skip
    assert code == 0, err
    return root, out.split()


def _log(root: Path) -> list[dict[str, Any]]:
    path = root / "state" / "lesson-thompson" / "sessions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_record_writes_a_lesson_the_selection_passed_over_says_so_and_lint_lists_the_session(tmp_path: Path) -> None:
    root, chosen = _selected(tmp_path)
    (passed,) = {GIT, QUOTE} - set(chosen)  # the candidate the draw passed over
    argv = ["record", "-w", str(root), "--session-id", "p1", "--journal", str(root / "j.md"), "--reward", "0.5"]
    code, _, err = run_cli(*argv, "--lessons", *chosen, passed, BASH)
    assert code == 0, err
    (said,) = [line for line in err.splitlines() if "passed over" in line]
    assert said == (
        f"warning: session 'p1': its selection passed over '{passed}'; logged, and read as included during the "
        "session, as --during marks it (the effect estimates do not count it as injected): pass a lesson pulled in "
        "mid-session with --during"
    )  # BASH was no candidate: the draw made no decision about it, and it is not named
    session = _log(root)[-1]
    assert [e["path"] for e in session["lessons"]] == [*chosen, passed, BASH]  # written as given, in its order
    assert [e.get("included") for e in session["lessons"]] == ["before", None, None]
    code, out, err = run_cli("lint", "-w", str(root), "--json")
    found = {f["code"]: f for f in json.loads(out)["findings"]}
    assert found["recorded-passed-over"]["items"] == [{"item": "p1", "reason": passed}], out
    assert found["recorded-passed-over"]["severity"] == "warning"


def test_the_same_lesson_given_with_during_is_marked_and_nothing_is_said(tmp_path: Path) -> None:
    root, chosen = _selected(tmp_path)
    (passed,) = {GIT, QUOTE} - set(chosen)
    argv = ["record", "-w", str(root), "--session-id", "p1", "--journal", str(root / "j.md"), "--reward", "0.5"]
    code, _, err = run_cli(*argv, "--lessons", *chosen, "--during", passed)
    assert code == 0, err
    assert "passed over" not in err
    assert [e.get("included") for e in _log(root)[-1]["lessons"]] == ["before", "during"]
    code, out, err = run_cli("lint", "-w", str(root), "--json")
    assert "recorded-passed-over" not in {f["code"] for f in json.loads(out)["findings"]}
