"""One undo, two faces: `lesson-credit undo SESSION --grader G` and the dashboard's `u` (its operator G) run
through the same table of cases, each case's outcome worked by hand. An undo takes back the undoer's own
latest grade not undone yet: never another grader's (the judge's, erik's), which only they undo; a grade of
another source given since (the judge's over a person's) stays, and the priority decides what is in force;
a grade of the same source given since by someone else (erik's over manual's) refuses it, as the undo would
withdraw theirs too. Before, the CLI undid whatever grade came last (the judge's, erik's, logged under their
names as a grade they never gave) where the dashboard refused, and the dashboard refused to undo the
operator's grades given before it started, or a retraction."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.writes import WriteQueue
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, grade, make_workspace, session

LESSONS = {"a.md": (["alpha"], "active")}
RECORDS = Path("state/sessions/session-records.jsonl")
NOTHING, SINCE = "nothing to undo", "since"  # a refusal: nothing of the undoer's left / replaced since


@dataclass(frozen=True)
class Case:
    name: str
    given: list[tuple[float | None, str]]  # grades logged in order: the undoer's typed at the dashboard
    undos: list[tuple[float | None, str | None]]  # per undo: the score in force after it, and the refusal word
    undoer: str = "manual"
    before: list[tuple[float | None, str]] = field(default_factory=list)  # logged before the dashboard started
    record_judge: float | None = None  # a gptme-sessions record's llm_judge_score for the session


CASES = [
    # your 0.5, your 0.3: undo -> 0.5 (the first undo is not undone by the second), undo -> pending, refused
    Case("undo twice walks back", [(0.5, "manual"), (0.3, "manual")], [(0.5, None), (None, None), (None, NOTHING)]),
    # your 0.7, then the judge's 0.58 (human first: 0.7 in force): undo withdraws yours, the judge's 0.58 counts;
    # the judge's is not yours: refused
    Case("the judge graded over you", [(0.7, "manual"), (0.58, "judge")], [(0.58, None), (0.58, NOTHING)]),
    # erik's 0.4 alone: not yours to undo
    Case("another person's grade", [(0.4, "erik")], [(0.4, NOTHING)]),
    # your 0.7, erik's 0.4 over it (the same source, erik's in force): undoing yours would withdraw erik's
    Case("another person graded over you", [(0.7, "manual"), (0.4, "erik")], [(0.4, SINCE)]),
    # your 0.7, erik's 0.7 over it (the same score, so it changed nothing in force; still erik's grade): refused
    Case("another person graded the same over you", [(0.7, "manual"), (0.7, "erik")], [(0.7, SINCE)]),
    # the judge undoes the judge's: 0.58 withdrawn, your 0.7 stays; the next judge undo finds nothing
    Case("--grader judge", [(0.7, "manual"), (0.58, "judge")], [(0.7, None), (0.7, NOTHING)], undoer="judge"),
    # your 0.7 then your retraction (pending), both before the dashboard started: undo the retraction -> 0.7,
    # undo the 0.7 -> pending, then nothing
    Case("a retraction", [], [(0.7, None), (None, None), (None, NOTHING)], before=[(0.7, "manual"), (None, "manual")]),
    # the record's judge 0.3 under your 0.7: undo -> the record's 0.3 again; the record's own score is no grade
    Case("over a record's judge", [(0.7, "manual")], [(0.3, None), (0.3, NOTHING)], record_judge=0.3),
    # the judge's logged 0.5 over the record's 0.3: the judge undoes it -> the record's 0.3 again
    Case("a record's judge regraded", [(0.5, "judge")], [(0.3, None), (0.3, NOTHING)], "judge", record_judge=0.3),
]


def _root(tmp_path: Path, case: Case, name: str) -> Path:
    events = [session("s1", None, {"a.md": 1.0}), *(grade("s1", v, g) for v, g in case.before)]
    root = make_workspace(tmp_path, LESSONS, events, name=name)
    if case.record_judge is not None:
        (root / RECORDS).parent.mkdir(parents=True, exist_ok=True)
        (root / RECORDS).write_text(json.dumps({"session_id": "s1", "llm_judge_score": case.record_judge}) + "\n")
    return root


def _events(root: Path) -> list[dict[str, Any]]:
    """The log's grade events without their times (the two faces write at different moments)."""
    lines = [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()[1:]]
    return [{k: v for k, v in event.items() if k != "timestamp"} for event in lines]


def _cli(root: Path, case: Case) -> list[tuple[float | None, str | None]]:
    ws = Workspace(root)
    for value, grader in case.given:
        ws.append_grade("s1", value, grader=grader)
    seen: list[tuple[float | None, str | None]] = []
    for _ in case.undos:
        log = (root / LOG_REL).read_bytes()
        code, _out, err = run_cli("undo", "s1", "--grader", case.undoer, "--workspace", str(root))
        refusal = None
        if code != 0:
            assert (root / LOG_REL).read_bytes() == log and len(err.strip().splitlines()) == 1, err
            refusal = next((word for word in (NOTHING, SINCE) if word in err.lower()), err)
        seen.append((Workspace(root).session("s1").base_reward, refusal))
    return seen


def _dashboard(root: Path, case: Case) -> list[tuple[float | None, str | None]]:
    ws, queue = Workspace(root), WriteQueue(operator=case.undoer)
    for value, grader in case.given:
        if grader == case.undoer:  # typed here: `c` on the session
            assert value is not None
            queue.commit("s1", value, None, ws.session("s1").base_reward)
            write = queue.take()
            assert write is not None and queue.apply(ws, write).written  # type: ignore[arg-type]  # has what apply asks
        else:  # logged by another process meanwhile
            ws.append_grade("s1", value, grader=grader)
    seen: list[tuple[float | None, str | None]] = []
    for _ in case.undos:
        log = (root / LOG_REL).read_bytes()
        write = queue.undo("s1")  # `u`
        refusal: str | None = NOTHING  # (None: the dashboard had nothing to queue)
        if write is not None:
            assert queue.take() is write
            outcome = queue.apply(ws, write)  # type: ignore[arg-type]  # the workspace has what apply asks
            refusal = None if outcome.written else next(w for w in (NOTHING, SINCE) if w in outcome.message.lower())
        if refusal is not None:
            assert (root / LOG_REL).read_bytes() == log
        seen.append((Workspace(root).session("s1").base_reward, refusal))
    return seen


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_cli_and_the_dashboard_undo_alike(tmp_path: Path, case: Case) -> None:
    cli_root, tui_root = _root(tmp_path, case, "cli"), _root(tmp_path, case, "tui")
    assert _cli(cli_root, case) == case.undos
    assert _dashboard(tui_root, case) == case.undos
    assert _events(cli_root) == _events(tui_root)  # the same events: values, graders, notes
