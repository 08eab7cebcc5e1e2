"""A log naming many distinct lessons: beyond `CROSS_DENSE_MAX` lessons the joint fit keeps the injections, not
every pair of lessons in a session (X'X: a million numbers for one session of a thousand lessons), picks each
lesson's neighbours among the lessons injected in a session with it, and `loo`'s groups pair only lessons seen
twice or more. The limit is set low here (the scale itself: bench/distinct_lessons.py)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.analysis import claims as claims_mod
from lesson_credit.core.analysis import joint as joint_mod
from lesson_credit.core.analysis import joint_ops
from lesson_credit.core.analysis.claims import find_groups, lesson_claims
from lesson_credit.core.analysis.joint import SESSION_BLOCK, Design, design_entries, fit_joint, sums
from lesson_credit.core.analysis.joint_ops import centred
from lesson_credit.core.analysis.neighbourhoods import neighbourhoods
from lesson_credit.core.analysis.switches import with_groups
from tests.support.oracles import ridge_reference, time_columns

LIMIT = 10  # lessons beyond which X'X is not formed (CROSS_DENSE_MAX, 4,096 in use)


def few_partners_design(seed: int = 7) -> Design:
    """120 graded sessions, 3 categories, 4 time blocks over 60 lessons: lessons 0-47 drawn 2-6 a session
    in the first 110 sessions, 48 and 49 with 0 wherever it is (a group of three), and lessons 50-59 in
    pairs, each pair in one of the last 5 sessions only (one partner each); salience-like weights, a few
    real effects."""
    rng = np.random.default_rng(seed)
    rows: list[int] = []
    arms: list[int] = []
    for i in range(110):
        chosen = rng.choice(48, size=int(rng.integers(2, 7)), replace=False).tolist()
        chosen += [48, 49] if 0 in chosen else []
        rows += [i] * len(chosen)
        arms += chosen
    for pair in range(5):
        rows += [110 + pair] * 2
        arms += [50 + 2 * pair, 51 + 2 * pair]
    n = 120
    entry_row, entry_arm = np.array(rows), np.array(arms)
    weight = 0.3 + 0.7 * rng.random(len(entry_row))
    category = rng.integers(0, 3, n)
    beta = np.where(rng.random(60) < 0.3, rng.normal(0.0, 0.2, 60), 0.0)
    reward = 0.4 + 0.1 * category + np.bincount(entry_row, weights=beta[entry_arm] * weight, minlength=n)
    reward = reward + rng.normal(0.0, 0.15, n)
    return Design(np.arange(n), reward, category, 3, entry_row, entry_arm, weight, 60, n_blocks=4)


def written_out(design: Design) -> tuple[Any, Any, Any]:
    """(Z, X, y): categories and time blocks but the last, one weight per injection, the rewards."""
    z = np.hstack([np.eye(3)[design.category], time_columns(design.n, design.n_blocks, design.category)])
    x = np.zeros((design.n, design.n_arms))
    x[design.entry_row, design.entry_arm] = design.entry_weight
    return z, x, design.reward


@pytest.fixture
def low_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in (joint_ops, joint_mod, claims_mod):
        monkeypatch.setattr(module, "CROSS_DENSE_MAX", LIMIT, raising=False)  # claims imports it by name


@pytest.mark.usefixtures("low_limit")
def test_a_big_librarys_neighbours_are_its_strongest_partners_in_a_session() -> None:
    # A = X~'X~ written out (X after projecting out categories and time blocks); a lesson's neighbours are
    # the (up to) 4 lessons injected in a session with it of largest |A_jk| / sqrt(A_jj A_kk), and each
    # neighbourhood holds A's principal submatrix. Lessons 50-59 have one partner each: their other slots
    # stay empty (the code before filled them with lessons of their category never in a session with them,
    # correlated through the baselines only, reading all 60 columns of every row: p^2 at 20,000 lessons)
    design = few_partners_design()
    z, x, _ = written_out(design)
    x_centred = x - z @ np.linalg.lstsq(z, x, rcond=None)[0]
    a = x_centred.T @ x_centred
    together = (x != 0).T.astype(float) @ (x != 0).astype(float) > 0
    corr = np.abs(a) / np.sqrt(np.outer(np.diag(a), np.diag(a)))
    zz, group = design.indicators()
    hoods = neighbourhoods(centred(_weighted(design), zz, group), size=4)
    for j in range(60):
        partners = [k for k in range(60) if k != j and together[j, k] and corr[j, k] > 1e-6]
        expected = sorted(sorted(partners, key=lambda k: -corr[j, k])[:4])
        members = hoods.index[j][hoods.index[j] >= 0]
        assert members[0] == j
        assert sorted(members[1:].tolist()) == expected, j
        assert hoods.block[j][: len(members), : len(members)] == pytest.approx(
            a[np.ix_(members, members)], rel=1e-9, abs=1e-12
        )
    assert [len(hoods.index[j][hoods.index[j] >= 0]) for j in range(50, 60)] == [2] * 10


def _weighted(design: Design) -> Any:
    from scipy import sparse

    return sparse.csr_matrix(
        (design.entry_weight, (design.entry_row, design.entry_arm)), shape=(design.n, design.n_arms)
    )


@pytest.mark.usefixtures("low_limit")
def test_a_big_librarys_fit_keeps_one_number_per_injection_and_solves_the_same_model() -> None:
    # beyond the limit the sums hold X (one weight per injection), not X'X; the posterior means at a fixed
    # penalty are the augmented least-squares reference's, and each sd a lower bound of the exact one
    design = few_partners_design()
    st = sums(design, design_entries(design), SESSION_BLOCK)
    assert st.cross is None
    assert st.x.nnz == len(design.entry_arm)
    fit = fit_joint(design, penalty=4.0, solver="iterative")
    coef, cov, _ = ridge_reference(*written_out(design), 4.0)
    assert fit.coef == pytest.approx(coef, abs=1e-8)
    assert (fit.coef_sd <= np.sqrt(np.diag(cov)) * (1.0 + 1e-9)).all()
    assert np.median(fit.coef_sd / np.sqrt(np.diag(cov))) > 0.95


def test_grouping_lessons_seen_once_pairs_none_of_them() -> None:
    # 40 sessions of 50 lessons each seen in that session only (2,000 arms, the first 1,000 flagged as
    # identified only by time) and arms 2,000 and 2,001 together in 3 sessions, 2,000 flagged: 2,001 joins
    # it, no lesson seen once joins anything (a group needs two sessions). Counting every arm against
    # every flagged one held a 2,002 x 1,001 table twice (32 MB, 36 MB at peak); the pairs of lessons in one
    # session that hold a flagged one: 20 x 50 x 50, ~1 MB
    sessions = [(np.arange(50), 50 * s + np.arange(50)) for s in range(40)]
    sessions.append((np.array([0, 0, 1, 1, 2, 2]), np.array([2000, 2001] * 3)))
    timed = np.zeros(2002, dtype=bool)
    timed[:1000] = True
    timed[2000] = True

    def entries() -> Iterator[tuple[Any, Any]]:
        return iter(sessions)

    out, peak = _peak(lambda: with_groups(timed, entries))
    assert np.flatnonzero(out).tolist() == [*range(1000), 2000, 2001]
    assert peak < 4 << 20


def _peak(fn: Callable[[], Any]) -> tuple[Any, int]:
    """fn()'s result and the peak of the memory it allocated, on a second call (the first imports scipy)."""
    fn()
    tracemalloc.start()
    try:
        result = fn()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.usefixtures("low_limit")
def test_loo_groups_lessons_without_pairing_every_lesson_in_a_session() -> None:
    # the pairs groups and inseparable lessons are read from: sessions with both lessons, for the lessons in
    # two sessions or more (written out: the indicator's X'X with the others' rows and columns zero); the
    # groups are those of the whole table, and beyond the limit `loo`'s claims never form the whole table
    design = few_partners_design()
    seen = (written_out(design)[1] != 0).astype(float)
    twice = seen.sum(axis=0) >= 2
    expected = (seen.T @ seen) * np.outer(twice, twice)
    repeated = design.repeated_co_occurrence
    assert repeated.toarray() == pytest.approx(expected, abs=0)
    n_with = np.bincount(design.entry_arm, minlength=design.n_arms)
    assert find_groups(repeated, n_with) == find_groups(design.co_occurrence, n_with) == [(0, 48, 49)]
    fresh = few_partners_design()
    lesson_claims(fresh)
    assert "co_occurrence" not in vars(fresh)
