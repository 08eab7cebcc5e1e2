"""A UTF-8 byte order mark at the start of the event log (an editor on Windows saves one) is no data:
the first line is read as the event after it, on every read path."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from lesson_credit.core.log.events import decode_raw, decode_raw_lines
from lesson_credit.core.log.store import parse_chunk
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, fixed_clock, row_of, session

BOM = "\ufeff".encode()
A = "tools/a.md"
LESSONS = {A: (["alpha"], "active")}
S1 = json.dumps(session("s1", 1.0, {A: 1.0}))
S2 = json.dumps(session("s2", 0.0, {A: 1.0}))


def test_a_log_starting_with_a_bom_reads_its_first_line(tmp_path: Path, make_workspace: Callable[..., Path]) -> None:
    root = make_workspace(tmp_path, lessons=LESSONS, events=[BOM + f"{S1}\n{S2}\n".encode()])
    ws = Workspace(root, clock=fixed_clock)
    assert ws.log_problems() == []
    assert [(s.session_id, s.line) for s in ws.sessions()] == [("s1", 1), ("s2", 2)]
    # seed, salience 1: s1 (base 1) alpha += 1; s2 (base 0) beta += 1 -> (2, 2), n 2
    row = row_of(ws.lesson_table(), A)
    assert (row.alpha, row.beta, row.n) == pytest.approx((2.0, 2.0, 2))
    ws.grade("s2", 1.0)  # an append after it; a fresh read (the parsed-log cache's) sees the same
    fresh = Workspace(root, clock=fixed_clock)
    assert fresh.log_problems() == []
    assert [s.session_id for s in fresh.sessions()] == ["s1", "s2"]
    row = row_of(fresh.lesson_table(), A)
    assert (row.alpha, row.beta) == pytest.approx((3.0, 1.0))  # s2 now base 1: alpha += 1 instead
    assert (root / LOG_REL).read_bytes().startswith(BOM + S1.encode())  # the file's bytes are left as they are


def test_a_bom_only_at_the_log_s_start_is_skipped() -> None:
    # one call or line by line; only the log's first byte offset has a BOM to skip: a BOM
    # later (a chunk read from byte 100) is a bad line as any other stray character
    data = BOM + f"{S1}\n{S2}\n".encode()
    for decode_lines in (None, decode_raw_lines):
        head = parse_chunk(data, 0, 1, at_eof=True, decode=decode_raw, decode_lines=decode_lines)
        assert [(line, e.session_id) for line, e in head.events] == [(1, "s1"), (2, "s2")]
        assert head.problems == [] and head.end == len(data) and head.lines == 2
        assert head.offsets == [len(BOM), len(BOM) + len(S1) + 1]
        later = parse_chunk(data, 100, 7, at_eof=True, decode=decode_raw, decode_lines=decode_lines)
        assert [line for line, _ in later.events] == [8] and [p.line for p in later.problems] == [7]


def test_a_lone_unterminated_first_line_after_a_bom_is_no_torn_line(
    tmp_path: Path, make_workspace: Callable[..., Path]
) -> None:
    # the writer that forgot the newline wrote a whole event: the next writer keeps it
    root = make_workspace(tmp_path, lessons=LESSONS, events=[BOM + S1.encode()])
    ws = Workspace(root, clock=fixed_clock)
    assert ws.log_problems() == [] and [s.session_id for s in ws.sessions()] == ["s1"]
    ws.grade("s1", 0.0)
    assert not (root / LOG_REL).with_name("sessions.jsonl.torn").exists()
    fresh = Workspace(root, clock=fixed_clock)
    assert fresh.log_problems() == []
    assert [(g.line, g.base_reward) for g in fresh.grade_history("s1")] == [(1, 1.0), (2, 0.0)]


@pytest.mark.parametrize("after", [b"", b"   ", b'{"type": "se'], ids=["bom-only", "spaces", "torn"])
def test_an_append_to_a_log_of_a_bom_and_no_line_keeps_the_bom_and_reads_its_event(
    tmp_path: Path, make_workspace: Callable[..., Path], after: bytes
) -> None:
    # An editor's empty UTF-8 file is a BOM alone. The reader has read it (no data, up to byte 3): the
    # writer moves only what follows the BOM to .torn, so the reader's bytes stay and the event is line 1.
    root = make_workspace(tmp_path, lessons=LESSONS, journals={"j.txt": "alpha beta"}, events=[BOM + after])
    ws = Workspace(root, clock=fixed_clock)
    assert ws.sessions() == []
    ws.record("n1", "j.txt", [A], reward=0.7)
    assert [(s.session_id, s.line) for s in ws.sessions()] == [("n1", 1)]
    # seed, floor 0.3, salience 1 (alpha hits): w 1, r 0.7 -> Beta(1.7, 1.3)
    row = row_of(ws.lesson_table(), A)
    assert (row.alpha, row.beta, row.n) == pytest.approx((1.7, 1.3, 1))
    log = (root / LOG_REL).read_bytes()
    assert log.startswith(BOM + b'{"type":"session","session_id":"n1"') and log.count(b"\n") == 1
    torn = (root / LOG_REL).with_name("sessions.jsonl.torn")
    assert (torn.read_bytes() if torn.exists() else b"") == (after + b"\n" if after.strip() else b"")  # (blanks: cut)
    fresh = Workspace(root, clock=fixed_clock)
    assert fresh.log_problems() == [] and [(s.session_id, s.line) for s in fresh.sessions()] == [("n1", 1)]
