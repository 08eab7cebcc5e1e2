"""The fold (docs/format.md §4-5): hand-computed posteriors, grades, duplicates, decay, priors, foreign shapes.

Events are written as JSON lines and decoded by the store's own chunk parser, so these tests
exercise the same path a real log takes, without touching the disk.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.bandit.fold import CreditSettings, FoldData, Posterior, fold
from lesson_credit.core.log.events import Event, InvalidEvent, SessionEvent
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.store import LogProblem, parse_chunk
from tests.support.engine_helpers import PROPERTY, grade, session
from tests.support.oracles import fold_naive

A, B = "tools/a.md", "tools/b.md"


def load(records: Sequence[dict[str, Any] | str]) -> tuple[FoldData, list[Event]]:
    data = b"".join((r if isinstance(r, str) else json.dumps(r) + "\n").encode() for r in records)
    result = parse_chunk(data, 0, 1, at_eof=True)
    index = LogIndex()
    for line, event in result.events:
        index.add(line, event)
    index.problems.extend(result.problems)
    return index.snapshot(), [event for _, event in result.events]


def arm(post: Posterior, arm_id: str) -> tuple[float, float, int]:
    j = post.index()[arm_id]
    return float(post.alpha[j]), float(post.beta[j]), int(post.n[j])


def assert_matches_naive(data: FoldData, events: list[Event], cfg: CreditSettings) -> None:
    post = fold(data, cfg)
    naive = fold_naive(events, cfg)
    assert set(naive) <= set(post.arm_ids)
    for arm_id in post.arm_ids:
        a, b, n = arm(post, arm_id)
        na, nb, nn = naive.get(arm_id, (cfg.prior_alpha, cfg.prior_beta, 0))
        assert a == pytest.approx(na, abs=1e-9)
        assert b == pytest.approx(nb, abs=1e-9)
        assert n == nn


# Two graded sessions, floor 0.3, prior Beta(1, 1):
#   s1: base 0.8; A salience 1.0 (w = 1.0), B salience 0.0 (w = 0.3)
#   s2: base 0.4; A salience 0.5 (w = 0.3 + 0.7*0.5 = 0.65), B salience 0.25 (w = 0.3 + 0.7*0.25 = 0.475)
TWO_SESSIONS = [
    session("s1", 0.8, {A: 1.0, B: 0.0}),
    session("s2", 0.4, {A: 0.5, B: 0.25}),
]
HAND = {
    # seed: r = base*w. A: r1 = 0.8, r2 = 0.4*0.65 = 0.26 -> alpha 1+0.8+0.26 = 2.06, beta 1+0.2+0.74 = 1.94
    #                   B: r1 = 0.8*0.3 = 0.24, r2 = 0.4*0.475 = 0.19 -> alpha 1.43, beta 1+0.76+0.81 = 2.57
    "seed": {A: (2.06, 1.94), B: (1.43, 2.57)},
    # evidence: alpha += w*base, beta += w*(1-base).
    #   A: alpha 1 + 0.8 + 0.26 = 2.06, beta 1 + 1*0.2 + 0.65*0.6 = 1 + 0.2 + 0.39 = 1.59
    #   B: alpha 1 + 0.24 + 0.19 = 1.43, beta 1 + 0.3*0.2 + 0.475*0.6 = 1 + 0.06 + 0.285 = 1.345
    "evidence": {A: (2.06, 1.59), B: (1.43, 1.345)},
    # uniform: alpha += base, beta += 1-base: both arms 1+0.8+0.4 = 2.2, 1+0.2+0.6 = 1.8
    "uniform": {A: (2.2, 1.8), B: (2.2, 1.8)},
}
# total_rewards counts credited reward > 0.5: seed A {0.8, 0.26} -> 1, B {0.24, 0.19} -> 0;
# evidence/uniform credit the base {0.8, 0.4} -> 1 for each arm
HAND_REWARDED = {"seed": {A: 1, B: 0}, "evidence": {A: 1, B: 1}, "uniform": {A: 1, B: 1}}


@pytest.mark.parametrize("strategy", ["seed", "evidence", "uniform"])
@pytest.mark.smoke
def test_two_sessions_by_hand(strategy: str) -> None:
    data, events = load(TWO_SESSIONS)
    cfg = CreditSettings(strategy=strategy, floor=0.3)
    post = fold(data, cfg)
    for arm_id, (alpha, beta) in HAND[strategy].items():
        assert arm(post, arm_id) == pytest.approx((alpha, beta, 2), abs=1e-12)
        assert int(post.rewarded[post.index()[arm_id]]) == HAND_REWARDED[strategy][arm_id]
    assert post.graded_sessions == 2
    naive = fold_naive(events, cfg)
    for arm_id, (alpha, beta) in HAND[strategy].items():
        assert naive[arm_id] == pytest.approx((alpha, beta, 2), abs=1e-12)


def test_mean_is_alpha_over_total() -> None:
    post = fold(load(TWO_SESSIONS)[0], CreditSettings())
    j = post.index()[A]
    assert post.mean[j] == pytest.approx(2.06 / (2.06 + 1.94))


def test_pending_session_moves_nothing() -> None:
    data, events = load([*TWO_SESSIONS, session("s3", None, {A: 1.0, B: 1.0})])
    post = fold(data, CreditSettings())
    assert arm(post, A) == pytest.approx((2.06, 1.94, 2))  # n counts graded sessions only
    assert arm(post, B) == pytest.approx((1.43, 2.57, 2))
    assert post.graded_sessions == 2
    assert data.n_sessions == 3


def test_pending_session_counts_once_graded() -> None:
    # s1 pending, then graded 1.0; A salience 1 -> seed r = 1 -> (2, 1)
    data, events = load([session("s1", None, {A: 1.0}), grade("s1", 1.0)])
    assert arm(fold(data, CreditSettings()), A) == pytest.approx((2.0, 1.0, 1))
    assert_matches_naive(data, events, CreditSettings())


@pytest.mark.smoke
def test_latest_grade_in_file_order_wins() -> None:
    # base 0.2, regraded 0.9, then 0.6: 0.6 counts. Uniform: alpha 1.6, beta 1.4
    data, events = load([session("s1", 0.2, {A: 1.0}), grade("s1", 0.9), grade("s1", 0.6)])
    cfg = CreditSettings(strategy="uniform")
    assert arm(fold(data, cfg), A) == pytest.approx((1.6, 1.4, 1))
    assert data.graders == ("manual",)
    assert_matches_naive(data, events, cfg)


def test_latest_grade_is_by_file_order_not_timestamp() -> None:
    records = [
        session("s1", None, {A: 1.0}),
        {**grade("s1", 0.3), "timestamp": "2030-01-01T00:00:00Z"},
        {**grade("s1", 0.7), "timestamp": "2020-01-01T00:00:00Z"},
    ]
    data, _ = load(records)
    assert arm(fold(data, CreditSettings(strategy="uniform")), A) == pytest.approx((1.7, 1.3, 1))


def test_grade_for_unknown_session_is_reported() -> None:
    data, events = load([session("s1", 0.5, {A: 1.0}), grade("ghost", 1.0)])
    assert [(p.line, "ghost" in p.reason) for p in data.problems] == [(2, True)]
    # and it changes nothing: uniform 0.5 -> (1.5, 1.5)
    assert arm(fold(data, CreditSettings(strategy="uniform")), A) == pytest.approx((1.5, 1.5, 1))


def test_duplicate_session_first_counts_later_reported() -> None:
    records = [
        session("s1", 1.0, {A: 1.0}),
        session("s2", 0.0, {A: 1.0}),
        session("s1", 0.0, {A: 1.0, B: 1.0}),
    ]
    data, events = load(records)
    assert len(data.problems) == 1
    assert data.problems[0].line == 3
    assert "duplicate" in data.problems[0].reason and "line 1" in data.problems[0].reason
    cfg = CreditSettings(strategy="uniform")
    post = fold(data, cfg)
    # s1 (1.0) + s2 (0.0): alpha 1+1+0 = 2, beta 1+0+1 = 2; B never counted
    assert arm(post, A) == pytest.approx((2.0, 2.0, 2))
    assert B not in post.arm_ids
    assert_matches_naive(data, events, cfg)


@pytest.mark.smoke
def test_decay_by_hand() -> None:
    # seed, floor 0.3, gamma 0.5, prior (1, 1)
    #   s1: base 0.8, A salience 1 -> w 1, r 0.8: A = (1.8, 1.2)
    #   before s2: A -> (1 + 0.5*0.8, 1 + 0.5*0.2) = (1.4, 1.1)
    #   s2: base 0.5, A salience 0 -> w 0.3, r 0.15: A = (1.55, 1.95)
    #       B salience 0.5 -> w 0.65, r 0.325: B = (1.325, 1.675)
    records = [session("s1", 0.8, {A: 1.0}), session("s2", 0.5, {A: 0.0, B: 0.5})]
    data, events = load(records)
    cfg = CreditSettings(decay=0.5)
    post = fold(data, cfg)
    assert arm(post, A) == pytest.approx((1.55, 1.95, 2), abs=1e-12)
    assert arm(post, B) == pytest.approx((1.325, 1.675, 1), abs=1e-12)
    assert_matches_naive(data, events, cfg)


def test_decay_skips_pending_sessions() -> None:
    # a pending session between the two is not a decay step: same numbers as above
    records = [
        session("s1", 0.8, {A: 1.0}),
        session("p", None, {A: 1.0}),
        session("s2", 0.5, {A: 0.0, B: 0.5}),
    ]
    data, events = load(records)
    post = fold(data, CreditSettings(decay=0.5))
    assert arm(post, A) == pytest.approx((1.55, 1.95, 2), abs=1e-12)


def test_decay_moves_toward_configured_prior() -> None:
    # prior (2, 2), uniform, gamma 0.5: s1 base 1 -> A (3, 2); before s2 -> (2 + 0.5, 2 + 0) = (2.5, 2);
    # s2 does not include A, base 0 -> A stays (2.5, 2)
    records = [session("s1", 1.0, {A: 1.0}), session("s2", 0.0, {B: 1.0})]
    data, events = load(records)
    cfg = CreditSettings(strategy="uniform", decay=0.5, prior_alpha=2.0, prior_beta=2.0)
    assert arm(fold(data, cfg), A) == pytest.approx((2.5, 2.0, 1))
    assert arm(fold(data, cfg), B) == pytest.approx((2.0, 3.0, 1))
    assert_matches_naive(data, events, cfg)


@pytest.mark.smoke
def test_prior_event_sets_the_start() -> None:
    # prior A = Beta(3, 2) with n 4; uniform session base 1 -> (4, 2), n 5; B starts at (1, 1)
    records = [
        {"type": "prior", "arms": {"lessons/" + A: {"alpha": 3, "beta": 2, "n": 4}}},
        session("s1", 1.0, {A: 1.0, B: 1.0}),
    ]
    data, events = load(records)
    cfg = CreditSettings(strategy="uniform")
    post = fold(data, cfg)
    assert arm(post, A) == pytest.approx((4.0, 2.0, 5))
    assert arm(post, B) == pytest.approx((2.0, 1.0, 1))
    assert_matches_naive(data, events, cfg)


def test_prior_rewards_add_to_total_rewards() -> None:
    # gptme's total_rewards carried over (3) + one session whose credited reward 0.9 > 0.5
    records = [
        {"type": "prior", "arms": {A: {"alpha": 4, "beta": 2, "n": 5, "rewards": 3}}},
        session("s1", 0.9, {A: 1.0}),
    ]
    data, _ = load(records)
    post = fold(data, CreditSettings())
    j = post.index()[A]
    assert (int(post.n[j]), int(post.rewarded[j])) == (6, 4)


def test_prior_with_bad_numbers_is_a_bad_line() -> None:
    data, _ = load([{"type": "prior", "arms": {A: {"alpha": 0, "beta": 1}}}, {"type": "prior", "arms": {}}])
    assert [p.line for p in data.problems] == [1, 2]
    assert data.arm_ids == ()


def test_prior_only_arm_keeps_its_prior() -> None:
    data, _ = load([{"type": "prior", "arms": {A: {"alpha": 7.5, "beta": 0.5}}}])
    assert arm(fold(data, CreditSettings()), A) == pytest.approx((7.5, 0.5, 0))


def test_published_shape_without_type_uses_outcome() -> None:
    # no "type", no base_reward, outcome 0.7; lesson A without salience counts 0.5:
    # seed floor 0.3 -> w 0.65, r 0.7*0.65 = 0.455 -> (1.455, 1.545)
    records = [
        {
            "session_id": "2ed0",
            "timestamp": "2026-03-05T16:30:00Z",
            "outcome": 0.7,
            "lessons": [{"path": "lessons/" + A, "reward": 0.123}],
        }
    ]
    data, events = load(records)
    assert data.problems == ()
    post = fold(data, CreditSettings())
    assert post.arm_ids == (A,)  # 'lessons/' prefix normalised
    assert arm(post, A) == pytest.approx((1.455, 1.545, 1), abs=1e-12)
    assert data.graders == ("imported",)
    assert_matches_naive(data, events, CreditSettings())


def test_published_record_with_absolute_lesson_paths_credits_the_library_lesson() -> None:
    # gptme names a lesson by its file's absolute path (its lesson index joins the folder to the file), so a
    # record another tool wrote from it lists /home/agent/lessons/tools/a.md: the same arm as tools/a.md,
    # whatever machine wrote it (a Windows one too). Three sessions, base 1.0, salience 1.0 -> w 1, r 1:
    # A (1 + 3, 1 + 0) = (4, 1), n 3; before, two of the three went to arms named by the absolute paths.
    windows_a = "C:\\agent\\lessons\\tools\\a.md"
    records = [
        {"session_id": "s1", "outcome": 1.0, "lessons": [{"path": A, "salience": 1.0}]},
        {"session_id": "s2", "outcome": 1.0, "lessons": [{"path": "/home/agent/lessons/" + A, "salience": 1.0}]},
        {"session_id": "s3", "outcome": 1.0, "lessons": [{"arm_id": windows_a, "salience": 1.0}]},
    ]
    data, events = load(records)
    assert data.problems == ()
    post = fold(data, CreditSettings())
    assert post.arm_ids == (A,)
    assert arm(post, A) == pytest.approx((4.0, 1.0, 3), abs=1e-12)


def test_published_record_with_salience_and_both_fields() -> None:
    # the docs/format.md §5.2 example: base_reward 0.82, salience 0.67 -> w = 0.3 + 0.7*0.67 = 0.769,
    # r = 0.82 * 0.769 = 0.63058 -> (1.63058, 1.36942); the stored reward 0.63 is only a record
    line = (
        '{"session_id": "2ed0", "timestamp": "2026-03-05T16:30:00Z", "outcome": 0.82, "base_reward": 0.82, '
        '"lessons": [{"path": "workflow/autonomous-run.md", "salience": 0.67, "reward": 0.63}]}\n'
    )
    data, _ = load([line])
    post = fold(data, CreditSettings())
    assert arm(post, "workflow/autonomous-run.md") == pytest.approx((1.63058, 1.36942, 1), abs=1e-12)


def test_explicit_null_base_reward_is_pending_even_with_outcome() -> None:
    data, _ = load([{"session_id": "x", "outcome": 0.9, "base_reward": None, "lessons": [{"path": A}]}])
    post = fold(data, CreditSettings())
    assert arm(post, A) == (1.0, 1.0, 0)


def test_non_numeric_outcome_is_pending() -> None:
    data, _ = load([{"session_id": "x", "outcome": "success", "lessons": [{"path": A, "salience": 1.0}]}])
    assert np.isnan(data.base[0])


def test_lesson_entries_as_bare_strings_count_one_half() -> None:
    # gptme-sessions may list lessons as strings: salience 0.5 -> w 0.65; uniform ignores w
    data, events = load([{"session_id": "x", "base_reward": 1.0, "lessons": ["lessons/" + A]}])
    assert arm(fold(data, CreditSettings()), A) == pytest.approx((1.65, 1.35, 1))
    assert_matches_naive(data, events, CreditSettings())


def test_stored_salience_keeps_full_precision() -> None:
    sal = 1 / 3
    data, _ = load([session("s1", 1.0, {A: sal})])
    assert data.entry_salience[0] == sal
    # seed floor 0.3: r = 0.3 + 0.7/3 exactly as computed from the full-precision salience
    assert arm(fold(data, CreditSettings()), A)[0] == pytest.approx(1 + 0.3 + 0.7 / 3, abs=1e-15)


def test_what_if_base_override() -> None:
    data, _ = load(TWO_SESSIONS)
    base = data.base.copy()
    base[1] = 1.0  # s2 regraded to 1 in a what-if: uniform A = (1+0.8+1, 1+0.2+0) = (2.8, 1.2)
    cfg = CreditSettings(strategy="uniform")
    assert arm(fold(data, cfg, base), A) == pytest.approx((2.8, 1.2, 2))
    assert arm(fold(data, cfg), A) == pytest.approx((2.2, 1.8, 2))  # the data itself is unchanged


def test_empty_log() -> None:
    data, events = load([])
    post = fold(data, CreditSettings())
    assert post.arm_ids == () and post.graded_sessions == 0
    assert fold_naive(events, CreditSettings()) == {}


# ---------------------------------------------------------------- property: regrades fold like final grades

ARMS = ["a.md", "t/b.md", "lessons/t/c.md", "u/d.md"]


@st.composite
def logs(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(log with regrades, equivalent log holding only each session's final grade)."""
    n_sessions = draw(st.integers(1, 6))
    rewards = st.one_of(st.none(), st.floats(0, 1))
    records: list[dict[str, Any]] = []
    sessions: list[dict[str, Any]] = []
    final: dict[str, float | None] = {}
    for i in range(n_sessions):
        arms = draw(st.lists(st.sampled_from(ARMS), min_size=1, max_size=4, unique=True))
        lessons = {a: draw(st.one_of(st.none(), st.floats(0, 1))) for a in arms}
        sid = f"s{i}"
        event = session(sid, draw(rewards), lessons)
        records.append(event)
        sessions.append(event)
        final[sid] = event["base_reward"]
        # some grades for sessions logged so far, interleaved in file order
        for _ in range(draw(st.integers(0, 3))):
            target = f"s{draw(st.integers(0, i))}"
            value = draw(st.floats(0, 1))
            records.append(grade(target, value))
            final[target] = value
    equivalent = [{**event, "base_reward": final[event["session_id"]]} for event in sessions]
    return records, equivalent


credit_settings = st.builds(
    CreditSettings,
    strategy=st.sampled_from(["seed", "evidence", "uniform"]),
    floor=st.floats(0, 1),
    decay=st.sampled_from([1.0, 0.9, 0.5]),
    prior_alpha=st.sampled_from([1.0, 2.0]),
    prior_beta=st.sampled_from([1.0, 0.5]),
)


@settings(PROPERTY, max_examples=200)
@given(pair=logs(), cfg=credit_settings)
def test_regraded_log_folds_like_final_grades(
    pair: tuple[list[dict[str, Any]], list[dict[str, Any]]], cfg: CreditSettings
) -> None:
    records, equivalent = pair
    data, events = load(records)
    data_final, _ = load(equivalent)
    post, post_final = fold(data, cfg), fold(data_final, cfg)
    assert post.arm_ids == post_final.arm_ids
    np.testing.assert_allclose(post.alpha, post_final.alpha, rtol=0, atol=1e-9)
    np.testing.assert_allclose(post.beta, post_final.beta, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(post.n, post_final.n)
    np.testing.assert_array_equal(post.rewarded, post_final.rewarded)
    assert post.graded_sessions == post_final.graded_sessions
    assert_matches_naive(data, events, cfg)


# ---------------------------------------------------------------- batched reading equals line by line


C = "lessons/tools/c.md"  # written with the prefix: the same lesson id as "tools/c.md"


def _index_of(records: Sequence[dict[str, Any] | str], batched: bool) -> LogIndex:
    from lesson_credit.core.log.events import decode_raw

    data = b"".join((r if isinstance(r, str) else json.dumps(r) + "\n").encode() for r in records)
    result = parse_chunk(data, 0, 1, at_eof=True, decode=decode_raw)
    index = LogIndex()
    index.problems.extend(result.problems)
    if batched:
        index.problems.extend(index.add_many(result.events))
    else:
        for line, raw in result.events:
            try:
                index.add_raw(line, raw)
            except InvalidEvent as exc:
                index.problems.append(LogProblem(line, str(exc)))
    return index


MIXED_LOGS = {
    "grade before its session, prior between sessions": [
        grade("s2", 0.9),  # line 1: its session comes later in the same stretch
        session("s1", 0.5, {A: 0.2, B: 0.4}),
        {"type": "prior", "arms": {C: {"alpha": 3.0, "beta": 2.0, "n": 4}}},  # arm C before D appears
        session("s2", None, {"tools/d.md": 1.0, A: 0.0}),
        {"type": "selection", "session_id": "s3", "candidates": [A], "selected": [A], "propensity": {A: 1.0}},
        session("s3", 1.0, {C: 0.5, A: 0.5}),
        grade("s1", 0.1),
    ],
    "an unusual session among ordinary ones": [
        session("s1", 0.5, {A: 0.2}),
        {"session_id": "pub", "outcome": 1, "lessons": ["tools/e.md", {"path": B}]},  # published shape
        session("s2", 0.5, {B: None}),  # no salience stored
        session("s3", 0.5, {"tools/f.md": 0.3}),
    ],
    "duplicates and bad events": [
        session("s1", 0.5, {A: 0.2}),
        session("s1", 0.9, {B: 0.2}),  # duplicate: the first counts
        session("s2", 1.5, {A: 0.2}),  # base out of range
        session("s3", 0.5, {A: 1.2}),  # salience out of range
        {"type": "grade", "session_id": "s1"},  # grade without a reward
        {"type": "bogus"},
        session("s4", 0.0, {"tools/g.md": 0.1}),
    ],
}


@pytest.mark.parametrize("name", list(MIXED_LOGS))
def test_batched_add_equals_line_by_line(name: str) -> None:
    batched, single = _index_of(MIXED_LOGS[name], True), _index_of(MIXED_LOGS[name], False)
    a, b = batched.snapshot(), single.snapshot()
    assert a.arm_ids == b.arm_ids  # arms numbered in the same order of first appearance
    for column in ("entry_arm", "entry_salience", "session_start", "base", "prior_alpha", "prior_n"):
        np.testing.assert_array_equal(getattr(a, column), getattr(b, column))
    assert a.graders == b.graders
    assert sorted((p.line, p.reason) for p in a.problems) == sorted((p.line, p.reason) for p in b.problems)
    assert batched.session_ids == single.session_ids
    assert [batched.session(r) for r in range(batched.n_sessions)] == [
        single.session(r) for r in range(single.n_sessions)
    ]
    assert [g for _, g in batched.grades] == [g for _, g in single.grades]
    assert [s for _, s in batched.selections] == [s for _, s in single.selections]


def test_grade_before_its_session_applies_in_both_paths() -> None:
    index = _index_of(MIXED_LOGS["grade before its session, prior between sessions"], True)
    data = index.snapshot()
    # s1: recorded 0.5, graded 0.1 later; s2: pending when recorded, graded 0.9 on line 1; s3: 1.0
    np.testing.assert_array_equal(data.base, [0.1, 0.9, 1.0])
    assert data.arm_ids == ("tools/a.md", "tools/b.md", "tools/c.md", "tools/d.md")


# ---------------------------------------------------------------- per-arm sums by blocks of sessions


def _events(n: int, grades: dict[str, float] | None = None) -> list[dict[str, Any] | str]:
    records: list[dict[str, Any] | str] = [
        session(f"s{i}", None if i % 4 == 0 else (i % 10) / 10, {A: (i % 5) / 4, B: ((i + 2) % 5) / 4})
        for i in range(n)
    ]
    records += [grade(sid, value) for sid, value in (grades or {}).items()]
    return records


def _loaded(records: list[dict[str, Any] | str]) -> LogIndex:
    return _index_of(records, batched=True)


@pytest.mark.parametrize("strategy", ["seed", "evidence", "uniform"])
def test_block_sums_fold_like_the_naive_loop(monkeypatch: pytest.MonkeyPatch, strategy: str) -> None:
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 3)  # 20 sessions: 7 blocks, the last one short
    records = _events(20, {"s4": 0.9, "s5": 0.2})
    data, events = load(records)
    cfg = CreditSettings(strategy=strategy)
    assert_matches_naive(data, events, cfg)
    post = fold(data, cfg)
    # reward counts and last sessions by blocks, against a direct count over every session
    rewarded = {A: 0, B: 0}
    last = {A: -1, B: -1}
    for row, event in enumerate(e for e in events if isinstance(e, SessionEvent)):
        reward = data.base[row]
        if np.isnan(reward):
            continue
        for lesson_id, sal in zip(event.lesson_ids, event.saliences, strict=True):
            w = cfg.floor + (1 - cfg.floor) * sal
            credited = reward * w if strategy == "seed" else reward
            rewarded[lesson_id] += credited > 0.5
            last[lesson_id] = row
    assert {arm: int(post.rewarded[j]) for j, arm in enumerate(post.arm_ids)} == rewarded
    assert {arm: int(post.last_session[j]) for j, arm in enumerate(post.arm_ids)} == last


def test_a_new_grade_recomputes_only_its_block_and_equals_a_fresh_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    import lesson_credit.core.log.snapshot as fold_mod
    from lesson_credit.core.log import blockpatch

    monkeypatch.setattr(fold_mod, "BLOCK_ROWS", 4)
    computed: list[int] = []
    real = fold_mod._block_sums

    def counting(data: FoldData, base: Any, lo: int, hi: int) -> Any:
        computed.append(lo)
        return real(data, base, lo, hi)

    monkeypatch.setattr(fold_mod, "_block_sums", counting)
    patched: list[int] = []
    real_patch = blockpatch.patched

    def patching(data: FoldData, base: Any, lo: int, hi: int, old: Any, rows: Any) -> Any:
        patched.append(lo)
        return real_patch(data, base, lo, hi, old, rows)

    monkeypatch.setattr(blockpatch, "patched", patching)
    records = _events(18)  # blocks start at rows 0, 4, 8, 12, 16
    index = _loaded(records)
    cfg = CreditSettings()
    first = fold(index.snapshot(), cfg)
    assert computed == [0, 4, 8, 12, 16]
    computed.clear()
    index.add_raw(len(records) + 1, _raw(grade("s9", 0.95)))  # row 9: the block at 8
    after = fold(index.snapshot(), cfg)
    assert computed == [] and patched == [8]  # its block patched for the arms of s9 (core/log/blockpatch.py)
    fresh = fold(_loaded([*records, grade("s9", 0.95)]).snapshot(), cfg)
    # the same block sums added in the same order: exactly equal, not just close
    assert after.alpha.tolist() == fresh.alpha.tolist() and after.beta.tolist() == fresh.beta.tolist()
    assert after.alpha.tolist() != first.alpha.tolist()
    computed.clear()
    index.add_raw(len(records) + 2, _raw(session("s18", 0.5, {A: 1.0})))  # a new session: the last block
    extended = fold(index.snapshot(), cfg)
    assert computed == []  # the last block's sums extended by the new session's entries, not summed again
    fresh = fold(_loaded([*records, grade("s9", 0.95), session("s18", 0.5, {A: 1.0})]).snapshot(), cfg)
    assert extended.alpha.tolist() == fresh.alpha.tolist() and extended.beta.tolist() == fresh.beta.tolist()
    assert extended.n.tolist() == fresh.n.tolist() and extended.last_session.tolist() == fresh.last_session.tolist()


def _raw(record: dict[str, Any]) -> Any:
    from lesson_credit.core.log.events import decode_raw

    return decode_raw(json.dumps(record))


def test_salience_in_matches_each_sessions_own_entries() -> None:
    from lesson_credit.core.log.snapshot import salience_in

    records: list[dict[str, Any] | str] = [
        session("s0", 0.5, {A: 0.1, B: 0.2}),
        session("s1", 0.5, {B: 0.7}),
        {
            "type": "session",
            "session_id": "s2",
            "base_reward": 0.5,  # A twice: the first entry counts
            "lessons": [{"path": A, "salience": 0.3}, {"path": A, "salience": 0.9}],
        },
        session("s3", 0.5, {}),
    ]
    index = _loaded(records)
    data = index.snapshot()
    a, b = data.arm_ids.index(A), data.arm_ids.index(B)
    rows = np.array([0, 0, 1, 1, 2, 3, 2], dtype=np.int64)
    arms = np.array([a, b, a, b, a, a, b], dtype=np.int64)
    expected = [0.1, 0.2, np.nan, 0.7, 0.3, np.nan, np.nan]
    np.testing.assert_array_equal(salience_in(data, rows, arms), expected)
    assert salience_in(data, rows[:0], arms[:0]).tolist() == []


def test_lesson_usage_by_blocks_counts_every_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    from lesson_credit.core.log.usage import lesson_usage

    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 3)
    records = _events(10)  # s0..s9: A salience (i % 5) / 4, B ((i + 2) % 5) / 4, graded or not
    data = _loaded(records).snapshot()
    usage = lesson_usage(data)
    a, b = data.arm_ids.index(A), data.arm_ids.index(B)
    sal_a = [(i % 5) / 4 for i in range(10)]
    sal_b = [((i + 2) % 5) / 4 for i in range(10)]
    assert usage.injected[[a, b]].tolist() == [10, 10]
    assert usage.salient[[a, b]].tolist() == [sum(v > 0 for v in sal_a), sum(v > 0 for v in sal_b)]  # 8 and 8
    assert usage.salience[[a, b]].tolist() == pytest.approx([sum(sal_a), sum(sal_b)])  # 5.0 and 5.0
    assert lesson_usage(data).salience.tolist() == usage.salience.tolist()  # cached blocks: the same sums


def test_a_snapshot_does_not_change_when_the_index_grows() -> None:
    records = [session("s1", 0.8, {A: 1.0}, grader="auto"), session("s2", None, {A: 0.5})]
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    index = LogIndex()
    for line, event in parse_chunk(data, 0, 1, at_eof=True).events:
        index.add(line, event)
    snapshot = index.snapshot()
    # the snapshot holds what it needs as of when it was taken, not the index itself
    assert not any(isinstance(value, LogIndex) for value in vars(snapshot.grader_source).values())
    more = [grade("s1", 0.1, grader="late"), grade("s2", 0.9, grader="late"), session("s3", 0.5, {B: 1.0})]
    data = b"".join(json.dumps(r).encode() + b"\n" for r in more)
    for line, event in parse_chunk(data, 0, 3, at_eof=True).events:
        index.add(line, event)
    assert snapshot.graders == ("auto", None)  # first asked for after the index grew
    assert snapshot.grader_source.of(0, 0.8) == "auto"
    assert snapshot.base.tolist()[0] == 0.8 and np.isnan(snapshot.base[1])
    assert snapshot.arm_ids == (A,) and snapshot.n_sessions == 2
    assert index.snapshot().graders == ("late", "late", "heuristic")
