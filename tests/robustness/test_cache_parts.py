"""The parsed-log cache in blocks (core/log/cache.py, parts.py): a command reads the blocks it
touches, a save writes only what changed, and a damaged block is never used.

Blocks of 8 sessions (65,536 in use) and a cache threshold of 0 bytes (4 MB in use), so a log
of a few dozen sessions has several blocks and every read goes through the cache.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log.cache import BlobSource, DerivedCache
from lesson_credit.core.query import QueryError
from lesson_credit.core.workspace import Workspace
from tests.robustness.hostile_helpers import LOG_REL, lesson, make_ws
from tests.support import derived_cache
from tests.support.cli_run import run_cli, run_process
from tests.support.derived_cache import DB_NAME

LIBRARY = {"a.md": lesson(["alpha"]), "b.md": lesson(["beta"])}
CACHE_REL = LOG_REL.parent / ".cache"


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 8)


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record) + "\n"


def _session(sid: str, reward: float | None, extra: dict[str, Any] | None = None) -> str:
    lessons = [{"path": "a.md", "salience": 0.25}, {"path": "b.md", "salience": 1.0}]
    return _line({"type": "session", "session_id": sid, "base_reward": reward, "lessons": lessons, **(extra or {})})


IDS = [f"run-{i:03d}-{'x' if i % 3 else 'y'}" for i in range(30)] + ["ünï-1", "ünï-2", "solo"]


def _workspace(root: Path) -> Path:
    make_ws(root, LIBRARY)
    (root / "j.md").write_text("alpha beta")
    log = root / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    lines = [_session(sid, (i % 10) / 10 if i % 4 else None, {"category": "c"}) for i, sid in enumerate(IDS)]
    lines.insert(5, _line({"type": "grade", "session_id": "run-002-x", "base_reward": 0.9, "grader": "manual"}))
    selection = {"type": "selection", "session_id": "later", "candidates": ["a.md"], "propensity": {"a.md": 0.3}}
    lines.insert(20, _line(selection))
    log.write_text("".join(lines))
    Workspace(root).data()  # parses, writes the cache
    return root


def _parts(root: Path) -> dict[str, float]:
    """Block name -> when it was written, in the cache's database."""
    with sqlite3.connect(root / CACHE_REL / DB_NAME) as conn:
        return {str(name): float(written) for name, written in conn.execute("SELECT name, written FROM parts")}


def test_an_id_or_a_prefix_is_resolved_as_scanning_every_id_would(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    ws = Workspace(root)
    ws.record("run-late-1", root / "j.md", ["a.md"], reward=0.5)  # one in memory, after the cached blocks
    ids = [*IDS, "run-late-1"]

    def brute(text: str) -> str | list[str]:
        if text in ids:
            return text
        return [sid for sid in ids if sid.startswith(text)]

    fresh = Workspace(root)
    for text in ["run-007-x", "run-00", "run-029", "ünï", "ünï-2", "run-late", "solo", "sol", "nope", "run-01"]:
        expected = brute(text)
        if isinstance(expected, str) or len(expected) == 1:
            assert fresh.session_id_of(text) == (expected if isinstance(expected, str) else expected[0]), text
        else:
            with pytest.raises(QueryError) as caught:
                fresh.session_id_of(text)
            if expected:
                assert f"{len(expected)} sessions match" in str(caught.value) and expected[0] in str(caught.value)
            else:
                assert "unknown session" in str(caught.value)


def test_a_record_is_read_back_from_where_its_line_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _workspace(tmp_path)
    lines = (root / LOG_REL).read_text().splitlines()
    ws = Workspace(root)

    def no_search(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("searched the log")

    monkeypatch.setattr(type(ws.log), "session_record", no_search)
    for sid in ("run-000-y", "run-017-x", "solo"):
        assert ws.session_record(sid) == json.loads(next(line for line in lines if f'"{sid}"' in line))


def test_a_save_writes_only_the_last_block_and_the_head(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    before = _parts(root)
    named = [part["file"] for part in _head(root)["parts"]]
    assert len(before) == 5 and sorted(named) == sorted(before)  # 33 sessions in blocks of 8
    ws = Workspace(root)
    ws.grade("run-004-x", 0.4)  # an old block's reward: its sums change, not its part
    ws.record("run-late-2", root / "j.md", ["b.md"], reward=0.6)  # the last block grows
    after = _parts(root)
    now = [part["file"] for part in _head(root)["parts"]]
    assert now[:4] == named[:4] and all(after[name] == before[name] for name in named[:4])  # not written again
    assert now[4] != named[4] and now[4] not in before  # the last block's new part (the old one is left a while)
    cold, warm = Workspace(root, use_cache=False), Workspace(root)
    assert warm.lesson_table().as_json() == cold.lesson_table().as_json()
    assert warm.sessions() == cold.sessions()
    assert warm.grade_history("run-004-x") == cold.grade_history("run-004-x")


def test_a_new_cache_is_written_in_64_kb_pages(tmp_path: Path) -> None:
    # a block's blob over 64 KB pages: a sixteenth of the pages (and page headers) of SQLite's default 4 KB
    root = _workspace(tmp_path)
    with sqlite3.connect(root / CACHE_REL / DB_NAME) as conn:
        assert conn.execute("PRAGMA page_size").fetchone() == (65536,)
    assert Workspace(root).data().n_sessions == len(IDS)  # and it reads back


def test_a_new_cache_keeps_a_pointer_map_and_an_older_versions_file_is_not_used_but_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # auto_vacuum 2 (incremental) keeps pointer-map pages: SQLite finds a section far into a block's blob from
    # them instead of reading every overflow page before it. SQLite's own default is 0 (none).
    root = _workspace(tmp_path)
    db = root / CACHE_REL / DB_NAME
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA auto_vacuum").fetchone() == (2,)
    want = Workspace(root, use_cache=False).lesson_table().as_json()
    db.unlink()
    with sqlite3.connect(db) as conn:  # as an older version left it: its own tables, another user_version
        conn.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value BLOB NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('head', x'00')")
        conn.execute("PRAGMA user_version = 3")
    capsys.readouterr()
    assert Workspace(root).lesson_table().as_json() == want  # not read (another version): parsed, and saved again
    assert f"{DB_NAME} is from another version; rebuilding it from the log" in capsys.readouterr().err
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA user_version").fetchone() != (3,)
    assert _parts(root) and Workspace(root).lesson_table().as_json() == want
    assert "rebuilding" not in capsys.readouterr().err  # read from the rebuilt cache, without a word


def test_a_section_at_the_end_of_a_big_block_is_read_without_the_pages_before_it(tmp_path: Path) -> None:
    # bytes this process read through read()/pread(), from Linux's /proc/self/io: a count, not a time
    io = Path("/proc/self/io")
    if not io.exists():
        pytest.skip("needs Linux's /proc/self/io")

    def bytes_read() -> int:
        return int(dict(line.split(": ") for line in io.read_text().splitlines())["rchar"])

    class Cache(DerivedCache):
        def __init__(self, folder: Path) -> None:
            self.dir, self.path, self.store, self.notice, self.min_new = folder, folder / DB_NAME, None, False, 0

    cache = Cache(tmp_path)
    block = bytes(range(256)) * (32 * 1024)  # 8 MB: 128 pages of 64 KB
    with cache._transaction() as conn:
        assert conn is not None
        conn.execute("INSERT INTO parts VALUES ('b', ?, 0)", (block,))
    cache._conn = cache._connect(1 << 30)
    assert cache._conn is not None
    (rowid,) = cache._conn.execute("SELECT rowid FROM parts").fetchone()
    source = BlobSource(cache, "b", rowid, len(block), healer=None)  # type: ignore[arg-type]
    before = bytes_read()
    assert source.read(len(block) - 65536, 65536) == block[-65536:]
    # the section (64 KB), its page's pointer-map page, the root and the schema: well under 1 MB; the old
    # code followed the block's overflow chain from its start, reading every page before it (~8 MB)
    assert bytes_read() - before < 1 << 20
    cache._conn.close()


def test_the_sections_read_from_every_block_lie_at_the_start_of_its_blob(tmp_path: Path) -> None:
    # the sections read from every block (the id filters a lookup tries, the columns a snapshot gathers)
    # lie together at the start of a block's blob, so a command reads a few adjacent pages of each block
    # rather than pages scattered through its bulk (and, without a pointer map, every page before them);
    # the entries go last
    every_block = {"id_bloom", "sel_bloom", "base", "source", "published"}
    entries = {"arm", "salience", "session"}
    for part in _head(root := _workspace(tmp_path))["parts"]:
        spans = {name: (offset, offset + length) for name, (offset, length, _) in part["sections"].items()}
        others = [start for name, (start, _) in spans.items() if name not in every_block]
        assert max(spans[name][1] for name in every_block) <= min(others)
        assert min(spans[name][0] for name in entries) >= max(end for n, (_, end) in spans.items() if n not in entries)
    assert Workspace(root).data().n_sessions == len(IDS)


def test_explaining_and_regrading_a_session_read_no_blocks_entry_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a session's credit and a block's patched sums need its entries' arms and saliences, not the
    # row of each of the block's entries (a quarter of a block's bytes at a million sessions)
    from lesson_credit.core.log.sections import Section

    root = _workspace(tmp_path)
    Workspace(root).grade("run-004-x", 0.2)  # the block sums are saved with the cache
    expected = Workspace(root, use_cache=False).explain("run-010-x")  # read from the log alone
    monkeypatch.setattr("lesson_credit.core.log.cache.LogCache.save", lambda *args: None)  # no block encoded below
    read: list[str] = []
    bytes_of = Section.bytes

    def reading(self: Section) -> bytes | memoryview:
        read.append(self.name)
        return bytes_of(self)

    monkeypatch.setattr(Section, "bytes", reading)
    ws = Workspace(root)
    shown = ws.explain("run-010-x")
    ws.grade("run-011-x", 0.8)
    assert "arm" in read and "session" not in read
    monkeypatch.setattr(Section, "bytes", bytes_of)
    assert shown == expected
    assert Workspace(root).lesson_table().as_json() == Workspace(root, use_cache=False).lesson_table().as_json()


def test_the_latest_selection_is_found_in_a_cached_block(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    ws = Workspace(root)
    explained = ws.record("later", root / "j.md", ["a.md"], reward=1.0)
    assert [c.path for c in explained.lessons] == ["a.md"]
    assert Workspace(root, use_cache=False).session("later").base_reward == 1.0
    row = ws._reader.row_of("later")
    assert row is not None and ws._reader.index.session(row).propensities == (0.3,)


@pytest.mark.parametrize("section", ["ids", "base", "arm", "grades", "id_hashes"])
def test_a_damaged_block_gives_the_same_numbers(tmp_path: Path, section: str) -> None:
    """A section is checked when first read: damage found then makes the workspace read the log
    again (no number comes from it), in this process and, through the CLI, in the next."""
    root = _workspace(tmp_path)
    expected = Workspace(root, use_cache=False)
    table, history = expected.lesson_table().as_json(), expected.grade_history("run-002-x")
    printed = run_process("status", "--json", cwd=root).stdout  # the CLI (with its own block size)
    head = _head(root)
    part = head["parts"][0]
    offset, length, _ = part["sections"][section if section in ("base", "arm", "id_hashes") else f"{section}.blob"]
    path = root / CACHE_REL / DB_NAME
    data = bytearray(derived_cache.parts(path)[part["file"]])
    data[offset + length // 2] ^= 0x01
    derived_cache.put_part(path, part["file"], bytes(data))
    ws = Workspace(root)
    assert ws.lesson_table().as_json() == table
    assert ws.grade_history("run-002-x") == history
    assert ws.sessions() == expected.sessions()
    if part["file"] in derived_cache.parts(path):
        derived_cache.put_part(path, part["file"], bytes(data))  # damaged again (if the read above kept it)
    done = run_process("status", "--json", cwd=root)
    assert done.returncode == 0 and done.stdout == printed
    # a section status reads is checked then (one line to say so); one it does not read is never checked
    assert done.stderr in ("",) or ("damaged block" in done.stderr and done.stderr.count("\n") == 1)


def _head(root: Path) -> dict[str, Any]:
    import msgspec

    from lesson_credit.core.base.sealed import unseal
    from lesson_credit.core.log.cache import CACHE_MAGIC

    return dict(msgspec.msgpack.decode(unseal(CACHE_MAGIC, derived_cache.meta(root / CACHE_REL / DB_NAME)["head"])))


def test_grade_events_read_after_the_cache_find_their_sessions_in_one_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Grade events appended after the cache (sessions in cached blocks, one appended beside them, one
    read before its session, an unknown id) count as they do for a workspace read without the cache,
    the cached blocks probed once for them all (SessionLookup.prefetch)."""
    root = _workspace(tmp_path)
    grades = [("run-001-x", 0.3), ("run-020-x", 0.8), ("tail-1", 0.6), ("nobody", 0.1), ("solo", None)]
    lines = [json.dumps({"type": "grade", "session_id": s, "base_reward": r, "grader": "manual"}) for s, r in grades]
    tail = [lines[2], _session("tail-1", None).rstrip("\n"), *lines[:2], *lines[3:]]
    with (root / LOG_REL).open("a") as handle:
        handle.write("\n".join(tail) + "\n")
    from lesson_credit.core.log.lookup import IdChunk

    probes: list[int] = []
    real = IdChunk.maybe_any

    def counted(self: IdChunk, digests: Any) -> Any:
        probes.append(len(digests))
        return real(self, digests)

    monkeypatch.setattr(IdChunk, "maybe_any", counted)
    warm, cold = Workspace(root), Workspace(root, use_cache=False)
    assert warm.data().base.tobytes() == cold.data().base.tobytes()
    assert probes and max(probes) == 5  # the five ids at once, in each cached block
    for sid in ("run-001-x", "run-020-x", "tail-1", "solo"):
        assert warm.grade_history(sid) == cold.grade_history(sid)
    assert [p.reason for p in warm.log_problems()] == [p.reason for p in cold.log_problems()]


STORE_ID = "00000000-0000-0000-0000-000000000001"


class _Store:
    """What the database store's cache needs of its store, over an index read from a file: the
    position it reaches is the index's end (all of it)."""

    written_by: str | None = None

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws

    def size(self) -> int:
        return int(self.ws._reader.index.end)

    def store_id(self) -> str:
        return STORE_ID

    def fingerprint(self, end: int) -> str:
        return f"pg:{self.store_id()}:{end}"

    def read_since(self, after: int, first: int, **kwargs: Any) -> Any:
        return self.ws.log.read_since(after, first, **kwargs)


def _db(folder: Path) -> Path:
    return folder / f"derived-pg-{STORE_ID}.sqlite"


def test_a_database_stores_cache_reads_back_what_was_written(tmp_path: Path) -> None:
    """The database store's cache (head, sums and one blob per block, as the file's) gives back the
    index it was written from, and a changed byte in a block is never used: the block is derived
    again from the store when it is read (no CacheDamaged reaches the caller)."""
    from lesson_credit.core.bandit.fold import fold
    from lesson_credit.core.log.cache import PgLogCache

    root = _workspace(tmp_path)
    ws = Workspace(root)
    ws.data()  # read: from the parts the file store's cache wrote
    index = ws._reader.index
    assert index.n_sessions == len(IDS)
    cache = PgLogCache(_Store(ws), tmp_path / "cache")  # a folder not made yet
    cache.save(index, "", False)
    parts = derived_cache.parts(_db(tmp_path / "cache"))
    assert len(parts) == 5  # 33 sessions in blocks of 8
    loaded = cache.load()
    assert loaded is not None
    back, _, partial = loaded
    assert not partial and back.n_sessions == index.n_sessions and back.end == index.end
    assert [back.session(row).session_id for row in range(back.n_sessions)] == IDS
    assert [back.row_of(sid) for sid in IDS] == list(range(len(IDS)))
    assert [back.session(row) for row in range(back.n_sessions)] == [index.session(r) for r in range(len(IDS))]
    ours, theirs = fold(back.snapshot(), ws.settings), fold(index.snapshot(), ws.settings)
    assert ours.arm_ids == theirs.arm_ids and ours.n.tolist() == theirs.n.tolist() == [24, 24]
    assert ours.alpha.tolist() == theirs.alpha.tolist() and ours.beta.tolist() == theirs.beta.tolist()
    name = sorted(parts)[2]
    damaged = bytearray(parts[name])
    damaged[len(damaged) // 2] ^= 0xFF
    derived_cache.put_part(_db(tmp_path / "cache"), name, bytes(damaged))
    again = cache.load()
    assert again is not None  # the head is intact; the part is checked when read, and derived again
    assert [again[0].session(row) for row in range(again[0].n_sessions)] == [index.session(r) for r in range(len(IDS))]


def test_a_database_stores_cache_writes_what_was_read_since_its_last_save(tmp_path: Path) -> None:
    """The database store's cache was one file, written whole whenever a read took 5,000 new
    events (342 MB and ~4.5 s at a million sessions, for 5,000 events). Now a save writes the last
    block's part and the parts after it, and the head: the full blocks' rows are not touched."""
    from lesson_credit.core.log.cache import PgLogCache

    root = _workspace(tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.data()
    cache = PgLogCache(_Store(ws), tmp_path / "cache")
    cache.save(ws._reader.index, "", False)
    folder = tmp_path / "cache"

    def parts() -> dict[str, float]:
        with sqlite3.connect(_db(folder)) as conn:
            return {str(name): float(written) for name, written in conn.execute("SELECT name, written FROM parts")}

    before = parts()
    assert len(before) == 5  # 33 sessions: blocks 0-3 full, block 4 holds 1
    log = root / LOG_REL
    with log.open("a") as handle:  # 10 more sessions: block 4 fills up, block 5 starts
        handle.write("".join(_session(f"late-{i}", 0.5) for i in range(10)))
    ws.refresh()
    index = ws._reader.index
    assert index.n_sessions == len(IDS) + 10
    cache.save(index, "", False)
    after, named = parts(), {part.file for part in index.parts}  # the files the head now names
    assert len(named) == 6 and named <= set(after)
    kept = {name for name in named & set(before) if after[name] == before[name]}
    assert len(kept) == 4  # the four full blocks' files, untouched
    assert len(named - set(before)) == 2  # block 4 again (it grew) and the new block 5
    loaded = cache.load()
    assert loaded is not None
    assert [loaded[0].session(row).session_id for row in range(index.n_sessions)] == [
        *IDS,
        *(f"late-{i}" for i in range(10)),
    ]


def test_the_database_stores_cache_is_saved_without_holding_the_cache_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one-file cache was made whole in memory, then copied three times (1.76 GB at a million
    sessions for a 342 MB file); now one part (a block of sessions) at a time. Counted by
    tracemalloc, not timed: the save's peak stays far below what it writes."""
    import tracemalloc

    from lesson_credit.core.log.cache import PgLogCache

    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 1024)  # 12 parts: each part holds many sessions
    make_ws(tmp_path, LIBRARY)
    log = tmp_path / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(_session(f"s-{i:05d}", (i % 10) / 10, {"category": f"c{i % 7}"}) for i in range(12000)))
    ws = Workspace(tmp_path, use_cache=False)
    ws.data()
    cache = PgLogCache(_Store(ws), tmp_path / "cache")
    tracemalloc.start()
    try:
        cache.save(ws._reader.index, "", False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    written = _db(tmp_path / "cache").stat().st_size
    assert written > 1_500_000  # 12,000 sessions in 12 parts (blocks of 1,024)
    assert peak < written / 2, (peak, written)  # one part at a time, not the whole cache
    assert cache.load() is not None  # and it is a cache the next command reads


def test_a_category_every_session_repeats_is_held_once_read_from_the_log_or_the_cache(tmp_path: Path) -> None:
    """Every session's record says category "c": decoded, that was one new string per session (a
    million at 1M, 63 bytes each). Read from the log or from the cache's parts, the index holds it
    once; the values are unchanged."""
    root = _workspace(tmp_path)
    cold = Workspace(root, use_cache=False)
    cold.data()
    warm = Workspace(root)
    warm.data()
    for ws in (cold, warm):
        categories = list(ws._reader.index.session_categories)
        assert categories == ["c"] * len(IDS)
        assert len({id(c) for c in categories}) == 1


def test_an_older_versions_database_cache_is_not_read_whole(tmp_path: Path) -> None:
    """Before c1d3c88 a database's cache was one file holding the whole index (342 MB at 1M), then a
    head and part files under that name. Such a file is never read (tracemalloc) nor in the way."""
    import tracemalloc

    from lesson_credit.core.log.cache import PgLogCache

    root = _workspace(tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.data()
    store = _Store(ws)
    head = tmp_path / "cache" / f"log-index-pg-{store.store_id()}.msgpack"
    head.parent.mkdir()
    head.write_bytes(b"lesson-credit log-index blob 8\n" + bytes(8_000_000))
    cache = PgLogCache(store, tmp_path / "cache")
    tracemalloc.start()
    try:
        assert cache.load() is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak  # the old code read all 8 MB of it
    cache.save(ws._reader.index, "", False)
    loaded = cache.load()
    assert loaded is not None and loaded[0].n_sessions == len(IDS)


def test_keeping_a_database_caches_sums_never_fails_a_command(tmp_path: Path) -> None:
    """After a write, the block sums a fold computed are kept (`save_sums`). A database store names
    its cache files by asking the database; a database gone at that moment costs the sums, never
    the command whose event was written."""
    from lesson_credit.core.log.cache import PgLogCache
    from lesson_credit.core.log.store import StoreError

    root = _workspace(tmp_path)
    ws = Workspace(root, use_cache=False)
    ws.data()
    index = ws._reader.index
    store = _Store(ws)
    PgLogCache(store, tmp_path / "cache").save(index, "", False)
    index.blocks.changed = True

    class Gone(_Store):
        def store_id(self) -> str:
            raise StoreError("the database went away")

    PgLogCache(Gone(ws), tmp_path / "cache").save_sums(index, "pg:x:1")  # no exception
    assert index.blocks.changed  # not saved


def test_a_read_under_way_says_how_far_it_has_come(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`Workspace.read_progress` (what the dashboard's title bar shows during a first read of a big
    log): while the log is read, the bytes done of the bytes to read, growing chunk by chunk to the
    log's size; then "caching" while the parsed-log cache is written; None once the read is over."""
    import functools

    from lesson_credit.core.log.cache import LogCache
    from lesson_credit.core.log.index import LogIndex
    from lesson_credit.core.log.store import EventLog

    root = _workspace(tmp_path)
    for path in (root / CACHE_REL).iterdir():
        path.unlink()  # read from the start, and write the cache again
    size = (root / LOG_REL).stat().st_size
    monkeypatch.setattr(EventLog, "read_chunks", functools.partialmethod(EventLog.read_chunks, chunk_bytes=1024))
    ws = Workspace(root)
    seen: list[Any] = []
    add_many, save = LogIndex.add_many, LogCache.save

    def spy_add(index: LogIndex, *args: Any) -> Any:
        seen.append(ws.read_progress)
        return add_many(index, *args)

    def spy_save(cache: LogCache, *args: Any) -> None:
        seen.append(ws.read_progress)
        save(cache, *args)

    monkeypatch.setattr(LogIndex, "add_many", spy_add)
    monkeypatch.setattr(LogCache, "save", spy_save)
    assert ws.read_progress is None
    ws.refresh()
    assert ws.read_progress is None
    reading = [p for p in seen if p.stage == "reading"]
    assert size > 5 * 1024 and len(reading) >= 5  # a chunk of about 1 KB at a time
    assert reading[0].done == 0 and {p.total for p in reading} == {size} and {p.of_bytes for p in reading} == {True}
    dones = [p.done for p in reading]
    assert dones == sorted(set(dones)) and dones[-1] < size  # grows; the last chunk's end is reported after it
    assert seen[-1].stage == "caching"
    assert len({p.since for p in seen}) == 1  # one read: one start


def test_lessons_included_during_a_session_are_read_back_from_the_cache(tmp_path: Path) -> None:
    make_ws(tmp_path, LIBRARY)
    log = tmp_path / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(20):  # every third session pulled b.md in during it; blocks of 8: marks in three parts
        lessons = [{"path": "a.md", "salience": 0.25, "included": "before"}, {"path": "b.md", "salience": 1.0}]
        if i % 3 == 0:
            lessons[1]["included"] = "during"
        lines.append(_line({"type": "session", "session_id": f"s{i:02d}", "base_reward": 0.5, "lessons": lessons}))
    log.write_text("".join(lines))
    Workspace(tmp_path).data()  # parses, writes the cache
    warm, cold = Workspace(tmp_path), Workspace(tmp_path, use_cache=False)
    expected = [2 * i + 1 for i in range(0, 20, 3)]  # entry 2i + 1 is session i's b.md
    assert warm.data().during.tolist() == cold.data().during.tolist() == expected
    assert warm._reader.index.parts and not cold._reader.index.parts  # one read from the cache, one not
    assert warm._reader.index.session(3).during == (1,) and warm._reader.index.session(4).during == ()


def test_blocks_damaged_after_the_load_never_reach_the_readers_lookups(tmp_path: Path) -> None:
    """A section found damaged when first read (after the head was loaded and checked) raised
    CacheDamaged out of the reader's lookups, and 40 workspace methods ran again from a fresh read
    (`rereads`). Now the log layer derives the block again from the log: every lookup answers as a
    read without the cache does, and no exception reaches the caller."""
    root = _workspace(tmp_path)
    with (root / LOG_REL).open("a") as handle:
        handle.write(_line({"type": "grade", "session_id": "run-017-x", "base_reward": 0.2, "grader": "manual"}))
    Workspace(root).data()  # the cache covers the grade too
    warm, cold = Workspace(root), Workspace(root, use_cache=False)
    warm.refresh()
    cold.refresh()
    ours, theirs = warm._reader, cold._reader
    assert ours.index.parts and not theirs.index.parts  # one read from the cache, one not
    db = root / CACHE_REL / DB_NAME
    for name, blob in derived_cache.parts(db).items():  # every byte of every block changed, once loaded
        derived_cache.put_part(db, name, bytes(b ^ 0xFF for b in blob))
    assert [ours.row_of(sid) for sid in IDS] == [theirs.row_of(sid) for sid in IDS] == list(range(len(IDS)))
    assert ours.row_of("nobody") is None
    rows = range(len(IDS))
    assert [ours.session(row) for row in rows] == [theirs.session(row) for row in rows]
    assert [ours.grade_history(row) for row in rows] == [theirs.grade_history(row) for row in rows]
    assert ours.selections() == theirs.selections()
    a, b = ours.session_columns(len(IDS)), theirs.session_columns(len(IDS))
    assert (a.session_ids, a.timestamps, a.categories, a.lines.tolist()) == (
        b.session_ids,
        b.timestamps,
        b.categories,
        b.lines.tolist(),
    )
    assert ours.data().base.tobytes() == theirs.data().base.tobytes()
    mine, fresh = ours.posterior(warm.settings), theirs.posterior(cold.settings)
    assert mine.alpha.tolist() == fresh.alpha.tolist() and mine.beta.tolist() == fresh.beta.tolist()
    assert mine.alpha.tolist() != [1.0, 1.0]  # (graded sessions count: the fold did read the blocks)


def test_a_log_of_no_session_read_from_its_cache_is_not_taken_for_a_damaged_one(tmp_path: Path) -> None:
    """A log holding no session (only an imported prior: a large gptme file imported before the first record) is
    cached as one block of no session, whose categories count none. That block was read as damaged ("a part's
    categories do not count its sessions"): every command said so and parsed the whole log again. Read from its
    cache it is what it is read cold: a's prior Beta(3, 2) n 4, nothing else, and no note."""
    make_ws(tmp_path, LIBRARY)
    log = tmp_path / LOG_REL
    log.parent.mkdir(parents=True, exist_ok=True)
    prior = {"type": "prior", "timestamp": "2026-11-01T09:00:00Z", "arms": {"a.md": {"alpha": 3, "beta": 2, "n": 4}}}
    log.write_text(_line(prior))
    for _ in range(3):  # cold (writes the cache), then twice from it
        code, out, err = run_cli("status", "--json", "-w", str(tmp_path))
        assert code == 0 and err == "", err
        rows = {row["path"]: (row["alpha"], row["beta"], row["n"]) for row in json.loads(out)["lessons"]}
        assert rows["a.md"] == (3, 2, 4) and rows["b.md"] == (1, 1, 0)
    assert derived_cache.parts(tmp_path / CACHE_REL / DB_NAME)  # (the block of no session was cached)
