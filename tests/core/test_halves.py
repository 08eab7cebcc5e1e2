"""A big log read from its start on two cores (core/log/halves.py): the child's half, appended, gives the
index that one process reading in order gives, and whatever goes wrong with the child leaves the read to
this process. The threshold is lowered so that a small log takes the two-core path."""

from __future__ import annotations

import json
import math
import os
import pickle
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lesson_credit.core.log import halves
from lesson_credit.core.log.store import EventLog
from lesson_credit.core.log.stores import open_store
from lesson_credit.core.model.settings import CreditSettings
from lesson_credit.core.reader import LogReader
from tests.support import derived_cache
from tests.support.derived_cache import DB_NAME
from tests.support.engine_helpers import grade, session


def varied_log(path: Path, *, repeat: str | None = None, prior: bool = False) -> int:
    """40 sessions (every 7th with a string outcome, every 5th with a propensity and a lesson pulled in
    during it, every 11th with a lesson without salience), grades of earlier and of later sessions, a
    selection, lessons first named in the second half (one under two spellings of one id). `repeat`: the
    last session repeats that id; `prior`: a prior event near the end. Returns the log's size."""
    events: list[dict[str, Any]] = []
    for i in range(40):
        lessons: dict[str, float | None] = {f"t/l{i % 6}.md": 0.5, f"t/l{(i * 3) % 9}.md": 0.25}
        if i >= 30:
            lessons["lessons/t/late.md" if i % 2 else "t/late.md"] = 0.75
        if i % 11 == 3:
            lessons["t/bare.md"] = None
        record = session(f"s{i:02d}", None if i % 4 == 0 else (i % 10) / 10, lessons, category=f"c{i % 3}")
        if i % 7 == 2:
            del record["base_reward"]
            record["outcome"] = "productive"
        if i % 5 == 1:
            record["lessons"][0]["propensity"] = 0.4
            record["lessons"][-1]["included"] = "during"
        events.append(record)
        if i % 6 == 5:
            events.append(grade(f"s{i - 3:02d}", 0.9, grader="llm judge"))
            events.append(grade(f"s{i + 2:02d}", 0.1))  # before its session
    events.append({"type": "selection", "session_id": "s38", "candidates": ["t/l1.md"], "selected": ["t/l1.md"]})
    if prior:
        events.insert(len(events) - 3, {"type": "prior", "arms": {"t/l1.md": {"alpha": 2.0, "beta": 3.0}}})
    if repeat is not None:
        events.append(session(repeat, 0.5, {"t/l0.md": 0.5}))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join((json.dumps(event) + "\n").encode() for event in events))
    return path.stat().st_size


def read(path: Path, tmp_path: Path, *, parallel: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[LogReader, int]:
    """A reader of `path` after one refresh, and how many children were started."""
    started: list[halves.Half] = []
    original = halves.start

    def start(*args: Any) -> halves.Half | None:
        half = original(*args)
        if half is not None:
            started.append(half)
        return half

    monkeypatch.setattr(halves, "start", start)
    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 0 if parallel else 1 << 62)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # (a test runner's threads do not read the log)
    monkeypatch.setattr(halves, "idle_core", lambda: True)  # however busy the machine running the tests
    reader = LogReader(open_store(None, path), cache_dir=tmp_path / "cache", use_cache=False)
    reader.refresh(CreditSettings())
    return reader, len(started)


def state(reader: LogReader) -> dict[str, Any]:
    """Everything a read leaves in the index that the commands use, as plain values."""
    index = reader.index
    data = reader.data()
    rows = [int(r) for r in index.grade_rows]
    return {
        "sessions": [reader.session(row) for row in range(index.n_sessions)],
        "arms": list(index.arm_ids),
        "lines": index.session_lines.tolist(),
        "offsets": index.session_offsets.tolist(),
        "entries": (index.entry_arm.tolist(), index.entry_salience.tolist(), index.entry_session.tolist()),
        "labels": reader.outcome_labels(),
        # a grade's row is known when read or looked up later (-1): either way the same session
        "grades": [
            (line, g, r if r >= 0 else reader.row_of(g.session_id))
            for (line, g), r in zip(index.grades, rows, strict=True)
        ],
        "selections": reader.selections(),
        "problems": reader.problems(data),
        "base": [None if math.isnan(value) else value for value in data.base.tolist()],
        "during": data.during.tolist(),
        "read": (index.end, index.lines, reader._prefix.hasher.hexdigest()),
        "raw_arms": dict(index._raw_arm),
    }


def test_two_halves_read_as_one_process_reads_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "sessions.jsonl"
    size = varied_log(log)
    serial, children = read(log, tmp_path, parallel=False, monkeypatch=monkeypatch)
    assert children == 0
    both, children = read(log, tmp_path, parallel=True, monkeypatch=monkeypatch)
    assert children == 1
    assert state(both) == state(serial)
    # the log as written: 40 sessions, 6 + 6 grades, a selection: 53 lines; 9 arms (l0-l5 from i % 6, l0, l3,
    # l6 from 3i % 9, bare, late), the late one's two spellings one arm, the last named first
    assert both.index.n_sessions == 40 and both.index.lines == 53 and both.index.end == size
    assert len(both.index.arm_ids) == 9 and both.index.arm_ids[-1] == "t/late.md"
    assert both.index.session_lines[-1] == 52  # s39's line: 40 sessions and 12 grades before the selection
    late_entries = np.flatnonzero(both.index.entry_arm.view() == both.index.arm_ids.index("t/late.md"))
    assert len(late_entries) == 10  # sessions 30..39, whichever spelling


def test_the_read_goes_on_after_the_two_halves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's half kept as it came (a chunk of its own): sessions read on after it, their grades and
    a duplicate of a second-half id, are what one process reading in order gives."""
    log = tmp_path / "sessions.jsonl"
    varied_log(log)
    readers = {}
    for parallel in (False, True):
        reader, children = read(log, tmp_path / str(parallel), parallel=parallel, monkeypatch=monkeypatch)
        assert children == int(parallel)
        readers[parallel] = reader
    more = [session("s40", 0.5, {"t/l0.md": 0.5}, category="c1"), grade("s35", 0.3), session("s33", 0.5, {})]
    with log.open("a") as handle:
        handle.write("".join(json.dumps(event) + "\n" for event in more))
    for reader in readers.values():
        reader.refresh(CreditSettings())
    serial, both = state(readers[False]), state(readers[True])
    assert both == serial
    assert len(both["sessions"]) == 41 and both["sessions"][40].category == "c1"  # s40 after the 40 read before
    # s33: 33 sessions and 5 x 2 grades (after s05, s11, ..., s29) before it: line 44; 53 lines, then 3 more
    assert [str(p) for p in both["problems"]] == ["line 56: duplicate session 's33' (first on line 44; ignored)"]


def test_no_child_to_be_had_reads_in_one_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "sessions.jsonl"
    varied_log(log)
    serial, _ = read(log, tmp_path, parallel=False, monkeypatch=monkeypatch)

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    both, children = read(log, tmp_path, parallel=True, monkeypatch=monkeypatch)
    assert children == 0
    assert state(both) == state(serial)


@pytest.mark.parametrize(
    "kind",
    ["child fails", "result cut off", "digests differ", "a session id of the first half again", "a prior event"],
)
def test_whatever_goes_wrong_the_second_half_is_read_in_order(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "sessions.jsonl"
    varied_log(log, repeat="s03" if kind.startswith("a session") else None, prior=kind == "a prior event")
    serial, _ = read(log, tmp_path, parallel=False, monkeypatch=monkeypatch)
    if kind == "child fails":  # (forked: the child runs the patched function)
        monkeypatch.setattr(halves, "_child", lambda *args: 1 // 0)
    if kind == "result cut off":  # the child's index written only in part (its digest whole)
        dump = pickle.dump
        monkeypatch.setattr(pickle, "dump", lambda obj, file, **kw: file.write(pickle.dumps(obj, **kw)[:-9]))
        assert dump is not pickle.dump
    if kind == "digests differ":  # as if the log had been replaced between the two reads
        monkeypatch.setattr(halves.Half, "_digest", lambda self, fed: 12345)
    taken: list[bool] = []
    take = halves.Half.take

    def taking(half: halves.Half, *args: Any) -> Any:
        result = take(half, *args)
        taken.append(result is not None)
        return result

    monkeypatch.setattr(halves.Half, "take", taking)
    both, children = read(log, tmp_path, parallel=True, monkeypatch=monkeypatch)
    assert children == 1 and taken == [False]
    assert state(both) == state(serial)
    problems = [str(p) for p in both.problems(both.data())]
    if kind.startswith("a session"):
        assert problems == ["line 54: duplicate session 's03' (first on line 4; ignored)"]  # 53 lines, then it
    else:
        assert problems == []


def test_a_small_log_or_a_later_start_is_read_in_one_process(tmp_path: Path) -> None:
    log = tmp_path / "sessions.jsonl"
    size = varied_log(log)
    store = open_store(None, log)
    assert halves.start(store, 0, size) is None  # below PARALLEL_MIN_BYTES
    assert halves.start(store, 100, halves.PARALLEL_MIN_BYTES) is None  # not from the start
    assert halves.start(object(), 0, halves.PARALLEL_MIN_BYTES) is None  # not the log file


def test_the_child_reads_the_smaller_share_from_a_line_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process reads up to the first line start from 52/100 of the log (the child's half also ends
    with writing its index), the child from there to the end of the last whole line."""
    log = tmp_path / "sessions.jsonl"
    log.write_bytes(b"123456789\n" * 100 + b"unfinished")  # 1,010 bytes: 100 lines of 10, then 10 more
    monkeypatch.setattr(halves, "FIRST_SHARE", 52)
    # 1010 * 52 // 100 = 525, inside the line at 520..529: the next starts at 530; the last whole line ends at 1000
    assert halves._split_points(EventLog(log), 1010) == (530, 1000)


@pytest.mark.parametrize(
    ("cores", "loadavg", "idle"),
    [
        ({0, 1}, "0.30 0.20 0.10 1/180 4242", True),  # this process alone running: the second core is free
        ({0, 1}, "1.90 1.20 0.80 2/180 4242", False),  # another running too
        ({0, 1, 2, 3}, "2.10 2.00 1.90 3/180 4242", True),
        ({0}, "0.00 0.00 0.00 1/180 4242", False),  # one core
    ],
)
def test_a_second_process_only_with_an_idle_core(
    cores: set[int], loadavg: str, idle: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: cores, raising=False)
    (tmp_path / "loadavg").write_text(loadavg + "\n")
    assert halves.idle_core(str(tmp_path / "loadavg")) is idle


def test_a_child_helping_gives_what_this_process_alone_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(halves, "idle_core", lambda: True)
    parent = os.getpid()
    items = list(range(7))  # the child computes the last 4 (7 // 2 = 3 here)
    squares = [0, 1, 4, 9, 16, 25, 36]
    where: list[int] = []

    def square(x: int) -> int:
        where.append(x)  # (only this process's calls are seen here)
        return x * x

    assert list(halves.map_halves(square, items)) == squares
    assert where == [0, 1, 2]  # the other four came from the child

    def failing(x: int) -> int:  # the child dies after its first result: the rest is computed here
        if os.getpid() != parent and x > 3:
            os._exit(3)
        return x * x

    assert list(halves.map_halves(failing, items)) == squares

    def no_fork() -> int:
        raise BlockingIOError(11, "Resource temporarily unavailable")

    with monkeypatch.context() as patched:  # no child to be had: every square computed here, in order
        patched.setattr(os, "fork", no_fork)
        where.clear()
        assert list(halves.map_halves(square, items)) == squares and where == items
    monkeypatch.setattr(halves, "idle_core", lambda: False)
    where.clear()
    assert list(halves.map_halves(square, items)) == squares and where == items


def test_the_helping_child_writes_its_results_while_this_process_works(monkeypatch: pytest.MonkeyPatch) -> None:
    """Results far bigger than a pipe holds (64 KB): the child has written them all and exited while
    this process computes its own share and runs `meanwhile`."""
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(halves, "idle_core", lambda: True)
    children: list[int] = []
    mapper = halves._Mapper.__init__

    def counted(self: Any, *args: Any) -> None:
        mapper(self, *args)
        children.append(self.pid)

    monkeypatch.setattr(halves._Mapper, "__init__", counted)
    seen: list[str] = []

    def meanwhile() -> None:
        seen.append("meanwhile")
        for _ in range(6000):  # up to a minute: the child's work is a few milliseconds
            if os.waitid(os.P_PID, children[0], os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                seen.append("the child is done")
                return

            time.sleep(0.01)

    def blob(x: int) -> bytes:
        return bytes([x]) * (1 << 20)

    results = list(halves.map_halves(blob, range(5), meanwhile))
    assert [len(r) for r in results] == [1 << 20] * 5 and [r[-1] for r in results] == [0, 1, 2, 3, 4]
    assert seen == ["meanwhile", "the child is done"] and len(children) == 1


def test_the_cache_written_on_two_cores_is_the_one_written_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("lesson_credit.core.log.snapshot.BLOCK_ROWS", 8)  # 40 sessions: 5 blocks
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    log = tmp_path / "sessions.jsonl"
    varied_log(log)
    children: list[int] = []
    mapper = halves._Mapper.__init__

    def counted(self: Any, *args: Any) -> None:
        mapper(self, *args)
        children.append(self.pid)

    monkeypatch.setattr(halves._Mapper, "__init__", counted)
    written = []
    for idle in (False, True):
        monkeypatch.setattr(halves, "idle_core", lambda idle=idle: idle)
        cache = tmp_path / f"cache-{idle}"
        LogReader(open_store(None, log), cache_dir=cache, cache_threshold=0).refresh(CreditSettings())
        written.append((derived_cache.parts(cache / DB_NAME), derived_cache.meta(cache / DB_NAME)))
    assert len(children) == 1 and children[0] > 0  # one child, for the second save
    assert len(written[0][0]) == 5 and written[1] == written[0]


def test_the_child_finishes_its_half_without_waiting_for_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its result (far more than a pipe holds: 64 KB) is written while this process still reads its own
    half; it is then taken as it would have been."""
    log = tmp_path / "sessions.jsonl"
    events = [session(f"long-session-id-{i:05d}", 0.5, {f"t/l{i % 50}.md": 0.5}) for i in range(4000)]
    log.write_bytes(b"".join((json.dumps(event) + "\n").encode() for event in events))
    monkeypatch.setattr(halves, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(threading, "active_count", lambda: 1)
    monkeypatch.setattr(halves, "idle_core", lambda: True)
    store = open_store(None, log)
    half = halves.start(store, 0, log.stat().st_size)
    assert half is not None
    try:
        for _ in range(6000):  # up to a minute: the child's work is a few milliseconds
            if os.waitid(os.P_PID, half.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                break
            time.sleep(0.01)
        else:
            pytest.fail("the child is still waiting for this process to read its result")
        data = half._collect()
        assert data is not None and len(data) > 1 << 16
    finally:
        half.close()


def test_sessions_another_tool_counted_in_the_second_half_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An increments event naming no arm (gptme's bandit counted sessions that moved no arm) in the child's
    half: its sessions count as when one process reads in order. The child's part left them out."""
    log = tmp_path / "sessions.jsonl"
    varied_log(log)
    counted = {"type": "prior", "increments": True, "source": "gptme-bandit", "arms": {}, "sessions": 2}
    with log.open("a") as handle:
        handle.write(json.dumps(counted) + "\n")
    totals = []
    for parallel in (False, True):
        reader, children = read(log, tmp_path / str(parallel), parallel=parallel, monkeypatch=monkeypatch)
        assert children == int(parallel)
        totals.append(reader.data().counted_sessions)
    assert totals == [2, 2]  # the event's 2, on either path
