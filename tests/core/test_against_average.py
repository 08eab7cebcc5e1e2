"""When every graded session injects as many lessons, the log shows only the lessons' differences: each effect is
against the average lesson's, and `loo` says so in one line (the table, `--json`'s meta, the Analysis screen's
caveat). A log whose sessions inject different numbers of lessons has no such line.

The independent check: every lesson helping by the same +0.05 in a fixed-k log is, against the average lesson,
no effect at all (the estimates' mean is ~0, not +0.05); in a log of 1-5 lessons a session, the same world's
estimates average ~+0.05."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.estimates import AGAINST_AVERAGE
from lesson_credit.core.analysis.joint import Design
from tests.support.cli_run import run_cli
from tests.support.headline_logs import fixed_k_workspace

N, P, EFFECT = 600, 10, 0.05


def world(seed: int, fixed: bool, others: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Injections (N x P) and rewards: every lesson adds EFFECT, noise sd 0.05; each session injects 3 lessons
    (`fixed`; the first `others` sessions 2 or 4) or 1-5 of them."""
    rng = np.random.default_rng([29, seed])
    x = np.zeros((N, P))
    for i in range(N):
        k = (3 if i >= others else 2 + 2 * (i % 2)) if fixed else int(rng.integers(1, 6))
        x[i, rng.choice(P, k, replace=False)] = 1.0
    reward = 0.4 + EFFECT * x.sum(axis=1) + rng.normal(0, 0.05, N)
    return x, reward


def design_of(x: np.ndarray, reward: np.ndarray) -> Design:
    rows, arms = np.nonzero(x)
    n, p = x.shape
    return Design(np.arange(n), reward, np.zeros(n, dtype=np.int64), 1, rows, arms, np.ones(len(rows)), p, n_blocks=1)


@pytest.mark.parametrize("seed", range(3))
def test_a_fixed_number_of_lessons_a_session_is_said_and_its_effects_are_against_their_mean(seed: int) -> None:
    claims = lesson_claims(design_of(*world(seed, fixed=True)))
    assert claims.extra["relative"] is True
    estimates = [c.effect.estimate for c in claims.columns if c.effect is not None]
    assert len(estimates) == P
    # every lesson's true effect is +0.05; against the average lesson each is 0 (sd of one ~0.05 / sqrt(180) ~ 0.004)
    assert abs(float(np.mean(estimates))) < 0.01
    assert all(abs(e) < 0.03 for e in estimates)


@pytest.mark.parametrize("seed", range(3))
def test_a_varying_number_of_lessons_shows_their_common_effect_and_says_nothing(seed: int) -> None:
    claims = lesson_claims(design_of(*world(seed, fixed=False)))
    assert claims.extra["relative"] is False
    estimates = [c.effect.estimate for c in claims.columns if c.effect is not None]
    assert len(estimates) == P
    assert abs(float(np.mean(estimates)) - EFFECT) < 0.01


# on whole lessons: with each lesson's first sessions a column of their own (core.analysis.early) the 60 sessions
# of another size see the lessons' mean less, and the fit reads it +0.030 on seed 0 (+0.039 on whole lessons), +0.044
# on seed 1 (+0.050), the line still not said: a weakly seen mean is shrunk without a word (open)
@pytest.mark.usefixtures("whole_lessons")
@pytest.mark.parametrize("seed", range(2))
def test_a_few_sessions_of_another_size_leave_the_line_only_while_the_prior_outweighs_them(seed: int) -> None:
    """One session of 2 or 4 among 600 of 3: the data barely see the mean, which stays far below +0.05 (the prior
    holds it), and the line is said. 60 such sessions (10%): the mean reads about +0.05, and no line claims the
    prior holds it (a review: the line was said there beside six intervals all excluding 0)."""
    one = lesson_claims(design_of(*world(seed, fixed=True, others=1)))
    estimates = [c.effect.estimate for c in one.columns if c.effect is not None]
    assert one.extra["relative"] is True and float(np.mean(estimates)) < EFFECT / 2
    many = lesson_claims(design_of(*world(seed, fixed=True, others=60)))
    estimates = [c.effect.estimate for c in many.columns if c.effect is not None]
    assert many.extra["relative"] is False and abs(float(np.mean(estimates)) - EFFECT) < 0.012


def test_loo_says_it_in_the_table_and_in_json(tmp_path: Path) -> None:
    for fixed in (True, False):
        root = fixed_k_workspace(tmp_path, fixed)
        code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
        assert code == 0, err
        flat = " ".join(out.split())  # (the line is wrapped to the terminal's width)
        assert (AGAINST_AVERAGE in flat) is fixed
        code, js, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json")
        assert code == 0, err
        assert json.loads(js)["meta"]["against_average"] == (AGAINST_AVERAGE if fixed else None)
