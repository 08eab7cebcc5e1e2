"""Selection policies: which posterior a `select` draws from.

- `seed`, `evidence`, `uniform`: Thompson top-k on the Beta posteriors folded under that credit
  strategy (`core.bandit.select.thompson_select`; the meaning `select` always had).
- `joint`: Thompson top-k on a normal posterior of each lesson's effect per injection, the
  joint estimate's (`core.analysis.joint_posterior` computes it; this module only draws).
  A lesson the estimate has no data for is drawn from the prior: mean 0, the prior's sd.
  Every draw is tempered: its sd is the posterior's times `POLICY_TEMPER` (0.7; docs/policy.md has
  the regret measured with and without).

Propensities are each candidate's chance to land in a top-k draw, estimated by Monte Carlo
like the Beta policies' (the selection's own draw counted among the draws: `topk.with_draw`), so
inverse-propensity weighting and LOO read them the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lesson_credit.core.bandit.select import Selection, top_k_selection
from lesson_credit.core.library.lessons import Lesson
from lesson_credit.core.model import beta as beta_mod
from lesson_credit.core.model import topk
from lesson_credit.core.model.credit import STRATEGIES

FloatArray = npt.NDArray[np.float64]

JOINT = "joint"
POLICY_TEMPER = 0.7  # the joint policy draws with the posterior sd times this (docs/policy.md: regret measured)
POLICIES = (*STRATEGIES, JOINT)


def check_policy(policy: object) -> str:
    """A policy name, or ValueError with a one-line reason."""
    if not isinstance(policy, str) or policy not in POLICIES:
        raise ValueError(f"unknown selection policy {policy!r} (expected one of {', '.join(POLICIES)})")
    return policy


@dataclass(frozen=True)
class NormalPosterior:
    """Per lesson, a normal posterior of its effect per injection (arms in `arm_ids` order)."""

    arm_ids: tuple[str, ...]
    mean: FloatArray
    sd: FloatArray
    prior_sd: float  # what a lesson without data is drawn with (mean 0)

    def of(self, lesson_ids: Sequence[str]) -> tuple[FloatArray, FloatArray]:
        """(mean, sd) of each lesson id; the prior (0, prior_sd) for one the posterior lacks."""
        position = {arm: i for i, arm in enumerate(self.arm_ids)}
        rows = np.array([position.get(i, -1) for i in lesson_ids], dtype=np.int64)
        known = rows >= 0
        mean = np.zeros(len(rows))
        sd = np.full(len(rows), self.prior_sd)
        mean[known] = self.mean[rows[known]]
        sd[known] = self.sd[rows[known]]
        return mean, sd


def normal_draw(mean: FloatArray, sd: FloatArray, rng: np.random.Generator) -> FloatArray:
    """One Thompson draw per lesson: mean + sd * z, z standard normal from `rng`."""
    z = rng.standard_normal(len(mean))
    result: FloatArray = mean + sd * z
    return result


def p_top_k_normal(
    mean: FloatArray,
    sd: FloatArray,
    k: int,
    rng: np.random.Generator,
    draws: int,
    chosen: FloatArray | None = None,
) -> FloatArray:
    """Monte Carlo estimate of each lesson's chance to land in a top-k draw of `normal_draw`. Drawn in
    batches of `topk.BATCH_VALUES` values and at most `topk.VALUE_BUDGET` values in all (as the Beta
    policies' `topk.p_top_k_large`): memory and time linear in the lessons; below the budget the
    estimate is the one-shot one (the same stream of normals). Ties and `chosen` (the selection's own
    draw counted too) as `beta.p_top_k`."""
    n = len(mean)
    if n == 0:
        return np.zeros(0)
    if k >= n:
        return np.ones(n)
    draws = max(1, min(draws, max(topk.MIN_DRAWS, topk.VALUE_BUDGET // n)))
    per_batch = max(1, topk.BATCH_VALUES // n)
    hits = np.zeros(n)
    done = 0
    while done < draws:
        m = min(per_batch, draws - done)
        samples = mean[None, :] + sd[None, :] * rng.standard_normal((m, n))
        hits += topk.top_k_counts(samples, k)
        done += m
    return topk.with_draw(hits, draws, chosen)


def joint_select(
    session_id: str,
    candidates: Sequence[Lesson],
    posterior: NormalPosterior,
    k: int,
    seed: int,
    rng: np.random.Generator,
    propensity_rng: np.random.Generator,
    draws: int = 4000,
) -> Selection:
    """Thompson top-k among the candidates on the joint posterior; propensities from `draws` draws and the
    selection's own."""
    ids = [c.id for c in candidates]
    mean, sd = posterior.of(ids)
    sd = sd * POLICY_TEMPER
    sample = normal_draw(mean, sd, rng) if ids else np.zeros(0)
    picked = beta_mod.top_k(sample, k, rng)
    propensity = p_top_k_normal(mean, sd, k, propensity_rng, draws, topk.chosen_of(picked, len(ids)))
    return top_k_selection(session_id, ids, sample, picked, propensity, k, seed, JOINT)


def p_top_k_active_later(
    posterior: NormalPosterior, lessons: Sequence[Lesson], k: int, seed: int, draws: int
) -> Callable[[], dict[str, float]]:
    """P(each active lesson lands in a top-k draw of the joint policy among the active `lessons`), in two
    steps: the posterior's values taken now (copies), the draws when the returned function is called."""
    ids = [lesson.id for lesson in lessons if lesson.status == "active"]
    mean, sd = (np.array(values, dtype=np.float64) for values in posterior.of(ids))
    sd = sd * POLICY_TEMPER

    def draw() -> dict[str, float]:
        probability = p_top_k_normal(mean, sd, k, np.random.default_rng(seed), draws)
        return {lesson_id: float(p) for lesson_id, p in zip(ids, probability, strict=True)}

    return draw


def describe(policy: str) -> str:
    """One line on what a policy draws from."""
    if policy == JOINT:
        return "joint: Thompson on the joint estimate's posterior (category baselines + every lesson's effect)"
    return f"{policy}: Thompson on the Beta posteriors under {policy} credit"


def as_json(policy: str) -> dict[str, Any]:
    return {"policy": policy, "description": describe(policy)}
