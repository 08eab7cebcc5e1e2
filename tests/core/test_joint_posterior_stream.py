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
from tests.support.steps_by_hand import step_dummies, steps_by_hand

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
    """(Z, X, y, each graded session's category code) from the events: Z one column per category, per
    time block but the last and per step of the baseline; X one weight per (session, lesson) chosen before it,
    its first listing."""
    graded = [e for e in events if e["base_reward"] is not None]
    n = len(graded)
    names = sorted({e.get("category") or "" for e in graded})
    code = np.array([names.index(e.get("category") or "") for e in graded])
    # docs/estimates.md: no time blocks below 24 graded sessions, 2 from 24, floor(2 log2(n / 25)) from 50
    blocks = 1 if n < 24 else max(2, int(math.floor(2 * math.log2(n / 25) + 1e-9)))
    x = np.zeros((n, len(arm_ids)))
    for row, e in enumerate(graded):
        seen: set[str] = set()
        for entry in e["lessons"]:
            if entry["path"] not in seen and entry.get("included") != "during":
                x[row, arm_ids.index(entry["path"])] = FLOOR + (1 - FLOOR) * entry["salience"]
            seen.add(entry["path"])
    # and the baseline's steps where the lessons switch inside a block (docs/estimates.md "A switch inside a block")
    steps = step_dummies(steps_by_hand(x > 0, code), code)
    z = np.hstack([np.eye(len(names))[code], time_columns(n, blocks, code), steps])
    return z, x, np.array([e["base_reward"] for e in graded]), code


def dense_deviations(x: Any, y: Any, z: Any, code: Any, coef: Any, sigma2: float) -> tuple[Any, Any, Any]:
    """The deviations of the module docstring from matrix products over the whole design: each
    (category, lesson) cell's column of weights M and, with the baselines (least squares on `z`, the
    category and time-block indicators) projected out, M~; A = M~'M~. Per round, every session's
    residual after its lessons' coefficients and its cells' deviations U (per unit weight), baselines
    projected out; each cell's partial estimate M'r / A_jj + its deviation, of noise s2 = sigma^2 /
    A_jj; the lessons whose cells' partials at U = 0 differ (Cochran's Q, p < 0.05, BH < 0.2) get
    their own tau^2, the others one shared, each by weighted moments; then U, the ridge regression of
    the reward less the lessons' coefficients on M~ at penalty sigma^2 / tau^2 per cell; until the
    tau^2 settle. Returns U, its variance tau^2 s2 / (tau^2 + s2) (tau^2 without a partial) and the tau^2 of
    each cell with a partial."""
    from scipy.stats import chi2

    c, n_arms = int(code.max()) + 1, x.shape[1]
    cells = np.zeros((len(y), c * n_arms))  # each session's weights in its category's cells
    for row in range(len(y)):
        cells[row, code[row] * n_arms : (code[row] + 1) * n_arms] = x[row]
    projected = cells - z @ np.linalg.lstsq(z, cells, rcond=None)[0]
    target = y - x @ coef
    target = target - z @ np.linalg.lstsq(z, target, rcond=None)[0]
    a = (projected * projected).sum(axis=0)
    has = a > 1e-9 * (cells * cells).sum(axis=0)
    s2 = sigma2 / a[has]
    lesson = np.tile(np.arange(n_arms), c)[has]

    def partial(u: Any) -> Any:
        return (projected.T @ (target - projected @ u))[has] / a[has] + u[has]

    first, p = partial(np.zeros(c * n_arms)), {}
    for j in sorted(set(lesson.tolist())):
        mine = lesson == j
        if mine.sum() >= 2:
            w = 1 / s2[mine]
            q = float((w * (first[mine] - (w * first[mine]).sum() / w.sum()) ** 2).sum())
            p[j] = float(chi2.sf(q, mine.sum() - 1))
    order = sorted(p, key=p.__getitem__)
    bh = {j: min(p[k] * len(p) / (i + 1) for i, k in enumerate(order) if i >= order.index(j)) for j in order}
    flagged = [j for j in p if p[j] < 0.05 and bh[j] < 0.2]

    def moments(part: Any, v: Any, tau2: float) -> float:
        for _ in range(500):  # E[partial^2] = tau^2 + s2, weights 1 / (tau^2 + s2)^2
            weight = 1.0 / (tau2 + v) ** 2
            new = max(0.0, float((weight * (part**2 - v)).sum() / weight.sum())) if len(part) else 0.0
            done = abs(new - tau2) <= 1e-15 + 1e-12 * tau2
            tau2 = new
            if done:
                break
        return tau2

    u, tau2 = np.zeros(c * n_arms), np.zeros(len(s2))
    for _ in range(200):
        now, own = partial(u), np.isin(lesson, flagged)
        new = np.full(len(s2), moments(now[~own], s2[~own], float(tau2[~own].max(initial=0.0))))
        for j in flagged:
            mine = lesson == j
            new[mine] = max(new[mine][0], moments(now[mine], s2[mine], float(tau2[mine][0])))
        settled = np.all(np.abs(new - tau2) <= 1e-12 + 1e-9 * tau2)
        tau2 = new
        on = np.flatnonzero(has)[tau2 > 0]
        u = np.zeros(c * n_arms)
        m = projected[:, on]
        u[on] = np.linalg.solve(m.T @ m + np.diag(sigma2 / tau2[tau2 > 0]), m.T @ target)
        if settled:
            break
    # a cell without a partial (its lesson never injected in its category, or the baselines read all of its weight:
    # s2 infinite) keeps its lesson's tau^2: the flagged lesson's own, any other's the one they share
    shared = float(tau2[~np.isin(lesson, flagged)][0]) if (~np.isin(lesson, flagged)).any() else 0.0
    lesson_tau2 = {j: float(tau2[lesson == j][0]) for j in flagged}
    var = np.tile([lesson_tau2.get(j, shared) for j in range(n_arms)], c)
    var[has] = tau2 * s2 / (tau2 + s2)
    return u.reshape(c, n_arms), var.reshape(c, n_arms), tau2


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
    assert tau2.max() > 0.01  # the categories differ (effects of sd 0.2 in each): the backfit has work to do
    typical = math.sqrt(tau2.mean())  # the root mean square of the cells' tau
    assert post.category_sd == pytest.approx(typical * x[x > 0].mean(), rel=RTOL)
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
