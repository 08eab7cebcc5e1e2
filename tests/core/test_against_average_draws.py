"""Which lessons' effects are against an average, when a few lessons are rare or outside the draw (an outside
attack's worlds, smaller).

- Rare lessons taking one of the 3 places: the lessons' sum is still 3 in every session, so only differences show;
  before, the lessons of under 5 sessions were left out of the pinned mean and their sessions looked like data on
  the rest's mean: ten estimates ~0 (truth +0.1 each), no line.
- One lesson outside a draw of 3 of 10 (in 30% of sessions, or in every session from some point on): the drawn
  lessons' sum is 3 in every session; before, all ten were called not estimable, tied to each other.
- A randomized headline is a lesson's own effect: the line says which rows it speaks of, and marks them.

The independent checks: numpy's rank of [intercept | injections] names the null direction; the rewards with +0.3
added to every session (each of the 3 places +0.1 more) give the same claims (the log cannot tell them apart);
numpy's least squares with one drawn lesson dropped gives the extra lesson's effect and the drawn ones' differences.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from lesson_credit.core.analysis.claims import lesson_claims
from lesson_credit.core.analysis.estimable import estimability
from lesson_credit.core.analysis.estimates import (
    AGAINST_AVERAGE,
    AGAINST_AVERAGE_MARK,
    AGAINST_AVERAGE_SOME,
    Effect,
    against_average_line,
    marks_against_average,
)
from lesson_credit.core.analysis.joint import Design
from lesson_credit.core.analysis.joint_ops import centred
from lesson_credit.core.analysis.neighbourhoods import neighbourhoods
from tests.support.cli_run import run_cli
from tests.support.headline_logs import draw_workspace, parse_table

P = 10  # lessons drawn, 3 a session


def design_of(x: np.ndarray, reward: np.ndarray) -> Design:
    rows, arms = np.nonzero(x)
    n, p = x.shape
    return Design(np.arange(n), reward, np.zeros(n, dtype=np.int64), 1, rows, arms, np.ones(len(rows)), p, n_blocks=1)


def null_vectors(x: np.ndarray) -> np.ndarray:
    """By numpy's SVD of [intercept | injections]: the null space's injection parts (columns)."""
    m = np.hstack([np.ones((len(x), 1)), x])
    _, s, vt = np.linalg.svd(m)
    return vt[int(np.sum(s > 1e-9 * s[0])) :, 1:].T


def rare_world(seed: int, n: int = 200, rare: int = 5, per: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Every session injects 3 lessons: 3 of the P drawn, or (in rare * per sessions) 2 of them and one of `rare`
    lessons of `per` sessions each; every lesson +0.1, noise sd 0.05."""
    rng = np.random.default_rng([61, seed])
    x = np.zeros((n, P + rare))
    at = dict(
        zip(rng.choice(n, rare * per, replace=False).tolist(), np.repeat(np.arange(rare), per).tolist(), strict=True)
    )
    for i in range(n):
        if i in at:
            x[i, P + at[i]] = 1.0
        x[i, rng.choice(P, 3 - int(i in at), replace=False)] = 1.0
    return x, 0.2 + 0.1 * x.sum(axis=1) + rng.normal(0.0, 0.05, n)


@pytest.mark.parametrize("seed", range(3))
def test_rare_lessons_in_a_draw_leave_the_others_against_the_average_and_it_is_said(seed: int) -> None:
    x, reward = rare_world(seed)
    null = null_vectors(x)
    assert null.shape[1] == 1 and np.allclose(null[:, 0] / null[0, 0], 1.0)  # only the lessons' sum (all equal)
    claims = lesson_claims(design_of(x, reward))
    assert claims.extra["relative"] is True  # before: False, and no line
    frequent = claims.columns[:P]
    assert all(c.identified and c.against_average for c in frequent)
    assert all(c.against_average and not c.identified for c in claims.columns[P:])  # too few sessions: no claim
    # +0.3 more in every session (the truth +0.2 a lesson): the same numbers, to rounding
    more = lesson_claims(design_of(x, reward + 0.3))
    for a, b in zip(frequent, more.columns[:P], strict=True):
        assert a.effect is not None and b.effect is not None
        assert abs(a.effect.estimate - b.effect.estimate) < 1e-6


def extra_world(
    seed: int, n: int = 300, share: float = 0.3, switch: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """3 of P drawn in every session, lesson P (outside the draw) in `share` of them at random, or (`switch`) in
    every session from that one on; every lesson +0.1, noise sd 0.05."""
    rng = np.random.default_rng([67, seed])
    x = np.zeros((n, P + 1))
    for i in range(n):
        x[i, rng.choice(P, 3, replace=False)] = 1.0
    x[:, P] = (np.arange(n) >= switch) if switch is not None else rng.random(n) < share
    return x, 0.2 + 0.1 * x.sum(axis=1) + rng.normal(0.0, 0.05, n)


@pytest.mark.usefixtures("whole_lessons")
@pytest.mark.parametrize("seed", range(3))
def test_a_lesson_outside_the_draw_is_estimated_on_its_own_and_the_drawn_against_their_average(seed: int) -> None:
    x, reward = extra_world(seed)
    null = null_vectors(x)
    assert null.shape[1] == 1 and abs(null[P, 0]) < 1e-9  # the drawn lessons' sum only: the extra one estimable
    claims = lesson_claims(design_of(x, reward))
    drawn, extra = claims.columns[:P], claims.columns[P]
    assert all(c.estimable and c.identified and c.against_average for c in drawn)  # before: not estimable, tied
    assert extra.identified and not extra.against_average and claims.extra["relative"] is True
    # least squares with lesson 0 dropped (full rank): the extra lesson's effect, the drawn ones' differences to 0
    m = np.hstack([np.ones((len(x), 1)), x[:, 1:]])
    coef = np.linalg.lstsq(m, reward, rcond=None)[0]
    assert extra.effect is not None and abs(extra.effect.estimate - coef[P]) < 0.002
    assert abs(coef[P] - 0.1) < 0.02  # (the truth)
    estimates = np.array([c.effect.estimate for c in drawn if c.effect is not None])
    assert np.allclose(estimates[1:] - estimates[0], coef[1:P], atol=0.002)
    assert abs(float(estimates.mean())) < 0.01  # against their average: the prior holds it near 0, not +0.1


@pytest.mark.parametrize("seed", range(2))
def test_a_lesson_switched_on_beside_the_draw_leaves_the_drawn_against_their_average(seed: int) -> None:
    x, reward = extra_world(seed, switch=175)
    claims = lesson_claims(design_of(x, reward))
    assert all(c.identified and c.against_average for c in claims.columns[:P])  # before: not estimable, tied
    switched = claims.columns[P]
    assert switched.timed and not switched.identified and not switched.against_average


@pytest.mark.parametrize("extra", [False, True])
def test_the_line_says_which_rows_are_against_the_average(tmp_path: Path, extra: bool) -> None:
    """x.md's randomized headline (or n.md's, outside the draw) is its own effect, listed beside the drawn lessons'
    differences: the line names the mark, the drawn rows carry it, and --json marks each effect."""
    own = "new/n.md" if extra else "auto/x.md"
    root = draw_workspace(tmp_path, extra)
    code, js, err = run_cli("loo", "--workspace", str(root), "--no-write", "--json")
    assert code == 0, err
    payload = json.loads(js)
    assert payload["meta"]["against_average"] == AGAINST_AVERAGE_SOME  # before: AGAINST_AVERAGE, or none
    effects = {r["lesson"]: r["effect"] for r in payload["results"]}
    assert effects[own]["method"] == ("joint" if extra else "randomized") and effects[own]["ci_low"] > 0.05
    assert not effects[own]["against_average"]
    assert all(effects[f"tools/l{j}.md"]["against_average"] for j in range(6))
    code, out, err = run_cli("loo", "--workspace", str(root), "--no-write")
    assert code == 0, err
    above, rows = parse_table(out)
    assert AGAINST_AVERAGE_SOME in " ".join(" ".join(above).split())
    marked = {row["lesson"]: row["from"].endswith(f", {AGAINST_AVERAGE_MARK}") for row in rows}
    assert marked == {lesson: lesson != own for lesson in marked}


def test_every_row_against_the_average_keeps_the_one_line() -> None:
    """Rows that claim nothing (in parentheses) are not ranked by their numbers: they need no mark."""
    relative = [Effect(0.0, -0.1, 0.1, "joint", against_average=True), Effect(0.0, None, None, "joint")]
    assert against_average_line(relative) == AGAINST_AVERAGE and not marks_against_average(relative)
    own = [*relative, Effect(0.1, 0.05, 0.15, "randomized")]
    assert against_average_line(own) == AGAINST_AVERAGE_SOME and marks_against_average(own)
    assert against_average_line([Effect(0.1, 0.05, 0.15, "joint")]) is None


@pytest.mark.parametrize("seed", range(2))
def test_both_paths_find_a_draw_wider_than_a_neighbourhood_beside_a_lesson_outside_it(seed: int) -> None:
    """40 lessons drawn 3 a session (more than a neighbourhood's 17: found beside the lessons' sum, `_beside_sum`),
    one outside the draw: no tie on either path, the draw named."""
    rng = np.random.default_rng([71, seed])
    n, drawn = 600, 40
    x = np.zeros((n, drawn + 1))
    for i in range(n):
        x[i, rng.choice(drawn, 3, replace=False)] = 1.0
    x[:, drawn] = rng.random(n) < 0.3
    null = null_vectors(x)
    assert null.shape[1] == 1 and np.allclose(null[:drawn, 0] / null[0, 0], 1.0) and abs(null[drawn, 0]) < 1e-9
    design = design_of(x, np.zeros(n))
    z, group = design.indicators()
    op = centred(sparse.csr_matrix(x), z, group)
    want = np.arange(drawn + 1) < drawn
    for dense in (True, False):
        ties, found = estimability(op, dense=dense, hoods=None if dense else neighbourhoods(op))
        assert ties == {} and found.tolist() == want.tolist()
