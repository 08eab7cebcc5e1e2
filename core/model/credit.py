"""Credit strategies (docs/format.md §4): how one session's reward turns into Beta evidence per lesson.

Pure functions over floats or numpy arrays, so the fold can apply them to a whole log at once. numpy is not
imported here: a `record` computes its event's credit before it reads the log, without numpy's import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from lesson_credit.core.base.errors import WorkspaceError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Num = TypeVar("Num", float, npt.NDArray[np.float64])

STRATEGIES = ("seed", "evidence", "uniform")
DEFAULT_STRATEGY = "seed"
DEFAULT_FLOOR = 0.3


def check_strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (expected one of {', '.join(STRATEGIES)})")
    return strategy


def check_unit(value: float, what: str) -> float:
    """A number in [0, 1]; NaN and infinities are refused."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number in [0, 1], got {value!r}") from None
    if not (0.0 <= number <= 1.0):  # also false for NaN
        raise ValueError(f"{what} must be in [0, 1], got {value!r}")
    return number


def check_reward(reward: float) -> float:
    """A reward a caller gave (in [0, 1]; NaN and infinities refused), else a WorkspaceError."""
    try:
        return check_unit(reward, "reward")
    except ValueError as exc:
        raise WorkspaceError(str(exc)) from None


def weight(salience: Num, floor: float) -> Num:
    """w = floor + (1 - floor) * salience: even an unmentioned lesson keeps `floor` of the credit."""
    return floor + (1.0 - floor) * salience


def credit(base: Num, w: Num, strategy: str) -> tuple[Num, Num]:
    """(alpha increment, beta increment) for a lesson of weight w in a session of reward base."""
    if strategy == "seed":
        reward = base * w
        return reward, 1.0 - reward
    if strategy == "evidence":
        return w * base, w * (1.0 - base)
    if strategy == "uniform":
        return base, 1.0 - base
    raise ValueError(f"unknown strategy {strategy!r}")


def credited_reward(base: Num, w: Num, strategy: str) -> Num:
    """The reward a lesson is credited with: `base * w` for seed, `base` otherwise (docs/format.md §4, §7)."""
    if strategy == "seed":
        return base * w
    return base
