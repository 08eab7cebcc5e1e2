"""The parsed-log cache's blocks: what one block of sessions holds, written as checked sections.

A part holds a block of sessions (rows [r0, r1)) with their entries, and the grade and selection
events the log has between the block's first session and the next block's first (the first block
also those before it, the last one those after it). Each column is a section of its own (numbers
as raw bytes, other values as `encode_items` blobs with item offsets), with a hash table of the
block's session ids, so a lookup by id reads one block's hashes and one id. `encode_part` writes a
part from an index; `attach_part` puts a stored part's sections into an empty index's columns, to
be read when first used.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import msgspec
import numpy as np
import xxhash
from msgspec import Struct, field

from lesson_credit.core.log import snapshot
from lesson_credit.core.log.columns import Column, Objects, RowMap, StoredChunk, encode_items
from lesson_credit.core.log.events import GradeEvent, SelectionEvent
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.lookup import IdChunk, bloom_filter, hash_table, id_hashes
from lesson_credit.core.log.sections import Section

_ROW_NUMBERS = {  # index column -> section: one item per session
    "session_lines": "lines",
    "session_offsets": "offsets",
    "session_base": "base",
    "session_published": "published",
    "session_source": "source",
    "session_start": "starts",  # where each session's entries start (the index's last item, the end, is not stored)
}
_ENTRY_NUMBERS = {"entry_arm": "arm", "entry_salience": "salience", "entry_session": "session"}
_ROW_OBJECTS = {
    "session_ids": "ids",
    "session_times": "times",
    "session_categories": "categories",
    "session_journals": "journals",
    "session_graders": "graders",
    "session_strategies": "strategies",
    "session_floors": "floors",
}
_MAPS = {
    "missing_salience": "missing",
    "propensities": "propensities",
    "outcome_labels": "labels",
    "during": "during",
}
_ITEMS = (*_ROW_OBJECTS.values(), *_MAPS.values(), "grades", "selections")
# A part's sections, in the order they are written. SQLite keeps a blob in a chain of pages and reads a
# section by following the chain from the blob's start, so a section's cost grows with its offset: the
# small sections read from every block (the id filters, the row numbers a snapshot gathers) come
# first, the entries (most of a block's bytes, read for one block at a time) last. A reader finds
# each section by the offset its part's directory gives: a part written in another order reads the same.
PART_SECTIONS = (
    "id_bloom",
    "sel_bloom",
    "base",  # a snapshot gathers these three from every block
    "source",
    "published",
    "starts",
    "lines",
    "offsets",
    "id_hashes",
    "id_rows",
    "sel_hashes",
    "sel_positions",
    *(f"{name}.{kind}" for name in _ITEMS for kind in ("offsets", "blob")),
    *_ENTRY_NUMBERS.values(),
)


class Part(Struct):
    """One block of the cache: where its sections are, and how much of each kind of item it holds."""

    file: str | None  # the part file's name (None: not written yet)
    rows: int
    entries: int
    grades: int
    selections: int
    maps: dict[str, int]  # items of each row map, and "sel_ids": selections that name a session
    sections: dict[str, list[int]] = field(default_factory=dict)  # name -> [offset, length, xxh3-64]
    id_range: list[str] | None = None  # the block's smallest and largest session id (a prefix outside skips it)
    # how many of the block's sessions have each category, as logged: the sessions' kinds of work are named from
    # these without decoding the column (`Objects.counted`)
    categories: list[tuple[str | None, int]] | None = None

    @classmethod
    def of(cls, p: object) -> Part:
        """A part as the cache's head holds it (msgpack's map of the fields); ValueError when it is not one."""
        try:
            part = msgspec.convert(p, cls)
        except msgspec.ValidationError as exc:
            raise ValueError(f"a part is malformed: {exc}") from None
        if part.id_range is not None and len(part.id_range) != 2:
            raise ValueError("a part's id range is malformed")
        if set(part.sections) != set(PART_SECTIONS) or any(len(v) != 3 or min(v) < 0 for v in part.sections.values()):
            raise ValueError("a part's sections are not this version's")
        if min(part.rows, part.entries, part.grades, part.selections, *part.maps.values(), 0) < 0:
            raise ValueError("a negative count")
        counts = [count for _, count in part.categories or ()]  # (a block of no session counts none)
        if part.categories is not None and (min(counts, default=1) < 1 or sum(counts) != part.rows):
            raise ValueError("a part's categories do not count its sessions")
        return part


class Extent(Struct, frozen=True):
    """What one part covers: rows [r0, r1), entries [e0, e1), grades [g0, g1), selections [s0, s1)."""

    block: int
    r0: int
    r1: int
    e0: int
    e1: int
    g0: int
    g1: int
    s0: int
    s1: int


def part_extents(index: LogIndex, r0: int, e0: int, g0: int, s0: int) -> list[Extent]:
    """The parts covering the index from row r0 (and entry e0, grade g0, selection s0) to its end:
    one per block of `snapshot.BLOCK_ROWS` sessions. A grade or selection goes with the block of the
    sessions before it in the log (those before the first session: the first block)."""
    n, size = index.n_sessions, snapshot.BLOCK_ROWS
    cuts = [r0]
    cut = (r0 // size + 1) * size
    while cut < n:
        cuts.append(cut)
        cut += size
    cuts.append(n)
    grade_lines = np.array([line for line, _ in index.grades.between(g0, len(index.grades))], dtype=np.int64)
    selection_lines = np.array([line for line, _ in index.selections.between(s0, len(index.selections))], np.int64)
    out = []
    e, g, s = e0, g0, s0
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        if hi < n:
            first_line = int(index.session_lines[hi])
            g_end = g0 + int(np.searchsorted(grade_lines, first_line))
            s_end = s0 + int(np.searchsorted(selection_lines, first_line))
        else:
            g_end, s_end = len(index.grades), len(index.selections)
        e_end = int(index.session_start[hi])
        out.append(Extent(lo // size, lo, hi, e, e_end, g, g_end, s, s_end))
        e, g, s = e_end, g_end, s_end
    return out


def _big(value: int | None) -> int | str | None:
    """An integer msgpack can hold (64 bits), or its decimal text: another tool may log any integer."""
    return value if value is None or -(2**63) <= value < 2**63 else str(value)


def _unbig(value: int | str | None) -> int | None:
    return int(value) if isinstance(value, str) else value


def _grade(g: list[Any]) -> tuple[int, GradeEvent]:
    return g[0], GradeEvent(g[1], g[2], g[3], g[4], g[5])


def _selection(s: list[Any]) -> tuple[int, SelectionEvent]:
    return s[0], SelectionEvent(s[1], s[2], tuple(s[3]), tuple(s[4]), dict(s[5]), _unbig(s[6]), _unbig(s[7]), s[8])


def _selection_row(line: int, s: SelectionEvent) -> list[Any]:
    k, seed = _big(s.k), _big(s.seed)
    return [line, s.session_id, s.timestamp, list(s.candidates), list(s.selected), s.propensity, k, seed, s.category]


def _pair(pair: list[Any]) -> tuple[int, Any]:
    row, value = pair
    return int(row), tuple(value) if isinstance(value, list) else value


def encode_part(index: LogIndex, x: Extent, file: str | None) -> tuple[Part, bytes]:
    """The part file for extent `x` of the index: (its directory, its bytes)."""
    pieces: dict[str, bytes] = {}

    def put(name: str, data: bytes) -> None:
        pieces[name] = data

    def put_items(name: str, items: list[Any]) -> None:
        blob, offsets = encode_items(items)
        put(f"{name}.blob", blob)
        put(f"{name}.offsets", offsets.tobytes())

    for attr, name in _ROW_NUMBERS.items():
        put(name, getattr(index, attr).span(x.r0, x.r1).tobytes())
    for attr, name in _ENTRY_NUMBERS.items():
        put(name, getattr(index, attr).span(x.e0, x.e1).tobytes())
    ids: list[str] = []
    categories: list[tuple[str | None, int]] = []
    for attr, name in _ROW_OBJECTS.items():
        values = list(getattr(index, attr).between(x.r0, x.r1))
        ids = values if attr == "session_ids" else ids
        categories = list(Counter(values).items()) if attr == "session_categories" else categories
        put_items(name, values)
    hashes, rows = hash_table(ids)
    put("id_hashes", hashes.tobytes())
    put("id_rows", rows.tobytes())
    put("id_bloom", bloom_filter(hashes).tobytes())
    maps = {}
    for attr, name in _MAPS.items():
        pairs = getattr(index, attr).between(x.r0, x.r1)
        put_items(name, [[row, list(v) if isinstance(v, tuple) else v] for row, v in pairs])
        maps[name] = len(pairs)
    grades = index.grades.between(x.g0, x.g1)
    put_items("grades", [[line, g.session_id, g.base_reward, g.grader, g.timestamp, g.note] for line, g in grades])
    selections = index.selections.between(x.s0, x.s1)
    put_items("selections", [_selection_row(line, s) for line, s in selections])
    named = [(i, s.session_id) for i, (_, s) in enumerate(selections) if s.session_id is not None]
    sel_hashes = id_hashes([sid for _, sid in named])
    order = np.argsort(sel_hashes, kind="stable")
    put("sel_hashes", sel_hashes[order].tobytes())
    put("sel_positions", np.array([named[i][0] for i in order.tolist()], dtype=np.int32).tobytes())
    put("sel_bloom", bloom_filter(sel_hashes).tobytes())
    maps["sel_ids"] = len(named)
    out = bytearray()
    sections: dict[str, list[int]] = {}
    for name in PART_SECTIONS:
        data = pieces.pop(name)
        out.extend(b"\0" * (-len(out) % 8))
        sections[name] = [len(out), len(data), xxhash.xxh3_64_intdigest(data)]
        out.extend(data)
    part = Part(file, x.r1 - x.r0, x.e1 - x.e0, x.g1 - x.g0, x.s1 - x.s0, maps, sections)
    part.id_range = [min(ids), max(ids)] if ids else None
    part.categories = categories
    return part, bytes(out)


def attach_part(index: LogIndex, part: Part, section: Callable[[str], Section]) -> None:
    """Append a stored part's sections to the index's columns (which hold nothing appended yet)."""
    r0 = index.n_sessions
    s0 = len(index.selections)
    for attr, name in _ROW_NUMBERS.items():
        column: Column = getattr(index, attr)
        column.add_chunk(part.rows, section(name))
    for attr, name in _ENTRY_NUMBERS.items():
        getattr(index, attr).add_chunk(part.entries, section(name))
    for attr, name in _ROW_OBJECTS.items():
        objects: Objects[Any] = getattr(index, attr)
        chunk = StoredChunk(part.rows, section(f"{name}.blob"), section(f"{name}.offsets"), None)
        if attr == "session_ids" and part.id_range is not None:
            chunk.bounds = (part.id_range[0], part.id_range[1])
        if attr == "session_categories" and part.categories is not None:
            chunk.counts = dict(part.categories)
        objects.add_chunk(chunk)
    for attr, name in _MAPS.items():
        chunk = StoredChunk(part.maps.get(name, 0), section(f"{name}.blob"), section(f"{name}.offsets"), _pair)
        rows: RowMap[Any] = getattr(index, attr)
        rows.add_chunk(r0, r0 + part.rows, chunk)
    index.grades.add_chunk(StoredChunk(part.grades, section("grades.blob"), section("grades.offsets"), _grade))
    index.selections.add_chunk(
        StoredChunk(part.selections, section("selections.blob"), section("selections.offsets"), _selection)
    )
    index.lookup.add_chunk(IdChunk(r0, part.rows, section("id_hashes"), section("id_rows"), section("id_bloom")))
    named = part.maps.get("sel_ids", 0)
    sel = IdChunk(s0, named, section("sel_hashes"), section("sel_positions"), section("sel_bloom"))
    index.selection_chunks.append(sel)
