"""gptme-sessions records: read tolerantly, joined by id or time (never guessed), scores per source."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from lesson_credit.core.base.errors import WorkspaceError
from lesson_credit.core.model.sources import HEURISTIC, HUMAN, JUDGE, OUTCOME
from lesson_credit.core.sessions import record_file
from lesson_credit.core.sessions.join import BY_ID, BY_PREFIX, BY_TIME, join_records
from lesson_credit.core.sessions.record_file import Record, parse_records, read_records, read_weights
from lesson_credit.core.sessions.records_path import records_path
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import grade, make_workspace, session

LESSONS = {"a.md": (["alpha"], "active")}
RECORDS = Path("state/sessions/session-records.jsonl")


def write_records(root: Path, lines: list[Any]) -> Path:
    path = root / RECORDS
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def test_unknown_keys_are_kept_and_bad_lines_reported_with_their_numbers() -> None:
    lines = [
        json.dumps({"session_id": "abcd1234", "harness": "gptme", "llm_judge_score": 0.4, "smell_score": 0.1}),
        "{not json",
        json.dumps([1, 2]),
        json.dumps({"harness": "gptme"}),
        json.dumps({"session_id": "efgh5678", "llm_judge_score": 1.5, "grades": {"productivity": 0.8}}),
        json.dumps({"session_id": "abcd1234", "llm_judge_score": 0.6}),
        '{"session_id": "torn"',
    ]
    records, problems, count = parse_records("\n".join(lines).encode())
    assert [(r.session_id, r.line) for r in records] == [("efgh5678", 5), ("abcd1234", 6)]
    by_line = {p.line: p.reason for p in problems}
    assert sorted(by_line) == [2, 3, 4, 5, 6, 7] and count == 6
    assert "not valid JSON" in by_line[2] and "no session_id" in by_line[4]
    assert "llm_judge_score" in by_line[5] and "line 1" in by_line[6] and "unfinished" in by_line[7]
    efgh = records[0]
    assert efgh.llm_judge_score is None and efgh.grades == {"productivity": 0.8}  # the bad field alone is dropped
    first = parse_records(lines[0].encode() + b"\n")[0][0]
    assert first.extra == {"smell_score": 0.1}
    assert first.as_json({})["smell_score"] == 0.1  # kept in show --json


def test_the_weighted_grade_is_over_the_dimensions_present() -> None:
    record = Record("x", 1, grades={"productivity": 0.8, "alignment": 0.7})
    # (0.8 * 0.40 + 0.7 * 0.35) / (0.40 + 0.35) = (0.32 + 0.245) / 0.75 = 0.753333...
    assert record.weighted_grade({"productivity": 0.40, "alignment": 0.35, "harm": 0.25}) == pytest.approx(0.565 / 0.75)
    assert record.weighted_grade({"harm": 1.0}) is None
    assert Record("y", 1, trajectory_grade=0.3, grades={"harm": 1.0}).heuristic_score({"harm": 1.0}) == 0.3


def test_the_grading_weights_file_or_the_defaults(tmp_path: Path) -> None:
    assert read_weights(tmp_path) == ({"productivity": 0.40, "alignment": 0.35, "harm": 0.25}, None)
    (tmp_path / "state").mkdir()
    (tmp_path / "state/grading-weights.json").write_text('{"productivity": 1, "harm": 3}')
    assert read_weights(tmp_path) == ({"productivity": 1.0, "harm": 3.0}, None)
    (tmp_path / "state/grading-weights.json").write_text('{"productivity": -1}')
    weights, problem = read_weights(tmp_path)
    assert weights["harm"] == 0.25 and problem is not None and "defaults" in problem


def test_where_the_records_are_read_from(tmp_path: Path) -> None:
    assert records_path(tmp_path, None, {}) == tmp_path / RECORDS
    assert records_path(tmp_path, None, {"GPTME_SESSIONS_DIR": "/x/y"}) == Path("/x/y/session-records.jsonl")
    assert records_path(tmp_path, "r.jsonl", {"GPTME_SESSIONS_DIR": "/x/y"}) == tmp_path / "r.jsonl"


def test_missing_fifo_and_oversized_records_files_give_one_line(tmp_path: Path) -> None:
    assert read_records(tmp_path / "nope.jsonl").records == ()
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    found = read_records(fifo)  # must not block
    assert found.records == () and found.note is not None and "FIFO" in found.note
    assert read_records(tmp_path).note is not None  # a folder


IDS = ["2026-03-01-aaaa1111", "bbbb2222-long-uuid", "cccc", "dddd4444", "dddd4444x"]
TIMES = ["2026-03-01T10:00:00Z", "2026-03-01T11:00:00Z", "2026-03-01T12:00:00Z", None, "2026-03-01T14:00:00Z"]


def test_join_by_id_prefix_either_way_or_time_and_never_a_guess() -> None:
    records = [
        Record("dddd4444", 1),  # exact (dddd4444x starts with it too: exact wins)
        Record("bbbb2222", 2),  # a prefix of a session id
        Record("cccc-9999-zz", 3),  # a session id is a prefix of it
        Record("zz01", 4, timestamp="2026-03-01T10:03:00Z"),  # by time: 3 minutes from the first session
        Record("zz02", 5, end_time="2026-03-01T14:02:00+00:00"),  # by time, end_time
        Record("zz03", 6, timestamp="2026-03-01T20:00:00Z"),  # nothing near: unmatched
        Record("2026", 7),  # four characters, the start of one session id: joins it
    ]
    join = join_records(records, IDS, TIMES, 300.0)
    assert {IDS[row]: (records[i].session_id, join.how[row]) for row, i in join.record_of_row.items()} == {
        "dddd4444": ("dddd4444", BY_ID),
        "bbbb2222-long-uuid": ("bbbb2222", BY_PREFIX),
        "cccc": ("cccc-9999-zz", BY_PREFIX),
        "dddd4444x": ("zz02", BY_TIME),
        "2026-03-01-aaaa1111": ("2026", BY_PREFIX),
    }
    reasons = {p.record_id: (p.kind, p.reason) for p in join.problems}
    # zz01 is near the first session only, which "2026" joined by id: an id outranks a time
    assert reasons["zz01"][0] == "unmatched" and "joined to other records by id" in reasons["zz01"][1]
    assert reasons["zz03"][0] == "unmatched" and set(reasons) == {"zz01", "zz03"}


def test_two_records_claiming_one_session_join_neither() -> None:
    join = join_records([Record("aaaa1111x", 1), Record("aaaa1111y", 2)], ["aaaa1111"], [None], 300.0)
    assert join.record_of_row == {} and [p.kind for p in join.problems] == ["ambiguous", "ambiguous"]


def test_a_prefix_record_beaten_by_an_exact_one_is_reported_not_joined() -> None:
    """Two records claim session abcd1234: the one with its id joins it; the one with a prefix of it joins nothing,
    and is said so (it was dropped silently: lint counted 1 of 2 records not joined, naming one)."""
    records = [Record("abcd", 1), Record("abcd1234", 2), Record("elsewhere", 3)]
    join = join_records(records, ["abcd1234"], [None], 300.0)
    assert join.record_of_row == {0: 1} and join.how == {0: BY_ID}
    problems = {p.record_id: p for p in join.problems}
    assert set(problems) == {"abcd", "elsewhere"}  # every record not joined, each once
    assert problems["abcd"].kind == "unmatched" and problems["abcd"].line == 1
    # the record that won (its line too), not this one, joined
    assert problems["abcd"].reason == (
        "its id starts or is the start of session 'abcd1234', which record 'abcd1234' (line 2) joined: "
        "the exact id wins"
    )


def test_a_time_window_with_two_sessions_is_ambiguous() -> None:
    join = join_records([Record("zz", 1, timestamp="2026-03-01T10:30:00Z")], IDS, TIMES, 3600.0)
    assert join.record_of_row == {} and join.problems[0].kind == "ambiguous"
    assert "2 sessions" in join.problems[0].reason


def test_records_score_the_sources_the_log_leaves_empty(tmp_path: Path) -> None:
    events = [
        session("s-one", None, {"a.md": 1.0}, timestamp="2026-03-01T10:00:00Z"),
        session("s-two", None, {"a.md": 1.0}, timestamp="2026-03-01T11:00:00Z"),
        grade("s-two", 0.9),
        session("s-three", 0.7, {"a.md": 1.0}, timestamp="2026-03-01T12:00:00Z"),
    ]
    root = make_workspace(tmp_path, LESSONS, events)
    write_records(
        root,
        [
            {"session_id": "s-one", "llm_judge_score": 0.3, "outcome": "productive", "harness": "gptme"},
            {"session_id": "s-two", "llm_judge_score": 0.2},
            {"session_id": "s-three", "outcome": "noop", "grades": {"productivity": 0.5}},
        ],
    )
    ws = Workspace(root)
    # s-one: pending in the log; the judge's 0.3 is in force (human, judge, heuristic, outcome)
    # s-two: the person's 0.9 outranks the judge's 0.2
    # s-three: the log's heuristic 0.7 (its record's own) outranks the record's heuristic 0.5; noop maps to 0.0
    assert [ws.session(s).base_reward for s in ("s-one", "s-two", "s-three")] == [0.3, 0.9, 0.7]
    assert ws.session("s-one").grader == "record:judge"
    one = {s.source: (s.score, s.grader, s.in_force) for s in ws.reward_sources("s-one")}
    assert one == {JUDGE: (0.3, "record:judge", True), OUTCOME: (1.0, "record:outcome", False)}
    three = {s.source: s.score for s in ws.reward_sources("s-three")}
    assert three == {HEURISTIC: 0.7, OUTCOME: 0.0}
    # seed, w 1: alpha 1 + 0.3 + 0.9 + 0.7 = 2.9, beta 1 + 0.7 + 0.1 + 0.3 = 2.1
    row = ws.lesson_table().row("a.md")
    assert row is not None and (round(row.alpha, 12), round(row.beta, 12), row.n) == (2.9, 2.1, 3)
    record = ws.record_of("s-one")
    assert record is not None and record.harness == "gptme"


def test_a_changed_records_file_refolds_and_a_retraction_lets_the_record_count_again(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0}), grade("s1", 0.5, "judge")])
    path = write_records(root, [{"session_id": "s1", "llm_judge_score": 0.3}])
    ws = Workspace(root)
    assert ws.session("s1").base_reward == 0.5  # the log's judge event wins over the record's judge score
    version = ws.version
    with open(root / "state/lesson-thompson/sessions.jsonl", "a") as log:
        log.write(json.dumps({"type": "grade", "session_id": "s1", "base_reward": None, "grader": "judge"}) + "\n")
    ws.refresh()
    assert ws.session("s1").base_reward == 0.3  # the log's judge score withdrawn: the record's counts again
    path.write_text(json.dumps({"session_id": "s1", "llm_judge_score": 0.8}) + "\n")
    os.utime(path, ns=(1, 1))  # a rewrite whose time says nothing: the size and inode still tell
    assert ws.refresh() and ws.version > version
    assert ws.session("s1").base_reward == 0.8
    path.unlink()
    assert ws.refresh() and ws.session("s1").pending


def test_a_records_file_rewritten_with_its_size_and_time_is_read_again(tmp_path: Path) -> None:
    """A copy that keeps the time (`cp -p`, a sync tool) over a records file of the same size: only the
    change time tells, and a workspace kept open reads the new scores."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    path = write_records(root, [{"session_id": "s1", "llm_judge_score": 0.3}])
    ws = Workspace(root)
    assert ws.session("s1").base_reward == 0.3
    before = os.stat(path)
    with open(path, "r+b") as handle:  # in place: the same inode, the same size
        handle.write(path.read_bytes().replace(b"0.3", b"0.8"))
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (before.st_size, before.st_mtime_ns, before.st_ino)
    assert ws.refresh()
    assert ws.session("s1").base_reward == 0.8


def test_a_records_file_rewritten_in_the_same_tick_of_a_coarse_clock_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a file system whose clock has not ticked since the records were read, a rewrite in place of the
    same size leaves the whole stat as it was (here every stat's times are frozen at the instant the test
    starts): a workspace kept open still reads the new scores, from the file's bytes."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    path = write_records(root, [{"session_id": "s1", "llm_judge_score": 0.3}])
    frozen = time.time_ns()
    real_stat = os.stat

    class Frozen:
        st_mtime_ns = st_ctime_ns = frozen

        def __init__(self, real: os.stat_result) -> None:
            self._real = real

        def __getattr__(self, name: str) -> Any:
            return getattr(self._real, name)

    monkeypatch.setattr(os, "stat", lambda p, *a, **k: Frozen(real_stat(p, *a, **k)))
    # and the clock the reads are timed by: it has not ticked either, however long this test takes to get there
    monkeypatch.setattr("lesson_credit.core.joined_records.time", SimpleNamespace(time_ns=lambda: frozen))
    ws = Workspace(root)
    assert ws.session("s1").base_reward == 0.3
    with open(path, "r+b") as handle:  # in place: the same inode, the same size, the same (frozen) times
        handle.write(path.read_bytes().replace(b"0.3", b"0.8"))
    assert ws.refresh()
    assert ws.session("s1").base_reward == 0.8
    assert not ws.refresh()  # read again by its bytes while the clock may not have ticked: nothing new


def test_a_changed_join_window_moves_the_scores_of_a_workspace_kept_open(tmp_path: Path) -> None:
    """The record ends 100 s after the session was logged: joined by time within the default 300 s,
    not within 10 s. Changing [records] window in config.toml while the dashboard is open re-joins."""
    events = [session("s1", None, {"a.md": 1.0}, timestamp="2026-03-01T10:00:00Z")]
    root = make_workspace(tmp_path, LESSONS, events)
    write_records(root, [{"session_id": "other-id", "end_time": "2026-03-01T10:01:40Z", "llm_judge_score": 0.7}])
    ws = Workspace(root)
    assert ws.session("s1").base_reward == 0.7
    (root / "state/lesson-thompson/config.toml").write_text("[records]\nwindow = 10\n")
    assert ws.refresh()
    assert ws.session("s1").pending
    assert ws.session("s1").base_reward == Workspace(root).session("s1").base_reward  # as a fresh read


def test_a_log_read_again_from_its_start_joins_the_records_again(tmp_path: Path) -> None:
    """A workspace kept open (the dashboard) whose log is replaced by one with as many sessions in
    another order: the record's score follows its session, not the row it joined before."""
    lessons = {"a.md": (["alpha"], "active"), "b.md": (["beta"], "active")}
    root = make_workspace(tmp_path, lessons, [session("s1", None, {"a.md": 1.0}), session("s2", None, {"b.md": 1.0})])
    write_records(root, [{"session_id": "s1", "llm_judge_score": 0.9}])
    ws = Workspace(root)
    assert [(s.session_id, s.base_reward) for s in ws.sessions()] == [("s1", 0.9), ("s2", None)]
    log = root / "state/lesson-thompson/sessions.jsonl"
    log.write_bytes(b"".join(reversed(log.read_bytes().splitlines(keepends=True))))
    assert ws.refresh()
    assert [(s.session_id, s.base_reward) for s in ws.sessions()] == [("s2", None), ("s1", 0.9)]
    # seed, salience 1 (w = 1): a.md alpha 1 + 0.9 = 1.9, beta 1 + 0.1 = 1.1, n 1; b.md pending: Beta(1, 1), n 0
    a, b = ws.lesson_table().row("a.md"), ws.lesson_table().row("b.md")
    assert a is not None and (round(a.alpha, 12), round(a.beta, 12), a.n) == (1.9, 1.1, 1)
    assert b is not None and (b.alpha, b.beta, b.n) == (1.0, 1.0, 0)


def test_a_human_grade_over_a_judge_score_from_a_record(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0})])
    write_records(root, [{"session_id": "s1", "llm_judge_score": 0.3}])
    ws = Workspace(root)
    ws.grade("s1", 0.3)  # the judge's score taken as the person's
    assert {s.source for s in ws.reward_sources("s1") if s.in_force} == {HUMAN}
    record = ws.undo_grade("s1")
    assert record.base_reward is None and ws.session("s1").base_reward == 0.3
    assert ws.session("s1").grader == "record:judge"


def test_lint_reports_unusable_lines_and_joins_not_made(tmp_path: Path) -> None:
    from lesson_credit.core.health import WARNING, lint

    events = [session("aaaa1111", 0.5, {"a.md": 1.0}), session("aaaa1111-b", 0.5, {"a.md": 1.0})]
    root = make_workspace(tmp_path, LESSONS, events)
    write_records(root, ["{oops", {"session_id": "aaaa"}, {"session_id": "zzzz9999"}, {"session_id": "aaaa1111"}])
    found = {f.code: f for f in lint(Workspace(root))}
    unreadable, unjoined = found["records-unreadable"], found["records-not-joined"]
    assert unreadable.severity == unjoined.severity == WARNING
    (item,) = unreadable.items
    assert item.startswith("line 1: not valid JSON")
    # "aaaa" starts both session ids: ambiguous; zzzz9999 matches nothing; aaaa1111 joins exactly
    assert unjoined.items == ("aaaa (line 2)", "zzzz9999 (line 3)")
    assert unjoined.reasons[0].startswith("ambiguous") and unjoined.reasons[1].startswith("unmatched")
    assert "1 of 3 joined" in unjoined.message


def test_lint_says_the_exact_id_won_a_session_a_prefix_also_claimed(tmp_path: Path) -> None:
    from lesson_credit.core.health import lint

    root = make_workspace(tmp_path, LESSONS, [session("abcd1234", 0.5, {"a.md": 1.0})])
    write_records(root, [{"session_id": "abcd"}, {"session_id": "abcd1234"}])
    unjoined = {f.code: f for f in lint(Workspace(root))}["records-not-joined"]
    assert unjoined.items == ("abcd (line 1)",) and "1 of 2 joined" in unjoined.message
    assert unjoined.reasons == (
        "unmatched: its id starts or is the start of session 'abcd1234', which record 'abcd1234' (line 2) joined: "
        "the exact id wins",
    )
    assert "the exact id wins over a prefix" in unjoined.advice


def test_no_records_file_no_finding(tmp_path: Path) -> None:
    from lesson_credit.core.health import lint

    root = make_workspace(tmp_path, LESSONS, [session("s1", 0.5, {"a.md": 1.0})])
    assert not {f.code for f in lint(Workspace(root))} & {"records-unreadable", "records-not-joined"}


def test_undoing_a_judge_grade_over_a_records_judge_says_the_records_score_is_back(tmp_path: Path) -> None:
    """The record's judge 0.3 under the judge's logged 0.5: the judge's undo withdraws its 0.5 and the record's
    0.3 counts again; the note said "0.5 back to pending". A session scored only by its record has no grade to
    undo, and the refusal said it was pending."""
    root = make_workspace(tmp_path, LESSONS, [session("s1", None, {"a.md": 1.0}), grade("s1", 0.5, "judge")])
    write_records(root, [{"session_id": "s1", "llm_judge_score": 0.3}])
    record = Workspace(root).undo_grade("s1", grader="judge")
    assert (record.base_reward, record.grader) == (None, "judge")
    assert record.note == "undid judge's grade on line 2: 0.5 back to 0.3 (record:judge)"
    assert Workspace(root).session("s1").base_reward == 0.3
    with pytest.raises(WorkspaceError, match="^nothing to undo: judge's grades on session 's1' are undone already"):
        Workspace(root).undo_grade("s1", grader="judge")
    # manual has no grade there; the judge's is undone (the refusal said "scored only by its record (no grade)")
    with pytest.raises(WorkspaceError, match=r"^nothing to undo: manual has no grade on session 's1' \(judge's grades"):
        Workspace(root).undo_grade("s1")


def test_a_byte_order_mark_before_the_first_record_is_named_as_one() -> None:
    """An editor on Windows saves a UTF-8 byte order mark first: line 1 was "not valid JSON (invalid character)",
    which says nothing of the three invisible bytes. It is still skipped (gptme-sessions' reader cannot read that
    line either: the numbers stay the same on both sides), and the problem says what to do."""
    data = b'\xef\xbb\xbf{"session_id":"a","outcome":"success"}\n{"session_id":"b","outcome":"success"}\n'
    records, problems, count = parse_records(data)
    assert [r.session_id for r in records] == ["b"] and count == 1
    assert problems[0].line == 1
    assert problems[0].reason == "starts with a UTF-8 byte order mark (save the file without one); skipped"


def test_lines_past_the_records_line_cap_are_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """2.3 million one-key lines (a 64 MB file) took 2 GB and 40 s in every command; gptme-sessions writes 1.3 KB a
    record at the least, so its 64 MB hold ~50,000. Past the cap (3 here), the rest is one problem; blank lines and
    a bad line before it count as they are read (a bad line is a line read)."""
    monkeypatch.setattr(record_file, "RECORDS_MAX_LINES", 3)
    lines = [json.dumps({"session_id": f"s{i}", "llm_judge_score": 0.5}) for i in range(1, 6)]
    data = "\n".join([lines[0], "", "{bad", lines[1], lines[2], lines[3], lines[4]]).encode() + b"\n"
    records, problems, count = parse_records(data)
    assert [r.session_id for r in records] == ["s1", "s2"]  # lines 1 and 4; line 3 is the bad one
    assert count == 2 and [p.line for p in problems] == [3, 5]
    assert "past the first 3 records' lines" in problems[1].reason


# gptme-sessions rotates its active records file: older sessions move to session-records-archive-*.jsonl or the
# whole file to session-records.jsonl.bak-* (gptme-sessions' blame.py reads those beside the active file, the
# active one first: it wins on a session id in both). Three pending sessions, a.md in each at salience 1.
ARCHIVE = RECORDS.with_name("session-records-archive-2026-11.jsonl")
BAK = RECORDS.with_name("session-records.jsonl.bak-1")
JUDGED = [("s1", 0.2), ("s2", 0.6), ("s3", 0.9)]


def _judged(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path, LESSONS, [session(s, None, {"a.md": 1.0}) for s, _ in JUDGED])
    write_records(root, [{"session_id": s, "llm_judge_score": j} for s, j in JUDGED])
    return root


def _numbers(ws: Workspace) -> tuple[list[float | None], tuple[float, float, int]]:
    row = ws.lesson_table().row("a.md")
    assert row is not None
    rewards = [ws.session(s).base_reward for s, _ in JUDGED]
    return rewards, (round(row.alpha, 12), round(row.beta, 12), row.n)


# the judge's scores in force: 0.2, 0.6, 0.9; seed, w 1: alpha 1 + 0.2 + 0.6 + 0.9 = 2.7, beta 1 + 0.8 + 0.4 + 0.1 = 2.3
BEFORE = ([0.2, 0.6, 0.9], (2.7, 2.3, 3))


def _lines(pairs: list[tuple[str, float]]) -> str:
    return "".join(json.dumps({"session_id": s, "llm_judge_score": j}) + "\n" for s, j in pairs)


def test_records_moved_to_an_archive_keep_every_reward(tmp_path: Path) -> None:
    root = _judged(tmp_path)
    kept_open = Workspace(root)
    assert _numbers(kept_open) == BEFORE
    (root / ARCHIVE).write_text(_lines(JUDGED[:2]))  # the rotation: the older lines to the archive, then
    (root / RECORDS).write_text(_lines(JUDGED[2:]))  # the active file keeps the newest
    kept_open.refresh()
    assert _numbers(kept_open) == BEFORE
    fresh = Workspace(root)
    assert _numbers(fresh) == BEFORE and fresh.records_missing() is None
    one, three = fresh.record_of("s1"), fresh.record_of("s3")
    assert one is not None and (one.file, one.line) == ("session-records-archive-2026-11.jsonl", 1)
    assert three is not None and (three.file, three.line) == ("", 1)  # the active file's
    (root / ARCHIVE).unlink()  # an archive removed: its sessions' rewards go (s1, s2 pending)
    kept_open.refresh()
    assert [kept_open.session(s).base_reward for s, _ in JUDGED] == [None, None, 0.9]


def test_a_file_renamed_to_a_backup_and_a_new_one_started_keep_every_reward(tmp_path: Path) -> None:
    root = _judged(tmp_path)
    kept_open = Workspace(root)
    assert _numbers(kept_open) == BEFORE
    (root / RECORDS).rename(root / BAK)
    assert _numbers(Workspace(root)) == BEFORE  # no active file yet: the backup is read
    (root / RECORDS).write_text("")
    kept_open.refresh()
    assert _numbers(kept_open) == BEFORE
    ws = Workspace(root)
    assert _numbers(ws) == BEFORE and ws.records_missing() is None
    record = ws.record_of("s2")
    assert record is not None and (record.file, record.line) == ("session-records.jsonl.bak-1", 2)


def test_the_active_file_wins_then_the_rotated_ones_by_name(tmp_path: Path) -> None:
    """gptme-sessions' order: the active file, then the others sorted by name ('-' sorts before '.': the archive
    before the backup); a session's record from the first file that has one. Within one file a later line
    replaces an earlier one (gptme-sessions upserts), as before."""
    root = _judged(tmp_path)
    write_records(root, [{"session_id": "s1", "llm_judge_score": 0.2}])
    (root / ARCHIVE).write_text(_lines([("s1", 0.7), ("s2", 0.5), ("s2", 0.6)]))
    (root / BAK).write_text(_lines([("s2", 0.1), ("s3", 0.9), ("s1", 0.0)]))
    assert _numbers(Workspace(root)) == BEFORE  # s1 0.2 (active), s2 0.6 (archive's later line), s3 0.9 (backup)


def test_a_records_file_of_another_name_has_no_rotated_files(tmp_path: Path) -> None:
    """Rotation is of gptme-sessions' own file name: beside `[records] path = "records/mine.jsonl"`, a file named
    session-records-archive-*.jsonl is another set of records, not this file's older lines."""
    root = make_workspace(
        tmp_path,
        LESSONS,
        [session(s, None, {"a.md": 1.0}) for s, _ in JUDGED],
        config='[records]\npath = "records/mine.jsonl"\n',
    )
    (root / "records").mkdir()
    (root / "records/mine.jsonl").write_text(_lines(JUDGED[2:]))
    (root / "records/session-records-archive-2026-11.jsonl").write_text(_lines(JUDGED[:2]))
    (root / "records/mine.jsonl.bak-1").write_text(_lines(JUDGED[:2]))
    assert [Workspace(root).session(s).base_reward for s, _ in JUDGED] == [None, None, 0.9]


def test_the_line_cap_is_over_every_file_and_the_rotated_files_are_capped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lesson_credit.core.sessions import record_set, records_path

    root = _judged(tmp_path)
    write_records(root, [{"session_id": "s3", "llm_judge_score": 0.9}, {"session_id": "x", "llm_judge_score": 0.5}])
    (root / ARCHIVE).write_text(_lines(JUDGED[:2]))
    (root / BAK).write_text(_lines(JUDGED[:1]))
    monkeypatch.setattr(record_file, "RECORDS_MAX_LINES", 3)  # the active file's 2 lines, then 1 of the archive's
    ws = Workspace(root)
    assert [ws.session(s).base_reward for s, _ in JUDGED] == [0.2, None, 0.9]  # s1 from the backup
    said = [str(p) for p in ws.session_records.file().problems]
    assert said == [
        "session-records-archive-2026-11.jsonl line 2: past the first 3 records' lines (of all the records files): "
        "this one and the rest are not read",
        "session-records.jsonl.bak-1: past the first 3 records' lines (of all the records files): not read",
    ]
    monkeypatch.setattr(record_file, "RECORDS_MAX_LINES", 100)
    monkeypatch.setattr(records_path, "ROTATED_MAX_FILES", 1)
    ws = Workspace(root)
    assert [ws.session(s).base_reward for s, _ in JUDGED] == [0.2, 0.6, 0.9]  # the archive's s1 and s2
    (problem,) = ws.session_records.file().problems
    assert str(problem) == (
        f"{root / RECORDS.parent}: 2 rotated records files beside {RECORDS.name}; only the first 1 (by name) is "
        "read: session-records.jsonl.bak-1 is not"
    )
    monkeypatch.setattr(records_path, "ROTATED_MAX_FILES", 10)
    monkeypatch.setattr(record_set, "RECORDS_TOTAL_MAX_BYTES", (root / RECORDS).stat().st_size + 10)
    file = Workspace(root).session_records.file()
    assert [r.session_id for r in file.records] == ["s3", "x"]
    assert [str(p) for p in file.problems] == [
        "session-records-archive-2026-11.jsonl: past the 0 MB all the records files may hold together: not read",
        "session-records.jsonl.bak-1: past the 0 MB all the records files may hold together: not read",
    ]


def test_a_rotated_file_linking_outside_the_workspace_is_not_read(tmp_path: Path) -> None:
    root = _judged(tmp_path)
    write_records(root, [{"session_id": "s3", "llm_judge_score": 0.9}])
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(_lines(JUDGED[:2]))
    (root / ARCHIVE).symlink_to(outside)
    ws = Workspace(root)
    assert [ws.session(s).base_reward for s, _ in JUDGED] == [None, None, 0.9]
    (problem,) = ws.session_records.file().problems
    assert str(problem) == (
        "session-records-archive-2026-11.jsonl: a symbolic link to outside the workspace; not read "
        "(--allow-outside reads it)"
    )
    assert _numbers(Workspace(root, allow_outside_journals=True)) == BEFORE
    inside = root / "state/old-records.jsonl"  # a link inside the workspace is followed
    inside.write_text(_lines(JUDGED[:2]))
    (root / ARCHIVE).unlink()
    (root / ARCHIVE).symlink_to(inside)
    assert _numbers(Workspace(root)) == BEFORE


def test_lint_and_the_joins_name_the_rotated_file_a_line_is_in(tmp_path: Path) -> None:
    from lesson_credit.core.health import lint

    root = _judged(tmp_path)
    write_records(root, [{"session_id": "s3", "llm_judge_score": 0.9}])
    (root / ARCHIVE).write_text("{oops\n" + _lines([("s1", 0.2), ("zzzz9999", 0.5)]))
    found = {f.code: f for f in lint(Workspace(root))}
    (item,) = found["records-unreadable"].items
    assert item.startswith("session-records-archive-2026-11.jsonl line 1: not valid JSON")
    assert found["records-not-joined"].items == ("zzzz9999 (session-records-archive-2026-11.jsonl line 3)",)


def test_a_workspace_kept_open_reads_an_archive_that_appears_or_changes(tmp_path: Path) -> None:
    root = _judged(tmp_path)
    write_records(root, [{"session_id": "s3", "llm_judge_score": 0.9}])
    kept_open = Workspace(root)
    assert [kept_open.session(s).base_reward for s, _ in JUDGED] == [None, None, 0.9]
    (root / ARCHIVE).write_text(_lines(JUDGED[:2]))  # nothing else changes
    assert kept_open.refresh() and _numbers(kept_open) == BEFORE
    (root / ARCHIVE).write_text(_lines([("s1", 0.2), ("s2", 0.1)]))  # the same size, its times put back
    os.utime(root / ARCHIVE, ns=(1, 1))
    assert kept_open.refresh()
    assert [kept_open.session(s).base_reward for s, _ in JUDGED] == [0.2, 0.1, 0.9]


def test_a_rotated_file_that_is_no_regular_file_is_one_problem_and_the_lock_and_a_rewrite_copy_are_not_read(
    tmp_path: Path,
) -> None:
    root = _judged(tmp_path)
    write_records(root, [{"session_id": "s3", "llm_judge_score": 0.9}])
    os.mkfifo(root / BAK)  # must not block
    (root / RECORDS.with_name("session-records.jsonl.lock")).write_text(_lines(JUDGED[:1]))
    (root / RECORDS.with_name("session-records.jsonl.tmp.123.abcd")).write_text(_lines(JUDGED[:2]))
    (root / RECORDS.with_name("session-records-archive-old.jsonl")).mkdir()  # a folder: not a file to read
    ws = Workspace(root)
    assert [ws.session(s).base_reward for s, _ in JUDGED] == [None, None, 0.9]
    (problem,) = ws.session_records.file().problems
    assert str(problem) == f"{root / BAK}: a FIFO, not a regular file; not read"


def test_a_rotated_file_that_grew_since_its_stat_is_read_only_to_the_total_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lesson_credit.core.sessions import record_set

    root = _judged(tmp_path)
    write_records(root, [{"session_id": "s3", "llm_judge_score": 0.9}])
    (root / ARCHIVE).write_text(_lines(JUDGED[:2]))
    line = len(_lines(JUDGED[:1]))  # s1's line, newline included
    monkeypatch.setattr(record_set, "RECORDS_TOTAL_MAX_BYTES", (root / RECORDS).stat().st_size + line)
    monkeypatch.setattr(record_set, "_length", lambda path: 0)  # its stat said it was empty: it grew since
    file = Workspace(root).session_records.file()
    assert [r.session_id for r in file.records] == ["s3", "s1"]  # the archive's first line alone fits
    assert [str(p) for p in file.problems] == [
        f"{root / ARCHIVE} is larger than {line:,} bytes (what was left of what all the records files may hold "
        "together): only its start is read"
    ]
