"""The session ids a dashboard snapshot lists, kept from one snapshot to the next: a change reads its
own sessions' ids, not a million again; and each id's row found without scanning them (`IdRows`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from threading import Lock
from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

TAIL_SHARE = 16  # ids added since the sorted table are looked up in a dict until they are 1 in this many


class IdRows:
    """The first row of each id of a list that only grows at its end, found by a binary search: the ids' str hashes
    (Python keeps a str's hash on it, so hashing them again is a pass over pointers) sorted once, the ids added
    since in a dict until there are a sixteenth as many; then sorted all again. A million ids: 16 MB, not a dict's
    ~70 MB, and a `list.index` scan of tens of ms per lookup becomes microseconds."""

    def __init__(self, items: list[str]) -> None:
        self._items = items
        self._hashes: npt.NDArray[np.int64] | None = None  # sorted (None: nothing sorted yet, numpy not imported)
        self._rows: npt.NDArray[np.int64] | None = None  # the row of each sorted hash
        self._tail: dict[str, int] = {}  # rows from the sorted ones' end on: each id's first
        self._covered = 0  # rows the sorted table and the tail hold
        self._lock = Lock()  # (a snapshot's ids may be looked up from a worker as well as the app's thread)

    def _catch_up(self) -> None:
        n = len(self._items)
        if n == self._covered:
            return
        sorted_ = 0 if self._hashes is None else len(self._hashes)
        if n - sorted_ > max(1024, sorted_ // TAIL_SHARE):
            import numpy as np

            hashes = np.fromiter(map(hash, self._items), dtype=np.int64, count=n)
            order = np.argsort(hashes, kind="stable")  # equal hashes: rows ascending, the first one first
            self._hashes, self._rows, self._tail = hashes[order], order, {}
        else:
            for row in range(self._covered, n):
                self._tail.setdefault(self._items[row], row)
        self._covered = n

    def row_of(self, value: str) -> int | None:
        """The first row holding `value`, None if none does."""
        with self._lock:
            self._catch_up()
            hashes, rows, tail = self._hashes, self._rows, self._tail  # (a rebuild replaces all three)
        if hashes is not None and rows is not None:
            import numpy as np

            digest = hash(value)
            at = int(np.searchsorted(hashes, digest))
            while at < len(hashes) and hashes[at] == digest:
                row = int(rows[at])
                if self._items[row] == value:
                    return row
                at += 1
        return tail.get(value)


class FirstItems(Sequence[str]):
    """The first `n` items of a list that only ever grows at its end: a view that never changes; `index` and `in`
    look an id up in the list's `IdRows` instead of scanning."""

    def __init__(self, items: list[str], n: int, rows: IdRows | None = None) -> None:
        self._items = items
        self._n = n
        self._rows = IdRows(items) if rows is None else rows

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
        stop = self._n if stop is None else min(stop, self._n)
        if start == 0 and isinstance(value, str):
            row = self._rows.row_of(value)
            if row is None or row >= stop:
                raise ValueError(f"{value!r} is not in the list")
            return row
        return self._items.index(value, start, stop)  # type: ignore[arg-type]

    def __contains__(self, value: object) -> bool:
        try:
            self.index(value)
        except ValueError:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        return islice(self._items, self._n)


class GrowingIds:
    """The ids of the log's sessions as of the last snapshot: extended by the new ones, read all again
    only after the log was read anew (its rows may then be other sessions)."""

    def __init__(self) -> None:
        self._ids: list[str] = []
        self._rows = IdRows(self._ids)
        self._generation = -1

    def first(self, n: int, generation: int, between: Callable[[int, int], Iterable[str]]) -> Sequence[str]:
        """The ids of the first `n` sessions: those of the last call and the new ones, read with
        `between(start, stop)`; `generation` changes when the log was read anew (Workspace.read_generation)."""
        if self._generation != generation or len(self._ids) > n:
            self._ids, self._generation = [], generation
            self._rows = IdRows(self._ids)
        if len(self._ids) < n:
            self._ids.extend(between(len(self._ids), n))
        return FirstItems(self._ids, n, self._rows)
