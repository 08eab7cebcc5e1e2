"""The reason of a lesson identified only by time names the sessions its switch is told among. Before, it named the
one category it varied in or nothing, so with several agents a lesson switched on in agent a1's sessions only read
"never injected in a graded session before it and in every one from it on", though most later sessions (agent
a2's) did not have it (an outside attack: 41 of them).

The worlds here: 120 graded sessions in 4 time blocks of 30, agent a1 writing the even sessions and a2 the odd
ones, categories x and y at random; lessons switched on at session 45 (inside block 1, sessions 30-59).
"""

from __future__ import annotations

import numpy as np
import pytest

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.joint import Design

N, BLOCKS, AT = 120, 4, 45


def design_of(x: np.ndarray, category: np.ndarray, agent: np.ndarray | None) -> Design:
    n, p = x.shape
    rows, arms = np.nonzero(x)
    reward = np.asarray(np.random.default_rng(1).normal(0.5, 0.1, n), dtype=np.float64)
    return Design(
        np.arange(n),
        reward,
        category,
        2,
        rows,
        arms,
        np.ones(len(rows)),
        p,
        agent=agent,
        n_agents=0 if agent is None else 2,
        category_names=("x", "y"),
        n_blocks=BLOCKS,
        agent_names=("a1", "a2") if agent is not None else (),
    )


def world(agents: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    rng = np.random.default_rng(7)
    i = np.arange(N)
    category = (rng.random(N) < 0.5).astype(np.int64)  # 0: x, 1: y
    agent = (i % 2).astype(np.int64)  # 0: a1 (even), 1: a2 (odd)
    after = i >= AT
    a1 = agent == 0 if agents else np.ones(N, dtype=bool)
    columns = [rng.random(N) < 0.5, rng.random(N) < 0.5, a1 & after, a1 & after & (category == 0)]
    return np.column_stack(columns).astype(np.float64), category, agent if agents else None


def reasons(agents: bool) -> list[str | None]:
    x, category, agent = world(agents)
    claims = lesson_claims(design_of(x, category, agent))
    return [column.reason if column is not None else None for column in map(claims.of, range(x.shape[1]))]


def test_the_worlds_switches_by_hand() -> None:
    x, category, agent = world(True)
    assert agent is not None
    later = np.arange(N) >= AT
    # lesson 2: every a1 session from 45 on, no a2 session ever, none before: it varies among a1's sessions only
    assert x[later & (agent == 0), 2].all() and not x[agent == 1, 2].any() and not x[~later, 2].any()
    assert np.count_nonzero(later & (agent == 1)) == 38  # later sessions (a2: 45, 47, ..., 119) without it
    # lesson 3: a1's sessions of category x from 45 on
    assert x[later & (agent == 0) & (category == 0), 3].all() and not x[(agent == 1) | (category == 1), 3].any()


@pytest.mark.parametrize(("lesson", "scope"), [(2, "of agent a1 before it"), (3, "of category x and agent a1")])
def test_a_switch_in_one_agent_says_so(lesson: int, scope: str) -> None:
    reason = reasons(True)[lesson]
    assert reason is not None and reason.startswith("identified only by time: it switched at"), reason
    assert f"never injected in a graded session {scope}" in reason, reason


def test_with_one_agent_a_switch_in_every_category_names_none_and_one_in_one_category_names_it() -> None:
    found = reasons(False)
    assert found[2] is not None and "never injected in a graded session before it" in found[2], found[2]
    assert found[3] is not None and "never injected in a graded session of category x before it" in found[3]
