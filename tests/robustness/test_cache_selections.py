"""Sessions selected but never recorded (`lint`'s `selected-never-recorded`), found in the parsed-log cache's
blocks as reading the log gives them, reading back only the selections of the blocks that hold one.

Blocks of 8 sessions (65,536 in use) and a cache written after any read (4 MB in use), so a log of a few dozen
sessions has several blocks; what is appended after the cache was written is read into memory.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log.sections import Section
from lesson_credit.core.workspace import Workspace
from tests.robustness.hostile_helpers import LOG_REL, lesson, make_ws

LIBRARY = {"a.md": lesson(["alpha"]), "b.md": lesson(["beta"])}


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 8)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def _selection(sid: str) -> str:
    return _line({"type": "selection", "session_id": sid, "candidates": ["a.md"], "propensity": {"a.md": 0.5}})


def _session(sid: str) -> str:
    lessons = [{"path": "a.md", "salience": 1.0}]
    return _line({"type": "session", "session_id": sid, "base_reward": 0.5, "lessons": lessons})


def _workspace(root: Path) -> Path:
    """30 sessions r00..r29, each selected on the line before its record (lines 2i+1, 2i+2), and two selections
    never recorded: lost-a after r02's record (line 6) on line 7, lost-b after r20's record (line 42, 43 with
    lost-a before it) on line 44: 62 lines, cached in blocks of rows 0-7, 8-15, 16-23 and 24-29."""
    make_ws(root, LIBRARY)
    lines = [line for i in range(30) for line in (_selection(f"r{i:02d}"), _session(f"r{i:02d}"))]
    lines.insert(6, _selection("lost-a"))
    lines.insert(43, _selection("lost-b"))
    log = root / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(lines))
    Workspace(root).data()  # parses, writes the cache
    return root


def test_the_cached_blocks_give_what_the_log_gives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path)
    with (root / LOG_REL).open("a") as log:  # lines 63-66: lost-b recorded at last (its selection is cached)
        log.write(_session("lost-b") + _selection("lost-c") + _session("r30") + _selection("running"))
    expected = [("lost-a", 7), ("lost-c", 64)]  # "running": no record after it
    assert Workspace(root, use_cache=False).selected_never_recorded() == expected
    ws = Workspace(root)
    ws.data()
    index = ws._reader.index
    # the four cached blocks hold rows 0-29 and the selections up to line 62; those of lines 64 and 66 are in memory
    assert (len(index.selection_chunks), index.lookup.stored, len(index.selections.tail())) == (4, 30, 2)
    assert ws.selected_never_recorded() == expected


def test_only_the_blocks_with_such_a_selection_have_their_selections_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _workspace(tmp_path)
    ws = Workspace(root)
    ws.data()
    read: list[tuple[str, str]] = []
    bytes_of = Section.bytes

    def reading(self: Section) -> bytes | memoryview:
        read.append((self.source.name, self.name))
        return bytes_of(self)

    monkeypatch.setattr(Section, "bytes", reading)
    assert ws.selected_never_recorded() == [("lost-a", 7), ("lost-b", 44)]
    blobs = {block for block, name in read if name == "selections.blob"}
    # lost-a goes with the block of the sessions before it (rows 0-7), lost-b with rows 16-23: two of four blocks
    assert len(blobs) == 2
    assert len({block for block, name in read if name == "sel_hashes"}) == 4


def test_the_sessions_recorded_last_without_a_selection_are_found_in_cached_blocks_and_in_memory(
    tmp_path: Path,
) -> None:
    """`lint`'s `recorded-without-selection`: r30 is selected (cached in a block once the log is read again), then
    x31..x33 are recorded with none (x31 cached, the rest appended after the cache: in memory)."""
    root = _workspace(tmp_path)

    def bare(sid: str) -> str:  # recorded with no lessons, as a hook whose select failed records
        return _line({"type": "session", "session_id": sid, "base_reward": 0.5, "lessons": []})

    with (root / LOG_REL).open("a") as log:
        log.write(_selection("r30") + _session("r30") + bare("x31"))
    Workspace(root).data()  # the cache rewritten: r30's selection and x31 in its blocks
    with (root / LOG_REL).open("a") as log:
        log.write(bare("x32") + bare("x33"))
    expected = (["x31", "x32", "x33"], "r30")
    assert Workspace(root, use_cache=False).recorded_without_selection() == expected
    ws = Workspace(root)
    ws.data()
    assert ws._reader.index.lookup.stored == 32 and len(ws._reader.index.selections.tail()) == 0  # all cached
    assert ws.recorded_without_selection() == expected
    assert ws.recorded_without_selection(back=3) == ([], None)  # none of the last 3 selected: not told
