"""lesson_credit.core.model.beta.density (ln B from math.lgamma, no scipy import) against scipy.stats' Beta pdf."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from lesson_credit.core.model.beta import density


@pytest.mark.parametrize(
    ("alpha", "beta"), [(1.0, 1.0), (1.52, 1.48), (0.5, 0.5), (30.5, 12.2), (2.0, 900.0), (5e4, 4e4)]
)
@pytest.mark.smoke
def test_density_matches_scipy_inside_the_unit_interval(alpha: float, beta: float) -> None:
    x = np.linspace(0.0, 1.0, 401)[1:-1]
    reference = stats.beta.pdf(x, alpha, beta)
    got = density(alpha, beta, x)
    shown = reference > 1e-300  # where the pdf is representable at all
    assert np.allclose(got[shown], reference[shown], rtol=1e-9, atol=0.0)


def test_density_is_zero_at_and_outside_the_ends() -> None:
    assert density(2.0, 3.0, np.array([-0.5, 0.0, 1.0, 1.5])).tolist() == [0.0, 0.0, 0.0, 0.0]
