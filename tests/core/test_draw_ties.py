"""A selection's logged propensities are its draw's real frequencies, and never 0 for a lesson it chose.

Beta draws of a small prior land on exactly 0.0 or 1.0: the draw broke such ties by candidate order while the
estimate counted every tied lesson as chosen (k = 2 of 5 lessons at Beta(0.01, 0.01): propensities summing to
2.28, one lesson chosen in 32% of the draws). And the 4,000-draw estimate could be 0 for a lesson the draw chose.
Frequencies here are counted by brute force over fixed seeds, as `select` draws (`beta.top_k` with the draw's
generator)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.bandit import policy as policy_mod
from lesson_credit.core.library.lessons import Lesson
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace

FIVE = ["a.md", "b.md", "c.md", "d.md", "e.md"]


def test_tied_draws_go_to_lessons_at_random_and_the_propensities_say_so(tmp_path: Path) -> None:
    config = '[prior]\nalpha = 0.01\nbeta = 0.01\n[select]\npolicy = "seed"\n'
    root = make_workspace(tmp_path, {name: (["schema"], "active") for name in FIVE}, [], config=config)
    ws = Workspace(root, clock=fixed_clock)
    seeds = 1000
    chosen, logged = Counter[str](), Counter[str]()
    for seed in range(seeds):
        selection = ws.select("change the schema", k=2, seed=seed, log=False)
        assert sum(selection.propensity.values()) == pytest.approx(2.0, abs=1e-9)  # k places in every draw
        assert all(selection.propensity[name] >= 1 / 4001 for name in selection.selected)
        chosen.update(selection.selected)
        logged.update(selection.propensity)
    # five lessons with one posterior: each is chosen in 2 / 5 of the draws (binomial sd over 1,000 seeds 0.015;
    # by candidate order the last was chosen in 0.32 of them), and each propensity estimates that
    for name in FIVE:
        assert chosen[name] / seeds == pytest.approx(0.4, abs=0.05), name
        assert logged[name] / seeds == pytest.approx(0.4, abs=0.005), name


def brute_force(alpha: np.ndarray, beta: np.ndarray, k: int, seeds: int) -> np.ndarray:
    """Each arm's share of `seeds` draws in which a selection (one Thompson draw, its top k) chose it."""
    counts = np.zeros(len(alpha))
    for seed in range(seeds):
        rng = np.random.default_rng(seed)
        counts[beta_mod.top_k(beta_mod.thompson_draw(alpha, beta, rng), k, rng)] += 1
    return counts / seeds


@pytest.mark.parametrize("direct", [True, False])  # every arm drawn at once; in batches, arms alike as a group
def test_the_estimate_is_the_draws_frequency_when_draws_tie(direct: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # 100 lessons at the prior Beta(0.01, 0.01) (half their draws are exactly 1.0), one with 30 successes (its
    # draws 1.0 about as often: 1 - x is Beta(0.01, 30)), one with 3 failures, one at Beta(2, 2); k = 3
    alpha = np.array([0.01] * 100 + [30.01, 0.01, 2.0])
    beta = np.array([0.01] * 100 + [0.01, 3.01, 2.0])
    if not direct:
        monkeypatch.setattr(beta_mod, "DIRECT_VALUES", 0)
    seeds = 4000
    frequency = brute_force(alpha, beta, 3, seeds)
    estimate = beta_mod.p_top_k(alpha, beta, 3, np.random.default_rng(99), 20_000)
    assert estimate.sum() == pytest.approx(3.0, abs=1e-9)
    # the brute force's sd is sqrt(p (1 - p) / 4000) (at most 0.008), the estimate's a third of that
    slack = 4 * np.sqrt(frequency * (1 - frequency) / seeds) + 0.002
    assert (np.abs(estimate[100:] - frequency[100:]) <= slack[100:]).all()
    assert estimate[:100].mean() == pytest.approx(frequency[:100].mean(), abs=0.002)
    assert frequency[100] > 0.04  # the lesson with evidence is in the ties: it is chosen, but not always


def test_a_chosen_lesson_s_propensity_counts_its_own_draw() -> None:
    # k = 1 of 5 normal posteriors: four at +0.04, one at 0 (sd 0.02 each, tempered to 0.014): the fifth wins a
    # draw with chance 5.8e-4 (the integral of its density times the others' cdf to the 4th), so 400 draws
    # estimate 0 for it 79% of the time. Over 8,000 seeds it is chosen a few times; each time its propensity
    # counts that draw.
    lessons = [Lesson(f"l{i}.md", "", "", "active", "", (), ()) for i in range(5)]
    posterior = policy_mod.NormalPosterior(
        tuple(x.id for x in lessons), np.array([0.04, 0.04, 0.04, 0.04, 0.0]), np.full(5, 0.02), 0.15
    )
    rare = []
    for seed in range(8000):
        rng, propensity_rng = np.random.default_rng(seed), np.random.default_rng([seed, 1])
        selection = policy_mod.joint_select("s", lessons, posterior, 1, seed, rng, propensity_rng, draws=400)
        assert sum(selection.propensity.values()) == pytest.approx(1.0, abs=1e-9)
        if "l4.md" in selection.selected:
            rare.append(selection.propensity["l4.md"])
    assert len(rare) >= 2
    assert min(rare) >= 1 / 401  # the draw that chose it, one of 401
