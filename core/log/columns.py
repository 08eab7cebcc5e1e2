"""Storage for the log index: append-only numpy columns, and lists decoded on first use.

A `Column` grows like a list but hands out numpy views of what it holds so far. Items are
only ever written past the end of every view handed out, so a view stays valid (and never
changes) while the column keeps growing; that makes a snapshot of a big log O(1).

A `Lazy` attribute holds a list (or dict) that a cache may supply as msgpack bytes: it is
decoded the first time someone reads it. `status` on a million-session log never reads the
session ids or timestamps, so it never pays for decoding them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar, overload

import msgspec
import numpy as np
import numpy.typing as npt

MIN_CAPACITY = 1024


class Column:
    """An append-only vector of one numpy dtype."""

    __slots__ = ("_data", "_n", "dtype")

    def __init__(self, dtype: npt.DTypeLike, values: Iterable[Any] = ()) -> None:
        self.dtype = np.dtype(dtype)
        self._data: npt.NDArray[Any] = np.array(list(values), dtype=self.dtype)
        self._n = len(self._data)

    @classmethod
    def from_bytes(cls, dtype: npt.DTypeLike, data: bytes | memoryview) -> Column:
        """A column over `data` without copying it (copied on the first append)."""
        column = cls(dtype)
        column._data = np.frombuffer(data, dtype=column.dtype)
        column._n = len(column._data)
        return column

    def __len__(self) -> int:
        return self._n

    def _reserve(self, extra: int) -> None:
        need = self._n + extra
        if need > len(self._data) or not self._data.flags.writeable:
            grown = np.empty(max(need, 2 * len(self._data), MIN_CAPACITY), dtype=self.dtype)
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

    def view(self) -> npt.NDArray[Any]:
        """The items so far, read-only; later appends never change it."""
        out = self._data[: self._n].view()
        out.flags.writeable = False
        return out

    @overload
    def __getitem__(self, key: int) -> Any: ...
    @overload
    def __getitem__(self, key: slice) -> npt.NDArray[Any]: ...
    def __getitem__(self, key: int | slice) -> Any:
        return self.view()[key]

    def tolist(self) -> list[Any]:
        return self.view().tolist()  # type: ignore[no-any-return]

    def tobytes(self) -> bytes:
        return self.view().tobytes()


T = TypeVar("T")


class Lazy(Generic[T]):
    """A data attribute that may be given as msgpack bytes, decoded (and converted) on first read.

    `convert` turns the decoded msgpack into the value; `plain` turns the value back into what
    msgpack stores (both default to as is), so `stored()` and reading give each other's input."""

    def __init__(self, convert: Callable[[Any], T] | None = None, plain: Callable[[T], Any] | None = None) -> None:
        self.convert = convert
        self.plain = plain

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_lazy_" + name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> Lazy[T]: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> T: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Lazy[T] | T:
        if obj is None:
            return self
        value = obj.__dict__[self.slot]
        if isinstance(value, Encoded):
            value = obj.__dict__[self.slot] = value.decode(self.convert)
        return value  # type: ignore[no-any-return]

    def __set__(self, obj: object, value: T | Encoded) -> None:
        obj.__dict__[self.slot] = value

    def raw(self, obj: object) -> Any:
        """What the attribute holds now: the value, or still its Encoded bytes."""
        return obj.__dict__[self.slot]

    def stored(self, obj: object) -> bytes:
        """The attribute as msgpack bytes; bytes never decoded are passed through as they came."""
        value = obj.__dict__[self.slot]
        if isinstance(value, Encoded):
            return value.data
        data: bytes = msgspec.msgpack.encode(self.plain(value) if self.plain is not None else value)
        return data


class Encoded:
    """Msgpack bytes standing in for a value not decoded yet. Decoded at most once: a snapshot
    holding the same bytes as the index gets the very value the index got, not a second copy."""

    __slots__ = ("data", "_value")

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._value: Any = _NOT_DECODED

    def decode(self, convert: Callable[[Any], Any] | None = None) -> Any:
        """The value (decoded, then converted by `convert`, on the first call)."""
        if self._value is _NOT_DECODED:
            decoded = msgspec.msgpack.decode(self.data)
            self._value = convert(decoded) if convert is not None else decoded
        return self._value


_NOT_DECODED = object()
