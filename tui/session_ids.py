"""The session ids a dashboard snapshot lists, kept from one snapshot to the next: a change reads its
own sessions' ids, not a million again."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from typing import overload


class FirstItems(Sequence[str]):
    """The first `n` items of a list that only ever grows at its end: a view that never changes."""

    def __init__(self, items: list[str], n: int) -> None:
        self._items = items
        self._n = n

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return self._items[: self._n][index]
        at = index + self._n if index < 0 else index
        if not 0 <= at < self._n:
            raise IndexError(index)
        return self._items[at]

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        return self._items.index(value, start, self._n if stop is None else min(stop, self._n))  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[str]:
        return islice(self._items, self._n)


class GrowingIds:
    """The ids of the log's sessions as of the last snapshot: extended by the new ones, read all again
    only after the log was read anew (its rows may then be other sessions)."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._generation = -1

    def first(self, n: int, generation: int, between: Callable[[int, int], Iterable[str]]) -> Sequence[str]:
        """The ids of the first `n` sessions: those of the last call and the new ones, read with
        `between(start, stop)`; `generation` changes when the log was read anew (Workspace.read_generation)."""
        if self._generation != generation or len(self._ids) > n:
            self._ids, self._generation = [], generation
        if len(self._ids) < n:
            self._ids.extend(between(len(self._ids), n))
        return FirstItems(self._ids, n)
