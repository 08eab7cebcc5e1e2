"""`lesson-credit undo`: the dashboard's `u` from the command line. A grade typed by mistake (by hand or by a
hook) could only be overwritten by another grade; a session could not go back to pending, nor to the
judge's score its record gives."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, grade, make_workspace, session

LESSONS = {"a.md": (["git"], "active"), "b.md": (["pytest"], "active")}


def _status(root: Path) -> dict[str, tuple[float, float, int]]:
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    return {r["path"]: (round(r["alpha"], 9), round(r["beta"], 9), r["n"]) for r in json.loads(out)["lessons"]}


def test_undo_walks_grades_back_to_pending_and_says_so(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0, "b.md": 0.5})])
    pending = _status(root)
    assert run_cli("grade", "s1", "0.8", "--workspace", str(root))[0] == 0
    assert run_cli("grade", "s1", "0.2", "--workspace", str(root))[0] == 0
    code, out, err = run_cli("undo", "s1", "--workspace", str(root))
    assert code == 0, err
    assert out.startswith("s1: undid manual's grade on line 3: 0.2 back to 0.8\n"), out  # lines: s1, 0.8, 0.2
    # by hand, seed, floor 0.3: a.md w 1, r 0.8 -> Beta(1.8, 1.2); b.md w 0.3 + 0.7 x 0.5 = 0.65,
    # r 0.52 -> Beta(1.52, 1.48)
    assert _status(root) == {"a.md": (1.8, 1.2, 1), "b.md": (1.52, 1.48, 1)}
    code, out, err = run_cli("undo", "s1", "--workspace", str(root), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["undo"]["note"] == "undid manual's grade on line 2: 0.8 back to pending"
    assert [g["base_reward"] for g in payload["history"]] == [0.8, 0.2, 0.8, None]
    assert _status(root) == pending  # the second way: the numbers before any grade
    log = (root / LOG_REL).read_bytes()
    code, out, err = run_cli("undo", "s1", "--workspace", str(root))
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1 and "nothing to undo" in err
    assert (root / LOG_REL).read_bytes() == log  # refused: nothing written


def test_undo_of_someone_elses_grade_is_refused_saying_whose_it_is(tmp_path: Path) -> None:
    """erik's undo reverted the judge's grade (logged as the judge's, "erik undid judge's grade"), where the
    dashboard's u refused: an undo takes back its grader's own grades only, and says who can undo this one."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    assert run_cli("grade", "s1", "0.9", "--grader", "judge", "--workspace", str(root))[0] == 0
    log = (root / LOG_REL).read_bytes()
    code, out, err = run_cli("undo", "s1", "--grader", "erik", "--workspace", str(root))
    assert (code, out) == (1, "") and (root / LOG_REL).read_bytes() == log
    assert err == (
        "lesson-credit: nothing to undo: erik has no grade on session 's1' left (the latest, judge's 0.9 on line 2, "
        "is theirs to undo); they undo it with: lesson-credit undo s1 --grader judge\n"
    )
    code, out, err = run_cli("undo", "s1", "--grader", "judge", "--workspace", str(root))
    assert code == 0, err
    assert out.startswith("s1: undid judge's grade on line 2: 0.9 back to pending\n"), out


def test_undo_back_to_pending_shows_no_reward_as_show_does(tmp_path: Path) -> None:
    """Back to pending nothing is credited: the reward column says "-", as `show` says it, not 0.000 (a grade
    of 0 would credit 0.000 too, with beta +1), and so do alpha and beta (they said +0.000)."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    assert run_cli("grade", "s1", "0.8", "--workspace", str(root))[0] == 0
    code, out, err = run_cli("undo", "s1", "--workspace", str(root))
    assert code == 0, err
    row = next(line.split() for line in out.splitlines() if line.startswith("a.md"))
    # lesson, salience, reward, alpha, beta, mean now: pending, the prior Beta(1, 1)'s mean
    assert row == ["a.md", "1.000", "-", "-", "-", "0.500"]
    code, out, err = run_cli("show", "s1", "--workspace", str(root))
    assert code == 0, err
    shown = next(line.split() for line in out.splitlines() if line.startswith("a.md"))
    assert shown[3:] == ["-", "-", "-"]  # lesson, salience, weight, reward, alpha, beta: the same words


def test_a_grade_another_source_outranks_says_what_stays_in_force(tmp_path: Path) -> None:
    """`grade --grader judge` on a session a person graded logs the judge's score, but the person's stays in
    force (human comes first in the priority): the headline said "0.4 -> 0.9" over a table credited with 0.4."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    assert run_cli("grade", "s1", "0.4", "--workspace", str(root))[0] == 0
    code, out, err = run_cli("grade", "s1", "0.9", "--grader", "judge", "--workspace", str(root))
    assert code == 0, err
    assert out.startswith(
        "graded s1: judge 0.900 logged; 0.400 (manual) stays in force [priority: human, judge, heuristic, outcome]\n"
    ), out
    # the table is the grade in force's: a.md w 1, r 0.4 -> Beta(1.4, 1.6), mean 0.467
    row = next(line.split() for line in out.splitlines() if line.startswith("a.md"))
    assert row == ["a.md", "1.000", "0.400", "+0.400", "+0.600", "0.467"]
    # a source the priority leaves out scores nothing: the session stays pending
    (root / "state" / "lesson-thompson" / "config.toml").write_text('[rewards]\npriority = ["judge"]\n')
    code, out, err = run_cli("grade", "s1", "0.2", "--workspace", str(root))
    assert code == 0, err
    assert out.startswith("graded s1: manual 0.200 logged; 0.900 (judge) stays in force [priority: judge]\n"), out
    (root / "state" / "lesson-thompson" / "config.toml").write_text('[rewards]\npriority = ["heuristic"]\n')
    code, out, err = run_cli("grade", "s1", "0.3", "--workspace", str(root))
    assert code == 0, err
    assert out.startswith("graded s1: manual 0.300 logged; the session stays pending [priority: heuristic]\n"), out


def test_undo_under_another_graders_grade_says_that_one_stays(tmp_path: Path) -> None:
    # a hook written when `undo` took back the latest grade (the judge's) now withdraws manual's: the line says
    # whose grade was undone and that the judge's, in force, stays, and how the judge's is undone
    events = [session("s1", None, {"a.md": 1.0}), grade("s1", 0.7, "manual"), grade("s1", 0.58, "judge")]
    root = make_workspace(tmp_path, LESSONS, events)
    code, out, err = run_cli("undo", "s1", "--workspace", str(root))
    assert code == 0, err
    assert out.splitlines()[0] == (
        "s1: undid manual's grade on line 2: 0.7 back to 0.58 (judge); judge's 0.58 on line 3 stays: "
        "lesson-credit undo s1 --grader judge undoes it"
    ), out


def test_undo_after_anothers_undo_says_no_grade_of_theirs_stays(tmp_path: Path) -> None:
    """manual 0.9, erik 0.3 over it, erik's undo (logged as erik's 0.9: manual's score back), then manual's undo:
    the line said "erik's 0.9 on line 4 stays: lesson-credit undo s1 --grader erik undoes it", though that event is
    erik's undo (a score erik never gave) and erik has nothing left to undo. No grade of another stays above the
    one undone: the line says only what was undone."""
    events = [session("s1", None, {"a.md": 1.0}), grade("s1", 0.9, "manual"), grade("s1", 0.3, "erik")]
    root = make_workspace(tmp_path, LESSONS, events)
    assert run_cli("undo", "s1", "--grader", "erik", "--workspace", str(root))[0] == 0
    code, out, err = run_cli("undo", "s1", "--workspace", str(root))
    assert code == 0, err
    assert out.splitlines()[0] == "s1: undid manual's grade on line 2: 0.9 back to pending", out
    code, _, err = run_cli("undo", "s1", "--grader", "erik", "--workspace", str(root))
    assert code == 1 and "erik's grades on session 's1' are undone already" in err, err
