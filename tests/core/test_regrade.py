"""Incremental regrade (the dashboard's live preview) against a full re-fold."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from lesson_credit.core.bandit.fold import CreditSettings, fold, regrade
from lesson_credit.core.log.events import SessionEvent
from lesson_credit.core.log.index import LogIndex
from tests.support.engine_helpers import PROPERTY

ARMS = ["a.md", "b.md", "c.md", "d.md"]

sessions = st.lists(
    st.tuples(
        st.one_of(st.none(), st.floats(0, 1)),
        st.lists(st.tuples(st.sampled_from(ARMS), st.floats(0, 1)), min_size=1, max_size=4, unique_by=lambda t: t[0]),
    ),
    min_size=1,
    max_size=12,
)


@PROPERTY
@given(
    sessions,
    st.sampled_from(["seed", "evidence", "uniform"]),
    st.sampled_from([0.0, 0.3, 1.0]),
    st.sampled_from([1.0, 0.8]),
    st.data(),
)
def test_regrade_equals_a_full_fold_with_the_new_reward(
    log: list[tuple[float | None, list[tuple[str, float]]]],
    strategy: str,
    floor: float,
    decay: float,
    data: st.DataObject,
) -> None:
    index = LogIndex()
    for i, (session_base, lessons) in enumerate(log):
        event = SessionEvent(f"s{i}", None, session_base, tuple(a for a, _ in lessons), tuple(s for _, s in lessons))
        index.add(i + 1, event)
    folded = index.snapshot()
    settings = CreditSettings(strategy=strategy, floor=floor, decay=decay)
    post = fold(folded, settings)
    row = data.draw(st.integers(0, len(log) - 1))
    reward = data.draw(st.one_of(st.none(), st.floats(0, 1)))
    quick = regrade(post, row, reward)
    base = folded.base.copy()
    base[row] = np.nan if reward is None else reward
    full = fold(folded, settings, base)
    np.testing.assert_allclose(quick.alpha, full.alpha, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(quick.beta, full.beta, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(quick.n, full.n)
    assert quick.graded_sessions == full.graded_sessions
    np.testing.assert_array_equal(quick.rewarded, full.rewarded)


def test_regrade_by_hand() -> None:
    # One session, seed, floor 0.3: a (salience 1, w 1) and b (salience 0, w 0.3), graded 0.5.
    index = LogIndex()
    index.add(1, SessionEvent("s", None, 0.5, ("a.md", "b.md"), (1.0, 0.0)))
    post = fold(index.snapshot(), CreditSettings())
    # regrade to 0.9: a alpha = 1 + 0.9 = 1.9, beta = 1 + 0.1 = 1.1; b alpha = 1 + 0.27, beta = 1 + 0.73
    after = regrade(post, 0, 0.9)
    np.testing.assert_allclose(after.alpha, [1.9, 1.27])
    np.testing.assert_allclose(after.beta, [1.1, 1.73])
    # back to pending: the prior again, n 0
    pending = regrade(after, 0, None)
    np.testing.assert_allclose(pending.alpha, [1.0, 1.0])
    assert list(pending.n) == [0, 0] and pending.graded_sessions == 0
