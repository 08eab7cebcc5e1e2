"""The joint fit without a lessons-cubed step (`solver="iterative"`) against the dense exact fit and the
augmented least-squares reference, its category baselines by hand, and `Workspace.joint_fit`, computed
once per log version and reused by `loo`."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis import joint as joint_mod
from lesson_credit.core.analysis.joint import Design, build_design, fit_joint
from lesson_credit.core.analysis.neighbourhoods import NEIGHBOURS
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session
from tests.support.oracles import ridge_reference


def random_design(p: int, n: int, seed: int, *, agents: int = 0, topics: int = 0) -> Design:
    """n graded sessions, 3 categories, 1-6 lessons each (from one topic of p / topics lessons when
    `topics`), salience-like weights, a few real effects."""
    rng = np.random.default_rng(seed)
    rows, arms = [], []
    for i in range(n):
        pool = np.arange(p) if not topics else rng.integers(0, topics) * (p // topics) + np.arange(p // topics)
        chosen = rng.choice(pool, size=int(rng.integers(1, 7)), replace=False)
        rows += [i] * len(chosen)
        arms += chosen.tolist()
    entry_row, entry_arm = np.array(rows), np.array(arms)
    weight = 0.3 + 0.7 * rng.random(len(entry_row))
    category = rng.integers(0, 3, n)
    beta = np.where(rng.random(p) < 0.3, rng.normal(0, 0.2, p), 0.0)
    reward = 0.4 + 0.1 * category + np.bincount(entry_row, weights=beta[entry_arm] * weight, minlength=n)
    reward = reward + rng.normal(0, 0.15, n)
    agent = rng.integers(0, agents, n) if agents else None
    return Design(
        np.arange(n), reward, category, 3, entry_row, entry_arm, weight, p, agent=agent, n_agents=agents,
        category_names=("a", "b", "c"),
    )  # fmt: skip


def dense_columns(design: Design) -> tuple[Any, Any, Any]:
    """The baseline indicators (categories, then agents but the first), the lesson columns and the rewards."""
    z = np.eye(design.n_categories)[design.category]
    if design.agent is not None:
        z = np.hstack([z, np.eye(design.n_agents)[design.agent][:, 1:]])
    x = np.zeros((design.n, design.n_arms))
    x[design.entry_row, design.entry_arm] = design.entry_weight
    return z, x, design.reward


@pytest.mark.parametrize("agents", [0, 3])
def test_iterative_equals_the_reference_when_a_neighbourhood_is_the_whole_library(agents: int) -> None:
    # 12 lessons: a neighbourhood holds a lesson and 11 others, so its inverse is the whole inverse
    design = random_design(12, 400, 1, agents=agents)
    lam = 3.0
    fit = fit_joint(design, penalty=lam, solver="iterative")
    assert fit.solver == "iterative"
    coef, cov, sigma2 = ridge_reference(*dense_columns(design), lam)
    assert fit.coef == pytest.approx(coef, abs=1e-9)
    assert fit.coef_sd == pytest.approx(np.sqrt(np.diag(cov)), rel=1e-8)
    assert fit.noise_sd == pytest.approx(np.sqrt(sigma2), rel=1e-9)


def test_iterative_empirical_bayes_reaches_the_dense_optimum() -> None:
    # the dense path minimises the restricted likelihood on a grid; the iterative one solves its
    # stationarity condition: the same lambda when the trace is exact (12 lessons, see above)
    design = random_design(12, 500, 2)
    dense, iterative = fit_joint(design, solver="dense"), fit_joint(design, solver="iterative")
    assert iterative.penalty == pytest.approx(dense.penalty, rel=1e-5)
    assert iterative.coef == pytest.approx(dense.coef, abs=1e-7)
    assert iterative.prior_sd == pytest.approx(dense.prior_sd, rel=1e-5)


def test_prior_floor_holds_on_the_iterative_path() -> None:
    rng = np.random.default_rng(3)
    design = random_design(12, 300, 3)
    noise = Design(**{**design.__dict__, "reward": rng.normal(0.5, 0.1, design.n)})  # no effect at all
    dense, iterative = fit_joint(noise, solver="dense"), fit_joint(noise, solver="iterative")
    assert "floored" in iterative.penalty_rule and "floored" in dense.penalty_rule
    assert iterative.prior_sd == pytest.approx(joint_mod.TAU_MIN, rel=1e-9)
    assert iterative.penalty == pytest.approx(dense.penalty, rel=1e-6)


def test_large_library_variances_are_a_close_lower_bound() -> None:
    # 120 lessons in 6 topics of 20: neighbourhoods (1 + 16) are smaller than a topic
    design = random_design(120, 4000, 4, topics=6)
    assert design.n_arms - 1 > NEIGHBOURS
    lam = 5.0
    dense, iterative = (
        fit_joint(design, penalty=lam, solver="dense"),
        fit_joint(design, penalty=lam, solver="iterative"),
    )
    assert iterative.coef == pytest.approx(dense.coef, abs=1e-8)
    ratio = iterative.coef_sd / dense.coef_sd
    assert ratio.max() <= 1.0 + 1e-9  # a principal submatrix's inverse: never above the exact variance
    assert np.median(ratio) > 0.97 and ratio.min() > 0.9


def test_a_lesson_in_every_session_at_one_weight_is_no_ones_neighbour() -> None:
    # the 41st lesson is in each of the 600 sessions at weight 0.5: within each category its column is
    # constant, so centred it is zero (up to rounding). A zero column changes no other coefficient (the
    # dense fits agree), and must not change the others' neighbourhoods either: their sds stay those of
    # the fit without it. It made numpy warn (1 / its root overflowed float32) and its NaN correlations
    # took a neighbour's place (sds 0.1% off)
    design = random_design(40, 600, 6)
    n = design.n
    every = Design(
        **{
            **design.__dict__,
            "entry_row": np.concatenate([design.entry_row, np.arange(n)]),
            "entry_arm": np.concatenate([design.entry_arm, np.full(n, 40)]),
            "entry_weight": np.concatenate([design.entry_weight, np.full(n, 0.5)]),
            "n_arms": 41,
        }
    )
    without = fit_joint(design, penalty=5.0, solver="iterative")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = fit_joint(every, penalty=5.0, solver="iterative")
    assert fit.coef[:40] == pytest.approx(without.coef, abs=1e-12)
    assert fit.coef_sd[:40] == pytest.approx(without.coef_sd, rel=1e-9)
    assert fit.coef[40] == pytest.approx(0.0, abs=1e-12)


def test_auto_goes_iterative_beyond_dense_max(monkeypatch: pytest.MonkeyPatch) -> None:
    design = random_design(12, 200, 5)
    assert fit_joint(design).solver == "dense"
    monkeypatch.setattr(joint_mod, "DENSE_MAX", 10)
    assert fit_joint(design).solver == "iterative"


A, B, C = "tools/a.md", "tools/b.md", "workflow/c.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active"), C: (["gamma"], "active")}


def test_baselines_by_hand(tmp_path: Path) -> None:
    # test_joint's closed form: penalty 0.5 -> beta_A = 0.2, beta_B = 2/15, beta_C = -2/15 (weight 1)
    # baselines: mean of (reward - lessons' part) per category:
    #   a: ((0.9 - 0.2) + 0.5) / 2 = 0.6;   b: ((0.6 - 2/15) + (0.2 + 2/15)) / 2 = 0.4
    events = [
        session("s1", 0.9, {A: 1.0}, category="a"),
        session("s2", 0.5, {}, category="a"),
        session("s3", 0.6, {B: 1.0}, category="b"),
        session("s4", 0.2, {C: 1.0}, category="b"),
    ]
    ws = Workspace(make_workspace(tmp_path, lessons=LESSONS, events=events), clock=fixed_clock)
    fit = fit_joint(build_design(ws.data(), ws.session_categories(), 0.3), penalty=0.5)
    assert fit.category_names == ("a", "b")
    assert fit.baseline is not None and fit.baseline.tolist() == pytest.approx([0.6, 0.4])
    assert fit.solver == "dense"


def test_workspace_fits_once_per_log_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(6)
    events = [
        session(f"s{i}", round(float(rng.uniform(0.2, 0.9)), 2), {A: 0.5} if i % 2 else {B: 0.5, C: 0.2})
        for i in range(30)
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    ws = Workspace(root, clock=fixed_clock)
    calls = []
    real = joint_mod.fit_sums  # every fit's last step (`fit_joint` of a design, `fit_log` of a log)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(joint_mod, "fit_sums", counted)
    first = ws.joint_fit()
    assert ws.joint_fit() is first and ws.effects()[A] == pytest.approx(
        float(first.estimate[ws.data().arm_ids.index(A)])
    )
    ws.loo(write=False)  # the analysis reuses the fit too
    assert len(calls) == 1
    journal = root / "j.md"
    journal.write_text("alpha")
    ws.record("new", journal, [A], reward=0.95)
    after = ws.joint_fit()
    assert len(calls) == 2 and after.n_sessions == first.n_sessions + 1


def test_a_flat_likelihood_takes_the_largest_penalty() -> None:
    # three sessions, two categories: one residual degree of freedom, explained exactly by the one
    # direction the lessons span, so Q(lambda) = u^2 lambda / (d (d + lambda)) and -2 log L =
    # log Q + log(1 + d / lambda) = log(u^2 / d^2) for every lambda. Rounding noise used to pick it.
    design = Design(
        np.arange(3), np.array([0.8, 0.4, 0.6]), np.array([0, 0, 1]), 2, np.array([0, 0, 0, 1, 1, 1, 2, 2]),
        np.array([0, 1, 2, 2, 3, 4, 0, 3]), np.array([0.65, 0.65, 0.3, 0.77, 1.0, 0.3, 0.65, 0.3]), 5,
    )  # fmt: skip
    values = joint_mod.neg2_loglik(joint_mod.GRID, *_spectrum(design))
    assert np.ptp(values) < 1e-9
    fit = fit_joint(design)
    assert "floored" in fit.penalty_rule and fit.prior_sd == pytest.approx(joint_mod.TAU_MIN)


def _spectrum(design: Design) -> tuple[Any, Any, float, int]:
    """(d, u^2, y~'y~, n') of the restricted likelihood, from the dense columns."""
    z, x, y = dense_columns(design)
    project = np.eye(len(y)) - z @ np.linalg.pinv(z)
    xc, yc = project @ x, project @ y
    d, v = np.linalg.eigh(xc.T @ xc)
    u = v.T @ (xc.T @ yc)
    return np.maximum(d, 0.0), u * u, float(yc @ yc), len(y) - np.linalg.matrix_rank(z)


def test_effects_later_takes_the_log_as_read_when_asked(tmp_path: Path) -> None:
    """The dashboard's two-step fit: the inputs are the log as read when `effects_later` was called (an
    append afterwards does not reach them), and the numbers are `effects()`'s on that log."""
    rng = np.random.default_rng(7)
    events = [
        session(f"s{i}", round(float(rng.uniform(0.2, 0.9)), 2), {A: 0.5} if i % 2 else {B: 0.5, C: 0.2})
        for i in range(30)
    ]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events)
    ws = Workspace(root, clock=fixed_clock)
    before = ws.effects()
    fit = ws.effects_later()
    journal = root / "j.md"
    journal.write_text("alpha")
    ws.record("new", journal, [A], reward=0.95)
    assert fit() == pytest.approx(before, rel=1e-12)
    assert ws.effects_later()() == pytest.approx(ws.effects(), rel=1e-12)
    assert ws.effects()[A] != pytest.approx(before[A], rel=1e-9)  # the append moved it
