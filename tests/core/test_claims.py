"""What the log can and cannot say about a lesson (core.analysis.claims, core.analysis.robust): the
unshrunk fit and its HC2 variance against dense matrices and Welch's closed form, identification,
groups, the halves and the categories against differences of means worked out directly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from lesson_credit.core.analysis.claims import (
    GROUP_SHARE,
    MIN_SESSIONS,
    find_groups,
    injection_design,
    lesson_claims,
)
from lesson_credit.core.analysis.joint import Design
from lesson_credit.core.analysis.joint_ops import centred, indicators
from lesson_credit.core.analysis.one_step import Interval
from lesson_credit.core.analysis.robust import fit_robust
from tests.support.oracles import robust_reference


def design_of(x: np.ndarray, reward: np.ndarray, category: np.ndarray | None = None) -> Design:
    """A design from a dense 0/1 injection matrix (sessions x lessons)."""
    n, p = x.shape
    category = np.zeros(n, dtype=np.int64) if category is None else category
    rows, arms = np.nonzero(x)
    c = int(category.max()) + 1
    return Design(
        np.arange(n), reward.astype(np.float64), category, c, rows, arms, np.ones(len(rows)), p,
        category_names=tuple(f"c{i}" for i in range(c)),
    )  # fmt: skip


def random_world(seed: int, n: int = 240, p: int = 8, c: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = (rng.random((n, p)) < 0.3).astype(float)
    category = rng.integers(0, c, n)
    noise = rng.normal(0, 1, n) * np.array([0.05, 0.15, 0.3])[category]  # unequal variances
    reward = 0.5 + 0.1 * category + x @ np.linspace(-0.2, 0.2, p) + noise
    return x, reward, category


def test_dense_robust_fit_matches_the_dense_matrices() -> None:
    x, reward, category = random_world(1)
    design = design_of(x, reward, category)
    z, group = indicators(design.n, design.category, design.n_categories, None, 0)
    from scipy import sparse

    op = centred(sparse.csr_matrix(x), z, group)
    penalty = np.linspace(0.01, 2.0, x.shape[1])
    fit = fit_robust(op, op.center(reward), penalty, dense=True)
    coef, var, h = robust_reference(np.eye(3)[category], x, reward, penalty)
    assert fit.coef == pytest.approx(coef, abs=1e-10)
    assert fit.var == pytest.approx(var, rel=1e-8)
    residual = (
        reward
        - np.hstack([np.eye(3)[category], x])
        @ np.linalg.lstsq(
            np.vstack([np.hstack([np.eye(3)[category], x]), np.hstack([np.zeros((8, 3)), np.diag(np.sqrt(penalty))])]),
            np.concatenate([reward, np.zeros(8)]),
            rcond=None,
        )[0]
    )
    assert fit.weight == pytest.approx(residual**2 / (1 - h), rel=1e-7)


def test_iterative_robust_fit_agrees_with_the_dense_one() -> None:
    x, reward, category = random_world(2, n=600, p=12)
    design = design_of(x, reward, category)
    op, y, _, _, _ = injection_design(design)
    penalty = np.full(12, 0.05)
    dense, iterative = fit_robust(op, y, penalty, dense=True), fit_robust(op, y, penalty, dense=False)
    assert iterative.coef == pytest.approx(dense.coef, abs=1e-9)
    assert iterative.inverse_diag == pytest.approx(dense.inverse_diag, rel=1e-9)  # 12 lessons: exact
    # the sandwich without M's off-diagonal (see core.analysis.robust): close on weakly correlated lessons
    assert iterative.var == pytest.approx(dense.var, rel=0.1)


def test_hc2_of_one_lesson_is_welchs_variance() -> None:
    # one lesson, one category: the fit is a difference of means and HC2 is s1^2 / n1 + s0^2 / n0
    rng = np.random.default_rng(3)
    with_it, without = rng.normal(0.8, 0.3, 12), rng.normal(0.5, 0.05, 40)
    x = np.concatenate([np.ones(12), np.zeros(40)])[:, None]
    design = design_of(x, np.concatenate([with_it, without]))
    op, y, _, _, _ = injection_design(design)
    fit = fit_robust(op, y, np.array([1e-12]), dense=True)
    assert fit.coef[0] == pytest.approx(with_it.mean() - without.mean(), abs=1e-9)
    welch = with_it.var(ddof=1) / 12 + without.var(ddof=1) / 40
    assert fit.var[0] == pytest.approx(welch, rel=1e-9)
    assert fit.df[0] == pytest.approx((12 * 40 / 52) ** 2 / (12 * (40 / 52) ** 4 + 40 * (12 / 52) ** 4))


def test_interval_is_students() -> None:
    interval = Interval(0.3, 0.1, 7.0, 8, 30)
    low, high = interval.bounds(0.95)
    assert high - 0.3 == pytest.approx(stats.t.ppf(0.975, 7) * 0.1)
    assert interval.p_value == pytest.approx(2 * stats.t.sf(3.0, 7))


def test_few_sessions_or_a_weak_signal_claim_nothing() -> None:
    rng = np.random.default_rng(4)
    n = 300
    x = np.zeros((n, 3))
    x[:3, 0] = 1  # lesson 0: three sessions
    x[:, 1] = rng.random(n) < 0.5  # lesson 1: plenty
    # lesson 2: six sessions, drowned in noise of sd 0.5, spread over the log (the first six sessions would
    # make it a switch in log order: identified only by time)
    x[25::50, 2] = 1
    reward = 0.5 + 0.2 * x[:, 1] + rng.normal(0, 0.5, n) * np.where(x[:, 2] > 0, 1.0, 0.1)
    claims = lesson_claims(design_of(x, reward))
    few, plenty, weak = (claims.of(j) for j in range(3))
    assert few is not None and not few.identified and few.effect is None
    assert few.reason is not None and f"needs {MIN_SESSIONS} each" in few.reason
    assert plenty is not None and plenty.identified and plenty.effect is not None
    assert weak is not None and not weak.identified and "barely move" in (weak.reason or "")


def test_lessons_always_together_are_one_group() -> None:
    rng = np.random.default_rng(5)
    n = 400
    x = np.zeros((n, 4))
    together = rng.random(n) < 0.4
    x[together, 0] = x[together, 1] = 1  # 0 and 1 always together
    x[:, 2] = rng.random(n) < 0.4
    x[together & (rng.random(n) < 0.95), 3] = 1  # 3 rides along in 95% of 0's sessions, but 0 is in 100% of 3's
    x[~together & (rng.random(n) < 0.3), 3] = 1  # ... and appears without them often: not a group
    reward = 0.5 + 0.3 * together + 0.1 * x[:, 2] + rng.normal(0, 0.05, n)
    n_with = x.sum(axis=0).astype(np.int64)
    from scipy import sparse

    co = sparse.csr_matrix(x.T @ x)
    assert find_groups(co, n_with) == [(0, 1)]
    assert co[0, 3] < GROUP_SHARE * max(n_with[0], n_with[3])
    claims = lesson_claims(design_of(x, reward))
    group = claims.of(0)
    assert group is claims.of(1) and group is not None and group.arms == (0, 1)
    assert group.identified and group.effect is not None
    low, high = group.effect.bounds()
    assert low < 0.3 < high  # the group's effect: both together
    assert claims.grouped(0) and not claims.grouped(2)


def one_lesson_world(seed: int, flip: bool) -> tuple[Design, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    n = 400
    x = (rng.random(n) < 0.5).astype(float)[:, None]
    category = rng.integers(0, 2, n)
    effect = np.where(np.arange(n) < n // 2, 0.2, -0.2 if flip else 0.2)
    reward = 0.4 + 0.1 * category + effect * x[:, 0] + rng.normal(0, 0.1, n)
    return design_of(x, reward, category), x[:, 0], reward


@pytest.mark.usefixtures("whole_lessons")
def test_halves_and_categories_are_differences_of_means() -> None:
    design, x, reward = one_lesson_world(6, flip=True)
    column = lesson_claims(design).of(0)
    assert column is not None and column.earlier is not None and column.later is not None
    # split at the median of the lesson's own injections; in each half, with category baselines:
    # the within-half least-squares slope of the reward on the injection (category means removed)
    injected = np.flatnonzero(x > 0)
    split = injected[(len(injected) - 1) // 2]
    for half, part in ((np.arange(design.n) <= split, column.earlier), (np.arange(design.n) > split, column.later)):
        xs, ys, cs = x[half], reward[half], design.category[half]
        xc = xs - np.array([xs[cs == c].mean() for c in (0, 1)])[cs]
        yc = ys - np.array([ys[cs == c].mean() for c in (0, 1)])[cs]
        assert part.estimate == pytest.approx((xc @ yc) / (xc @ xc), abs=1e-9)
        assert (part.n_with, part.n_without) == (int(xs.sum()), int(len(xs) - xs.sum()))
    assert column.drifting and column.drift_p is not None and column.drift_p < 1e-6
    cells = dict(column.by_category)
    for c in (0, 1):
        inside = design.category == c
        xs, ys = x[inside], reward[inside]
        assert cells[f"c{c}"].estimate == pytest.approx(ys[xs > 0].mean() - ys[xs == 0].mean(), abs=1e-9)


def test_a_steady_lesson_does_not_drift() -> None:
    design, _, _ = one_lesson_world(7, flip=False)
    column = lesson_claims(design).of(0)
    assert column is not None and not column.drifting and not column.category_differs


def test_a_lesson_that_helps_in_one_category_only_differs() -> None:
    rng = np.random.default_rng(8)
    n = 600
    x = (rng.random((n, 3)) < 0.4).astype(float)
    category = rng.integers(0, 3, n)
    reward = 0.5 + 0.3 * x[:, 0] * (category == 0) + 0.1 * x[:, 1] + rng.normal(0, 0.1, n)
    claims = lesson_claims(design_of(x, reward, category))
    first, second = claims.of(0), claims.of(1)
    assert first is not None and first.category_differs
    assert second is not None and not second.category_differs
