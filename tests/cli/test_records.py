"""Reading one session's record back (core.log.records); the journal check behind journal_changed (core.library)."""

from __future__ import annotations

import hashlib
import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.library.journals import journal_changed
from lesson_credit.core.log.records import session_record


def found(record: dict[str, Any] | None) -> dict[str, Any]:
    assert record is not None
    return record


def write_log(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("unique", [False, True])
def test_finds_the_session_event_not_grades_or_notes(tmp_path: Path, unique: bool) -> None:
    log = write_log(
        tmp_path / "log.jsonl",
        [
            '{"type":"selection","session_id":"s1","selected":[]}',
            '{"type":"session","session_id":"s1","lessons":[],"journal_sha256":"aa"}',
            '{"type":"grade","session_id":"s1","base_reward":0.5,"note":"see \\"session_id\\":\\"s1\\""}',
            '{"type":"session","session_id":"s10","lessons":[]}',
        ],
    )
    assert session_record(log, "s1", unique=unique) == {
        "type": "session",
        "session_id": "s1",
        "lessons": [],
        "journal_sha256": "aa",
    }
    assert found(session_record(log, "s10", unique=unique))["session_id"] == "s10"
    assert session_record(log, "s", unique=unique) is None


def test_the_first_of_duplicates_counts(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "log.jsonl",
        [
            '{"session_id": "d", "lessons": [], "outcome": "first"}',
            '{"session_id":"d","lessons":[],"outcome":"second"}',
        ],
    )
    assert found(session_record(log, "d"))["outcome"] == "first"


def test_other_spellings_and_non_ascii_ids(tmp_path: Path) -> None:
    log = write_log(
        tmp_path / "log.jsonl",
        [
            json.dumps({"session_id": "café", "lessons": []}),  # \\u00e9 escaped
            json.dumps({"session_id": "naïve", "lessons": []}, ensure_ascii=False),
            '{"session_id"  :  "wide", "lessons": []}',
        ],
    )
    for sid in ("café", "naïve", "wide"):
        for unique in (False, True):
            assert found(session_record(log, sid, unique=unique))["session_id"] == sid


def test_missing_or_empty_log(tmp_path: Path) -> None:
    assert session_record(tmp_path / "nope.jsonl", "s") is None
    (tmp_path / "empty.jsonl").write_bytes(b"")
    assert session_record(tmp_path / "empty.jsonl", "s") is None


def test_journal_changed(tmp_path: Path) -> None:
    (tmp_path / "j.md").write_bytes(b"hello\n")
    digest = hashlib.sha256(b"hello\n").hexdigest()
    record = {"journal_path": "j.md", "journal_sha256": digest}
    assert journal_changed(tmp_path, record)[0] is False
    (tmp_path / "j.md").write_bytes(b"hello!\n")
    assert journal_changed(tmp_path, record)[0] is True
    assert journal_changed(tmp_path, {"journal_path": "j.md"})[0] is None  # nothing recorded to compare
    assert journal_changed(tmp_path, {"journal_path": "gone.md", "journal_sha256": digest}) == (
        None,
        "journal gone.md not found",
    )
    outside = {"journal_path": str(tmp_path.parent / "x.md"), "journal_sha256": digest}
    assert journal_changed(tmp_path, outside)[0] is None


def test_journal_changed_names_a_journal_that_is_no_file_and_says_the_same_as_show_of_one_outside(
    tmp_path: Path,
) -> None:
    """A journal replaced by a FIFO was "not found" (it is there), and a FIFO put in its place between the check and
    the read would have hung the hash; a journal outside the workspace was "the journal" in one place and named in
    the journal's own (`read_journal`)."""
    digest = hashlib.sha256(b"hello\n").hexdigest()
    os.mkfifo(tmp_path / "j.md")
    assert journal_changed(tmp_path, {"journal_path": "j.md", "journal_sha256": digest}) == (
        None,
        f"journal {tmp_path / 'j.md'}: a FIFO, not a regular file; not read",
    )
    outside = {"journal_path": str(tmp_path.parent / "x.md"), "journal_sha256": digest}
    assert journal_changed(tmp_path, outside) == (
        None,
        f"journal {tmp_path.parent / 'x.md'} is outside the workspace (not read without --allow-outside)",
    )


def test_a_journal_over_the_cap_is_not_read_to_say_it_is_not_checked(tmp_path: Path) -> None:
    """A journal over the 64 MB cap was read to 64 MB + 1 bytes (0.46 s and 107 MB at that size) before its hash
    was said to be unchecked: its size is known before reading. A sparse file of the cap plus one byte holds no
    data on disk; the bytes Python allocates while checking it stay far under the 64 MB a read would take."""
    journal = tmp_path / "j.md"
    with journal.open("wb") as handle:
        handle.truncate((64 << 20) + 1)
    record = {"journal_path": "j.md", "journal_sha256": hashlib.sha256(b"").hexdigest()}
    tracemalloc.start()
    try:
        changed, why = journal_changed(tmp_path, record)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (changed, why) == (None, f"journal {journal}: larger than 64 MB; not read")
    assert peak < 1 << 20
