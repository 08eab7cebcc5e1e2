"""A database keeps its events in the order they were stored, and that order decides numbers as the file's does:
sessions fold in it, a session's later grade is the one in force, its last selection before its record gives the
propensities, a later prior replaces an earlier one, a session's first session event counts. `store push` of a log
that holds events the database holds in another order on any of those (lines another agent stored, moved since or
stored first) is refused in one line, naming both lines, and adds nothing: the file and the database would give
different numbers. Lines whose order decides nothing (grades of two sessions) may be anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from lesson_credit.core.log.pgstore import PgStore
from tests.pg.pg_helpers import line, log_path, push, refused

S1 = line({"type": "session", "session_id": "s1", "base_reward": None,
           "lessons": [{"path": "tools/git.md", "salience": 1.0}]})  # fmt: skip
S2 = line({"type": "session", "session_id": "s2", "base_reward": 0.4,
           "lessons": [{"path": "tools/git.md", "salience": 1.0}]})  # fmt: skip
S3 = line({"type": "session", "session_id": "s3", "base_reward": 0.6,
           "lessons": [{"path": "tools/quote.md", "salience": 1.0}]})  # fmt: skip
S1_AGAIN = line({"type": "session", "session_id": "s1", "base_reward": 0.3,
                 "lessons": [{"path": "tools/quote.md", "salience": 1.0}]})  # fmt: skip


def grade(sid: str, base: float, grader: str = "manual") -> bytes:
    return line({"type": "grade", "session_id": sid, "base_reward": base, "grader": grader})


def stored(url: str) -> list[tuple[str, object]]:
    """Each stored event's session id and `base_reward`, in position order."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT raw FROM lesson_credit.events ORDER BY position").fetchall()
    return [(json.loads(raw)["session_id"], json.loads(raw).get("base_reward")) for (raw,) in rows]


def memory_bytes(root: Path) -> bytes:
    (path,) = (log_path(root).parent / ".cache").glob("pushed-*")
    return path.read_bytes()


def by_other(url: str, *events: bytes) -> None:
    other = PgStore(url, agent="other")
    for event in events:
        other.append(event)
    other.close()


def test_another_agents_grade_moved_before_this_workspaces_is_refused(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2
    by_other(pg_url, grade("s1", 0.2))  # the database: s1, 0.9, 0.2: 0.2 in force
    remembered = memory_bytes(ws_root)
    log.write_bytes(S1 + grade("s1", 0.2) + grade("s1", 0.9) + S2)  # 0.9 in force in the file
    # before, "1 event added" and no warning: the file said 0.9, the database 0.2
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith("lesson-credit: sessions.jsonl: lines 2 and 3 ") and "other order" in err, err
    assert "grade" in err, err
    assert stored(pg_url) == [("s1", None), ("s1", 0.9), ("s1", 0.2)]
    assert memory_bytes(ws_root) == remembered
    # harmless: that grade after a session of another id (the database adds s2 after it: the file's order of s1's
    # grades and of the sessions is the database's)
    log.write_bytes(S1 + grade("s1", 0.9) + S2 + grade("s1", 0.2) + grade("s2", 0.5))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (2, 3, [])
    assert stored(pg_url) == [("s1", None), ("s1", 0.9), ("s1", 0.2), ("s2", 0.4), ("s2", 0.5)]


def test_a_first_push_of_lines_another_agent_stored_first_in_another_order_is_refused(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    """No memory at all: the database itself says where the events it holds are."""
    by_other(pg_url, S2)
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9) + S2)  # the database would fold s2 before s1, the file s1 before s2
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith("lesson-credit: sessions.jsonl: lines 1 and 3 ") and "session" in err, err
    assert stored(pg_url) == [("s2", 0.4)]
    assert not list((log.parent / ".cache").glob("pushed-*"))  # nothing remembered: nothing pushed
    # grades of two sessions in any order: s2's stored grade after s1's new lines is harmless
    by_other(pg_url, grade("s2", 0.1))
    log.write_bytes(S2 + S1 + grade("s1", 0.9) + grade("s2", 0.1))
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (2, 2, [])
    assert stored(pg_url) == [("s2", 0.4), ("s2", 0.1), ("s1", None), ("s1", 0.9)]


def test_a_session_line_the_database_holds_another_of_is_refused_wherever_it_was_remembered(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str
) -> None:
    """A memory written before such lines were refused holds `S1_AGAIN` (refused by the database) before the s1
    it holds, in the part of the log that matches the memory; the file counts S1_AGAIN's s1 (reward 0.3 on
    quote.md), the database its own (pending, git.md). Before, every later push added its events silently."""
    from lesson_credit.core.base.sealed import seal
    from lesson_credit.core.log.events import decode_raw
    from lesson_credit.core.log.pgschema import row_fields

    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2
    (path,) = (log.parent / ".cache").glob("pushed-*")
    head = path.name.removeprefix("pushed-").encode() + b"\n"
    lines = [S1_AGAIN, S1, grade("s1", 0.9)]
    digests = b"".join(row_fields(e.strip(), decode_raw(e.strip()))["digest"][:8] for e in lines)
    path.write_bytes(seal(b"lesson-credit pushed 2\n", head + digests + bytes([2, 0, 0])))  # refused, own, own
    log.write_bytes(S1_AGAIN + S1 + grade("s1", 0.9) + S2)
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith("lesson-credit: sessions.jsonl: line 1 is a session event "), err
    assert stored(pg_url) == [("s1", None), ("s1", 0.9)]
    # another agent's s3 in the database, this log's own s3 (other lessons): the file would count its own
    by_other(pg_url, S3)
    log.write_bytes(S1 + grade("s1", 0.9) + S3.replace(b"0.6", b"0.2") + S2)
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith("lesson-credit: sessions.jsonl: line 3 is a session event "), err
    assert stored(pg_url) == [("s1", None), ("s1", 0.9), ("s3", 0.6)]


def selection(sid: str, propensity: float) -> bytes:
    return line({"type": "selection", "session_id": sid, "timestamp": "2026-12-06T05:00:00Z", "k": 1, "seed": 1,
                 "candidates": ["tools/git.md"], "selected": ["tools/git.md"],
                 "propensity": {"tools/git.md": propensity}})  # fmt: skip


def prior(alpha: float) -> bytes:
    return line({"type": "prior", "timestamp": "2026-12-06T05:00:00Z", "arms": {"tools/git.md": {"alpha": alpha,
                 "beta": 1.0}}})  # fmt: skip


@pytest.mark.parametrize(
    ("theirs", "ours", "what"),
    [
        # the last selection before s1's record gives its propensity: the file's is theirs (0.3), the database's ours
        (selection("s1", 0.3), selection("s1", 0.8), "a session's selections or its record"),
        # a later prior replaces an earlier one: alpha 2 in the file, 5 in the database
        (prior(2.0), prior(5.0), "two events naming no session"),
    ],
    ids=["selections", "priors"],
)
def test_a_selection_or_a_prior_another_agent_stored_first_after_this_logs_own_is_refused(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, theirs: bytes, ours: bytes, what: str
) -> None:
    by_other(pg_url, theirs)
    log = log_path(ws_root)
    log.write_bytes(ours + theirs + S1)
    err = refused(capsys, ws_root, pg_url)
    assert err.startswith(f"lesson-credit: sessions.jsonl: lines 1 and 2 hold {what}"), err
    log.write_bytes(theirs + ours + S1)  # the database's order: pushed
    out = push(capsys, ws_root, pg_url)
    assert (out["added"], out["present"], out["warnings"]) == (2, 1, [])


def test_a_push_that_added_nothing_leaves_the_order_to_be_checked_by_the_next_one(
    capsys: pytest.CaptureFixture[str], ws_root: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The order is asked of the database only when it may have changed: not for a log that is the last checked
    one grown at its end by events all added (the common push). A push that adds nothing is not checked, so the
    memory it writes (of another agent's grade moved before this workspace's) is not taken for a checked one: the
    next push, grown at its end, is refused."""
    from lesson_credit.core.log import pgconn, pgpush

    asked: list[pgpush.Disagreement | None] = []
    ask = pgpush._disagreeing

    def asking(conn: pgconn.Connection) -> pgpush.Disagreement | None:
        asked.append(ask(conn))
        return asked[-1]

    monkeypatch.setattr(pgpush, "_disagreeing", asking)
    log = log_path(ws_root)
    log.write_bytes(S1 + grade("s1", 0.9))
    assert push(capsys, ws_root, pg_url)["added"] == 2  # into an empty store: every event added in order
    log.write_bytes(S1 + grade("s1", 0.9) + S2)
    assert push(capsys, ws_root, pg_url)["added"] == 1
    assert asked == []  # both grown at the end of a checked log
    by_other(pg_url, grade("s1", 0.2))
    log.write_bytes(S1 + grade("s1", 0.2) + grade("s1", 0.9) + S2)  # 0.9 in force here, 0.2 in the database
    out = push(capsys, ws_root, pg_url)
    assert out["added"] == 0 and asked == [], out
    log.write_bytes(S1 + grade("s1", 0.2) + grade("s1", 0.9) + S2 + grade("s2", 0.5))
    assert "lines 2 and 3 hold two grades of one session" in refused(capsys, ws_root, pg_url)
    assert len(asked) == 1
    assert stored(pg_url) == [("s1", None), ("s1", 0.9), ("s2", 0.4), ("s1", 0.2)]
