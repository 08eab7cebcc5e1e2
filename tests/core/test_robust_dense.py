"""The exact (dense) path of the claims fit: up to DENSE_MAX lessons, whatever columns a lesson's first sessions add
(core/analysis/early.py), and its leverages computed from the sparse injections equal x~_i' M x~_i taken the
direct way (the centred design as a dense matrix)."""

from __future__ import annotations

import numpy as np

from lesson_credit.core.analysis import robust
from lesson_credit.core.analysis.claims import injection_design, lesson_claims
from lesson_credit.core.analysis.joint import DENSE_MAX, Design, time_blocks


def random_design(n: int, lessons: int, k: int, categories: int, seed: int) -> Design:
    """`k` lessons drawn at random per session, rewards with small effects, `categories` kinds of work."""
    rng = np.random.default_rng(seed)
    arms = np.concatenate([rng.choice(lessons, k, replace=False) for _ in range(n)])
    rows = np.repeat(np.arange(n), k)
    effect = rng.normal(0, 0.05, lessons)
    category = rng.integers(categories, size=n)
    reward = 0.5 + 0.1 * category + np.bincount(rows, weights=effect[arms], minlength=n) + rng.normal(0, 0.2, n)
    return Design(
        np.arange(n), reward, category, categories, rows, arms, np.ones(len(rows)), lessons, n_blocks=time_blocks(n)
    )


def test_a_library_within_dense_max_lessons_stays_on_the_exact_path_when_first_sessions_double_its_columns() -> None:
    """320 lessons, each in ~125 of 4,000 sessions: each gets 20 first sessions of its own, 640 columns in the fit.
    The iterative path's intervals are an approximation (0.85-0.95x least squares'): a library of 320 lessons was
    read exactly before the split and must still be (the choice counted the split's columns too)."""
    claims = lesson_claims(random_design(4000, 320, 10, 1, seed=3))
    assert 2 * 320 > DENSE_MAX  # (the columns the fit holds)
    assert claims.dense
    assert sum(column.effect is not None for column in claims.columns) == 320


def test_dense_leverages_equal_the_centred_designs_quadratic_form() -> None:
    """h_i = x~_i' M x~_i for a random symmetric M, with categories and time blocks (the baseline groups x~ is
    centred within), against the dense centred design built from the operator's own pieces (x - Z means)."""
    design = random_design(1500, 40, 4, 3, seed=5).with_steps()
    op, *_ = injection_design(design, design.n_arms)
    a = np.random.default_rng(9).normal(size=(op.p, op.p))
    m = a @ a.T
    centred = op.x.toarray() - op.z @ op.means
    direct = np.einsum("ij,jk,ik->i", centred, m, centred)
    assert np.allclose(robust._leverage_dense(op, m), direct, rtol=1e-12, atol=1e-12 * float(np.abs(direct).max()))
