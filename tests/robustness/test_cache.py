"""The parsed-log cache: used only for an unchanged prefix of the log, and never changes a number."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log.cache import LogCache
from lesson_credit.core.log.columns import StoredChunk
from lesson_credit.core.log.store import EventLog, ReadResult
from lesson_credit.core.workspace import Workspace
from tests.robustness.hostile_helpers import make_ws
from tests.support.cli_run import run_process

LESSON = '---\nmatch:\n  keywords: ["alpha", "beta"]\n---\n# L\n'


@pytest.fixture(autouse=True)
def small_cache_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("lesson_credit.core.log.cache.MIN_NEW_BYTES", 0)


def _session(sid: str, reward: float | None, sal: float) -> str:
    return json.dumps(
        {
            "type": "session",
            "session_id": sid,
            "base_reward": reward,
            "category": "c" if sal > 0.5 else None,
            "lessons": [{"path": "a.md", "salience": sal}, {"path": "lessons/b.md", "salience": 1 - sal}],
        }
    )


def _make(tmp_path: Path, lines: list[str]) -> Workspace:
    (tmp_path / "lessons").mkdir(exist_ok=True)
    (tmp_path / "lessons" / "a.md").write_text(LESSON)
    (tmp_path / "lessons" / "b.md").write_text(LESSON)
    log = tmp_path / "state" / "lesson-thompson" / "sessions.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(line + "\n" for line in lines))
    return Workspace(tmp_path)


def _numbers(ws: Workspace) -> list[tuple[str, float, float, int]]:
    return [(r.path, r.alpha, r.beta, r.n) for r in ws.lesson_table().rows]


def _history(n: int) -> list[str]:
    lines = [_session(f"s{i}", (i % 10) / 10 if i % 7 else None, (i % 5) / 4) for i in range(n)]
    lines.insert(3, "not json")
    lines.append(json.dumps({"type": "grade", "session_id": "s7", "base_reward": 0.9, "grader": "manual"}))
    lines.append(
        json.dumps({"type": "selection", "session_id": "s1", "candidates": ["a.md"], "propensity": {"a.md": 0.4}})
    )
    lines.append(json.dumps({"type": "prior", "arms": {"c.md": {"alpha": 2, "beta": 3, "n": 4, "rewards": 1}}}))
    return lines


def test_cache_is_written_and_gives_the_same_numbers_as_parsing(tmp_path: Path) -> None:
    ws = _make(tmp_path, _history(50))
    expected = _numbers(ws)
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    cache = LogCache(ws.log)
    assert cache.path.exists()
    warm = Workspace(tmp_path)
    assert _numbers(warm) == expected
    assert [str(p) for p in warm.log_problems()] == [str(p) for p in ws.log_problems()]
    assert warm.sessions() == ws.sessions()
    assert warm.grade_history("s7") == ws.grade_history("s7")
    assert warm.candidacies() == ws.candidacies()
    cache.path.unlink()
    assert _numbers(Workspace(tmp_path)) == expected


def test_cache_only_parses_the_appended_tail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _make(tmp_path, _history(30))
    ws.data()  # the first read parses the log and writes the cache
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    assert LogCache(ws.log).path.exists()
    with ws.log.path.open("a") as handle:
        handle.write(_session("late", 0.7, 0.5) + "\n")
    reads: list[int] = []
    real = type(ws.log).read_chunks

    def spy(self: EventLog, start: int, first_line: int, **kwargs: Any) -> Iterator[ReadResult]:
        reads.append(start)
        return real(self, start, first_line, **kwargs)

    monkeypatch.setattr(type(ws.log), "read_chunks", spy)
    warm = Workspace(tmp_path)
    assert warm.session("late").base_reward == 0.7
    assert reads and reads[0] > 0  # started where the cache ended, not at byte 0
    assert _numbers(warm) == _numbers(Workspace(tmp_path, use_cache=False))
    assert warm.session("late").line == Workspace(tmp_path, use_cache=False).session("late").line


def test_a_session_id_the_cache_holds_appended_again_is_a_duplicate(tmp_path: Path) -> None:
    ws = _make(tmp_path, _history(30))
    ws.data()  # the first read parses the log and writes the cache
    assert isinstance(ws.log, EventLog) and LogCache(ws.log).path.exists()
    with ws.log.path.open("a") as handle:
        handle.write(_session("late", 0.7, 0.5) + "\n" + _session("s4", 0.1, 0.5) + "\n")
    warm, plain = Workspace(tmp_path), Workspace(tmp_path, use_cache=False)
    # lines: s0-s2, "not json" (4), s3 (5), s4 (6) ... s29 (31), a grade, a selection, a prior (34), late, s4 (36)
    problems = [str(p) for p in warm.log_problems()]
    assert "line 36: duplicate session 's4' (first on line 6; ignored)" in problems
    assert problems == [str(p) for p in plain.log_problems()]
    assert warm.session("s4").base_reward == 0.4  # its first record's: (4 % 10) / 10
    assert _numbers(warm) == _numbers(plain)


def test_a_replaced_log_invalidates_the_cache(tmp_path: Path) -> None:
    ws = _make(tmp_path, _history(30))
    ws.data()
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    original = ws.log.path.read_bytes()
    # Same length, different content near the end: the hash of the covered bytes must notice.
    changed = original.replace(b'"s29"', b'"x29"')
    assert len(changed) == len(original)
    ws.log.path.write_bytes(changed)
    fresh = Workspace(tmp_path)
    ids = [s.session_id for s in fresh.sessions()]
    assert "x29" in ids and "s29" not in ids


def test_a_corrupt_cache_is_ignored(tmp_path: Path) -> None:
    ws = _make(tmp_path, _history(20))
    expected = _numbers(ws)
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    assert LogCache(ws.log).path.exists()
    LogCache(ws.log).path.write_bytes(b"\x00garbage")
    assert _numbers(Workspace(tmp_path)) == expected


def test_lesson_cache_is_validated_by_file_stat(tmp_path: Path) -> None:
    from lesson_credit.core.library.lessons import load_library

    lib = tmp_path / "lessons"
    (lib / "t").mkdir(parents=True)
    (lib / "t" / "a.md").write_text(LESSON)
    (lib / "t" / "b.md").write_text("---\n- broken\n---\n# B\n")
    cache = tmp_path / "cache.msgpack"
    first = load_library(tmp_path, cache)
    assert cache.exists() and [x.id for x in first.lessons] == ["t/a.md"] and len(first.problems) == 1
    again = load_library(tmp_path, cache)
    assert again.lessons == first.lessons and again.problems == first.problems
    # an edit (other size) is seen; a new file is parsed; a deleted file is gone
    (lib / "t" / "a.md").write_text(LESSON.replace('"alpha", "beta"', '"gamma"'))
    (lib / "t" / "c.md").write_text(LESSON)
    (lib / "t" / "b.md").unlink()
    edited = load_library(tmp_path, cache)
    assert {x.id: x.keywords for x in edited.lessons} == {"t/a.md": ("gamma",), "t/c.md": ("alpha", "beta")}
    assert edited.problems == ()
    assert load_library(tmp_path, cache) == load_library(tmp_path)  # the cache changes nothing


@pytest.mark.parametrize("unreadable", ["link-to-proc-self-mem", "mode-000"])
def test_an_unreadable_lesson_path_leaves_the_lesson_cache_as_it_is(tmp_path: Path, unreadable: str) -> None:
    """A path the library lists that cannot be read was a cache miss at every command, and every command wrote
    .cache/lessons.msgpack again: /proc/self/mem's stat is another process's at each look, and a mode-000 file
    changed within the last two seconds is checked by content, which cannot be read. Its verdict is kept."""
    if unreadable == "link-to-proc-self-mem" and not Path("/proc/self/mem").exists():
        pytest.skip("no /proc")
    if unreadable == "mode-000" and os.geteuid() == 0:
        pytest.skip("root reads a mode-000 file")
    root = make_ws(tmp_path / "ws")
    (root / "state" / "lesson-thompson").mkdir(parents=True)  # (a folder of lessons alone keeps no caches)
    time.sleep(2.1)  # a.md no longer "changed just now" (by its ctime): else the first slow command after 2 s writes
    # the cache again to say so (CI, loaded, did)
    path = root / "lessons" / "bad.md"
    if unreadable == "mode-000":
        path.write_text(LESSON)
        path.chmod(0)
    else:
        path.symlink_to("/proc/self/mem")
    cache = root / "state" / "lesson-thompson" / ".cache" / "lessons.msgpack"
    first = run_process("status", cwd=root)  # a process of its own each: /proc/self is another process's
    assert first.returncode == 0 and "bad.md: cannot read" in first.stderr, first.stderr
    written = cache.stat().st_mtime_ns
    time.sleep(2.1)  # what a loaded machine does between two commands (CI wrote the cache again here)
    second = run_process("status", cwd=root)
    assert second.returncode == 0 and second.stderr == first.stderr
    assert cache.stat().st_mtime_ns == written  # not written again
    path.unlink()  # readable now: the lesson loads, the cache is written with it
    path.write_text(LESSON)
    third = run_process("status", "--json", cwd=root)
    assert "bad.md" in [row["path"] for row in json.loads(third.stdout)["lessons"]], third.stderr
    assert cache.stat().st_mtime_ns != written


def test_a_lesson_file_refused_to_this_user_leaves_the_lesson_cache_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mode-000 file (its read refused: what a user other than root meets) changed within the last two seconds
    is checked by content at each load, and the content cannot be read: every load wrote the cache again."""
    from lesson_credit.core.base.safe_read import read_regular
    from lesson_credit.core.library.lessons import load_library

    make_ws(tmp_path)
    time.sleep(2.1)  # a.md not "changed just now": a load over 2 s after it would write the cache again to say so
    (tmp_path / "lessons" / "bad.md").write_text(LESSON)

    def refused(path: Any, limit: int) -> bytes:
        if str(path).endswith("bad.md"):
            raise PermissionError(13, "Permission denied")
        return read_regular(path, limit)

    monkeypatch.setattr("lesson_credit.core.library.lessons.read_regular", refused)
    cache = tmp_path / "cache.msgpack"
    first = load_library(tmp_path, cache)
    assert [p.reason for p in first.problems] == ["cannot read: Permission denied"]
    written = cache.stat().st_mtime_ns
    assert load_library(tmp_path, cache) == first
    assert cache.stat().st_mtime_ns == written  # not written again


def test_a_same_size_edit_with_its_mtime_put_back_is_seen(tmp_path: Path) -> None:
    """An edit that keeps the size and restores the mtime (as `touch -r`, an editor or a sync tool can)
    still moves the file's ctime: the cached keywords are not used. Before: ("alpha", "beta") stayed."""
    from lesson_credit.core.library.lessons import load_library

    lesson_file = tmp_path / "lessons" / "a.md"
    lesson_file.parent.mkdir(parents=True)
    lesson_file.write_text(LESSON)
    cache = tmp_path / "cache.msgpack"
    assert load_library(tmp_path, cache).lessons[0].keywords == ("alpha", "beta")
    before = lesson_file.stat()
    lesson_file.write_text(LESSON.replace('"alpha", "beta"', '"gamma", "delt"'))  # the same length
    os.utime(lesson_file, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = lesson_file.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert load_library(tmp_path, cache).lessons[0].keywords == ("gamma", "delt")


def test_an_edit_in_the_same_tick_of_a_coarse_clock_is_seen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system whose clock has not ticked since the cache was written, an edit of the same size
    leaves the whole stat as it was: such a file is checked by its bytes (here every stat's times are
    frozen at one instant, the cache file's included)."""
    from lesson_credit.core.library import lessons

    real_stat = os.stat
    monkeypatch.setattr(os, "stat", lambda path, *a, **k: _Frozen(real_stat(path, *a, **k)))
    lesson_file = tmp_path / "lessons" / "a.md"
    lesson_file.parent.mkdir(parents=True)
    lesson_file.write_text(LESSON)
    cache = tmp_path / "cache.msgpack"
    assert lessons.load_library(tmp_path, cache).lessons[0].keywords == ("alpha", "beta")
    lesson_file.write_text(LESSON.replace('"alpha", "beta"', '"gamma", "delt"'))  # the same length
    assert lessons.load_library(tmp_path, cache).lessons[0].keywords == ("gamma", "delt")
    assert lessons.load_library(tmp_path, cache) == lessons.load_library(tmp_path)


class _Frozen:
    """A stat result whose times are one fixed instant (a clock that has not ticked)."""

    st_mtime_ns = st_ctime_ns = 1_700_000_000_000_000_000

    def __init__(self, real: os.stat_result) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def test_block_sums_come_from_the_cache_and_match_parsing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lesson_credit.core.log.snapshot as fold_mod

    monkeypatch.setattr(fold_mod, "BLOCK_ROWS", 8)
    ws = _make(tmp_path, _history(40))
    expected = _numbers(ws)  # parses, computes the block sums, writes them into the cache
    computed: list[int] = []
    real = fold_mod._block_sums

    def counting(data: fold_mod.FoldData, base: fold_mod.FloatArray, lo: int, hi: int) -> fold_mod.BlockSums:
        computed.append(lo)
        return real(data, base, lo, hi)

    monkeypatch.setattr(fold_mod, "_block_sums", counting)
    warm = Workspace(tmp_path)
    assert _numbers(warm) == expected  # exactly: the same sums in the same order
    assert [(r.rewarded, r.last_session) for r in warm.lesson_table().rows] == [
        (r.rewarded, r.last_session) for r in ws.lesson_table().rows
    ]
    assert computed == []  # nothing recomputed: every block came from the cache


def test_a_grade_saves_the_sums_of_the_block_it_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write folds the log after its append (for bandit-state.json); the block sums that fold computed
    are saved, so the next command does not sum the graded block again."""
    import lesson_credit.core.log.snapshot as fold_mod

    monkeypatch.setattr(fold_mod, "BLOCK_ROWS", 8)
    ws = _make(tmp_path, _history(40))
    _numbers(ws)  # writes the cache (and the sums)
    # the cache is read, but a grade's line is too little to rewrite it (as on a big log)
    Workspace(tmp_path, cache_threshold=1000).grade("s20", 0.35)  # s20: row 20 (of block 2, rows 16-23)
    expected = _numbers(Workspace(tmp_path, use_cache=False))
    computed: list[int] = []
    real = fold_mod._block_sums

    def counting(data: fold_mod.FoldData, base: fold_mod.FloatArray, lo: int, hi: int) -> fold_mod.BlockSums:
        computed.append(lo)
        return real(data, base, lo, hi)

    monkeypatch.setattr(fold_mod, "_block_sums", counting)
    warm = Workspace(tmp_path, cache_threshold=1000)
    assert _numbers(warm) == expected
    assert computed == []  # the graded block's sums came from the cache too


def test_a_resaved_cache_keeps_columns_it_never_decoded(tmp_path: Path) -> None:
    ws = _make(tmp_path, _history(30))
    sessions, problems = ws.sessions(), [str(p) for p in ws.log_problems()]
    warm = Workspace(tmp_path)
    warm.grade("s3", 0.4)  # decodes what a grade needs (ids, grades), re-saves the rest as read
    assert isinstance(warm.log, EventLog)
    assert LogCache(warm.log).load() is not None
    third = Workspace(tmp_path)
    cold = Workspace(tmp_path, use_cache=False)
    assert third.sessions() == cold.sessions()
    assert [s for s in third.sessions() if s.session_id != "s3"] == [s for s in sessions if s.session_id != "s3"]
    assert third.session("s3").base_reward == 0.4
    assert [str(p) for p in third.log_problems()] == problems
    assert _numbers(third) == _numbers(cold)


def test_string_columns_are_settled_as_tuples_the_collector_does_not_walk(tmp_path: Path) -> None:
    import gc

    _make(tmp_path, _history(30)).data()  # parses (and settles), writes the cache
    warm = Workspace(tmp_path)
    warm.data()
    assert isinstance(warm.log, EventLog)
    index = warm._reader.index
    ids = list(index.session_ids)  # decodes the cached chunk of ids
    decoded = [chunk.items() for chunk in index.session_ids._chunks]
    assert decoded and all(isinstance(items, tuple) for items in decoded)
    gc.collect()
    assert not any(gc.is_tracked(items) for items in decoded)  # only strings, numbers and None
    with warm.log.path.open("a") as handle:
        handle.write(_session("late", 0.5, 0.5) + "\n")
    warm.refresh()  # appends, then settles again (this module's threshold is 0 bytes)
    assert list(index.session_ids) == [*ids, "late"] and index.session_ids.tail() == []
    assert warm.session("late").base_reward == 0.5
    last = index.session_ids._chunks[-1].items()
    gc.collect()  # the collector stops tracking such a tuple the first time it looks at it
    assert isinstance(last, tuple) and not gc.is_tracked(last)


def test_a_snapshot_reads_one_row_of_the_cached_columns_without_decoding_them(tmp_path: Path) -> None:
    _make(tmp_path, _history(30)).data()  # parses, writes the cache
    warm = Workspace(tmp_path)
    snapshot = warm.data()
    index = warm._reader.index
    # s7's grade event is in force; the rest say nothing: heuristic or pending
    assert (snapshot.grader(7), snapshot.grader(1), snapshot.grader(0)) == ("manual", "heuristic", None)
    assert all(isinstance(c, StoredChunk) and c._items is None for c in index.session_graders._chunks)  # one item each
    assert all(isinstance(chunk, StoredChunk) and chunk._items is None for chunk in index.grades._chunks)
    graders = snapshot.graders
    assert graders[7] == "manual" and graders[1] == "heuristic" and graders[0] is None
    assert snapshot.grader_source._recorded is index.session_graders  # the index's own column, not a copy
    assert index.grades[0][1].grader == "manual"


def test_the_sessions_other_tools_counted_come_back_from_the_cache(tmp_path: Path) -> None:
    """gptme's total_sessions as the log says it: graded sessions, the most a prior event names, and every
    increments event's, the same read from the cache as parsed."""
    arms = {"c.md": {"alpha": 2, "beta": 3, "n": 4, "rewards": 1}}
    lines = _history(20) + [
        json.dumps({"type": "prior", "arms": arms, "sessions": 40}),
        json.dumps({"type": "prior", "arms": arms, "sessions": 25}),
        json.dumps({"type": "prior", "increments": True, "source": "gptme-bandit", "arms": arms, "sessions": 3}),
        json.dumps({"type": "prior", "increments": True, "source": "gptme-bandit", "arms": arms, "sessions": 2}),
    ]
    ws = _make(tmp_path, lines)
    # s0..s19 pending where i % 7 == 0 (s0, s7, s14), s7 graded later: 18 graded; + max(40, 25) + 3 + 2
    assert ws.posterior().total_sessions == 63
    assert isinstance(ws.log, EventLog)  # the workspace's JSONL file
    assert LogCache(ws.log).path.exists()
    assert Workspace(tmp_path).posterior().total_sessions == 63


def test_what_exports_wrote_comes_back_from_the_cache(tmp_path: Path) -> None:
    """An export event's numbers, and those a later import of that file saw changed (its increments
    event's `seen`), read from the cache as parsed: the base of the next import of that file."""
    exported = {"a.md": {"alpha": 1.5, "beta": 2.0, "n": 1, "rewards": 0}, "b.md": {"alpha": 1, "beta": 1, "n": 0}}
    seen = {"path": "/x.json", "created": "c", "arms": {"b.md": {"alpha": 2, "beta": 1, "n": 1, "rewards": 1}}}
    added = {"b.md": {"alpha": 1, "beta": 0, "n": 1, "rewards": 1}}
    lines = _history(20) + [
        json.dumps({"type": "export", "path": "/x.json", "created": "c", "arms": exported, "sessions": 18}),
        json.dumps(
            {"type": "prior", "increments": True, "arms": added, "sessions": 1, "seen": {**seen, "sessions": 19}}
        ),
    ]
    ws = _make(tmp_path, lines)
    numbers = _numbers(ws)
    # a.md as exported; b.md from Beta(1, 1) n 0 to the Beta(2, 1) n 1 the import saw; 18 + 1 sessions
    expected = ({"a.md": (1.5, 2.0, 1, 0), "b.md": (2.0, 1.0, 1, 1)}, 19)

    def holds(_: object) -> bool:
        return True

    parsed = ws._reader.index.exports.base("c", "/elsewhere.json", holds)  # (found by `created`: a copy)
    assert parsed is not None and (parsed[0].arms, parsed[0].sessions) == expected and parsed[1] == {"b.md"}
    # a copy that does not hold what the import of /x.json saw: the export's numbers
    unseen = ws._reader.index.exports.base("c", "/elsewhere.json", lambda _: False)
    assert unseen is not None and (unseen[0].arms, unseen[0].sessions) == ({**expected[0], "b.md": (1, 1, 0, 0)}, 18)
    assert isinstance(ws.log, EventLog) and LogCache(ws.log).path.exists()
    again = Workspace(tmp_path)
    assert _numbers(again) == numbers
    cached = again._reader.index.exports.base("c", "/x.json", lambda _: False)  # (its own: whatever it holds)
    assert cached is not None and (cached[0].arms, cached[0].sessions) == expected


def test_what_increments_saw_of_a_file_no_export_wrote_comes_back_from_the_cache(tmp_path: Path) -> None:
    """Two increments events logged from the workspace's own file (gptme's bandit saving twice under one
    `created`): the numbers each saw, the later's for a key both changed, read from the cache as parsed."""
    own = "/ws/state/lesson-thompson/bandit-state.json"
    first = {
        "a.md": {"alpha": 2, "beta": 1, "n": 1, "rewards": 1},
        "b.md": {"alpha": 1.5, "beta": 1.5, "n": 1, "rewards": 0},
    }
    second = {"a.md": {"alpha": 2.5, "beta": 1.5, "n": 2, "rewards": 1}}
    added = {"a.md": {"alpha": 1, "beta": 0, "n": 1, "rewards": 1}}
    lines = _history(20) + [
        json.dumps({"type": "prior", "increments": True, "arms": added, "sessions": 1,
                    "seen": {"path": own, "created": "c", "arms": first, "sessions": 5}}),
        json.dumps({"type": "prior", "increments": True, "arms": added, "sessions": 1,
                    "seen": {"path": own, "created": "c", "arms": second, "sessions": 6}}),
    ]  # fmt: skip
    ws = _make(tmp_path, lines)
    ws.posterior()  # (the log read)
    # a.md the second's, b.md the first's; the second's count
    expected = ({"a.md": (2.5, 1.5, 2, 1), "b.md": (1.5, 1.5, 1, 0)}, 6)
    parsed = ws._reader.index.exports.saved("c", own)
    assert parsed is not None and (parsed.arms, parsed.sessions) == expected
    assert ws._reader.index.exports.saved("c", "/elsewhere.json") is None  # (by path: no export's)
    assert isinstance(ws.log, EventLog) and LogCache(ws.log).path.exists()
    again = Workspace(tmp_path)
    again.posterior()
    cached = again._reader.index.exports.saved("c", own)
    assert cached is not None and (cached.arms, cached.sessions) == expected


def test_the_sessions_of_files_told_apart_by_created_come_back_from_the_cache(tmp_path: Path) -> None:
    """Two gptme agents' files naming the same arms, told apart by their `created`, then the first imported
    again: the same count read from the cache as parsed."""
    arms = {"c.md": {"alpha": 2, "beta": 3, "n": 4, "rewards": 1}}
    lines = _history(20) + [
        json.dumps({"type": "prior", "arms": arms, "sessions": 40, "created": "agent a"}),
        json.dumps({"type": "prior", "arms": arms, "sessions": 7, "created": "agent b"}),
        json.dumps({"type": "prior", "arms": arms, "sessions": 41, "created": "agent a"}),
    ]
    ws = _make(tmp_path, lines)
    # 18 graded (as above); agent a's latest 41 and agent b's 7
    assert ws.posterior().total_sessions == 66
    assert isinstance(ws.log, EventLog) and LogCache(ws.log).path.exists()
    assert Workspace(tmp_path).posterior().total_sessions == 66


def _state(value: object) -> object:
    """What an accumulator holds, comparable with ==: its attributes (a class of its own), else itself."""
    if hasattr(value, "__dict__"):
        return vars(value)
    slots = getattr(type(value), "__slots__", None)
    return tuple(getattr(value, name) for name in slots) if isinstance(slots, tuple) else value


def test_every_accumulator_of_the_index_comes_back_from_the_cache(tmp_path: Path) -> None:
    """What the index accumulates beside its columns (priors, increments and when each was logged, the files'
    counts, exports, retirements, problems, grades), read from the cache as parsed. And nothing else the index
    holds is left out of the head: every attribute is an accumulator the head names, a column its blocks hold, or
    one of those listed here (restored from the arms, the blocks or the sums, or computed again)."""
    from lesson_credit.core.log.cache import ACCUMULATORS
    from lesson_credit.core.log.columns import Column, Objects, RowMap
    from lesson_credit.core.log.index import LogIndex

    arms = {"c.md": {"alpha": 2, "beta": 3, "n": 4, "rewards": 1}}
    seen = {"path": "/x.json", "created": "c", "arms": arms, "sessions": 19}
    lines = _history(20) + [
        _session("s1", 0.5, 0.5),  # a duplicate: a problem naming its session
        json.dumps({"type": "prior", "arms": arms, "sessions": 40, "created": "agent a"}),
        json.dumps({"type": "prior", "increments": True, "arms": arms, "sessions": 1, "seen": seen}),
        json.dumps({"type": "export", "path": "/x.json", "created": "c", "arms": arms, "sessions": 18}),
        json.dumps({"type": "retire", "retired": ["c.md"]}),
        json.dumps({"type": "grade", "session_id": "s3", "base_reward": 0.2, "grader": "llm judge"}),
    ]
    ws = _make(tmp_path, lines)
    ws.posterior()
    parsed = ws._reader.index
    assert isinstance(ws.log, EventLog) and LogCache(ws.log).path.exists()
    again = Workspace(tmp_path)
    again.posterior()
    cached = again._reader.index
    assert cached.parts and cached.end == parsed.end  # (read from the cache)
    for name in ACCUMULATORS:
        assert _state(getattr(cached, name)) == _state(getattr(parsed, name)), name
    assert any(p.session_id == "s1" for p in cached.problems) and cached.retired and len(cached.grade_rows) == 2
    assert len(cached.prior_steps) == 2 and len(cached.increment_steps) == 1 and cached.exports
    others = {"arm_ids", "arm_index", "unicode_arms", "_logged", "_spelled", "_raw_arm", "end", "lines", "blocks"}
    others |= {"lookup", "selection_chunks", "parts", "_scored"}
    for name, value in vars(LogIndex()).items():
        assert name in ACCUMULATORS or name in others or isinstance(value, Column | Objects | RowMap), name


@pytest.mark.parametrize("planted", ["int", "list"])
def test_a_head_whose_grades_are_not_bytes_is_not_read(tmp_path: Path, planted: str) -> None:
    """The head is sealed by a checksum, not a signature: a writer of another build that stored a grade array as
    a number or a list of numbers (bytes(16) and bytes([0] * 16) are both 16 zero bytes) had every grade read as
    session 0's (a review: context-budget-management read alpha 5.399 for 5.2238). Refused and derived again."""
    import msgspec

    from lesson_credit.core.base.sealed import seal, unseal
    from lesson_credit.core.log.cache import CACHE_MAGIC
    from tests.support import derived_cache

    lines = _history(20) + [json.dumps({"type": "grade", "session_id": "s3", "base_reward": 0.2, "grader": "b"})]
    ws = _make(tmp_path, lines)
    want = _numbers(ws)
    assert isinstance(ws.log, EventLog)
    db = LogCache(ws.log).path
    assert db.exists()
    head = msgspec.msgpack.decode(unseal(CACHE_MAGIC, derived_cache.meta(db)["head"]))
    size = len(head["grade_rows"])  # 2 grades: 16 bytes of row numbers
    assert size == 16
    head["grade_rows"] = size if planted == "int" else [0] * size
    derived_cache.put_meta(db, "head", seal(CACHE_MAGIC, msgspec.msgpack.encode(head)))
    assert _numbers(Workspace(tmp_path)) == want
