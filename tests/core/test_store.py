"""The log on disk (docs/format.md §5, §7): tolerant reads, tail repair, incremental refresh, bandit-state.json."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.fold import CreditSettings
from lesson_credit.core.base.files import atomic_write
from lesson_credit.core.log.store import EventLog, ReadResult, StoreError, parse_chunk
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, STATE_REL, fixed_clock, grade, row_of, session

A, B = "tools/a.md", "tools/b.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active")}


def ws_at(root: Path) -> Workspace:
    return Workspace(root, clock=fixed_clock)


# ---------------------------------------------------------------- tolerant reads


def test_corrupt_lines_reported_with_line_numbers_and_skipped(
    tmp_path: Path, make_workspace: Callable[..., Path]
) -> None:
    root = make_workspace(
        tmp_path,
        lessons=LESSONS,
        events=[
            session("s1", 1.0, {A: 1.0}),  # line 1
            "this is not json\n",  # line 2
            "[1, 2, 3]\n",  # line 3: JSON, not an event
            '{"type": "bogus", "session_id": "x"}\n',  # line 4: unknown kind
            json.dumps(session("s2", 1.0, {A: 1.5})) + "\n",  # line 5: salience out of range
            "\n",  # line 6: blank lines are fine
            '{"type": "grade", "session_id": "s1"}\n',  # line 7: grade without a reward
            json.dumps(session("s3", 0.0, {B: 0.0})) + "\n",  # line 8
        ],
    )
    ws = ws_at(root)
    problems = ws.log_problems()
    assert [p.line for p in problems] == [2, 3, 4, 5, 7]
    reasons = {p.line: p.reason for p in problems}
    assert "JSON" in reasons[2]
    assert "bogus" in reasons[4]
    assert "salience" in reasons[5] and "1.5" in reasons[5]
    assert "base_reward" in reasons[7]
    assert [s.session_id for s in ws.sessions()] == ["s1", "s3"]
    assert [s.line for s in ws.sessions()] == [1, 8]
    # s1 (seed, salience 1, base 1) -> A (2, 1); s3 (salience 0, base 0) -> B (1, 2)
    table = ws.lesson_table()
    a, b = table.row(A), table.row(B)
    assert a is not None and b is not None
    assert (a.alpha, a.beta, a.n) == pytest.approx((2.0, 1.0, 1))
    assert (b.alpha, b.beta, b.n) == pytest.approx((1.0, 2.0, 1))


def test_out_of_range_base_reward_is_a_bad_line(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.2, {A: 1.0})])
    ws = ws_at(root)
    assert [p.line for p in ws.log_problems()] == [1]
    assert ws.sessions() == []


def test_truncated_last_line_reported_then_next_append_starts_fresh(
    tmp_path: Path, make_workspace: Callable[..., Path]
) -> None:
    partial = json.dumps(session("s2", 0.0, {A: 1.0}))[:30]
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0}), partial])
    ws = ws_at(root)
    problems = ws.log_problems()
    assert len(problems) == 1
    assert problems[0].line == 2 and "truncated" in problems[0].reason
    ws.grade("s1", 0.0)
    lines = (root / LOG_REL).read_bytes().split(b"\n")
    # the torn event (never acknowledged) is cut off under the lock and kept aside ...
    assert (root / LOG_REL).with_name("sessions.jsonl.torn").read_bytes() == partial.encode() + b"\n"
    assert json.loads(lines[1])["type"] == "grade"  # ... and the grade takes its place
    assert lines[2] == b""
    fresh = ws_at(root)
    assert fresh.log_problems() == []
    # the regrade folds: seed, salience 1, base 0 -> A = (1, 2)
    row = fresh.lesson_table().row(A)
    assert row is not None and (row.alpha, row.beta, row.n) == pytest.approx((1.0, 2.0, 1))
    # the first object saw the same after its own write
    row = ws.lesson_table().row(A)
    assert row is not None and (row.alpha, row.beta) == pytest.approx((1.0, 2.0))


@pytest.mark.smoke
def test_truncated_last_line_then_record(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(
        tmp_path,
        lessons=LESSONS,
        events=[session("s1", 1.0, {A: 1.0}), '{"type": "grade", "sess'],
        journals={"j.txt": "alpha only"},
    )
    ws = ws_at(root)
    ws.record("s2", root / "j.txt", [A, B], reward=1.0)
    fresh = ws_at(root)
    assert [s.session_id for s in fresh.sessions()] == ["s1", "s2"]
    assert [s.line for s in fresh.sessions()] == [1, 2]  # the torn grade was cut off
    assert fresh.log_problems() == []
    # s1: A (2, 1); s2: A salience 1 -> (3, 1); B salience 0, w 0.3, r 0.3 -> (1.3, 1.7)
    table = fresh.lesson_table()
    assert (row_of(table, A).alpha, row_of(table, A).beta) == pytest.approx((3.0, 1.0))
    assert (row_of(table, B).alpha, row_of(table, B).beta) == pytest.approx((1.3, 1.7))


def test_parse_chunk_consumes_unterminated_valid_last_line() -> None:
    data = (json.dumps(session("s1", 1.0, {A: 1.0})) + "\n" + json.dumps(grade("s1", 0.5))).encode()
    result = parse_chunk(data, 0, 1, at_eof=True)
    assert [line for line, _ in result.events] == [1, 2]
    assert result.end == len(data) and result.lines == 2
    assert result.tail_problem is None


def test_line_numbers_after_unterminated_valid_last_line(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    # the next append puts a newline first; the reader that consumed the unterminated line
    # must not count that newline as a line of its own
    s2 = json.dumps(session("s2", 1.0, {A: 1.0}))  # valid, but the writer forgot the newline
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0}), s2])
    ws = ws_at(root)
    assert [s.line for s in ws.sessions()] == [1, 2]
    ws.grade("s1", 0.5)
    # the file now has 3 lines; the grade is on line 3 for any reader
    assert (root / LOG_REL).read_bytes().count(b"\n") == 3
    assert [g.line for g in ws_at(root).grade_history("s1")] == [1, 3]
    assert [g.line for g in ws.grade_history("s1")] == [1, 3]
    # a later append by another object: still counted from the right line
    ws_at(root).grade("s1", 0.7)
    assert ws.refresh() is True
    assert [g.line for g in ws.grade_history("s1")] == [1, 3, 4]


def test_append_refuses_multi_line_events(tmp_path: Path) -> None:
    log = EventLog(tmp_path / "log.jsonl")
    with pytest.raises(ValueError):
        log.append(b'{"a": 1}\n{"b": 2}\n')
    with pytest.raises(ValueError):
        log.append(b'{"a": 1}')
    assert not log.path.exists() or log.path.read_bytes() == b""


# ---------------------------------------------------------------- incremental refresh


def test_refresh_reads_only_the_appended_tail(
    tmp_path: Path, make_workspace: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", None, {A: 1.0})])
    first = ws_at(root)
    assert isinstance(first.log, EventLog)  # the workspace's JSONL file
    assert row_of(first.lesson_table(), A).n == 0
    size_before = (root / LOG_REL).stat().st_size
    calls: list[tuple[int, int]] = []
    real = first.log.read_chunks

    def spy(start: int, first_line: int, *args: Any, **kwargs: Any) -> Iterator[ReadResult]:
        calls.append((start, first_line))
        return real(start, first_line, *args, **kwargs)

    monkeypatch.setattr(first.log, "read_chunks", spy)
    assert first.refresh() is False  # nothing appended yet: nothing read
    assert calls == []
    ws_at(root).grade("s1", 1.0)  # a second Workspace object appends
    assert first.refresh() is True
    assert calls == [(size_before, 2)]
    row = first.lesson_table().row(A)
    assert row is not None and (row.alpha, row.beta, row.n) == pytest.approx((2.0, 1.0, 1))
    assert first.refresh() is False


def test_refresh_detects_replaced_log(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0})])
    ws = ws_at(root)
    assert row_of(ws.lesson_table(), A).alpha == pytest.approx(2.0)
    # same length, other content: s1 graded 0.0 instead of 1.0
    replaced = (root / LOG_REL).read_bytes().replace(b'"base_reward": 1.0', b'"base_reward": 0.0')
    assert len(replaced) == (root / LOG_REL).stat().st_size
    (root / LOG_REL).write_bytes(replaced)
    assert ws.refresh() is True
    row = ws.lesson_table().row(A)
    assert row is not None and (row.alpha, row.beta) == pytest.approx((1.0, 2.0))


def test_refresh_detects_replaced_big_log(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    # 100 sessions (~10 KB): the first is graded 0.2, the rest 0.5; uniform credit
    events = [session(f"s{i:03d}", 0.2 if i == 0 else 0.5, {A: 1.0}) for i in range(100)]
    root = make_workspace(tmp_path, lessons=LESSONS, events=events, config='strategy = "uniform"\n')
    log = root / LOG_REL
    assert log.stat().st_size > 8192
    ws = ws_at(root)
    # alpha = 1 + 0.2 + 99 * 0.5 = 50.7
    assert row_of(ws.lesson_table(), A).alpha == pytest.approx(50.7)
    # another file, same length, differing only in the first line (0.2 -> 0.9), moved into place
    replacement = log.with_name("sessions.jsonl.new")
    replacement.write_bytes(log.read_bytes().replace(b'"base_reward": 0.2', b'"base_reward": 0.9', 1))
    os.replace(replacement, log)
    # alpha = 1 + 0.9 + 99 * 0.5 = 51.4, as a fresh Workspace sees it
    assert row_of(ws_at(root).lesson_table(), A).alpha == pytest.approx(51.4)
    assert ws.refresh() is True
    assert row_of(ws.lesson_table(), A).alpha == pytest.approx(51.4)


def test_refresh_detects_truncated_log(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(
        tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0}), session("s2", 1.0, {A: 1.0})]
    )
    ws = ws_at(root)
    assert row_of(ws.lesson_table(), A).n == 2
    first_line = (root / LOG_REL).read_bytes().split(b"\n")[0] + b"\n"
    (root / LOG_REL).write_bytes(first_line)
    assert ws.refresh() is True
    assert [s.session_id for s in ws.sessions()] == ["s1"]
    assert row_of(ws.lesson_table(), A).n == 1


def test_refresh_detects_log_truncated_to_empty(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0})])
    ws = ws_at(root)
    assert row_of(ws.lesson_table(), A).n == 1
    (root / LOG_REL).write_bytes(b"")
    assert ws.refresh() is True
    assert ws.sessions() == []
    assert row_of(ws.lesson_table(), A).n == 0


def test_refresh_detects_deleted_log(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0})])
    ws = ws_at(root)
    assert len(ws.sessions()) == 1
    (root / LOG_REL).unlink()
    assert ws.refresh() is True
    assert ws.sessions() == []
    row = ws.lesson_table().row(A)
    assert row is not None and (row.alpha, row.beta, row.n) == (1.0, 1.0, 0)


# ---------------------------------------------------------------- bandit-state.json


@pytest.mark.smoke
def test_bandit_state_shape_and_values_equal_the_fold(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(
        tmp_path,
        lessons=LESSONS,
        events=[
            session("s1", 0.8, {A: 1.0, B: 0.0}, timestamp="2026-01-01T00:00:00Z"),
            session("s2", 0.4, {A: 0.5, B: 0.25}, timestamp="2026-01-02T00:00:00Z"),
            session("s3", None, {A: 1.0}, timestamp="2026-01-03T00:00:00Z"),
        ],
    )
    ws = ws_at(root)
    ws.grade("s2", 0.4)  # any write rewrites the state
    state = json.loads((root / STATE_REL).read_text())
    assert set(state) >= {"arms", "total_sessions", "created", "last_updated"}
    assert state["total_sessions"] == 2  # graded sessions
    assert state["last_updated"] == "2026-03-05T16:30:00+00:00"  # the clock's, as gptme writes a time
    assert state["created"] == "2026-03-05T16:30:00.000000Z"  # the clock's, to the microsecond: one per file
    assert set(state["arms"]) == {A, B}
    for arm_id, entry in state["arms"].items():
        assert set(entry) == {"arm_id", "alpha", "beta", "total_selections", "total_rewards", "last_updated"}
        assert entry["arm_id"] == arm_id
    # the same two sessions as test_fold's hand example (seed, floor 0.3):
    # A = (2.06, 1.94), credited {0.8, 0.26} -> 1 rewarded; B = (1.43, 2.57), credited {0.24, 0.19} -> 0
    a, b = state["arms"][A], state["arms"][B]
    assert (a["alpha"], a["beta"], a["total_selections"], a["total_rewards"]) == pytest.approx((2.06, 1.94, 2, 1))
    assert (b["alpha"], b["beta"], b["total_selections"], b["total_rewards"]) == pytest.approx((1.43, 2.57, 2, 0))
    assert a["last_updated"] == "2026-01-02T00:00:00+00:00"  # s2's time (the pending s3 is not an update)
    post = ws.posterior()
    for j, arm_id in enumerate(post.arm_ids):
        assert state["arms"][arm_id]["alpha"] == post.alpha[j]
        assert state["arms"][arm_id]["beta"] == post.beta[j]


def test_bandit_state_keeps_unknown_keys_and_gets_a_later_created(
    tmp_path: Path, make_workspace: Callable[..., Path]
) -> None:
    from lesson_credit.core.bandit.interop import STAMP_KEY, state_stamp

    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0})])
    ours = {
        "arms": {A: {"arm_id": A, "alpha": 99, "beta": 99, "custom": "kept"}},
        "total_sessions": 50,
        "created": "2020-01-01T00:00:00Z",
        "extra_top": [1, 2],
    }
    # stamped as ours (a stale file of ours with keys someone added): another tool's update would be kept
    (root / STATE_REL).write_text(json.dumps({**ours, STAMP_KEY: state_stamp(ours)}))
    ws_at(root).grade("s1", 1.0)
    state = json.loads((root / STATE_REL).read_text())
    assert state["extra_top"] == [1, 2]
    assert state["created"] == "2026-03-05T16:30:00.000000Z"  # the clock's: a file of its own (see test above)
    assert state["arms"][A]["custom"] == "kept"
    assert (state["arms"][A]["alpha"], state["arms"][A]["beta"]) == (2.0, 1.0)
    assert state["total_sessions"] == 50  # gptme counts on from it: the log's 1 never lowers it


@pytest.mark.smoke
def test_bandit_state_written_atomically(
    tmp_path: Path, make_workspace: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 1.0, {A: 1.0})], journals={"j": "x"})
    state_path = root / STATE_REL
    seen: list[tuple[str, str, bytes]] = []
    real_replace, real_link = os.replace, os.link

    def spy(src: str, dst: str) -> None:
        seen.append((str(src), str(dst), Path(src).read_bytes()))
        real_replace(src, dst)

    def spy_link(src: str, dst: str) -> None:  # (the first file: linked at a name with none, never over one)
        seen.append((str(src), str(dst), Path(src).read_bytes()))
        real_link(src, dst)

    monkeypatch.setattr("lesson_credit.core.log.store.os.replace", spy)
    monkeypatch.setattr("lesson_credit.core.log.store.os.link", spy_link)
    ws = ws_at(root)
    ws.grade("s1", 0.5)
    ws.record("s2", root / "j", [B])
    ws.grade("s2", 1.0)
    seen = [entry for entry in seen if entry[1] == str(state_path)]  # not the derived caches
    assert len(seen) == 3
    for src, dst, content in seen:
        assert Path(dst) == state_path
        assert Path(src).parent == state_path.parent  # same folder, so the rename is atomic
        json.loads(content)  # the whole file was written before the rename
    # whether the lock file stays after a release is filelock's choice (some releases unlink it)
    leftovers = sorted(p.name for p in state_path.parent.iterdir() if p.name != "sessions.jsonl.lock")
    assert leftovers == [".cache", "bandit-state.json", "sessions.jsonl"]
    cached = sorted(p.name for p in (state_path.parent / ".cache").iterdir())
    # no temp files; bandit-state-copies: copies of the files we wrote (another tool's increments are over them)
    assert cached == ["bandit-state-copies", "lessons.msgpack", "log-seal"]
    copies = [p.name for p in (state_path.parent / ".cache" / "bandit-state-copies").iterdir()]
    assert len(copies) == 3 and not any(name.endswith(".tmp") for name in copies)  # one per file written


def test_atomic_write_failure_leaves_old_file_and_no_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")

    def fail(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("lesson_credit.core.log.store.os.replace", fail)
    with pytest.raises(StoreError, match="no space"):
        atomic_write(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_state_follows_settings_after_replay_write(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[session("s1", 0.5, {A: 0.0})])
    ws = ws_at(root)
    ws.replay("uniform", 0.3, write=True)
    state = json.loads((root / STATE_REL).read_text())
    # uniform ignores the weight: A = (1.5, 1.5)
    assert (state["arms"][A]["alpha"], state["arms"][A]["beta"]) == (1.5, 1.5)
    assert ws_at(root).settings == CreditSettings(strategy="uniform", floor=0.3)


# ---------------------------------------------------------------- one-call decoding of many lines

S1, S2 = json.dumps(session("s1", 1.0, {A: 1.0})), json.dumps(session("s2", 0.0, {B: 0.5}))


@pytest.mark.parametrize(
    "text",
    [
        f"{S1}\n{S2}\n",  # the common case: one event per line
        f"{S1}\r\n{S2}\r\n",  # CRLF
        f"{S1}\n\n{S2}\n",  # a blank line: numbering must skip it
        f"{S1}\n   \n{S2}\n",  # a whitespace-only line
        f"{S1}\n  {S2}\n",  # a line that starts with whitespace
        f"{S1} {S2}\n\n",  # two values on one line plus a blank line: as many values as lines
        f"{S1}\nnot json\n{S2}\n",  # a bad line in the middle
        f"{S1}\n[1, 2]\n{S2}\n",  # JSON that is not an event
        f"{S1}\n{S2}",  # an unterminated valid last line
        f'{S1}\n{{"type": "grade", "sess',  # a torn last line
        f"\n{S1}\n",  # a leading newline
    ],
)
def test_one_call_decoding_numbers_lines_like_line_by_line(text: str) -> None:
    from lesson_credit.core.log.events import decode_raw, decode_raw_lines

    data = text.encode()
    fast = parse_chunk(data, 7, 3, at_eof=True, decode=decode_raw, decode_lines=decode_raw_lines)
    slow = parse_chunk(data, 7, 3, at_eof=True, decode=decode_raw)
    assert [(line, e.session_id) for line, e in fast.events] == [(line, e.session_id) for line, e in slow.events]
    assert [(p.line, p.reason) for p in fast.problems] == [(p.line, p.reason) for p in slow.problems]
    assert (fast.end, fast.lines, fast.partial, fast.tail_problem) == (
        slow.end,
        slow.lines,
        slow.partial,
        slow.tail_problem,
    )


def test_two_values_on_one_line_are_reported_not_split() -> None:
    from lesson_credit.core.log.events import decode_raw, decode_raw_lines

    # lines 3 and 4 hold two values and none; a one-call decoder sees two values for two lines
    data = f"{S1} {S2}\n\n".encode()
    result = parse_chunk(data, 0, 3, at_eof=True, decode=decode_raw, decode_lines=decode_raw_lines)
    assert result.events == []
    assert [p.line for p in result.problems] == [3]
    assert result.lines == 2 and result.end == len(data)


def test_one_call_decoding_continues_a_line() -> None:
    from lesson_credit.core.log.events import decode_raw, decode_raw_lines

    # the previous read consumed an unterminated line; the next writer put a newline first
    data = f"\n{S2}\n".encode()
    fast = parse_chunk(data, 100, 5, at_eof=True, decode=decode_raw, continues_line=True, decode_lines=decode_raw_lines)
    assert [(line, e.session_id) for line, e in fast.events] == [(5, "s2")]
    assert fast.end == 100 + len(data) and fast.lines == 1


@pytest.mark.parametrize("chunk_bytes", [1, 7, 64, 1 << 20])
def test_reading_in_chunks_equals_one_read(tmp_path: Path, chunk_bytes: int) -> None:
    from lesson_credit.core.log.events import decode_raw, decode_raw_lines

    long_line = json.dumps(session("long", 0.5, {f"tools/{i}.md": 0.5 for i in range(20)}))  # longer than a chunk
    text = f'{S1}\n\nnot json\n{long_line}\n  {S2}\n{{"type": "grade", "session_id": "s1", "base_reward": 0.5}}'
    log = EventLog(tmp_path / "log.jsonl")
    log.path.write_text(text)
    whole = parse_chunk(text.encode(), 0, 1, at_eof=True, decode=decode_raw)
    parts = list(log.read_chunks(0, 1, decode=decode_raw, decode_lines=decode_raw_lines, chunk_bytes=chunk_bytes))
    events = [(line, e.session_id) for part in parts for line, e in part.events]
    assert events == [(line, e.session_id) for line, e in whole.events]
    assert [(p.line, p.reason) for part in parts for p in part.problems] == [(p.line, p.reason) for p in whole.problems]
    assert (parts[-1].end, sum(p.lines for p in parts), parts[-1].partial) == (whole.end, whole.lines, whole.partial)
    for part in parts[:-1]:  # only the last chunk may end in a partial or torn line
        assert not part.partial and part.tail_problem is None


@pytest.mark.parametrize("chunk_bytes", [5, 64, 150])
def test_a_read_up_to_a_stop_in_chunks_places_and_hashes_its_lines(tmp_path: Path, chunk_bytes: int) -> None:
    import hashlib

    from lesson_credit.core.log.events import decode_raw, decode_raw_lines

    lines = [json.dumps(session(f"s{i}", 0.5, {A: 0.25})) + "\n" for i in range(6)]
    log = EventLog(tmp_path / "log.jsonl")
    log.path.write_text("".join(lines))
    # lines 2-4 (s1, s2, s3): from the end of line 1 to the end of line 4
    start = len(lines[0])
    stop = start + len(lines[1]) + len(lines[2]) + len(lines[3])
    hasher = hashlib.sha256()
    parts = list(
        log.read_chunks(
            start,
            2,
            decode=decode_raw,
            decode_lines=decode_raw_lines,
            chunk_bytes=chunk_bytes,
            hasher=hasher,
            stop=stop,
        )
    )
    assert [(line, e.session_id) for part in parts for line, e in part.events] == [(2, "s1"), (3, "s2"), (4, "s3")]
    assert [at for part in parts for at in part.offsets or []] == [start, start + len(lines[1]), stop - len(lines[3])]
    assert parts[-1].end == stop and sum(part.lines for part in parts) == 3
    assert hasher.hexdigest() == hashlib.sha256("".join(lines[1:4]).encode()).hexdigest()


def test_a_chunk_ends_at_its_size() -> None:
    from lesson_credit.core.log.events import decode_raw, decode_raw_lines

    # what follows the size (the start of a line a reader reads again with its next chunk) is not looked at
    data = f'{S1}\n{S2}\n{{"type": "grade", "sess'.encode()
    size = len(S1) + len(S2) + 2
    result = parse_chunk(data, 10, 1, at_eof=False, decode=decode_raw, decode_lines=decode_raw_lines, size=size)
    assert [(line, e.session_id) for line, e in result.events] == [(1, "s1"), (2, "s2")]
    assert (result.end, result.lines, result.partial, result.tail_problem) == (10 + size, 2, False, None)
    # a size inside the second line: that line is an unfinished one, left for the next read
    inside = parse_chunk(data, 10, 1, at_eof=False, decode=decode_raw, decode_lines=decode_raw_lines, size=size - 5)
    assert [e.session_id for _, e in inside.events] == ["s1"] and inside.end == 10 + len(S1) + 1


def test_reading_a_missing_log_in_chunks(tmp_path: Path) -> None:
    parts = list(EventLog(tmp_path / "absent.jsonl").read_chunks(0, 1))
    assert [(p.end, p.lines, p.events) for p in parts] == [(0, 0, [])]


def test_the_store_seam_is_eight_members_and_the_file_store_has_them() -> None:
    from lesson_credit.core.log.eventstore import EventStore, JsonlStore

    members = {name for name in vars(EventStore) if not name.startswith("_")}
    # the seam as docs/design.md §5 lists it (at most eight members; it had sixteen and two sub-protocols)
    assert members == {"name", "locked", "append", "size", "read_since", "wait", "session_record", "identity"}
    store = JsonlStore(Path("unused.jsonl"))
    assert isinstance(store, EventStore) and store.identity() is None


def test_the_file_stores_lock_is_reentered_by_its_holder(tmp_path: Path) -> None:
    from lesson_credit.core.log.eventstore import DuplicateSession, JsonlStore

    store = JsonlStore(tmp_path / "sessions.jsonl")
    first = json.dumps({"type": "session", "session_id": "s1", "lessons": []}).encode() + b"\n"
    with store.locked(), store.locked(timeout=0.1):  # the second is the holder's again: no wait, no timeout
        store.append(first)
        store.append(first)  # inside the lock the caller has checked: the file does not search
    with pytest.raises(DuplicateSession):
        store.append(first)  # outside it, the file searches the log
    assert store.path.read_bytes() == first * 2


def test_the_writers_lock_excludes_filelock_s_and_falls_back_to_it_without_flock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock is a flock, the one filelock takes: a FileLock holder (another process's, in the
    field) keeps a writer out until the timeout; on a file system without flock (ENOSYS) the
    writer takes filelock's lock instead, which falls back in its own way."""
    import fcntl

    import filelock

    from lesson_credit.core.log.eventstore import StoreUnavailable

    log = EventLog(tmp_path / "sessions.jsonl")
    other = filelock.FileLock(str(log.lock_path), timeout=0)
    other.acquire()
    with pytest.raises(StoreUnavailable, match="another writer held the lock for 0.1 s"), log.locked(timeout=0.1):
        pass
    other.release()
    with log.locked(timeout=0), pytest.raises(filelock.Timeout):
        filelock.FileLock(str(log.lock_path), timeout=0).acquire()

    calls: list[int] = []

    def no_flock(fd: int, op: int) -> None:
        calls.append(op)
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(fcntl, "flock", no_flock)
    log = EventLog(tmp_path / "flockless" / "sessions.jsonl")  # filelock's lock there: the file's existence
    with pytest.warns(UserWarning, match="flock not supported"), log.locked(timeout=0):
        log.append_locked(b'{"type":"session","session_id":"s1","lessons":[]}\n')
    assert calls and log.path.read_bytes().count(b"\n") == 1
    assert not log.lock_path.exists()  # released: filelock removed its marker, the writer its own file
