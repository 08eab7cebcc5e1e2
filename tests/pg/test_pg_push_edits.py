"""`store push` of a log edited inside what it already pushed: a database keeps every event it was
given, so a line changed since (a grade's reward edited by hand) would be added at its end as a new
event while the old one stays in force. The workspace remembers what it pushed to each store
(`.cache/pushed-<store id>`); a push that would add lines to a log whose pushed lines changed is
refused in one line, naming the file and the line, and changes nothing. An unedited log (pushed
again, grown at its end, holding lines another agent stored) pushes as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import psycopg
import pytest

from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line, log_path, make_workspace, push
from tests.support.cli_run import run

S1 = line({"type": "session", "session_id": "s1", "base_reward": None,
           "lessons": [{"path": "tools/git.md", "salience": 1.0}]})  # fmt: skip
S2 = line({"type": "session", "session_id": "s2", "base_reward": 0.4,
           "lessons": [{"path": "tools/git.md", "salience": 1.0}]})  # fmt: skip


def grade(sid: str, base: float) -> bytes:
    return line({"type": "grade", "session_id": sid, "base_reward": base, "grader": "manual"})


def events(url: str) -> list[tuple[int, str, str]]:
    """Every stored event: its position, agent and text."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT position, agent, raw FROM lesson_credit.events ORDER BY position").fetchall()
    return [(int(position), str(agent), str(raw)) for position, agent, raw in rows]


def memory_files(root: Path) -> dict[str, bytes]:
    cache = log_path(root).parent / ".cache"
    return {path.name: path.read_bytes() for path in sorted(cache.glob("pushed-*"))}


def test_a_pushed_grade_edited_by_hand_is_refused_and_the_database_keeps_what_it_had(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9) + S2)
    assert (push(capsys, ws_root, pg_url)["added"]) == 3
    before, remembered = events(pg_url), memory_files(ws_root)
    log.write_bytes(S1 + grade("s1", 0.2) + S2 + grade("s2", 0.7))  # line 2 edited by hand; a grade appended
    for json_flag in ((), ("--json",)):
        code, out, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url, *json_flag)
        # before, it added the edited grade (and s2's) at the database's end: "2 events added", no warning,
        # and s1's reward there became 0.2 with the 0.9 still stored before it
        assert code == 1, (out, err)
        assert out == ""
        assert err.count("\n") == 1 and err.startswith("lesson-credit: sessions.jsonl: line 2 "), err
        assert "nothing pushed" in err and "lesson-credit grade" in err, err
    assert events(pg_url) == before  # nothing added, in either form
    assert memory_files(ws_root) == remembered and len(remembered) == 1  # the first push's memory, unchanged
    # what to do instead: put the line back and grade again, which appends an event
    log.write_bytes(S1 + grade("s1", 0.9) + S2 + grade("s2", 0.7))
    code, _, err = run(capsys, "grade", "s1", "0.2", "-w", str(ws_root), "--store", "")
    assert code == 0, err
    pushed = push(capsys, ws_root, pg_url)
    assert (pushed["added"], pushed["present"], pushed["warnings"]) == (2, 3, [])  # s2's grade and s1's new one
    assert [json.loads(raw).get("base_reward") for _, _, raw in events(pg_url)] == [None, 0.9, 0.4, 0.7, 0.2]


def test_the_same_log_pushed_twice_and_grown_at_its_end_pushes_as_before(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2
    again = push(capsys, ws_root, pg_url)
    assert (again["added"], again["present"], again["warnings"]) == (0, 2, [])
    with log.open("ab") as handle:
        handle.write(b"\n" + S2 + grade("s1", 0.5))  # a blank line, then two events
    grown = push(capsys, ws_root, pg_url)
    assert (grown["added"], grown["present"], grown["warnings"]) == (2, 2, [])
    # a last line without its newline (an editor's save) is the same line once one follows it
    log.write_bytes(log.read_bytes() + grade("s2", 0.1).rstrip(b"\n"))
    assert push(capsys, ws_root, pg_url)["added"] == 1
    log.write_bytes(log.read_bytes() + b"\n" + grade("s2", 0.3))
    last = push(capsys, ws_root, pg_url)
    assert (last["added"], last["present"], last["warnings"]) == (1, 5, [])
    assert len(events(pg_url)) == 6


def test_lines_another_agent_stored_count_as_stored(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, tmp_path: Path
) -> None:
    other = PgStore(pg_url, agent="other")
    # the log's line 1, stored by another agent first: where the database holds it (sessions fold in order: after
    # s1 it is refused, tests/pg/test_pg_push_order.py)
    other.append(S2)
    other.append(grade("s2", 0.6))  # not in the log
    other.close()
    log = log_path(ws_root)
    log.write_bytes(S2 + S1 + grade("s1", 0.9))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (2, 1)
    # a second workspace with the same first lines pushes to the same database: nothing new but its grade
    second = make_workspace(tmp_path / "second")
    log_path(second).write_bytes(S1 + grade("s1", 0.9) + grade("s1", 0.3))
    out = push(capsys, second, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 2, [])
    # the first workspace's log grows by a line the second one stored already: stored, nothing refused
    log.write_bytes(log.read_bytes() + grade("s1", 0.3) + grade("s2", 0.8))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 4, [])
    assert [agent == "other" for _, agent, _ in events(pg_url)] == [True, True, False, False, False, False]


def test_a_log_replaced_by_the_database_pull_or_cut_adds_nothing_and_says_so(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, tmp_path: Path
) -> None:
    other = PgStore(pg_url, agent="other")
    other.append(grade("s2", 0.6))
    other.close()
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9) + S2)
    assert push(capsys, ws_root, pg_url)["added"] == 3
    pulled = tmp_path / "pulled.jsonl"
    code, _, err = run(capsys, "store", "pull", str(pulled), "-w", str(ws_root), "--store", pg_url)
    assert code == 0, err
    shutil.copyfile(pulled, log)  # another order (the other agent's grade first): every line is stored
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (0, 4)
    warnings = out["warnings"]
    # by hand: the pulled log's lines 1-3 are the other agent's grade, s1 and its grade, where the last
    # push read s1, its grade and s2
    assert isinstance(warnings, list) and len(warnings) == 1, warnings
    assert warnings[0].startswith("sessions.jsonl: lines 1, 2 and 3 are not what the last push"), warnings
    log.write_bytes(grade("s2", 0.6) + S1)  # cut: the two first lines of the pulled log
    code, out_text, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert code == 0, err
    assert "0 events added" in out_text and err.count("warning: sessions.jsonl:") == 1, err
    assert len(events(pg_url)) == 4


def test_a_log_replaced_by_a_pull_then_grown_pushes_its_new_lines(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, tmp_path: Path
) -> None:
    # two agents push to one database in turns; this one pulls everything into its log (the other
    # agent's session now sits between its own pushed lines), grades on, and pushes: nothing it
    # pushed was edited or taken out, and its new grade comes after every line pushed before
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2
    other = PgStore(pg_url, agent="other")
    other.append(S2)
    other.close()
    log.write_bytes(log.read_bytes() + grade("s1", 0.5))
    assert push(capsys, ws_root, pg_url)["added"] == 1  # the database: s1, 0.9, s2, 0.5
    pulled = tmp_path / "pulled.jsonl"
    code, _, err = run(capsys, "store", "pull", str(pulled), "-w", str(ws_root), "--store", pg_url)
    assert code == 0, err
    shutil.copyfile(pulled, log)  # s1, 0.9, s2 (the other agent's), 0.5
    code, _, err = run(capsys, "grade", "s2", "0.7", "-w", str(ws_root), "--store", "")
    assert code == 0, err
    # before, refused: "line 3 is not what was pushed there (edited since?)"
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 4, [])
    assert [json.loads(raw).get("base_reward") for _, _, raw in events(pg_url)] == [None, 0.9, 0.4, 0.5, 0.7]
    # still refused in that log: a line pushed before edited, and a new line put in before pushed ones
    grown = log.read_bytes()
    for changed in (grown.replace(b"0.9", b"0.1"), grade("s2", 0.2) + grown + grade("s1", 0.3)):
        log.write_bytes(changed)
        code, _, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
        assert code == 1 and "nothing pushed" in err, err
    assert len(events(pg_url)) == 5


def test_a_log_cut_then_grown_is_refused_until_its_memory_is_removed(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    # a cut followed by new lines cannot be told from an edit of the lines cut: refused, naming the
    # first line that is not the one pushed there; without the memory (removed) the push adds the
    # lines that are not stored, as it always did (a damaged one is refused: it may hide an edit)
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9) + S2)
    assert push(capsys, ws_root, pg_url)["added"] == 3
    log.write_bytes(S1 + S2 + grade("s2", 0.1))  # line 2 cut, a grade appended
    code, _, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert code == 1 and err.startswith("lesson-credit: sessions.jsonl: lines 2 and 3 "), err
    assert len(events(pg_url)) == 3
    (name,) = memory_files(ws_root)
    memory = log.parent / ".cache" / name
    data = memory.read_bytes()
    memory.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # damaged (its checksum fails): refused, naming it
    code, _, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert code == 1 and err.startswith(f"lesson-credit: {memory}: ") and "damaged" in err, err
    memory.unlink()  # removed: as before the memory
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (1, 2)
    # the memory is now of this log: an edit of it is refused again
    log.write_bytes(S1 + S2 + grade("s2", 0.2))
    code, _, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert code == 1 and err.startswith("lesson-credit: sessions.jsonl: line 3 "), err
    memory.unlink()
    assert push(capsys, ws_root, pg_url)["added"] == 1
    assert len(events(pg_url)) == 5


def test_the_lines_named_and_a_memory_of_another_store(tmp_path: Path) -> None:
    from array import array

    from lesson_credit.core.log.pgpush import PushReport
    from lesson_credit.core.log.pushmemory import EditedLog, PushMemory

    def read(store_id: str, digests: list[bytes], report: PushReport, first: int | None = 0) -> PushMemory:
        memory = PushMemory(tmp_path / ".cache", store_id, "sessions.jsonl", "db")
        memory.start()
        for number, digest in enumerate(digests, start=1):
            memory.row(number, digest)
        # `first`: the first event (0, 1, ...) the push added; the database holds every event (none refused)
        memory.end(report, lambda: first, lambda start: (array("q"), array("q")))
        return memory

    pushed = [bytes([i]) * 32 for i in range(1, 8)]  # seven events, as their SHA-256 would be
    read("abc", pushed, PushReport(added=7)).save()
    edited = [pushed[0], b"x" * 32, pushed[2], b"y" * 32, b"z" * 32, pushed[6], pushed[5]]
    # by hand: lines 2, 4, 5, 6 and 7 are not the events pushed there
    with pytest.raises(EditedLog, match=r"^sessions\.jsonl: lines 2, 4, 5 and 2 more are not what was pushed there"):
        read("abc", edited, PushReport(added=3))
    assert read("abc", edited, PushReport(added=0)).warning is not None  # all stored: nothing to refuse
    assert read("other", edited, PushReport(added=3)).warning is None  # no memory of that store: as before
    # every pushed event still there, one the database holds put in after the third (a pulled log), one new
    # at the end (the 9th event: 8 by the count from 0): pushed; the same log whose first added event is the
    # one put in: refused, naming lines 4-7 (the places of the seven remembered where another event now is)
    pulled = [*pushed[:3], b"o" * 32, *pushed[3:], b"n" * 32]
    assert read("abc", pulled, PushReport(added=1), first=8).warning is None
    with pytest.raises(EditedLog, match=r"^sessions\.jsonl: lines 4, 5, 6 and 1 more are not"):
        read("abc", pulled, PushReport(added=2), first=3)
    # a pushed event gone (the fifth, a copy of the first put in its place): refused, whatever comes after
    with pytest.raises(EditedLog, match=r"^sessions\.jsonl: line 5 is not"):
        read("abc", [*pushed[:4], pushed[0], *pushed[5:], b"n" * 32], PushReport(added=1), first=7)
    # a copy of a pushed line appended (the same grade given again) is a new event, not the one pushed: by hand
    # the remembered ones end at the 8th event (7 from 0), the copy is the 9th (8), the push's first addition
    copied = [*pulled[:-1], pushed[6]]
    assert read("abc", copied, PushReport(added=1), first=8).warning is None
    read("abc", pushed, PushReport(added=0)).save()  # (the memory of the seven again)
    cut = read("abc", pushed[:3], PushReport(added=0))
    assert cut.warning == "sessions.jsonl: holds 4 fewer events than were pushed to db (cut since); the database " \
        "keeps them: a push that adds events is refused until they are back (`store pull` writes every event the " \
        "database holds)"  # fmt: skip


def test_a_push_with_no_log_file_is_refused_and_keeps_what_was_pushed_in_memory(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    """A push run where the log file is gone (moved, a failed checkout) pushed nothing and said the log held 2
    fewer events, and the memory then described an empty log: the log put back with a pushed line edited was
    pushed without refusal. It is refused (one line naming the file), nothing pushed, the memory kept."""
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2
    before, remembered = events(pg_url), memory_files(ws_root)
    log.unlink()
    code, out, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert (code, out) == (1, "") and err.count("\n") == 1 and "sessions.jsonl" in err and "nothing pushed" in err
    assert events(pg_url) == before and memory_files(ws_root) == remembered
    log.write_bytes(S1 + grade("s1", 0.2))  # back, with the pushed grade edited by hand
    code, _, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert code == 1 and "line 2" in err, err
    assert events(pg_url) == before


def test_a_push_through_a_link_to_a_log_moved_away_is_refused_and_keeps_what_was_pushed_in_memory(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    """sessions.jsonl a symbolic link to the log kept elsewhere, that log moved away: no log file either (the link
    leads nowhere). The push is refused as above, and the log moved back with a pushed grade edited is refused."""
    log, real = log_path(ws_root), ws_root / "kept" / "sessions.jsonl"
    real.parent.mkdir()
    real.write_bytes(S1 + grade("s1", 0.9))
    log.symlink_to(real)
    assert push(capsys, ws_root, pg_url)["added"] == 2
    before, remembered = events(pg_url), memory_files(ws_root)
    real.rename(ws_root / "moved.jsonl")
    code, out, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert (code, out) == (1, "") and err.count("\n") == 1 and "sessions.jsonl" in err and "nothing pushed" in err
    assert events(pg_url) == before and memory_files(ws_root) == remembered
    (ws_root / "moved.jsonl").rename(real)
    real.write_bytes(S1 + grade("s1", 0.2))  # back, with the pushed grade edited by hand
    code, _, err = run(capsys, "store", "push", "-w", str(ws_root), "--store", pg_url)
    assert code == 1 and "line 2" in err, err
    assert events(pg_url) == before
