"""Worlds built here with numpy, independently of the simulator: what the joint policy and seed
credit select in them (propensities: each lesson's chance to land in a top-k draw)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session

NULLS = [f"n{i}.md" for i in range(4)]
LESSONS = {"help.md": (["task"], "active"), "rider.md": (["task"], "active")} | {n: (["task"], "active") for n in NULLS}


def rider_log(n: int = 300, seed: int = 11) -> list[dict[str, object]]:
    """help.md (+0.15) injected in half the sessions; rider.md (no effect) rides along in 90% of those
    and 10% of the rest; each null lesson in half the sessions. Reward 0.5 + effect + noise sd 0.1."""
    rng = np.random.default_rng(seed)
    events = []
    for i in range(n):
        helps = rng.random() < 0.5
        rider = rng.random() < (0.9 if helps else 0.1)
        injected = (["help.md"] if helps else []) + (["rider.md"] if rider else [])
        injected += [lesson for lesson in NULLS if rng.random() < 0.5]
        reward = float(np.clip(0.5 + 0.15 * helps + rng.normal(0.0, 0.1), 0.0, 1.0))
        events.append(session(f"s{i}", round(reward, 4), dict.fromkeys(injected, 1.0)))
    return events


def test_a_lesson_that_rides_along_with_a_helpful_one_is_not_picked_by_joint(tmp_path: Path) -> None:
    ws = Workspace(make_workspace(tmp_path, LESSONS, rider_log()), clock=fixed_clock)
    joint = ws.select("the task", k=1, seed=1, log=False, policy="joint").propensity
    seed = ws.select("the task", k=1, seed=1, log=False, policy="seed").propensity
    # the joint fit separates the two (rider.md is also seen without help.md, and help.md without it)
    assert joint["help.md"] > 0.95 and joint["rider.md"] < 0.02
    # seed credit gives the rider the helpful lesson's rewards: when run, 0.40 against help.md's 0.48
    assert seed["rider.md"] > 0.25 and seed["help.md"] < 0.75
