"""Beyond `DENSE_MAX` lessons the joint fits' variances come from each lesson's neighbourhood (its most correlated
lessons). Candidates tied in correlation (lessons that shared as many sessions with it) must be chosen by what the
lessons are, not by their column (the order they first appear in the log): relabelling the columns relabels the
neighbourhoods and leaves every number as it was, on each path that chooses them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis import claims as claims_mod
from lesson_credit.core.analysis import joint as joint_mod
from lesson_credit.core.analysis import joint_ops
from lesson_credit.core.analysis.joint import Design, fit_joint
from lesson_credit.core.analysis.joint_ops import centred
from lesson_credit.core.analysis.neighbourhoods import neighbourhoods

LESSONS = 90


def tied_design(relabel: np.ndarray) -> Design:
    """90 lessons each in 4 of 45 sessions of 8 (most pairs of lessons share 0 or 1 session: ties everywhere),
    2 categories, 3 time blocks, a few real effects; lesson i is column relabel[i]."""
    rng = np.random.default_rng(3)
    pool = rng.permutation(np.repeat(np.arange(LESSONS), 4))
    rows, arms = [], []
    for i in range(0, len(pool), 8):
        chosen = sorted(set(pool[i : i + 8].tolist()))
        rows += [i // 8] * len(chosen)
        arms += chosen
    n = len(pool) // 8
    entry_row, entry_arm = np.array(rows), np.array(arms)
    weight = np.ones(len(entry_row))
    category = rng.integers(0, 2, n)
    beta = np.where(np.arange(LESSONS) < 10, 0.1, 0.0)
    reward = 0.4 + 0.1 * category + np.bincount(entry_row, weights=beta[entry_arm], minlength=n)
    reward = reward + rng.normal(0.0, 0.1, n)
    return Design(np.arange(n), reward, category, 2, entry_row, relabel[entry_arm], weight, LESSONS, n_blocks=3)


def _op(design: Design) -> Any:
    from scipy import sparse

    x = sparse.csr_matrix((design.entry_weight, (design.entry_row, design.entry_arm)), shape=(design.n, LESSONS))
    z, group = design.indicators()
    return centred(x, z, group)


@pytest.fixture(params=["dense", "sparse"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The choice among all lessons, and among those in a session with each (the limit set low)."""
    if request.param == "sparse":
        for module in (joint_ops, joint_mod, claims_mod):
            monkeypatch.setattr(module, "CROSS_DENSE_MAX", 10, raising=False)
    return str(request.param)


@pytest.mark.parametrize("known_cross", [False, True])
def test_relabelled_lessons_have_the_relabelled_neighbourhoods(path: str, known_cross: bool) -> None:
    identity = np.arange(LESSONS)
    relabel = np.random.default_rng(5).permutation(LESSONS)
    hoods = []
    for labels in (identity, relabel):
        op = _op(tied_design(labels))
        hoods.append(neighbourhoods(op, size=6, gram=op.cross_products() if known_cross else None))
    before, after = hoods
    # with a valid neighbour -1 stays -1: the map sends column j of the first to relabel[j] in the second
    mapped = np.where(before.index >= 0, relabel[np.maximum(before.index, 0)], -1)
    assert np.count_nonzero(before.index[:, -1] >= 0) > LESSONS // 2  # full neighbourhoods: ties were broken
    penalty = np.full(LESSONS, 2.0)
    assert after.inverse_diagonal(penalty)[relabel] == pytest.approx(before.inverse_diagonal(penalty), abs=1e-13)
    assert (after.index[relabel] == mapped).all()  # the same neighbours, strongest first, ties in one order
    partition = [sorted(relabel[m].tolist()) for members, _ in before.blocks for m in members]
    assert sorted(partition) == sorted(sorted(m.tolist()) for members, _ in after.blocks for m in members)


def test_relabelled_lessons_have_the_same_joint_fit(path: str) -> None:
    # the streamed fit (X'X and Z'X only below the limit, X above it) on the same sessions, lessons relabelled
    relabel = np.random.default_rng(5).permutation(LESSONS)
    first = fit_joint(tied_design(np.arange(LESSONS)), solver="iterative")
    second = fit_joint(tied_design(relabel), solver="iterative")
    assert second.coef[relabel] == pytest.approx(first.coef, abs=1e-11)
    assert second.coef_sd[relabel] == pytest.approx(first.coef_sd, abs=1e-11)
    assert second.penalty == pytest.approx(first.penalty, rel=1e-11)
