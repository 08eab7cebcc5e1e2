"""Append-only columns, possibly starting with chunks read lazily: what the log index is stored in."""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np
import pytest
import xxhash
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_credit.core.log.columns import Column, Objects, RowMap, StoredChunk, encode_items, ids_starting
from lesson_credit.core.log.sections import CacheDamaged, Section


class BlobSource:
    """Sections inside one byte string in memory (production reads them from cache files)."""

    def __init__(self, data: bytes | memoryview, name: str) -> None:
        self.data = memoryview(data)
        self.name = name

    def read(self, offset: int, length: int) -> memoryview:
        if offset < 0 or offset + length > len(self.data):
            raise CacheDamaged(f"{self.name}: a section lies outside the file")
        return self.data[offset : offset + length]


class CountingSource(BlobSource):
    """A BlobSource that counts its reads (which sections were read)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data, "test")
        self.reads: list[int] = []

    def read(self, offset: int, length: int) -> memoryview:
        self.reads.append(offset)
        return super().read(offset, length)


def _sections(pieces: list[bytes]) -> tuple[CountingSource, list[Section]]:
    data = b"".join(pieces)
    source = CountingSource(data)
    sections, at = [], 0
    for piece in pieces:
        sections.append(Section(source, f"s{at}", at, len(piece), xxhash.xxh3_64_intdigest(piece)))
        at += len(piece)
    return source, sections


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


def test_a_span_reads_only_the_chunks_it_covers() -> None:
    chunks = [np.arange(i * 10, i * 10 + 10, dtype=np.int64) for i in range(4)]  # 0..39 in four chunks
    source, sections = _sections([c.tobytes() for c in chunks])
    column = Column(np.int64)
    for section in sections:
        column.add_chunk(10, section)
    column.extend([40, 41])
    assert len(column) == 42 and source.reads == []
    assert column.span(12, 15).tolist() == [12, 13, 14] and source.reads == [sections[1].offset]
    assert column[25] == 25 and len(source.reads) == 2
    assert column.span(38, 42).tolist() == [38, 39, 40, 41]  # the last chunk and what was appended
    assert column.span(15, 15).tolist() == []
    assert len(source.reads) == 3  # each chunk read once, the first never
    assert column.tolist() == list(range(42))  # the whole column: the first chunk read too
    column.append(42)
    assert column.span(0, 43).tolist() == list(range(43))


def test_a_changed_section_is_never_used() -> None:
    good = np.arange(5, dtype=np.int64).tobytes()
    source = BlobSource(good[:8] + b"\x07" + good[9:], "test")  # one byte changed after the digest
    column = Column(np.int64)
    column.add_chunk(5, Section(source, "good", 0, len(good), xxhash.xxh3_64_intdigest(good)))
    with pytest.raises(CacheDamaged):
        column.span(0, 2)
    short = Column(np.int64)
    short.add_chunk(6, Section(BlobSource(good, "test"), "good", 0, len(good), xxhash.xxh3_64_intdigest(good)))
    with pytest.raises(CacheDamaged):  # the directory says 6 items, the section holds 5
        short.view()


def _stored(items: list[object], convert: Callable[[Any], Any] | None = None) -> tuple[StoredChunk, CountingSource]:
    blob, offsets = encode_items(items)
    source, (blob_section, offset_section) = _sections([blob, offsets.tobytes()])
    return StoredChunk(len(items), blob_section, offset_section, convert), source


def test_objects_read_one_item_without_decoding_its_chunk() -> None:
    first, _ = _stored(["a", None, "c"])
    second, _ = _stored([1.5, "é", [1, 2]])
    seq: Objects[object] = Objects()
    seq.add_chunk(first)
    seq.add_chunk(second)
    seq.append("tail")
    assert len(seq) == 7
    assert seq[4] == "é" and second._items is None  # one item decoded from its own bytes
    assert seq[-1] == "tail" and seq[1] is None
    assert seq.between(2, 6) == ("c", 1.5, "é", [1, 2])
    assert list(seq) == ["a", None, "c", 1.5, "é", [1, 2], "tail"]
    assert list(reversed(seq)) == ["tail", [1, 2], "é", 1.5, "c", None, "a"]
    with pytest.raises(ValueError):
        seq.add_chunk(first)  # chunks come before what was appended


def test_settled_items_are_tuples_the_collector_does_not_walk() -> None:
    seq: Objects[str | None] = Objects()
    seq.extend([f"s{i}" for i in range(1000)] + [None])
    seq.settle()
    seq.append("late")
    held = seq._chunks[0].items()
    assert isinstance(held, tuple)
    gc.collect()
    assert not gc.is_tracked(held)
    assert seq.find_held("s999") == 999 and seq.find_held("late") == 1001 and seq.find_held("nope") is None
    assert seq.find_held("s5", start=6) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.none(), st.text(max_size=4), st.text(min_size=30, max_size=300)),
        max_size=40,
    ),
    st.text(max_size=3),
)
def test_ids_starting_agrees_with_str_startswith(ids: list[str | None], prefix: str) -> None:
    """Compared in the stored msgpack bytes (fixstr, str8 and str16 headers), as Python compares."""
    stored, _ = _stored(list(ids))
    seq: Objects[str] = Objects()
    seq.add_chunk(stored)
    seq.extend(["tail-a", "x"])
    everything = [*ids, "tail-a", "x"]
    expected = [i for i, sid in enumerate(everything) if isinstance(sid, str) and sid.startswith(prefix)]
    assert ids_starting(seq, prefix, len(everything)) == expected
    assert ids_starting(seq, prefix, len(ids)) == [i for i in expected if i < len(ids)]


def test_encode_items_decodes_whole_and_item_by_item() -> None:
    items = ["a", None, 2**40, ["x", {"k": 1.5}], "ü" * 40]
    blob, offsets = encode_items(items)
    assert msgspec.msgpack.decode(blob) == items
    assert [msgspec.msgpack.decode(blob[a:b]) for a, b in zip(offsets[:-1], offsets[1:], strict=True)] == items
    assert encode_items([])[0] == msgspec.msgpack.encode([])


@pytest.mark.parametrize(
    "items",
    [
        ["s1", "x" * 31, "y" * 32, "z" * 255, "w" * 256, "é" * 40],  # only strings (their sizes from lengths)
        [0.3, None, 1.0, -0.0, None, 1e300],  # floats and None (9 bytes and 1 each)
        [0.5, None, 2, True],  # an int and a bool among them: encoded item by item
        ["a", None, "", "x" * 300, None, "y" * 70000],  # strings and None (None: 1 byte; 5-byte header past 65535)
        [None, None],  # only None
        ["a", None, "é" * 40],  # a non-ASCII string among them: more bytes than characters, item by item
        ["a", 1.5, None],  # a string and a float: item by item
        ["a", b"ab"],  # bytes among strings (as long as a string of that length): item by item
    ],
)
def test_encode_items_offsets_of_strings_and_of_floats(items: list[object]) -> None:
    blob, offsets = encode_items(items)
    assert len(offsets) == len(items) + 1 and offsets[-1] == len(blob)
    decoded = [msgspec.msgpack.decode(blob[a:b]) for a, b in zip(offsets[:-1], offsets[1:], strict=True)]
    assert decoded == items and [type(v) for v in decoded] == [type(v) for v in items]


def test_row_map_reads_the_chunk_of_the_row_asked_for() -> None:
    low, low_source = _stored([[2, [0, 1]], [5, [3]]], lambda pair: (pair[0], tuple(pair[1])))
    high, high_source = _stored([[12, [4]]], lambda pair: (pair[0], tuple(pair[1])))
    rows: RowMap[tuple[int, ...]] = RowMap()
    rows.add_chunk(0, 10, low)
    rows.add_chunk(10, 20, high)
    rows[25] = (9,)
    assert len(rows) == 4 and low_source.reads == [] and high_source.reads == []
    assert rows.get(12) == (4,) and low_source.reads == []
    assert rows.get(3) is None and rows.get(3, ()) == ()
    assert rows[5] == (3,) and 25 in rows and 7 not in rows
    with pytest.raises(KeyError):
        rows[7]
    assert dict(rows.items()) == {2: (0, 1), 5: (3,), 12: (4,), 25: (9,)}
    assert rows.between(4, 13) == [(5, (3,)), (12, (4,))]


_SHAREABLE = st.one_of(
    st.none(),
    st.sampled_from(["cat", "ops", "é", ""]),
    st.sampled_from([0.0, -0.0, 0.15, 1.0, float("inf"), float("-inf"), float("nan")]),
    st.floats(allow_nan=True),
    st.sampled_from([1, 0, True, False]),  # equal to 1.0 and 0.0: never one for the other
    st.lists(st.integers(0, 2), max_size=2),  # unhashable: kept as is
)


@settings(max_examples=80, deadline=None)
@given(st.lists(_SHAREABLE, max_size=30), st.lists(_SHAREABLE, max_size=30), st.lists(_SHAREABLE, max_size=10))
def test_a_shared_column_keeps_every_value_exactly(stored: list[Any], extended: list[Any], appended: list[Any]) -> None:
    """Sharing equal values never changes one: -0.0 stays -0.0 (it equals 0.0), NaN stays NaN, and
    each item has its own type and repr, whether read from a stored chunk (whole or one item),
    extended or appended. Compared by repr: == would call -0.0 and 0.0 the same."""
    seq: Objects[Any] = Objects(shared=True)
    chunk, _ = _stored(list(stored))
    seq.add_chunk(chunk)
    one_by_one = [repr(seq[i]) for i in range(len(stored))]  # item by item, before the chunk is decoded
    seq.extend(extended)
    for value in appended:
        seq.append(value)
    everything = [*stored, *extended, *appended]
    assert one_by_one == [repr(v) for v in stored]
    assert [(type(v), repr(v)) for v in seq] == [(type(v), repr(v)) for v in everything]


def test_a_shared_column_keeps_an_int_beside_an_equal_float() -> None:
    """1 == 1.0 and True == 1.0, so a set of [1.0, 1] holds one of them: the check of the values'
    types must look at every value, not at the distinct ones (found by the property test above)."""
    seq: Objects[Any] = Objects(shared=True)
    seq.extend([1.0, 1, True, 0.5])
    seq.append(1)
    assert [(type(v), v) for v in seq] == [(float, 1.0), (int, 1), (bool, True), (float, 0.5), (int, 1)]


def test_a_shared_column_holds_one_object_per_repeated_string() -> None:
    """A decoder makes a new string per record: 1,000 sessions of one category held 1,000 strings.
    Shared, they are one object, read whole or one by one from a chunk, or extended."""
    made = [f"cat-{i % 3}"[:5] + str(i % 3) for i in range(1000)]  # 1,000 distinct objects, 3 values
    assert len({id(v) for v in made}) == 1000
    stored, _ = _stored(list[object](made))
    seq: Objects[str] = Objects(shared=True)
    seq.add_chunk(stored)
    seq.extend(list(made))
    seq.append("".join(["cat-1", "1"]))
    assert seq[5] is seq[2]  # two items decoded one at a time
    assert len({id(v) for v in seq}) == 3
    assert len({id(v) for v in Objects(list(made))}) == 1000  # a column that does not share keeps them


def test_a_shared_column_stops_sharing_past_its_limit() -> None:
    """Ids or timestamps would only fill the table: past SHARED_MAX distinct values, new ones are
    kept as they come (and still equal what was given)."""
    from lesson_credit.core.log.columns import SHARED_MAX

    values = [f"v{i}" for i in range(SHARED_MAX + 50)]
    seq: Objects[str] = Objects(shared=True)
    seq.extend(values)
    again = [f"v{i}" for i in range(SHARED_MAX + 50)]
    seq.extend(again)
    assert list(seq) == values + values
    # SHARED_MAX values shared (one object for both), the other 50 twice each: 2 * (SHARED_MAX + 50) - SHARED_MAX
    assert len({id(v) for v in seq}) == SHARED_MAX + 100
