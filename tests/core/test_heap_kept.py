"""heap_kept: during a big read glibc keeps what it frees (no fresh mapping per buffer), and after the
outermost block its thresholds are where its own rule puts them after a big read (mmap 32 MB, trim
twice that), with what is free returned, even after an error. A read that starts from the parsed-log
cache puts them there first (settle_heap), once per process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core import reader
from lesson_credit.core.workspace import Workspace


class FakeLibc:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def mallopt(self, parameter: int, value: int) -> int:
        self.calls.append(("mallopt", parameter, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.calls.append(("malloc_trim", pad))
        return 1


def test_kept_inside_the_outermost_block_and_defaults_back_after(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = FakeLibc()
    monkeypatch.setattr(reader, "_libc", lambda: libc)
    # glibc's parameters (malloc.h): M_TRIM_THRESHOLD is -1, M_MMAP_THRESHOLD -3
    with reader.heap_kept():
        assert libc.calls == [("mallopt", -1, 1 << 30), ("mallopt", -3, 256 << 20)]
        with reader.heap_kept():  # a nested block (another read at once) changes nothing
            pass
        assert len(libc.calls) == 2
    assert libc.calls[2:] == [("mallopt", -1, 64 * 2**20), ("mallopt", -3, 32 * 2**20), ("malloc_trim", 0)]
    with pytest.raises(RuntimeError), reader.heap_kept():
        raise RuntimeError("an error inside the block")
    assert libc.calls[-3:] == [("mallopt", -1, 64 * 2**20), ("mallopt", -3, 32 * 2**20), ("malloc_trim", 0)]
    assert len(libc.calls) == 10


def test_nothing_without_glibc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "_libc", lambda: None)
    with reader.heap_kept(), reader.heap_kept():
        pass
    with reader.heap_kept():  # (the depth came back to 0: a later block is an outermost one again)
        libc = FakeLibc()
        monkeypatch.setattr(reader, "_libc", lambda: libc)
        with reader.heap_kept():
            assert libc.calls == []  # nested, whoever the library
    assert libc.calls == []


def _workspace_with_log(root: Path, sessions: int) -> None:
    log = root / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True)
    lines = [
        json.dumps(
            {
                "type": "session",
                "session_id": f"s{i}",
                "base_reward": 0.5,
                "lessons": [{"path": "a.md", "salience": 0.5}],
            }
        )
        for i in range(sessions)
    ]
    log.write_text("".join(line + "\n" for line in lines))


def test_a_read_from_the_parsed_log_cache_settles_the_heap_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _workspace_with_log(tmp_path, 30)  # about 3 KB of log
    libc = FakeLibc()
    monkeypatch.setattr(reader, "_libc", lambda: libc)
    monkeypatch.setattr(reader, "_heap_settled", True, raising=False)
    Workspace(tmp_path, cache_threshold=100).refresh()  # a big read: the parsed-log cache is written
    monkeypatch.setattr(reader, "_heap_settled", False)  # a new process, from here on
    libc.calls.clear()
    Workspace(tmp_path, cache_threshold=1 << 20).refresh()  # a log under the threshold: no cache, nothing set
    assert libc.calls == []
    Workspace(tmp_path, cache_threshold=100).refresh()  # from the cache: nothing left to read
    # where glibc's own rule puts the thresholds after a big read (mmap 32 MB, trim 64 MB), no trim
    assert libc.calls == [("mallopt", -1, 64 * 2**20), ("mallopt", -3, 32 * 2**20)]
    Workspace(tmp_path, cache_threshold=100).refresh()  # a second workspace in the process: set already
    assert len(libc.calls) == 2


def test_settling_the_heap_inside_a_big_read_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = FakeLibc()
    monkeypatch.setattr(reader, "_libc", lambda: libc)
    monkeypatch.setattr(reader, "_heap_settled", False, raising=False)
    with reader.heap_kept():
        reader.settle_heap()
        assert libc.calls == [("mallopt", -1, 1 << 30), ("mallopt", -3, 256 << 20)]
    reader.settle_heap()  # after it: the thresholds are glibc's own already, and settled for good
    reader.settle_heap()
    assert libc.calls[2:] == [("mallopt", -1, 64 * 2**20), ("mallopt", -3, 32 * 2**20), ("malloc_trim", 0)]
