"""heap_kept: during a big read glibc keeps what it frees (no fresh mapping per buffer), and after the
outermost block its thresholds are where its own rule puts them after a big read (mmap 32 MB, trim
twice that), with what is free returned, even after an error."""

from __future__ import annotations

from typing import Any

import pytest

from lesson_credit.core import reader


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
