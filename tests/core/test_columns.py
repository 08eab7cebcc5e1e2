"""Append-only columns and lazily decoded lists: what the log index is stored in."""

from __future__ import annotations

import msgspec
import numpy as np
import pytest

from lesson_credit.core.log.columns import Column, Encoded, Lazy


def test_views_never_change_while_the_column_grows() -> None:
    column = Column(np.int64, [0])
    first = column.view()
    views = []
    for i in range(1, 5000):  # several reallocations
        column.append(i)
        if i % 1000 == 0:
            views.append((i, column.view()))
    column.extend(range(5000, 6000))
    assert first.tolist() == [0]
    for i, view in views:
        assert view.tolist() == list(range(i + 1))
    assert column.tolist() == list(range(6000))
    assert len(column) == 6000 and column[-1] == 5999
    assert column[10:13].tolist() == [10, 11, 12]


def test_views_are_read_only() -> None:
    column = Column(np.float64, [1.0, 2.0])
    with pytest.raises(ValueError):
        column.view()[0] = 5.0


def test_from_bytes_shares_then_copies_on_append() -> None:
    data = np.arange(4, dtype=np.int32).tobytes()
    column = Column.from_bytes(np.int32, data)
    before = column.view()
    column.append(9)  # the bytes object is immutable: the first append copies
    assert before.tolist() == [0, 1, 2, 3]
    assert column.tolist() == [0, 1, 2, 3, 9]
    assert column.tobytes() == np.array([0, 1, 2, 3, 9], dtype=np.int32).tobytes()


class Holder:
    names: Lazy[list[str]] = Lazy()
    pairs: Lazy[dict[int, tuple[int, ...]]] = Lazy(
        lambda rows: {row: tuple(v) for row, v in rows}, lambda by_row: [[row, list(v)] for row, v in by_row.items()]
    )


def test_lazy_decodes_once_on_first_read() -> None:
    holder = Holder()
    holder.names = Encoded(msgspec.msgpack.encode(["a", "b"]))
    holder.pairs = Encoded(msgspec.msgpack.encode([[3, [1, 2]]]))
    assert isinstance(Holder.names.raw(holder), Encoded)  # nothing decoded yet
    assert holder.names == ["a", "b"]
    assert holder.names is holder.names  # decoded once, then the same list
    holder.names.append("c")
    assert holder.names == ["a", "b", "c"]
    assert holder.pairs == {3: (1, 2)}


def test_stored_passes_undecoded_bytes_through() -> None:
    blob = msgspec.msgpack.encode(["x"])
    holder = Holder()
    holder.names = Encoded(blob)
    assert Holder.names.stored(holder) is blob
    holder.names = ["x"]
    assert Holder.names.stored(holder) == blob


def test_stored_and_read_are_each_others_inverse() -> None:
    holder = Holder()
    holder.pairs = {3: (1, 2), 7: ()}
    blob = Holder.pairs.stored(holder)
    assert msgspec.msgpack.decode(blob) == [[3, [1, 2]], [7, []]]  # the plain form
    again = Holder()
    again.pairs = Encoded(blob)
    assert again.pairs == {3: (1, 2), 7: ()}  # read back as the value
