"""Credit settings: how evidence is counted (strategy, salience floor, decay, prior)."""

from __future__ import annotations

import math

from msgspec import Struct
from msgspec.structs import asdict

from lesson_credit.core.model import credit as credit_mod

MAX_PRIOR = 1e6  # prior pseudo-counts: far past any real prior, and sums stay exact in float64


class CreditSettings(Struct, frozen=True):
    """How evidence is counted. Validated on construction, so a bad config fails early."""

    strategy: str = credit_mod.DEFAULT_STRATEGY
    floor: float = credit_mod.DEFAULT_FLOOR
    decay: float = 1.0  # gamma in (0, 1]; 1 means no decay
    prior_alpha: float = 1.0
    prior_beta: float = 1.0

    def __post_init__(self) -> None:
        credit_mod.check_strategy(self.strategy)
        credit_mod.check_unit(self.floor, "floor")
        if not (0.0 < self.decay <= 1.0):
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        for name in ("prior_alpha", "prior_beta"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value) and value <= MAX_PRIOR):
                shown = name.replace("_", " ")
                raise ValueError(f"{shown} must be a positive number of at most {MAX_PRIOR:g}, got {value!r}")

    def with_(self, **changes: object) -> CreditSettings:
        """These settings with `changes` (None: unchanged), validated: built anew, as msgspec's `replace`
        runs `__post_init__` only from msgspec 0.21 (the declared minimum is older)."""
        values = asdict(self) | {k: v for k, v in changes.items() if v is not None}
        return CreditSettings(**values)
