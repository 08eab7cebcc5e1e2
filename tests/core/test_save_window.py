"""Whether a state file is a save in progress (gptme's bandit's `write_text`: emptied, then written): found empty or
beginning a JSON object it does not end, and changed within the window (5 s) or at a time ahead of the clock."""

from __future__ import annotations

import pytest

from lesson_credit.core.bandit import saving

T = 1_800_000_000.0  # the file's mtime, in seconds


@pytest.mark.parametrize(
    ("data", "age", "expected"),
    [
        (b"", 0.0, True),
        (b"  \n", 4.9, True),  # inside the 5 s window
        (b"", 5.1, False),  # past it: a save that crashed half-way
        (b'{\n  "arms": {', 1.0, True),
        (b'{"arms": {}}\n', 1.0, False),  # a whole object
        (b"---\nmatch:\n", 1.0, False),  # not a JSON object at all (a lesson): not a save of gptme's
        (b"", -3600.0, True),  # a time ahead of the clock (skew): recent
        (None, 0.0, False),  # no file
    ],
)
def test_a_save_in_progress_is_half_written_and_recent(
    monkeypatch: pytest.MonkeyPatch, data: bytes | None, age: float, expected: bool
) -> None:
    monkeypatch.setattr(saving, "clock", lambda: T + age)
    assert saving.saving_now((data, int(T * 1e9))) is expected
