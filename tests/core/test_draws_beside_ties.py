"""Draws beside other null directions: a lesson tied to the baselines on its own next to a draw, and two draws.

- 3 of 8 lessons drawn in every session, one lesson outside in 30% of them, one in every session of category 1 (its
  column a baseline combination): before, the set read as the draw was every column the null space touches, the
  tied lesson with it, and its count per session varies: all eight drawn lessons were called tied to each other.
- 2 of A (4 lessons) and 1 of B (3 lessons) in every session: before, the whole set was taken as one draw ("every
  lesson"), A's estimates were against the average of all seven while B's lessons were called tied and still
  marked as against the average.

The independent checks: numpy's SVD of the injections minus their category means names the null directions;
numpy's least squares with one lesson of each draw and the tied lesson dropped gives each draw's differences, so
each lesson's effect against its own draw's average (b_j - b_first, minus the draw's mean of those), and the
outside lesson's effect.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import sparse

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.estimable import draws
from lesson_credit.core.analysis.joint import Design
from lesson_credit.core.analysis.joint_ops import centred
from lesson_credit.core.analysis.neighbourhoods import neighbourhoods


def design_of(x: np.ndarray, reward: np.ndarray, category: np.ndarray) -> Design:
    rows, arms = np.nonzero(x)
    n, p = x.shape
    k = int(category.max()) + 1
    return Design(np.arange(n), reward, category, k, rows, arms, np.ones(len(rows)), p, n_blocks=1)


def baselines(category: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.eye(int(category.max()) + 1)[category]
    return out


def null_vectors(x: np.ndarray, category: np.ndarray) -> np.ndarray:
    """By numpy's SVD of the injections minus their category means (the lesson parts of [baselines | injections]'s
    null space): an orthonormal basis (columns)."""
    z = baselines(category)
    centred_x = x - z @ np.linalg.lstsq(z, x, rcond=None)[0]
    _, s, vt = np.linalg.svd(centred_x)
    return vt[int(np.sum(s > 1e-9 * s[0])) :].T


def against_own_average(x: np.ndarray, reward: np.ndarray, category: np.ndarray, sets: list[list[int]]) -> np.ndarray:
    """By least squares with each set's first lesson dropped (and columns not in a set nor kept: none here but the
    tied one, passed as a set of one): per lesson of a set b_j - mean of its set; per other kept lesson b_j."""
    p = x.shape[1]
    dropped = [s[0] for s in sets]
    kept = [j for j in range(p) if j not in dropped]
    coef = np.linalg.lstsq(np.hstack([baselines(category), x[:, kept]]), reward, rcond=None)[0]
    b = np.zeros(p)
    b[kept] = coef[-len(kept) :]
    out = b.copy()
    for s in sets:
        out[s] = b[s] - b[s].mean()
    return out


def draw_beside_tied_world(seed: int, n: int = 240) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """3 of lessons 0-7 in every session, lesson 8 in 30%, lesson 9 in every session of category 1 (none of 0)."""
    rng = np.random.default_rng([83, seed])
    category = np.arange(n) % 2
    x = np.zeros((n, 10))
    for i in range(n):
        x[i, rng.choice(8, 3, replace=False)] = 1.0
    x[:, 8] = rng.random(n) < 0.3
    x[:, 9] = category
    b = np.r_[np.linspace(0.0, 0.35, 8), 0.3, 0.2]
    return x, 0.2 + x @ b + rng.normal(0.0, 0.05, n), category


def two_draws_world(seed: int, n: int = 240) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """2 of A (lessons 0-3) and 1 of B (lessons 4-6) in every session, one category."""
    rng = np.random.default_rng([89, seed])
    x = np.zeros((n, 7))
    for i in range(n):
        x[i, rng.choice(4, 2, replace=False)] = 1.0
        x[i, 4 + rng.integers(3)] = 1.0
    b = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.9])
    return x, 0.2 + x @ b + rng.normal(0.0, 0.05, n), np.zeros(n, dtype=np.int64)


def found(x: np.ndarray, category: np.ndarray, dense: bool) -> tuple[dict[int, tuple[int, ...] | None], list[int]]:
    z = sparse.csr_matrix(baselines(category))
    op = centred(sparse.csr_matrix(x), z, category.astype(np.int64))
    ties, labels = draws(op, dense=dense, hoods=None if dense else neighbourhoods(op))
    return ties, labels.tolist()


@pytest.mark.usefixtures("whole_lessons")
@pytest.mark.parametrize("seed", range(2))
def test_a_draw_beside_a_lesson_tied_to_the_baselines_is_against_its_average(seed: int) -> None:
    x, reward, category = draw_beside_tied_world(seed)
    null = null_vectors(x, category)
    # two null directions: the drawn lessons' sum, and lesson 9 alone (category 1's indicator)
    assert null.shape[1] == 2
    projector = null @ null.T
    assert abs(projector[9, 9] - 1.0) < 1e-9 and abs(projector[8, 8]) < 1e-9
    sum_drawn = np.r_[np.ones(8), 0.0, 0.0] / np.sqrt(8.0)
    assert np.allclose(projector @ sum_drawn, sum_drawn)
    for dense in (True, False):
        ties, labels = found(x, category, dense)
        assert ties == {9: ()} and labels == [0] * 8 + [-1, -1]
    claims = lesson_claims(design_of(x, reward, category))
    want = against_own_average(x, reward, category, [list(range(8)), [9]])
    drawn = claims.columns[:8]
    assert all(c.identified and c.estimable and c.against_average for c in drawn)  # before: all eight tied
    assert np.allclose([c.effect.estimate for c in drawn if c.effect], want[:8], atol=0.01)
    outside, tied = claims.columns[8], claims.columns[9]
    assert outside.identified and not outside.against_average and outside.effect is not None
    assert abs(outside.effect.estimate - want[8]) < 0.01
    assert not tied.identified and not tied.estimable and not tied.against_average


@pytest.mark.usefixtures("whole_lessons")
@pytest.mark.parametrize("seed", range(2))
def test_two_draws_are_each_against_their_own_average(seed: int) -> None:
    x, reward, category = two_draws_world(seed)
    null = null_vectors(x, category)
    assert null.shape[1] == 2  # A's sum and B's sum, each constant (2 and 1)
    projector = null @ null.T
    for members in ([0, 1, 2, 3], [4, 5, 6]):
        u = np.isin(np.arange(7), members) / np.sqrt(len(members))
        assert np.allclose(projector @ u, u)
    for dense in (True, False):
        ties, labels = found(x, category, dense)
        assert ties == {} and len(set(labels[:4])) == 1 and len(set(labels[4:])) == 1
        assert labels[0] != labels[4] and min(labels) >= 0
    claims = lesson_claims(design_of(x, reward, category))
    want = against_own_average(x, reward, category, [[0, 1, 2, 3], [4, 5, 6]])
    assert all(c.identified and c.estimable and c.against_average for c in claims.columns)  # before: B tied
    got = [c.effect.estimate for c in claims.columns if c.effect is not None]
    # (against the average of all seven they would be b_j - 0.429: A's -0.33 to -0.03)
    assert np.allclose(got, want, atol=0.01)
