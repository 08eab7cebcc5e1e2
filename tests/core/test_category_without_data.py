"""`select --category`: a lesson's draw in a category where the log holds no estimate of its deviation there
(never injected in that category, or injected in every session of it, which the category's baselines read).
docs/policy.md: the draw's sd is sqrt(sd_j^2 + tau_j^2 s2 / (tau_j^2 + s2)), and such a cell has s2 infinite:
sqrt(sd_j^2 + tau_j^2), its mean the overall effect. Such cells were drawn with the overall sd alone (a lesson
+0.2 in one category and -0.2 in another drew in a third with sd 0.01 where it is 0.2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.oracles import time_columns

N, PER_BLOCK = 480, 60  # docs/estimates.md: floor(2 log2(480 / 25)) = 8 time blocks, of 60 graded sessions
CATEGORIES = ("x", "y", "z")
OTHERS = [f"m{j}.md" for j in range(6)]
LESSONS = {name: (["schema"], "active") for name in ["d.md", "a.md", "always.md", *OTHERS]}


def log() -> list[dict[str, Any]]:
    """x, y, z in turn; d.md in half the sessions of x (+0.2) and y (-0.2), never in z; a.md in half of x
    (+0.1), nowhere else; always.md in every session of y and half of x and z (no effect); m0-m5 in half
    the sessions, each with a small effect of its own per category (sd 0.04, so the shared tau is not 0);
    noise sd 0.05."""
    rng = np.random.default_rng(4)
    small = rng.normal(0.0, 0.04, (3, len(OTHERS)))
    events = []
    for i in range(N):
        c = i % 3
        injected, reward = [], 0.5
        if c != 2 and rng.random() < 0.5:
            injected.append("d.md")
            reward += 0.2 if c == 0 else -0.2
        if c == 0 and rng.random() < 0.5:
            injected.append("a.md")
            reward += 0.1
        if c == 1 or rng.random() < 0.5:
            injected.append("always.md")
        for j, name in enumerate(OTHERS):
            if rng.random() < 0.5:
                injected.append(name)
                reward += small[c, j]
        reward = float(np.clip(reward + rng.normal(0.0, 0.05), 0.0, 1.0))
        events.append(session(f"s{i}", round(reward, 4), dict.fromkeys(injected, 1.0), category=CATEGORIES[c]))
    return events


def cell_noise(events: list[dict[str, Any]], noise_sd: float) -> dict[tuple[str, str], float]:
    """Per (category, lesson) cell, s2 = noise^2 / A, A the squares of its column (1 in its category's sessions
    with the lesson) left after its least squares on the category and time-block indicators (the last block the
    reference); infinite where nothing is left (A below 1e-9 of the column's squares) or the lesson is absent."""
    category = np.array([CATEGORIES.index(e["category"]) for e in events])
    z = np.column_stack([*(category == c for c in range(3))]).astype(float)
    z = np.hstack([z, time_columns(N, N // PER_BLOCK, category)])  # (each category's own blocks when it has enough)
    out = {}
    for c, name in enumerate(CATEGORIES):
        for lesson in LESSONS:
            x = np.array(
                [
                    float(category[i] == c and any(x["path"] == lesson for x in e["lessons"]))
                    for i, e in enumerate(events)
                ]
            )
            left = x - z @ np.linalg.lstsq(z, x, rcond=None)[0]
            a = float(left @ left)
            out[name, lesson] = noise_sd**2 / a if a > 1e-9 * float(x @ x) and x.any() else np.inf
    return out


def test_a_cell_without_an_estimate_is_drawn_at_its_lesson_s_prior_for_the_deviation(tmp_path: Path) -> None:
    events = log()
    post = Workspace(make_workspace(tmp_path, LESSONS, events), clock=fixed_clock).joint_posterior()
    assert post.categories == CATEGORIES
    s2 = cell_noise(events, post.noise_sd)
    arm = {name: post.arm_ids.index(name) for name in LESSONS}
    variance = post.deviation_var
    assert variance is not None

    def tau2(name: str, lesson: str) -> float:
        """A cell with an estimate has variance v = tau^2 s2 / (tau^2 + s2) (weights 1): tau^2 = v s2 / (s2 - v)."""
        v = float(variance[CATEGORIES.index(name), arm[lesson]])
        return v * s2[name, lesson] / (s2[name, lesson] - v)

    # the cells without an estimate: d.md in z, a.md in y and z (never injected there), always.md in y (every session)
    without = [("z", "d.md"), ("y", "a.md"), ("z", "a.md"), ("y", "always.md")]
    assert [cell for cell, noise in s2.items() if noise == np.inf] == sorted(without, key=lambda c: c[0])
    # each lesson's tau^2, as its cells with an estimate hold it (all of a lesson's cells hold the same): a lesson
    # flagged as differing by category has its own, at least the one every other lesson shares (a.md's: one cell)
    held = [cell for cell, noise in s2.items() if noise != np.inf]
    lessons = {lesson: [tau2(name, lesson) for name, other in held if other == lesson] for lesson in LESSONS}
    assert all(values == pytest.approx([values[0]] * len(values), rel=1e-6) for values in lessons.values())
    shared = min(values[0] for values in lessons.values())
    assert lessons["a.md"][0] == pytest.approx(shared, rel=1e-6) and shared > 0.005**2
    # d.md differs (+0.2 and -0.2): the weighted moments of two partials near +-0.2 (s2 ~ 0.0003), about 0.04
    assert lessons["d.md"][0] == pytest.approx(0.04, abs=0.01)
    expected = {lesson: values[0] for lesson, values in lessons.items()}
    for name, lesson in without:
        mean, sd = post.in_category(name)
        j = arm[lesson]
        assert mean[j] == pytest.approx(post.mean[j], abs=1e-15)  # no deviation: the overall effect
        assert sd[j] == pytest.approx(np.sqrt(post.sd[j] ** 2 + expected[lesson]), rel=1e-9), (name, lesson)
    # d.md in z: about 0.2, as the two categories it was injected in tell apart (its overall sd is near 0.01)
    assert post.in_category("z")[1][arm["d.md"]] > 0.15
