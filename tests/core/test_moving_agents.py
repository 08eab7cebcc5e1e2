"""A fleet's agents whose baselines move unlike each other's (one moved to another model, one given harder work):
each (category, agent) pair with 12 graded sessions a time block or more has blocks of its own (docs/estimates.md
"Time"), so a rise in one agent's baseline is not credited to a lesson that agent uses more and more. 1,000
sessions (10 time blocks), two agents at random, noise sd 0.1, six other lessons at random in 40% of the sessions."""

from __future__ import annotations

import numpy as np

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.joint import Design, block_codes, fit_joint, time_blocks

N = 1000


def agent_trend(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Agent 0's baseline rises 0.35 -> 0.65 over the log, agent 1's stays at 0.5; lesson 0 only in agent 0's
    sessions, in 10% of them at first and 70% at the end; no effect."""
    rng = np.random.default_rng([36, 1, seed])
    f = np.arange(N) / (N - 1)
    agent = (rng.random(N) < 0.5).astype(np.int64)
    x = rng.random((N, 7)) < 0.4
    x[:, 0] = (agent == 0) & (rng.random(N) < 0.1 + 0.6 * f)
    reward = np.where(agent == 0, 0.35 + 0.3 * f, 0.5) + rng.normal(0, 0.1, N)
    return x, reward, agent


def test_a_trend_in_one_agents_baseline_is_not_credited_to_a_lesson_it_uses() -> None:
    # Before: the time blocks were cut by category only (one here), the agent one additive column for the whole
    # log, so agent 0's rise within each block beside agent 1's flat line read as lesson 0's effect: claimed
    # "helps" in 31 of 40 such logs, these two [+0.029, +0.072] and [+0.036, +0.079] (the joint fit +0.035 and
    # +0.038, sd 0.010). Now each agent has its own blocks: [-0.017, +0.025] and [-0.015, +0.028] (fit +0.002 and
    # +0.000); least squares on agent x block baselines (below, by hand) is near 0, and so are the claims and the
    # joint fit (the ranking the joint policy reads)
    blocks = time_blocks(N)
    for seed in range(2):
        x, reward, agent = agent_trend(seed)
        rows, arms = np.nonzero(x)
        category = np.zeros(N, dtype=np.int64)
        design = Design(
            np.arange(N), reward, category, 1, rows, arms, np.ones(len(rows)), 7, agent=agent, n_agents=2,
            n_blocks=blocks,
        )  # fmt: skip
        column = lesson_claims(design).of(0)
        assert column is not None and column.effect is not None
        low, high = column.effect.bounds(0.95)
        assert low <= 0.0 <= high, (seed, low, high)
        cells = np.eye(2 * blocks)[agent * blocks + block_codes(N, blocks)]
        ols = np.linalg.lstsq(np.hstack([x.astype(float), cells]), reward, rcond=None)[0][:7]
        fit = fit_joint(design)
        assert abs(ols[0]) < 0.02, ols[0]
        assert abs(fit.coef[0] - ols[0]) < 0.5 * fit.coef_sd[0], (fit.coef[0], ols[0])
        assert abs(fit.coef[0]) < 2 * fit.coef_sd[0]
