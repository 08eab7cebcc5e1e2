"""Storage for the log index: columns that grow at the end and may start with chunks read lazily.

Every column of the log index is append-only. A column loaded from the parsed-log cache starts
with chunks (one per block of sessions) that stay on disk until something reads them: a `status`
of a million sessions reads the per-block sums and none of the session ids, and a `grade` reads
the one block it changes. What is read later is appended after the chunks, in memory: numbers
(`Column`), any msgpack-able values (`Objects`), or a value for a few rows (`RowMap`). A chunk is
a `Section` of a cache file (core/log/sections.py), read and checked when first used.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, Generic, Protocol, TypeVar, cast, overload

import msgspec
import numpy as np
import numpy.typing as npt

from lesson_credit.core.log.sections import CacheDamaged, Section

MIN_CAPACITY = 1024
T = TypeVar("T")
V = TypeVar("V")


# ---------------------------------------------------------------- numbers


class Column:
    """An append-only vector of one numpy dtype, possibly starting with chunks not read yet."""

    __slots__ = ("_data", "_n", "dtype", "_chunks", "_ends")

    def __init__(self, dtype: npt.DTypeLike, values: Iterable[Any] = ()) -> None:
        self.dtype = np.dtype(dtype)
        self._data: npt.NDArray[Any] = np.array(list(values), dtype=self.dtype)
        self._n = len(self._data)
        self._chunks: list[list[Any]] = []  # [length, Section or the array read from it]
        self._ends: list[int] = []  # cumulative lengths of the chunks

    def add_chunk(self, length: int, section: Section) -> None:
        """Put a stored chunk after the others (only while nothing has been appended after them)."""
        if self._n:
            raise ValueError("chunks come before appended items")
        if length:
            self._chunks.append([length, section])
            self._ends.append(self._prefix + length)

    @property
    def _prefix(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __len__(self) -> int:
        return self._prefix + self._n

    def _reserve(self, extra: int) -> None:
        need = self._n + extra
        if need > len(self._data) or not self._data.flags.writeable:
            grown = np.empty(_capacity(need), dtype=self.dtype)
            grown[: self._n] = self._data[: self._n]
            self._data = grown

    def append(self, value: Any) -> None:
        self._reserve(1)
        self._data[self._n] = value
        self._n += 1

    def extend(self, values: Any) -> None:
        array = np.asarray(values, dtype=self.dtype)
        count = len(array)
        self._reserve(count)
        self._data[self._n : self._n + count] = array
        self._n += count

    def _chunk(self, i: int) -> npt.NDArray[Any]:
        entry = self._chunks[i]
        if isinstance(entry[1], Section):
            array = entry[1].array(self.dtype)
            if len(array) != entry[0]:
                raise CacheDamaged(f"{entry[1].source.name}: a column chunk has the wrong length")
            entry[1] = array
        result: npt.NDArray[Any] = entry[1]
        return result

    def _gather(self) -> None:
        """Read every chunk and keep the whole column in one growable buffer."""
        if not self._chunks:
            return
        parts = [self._chunk(i) for i in range(len(self._chunks))]
        total = self._prefix + self._n
        data = np.empty(_capacity(total), dtype=self.dtype)  # room to append: not copied again at once
        at = 0
        for part in [*parts, self._data[: self._n]]:
            data[at : at + len(part)] = part
            at += len(part)
        self._data, self._n = data, total
        self._chunks, self._ends = [], []

    def view(self) -> npt.NDArray[Any]:
        """The items so far, read-only; later appends never change it."""
        self._gather()
        out = self._data[: self._n].view()
        out.flags.writeable = False
        return out

    def span(self, start: int, stop: int) -> npt.NDArray[Any]:
        """Items [start, stop) (read-only), reading only the chunks they lie in."""
        prefix = self._prefix
        stop = max(start, stop)
        if not self._chunks or start >= prefix:
            out = self._data[start - prefix : stop - prefix].view()
            out.flags.writeable = False
            return out
        pieces = []
        i = bisect.bisect_right(self._ends, start)
        position = start
        while position < stop and i < len(self._chunks):
            lo = self._ends[i] - self._chunks[i][0]
            piece = self._chunk(i)[position - lo : min(stop, self._ends[i]) - lo]
            pieces.append(piece)
            position += len(piece)
            i += 1
        if position < stop:
            pieces.append(self._data[position - prefix : stop - prefix])
        if len(pieces) == 1:
            return pieces[0]
        out = np.concatenate(pieces) if pieces else np.zeros(0, dtype=self.dtype)
        out.flags.writeable = False
        return out

    @overload
    def __getitem__(self, key: int) -> Any: ...
    @overload
    def __getitem__(self, key: slice) -> npt.NDArray[Any]: ...
    def __getitem__(self, key: int | slice) -> Any:
        if isinstance(key, slice):
            if key.step in (None, 1):
                start, stop, _ = key.indices(len(self))
                return self.span(start, stop)
            return self.view()[key]
        n = len(self)
        index = key + n if key < 0 else key
        if not 0 <= index < n:
            raise IndexError(key)
        return self.span(index, index + 1)[0]

    def tolist(self) -> list[Any]:
        return self.view().tolist()  # type: ignore[no-any-return]

    def tobytes(self) -> bytes:
        return self.view().tobytes()


def _capacity(need: int) -> int:
    """Room for `need` items and half as many more: appends copy the column once in a while (amortised
    O(1) each: a column read from scratch is copied 3 times its final size in all, 5 times when it grew
    by a quarter), and a million-session column does not take twice its size the moment it first grows
    (nor in memory: pages past the end are not touched until written)."""
    return max(need + need // 2, MIN_CAPACITY)


# ---------------------------------------------------------------- any values


def encode_items(items: Sequence[Any]) -> tuple[bytes, npt.NDArray[np.int64]]:
    """`items` as one msgpack array, and where each item starts in it (one more offset: its end).
    The whole array decodes with one call; one item from its own stretch."""
    encode = msgspec.msgpack.encode
    head = encode([None] * len(items))[: -len(items) or None]  # the array header alone
    blob = encode(items)
    sizes = _text_sizes(items)
    if sizes is None or len(head) + int(sizes.sum()) != len(blob):
        sizes = np.fromiter((len(encode(item)) for item in items), dtype=np.int64, count=len(items))
    offsets = np.zeros(len(items) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    offsets += len(head)
    return blob, offsets


def _text_sizes(items: Sequence[Any]) -> npt.NDArray[np.int64] | None:
    """The msgpack size of each item, when all are str or None, worked out from their lengths (in
    characters: right for ASCII; the caller checks the total against the encoding, which a single
    longer UTF-8 string would exceed, and then encodes item by item); or all float or None (a float
    is written as a float64: 9 bytes)."""
    kinds = set(map(type, items))
    if kinds <= {float, type(None)}:
        return np.where(np.array([item is None for item in items], dtype=np.bool_), 1, 9).astype(np.int64)
    if not kinds <= {str, type(None)}:
        return None
    if type(None) in kinds:
        chars = np.fromiter((-1 if item is None else len(item) for item in items), dtype=np.int64, count=len(items))
    else:  # (ids, timestamps: no None, lengths at C speed)
        chars = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    header = np.select([chars < 0, chars < 32, chars < 256, chars < 65536], [1, 1, 2, 3], 5)
    sizes: npt.NDArray[np.int64] = np.where(chars < 0, 1, header + chars)
    return sizes


class Chunk(Protocol):
    def __len__(self) -> int: ...

    def item(self, i: int) -> Any: ...

    def items(self) -> Sequence[Any]: ...


class StoredChunk:
    """Items stored by `encode_items`: a blob section and an offsets section."""

    __slots__ = ("n", "blob", "offsets", "convert", "bounds", "share", "counts", "_items", "_offsets")

    def __init__(self, n: int, blob: Section, offsets: Section, convert: Callable[[Any], Any] | None) -> None:
        self.n = n
        self.blob = blob
        self.offsets = offsets
        self.convert = convert
        self.bounds: tuple[str, str] | None = None  # the smallest and the largest item, when strings
        self.share: Shared | None = None  # the column's, when it shares equal values (`Shared`)
        self.counts: dict[Any, int] | None = None  # how often each item occurs, when stored (`Objects.counted`)
        self._items: Sequence[Any] | None = None
        self._offsets: npt.NDArray[np.int64] | None = None

    def __len__(self) -> int:
        return self.n

    def item(self, i: int) -> Any:
        if self._items is not None:
            return self._items[i]
        if self._offsets is None:
            offsets = self.offsets.array(np.int64)
            if len(offsets) != self.n + 1:
                raise CacheDamaged(f"{self.blob.source.name}: a chunk's offsets do not fit its items")
            self._offsets = offsets
        a, b = int(self._offsets[i]), int(self._offsets[i + 1])
        try:
            value = msgspec.msgpack.decode(self.blob.bytes()[a:b])
        except msgspec.DecodeError:
            raise CacheDamaged(f"{self.blob.source.name}: an item cannot be decoded") from None
        value = value if self.convert is None else self.convert(value)
        return value if self.share is None else self.share.one(value)

    def items(self) -> Sequence[Any]:
        if self._items is None:
            try:
                values = msgspec.msgpack.decode(self.blob.bytes())
            except msgspec.DecodeError:
                raise CacheDamaged(f"{self.blob.source.name}: a chunk cannot be decoded") from None
            if not isinstance(values, list) or len(values) != self.n:
                raise CacheDamaged(f"{self.blob.source.name}: a chunk holds the wrong number of items")
            values = values if self.convert is None else list(map(self.convert, values))
            self._items = tuple(values if self.share is None else self.share(values))
        return self._items

    def starting_with(self, prefix: bytes) -> npt.NDArray[np.int64]:
        """Positions of the string items whose UTF-8 starts with `prefix`, compared in the stored
        bytes for all items at once (no item decoded)."""
        offsets = self.offsets.array(np.int64)
        blob = np.frombuffer(self.blob.bytes(), dtype=np.uint8)
        if len(offsets) != self.n + 1 or (self.n and (offsets[:-1].min() < 0 or offsets[-1] > len(blob))):
            raise CacheDamaged(f"{self.blob.source.name}: a chunk's offsets do not fit its items")
        at = offsets[:-1]
        if not len(at):
            return np.zeros(0, dtype=np.int64)
        head = blob[np.minimum(at, max(len(blob) - 1, 0))].astype(np.int64)
        start = np.full(len(at), -1, dtype=np.int64)
        length = np.zeros(len(at), dtype=np.int64)
        fixed = (head >= 0xA0) & (head <= 0xBF)  # msgpack fixstr, str8, str16, str32
        start[fixed], length[fixed] = at[fixed] + 1, head[fixed] - 0xA0
        for code, size in ((0xD9, 1), (0xDA, 2), (0xDB, 4)):
            rows = np.flatnonzero((head == code) & (at + 1 + size <= offsets[1:]))
            value = np.zeros(len(rows), dtype=np.int64)
            for k in range(size):
                value = value * 256 + blob[at[rows] + 1 + k]
            start[rows], length[rows] = at[rows] + 1 + size, value
        ok = (start >= 0) & (length >= len(prefix)) & (start + length <= offsets[1:])
        for k, byte in enumerate(prefix):
            rows = np.flatnonzero(ok)
            ok[rows] = blob[start[rows] + k] == byte
        return np.flatnonzero(ok).astype(np.int64)


SHARED_MAX = 4096  # distinct values a column shares; past that, new ones are kept as they come


_SHARED_KINDS = frozenset((str, float, type(None)))
_TEXT_KINDS = frozenset((str, type(None)))


class Shared:
    """One object for each value a column repeats (a category, a grader, a strategy, a floor).

    A decoder makes a new string for every record, so a million sessions in one category held a
    million equal strings (63 bytes each); shared, a row costs its pointer. Strings and nonzero
    finite floats only: 0.0 equals -0.0 and NaN equals nothing, and sharing must never change a
    value. At most `SHARED_MAX` distinct values are kept (ids or timestamps would gain nothing)."""

    __slots__ = ("_seen",)

    def __init__(self) -> None:
        self._seen: dict[Any, Any] = {}

    def __call__(self, values: Sequence[T]) -> list[T]:
        seen = self._seen
        try:
            distinct = set(values)
        except TypeError:  # an unhashable value (not one these columns hold): nothing shared
            return list(values)
        for value in distinct.difference(seen):
            if len(seen) < SHARED_MAX and (
                type(value) is str or (type(value) is float and value != 0.0 and value == value)
            ):
                seen[value] = value
        get = seen.get
        # 1 and True equal 1.0 (one in a set): with a number among the distinct values, every value's type is
        # checked (and kept); with only strings and None, no value can stand for one of another type
        if not _TEXT_KINDS.issuperset(map(type, distinct)) and not _SHARED_KINDS.issuperset(map(type, values)):
            return [hit if type(hit := get(value, value)) is type(value) else value for value in values]
        return list(map(get, values, values))

    def one(self, value: T) -> T:
        return self([value])[0]


class HeldChunk:
    """Items in memory, settled into a tuple (the collector does not walk a tuple of strings)."""

    __slots__ = ("values",)

    def __init__(self, values: Sequence[Any]) -> None:
        self.values = tuple(values)

    def __len__(self) -> int:
        return len(self.values)

    def item(self, i: int) -> Any:
        return self.values[i]

    def items(self) -> Sequence[Any]:
        return self.values


class Objects(Sequence[T]):
    """An append-only sequence: chunks (stored or settled) followed by a list of what was added since."""

    __slots__ = ("_chunks", "_ends", "_tail", "_share")

    def __init__(self, values: Iterable[T] = (), *, shared: bool = False) -> None:
        """`shared`: a column of few distinct values, kept as one object each (`Shared`)."""
        self._chunks: list[Chunk] = []
        self._ends: list[int] = []
        self._share = Shared() if shared else None
        self._tail: list[T] = list(values) if self._share is None else self._share(list(values))

    def add_chunk(self, chunk: Chunk) -> None:
        """Put a chunk after the others (only while nothing has been appended after them)."""
        if self._tail:
            raise ValueError("chunks come before appended items")
        if isinstance(chunk, StoredChunk):
            chunk.share = self._share
        if len(chunk):
            self._chunks.append(chunk)
            self._ends.append(self._prefix + len(chunk))

    @property
    def _prefix(self) -> int:
        return self._ends[-1] if self._ends else 0

    def __len__(self) -> int:
        return self._prefix + len(self._tail)

    def append(self, value: T) -> None:
        self._tail.append(value if self._share is None else self._share.one(value))

    def extend(self, values: Iterable[T]) -> None:
        self._tail.extend(values if self._share is None else self._share(list(values)))

    def settle(self) -> None:
        """What was appended becomes a chunk of its own (a tuple)."""
        if self._tail:
            chunk = HeldChunk(self._tail)
            self._tail = []
            self._chunks.append(chunk)
            self._ends.append(self._prefix + len(chunk))

    def _locate(self, index: int) -> tuple[int, int]:
        i = bisect.bisect_right(self._ends, index)
        return i, index - (self._ends[i] - len(self._chunks[i]))

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...
    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return tuple(self)[index]
            return self.between(start, stop)
        n = len(self)
        at = index + n if index < 0 else index
        if not 0 <= at < n:
            raise IndexError(index)
        prefix = self._prefix
        if at >= prefix:
            return self._tail[at - prefix]
        i, offset = self._locate(at)
        value: T = self._chunks[i].item(offset)
        return value

    def counted(self, start: int, stop: int) -> Counter[T]:
        """How often each item of [start, stop) occurs; a stored chunk whose counts were stored with it
        (`StoredChunk.counts`) and that lies whole in the range is not decoded."""
        out: Counter[T] = Counter()
        while start < min(stop, self._prefix):
            i, offset = self._locate(start)
            end, known = min(stop, self._ends[i]), getattr(self._chunks[i], "counts", None)
            whole = offset == 0 and end == self._ends[i] and known is not None
            out.update(known if whole else self.between(start, end))
            start = end
        out.update(self.between(start, stop))  # what was appended since the chunks
        return out

    def between(self, start: int, stop: int) -> tuple[T, ...]:
        """Items [start, stop), decoding whole chunks only where most of a chunk is wanted."""
        if stop <= start:
            return ()
        prefix = self._prefix
        out: list[T] = []
        if start < prefix:
            i = bisect.bisect_right(self._ends, start)
            position = start
            while position < min(stop, prefix):
                chunk = self._chunks[i]
                lo = self._ends[i] - len(chunk)
                hi = min(stop, self._ends[i])
                if isinstance(chunk, HeldChunk) or 2 * (hi - position) >= len(chunk):
                    out.extend(chunk.items()[position - lo : hi - lo])
                else:
                    out.extend(chunk.item(j) for j in range(position - lo, hi - lo))
                position = hi
                i += 1
        if stop > prefix:
            out.extend(self._tail[max(start, prefix) - prefix : stop - prefix])
        return tuple(out)

    def __iter__(self) -> Iterator[T]:
        return chain(chain.from_iterable(chunk.items() for chunk in self._chunks), self._tail)

    def __reversed__(self) -> Iterator[T]:
        yield from reversed(self._tail)
        for chunk in reversed(self._chunks):
            yield from reversed(chunk.items())

    def find_held(self, value: T, start: int = 0) -> int | None:
        """The first position >= `start` of `value` among the items held in memory (settled or
        appended, not those of stored chunks): a C-speed scan of tuples and the list."""
        for i, chunk in enumerate(self._chunks):
            lo = self._ends[i] - len(chunk)
            if self._ends[i] <= start or not isinstance(chunk, HeldChunk):
                continue
            try:
                return lo + chunk.values.index(value, max(0, start - lo))
            except ValueError:
                continue
        prefix = self._prefix
        try:
            return prefix + self._tail.index(value, max(0, start - prefix))
        except ValueError:
            return None

    def reversed_chunks(self) -> Iterator[tuple[int, Chunk | None]]:
        """(first position, chunk) from the last chunk back; the appended items first, as chunk None."""
        yield self._prefix, None
        for i in range(len(self._chunks) - 1, -1, -1):
            yield self._ends[i] - len(self._chunks[i]), self._chunks[i]

    def tail(self) -> list[T]:
        return self._tail

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Objects | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


def ids_starting(ids: Objects[str], text: str, n: int) -> list[int]:
    """Rows among the first `n` whose id starts with `text`: stored chunks compared in their bytes
    (skipped when their smallest and largest ids leave no room for it: ids that grow with time
    make a prefix read one block or two), the rest one by one."""
    prefix = text.encode("utf-8", "surrogatepass")
    rows: list[int] = []
    for start, chunk in reversed(list(ids.reversed_chunks())):
        if start >= n:
            continue
        values = ids.tail() if chunk is None else None
        if isinstance(chunk, StoredChunk) and chunk.bounds is not None:
            low, high = chunk.bounds
            if not low[: len(text)] <= text <= high[: len(text)]:
                continue  # every id here sorts before or after anything starting with `text`
        if isinstance(chunk, StoredChunk):
            rows.extend(int(start + i) for i in chunk.starting_with(prefix).tolist() if start + i < n)
            continue
        if chunk is not None:
            values = list(chunk.items())
        rows.extend(start + i for i, sid in enumerate(values or ()) if start + i < n and sid.startswith(text))
    return rows


# ---------------------------------------------------------------- sparse rows


class RowMap(Generic[V]):
    """row -> value for some rows: chunks for ranges of rows (each decoded on its first use), then
    a dict of the rows added since."""

    __slots__ = ("_chunks", "_tail", "_count")

    def __init__(self, values: dict[int, V] | None = None) -> None:
        self._chunks: list[list[Any]] = []  # [first row, end row, StoredChunk of [row, value] pairs or dict]
        self._tail: dict[int, V] = dict(values or {})
        self._count = 0  # pairs in the chunks

    def add_chunk(self, lo: int, hi: int, chunk: StoredChunk) -> None:
        if len(chunk):
            self._chunks.append([lo, hi, chunk])
            self._count += len(chunk)

    def _chunk(self, entry: list[Any]) -> dict[int, V]:
        if isinstance(entry[2], StoredChunk):
            pairs = entry[2].items()
            try:
                entry[2] = {int(row): value for row, value in pairs}
            except (TypeError, ValueError):
                raise CacheDamaged(f"{entry[2].blob.source.name}: a row map chunk is malformed") from None
        result: dict[int, V] = entry[2]
        return result

    def get(self, row: int, default: V | None = None) -> V | None:
        if row in self._tail:
            return self._tail[row]
        for entry in self._chunks:
            if entry[0] <= row < entry[1]:
                return self._chunk(entry).get(row, default)
        return default

    def __getitem__(self, row: int) -> V:
        value = self.get(row, _MISSING)
        if value is _MISSING:
            raise KeyError(row)
        return cast(V, value)

    def __contains__(self, row: object) -> bool:
        return isinstance(row, int) and self.get(row, _MISSING) is not _MISSING

    def __setitem__(self, row: int, value: V) -> None:
        self._tail[row] = value

    def __len__(self) -> int:
        return self._count + len(self._tail)

    def __bool__(self) -> bool:
        return len(self) > 0

    def items(self) -> Iterator[tuple[int, V]]:
        for entry in self._chunks:
            yield from self._chunk(entry).items()
        yield from self._tail.items()

    def values(self) -> Iterator[V]:
        return (value for _, value in self.items())

    def __iter__(self) -> Iterator[int]:
        return (row for row, _ in self.items())

    def keys(self) -> Iterator[int]:
        return iter(self)

    def between(self, lo: int, hi: int) -> list[tuple[int, V]]:
        """The (row, value) pairs for rows in [lo, hi), by row."""
        out = [pair for entry in self._chunks if entry[0] < hi and entry[1] > lo for pair in self._chunk(entry).items()]
        out += list(self._tail.items())
        return sorted((row, value) for row, value in out if lo <= row < hi)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RowMap | dict):
            return dict(self.items()) == dict(other.items())
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]


_MISSING: Any = object()
