"""Settings changed with `with_` are checked as new ones are: on every msgspec the project allows."""

from __future__ import annotations

import pytest

from lesson_credit.core.model.settings import CreditSettings


@pytest.mark.smoke
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"floor": 1.5}, "floor"),
        ({"decay": 0.0}, "decay must be in (0, 1]"),
        ({"prior_alpha": -1.0}, "prior alpha must be a positive number"),
        ({"strategy": "nonsense"}, "nonsense"),
    ],
)
def test_a_changed_setting_out_of_range_is_refused(change: dict[str, object], message: str) -> None:
    """msgspec's `replace` skipped `__post_init__` before 0.21 (the minimum installed in CI is 0.18): a
    floor of 1.5 from What-if's `]` or a config was kept, and every credit weighed more than the reward."""
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("]", r"\]")):
        CreditSettings().with_(**change)


@pytest.mark.smoke
def test_with_changes_only_what_it_is_given() -> None:
    settings = CreditSettings(floor=0.2, decay=0.9)
    changed = settings.with_(floor=0.4, decay=None)
    assert (changed.floor, changed.decay, changed.strategy) == (0.4, 0.9, settings.strategy)
    assert settings.floor == 0.2  # the original is unchanged (frozen)
