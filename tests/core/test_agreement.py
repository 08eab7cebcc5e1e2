"""Agreement between people and the other reward sources (docs/records.md), and the informative grading order,
against hand computations."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.analysis.agreement import Confusion, agreement, average_ranks, kappa
from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.reward_report import agreement_report, grading_queue
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import grade, make_workspace, session
from tests.support.records_helpers import HAND, agreement_workspace

LESSONS = {"a.md": (["alpha"], "active")}


def test_agreement_numbers_equal_the_hand_computation(tmp_path: Path) -> None:
    report = agreement_report(Workspace(agreement_workspace(tmp_path)))
    found = {(p.source_a, p.source_b): p for p in report.pairs}
    assert set(found) == {("human", "judge"), ("human", "heuristic"), ("human", "outcome"), ("bob", "manual")}
    for key, (n, mae, r, rho, k, (tp, fp, fn, tn)) in HAND.items():
        p = found[key]
        assert p.n == n and p.threshold == 0.5
        assert (p.mae, p.pearson, p.spearman, p.kappa) == pytest.approx((mae, r, rho, k))
        assert p.confusion == Confusion(tp, fp, fn, tn)
    assert found[("human", "judge")].pearson == pytest.approx(0.641751, abs=1e-6)
    empty = found[("human", "heuristic")]
    assert (empty.n, empty.mae, empty.pearson, empty.spearman, empty.kappa) == (0, None, None, None, None)
    tools = dict(report.by_category)["tools"]
    tools_judge = next(p for p in tools if p.source_b == "judge")
    assert tools_judge.n == 3 and tools_judge.mae == pytest.approx(0.8 / 3)


def test_agreement_json_is_spec_11s_shape(tmp_path: Path) -> None:
    payload = agreement_report(Workspace(agreement_workspace(tmp_path)), source="judge").as_json()
    (pair,) = payload["pairs"]
    assert list(pair) == ["source_a", "source_b", "n", "mae", "pearson", "spearman", "kappa", "threshold", "confusion"]
    assert pair["confusion"] == {"tp": 2, "fp": 1, "fn": 1, "tn": 1}
    assert [c["category"] for c in payload["by_category"]] == ["tools", "workflow"]
    with pytest.raises(WorkspaceError, match="unknown source"):
        agreement_report(Workspace(agreement_workspace(tmp_path / "x")), source="robot")


def test_a_threshold_moves_the_confusion_counts(tmp_path: Path) -> None:
    pair = next(
        p for p in agreement_report(Workspace(agreement_workspace(tmp_path)), threshold=0.85).pairs
        if p.source_b == "judge"
    )  # fmt: skip
    # a >= 0.85: s1 s5; b >= 0.85: s5 -> tp 1 (s5), fp 0, fn 1 (s1), tn 3 (s2 s3 s4)
    assert pair.confusion == Confusion(1, 0, 1, 3) and pair.threshold == 0.85


def test_the_statistics_on_their_edges() -> None:
    assert average_ranks(np.array([0.5, 0.1, 0.5, 0.9])).tolist() == [2.5, 1.0, 2.5, 4.0]
    assert kappa(Confusion(3, 0, 0, 0)) is None  # one class only: chance agreement is 1
    # one session (docs/records.md: fewer than two is null): a disagreement, observed 0 and chance
    # (1*0 + 0*1)/1 = 0, gave kappa 0.0
    assert kappa(Confusion(0, 1, 0, 0)) is None
    one = agreement("a", "b", np.array([0.2]), np.array([0.9]))
    assert one.n == 1 and one.kappa is None and one.pearson is None
    assert kappa(Confusion(1, 1, 0, 0)) == 0.0  # two sessions: observed 1/2, chance (2*1 + 0*0)/4 = 1/2
    same = agreement("a", "b", np.array([0.5, 0.5]), np.array([0.2, 0.9]))
    assert same.pearson is None and same.spearman is None and same.mae == pytest.approx(0.35)
    # two sessions with spread: any two points lie on a line, so r is +-1 whatever the scores (it said
    # 1.000 for a person's 0.2, 0.3 against a judge's 0.1, 0.9): nothing measured, null
    two = agreement("a", "b", np.array([0.2, 0.3]), np.array([0.1, 0.9]))
    assert two.pearson is None and two.spearman is None and two.mae == pytest.approx(0.35)
    three = agreement("a", "b", np.array([0.2, 0.3, 0.4]), np.array([0.1, 0.9, 0.5]))
    # r = sum(da db) / sqrt(sum da^2 sum db^2): da -0.1 0 0.1, db -0.4 0.4 0 -> 0.04 / sqrt(0.02 * 0.32) = 0.5
    assert three.pearson == pytest.approx(0.5) and three.spearman == pytest.approx(0.5)


def test_the_informative_order_by_hand(tmp_path: Path) -> None:
    events = [
        session("s1", None, {"a.md": 1.0}),
        grade("s1", 1.0),
        session("s2", None, {"a.md": 1.0}),
        session("s3", None, {"a.md": 0.0}),
        grade("s3", 0.2, "judge"),
    ]
    ws = Workspace(make_workspace(tmp_path, LESSONS, events))
    queue = grading_queue(ws, "informative")
    # seed, floor 0.3: a = Beta(1 + 1 + 0.2*0.3, 1 + 0 + 1 - 0.06) = Beta(2.06, 1.94): nu 4, m 0.515.
    # People: one grade (1.0): mean 1.0, variance 1/12 (fewer than two grades).
    # s2 pending, w 1, mu 1.0, s2 1/12: (1/12 + (1.0 - 0.515)^2) / (4 + 1)^2 = (0.083333 + 0.235225) / 25
    # s3 judge 0.2 in force, w 0.3, mu 0.2 (its one automatic score), s2 1/12: 0.09 * (1/12 + 0) / 4^2
    assert queue.session_ids == ("s2", "s3")
    assert queue.informative is not None
    score = queue.informative.score
    assert score[1] == pytest.approx((1 / 12 + 0.485**2) / 25)
    assert score[2] == pytest.approx(0.09 * (1 / 12) / 16)
    assert score[0] == 0.0
    assert grading_queue(ws, "oldest").session_ids == ("s2",)  # pending only, log order


def test_the_informative_order_gives_nothing_for_a_grade_the_priority_would_not_use(tmp_path: Path) -> None:
    # [rewards] priority puts the judge above people: a person's grade on a session the judge scored
    # changes no reward in force (it moves no mean), so it scores 0; one the heuristic scored is replaced
    # (people outrank the heuristic), and a pending one takes the grade. Before, s3 scored as in the test
    # above, as if the grade replaced the judge's 0.2.
    events = [
        session("s1", None, {"a.md": 1.0}),
        grade("s1", 1.0),
        session("s2", None, {"a.md": 1.0}),
        session("s3", None, {"a.md": 0.0}),
        grade("s3", 0.2, "judge"),
        session("s4", None, {"a.md": 0.5}),
        grade("s4", 0.6, "heuristic"),
    ]
    config = '[rewards]\npriority = ["judge", "human", "heuristic", "outcome"]\n'
    ws = Workspace(make_workspace(tmp_path, LESSONS, events, config=config))
    queue = grading_queue(ws, "informative")
    # seed, floor 0.3: a = Beta(1 + 1 + 0.06 + 0.6 * 0.65, 1 + 0 + 0.94 + 0.61) = Beta(2.45, 2.55): nu 5, m 0.49
    # s2 pending, w 1, mu 1.0 (no automatic score: the people's mean), s2 1/12: (1/12 + 0.51^2) / 6^2
    # s4 heuristic 0.6 in force, w 0.65, mu 0.6, s2 1/12: 0.65^2 * (1/12 + 0) / 5^2
    assert queue.informative is not None
    score = queue.informative.score
    assert score[1] == pytest.approx((1 / 12 + 0.51**2) / 36)
    assert score[2] == 0.0
    assert score[3] == pytest.approx(0.65**2 / 12 / 25)
    assert queue.session_ids == ("s2", "s4", "s3")
    # a priority without people: no person's grade is ever in force, so no session is worth grading for it
    (ws.root / "state" / "lesson-thompson" / "config.toml").write_text('[rewards]\npriority = ["judge", "heuristic"]\n')
    unused = grading_queue(Workspace(ws.root), "informative")
    assert unused.informative is not None
    assert unused.informative.score.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert unused.session_ids == ("s2", "s3", "s4")  # ties keep log order


def test_a_kind_of_work_spelt_two_ways_is_one_category_of_agreement(tmp_path: Path) -> None:
    # eight sessions of one kind of work, five logged `Code` and three `code` (a hook passing gptme-sessions'
    # spelling): the estimates and `sessions --category` read them as one kind, so agreement does too
    events: list[dict[str, object]] = []
    for i in range(8):
        events.append(session(f"s{i}", None, {"a.md": 0.5}, category="Code" if i < 5 else "code"))
        events.append(grade(f"s{i}", 0.1 * (i + 1)))  # manual: 0.1 ... 0.8
        events.append(grade(f"s{i}", 0.1 * (i + 1) + 0.05, "judge"))  # the judge 0.05 above each
    ws = Workspace(make_workspace(tmp_path, LESSONS, events))
    report = agreement_report(ws, source="judge")
    # by hand: one kind, named by the spelling most of its sessions use; all 8 sessions, |diff| 0.05 each;
    # cut at 0.5: manual >= 0.5 on s4..s7, the judge on s4..s7 (s3's 0.45 is below) -> tp 4, tn 4
    assert [name for name, _ in report.by_category] == ["Code"]
    (pair,) = report.by_category[0][1]
    assert (pair.source_b, pair.n) == ("judge", 8)
    assert pair.mae == pytest.approx(0.05) and pair.confusion == Confusion(4, 0, 0, 4)
