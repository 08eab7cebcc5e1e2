"""Atomic undo of a grade, ids on problems, and explain's exact credit increments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.fold import CreditSettings
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.grading import NothingToUndo
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, fixed_clock, grade, log_bytes, make_workspace, session

LESSONS = {"a.md": (["alpha"], "active"), "b.md": (["beta"], "active")}


def test_undo_appends_the_previous_grade_back(tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path, LESSONS, [session("s1", 0.4, {"a.md": 1.0}), grade("s1", 0.9, "judge"), grade("s1", 0.7, "judge")]
    )
    ws = Workspace(root, clock=fixed_clock)
    record = ws.undo_grade("s1", grader="judge")
    # history 0.4 (record, line 1), 0.9 (judge, line 2), 0.7 (judge, line 3): the judge's undo puts its 0.9
    # back, logged at line 4 in the judge's source (docs/records.md)
    assert (record.base_reward, record.grader, record.line) == (0.9, "judge", 4)
    assert record.note == "undid judge's grade on line 3: 0.7 back to 0.9"
    assert Workspace(root).session("s1").base_reward == 0.9
    # a: seed, floor 0.3, salience 1 -> w 1: alpha = 1 + 0.9 = 1.9, beta = 1 + 0.1 = 1.1 (counted once)
    row = Workspace(root).lesson_table().row("a.md")
    assert row is not None and (round(row.alpha, 12), round(row.beta, 12), row.n) == (1.9, 1.1, 1)


def test_undo_keeps_the_callers_note_and_refuses_another_graders_grade(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", 0.4, {"a.md": 1.0}), grade("s1", 0.9, "judge")])
    with pytest.raises(NothingToUndo, match="judge's 0.9 on line 2, is theirs to undo") as refused:
        Workspace(root).undo_grade("s1", grader="alice")  # the judge's grade is not alice's to undo
    assert refused.value.other == "judge"
    record = Workspace(root, clock=fixed_clock).undo_grade("s1", grader="judge", note="misclick")
    # the judge had no score before line 2: its source is withdrawn, and the record's own 0.4 (the
    # heuristic's) is in force again, as before the judge graded
    assert (record.base_reward, record.grader, record.line) == (None, "judge", 3)
    assert record.note == "undid judge's grade on line 2: 0.9 back to 0.4 (heuristic); misclick"
    assert Workspace(root).session("s1").base_reward == 0.4


def test_an_undo_note_names_the_source_in_force_after_when_it_is_another(tmp_path: Path) -> None:
    # the judge scored 0.6 (line 2), a person graded 0.6 too (line 3): undoing the person's grade puts
    # the judge's 0.6 back in force (human before judge in the default priority); "0.6 back to 0.6"
    # read as if nothing had changed
    events = [session("s1", 0.4, {"a.md": 1.0}), grade("s1", 0.6, "judge"), grade("s1", 0.6)]
    root = make_workspace(tmp_path, LESSONS, events)
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.grader, record.note) == (
        None,
        "manual",
        "undid manual's grade on line 3: 0.6 back to 0.6 (judge)",
    )
    # undoing the judge's next: the record's own 0.4 (the heuristic's) is in force
    record = Workspace(root, clock=fixed_clock).undo_grade("s1", grader="judge")
    assert record.note == "undid judge's grade on line 2: 0.6 back to 0.4 (heuristic)"
    # the person's grade over the person's: no source named (the same one)
    root = make_workspace(
        tmp_path / "b", LESSONS, [session("s1", None, {"a.md": 1.0}), grade("s1", 0.3), grade("s1", 0.7)]
    )
    assert Workspace(root, clock=fixed_clock).undo_grade("s1").note == "undid manual's grade on line 3: 0.7 back to 0.3"
    with pytest.raises(WorkspaceError, match="grader"):
        Workspace(root).undo_grade("s1", grader="")


def test_undo_restores_the_score_in_force_whatever_came_between(tmp_path: Path) -> None:
    # a person 0.5, the judge 0.3, the person 0.8: human first, so 0.8 is in force, and 0.5 before it.
    # Undoing line 4 puts the person's 0.5 back (not the judge's 0.3, the event just before it)
    events = [session("s1", None, {"a.md": 1.0}), grade("s1", 0.5), grade("s1", 0.3, "judge"), grade("s1", 0.8)]
    root = make_workspace(tmp_path, LESSONS, events)
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.grader, record.note) == (
        0.5,
        "manual",
        "undid manual's grade on line 4: 0.8 back to 0.5",
    )
    assert Workspace(root).session("s1").base_reward == 0.5


def test_undo_of_the_first_grade_of_a_pending_session_retracts_it(tmp_path: Path) -> None:
    # logged pending, then graded 0.6 at line 2: the undo is a retraction (docs/format.md §5.3), pending again
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0}), grade("s1", 0.6)])
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.grader, record.note) == (
        None,
        "manual",
        "undid manual's grade on line 2: 0.6 back to pending",
    )
    ws = Workspace(root)
    assert ws.session("s1").pending
    row = ws.lesson_table().row("a.md")  # no graded session: the prior Beta(1, 1), n 0
    assert row is not None and (row.alpha, row.beta, row.n) == (1.0, 1.0, 0)


@pytest.mark.parametrize("base", [None, 0.5])
def test_undo_refuses_when_there_is_nothing_to_undo(tmp_path: Path, base: float | None) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", base, {"a.md": 1.0})])
    before = log_bytes(root)
    with pytest.raises(WorkspaceError, match="nothing to undo"):
        Workspace(root).undo_grade("s1")
    with pytest.raises(WorkspaceError, match="unknown session"):
        Workspace(root).undo_grade("nope")
    assert log_bytes(root) == before


def test_problems_name_their_session_and_lesson(tmp_path: Path) -> None:
    root = make_workspace(
        tmp_path,
        LESSONS,
        [session("s1", 0.5, {"a.md": 1.0}), session("s1", 0.2, {"b.md": 0.0}), grade("ghost", 0.3)],
    )
    (root / "lessons" / "tools").mkdir()
    (root / "lessons" / "tools" / "broken.md").write_text("---\n- not a mapping\n---\n# B\n")
    ws = Workspace(root)
    by_line = {p.line: p for p in ws.log_problems()}
    assert by_line[2].session_id == "s1" and "duplicate" in by_line[2].reason
    assert by_line[3].session_id == "ghost" and "unknown session" in by_line[3].reason
    (problem,) = ws.lesson_problems()
    assert problem.lesson_id == "tools/broken.md"


@pytest.mark.parametrize("strategy", ["seed", "evidence", "uniform"])
def test_explain_gives_the_formula_increments_exactly(tmp_path: Path, strategy: str) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", 0.55, {"a.md": 0.5, "b.md": 0.0})])
    ws = Workspace(root)
    exp = ws.explain("s1", settings=CreditSettings(strategy=strategy), base_reward=0.75, with_journal=False)
    a, b = exp.lessons
    # w(a) = 0.3 + 0.7 * 0.5 = 0.65; w(b) = 0.3
    expected = {
        "seed": ((0.75 * 0.65, 1 - 0.75 * 0.65), (0.75 * 0.3, 1 - 0.75 * 0.3)),
        "evidence": ((0.65 * 0.75, 0.65 * 0.25), (0.3 * 0.75, 0.3 * 0.25)),
        "uniform": ((0.75, 0.25), (0.75, 0.25)),
    }[strategy]
    assert (a.alpha_delta, a.beta_delta) == pytest.approx(expected[0], abs=1e-15)
    assert (b.alpha_delta, b.beta_delta) == pytest.approx(expected[1], abs=1e-15)
    # the preview never touches the log, and after - before agrees with the increment
    assert a.alpha_after - a.alpha_before == pytest.approx(a.alpha_delta, abs=1e-12)
    pending = ws.explain("s1", base_reward=None, with_journal=False)
    assert pending.base_reward == 0.55  # no override: the logged grade


def test_the_dashboard_and_the_cli_write_grades_and_undo_notes_alike(tmp_path: Path) -> None:
    """one function writes a grade (and an undo, and a retraction), and an undo's
    note has one format whoever wrote it (the CLI's `:g` and the dashboard's fmt_grade differed: 1 vs 1.0)."""
    from lesson_credit.core.grading import undo_note
    from lesson_credit.tui.writes import WriteQueue

    cli_root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0}), grade("s1", 1.0)], name="cli")
    tui_root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})], name="tui")
    Workspace(cli_root, clock=fixed_clock).undo_grade("s1")  # undoes line 2, the 1.0

    class Source:  # what WriteQueue.apply asks of the dashboard's source: the workspace's one writer
        def __init__(self, ws: Workspace) -> None:
            self.append_grade, self.append_undo = ws.append_grade, ws.append_undo

    queue = WriteQueue()
    ws = Workspace(tui_root, clock=fixed_clock)
    commit = queue.commit("s1", 1.0, None, shown=None)  # logged at line 2
    assert queue.take() is commit
    queue.apply(Source(ws), commit)  # type: ignore[arg-type]  # a stand-in: apply uses append_grade only
    undo = queue.undo("s1")
    assert undo is not None and queue.take() is undo
    queue.apply(Source(ws), undo)  # type: ignore[arg-type]  # the same stand-in
    cli_last, tui_last = (json.loads((r / LOG_REL).read_text().splitlines()[-1]) for r in (cli_root, tui_root))
    assert cli_last == tui_last  # the same event: value, grader, timestamp and note
    assert tui_last["note"] == "undid manual's grade on line 2: 1.0 back to pending"
    assert undo_note(7, 0.725, None, whose="judge") == "undid judge's grade on line 7: 0.725 back to pending"
    assert undo_note(7, 0.5, 0.6, "judge", "manual") == "undid manual's grade on line 7: 0.5 back to 0.6 (judge)"


def test_a_grade_whose_state_file_fails_is_committed_with_a_warning(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    state = root / "state" / "lesson-thompson" / "bandit-state.json"
    (state / "held").mkdir(parents=True)
    ws = Workspace(root, clock=fixed_clock)
    appended = ws.append_grade("s1", 0.6, grader="manual")
    assert (appended.record.base_reward, appended.record.line, appended.before) == (0.6, 2, None)
    assert len(appended.warnings) == 1 and "bandit-state.json" in appended.warnings[0]
    retracted = ws.append_grade("s1", None, grader="manual", expect_line=2)
    assert retracted.record.base_reward is None and retracted.before_value == 0.6


# each case: the grades given, then the log's values after them as every undo appends them, worked by
# hand (an undo puts back the person's score before the grade it reverts, latest grade first; a grade
# equal to the person's score before it changed nothing and has nothing to undo)
UNDONE = [
    ((0.5, 0.3), [0.5, 0.3, 0.5, None]),
    ((0.5, 0.5), [0.5, 0.5, None]),
    ((0.2, 0.7, 0.4), [0.2, 0.7, 0.4, 0.7, 0.2, None]),
]


@pytest.mark.parametrize(("typed", "expected"), UNDONE)
def test_the_cli_and_the_dashboard_undo_the_same_grades_alike(
    tmp_path: Path, typed: tuple[float, ...], expected: list[float | None]
) -> None:
    """The same grades, then undo until there is nothing to undo, through `Workspace.undo_grade` (the
    CLI's) and through the dashboard's write queue, give the same log: each undo reverts the latest
    grade not undone yet, so undoing every grade walks back to pending. Before, a second CLI undo
    reverted the first undo (0.5, 0.3, undo, undo ended at 0.3, the dashboard at pending)."""
    from lesson_credit.tui.writes import WriteQueue

    events = [session("s1", None, {"a.md": 1.0})]
    cli_root = make_workspace(tmp_path, LESSONS, events, name="cli")
    tui_root = make_workspace(tmp_path, LESSONS, events, name="tui")
    cli = Workspace(cli_root, clock=fixed_clock)
    for value in typed:
        cli.append_grade("s1", value)
    for _ in range(len(typed) + 1):  # one more undo than grades: it finds nothing to undo
        try:
            cli.undo_grade("s1")
        except WorkspaceError as exc:
            assert "nothing to undo" in str(exc)
            break

    queue, ws = WriteQueue(), Workspace(tui_root, clock=fixed_clock)
    shown: float | None = None
    for value in typed:
        queue.commit("s1", value, None, shown)
        shown = value
    for _ in range(len(typed) + 1):  # `u` once more than grades: the last finds nothing to undo
        queue.undo("s1")
    while (write := queue.take()) is not None:
        queue.apply(ws, write)  # type: ignore[arg-type]  # the workspace has what apply asks of the source

    def logged(root: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (root / LOG_REL).read_text().splitlines()[1:]]

    cli_log, tui_log = logged(cli_root), logged(tui_root)
    assert [event["base_reward"] for event in cli_log] == expected
    assert cli_log == tui_log  # values, graders, notes, timestamps
    assert Workspace(cli_root).session("s1").pending and Workspace(tui_root).session("s1").pending


def test_an_undo_logged_before_the_log_was_numbered_anew_still_counts(tmp_path: Path) -> None:
    """An undo's note names the line of the grade it reverted as the log was numbered when it was written.
    Pushed into a database that holds other events (or merged after another log, or without its bad lines),
    the same events sit at other lines: the note's line then names another event. The undo still took the
    latest grade not undone yet off the stack, so undoing again walks on back to pending, as on the log
    it was written in. Before, the stale line left the undone grade on the stack: the next undo reverted
    it a second time, logging its score before again (0.9) instead of going back to pending."""
    own = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})], name="own")
    ws = Workspace(own, clock=fixed_clock)
    ws.append_grade("s1", 0.9)  # line 2
    ws.append_grade("s1", 0.5)  # line 3
    assert ws.undo_grade("s1").note == "undid manual's grade on line 3: 0.5 back to 0.9"  # line 4
    # another agent's three events first: s1's lines are 4 to 7, and the undo at 7 names line 3 (s0's grade)
    others = [session("s0", 0.2, {"b.md": 1.0}), grade("s0", 0.3), grade("s0", 0.4)]
    merged = make_workspace(tmp_path, LESSONS, [*others, *(log_bytes(own) or b"").splitlines(keepends=True)])
    for root, reverted in ((own, 2), (merged, 5)):  # the 0.9, at line 2 of its own log, line 5 after s0's
        record = Workspace(root, clock=fixed_clock).undo_grade("s1")
        assert (record.base_reward, record.note) == (
            None,
            f"undid manual's grade on line {reverted}: 0.9 back to pending",
        )
        after = Workspace(root)
        assert after.session("s1").pending
        row = after.lesson_table().row("a.md")  # no graded session of a.md left: the prior Beta(1, 1), n 0
        assert row is not None and (row.alpha, row.beta, row.n) == (1.0, 1.0, 0)
        with pytest.raises(WorkspaceError, match="nothing to undo"):
            Workspace(root).undo_grade("s1")


def test_a_grade_whose_note_begins_like_an_undo_note_is_a_grade(tmp_path: Path) -> None:
    """A person may type a note that begins as an undo's does. The grade is still a grade: undoing next
    reverts it. Before, it was read as an undo of the line its note named: that grade (the 0.4) left the
    stack, the 0.7 never joined it, and undo said there was nothing to undo with the 0.7 in force."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    ws = Workspace(root, clock=fixed_clock)
    ws.append_grade("s1", 0.4)  # line 2
    ws.append_grade("s1", 0.7, note="undo of line 2: I typed 0.4 for 0.7")  # line 3
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.note) == (0.4, "undid manual's grade on line 3: 0.7 back to 0.4")
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.note) == (None, "undid manual's grade on line 2: 0.4 back to pending")


def test_an_undo_merged_after_another_sources_grade_still_takes_its_own_grade_off(tmp_path: Path) -> None:
    """A person grades s1 and undoes it on one machine; the judge grades s1 on another; the logs are merged
    with the judge's grade between the person's and the undo. The undo reverted the person's grade (its
    grader's latest not undone), so the stack holds the judge's 0.8 alone: undoing next withdraws the judge's
    score and the session is pending. Before, the undo was taken for a grade (the top of the stack was the
    judge's), and the next undo reverted the undo: the person's 0.6 was back in force."""
    own = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})], name="own")
    ws = Workspace(own, clock=fixed_clock)
    ws.append_grade("s1", 0.6)  # line 2
    assert ws.undo_grade("s1").note == "undid manual's grade on line 2: 0.6 back to pending"  # line 3
    lines = (log_bytes(own) or b"").splitlines(keepends=True)
    judge = json.dumps(grade("s1", 0.8, grader="judge")).encode() + b"\n"
    merged = make_workspace(tmp_path, LESSONS, [lines[0], lines[1], judge, lines[2]])
    assert Workspace(merged).session("s1").base_reward == 0.8  # the judge's, the person's withdrawn
    with pytest.raises(WorkspaceError, match="judge's 0.8 on line 3, is theirs to undo"):  # manual's is undone
        Workspace(merged).undo_grade("s1")
    record = Workspace(merged, clock=fixed_clock).undo_grade("s1", grader="judge")
    assert (record.base_reward, record.grader) == (None, "judge")
    assert record.note == "undid judge's grade on line 3: 0.8 back to pending"
    assert Workspace(merged).session("s1").pending
    with pytest.raises(WorkspaceError, match="nothing to undo"):
        Workspace(merged).undo_grade("s1", grader="judge")


def test_an_undo_merged_after_another_persons_grade_is_never_put_back_by_the_next_undo(tmp_path: Path) -> None:
    """Alice grades s1 0.6 and undoes it on one machine; Bob grades it 0.8 on another; the logs are merged
    with Bob's grade between Alice's and her undo. Both are people (one source), so the undo, the source's
    latest event, leaves s1 pending. Bob's 0.8 replaced Alice's 0.6, which is undone: undoing Bob's grade
    next puts back what Alice's grade replaced (nothing: pending), never her undone 0.6. Before, the next
    undo wrote 0.6 under Bob ("0.8 back to 0.6") and the undone grade was in force again."""
    own = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})], name="own")
    ws = Workspace(own, clock=fixed_clock)
    ws.append_grade("s1", 0.6, grader="alice")  # line 2
    assert ws.undo_grade("s1", grader="alice").note == "undid alice's grade on line 2: 0.6 back to pending"  # line 3
    lines = (log_bytes(own) or b"").splitlines(keepends=True)
    bob = json.dumps(grade("s1", 0.8, grader="bob")).encode() + b"\n"
    merged = make_workspace(tmp_path, LESSONS, [lines[0], lines[1], bob, lines[2]])
    assert Workspace(merged).session("s1").pending  # people's latest event: Alice's undo
    record = Workspace(merged, clock=fixed_clock).undo_grade("s1", grader="bob")
    assert (record.base_reward, record.grader) == (None, "bob")
    assert record.note == "undid bob's grade on line 3: 0.8 back to pending"
    assert Workspace(merged).session("s1").pending
    with pytest.raises(WorkspaceError, match="nothing to undo"):
        Workspace(merged).undo_grade("s1", grader="bob")


@pytest.mark.parametrize("order", ["a then b", "b's undo first"])
def test_two_machines_grading_and_undoing_as_manual_leave_nothing_to_undo(tmp_path: Path, order: str) -> None:
    """Two people grade s1 as `manual` (the default grader) on two machines, 0.6 on one and 0.7 on the
    other, and each undoes their grade there. Merged, both grades are undone: s1 is pending and there is
    nothing to undo. Before, the first undo met the other machine's 0.7 on top of the stack, whose score
    before (0.6, merged below it) was not the pending it put back, so it was taken for a grade; the next
    undo reverted it and put the undone 0.7 back in force ("pending back to 0.7")."""
    logs = []
    for name, value in (("a", 0.6), ("b", 0.7)):
        own = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})], name=name)
        ws = Workspace(own, clock=fixed_clock)
        ws.append_grade("s1", value)  # line 2
        assert ws.undo_grade("s1").note == f"undid manual's grade on line 2: {value} back to pending"  # line 3
        logs.append((log_bytes(own) or b"").splitlines(keepends=True))
    a, b = logs
    undos = [a[2], b[2]] if order == "a then b" else [b[2], a[2]]
    merged = make_workspace(tmp_path, LESSONS, [a[0], a[1], b[1], *undos])
    assert Workspace(merged).session("s1").pending
    with pytest.raises(WorkspaceError, match="nothing to undo"):
        Workspace(merged, clock=fixed_clock).undo_grade("s1")


def test_an_undo_note_names_whose_grade_it_undid(tmp_path: Path) -> None:
    """ "undo of line 2 by erik" read as if erik had given the grade on line 2. An undo is now its grader's
    own (erik cannot undo the judge's grade: refused, nothing written); the note names whose grade it was."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0}), grade("s1", 0.9, "judge")])
    before = log_bytes(root)
    with pytest.raises(NothingToUndo, match="erik has no grade on session 's1' left"):
        Workspace(root, clock=fixed_clock).undo_grade("s1", grader="erik")
    assert log_bytes(root) == before
    record = Workspace(root, clock=fixed_clock).undo_grade("s1", grader="judge")
    assert (record.base_reward, record.grader) == (None, "judge")  # logged in the judge's source
    assert record.note == "undid judge's grade on line 2: 0.9 back to pending"


@pytest.mark.parametrize(
    ("undone", "grader"),
    [("undo of line 3: 0.5 back to 0.9", "manual"), ("undo of line 3 by erik: 0.5 back to 0.9", "judge")],
)
def test_an_undo_written_in_the_notes_former_words_still_counts(tmp_path: Path, undone: str, grader: str) -> None:
    """Logs written before the notes named whose grade was undone: their undos are still undos. 0.9 (line 2),
    0.5 (line 3), the 0.5 undone back to 0.9 in the former words (line 4): the next undo reverts the 0.9 to
    pending, never the undone 0.5 again."""
    events = [
        session("s1", None, {"a.md": 1.0}),
        grade("s1", 0.9, grader),
        grade("s1", 0.5, grader),
        {**grade("s1", 0.9, grader), "note": undone},
    ]
    root = make_workspace(tmp_path, LESSONS, events)
    record = Workspace(root, clock=fixed_clock).undo_grade("s1", grader=grader)
    assert (record.base_reward, record.note) == (None, f"undid {grader}'s grade on line 2: 0.9 back to pending")
    with pytest.raises(WorkspaceError, match="nothing to undo"):
        Workspace(root).undo_grade("s1")


def test_a_grade_whose_note_begins_like_the_new_undo_note_is_a_grade(tmp_path: Path) -> None:
    """As with the former words: a person's note that reads like an undo's does not make the grade one."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    ws = Workspace(root, clock=fixed_clock)
    ws.append_grade("s1", 0.4)  # line 2
    ws.append_grade("s1", 0.7, note="undid manual's grade on line 2: 0.4 was a typo")  # line 3
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.note) == (0.4, "undid manual's grade on line 3: 0.7 back to 0.4")


def test_a_grade_quoting_another_graders_undo_in_its_note_is_a_grade(tmp_path: Path) -> None:
    """manual's 0.9 (line 2), then manual's 0.8 with a note quoting an undo of the judge's grade. The note
    names another grader's grade than its own, so it is no undo of manual's: `undo` reverts the 0.8 to the
    0.9 (on the old code the pattern matched anywhere in a note, the 0.8 was taken for an undo that
    undid the 0.9, and `undo` said there was nothing to undo while the 0.8 was in force)."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    ws = Workspace(root, clock=fixed_clock)
    ws.append_grade("s1", 0.9)  # line 2
    ws.append_grade("s1", 0.8, note="regraded: before, erik undid judge's grade on line 2: 0.9 back to pending")
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.note) == (0.9, "undid manual's grade on line 3: 0.8 back to 0.9")


def test_a_grade_quoting_an_undo_of_its_own_graders_grade_is_a_grade(tmp_path: Path) -> None:
    """manual's 0.2 (line 2) and 0.5 (line 3), undone (line 4: back to 0.2); 0.5 again (line 5) and 0.7
    (line 6), each with a note quoting that undo (`undid manual's grade on line 3: 0.5 back to 0.2`). The 0.7
    puts back no 0.2: it is no undo. On the old code it was taken for an undo of the 0.5 on line 5 (the score
    the quote says it undid), so `undo` reverted the 0.2 on line 2 and left the session pending, not 0.5."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    ws = Workspace(root, clock=fixed_clock)
    ws.append_grade("s1", 0.2)  # line 2
    ws.append_grade("s1", 0.5)  # line 3
    assert ws.undo_grade("s1").note == "undid manual's grade on line 3: 0.5 back to 0.2"  # line 4
    quoted = "undid manual's grade on line 3: 0.5 back to 0.2"
    ws.append_grade("s1", 0.5, note=f"same as before; was: {quoted}")  # line 5
    ws.append_grade("s1", 0.7, note=f"raising it; history: {quoted}")  # line 6
    record = Workspace(root, clock=fixed_clock).undo_grade("s1")
    assert (record.base_reward, record.note) == (0.5, "undid manual's grade on line 6: 0.7 back to 0.5")
