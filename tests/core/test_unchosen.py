"""A lesson a session's record names that the session's selection did not choose: read as included during it.

The selection event is the log's account of what was decided before the session; the estimates' treatment is that
decision (docs/estimates.md, "Chosen before, included during"). Before, such a lesson without a mark was read as
chosen before, and the IPW lift weighed it by the draw's P(chosen), as if the draw had chosen it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session

A, T = "tools/a.md", "tools/t.md"
LESSONS = {A: (["alpha"], "active"), T: (["tee"], "active")}


def selection(session_id: str, chosen: list[str]) -> dict[str, Any]:
    return {
        "type": "selection",
        "session_id": session_id,
        "candidates": [A, T],
        "selected": chosen,
        "propensity": {A: 0.99, T: 0.5},
    }


def world(mark: str | None) -> list[dict[str, Any]]:
    """The even sessions: the draw chose T (reward 0.6). The odd ones: it passed T over; s1 and s3 ran into trouble
    (0.2) and the record names T all the same (pulled in mid-session), with the selection's 0.5 stored and `mark`."""
    events: list[dict[str, Any]] = []
    for i in range(12):
        sid = f"s{i}"
        chosen = [A, T] if i % 2 == 0 else [A]
        events.append(selection(sid, chosen))
        record = session(sid, 0.2 if i in (1, 3) else 0.6, {lesson: 0.5 for lesson in chosen})
        if i in (1, 3):
            entry: dict[str, Any] = {"path": T, "salience": 0.5, "propensity": 0.5}
            if mark is not None:
                entry["included"] = mark
            record["lessons"].append(entry)
        events.append(record)
    return events


@pytest.mark.parametrize("mark", [None, "before", "during"])
def test_a_lesson_the_draw_passed_over_is_no_treatment_in_the_ipw_lift_and_is_reported_during(
    tmp_path: Path, mark: str | None
) -> None:
    ws = Workspace(make_workspace(tmp_path, lessons=LESSONS, events=world(mark)), clock=fixed_clock)
    t = {r.path: r for r in ws.loo(write=False, min_without=5)}[T]
    # Every candidacy of T has P(chosen) 0.5, so the Hajek IPW lift is the plain difference of the draw's two arms:
    # chosen (even): 0.6; passed over (odd): (2 * 0.2 + 4 * 0.6) / 6 = 2.8 / 6 = 0.46667; lift +0.13333.
    # Read as chosen before (the old reading of an unmarked entry), s1 and s3 were treated at weight 1 / 0.5:
    # (6 * 0.6 + 2 * 0.2) / 8 = 0.5 against 0.6, a lift of -0.1.
    assert (t.n_ipw_treated, t.n_ipw_untreated) == (6, 6)
    assert t.delta_ipw == pytest.approx(0.6 - 2.8 / 6)
    assert (t.n_with, t.n_without) == (6, 6)
    assert t.mean_with == pytest.approx(0.6) and t.mean_without == pytest.approx(2.8 / 6)
    assert t.n_during == 2 and t.mean_during == pytest.approx(0.2)


def test_the_joint_design_leaves_out_a_lesson_the_draw_passed_over(tmp_path: Path) -> None:
    """The joint fit reads the same world the same whether or not the record marked T during the session."""
    fits = []
    for mark in (None, "during"):
        root = make_workspace(tmp_path / str(mark), lessons=LESSONS, events=world(mark))
        ws = Workspace(root, clock=fixed_clock)
        data = ws.analysis_data()
        arm = data.arm_ids.index(T)
        during = {(int(data.entry_session[e]), int(data.entry_arm[e])) for e in data.during.tolist()}
        assert during == {(1, arm), (3, arm)}  # rows 1 and 3, T's entries
        fits.append(ws.effects()[T])
    assert fits[0] == pytest.approx(fits[1], abs=1e-12)


def test_a_session_without_a_selection_keeps_an_unmarked_lesson_as_chosen_before(tmp_path: Path) -> None:
    events = [session(f"h{i}", 0.5, {A: 0.5, T: 0.5}) for i in range(3)]  # recorded by hand: no draw to go by
    events += [selection("s0", [A]), session("s0", 0.5, {A: 0.5, T: 0.5})]  # s0's draw passed T over
    events += [session("s0x", 0.5, {T: 0.5}), selection("s0x", [A])]  # a selection after its record: none before
    data = Workspace(make_workspace(tmp_path, lessons=LESSONS, events=events), clock=fixed_clock).analysis_data()
    arm = data.arm_ids.index(T)
    during = {(int(data.entry_session[e]), int(data.entry_arm[e])) for e in data.during.tolist()}
    assert during == {(3, arm)}


def test_a_passed_over_lesson_recorded_after_a_read_is_read_so_by_the_same_workspace(tmp_path: Path) -> None:
    """The reading is kept between folds of one log (a dashboard folds often): a record appended since is read."""
    root = make_workspace(tmp_path, lessons=LESSONS, events=world(None))
    (root / "j.md").write_text("alpha tee", encoding="utf-8")
    ws = Workspace(root, clock=fixed_clock)
    assert len(ws.analysis_data().during) == 2  # s1 and s3's T
    (chosen,) = ws.select("alpha tee", k=1, seed=0, session_id="n1", policy="uniform").selected
    other = T if chosen == A else A
    ws.record("n1", root / "j.md", [chosen, other], reward=0.5)
    data = ws.analysis_data()
    arm = data.arm_ids.index(other)
    assert [(int(data.entry_session[e]), int(data.entry_arm[e])) for e in data.during.tolist()][-1] == (12, arm)


def test_a_later_selection_that_chose_nothing_passes_nothing_over(tmp_path: Path) -> None:
    """The session's latest selection before its record is the one that counts (as for its propensities): a retried
    one that chose nothing (another tool's, no draw) leaves T as the record gives it, chosen before. (Before, the
    selection that chose nothing was skipped and the earlier one, which passed T over, was read.)"""
    retried = {**selection("s0", []), "candidates": [A, T]}
    events = [selection("s0", [A]), retried, session("s0", 0.5, {A: 0.5, T: 0.5})]
    events += [selection("s1", [A]), session("s1", 0.5, {A: 0.5, T: 0.5})]  # s1's only draw passed T over
    data = Workspace(make_workspace(tmp_path, lessons=LESSONS, events=events), clock=fixed_clock).analysis_data()
    arm = data.arm_ids.index(T)
    during = {(int(data.entry_session[e]), int(data.entry_arm[e])) for e in data.during.tolist()}
    assert during == {(1, arm)}  # s1's T only
