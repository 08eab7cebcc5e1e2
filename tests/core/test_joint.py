"""The joint effect estimate (lesson_credit.core.analysis.joint): closed form by hand, a dense least-squares reference,
the empirical-Bayes penalty against a brute-force likelihood, and a confounded log."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis.joint import build_design, fit_joint, joint_effects, neg2_loglik
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.oracles import ridge_reference, time_columns

A, B, C = "tools/a.md", "tools/b.md", "workflow/c.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active"), C: (["gamma"], "active")}


def fit_of(root: Path, floor: float = 0.3, **kwargs: Any) -> tuple[Any, dict[str, int]]:
    ws = Workspace(root, clock=fixed_clock)
    data = ws.data()
    design = build_design(data, ws.session_table().categories, floor)
    return fit_joint(design, **kwargs), {arm: i for i, arm in enumerate(data.arm_ids)}


def test_closed_form_three_lessons_two_categories(tmp_path: Path) -> None:
    # salience 1 -> weight 1 whatever the floor.
    # category a: s1 {A} 0.9, s2 {} 0.5        category b: s3 {B} 0.6, s4 {C} 0.2
    # centred within categories: A = (.5, -.5, 0, 0), B = (0, 0, .5, -.5), C = (0, 0, -.5, .5),
    # y = (.2, -.2, .2, -.2). X'X = [[.5, 0, 0], [0, .5, -.5], [0, -.5, .5]], X'y = (.2, .2, -.2).
    # lambda = 0.5: [[1, 0, 0], [0, 1, -.5], [0, -.5, 1]] beta = (.2, .2, -.2)
    #   -> beta_A = 0.2; beta_B - .5 beta_C = .2 with beta_C = -beta_B -> beta_B = 0.2 / 1.5 = 2/15
    # Q = y'y - b'beta = 0.16 - (0.04 + 0.4/15 + 0.4/15) = 0.16 - 0.28/3 = 1/15; sigma^2 = Q / (4 - 2) = 1/30
    # (A'A + lambda)^-1 diagonal: 1 for A, 1 / 0.75 = 4/3 for B and C
    # -> sd_A = sqrt(1/30), sd_B = sd_C = sqrt(4/90)
    events = [
        session("s1", 0.9, {A: 1.0}, category="a"),
        session("s2", 0.5, {}, category="a"),
        session("s3", 0.6, {B: 1.0}, category="b"),
        session("s4", 0.2, {C: 1.0}, category="b"),
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    fit, arm = fit_of(root, penalty=0.5)
    assert fit.coef[arm[A]] == pytest.approx(0.2)
    assert fit.coef[arm[B]] == pytest.approx(2 / 15)
    assert fit.coef[arm[C]] == pytest.approx(-2 / 15)
    assert fit.noise_sd == pytest.approx(math.sqrt(1 / 30))
    assert fit.coef_sd[arm[A]] == pytest.approx(math.sqrt(1 / 30))
    assert fit.coef_sd[arm[B]] == pytest.approx(math.sqrt(4 / 90))
    assert fit.estimate[arm[A]] == pytest.approx(0.2)  # mean weight 1
    assert fit.n.tolist() == [1, 1, 1]
    low, high = fit.interval()
    assert high[arm[A]] - low[arm[A]] == pytest.approx(2 * 1.959964 * math.sqrt(1 / 30), rel=1e-5)


def random_log(rng: np.random.Generator, n: int = 240, lessons: int = 12) -> list[dict[str, Any]]:
    paths = [f"cat{i % 3}/l{i}.md" for i in range(lessons)]
    events = []
    for s in range(n):
        chosen = {p: float(rng.choice([0.0, 0.25, 0.5, 1.0])) for p in paths if rng.random() < 0.3}
        items = list(chosen.items())
        entries = [{"path": p, "salience": v} for p, v in items]
        if items and rng.random() < 0.1:  # a lesson listed twice: its first listing counts
            entries.append({"path": items[0][0], "salience": 0.9})
        events.append(
            {
                "type": "session",
                "session_id": f"s{s}",
                "base_reward": float(np.clip(rng.normal(0.5, 0.2), 0, 1)) if s % 17 else None,
                "lessons": entries,
                "category": ["x", "y", "z", None][s % 4],
            }
        )
    return events


def dense_reference(events: list[dict[str, Any]], arm_ids: tuple[str, ...], floor: float) -> Any:
    """The design written out densely from the events, one (session, lesson) pair once."""
    graded = [e for e in events if e["base_reward"] is not None]
    cats = sorted({e["category"] or "" for e in graded})
    z = np.array([[1.0 if (e["category"] or "") == c else 0.0 for c in cats] for e in graded])
    x = np.zeros((len(graded), len(arm_ids)))
    for i, e in enumerate(graded):
        seen = set()
        for entry in e["lessons"]:
            if entry["path"] in seen:
                continue
            seen.add(entry["path"])
            x[i, arm_ids.index(entry["path"])] = floor + (1 - floor) * entry["salience"]
    y = np.array([e["base_reward"] for e in graded])
    return z, x, y


def test_sparse_fit_matches_dense_least_squares(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    events = random_log(rng)
    root = make_workspace(tmp_path, lessons={}, events=events)
    ws = Workspace(root, clock=fixed_clock)
    data = ws.data()
    floor, lam = 0.3, 2.5
    fit = fit_joint(build_design(data, ws.session_table().categories, floor), penalty=lam)
    z, x, y = dense_reference(events, data.arm_ids, floor)
    # 225 graded sessions (1 in 17 is not): 2 log2(225 / 25) = 6.3 -> 6 time blocks, unpenalised like the categories
    assert len(y) == 225 and fit.n_blocks == 6
    coef, cov, sigma2 = ridge_reference(np.hstack([z, time_columns(225, 6, z.argmax(axis=1))]), x, y, lam)
    assert fit.coef == pytest.approx(coef, abs=1e-10)
    assert fit.coef_sd == pytest.approx(np.sqrt(np.diag(cov)), rel=1e-8)
    assert fit.noise_sd == pytest.approx(math.sqrt(sigma2))
    counts = (x > 0).sum(axis=0)
    assert fit.n.tolist() == counts.tolist()
    assert fit.mean_weight == pytest.approx(x.sum(axis=0) / counts)


def test_empirical_bayes_penalty_maximises_the_restricted_likelihood(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    events = random_log(rng, n=150, lessons=8)
    # give two lessons real effects so that the optimum is inside the grid
    for e in events:
        if e["base_reward"] is not None:
            paths = {entry["path"] for entry in e["lessons"]}
            bump = 0.25 * ("cat0/l0.md" in paths) - 0.2 * ("cat1/l1.md" in paths)
            e["base_reward"] = float(np.clip(e["base_reward"] + bump, 0, 1))
    root = make_workspace(tmp_path, lessons={}, events=events)
    ws = Workspace(root, clock=fixed_clock)
    data = ws.data()
    fit = fit_joint(build_design(data, ws.session_table().categories, 0.3), tau_min=0.0)
    z, x, y = dense_reference(events, data.arm_ids, 0.3)
    # brute force: an orthonormal basis K of the complement of the category columns; then
    # K'y ~ N(0, sigma^2 (I + K'X X'K / lambda)); profile sigma^2 and evaluate -2 log L directly
    q_full, _ = np.linalg.qr(np.hstack([z, np.eye(len(y))]))
    k = q_full[:, z.shape[1] : len(y)]
    yk, xk = k.T @ y, k.T @ x
    dof = len(yk)

    def brute(lam: float) -> float:
        cov = np.eye(dof) + xk @ xk.T / lam
        sign, logdet = np.linalg.slogdet(cov)
        quad = float(yk @ np.linalg.solve(cov, yk))
        return dof * math.log(quad / dof) + float(logdet)

    grid = np.exp(np.linspace(math.log(fit.penalty) - 3, math.log(fit.penalty) + 3, 61))
    values = [brute(float(lam)) for lam in grid]
    assert brute(fit.penalty) <= min(values) + 1e-6
    assert 1e-3 < fit.penalty < 1e6
    # and the eigen-trick formula is the same function as the brute force (up to a constant)
    xt = x - z @ np.linalg.lstsq(z, x, rcond=None)[0]
    yt = y - z @ np.linalg.lstsq(z, y, rcond=None)[0]
    d, v = np.linalg.eigh(xt.T @ xt)
    u2 = (v.T @ (xt.T @ yt)) ** 2
    fast = neg2_loglik(np.array([0.3, 3.0, 30.0]), np.maximum(d, 0), u2, float(yt @ yt), dof)
    assert fast == pytest.approx([brute(0.3), brute(3.0), brute(30.0)], rel=1e-9)
    assert fit.prior_sd == pytest.approx(fit.noise_sd / math.sqrt(fit.penalty))


def test_prior_sd_is_floored_when_nothing_has_an_effect(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    events = random_log(rng, n=200, lessons=6)
    root = make_workspace(tmp_path, lessons={}, events=events)
    fit, _ = fit_of(root, tau_min=0.05)
    assert fit.prior_sd >= 0.05 - 1e-12
    assert np.all(fit.coef_sd > 0.01)  # no interval collapses to a point


def confounded_events(seed: int = 5, n: int = 600) -> list[dict[str, Any]]:
    """A truly adds +0.3 (randomised 50/50); C does nothing but is injected mostly into the
    easy category (baseline 0.8 against 0.4); B does nothing, randomised."""
    rng = np.random.default_rng(seed)
    events = []
    for s in range(n):
        easy = s % 2 == 0
        has_a = rng.random() < 0.5
        has_c = rng.random() < (0.85 if easy else 0.1)
        has_b = rng.random() < 0.4
        lessons = {}
        if has_a:
            lessons[A] = float(rng.choice([0.5, 1.0]))
        if has_b:
            lessons[B] = float(rng.choice([0.0, 0.5]))
        if has_c:
            lessons[C] = float(rng.choice([0.0, 1.0]))
        reward = (0.8 if easy else 0.4) + 0.3 * has_a + rng.normal(0, 0.05)
        events.append(session(f"s{s}", float(np.clip(reward, 0, 1)), lessons, category="easy" if easy else "hard"))
    return events


def test_confounded_lesson_gets_no_credit_and_the_helpful_one_does(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=confounded_events())
    ws = Workspace(root, clock=fixed_clock)
    data = ws.data()
    fit = joint_effects(data, ws.session_table().categories, 0.3)
    arm = {a: i for i, a in enumerate(data.arm_ids)}
    low, high = fit.interval()
    # clipping at 1 trims A's effect in the easy category a little: truly +0.3, about +0.25 after clipping
    assert 0.2 < fit.estimate[arm[A]] < 0.32
    assert low[arm[A]] > 0.15
    assert abs(fit.estimate[arm[C]]) < 0.04
    assert low[arm[C]] < 0 < high[arm[C]]
    assert abs(fit.estimate[arm[B]]) < 0.04


def test_identical_grades_keep_intervals_open(tmp_path: Path) -> None:
    # every session graded 0.7: the residual variance is 0, but the intervals use at least the
    # grade resolution (noise sd 0.01) and the prior sd floor, so no interval is a point
    events = [session(f"s{i}", 0.7, {A: 0.5} if i % 2 else {B: 1.0}, category="x") for i in range(30)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    fit, arm = fit_of(root)
    assert fit.noise_sd == pytest.approx(0.01)
    assert fit.coef[arm[A]] == pytest.approx(0.0, abs=1e-9)
    assert fit.coef_sd[arm[A]] > 0.001


def test_no_graded_sessions_gives_nan(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("p", None, {A: 1.0})])
    fit, arm = fit_of(root)
    assert math.isnan(fit.coef[arm[A]]) and math.isnan(fit.estimate[arm[A]])
