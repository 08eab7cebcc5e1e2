"""bench/small_blocks.py runs (docs/estimates.md's "Small logs" table comes from it): a few seeds, one size."""

from __future__ import annotations

import pytest

from bench import small_blocks


def test_it_prints_a_row_per_world_size_blocks_and_lesson(capsys: pytest.CaptureFixture[str]) -> None:
    assert small_blocks.main(["--seeds", "3", "--n", "24", "--blocks", "1", "2"]) == 0
    rows = [
        line
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("| trend") or line.startswith("| still")
    ]
    assert len(rows) == 2 * 2 * 3  # trend and still, B = 1 and 2, three kinds of lesson
    # 24 graded sessions: the rule's 2 blocks are marked, 1 is not
    assert all(("| 2 (rule) |" in row) == ("| 2 " in row) for row in rows)
    assert sum("(rule)" in row for row in rows) == 6
