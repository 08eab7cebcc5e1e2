"""The prior and increments events' steps (core/log/steps.py): kept as typed arrays, read back from the
parsed-log cache's head as written, a damaged head refused (the cache is then rebuilt from the log)."""

from __future__ import annotations

import numpy as np
import pytest

from lesson_credit.core.log.steps import Steps


def test_steps_round_trip_through_the_head_and_snapshots_do_not_move() -> None:
    steps = Steps()
    steps.add(0, 2, 20.0, 2.0)
    steps.add(50, 0, 3.5, 9.25)
    before = steps.arrays()
    again = Steps.of_plain(steps.plain())
    steps.add(150, 1, 1.0, 1.0)  # a later step: the snapshot taken before keeps its two
    assert before.after.tolist() == [0, 50] and before.arm.tolist() == [2, 0]
    assert before.alpha.tolist() == [20.0, 3.5] and before.beta.tolist() == [2.0, 9.25]
    assert not before.after.flags.writeable
    copy = again.arrays()
    assert [copy.after.tolist(), copy.arm.tolist(), copy.alpha.tolist()] == [[0, 50], [2, 0], [20.0, 3.5]]
    assert len(again) == 2 and len(steps) == 3
    assert Steps().arrays().after.dtype == np.int64 and len(Steps().arrays().beta) == 0


@pytest.mark.parametrize("plain", [[b""] * 3, [b"\0" * 8, b"", b"", b""], [b"\0" * 7, b"", b"", b""]])
def test_a_damaged_head_is_refused(plain: list[bytes]) -> None:
    with pytest.raises(ValueError):
        Steps.of_plain(plain)
