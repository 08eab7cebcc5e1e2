"""The joint selection policy's posterior read block by block of sessions (`joint_posterior`): its
means, sds, baselines and per-category deviations against the model written out densely from the
events, and its memory: it follows the lessons, not the injections."""

from __future__ import annotations

import math
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis import joint_posterior as jp
from lesson_credit.core.analysis.joint import SESSION_BLOCK
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import crowded_events, fixed_clock, make_workspace
from tests.support.oracles import ridge_reference, time_columns

# the streamed sums against the dense products: the same terms added in another order (rounding near
# 1e-16 of each sum), through the backfit's rounds (a solve each); 1e-9 leaves that a wide margin
RTOL = 1e-9
FLOOR = 0.3
CATEGORIES = ("build", "docs", "ops")


def world(rng: np.random.Generator, n: int, lessons: int) -> list[dict[str, Any]]:
    """Sessions of 1-5 lessons in three categories; each lesson helps in one category and harms in
    another (so the categories differ and the deviations are not 0); some lessons listed twice, some
    included during the session, some sessions ungraded, one without a category."""
    paths = [f"l{i}.md" for i in range(lessons)]
    effect = rng.normal(0.0, 0.2, (len(CATEGORIES), lessons))
    events = []
    for s in range(n):
        c = s % len(CATEGORIES)
        chosen = rng.choice(lessons, size=int(rng.integers(1, 6)), replace=False)
        entries: list[dict[str, Any]] = [
            {"path": paths[j], "salience": float(rng.choice([0.0, 0.4, 1.0]))} for j in chosen
        ]
        if rng.random() < 0.1:
            entries.append({"path": entries[0]["path"], "salience": 0.7})  # listed twice: the first counts
        if rng.random() < 0.15:
            entries[-1]["included"] = "during"  # pulled in during the session: no treatment
        reward = 0.5 + 0.1 * s / n + effect[c, chosen].sum() + rng.normal(0.0, 0.05)
        events.append(
            {
                "type": "session",
                "session_id": f"s{s}",
                "base_reward": round(float(np.clip(reward, 0, 1)), 6) if rng.random() > 0.1 else None,
                "lessons": entries,
                "category": CATEGORIES[c] if s != 5 else None,
            }
        )
    return events


def written_out(events: list[dict[str, Any]], arm_ids: tuple[str, ...]) -> tuple[Any, Any, Any, Any]:
    """(Z, X, y, each graded session's category code) from the events: Z one column per category and per
    time block but the last; X one weight per (session, lesson) chosen before it, its first listing."""
    graded = [e for e in events if e["base_reward"] is not None]
    n = len(graded)
    names = sorted({e.get("category") or "" for e in graded})
    code = np.array([names.index(e.get("category") or "") for e in graded])
    # docs/estimates.md: no time blocks below 24 graded sessions, 2 from 24, floor(2 log2(n / 25)) from 50
    blocks = 1 if n < 24 else max(2, int(math.floor(2 * math.log2(n / 25) + 1e-9)))
    z = np.hstack([np.eye(len(names))[code], time_columns(n, blocks)])
    x = np.zeros((n, len(arm_ids)))
    for row, e in enumerate(graded):
        seen: set[str] = set()
        for entry in e["lessons"]:
            if entry["path"] not in seen and entry.get("included") != "during":
                x[row, arm_ids.index(entry["path"])] = FLOOR + (1 - FLOOR) * entry["salience"]
            seen.add(entry["path"])
    return z, x, np.array([e["base_reward"] for e in graded]), code


def dense_deviations(x: Any, y: Any, z: Any, code: Any, coef: Any, sigma2: float) -> tuple[Any, Any, float]:
    """The deviations of the module docstring from matrix products over the whole design: per round,
    every session's residual after its lessons' coefficients and its cells' deviations U (categories x
    lessons, per unit weight) and then its baselines (least squares on `z`, the category and time-block
    indicators); each cell's weighted mean of it plus its own deviation; tau^2 by the weighted moments;
    then U at that tau^2, the fixed point of "each cell's deviation = its shrunk partial mean": the
    ridge regression, at penalty sigma^2 / tau^2, of the reward less the lessons' coefficients on the
    cells' weights, both with the baselines projected out; until tau^2 settles."""
    c, n_arms = int(code.max()) + 1, x.shape[1]
    member = np.eye(c)[code].T  # categories x sessions
    sw2 = member @ (x * x)
    has = sw2 > 0
    s2 = sigma2 / sw2[has]
    cells = np.zeros((len(y), c * n_arms))  # each session's weights in its category's cells
    for row in range(len(y)):
        cells[row, code[row] * n_arms : (code[row] + 1) * n_arms] = x[row]
    projected = cells - z @ np.linalg.lstsq(z, cells, rcond=None)[0]
    target = y - x @ coef
    target = target - z @ np.linalg.lstsq(z, target, rcond=None)[0]
    keep = has.ravel()
    u, tau2 = np.zeros_like(sw2), 0.0
    for _ in range(200):
        r = y - x @ coef - (x * u[code]).sum(axis=1)
        r = r - z @ np.linalg.lstsq(z, r, rcond=None)[0]
        partial = (member @ (x * r[:, None]))[has] / sw2[has] + u[has]
        was = tau2
        for _ in range(20):  # E[partial^2] = tau^2 + s2, weights 1 / (tau^2 + s2)^2
            weight = 1.0 / (tau2 + s2) ** 2
            new = max(0.0, float((weight * (partial**2 - s2)).sum() / weight.sum()))
            done = abs(new - tau2) <= 1e-12 + 1e-6 * tau2
            tau2 = new
            if done:
                break
        m = projected[:, keep]
        flat = np.zeros(c * n_arms)
        if tau2 > 0:
            flat[keep] = np.linalg.solve(m.T @ m + sigma2 / tau2 * np.eye(m.shape[1]), m.T @ target)
        u = flat.reshape(c, n_arms)
        if abs(tau2 - was) <= 1e-12 + 1e-9 * was:
            break
    var = np.zeros_like(u)
    var[has] = tau2 * s2 / (tau2 + s2)
    return u, var, tau2


@pytest.mark.parametrize("block", [7, 64, SESSION_BLOCK])  # many blocks, a few, one
def test_streamed_posterior_equals_the_dense_model(tmp_path: Path, block: int, monkeypatch: Any) -> None:
    events = world(np.random.default_rng(11), 300, 8)
    ws = Workspace(make_workspace(tmp_path, lessons={}, events=events), clock=fixed_clock)
    data = ws.data()
    monkeypatch.setattr(jp, "SESSION_BLOCK", block)
    post = jp.joint_posterior(data, ws.session_categories(), FLOOR, ws.session_agents())
    z, x, y, code = written_out(events, data.arm_ids)
    # the fit at the penalty it chose, the slow way: ridge over the dense design
    noise = post.noise_sd
    tau = post.prior_sd / x[x > 0].mean()  # the prior sd per unit weight
    coef, cov, sigma2 = ridge_reference(z, x, y, noise**2 / tau**2)
    assert sigma2 == pytest.approx(noise**2, rel=RTOL)
    injected = x > 0
    mean_weight = x.sum(axis=0) / injected.sum(axis=0)
    assert post.n.tolist() == injected.sum(axis=0).tolist()
    assert post.mean == pytest.approx(coef * mean_weight, rel=RTOL, abs=1e-12)
    assert post.sd == pytest.approx(np.sqrt(np.diag(cov)) * mean_weight, rel=RTOL)
    # each category's baseline: the mean over its sessions of the reward minus the lessons' fitted part
    assert post.categories == ("", *CATEGORIES)
    fitted = y - x @ coef
    assert post.baselines == pytest.approx([fitted[code == c].mean() for c in range(4)], rel=RTOL)

    # the deviations are read within time blocks, every baseline refitted with them each round
    u, var, tau2 = dense_deviations(x, y, z, code, coef, sigma2)
    assert tau2 > 0.01  # the categories differ (effects of sd 0.2 in each): the backfit has work to do
    assert post.category_sd == pytest.approx(math.sqrt(tau2) * x[x > 0].mean(), rel=RTOL)
    assert post.deviation == pytest.approx(u * mean_weight, rel=RTOL, abs=1e-12)
    assert post.deviation_var == pytest.approx(var * mean_weight**2, rel=RTOL, abs=1e-15)


def crowded_log(tmp_path: Path, n: int) -> Workspace:
    """n graded sessions of 40 lessons each from a library of 60 in two categories."""
    events = crowded_events(n)
    return Workspace(make_workspace(tmp_path / str(n), lessons={}, events=events), clock=fixed_clock)


def test_streamed_posterior_holds_no_array_per_injection(tmp_path: Path, monkeypatch: Any) -> None:
    # 1,000 then 3,000 sessions of 40 lessons: 80,000 more injections. A design of every injection
    # holds three numbers for each (row, arm, weight: 24 bytes) and the backfit a few more; read in
    # blocks of 100 sessions the posterior holds X'X (60 x 60), one block's injections and a few
    # numbers per session (~100 bytes: 2.5 an injection)
    small, big = crowded_log(tmp_path, 1000), crowded_log(tmp_path, 3000)
    inputs = [(ws.data(), ws.session_categories(), FLOOR, ws.session_agents()) for ws in (small, big)]
    added = len(inputs[1][0].entry_session) - len(inputs[0][0].entry_session)
    assert added == 80_000
    monkeypatch.setattr(jp, "SESSION_BLOCK", 100)
    jp.joint_posterior(*inputs[0])  # imports (scipy) outside the measure
    peaks = []
    for args in inputs:
        tracemalloc.start()
        try:
            jp.joint_posterior(*args)
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
    assert peaks[1] - peaks[0] < 8 * added  # less than one number per injection
