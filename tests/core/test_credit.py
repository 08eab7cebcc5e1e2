"""The weight and the three credit strategies (docs/format.md §4) against numbers worked out by hand."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.bandit.fold import CreditSettings
from lesson_credit.core.model.credit import STRATEGIES, check_strategy, check_unit, credit, credited_reward, weight


@pytest.mark.smoke
def test_spec_worked_example_seed() -> None:
    # docs/format.md §4: floor 0.3, salience 0.11 -> w = 0.3 + 0.7 * 0.11 = 0.3 + 0.077 = 0.377
    # r = 0.82 * 0.377 = 0.30914; alpha += 0.30914, beta += 1 - 0.30914 = 0.69086
    w = weight(0.11, 0.3)
    assert w == pytest.approx(0.377, abs=1e-12)
    d_alpha, d_beta = credit(0.82, w, "seed")
    assert d_alpha == pytest.approx(0.30914, abs=1e-12)
    assert d_beta == pytest.approx(0.69086, abs=1e-12)
    assert credited_reward(0.82, w, "seed") == pytest.approx(0.30914, abs=1e-12)


def test_evidence_strategy_by_hand() -> None:
    # w = 0.377 as above; alpha += 0.377 * 0.82 = 0.30914; beta += 0.377 * 0.18 = 0.06786
    d_alpha, d_beta = credit(0.82, 0.377, "evidence")
    assert d_alpha == pytest.approx(0.30914, abs=1e-12)
    assert d_beta == pytest.approx(0.06786, abs=1e-12)
    # the credited reward of a non-seed strategy is the session's base reward
    assert credited_reward(0.82, 0.377, "evidence") == pytest.approx(0.82)


def test_uniform_strategy_ignores_weight() -> None:
    for w in (0.0, 0.377, 1.0):
        d_alpha, d_beta = credit(0.82, w, "uniform")
        assert d_alpha == pytest.approx(0.82)
        assert d_beta == pytest.approx(0.18)
        assert credited_reward(0.82, w, "uniform") == pytest.approx(0.82)


def test_seed_and_evidence_differ_in_beta_only() -> None:
    # base 0.5, w 0.5: seed r = 0.25 -> (0.25, 0.75); evidence -> (0.25, 0.25)
    assert credit(0.5, 0.5, "seed") == pytest.approx((0.25, 0.75))
    assert credit(0.5, 0.5, "evidence") == pytest.approx((0.25, 0.25))


@pytest.mark.parametrize(
    ("salience", "floor", "expected"),
    [
        (0.0, 0.3, 0.3),  # unmentioned lesson keeps the floor
        (1.0, 0.3, 1.0),
        (0.5, 0.3, 0.65),  # 0.3 + 0.7 * 0.5
        (0.25, 0.0, 0.25),  # floor 0: weight is the salience
        (0.0, 0.0, 0.0),
        (0.0, 1.0, 1.0),  # floor 1: every lesson gets full weight
        (0.37, 1.0, 1.0),
        (1.0, 1.0, 1.0),
    ],
)
def test_weight_values(salience: float, floor: float, expected: float) -> None:
    assert weight(salience, floor) == pytest.approx(expected, abs=1e-12)


def test_floor_zero_unmentioned_lesson_gets_no_alpha_under_seed() -> None:
    # w = 0 -> r = 0: the whole session counts as a failure for the lesson (beta += 1)
    assert credit(0.9, weight(0.0, 0.0), "seed") == pytest.approx((0.0, 1.0))
    # and under evidence it gets no evidence at all
    assert credit(0.9, weight(0.0, 0.0), "evidence") == pytest.approx((0.0, 0.0))


def test_floor_one_makes_seed_equal_uniform() -> None:
    for sal in (0.0, 0.4, 1.0):
        w = weight(sal, 1.0)
        assert credit(0.7, w, "seed") == pytest.approx(credit(0.7, w, "uniform"))


def test_vectorised_over_arrays() -> None:
    sal = np.array([0.0, 0.5, 1.0])
    w = weight(sal, 0.3)
    np.testing.assert_allclose(w, [0.3, 0.65, 1.0])
    base = np.array([1.0, 0.4, 0.0])
    d_alpha, d_beta = credit(base, w, "seed")
    # r = [1*0.3, 0.4*0.65, 0*1] = [0.3, 0.26, 0]
    np.testing.assert_allclose(d_alpha, [0.3, 0.26, 0.0])
    np.testing.assert_allclose(d_beta, [0.7, 0.74, 1.0])
    d_alpha, d_beta = credit(base, w, "evidence")
    np.testing.assert_allclose(d_alpha, [0.3, 0.26, 0.0])
    np.testing.assert_allclose(d_beta, [0.0, 0.39, 1.0])  # w * (1 - base)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, -0.1, 1.1, "abc", None, "", [0.5]])
def test_check_unit_refuses(bad: object) -> None:
    with pytest.raises(ValueError):
        check_unit(bad, "reward")  # type: ignore[arg-type]  # not a float on purpose: the check refuses it


@pytest.mark.parametrize(("value", "expected"), [(0, 0.0), (1, 1.0), (0.5, 0.5), ("0.25", 0.25)])
def test_check_unit_accepts(value: object, expected: float) -> None:
    assert check_unit(value, "reward") == expected  # type: ignore[arg-type]  # ints and numeric text on purpose


def test_check_unit_message_names_the_quantity() -> None:
    with pytest.raises(ValueError, match="floor"):
        check_unit(2.0, "floor")


def test_strategies() -> None:
    assert set(STRATEGIES) == {"seed", "evidence", "uniform"}
    for name in STRATEGIES:
        assert check_strategy(name) == name
    with pytest.raises(ValueError, match="bogus"):
        check_strategy("bogus")
    with pytest.raises(ValueError):
        credit(0.5, 0.5, "bogus")


def test_credit_settings_defaults() -> None:
    settings = CreditSettings()
    assert (settings.strategy, settings.floor, settings.decay) == ("seed", 0.3, 1.0)
    assert (settings.prior_alpha, settings.prior_beta) == (1.0, 1.0)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"floor": math.nan},
        {"floor": -0.1},
        {"floor": 1.1},
        {"strategy": "greedy"},
        {"decay": 0.0},
        {"decay": 1.5},
        {"decay": math.nan},
        {"prior_alpha": 0.0},
        {"prior_beta": -1.0},
        {"prior_alpha": math.inf},
    ],
)
def test_credit_settings_validate(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        CreditSettings(**kwargs)
