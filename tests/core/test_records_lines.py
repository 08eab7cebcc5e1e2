"""session_record_in_lines: a database store's record lookup (no file to search)."""

from core.records import session_record_in_lines


def test_first_session_event_for_the_id_wins_and_escaped_ids_are_found() -> None:
    lines = [
        b'{"type": "grade", "session_id": "s1", "base_reward": 0.2}\n',
        b'{"session_id": "s10", "lessons": []}\n',  # a longer id that contains "s1"
        b'{"type": "session", "session_id": "s1", "journal_sha256": "first"}\n',
        b'{"type": "session", "session_id": "s1", "journal_sha256": "second"}\n',  # a duplicate: does not count
        b'{"session_id": "\\u00e9t\\u00e9", "journal_sha256": "escaped"}\n',  # written with ASCII escapes
        '{"session_id": "caf\u00e9", "journal_sha256": "utf-8"}\n'.encode(),  # written as UTF-8
        b"not json\n",
    ]
    assert session_record_in_lines(lines, "s1") == {"type": "session", "session_id": "s1", "journal_sha256": "first"}
    record = session_record_in_lines(lines, "\u00e9t\u00e9")
    assert record is not None and record["journal_sha256"] == "escaped"
    record = session_record_in_lines(lines, "caf\u00e9")
    assert record is not None and record["journal_sha256"] == "utf-8"
    assert session_record_in_lines(lines, "s2") is None
