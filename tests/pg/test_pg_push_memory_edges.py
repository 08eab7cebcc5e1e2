"""What a workspace remembers of its pushes (`.cache/pushed-<store id>`) holds what the database holds, and in
the order this workspace's pushes gave it: a line the database refused is not held there (taking it out later is
no edit), a line cut from the log is held there still (an edited version appended later is refused, as an edit
is), and the workspace's own pushed lines reordered are refused like an edit (the database keeps the order they
were pushed in: a grade moved after another of its session counts in the file, not in the database). A memory
that cannot be read (damaged, a symbolic link) may hide an edit: a push that adds is refused, naming it."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line, log_path, push, refused
from tests.support.cli_run import run

S1 = line({"type": "session", "session_id": "s1", "base_reward": None,
           "lessons": [{"path": "tools/git.md", "salience": 1.0}]})  # fmt: skip
S2 = line({"type": "session", "session_id": "s2", "base_reward": 0.4,
           "lessons": [{"path": "tools/git.md", "salience": 1.0}]})  # fmt: skip
S1_AGAIN = line({"type": "session", "session_id": "s1", "base_reward": 0.3,
                 "lessons": [{"path": "tools/quote.md", "salience": 1.0}]})  # fmt: skip


def grade(sid: str, base: float) -> bytes:
    return line({"type": "grade", "session_id": sid, "base_reward": base, "grader": "manual"})


def rewards(url: str) -> list[object]:
    """Each stored event's `base_reward`, in position order."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT raw FROM lesson_credit.events ORDER BY position").fetchall()
    return [json.loads(raw).get("base_reward") for (raw,) in rows]


def test_a_line_the_database_refused_is_not_remembered_so_taking_it_out_is_no_edit(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9) + S1_AGAIN)  # line 3: a second session event for s1 (not added)
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (2, 1)
    log.write_bytes(S1 + grade("s1", 0.9) + grade("s1", 0.5))  # line 3 taken out, a grade appended
    # before, refused: "line 3 is not what was pushed there", though the database never held that line
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 2, [])
    assert rewards(pg_url) == [None, 0.9, 0.5]
    # the refused line put back in its place (the database refuses it again) and a grade appended: nothing to say
    log.write_bytes(S1 + grade("s1", 0.9) + S1_AGAIN + grade("s1", 0.5) + grade("s1", 0.6))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 4, [])
    out = push(capsys, ws_root, pg_url)  # and pushed again: the same
    assert (out["added"], out["present"], out["warnings"]) == (0, 5, [])
    # a pushed line taken out is still refused: line 2's grade 0.9 (the database holds it). By hand, the events
    # the database holds after s1 were 0.9, 0.5, 0.6 and are now 0.5 (line 3), 0.6 (4), 0.7 (5): lines 3-5
    # differ (line 2, refused, is not compared)
    log.write_bytes(S1 + S1_AGAIN + grade("s1", 0.5) + grade("s1", 0.6) + grade("s1", 0.7))
    assert refused(capsys, ws_root, pg_url).startswith("lesson-credit: sessions.jsonl: lines 3, 4 and 5 are not")
    assert rewards(pg_url) == [None, 0.9, 0.5, 0.6]


def test_a_cut_line_stays_remembered_so_its_edited_version_appended_is_refused(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    log = log_path(ws_root)
    log.write_bytes(S1 + S2 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 3
    log.write_bytes(S1 + S2)  # the grade cut (the database cannot lose it: its events are append-only)
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (0, 2)
    warnings = out["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1 and "1 fewer event" in warnings[0], warnings
    log.write_bytes(S1 + S2 + grade("s1", 0.2))  # the cut grade, edited, back at its place
    # before, "1 event added" and no warning: the database held 0.9 and then 0.2, two versions of one grade
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith("lesson-credit: sessions.jsonl: line 3 is not what was pushed there"), err
    assert rewards(pg_url) == [None, 0.4, 0.9]
    # pushed again after the cut, and after the refusal: refused still (the memory holds the grade)
    log.write_bytes(S1 + S2)
    assert push(capsys, ws_root, pg_url)["added"] == 0
    log.write_bytes(S1 + S2 + grade("s1", 0.2))
    refused(capsys, ws_root, pg_url)
    # the cut line put back (as `store pull` would write it), the new grade after it: pushed
    log.write_bytes(S1 + S2 + grade("s1", 0.9) + grade("s1", 0.2))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 3, [])
    assert rewards(pg_url) == [None, 0.4, 0.9, 0.2]


def test_the_workspaces_own_pushed_lines_reordered_are_refused_like_an_edit(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9) + grade("s1", 0.2))  # 0.2 in force: the later grade
    assert push(capsys, ws_root, pg_url)["added"] == 3
    swapped = S1 + grade("s1", 0.2) + grade("s1", 0.9)  # 0.9 in force in the file; 0.2 still in the database
    log.write_bytes(swapped + S2)
    # before, "1 event added" and no warning: the file and the database disagreed on s1's reward
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith("lesson-credit: sessions.jsonl: lines 2 and 3 hold events pushed to "), err
    assert "in another order" in err, err
    assert rewards(pg_url) == [None, 0.9, 0.2]
    # reordered, nothing to add: a warning, and the memory keeps the order pushed (before, it took the new
    # order, and the log grown after it was pushed without a word)
    log.write_bytes(swapped)
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (0, 3)
    warnings = out["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1 and "in another order" in warnings[0], warnings
    log.write_bytes(swapped + S2)
    refused(capsys, ws_root, pg_url)
    log.write_bytes(S1 + grade("s1", 0.9) + grade("s1", 0.2) + S2)  # the order pushed: pushed
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 3, [])
    assert rewards(pg_url) == [None, 0.9, 0.2, 0.4]


def test_a_pulled_log_holding_a_line_another_agent_stored_first_pushes_its_new_lines(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, tmp_path: Path
) -> None:
    # the database's order is not the log's for a line another agent stored before this workspace pushed it
    # (s2's grade here, whose order against s1's lines decides nothing): a pull puts it before them. Only the lines
    # this workspace's pushes added keep their order (and those whose order decides a number: test_pg_push_order)
    other = PgStore(pg_url, agent="other")
    other.append(S2)
    other.append(grade("s2", 0.6))
    other.close()
    log = log_path(ws_root)
    log.write_bytes(S2 + S1 + grade("s1", 0.9) + grade("s2", 0.6))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (2, 2)
    pulled = tmp_path / "pulled.jsonl"
    code, _, err = run(capsys, "store", "pull", str(pulled), "-w", str(ws_root), "--store", pg_url)
    assert code == 0, err
    assert pulled.read_bytes() == S2 + grade("s2", 0.6) + S1 + grade("s1", 0.9)  # by hand: the database's order
    log.write_bytes(pulled.read_bytes() + grade("s1", 0.5))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 4, [])
    assert rewards(pg_url) == [0.4, 0.6, None, 0.9, 0.5]


def memory_path(root: Path) -> Path:
    (path,) = (log_path(root).parent / ".cache").glob("pushed-*")
    return path


def pushed_s1_graded(capsys: pytest.CaptureFixture[str], root: Path, url: str) -> tuple[Path, Path]:
    """s1 and its grade 0.9 pushed (2 events added): the log and the memory of that push."""
    log = log_path(root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, root, url)["added"] == 2
    return log, memory_path(root)


def test_a_damaged_memory_refuses_a_push_that_adds_until_it_is_removed(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    log, memory = pushed_s1_graded(capsys, ws_root, pg_url)
    data = memory.read_bytes()
    memory.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # a bit flipped: its checksum fails
    log.write_bytes(S1 + grade("s1", 0.2))  # the pushed grade edited by hand
    # before, read as no memory: "1 event added", and the database held 0.9 and 0.2
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith(f"lesson-credit: {memory}: ") and "damaged" in err, err
    assert rewards(pg_url) == [None, 0.9]
    assert memory.read_bytes() != data  # left as it was (damaged) for a look
    # a push that adds nothing cannot double an event: it goes on, says so, and remembers the log again
    log.write_bytes(S1 + grade("s1", 0.9))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (0, 2)
    warnings = out["warnings"]
    assert isinstance(warnings, list) and len(warnings) == 1 and "damaged" in warnings[0], warnings
    # by hand: the same two events (9 bytes each), now as held already (this push did not add them): the same size
    assert len(memory.read_bytes()) == len(data) and memory.read_bytes() != data
    log.write_bytes(S1 + grade("s1", 0.2))
    assert "line 2 is not what was pushed there" in refused(capsys, ws_root, pg_url)


def test_a_memory_replaced_by_a_symbolic_link_is_not_followed_and_refuses_a_push_that_adds(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, tmp_path: Path
) -> None:
    log, memory = pushed_s1_graded(capsys, ws_root, pg_url)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(memory.read_bytes())  # a valid memory, but reached through a link: not read
    memory.unlink()
    memory.symlink_to(elsewhere)
    log.write_bytes(S1 + grade("s1", 0.2) + S2)
    # before, set aside as a cache and read as no memory: the edited grade and s2 added
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith(f"lesson-credit: {memory}: ") and "not a regular file" in err, err
    assert rewards(pg_url) == [None, 0.9]
    assert memory.is_symlink() and elsewhere.read_bytes() == memory.read_bytes()  # nothing written through it
    memory.unlink()  # removed: no memory, the push adds what the database does not hold (as documented)
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"]) == (2, 1)
    assert rewards(pg_url) == [None, 0.9, 0.2, 0.4]


def test_a_memory_of_the_previous_format_is_read_as_every_event_held(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    from lesson_credit.core.base.sealed import seal
    from lesson_credit.core.log.events import decode_raw
    from lesson_credit.core.log.pgschema import row_fields

    log, memory = pushed_s1_graded(capsys, ws_root, pg_url)
    store_id = memory.name.removeprefix("pushed-")
    pushed = [event.strip() for event in (S1, grade("s1", 0.9))]
    digests = b"".join(row_fields(event, decode_raw(event))["digest"][:8] for event in pushed)
    memory.write_bytes(seal(b"lesson-credit pushed 1\n", f"{store_id}\n".encode() + digests))  # as it was written
    log.write_bytes(S1 + grade("s1", 0.2))
    assert "line 2 is not what was pushed there" in refused(capsys, ws_root, pg_url)
    log.write_bytes(S1 + grade("s1", 0.9) + grade("s1", 0.2))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 2, [])


def test_a_caches_folder_leading_out_of_the_workspace_is_not_used_and_each_push_says_so(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, tmp_path: Path
) -> None:
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2
    cache = log.parent / ".cache"
    cache.rename(tmp_path / "outside")
    cache.symlink_to(tmp_path / "outside")  # the memory is there, but through a link out of the workspace
    log.write_bytes(S1 + grade("s1", 0.9) + S2)
    out = push(capsys, ws_root, pg_url)  # no memory: pushed as before there was one, but not silently
    assert (out["added"], out["present"]) == (1, 2)
    warnings = out["warnings"]
    assert isinstance(warnings, list) and any("leads out of the workspace" in w for w in warnings), warnings
    assert len(list((tmp_path / "outside").glob("pushed-*"))) == 1  # nothing written there


def test_two_workspaces_each_keep_the_order_of_the_lines_their_own_pushes_added(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, tmp_path: Path
) -> None:
    from tests.pg.pg_helpers import make_workspace

    first, second = ws_root, make_workspace(tmp_path / "second")
    shared = S1 + grade("s1", 0.9) + grade("s1", 0.2)  # a log copied into the second workspace, then both grow
    log_path(first).write_bytes(shared)
    assert push(capsys, first, pg_url)["added"] == 3  # the first workspace's own
    log_path(second).write_bytes(shared + S2)
    out = push(capsys, second, pg_url)
    assert (out["added"], out["present"]) == (1, 3)  # only s2 is the second workspace's own
    # the second workspace swaps the shared grades (the first workspace stored them: their order in the
    # database is the first's) and grades on: before, pushed (0.9 in force in its file, 0.2 in the database); now
    # refused, as the order of two grades of one session decides which is in force (tests/pg/test_pg_push_order.py)
    swapped = S1 + grade("s1", 0.2) + grade("s1", 0.9) + S2
    log_path(second).write_bytes(swapped + grade("s2", 0.5))
    assert "lines 2 and 3 hold two grades of one session" in refused(capsys, second, pg_url)
    log_path(second).write_bytes(shared + S2 + grade("s2", 0.5))  # back in the database's order: pushed
    out = push(capsys, second, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 4, [])
    # the first workspace swapping the same two lines, its own, and growing: refused
    log_path(first).write_bytes(S1 + grade("s1", 0.2) + grade("s1", 0.9) + grade("s1", 0.4))
    assert "lines 2 and 3 hold events pushed to " in refused(capsys, first, pg_url)
    assert rewards(pg_url) == [None, 0.9, 0.2, 0.4, 0.5]


def test_what_the_memory_compares_by_what_the_database_did_with_each_line(tmp_path: Path) -> None:
    from array import array

    from lesson_credit.core.log.pgpush import PushReport
    from lesson_credit.core.log.pushmemory import EditedLog, PushMemory

    def read(digests: list[bytes], added: int, first: int | None = None, stored: tuple[int, ...] = (),
             refused: tuple[int, ...] = ()) -> PushMemory:  # fmt: skip
        """A pass over `digests` (lines 1, 2, ...), the push adding `added` of them, the first (0, 1, ...) being
        `first`; of those not added from the memory's end on, `stored` held already and `refused` refused."""
        memory = PushMemory(tmp_path / ".cache", "abc", "sessions.jsonl", "db")
        memory.start()
        for number, digest in enumerate(digests, start=1):
            memory.row(number, digest)
        memory.end(PushReport(added=added), lambda: first, lambda start: (array("q", stored), array("q", refused)))
        return memory

    a, b, c, n, r = (bytes([byte]) * 32 for byte in b"abcnr")
    read([a, b, a, c], added=4).save()  # all four added by this workspace
    # the second `a` moved before `b`: by hand, line 2 now holds `a` (was `b`), line 3 `b` (was `a`); line 4 the same
    with pytest.raises(EditedLog, match=r"^sessions\.jsonl: lines 2 and 3 hold events pushed to db in another order"):
        read([a, a, b, c, n], added=1, first=4)
    assert read([a, b, a, c, n], added=1, first=4).warning is None  # in order, grown: as always
    # `b` held already when pushed (another agent stored it first): it may come first, as a pull puts it
    (tmp_path / ".cache" / "pushed-abc").unlink()
    read([a, b, c], added=2, stored=(1,)).save()
    pulled = read([b, a, c, n], added=1, first=3)  # by hand: `a` and `c`, this workspace's, still in order
    assert pulled.warning is None
    with pytest.raises(EditedLog, match=r"another order"):  # `c` before `a`: this workspace's own, swapped
        read([c, b, a, n], added=1, first=3)
    # a refused line (line 2) is not compared: taken out, the log is the memory grown
    (tmp_path / ".cache" / "pushed-abc").unlink()
    read([a, r, b], added=2, refused=(1,)).save()
    assert read([a, b, n], added=1, first=2).warning is None
    assert read([a, b], added=0, stored=(1,)).warning is None  # and pushed again, nothing to add: nothing to say


def test_a_second_session_line_put_before_the_one_the_database_holds_is_refused_like_an_edit(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    """The first session event of an id in the file is the one that counts (the database refuses later ones). A
    session line for s1 written before the s1 the database holds changes s1 in the file (reward 0.3 on quote.md)
    while the database keeps s1 as pushed (no reward, git.md): the database refuses that line, so it added
    nothing the memory could catch; before, a grade appended after it was pushed without a word."""
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2
    log.write_bytes(S1_AGAIN + S1 + grade("s1", 0.9) + S2)  # s1 in the file is now line 1's
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith("lesson-credit: sessions.jsonl: line 1 is a session event before the one "), err
    assert rewards(pg_url) == [None, 0.9]
    # nothing to add: a warning, nothing pushed
    log.write_bytes(S1_AGAIN + S1 + grade("s1", 0.9))
    out = push(capsys, ws_root, pg_url)
    warnings = out["warnings"]
    assert out["added"] == 0 and isinstance(warnings, list) and len(warnings) == 1, out
    assert "line 1 is a session event before the one " in warnings[0], warnings
    log.write_bytes(S1_AGAIN + S1 + grade("s1", 0.9) + S2)  # and grown after that push: refused still
    refused(capsys, ws_root, pg_url)
    # that line after the one the database holds (a second one, ignored by the file too): pushed as before
    log.write_bytes(S1 + S1_AGAIN + grade("s1", 0.9) + S2)
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (1, 3, [])
    assert rewards(pg_url) == [None, 0.9, 0.4]


def test_a_session_line_before_the_held_one_beside_a_damaged_memory_says_both(tmp_path: Path) -> None:
    """Without a database: a memory that cannot be read (damaged), and a pass whose line 1 (`r`, session s1) the
    database refused while line 2 (`s`, session s1) it holds. Nothing added: one warning saying both, nothing
    remembered; something added: refused (the damaged memory's refusal comes first)."""
    from array import array

    from lesson_credit.core.log.pgpush import PushReport
    from lesson_credit.core.log.pushmemory import EditedLog, PushMemory

    r, s = bytes([1]) * 32, bytes([2]) * 32
    damaged = tmp_path / ".cache" / "pushed-abc"
    damaged.parent.mkdir()
    damaged.write_bytes(b"lesson-credit pushed 2\nnot sealed")

    def read(added: int) -> PushMemory:
        memory = PushMemory(tmp_path / ".cache", "abc", "sessions.jsonl", "db")
        memory.start()
        memory.row(1, r, "s1")
        memory.row(2, s, "s1")
        memory.end(PushReport(added=added), lambda: None, lambda start: (array("q", [1]), array("q", [0])))
        return memory

    memory = read(0)
    assert memory.warning is not None and "is damaged" in memory.warning, memory.warning
    said = "and sessions.jsonl: line 1 is a session event before the one db holds for its session (line 2)"
    assert said in memory.warning, memory.warning
    memory.save()
    assert damaged.read_bytes() == b"lesson-credit pushed 2\nnot sealed"  # nothing remembered
    with pytest.raises(EditedLog, match="is damaged"):
        read(1)
