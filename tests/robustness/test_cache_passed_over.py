"""Lessons a session's draw passed over (core/log/unchosen.py), found alike in the parsed-log cache's blocks and in
memory, whether the selections' rows are looked up id by id in the blocks' hash tables or read at once into a dict.

Blocks of 8 sessions (65,536 in use) and a cache written after any read, so a log of 40 sessions has five blocks;
what is appended after the cache was written is read into memory.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.workspace import Workspace
from tests.robustness.hostile_helpers import LOG_REL, lesson, make_ws

LIBRARY = {"a.md": lesson(["alpha"]), "b.md": lesson(["beta"])}


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 8)


def _lines(i: int) -> str:
    """Session r<i>: its draw chose a and b when i is a multiple of 3, else a alone (b passed over); its record
    names a, and b too when i is even."""
    sid = f"r{i:02d}"
    chosen = ["a.md", "b.md"] if i % 3 == 0 else ["a.md"]
    named = ["a.md", "b.md"] if i % 2 == 0 else ["a.md"]
    selection: dict[str, object] = {"type": "selection", "session_id": sid, "candidates": ["a.md", "b.md"]}
    selection.update(selected=chosen, propensity={"a.md": 0.9, "b.md": 0.5})
    lessons = [{"path": lesson_id, "salience": 1.0} for lesson_id in named]
    session = {"type": "session", "session_id": sid, "base_reward": 0.5, "lessons": lessons}
    return json.dumps(selection) + "\n" + json.dumps(session) + "\n"


@pytest.mark.parametrize("bulk_share", [0, 10**9])  # 0: each id probed in the blocks; 10**9: all read into a dict
def test_passed_over_lessons_are_found_in_cached_blocks_and_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk_share: int
) -> None:
    monkeypatch.setattr("lesson_credit.core.log.lookup.BULK_SHARE", bulk_share)
    root = tmp_path / "ws"
    make_ws(root, LIBRARY)
    log = root / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(_lines(i) for i in range(40)))
    Workspace(root).data()  # parses, writes the cache
    with log.open("a") as handle:  # rows 40-43, read into memory
        handle.write("".join(_lines(i) for i in range(40, 44)))
    # b named and passed over: even and not a multiple of 3, of 0..43
    expected = [2, 4, 8, 10, 14, 16, 20, 22, 26, 28, 32, 34, 38, 40]
    ws = Workspace(root)
    data = ws.analysis_data()
    index = ws._reader.index
    assert (index.lookup.stored, data.n_sessions) == (40, 44)  # the blocks hold rows 0-39
    b = data.arm_ids.index("b.md")
    during = [(int(data.entry_session[e]), int(data.entry_arm[e])) for e in data.during.tolist()]
    assert during == [(row, b) for row in expected]
    assert [session_id for session_id, _ in ws.passed_over()] == [f"r{row:02d}" for row in expected]
    uncached = Workspace(root, use_cache=False).analysis_data()
    assert uncached.during.tolist() == data.during.tolist()
