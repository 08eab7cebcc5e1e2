"""Each arm's `last_updated` in bandit-state.json (interop.last_credited): the time of the latest session it
was credited in, each session's time looked up once however many arms it was the latest of."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from lesson_credit.core.bandit.interop import last_credited


class Times(list[str | None]):
    """Session times that count the lookups (a lookup in the cached columns decodes an item)."""

    looked_up = 0

    def __getitem__(self, row):  # type: ignore[no-untyped-def]
        self.looked_up += 1
        return super().__getitem__(row)


def test_each_latest_session_s_time_is_looked_up_once() -> None:
    times = Times(["t0", "t1", None, "t3"])
    post = SimpleNamespace(last_session=np.array([3, 1, 3, -1, 2, 3]))  # arms 0, 2, 5: session 3; arm 3: none
    got = last_credited(post, lambda: times)  # type: ignore[arg-type]
    assert got == ["t3", "t1", "t3", None, None, "t3"]
    assert times.looked_up == 3  # sessions 1, 2 and 3 (the old code: 5, one per arm with a session)


def test_no_arm_with_a_session_asks_for_no_times() -> None:
    post = SimpleNamespace(last_session=np.array([-1, -1]))

    def times() -> list[str | None]:
        raise AssertionError("asked for the session times")

    assert last_credited(post, times) == [None, None]  # type: ignore[arg-type]
