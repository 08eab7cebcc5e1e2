"""Scoring only the sessions with evidence besides their own score densely (core/log/scoring.py) gives
what the dense scoring of every session gives (`source_scores`, the independent second way): the
same scores in force, every source's scores, the grade events in force and the rows scored from
outside the log, array for array. Random logs cover retractions, regrades, outcome words, scores
from outside the log shorter than the log, grade events for unknown sessions and priorities that
leave sources out."""

from __future__ import annotations

from pathlib import Path
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.log import scoring
from lesson_credit.core.log.snapshot import SourceInputs, source_scores
from lesson_credit.core.model.sources import HEURISTIC, HUMAN, JUDGE, SOURCES, RewardInputs
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import grade, make_workspace, session

CODES = len(SOURCES)


def _log(rng: np.random.Generator, n: int, g: int, outcomes: float) -> SourceInputs:
    own = rng.choice([np.nan, 0.0, 0.25, 1.0], size=n)
    outcome_rows = np.flatnonzero(rng.random(n) < outcomes).astype(np.int64)
    return SourceInputs(
        own=own,
        own_source=rng.integers(0, CODES, size=n).astype(np.int8),
        outcome_rows=outcome_rows,
        outcome_values=rng.choice([0.0, 1.0], size=len(outcome_rows)),
        grade_rows=rng.integers(-1, n, size=g).astype(np.int64),
        grade_base=rng.choice([np.nan, 0.1, 0.5, 0.9], size=g),
        grade_source=rng.integers(0, CODES, size=g).astype(np.int8),
    )


def _same(got: tuple[object, ...], log: SourceInputs, rewards: RewardInputs) -> None:
    base, scores, applied, applied_rows = source_scores(log, rewards)
    g_base, g_scores, g_applied, g_applied_rows = got
    assert isinstance(g_base, np.ndarray) and isinstance(g_applied, np.ndarray)
    assert isinstance(g_scores, type(scores)) and isinstance(g_applied_rows, np.ndarray)
    assert g_base.tobytes() == base.tobytes()
    assert not g_base.flags.writeable
    assert g_scores.chosen.dtype == scores.chosen.dtype
    assert g_scores.chosen.tobytes() == scores.chosen.tobytes()
    assert list(g_scores.values) == list(scores.values)
    assert "nobody" not in g_scores.values and g_scores.values.get("nobody") is None
    for source, values in scores.values.items():
        assert g_scores.values[source].tobytes() == values.tobytes(), source
    assert g_scores.external_rows.tolist() == scores.external_rows.tolist()
    assert g_applied.tolist() == applied.tolist()
    assert g_applied_rows.tolist() == applied_rows.tolist()
    assert g_scores.priority == scores.priority
    for other in ((HUMAN,), (JUDGE, HEURISTIC)):  # a what-if over another priority, from the built columns
        assert g_scores.in_force(other).tobytes() == scores.in_force(other).tobytes()


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 80),
    g=st.integers(0, 30),
    outcomes=st.sampled_from([0.0, 0.05, 0.3]),
    outside=st.integers(0, 2),
    priority=st.permutations(SOURCES).flatmap(lambda p: st.integers(1, len(p)).map(lambda k: tuple(p[:k]))),
)
def test_scoring_the_sessions_with_evidence_equals_scoring_every_session(
    seed: int, n: int, g: int, outcomes: float, outside: int, priority: tuple[str, ...]
) -> None:
    rng = np.random.default_rng(seed)
    log = _log(rng, n, g, outcomes)
    sources = rng.choice(SOURCES, size=outside, replace=False).tolist()
    # scores from outside the log: sparse, and shorter than the log (joined before sessions were appended)
    external = {s: rng.choice([np.nan, np.nan, np.nan, 0.3, 0.7], size=int(rng.integers(0, n + 1))) for s in sources}
    rewards = RewardInputs(priority, external)
    sizes: list[int] = []

    def spy(inputs: SourceInputs, rewards: RewardInputs) -> object:
        sizes.append(len(inputs.own))
        return source_scores(inputs, rewards)

    with patch.object(scoring, "source_scores", spy):
        got = scoring.scores(log, rewards, dense_share=0)  # never dense
    _same(got, log, rewards)
    # the dense scoring ran on the sessions a grade event, an outcome word or an outside score names
    named = set(log.grade_rows[log.grade_rows >= 0].tolist()) | set(log.outcome_rows.tolist())
    for column in external.values():
        named |= {i for i, v in enumerate(column[:n].tolist()) if v == v}
    assert sizes == [len(named)]


def test_many_sessions_with_evidence_are_scored_densely() -> None:
    log = _log(np.random.default_rng(3), 40, 60, 0.5)
    rewards = RewardInputs()
    with patch.object(scoring, "source_scores", wraps=source_scores) as dense:
        got = scoring.scores(log, rewards)
    assert [len(call.args[0].own) for call in dense.call_args_list] == [40]
    _same(got, log, rewards)


def test_a_session_with_only_its_own_score_in_a_source_left_out_is_pending() -> None:
    # rows 0-3: a heuristic 0.5, a judge 0.25, a human NaN (pending), a heuristic 1.0; row 3 graded 0.75 by a
    # human. Priority human, judge: row 0 pending (its only score is heuristic), row 1 0.25, row 2 pending,
    # row 3 the human's 0.75.
    codes = np.array([SOURCES.index(s) for s in (HEURISTIC, JUDGE, HUMAN, HEURISTIC)], dtype=np.int8)
    empty = np.zeros(0, dtype=np.int64)
    log = SourceInputs(np.array([0.5, 0.25, np.nan, 1.0]), codes, empty, np.zeros(0), np.array([3]),
                       np.array([0.75]), np.array([SOURCES.index(HUMAN)], dtype=np.int8))  # fmt: skip
    base, scores, applied, applied_rows = scoring.scores(log, RewardInputs((HUMAN, JUDGE)), dense_share=0)
    assert [None if v != v else v for v in base.tolist()] == [None, 0.25, None, 0.75]
    assert scores.chosen.tolist() == [-1, SOURCES.index(JUDGE), -1, SOURCES.index(HUMAN)]
    assert (applied.tolist(), applied_rows.tolist()) == ([0], [3])
    assert scores.values[HEURISTIC].tolist()[::3] == [0.5, 1.0]


def _prefix(log: SourceInputs, n0: int, g0: int) -> SourceInputs:
    """The log as read when it had n0 sessions and g0 grade events: a grade event naming a later
    session was unknown then (-1), as LogIndex records it."""
    rows = log.grade_rows[:g0].copy()
    rows[rows >= n0] = -1
    kept = log.outcome_rows < n0
    return SourceInputs(
        log.own[:n0], log.own_source[:n0], log.outcome_rows[kept], log.outcome_values[kept],
        rows, log.grade_base[:g0], log.grade_source[:g0],
    )  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    g=st.integers(0, 30),
    appends=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=4),
    dense=st.booleans(),
    outside=st.booleans(),
    priority=st.permutations(SOURCES).flatmap(lambda p: st.integers(1, len(p)).map(lambda k: tuple(p[:k]))),
)
def test_rescoring_after_appends_equals_scoring_the_whole_log(
    seed: int, n: int, g: int, appends: list[tuple[int, int]], dense: bool, outside: bool, priority: tuple[str, ...]
) -> None:
    """Appends of (sessions, grade events), each followed by a snapshot, as a dashboard sees them."""
    rng = np.random.default_rng(seed)
    total_n, total_g = n + sum(a for a, _ in appends), g + sum(b for _, b in appends)
    log = _log(rng, total_n, total_g, 0.1)
    external = {}
    if outside:  # joined before the appends: shorter than the log
        external = {str(rng.choice(SOURCES)): rng.choice([np.nan, 0.3, 0.7], size=int(rng.integers(0, n + 1)))}
    rewards = RewardInputs(priority, external)
    share = 0 if dense else scoring.DENSE_SHARE
    with patch.object(scoring, "DENSE_SHARE", share):
        scored = scoring.rescored(None, _prefix(log, n, g), rewards)
    for sessions, grades in appends:
        n, g = n + sessions, g + grades
        now = _prefix(log, n, g)
        scored = scoring.rescored(scored, now, rewards, max_share=1)
        _same(scored.result, now, rewards)


def test_a_grade_event_read_before_its_session_counts_once_the_session_arrives() -> None:
    rewards = RewardInputs()
    empty = np.zeros(0, dtype=np.int64)
    human = np.array([0], np.int8)
    before = SourceInputs(np.array([0.5]), np.array([2], np.int8), empty, np.zeros(0),
                          np.array([-1]), np.array([0.9]), human)  # fmt: skip
    after = SourceInputs(np.array([0.5, np.nan]), np.array([2, 2], np.int8), empty, np.zeros(0),
                         np.array([1]), np.array([0.9]), human)  # fmt: skip
    got = scoring.rescored(scoring.rescored(None, before, rewards), after, rewards)
    _same(got.result, after, rewards)
    assert got.result[0].tolist()[1] == 0.9  # the human grade read first now scores session 1


def test_another_outcome_mapping_rescores_the_whole_log() -> None:
    rewards = RewardInputs()
    own, codes = np.array([np.nan, 0.5]), np.array([3, 2], np.int8)
    no_grades, empty = np.zeros(0, dtype=np.int64), np.zeros(0)
    failed_is_0 = SourceInputs(own, codes, np.array([0]), np.array([0.0]), no_grades, empty, np.zeros(0, np.int8))
    now = SourceInputs(own, codes, np.array([0]), np.array([0.25]), no_grades, empty, np.zeros(0, np.int8))
    got = scoring.rescored(scoring.rescored(None, failed_is_0, rewards), now, rewards)
    assert got.result[0].tolist() == [0.25, 0.5]


@pytest.mark.parametrize("use_cache", [True, False])
def test_a_workspace_graded_in_place_folds_as_one_read_afresh(tmp_path: Path, use_cache: bool) -> None:
    lessons = {"a.md": (["alpha"], "active"), "b.md": (["beta"], "active")}
    events = [session(f"s{i}", [None, 0.2, 0.8][i % 3], {"a.md": 0.5, "b.md": 0.1 * (i % 4)}) for i in range(40)]
    root = make_workspace(tmp_path, lessons, [*events, grade("s3", 0.7, "judge")])
    ws = Workspace(root, use_cache=use_cache)
    ws.data()
    ws.grade("s1", 0.9)
    ws.grade("s3", None, grader="judge")  # the judge's retraction: s3's own score (pending: i % 3 == 0) again
    ws.grade("s4", 0.4, grader="alice")
    ws.grade("s4", 0.6)
    fresh = Workspace(root, use_cache=False)
    assert ws.data().base.tobytes() == fresh.data().base.tobytes()
    assert [ws.data().base[i] for i in (1, 2, 4)] == [0.9, 0.8, 0.6]  # s2: its own 0.8 (i % 3 == 2)
    assert np.isnan(ws.data().base[3])
    mine, theirs = ws.lesson_table(details=False), fresh.lesson_table(details=False)
    for lesson in ("a.md", "b.md"):
        a, b = mine.row(lesson), theirs.row(lesson)
        assert a is not None and b is not None
        assert (a.alpha, a.beta, a.n) == (b.alpha, b.beta, b.n)


@settings(max_examples=200, deadline=None)
@given(
    rows=st.sets(st.integers(0, 300)).map(sorted),
    wanted=st.lists(st.integers(-3, 320), max_size=60),
    dense=st.booleans(),
)
def test_find_agrees_with_a_scan_by_binary_search_and_by_table(rows: list[int], wanted: list[int], dense: bool) -> None:
    """`_find` (a binary search, or a row -> position table from DENSE_FIND items on) against a scan."""
    with patch.object(scoring, "DENSE_FIND", 0 if dense else 10**9):
        found, at = scoring._find(np.array(rows, dtype=np.int64), np.array(wanted, dtype=np.int64))
    assert found.tolist() == [w in rows for w in wanted]
    assert [int(a) for a, f in zip(at.tolist(), found.tolist(), strict=True) if f] == [
        rows.index(w) for w in wanted if w in rows
    ]


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 80), g=st.integers(0, 60))
def test_scoring_through_the_position_table_equals_scoring_every_session(seed: int, n: int, g: int) -> None:
    rng = np.random.default_rng(seed)
    log = _log(rng, n, g, 0.05)
    with patch.object(scoring, "DENSE_FIND", 0):
        got = scoring.scores(log, RewardInputs(), dense_share=0)
    _same(got, log, RewardInputs())
