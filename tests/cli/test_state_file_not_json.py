"""A bandit-state.json that is not JSON is said to be so, where, in the one line a small one gets, by every command
that reads it, however many arm keys its bytes have before the error. Before, a file with more arm-like keys than a
state file is read with (`{"arms": {"x/0.md": 1 "x/1.md": 1 ...`, no commas: its keys were counted from its bytes
before it was decoded) was refused as one of too many arms; now the scan's count stands only for bytes that are JSON
so far (core/bandit/arm_count.py), and such a file takes the path a small one that is not JSON takes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lesson_credit.core.bandit import arm_count, interop
from lesson_credit.core.log import arm_names
from tests.cli.cli_fixtures import log_bytes, run
from tests.cli.test_log_lesson_cap_own_file import at_the_cap
from tests.support.engine_helpers import STATE_REL


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arm_names, "MAX_LOG_LESSONS", 3)
    monkeypatch.setattr(interop, "MAX_IMPORT_ARMS", 3)


def not_json(arms: int) -> bytes:
    """`arms` members without the commas between them: not JSON from the second one on (byte 21)."""
    return ('{"arms": {' + " ".join(f'"x/{i}.md": 1' for i in range(arms)) + "}}").encode()


def test_the_count_stands_only_for_bytes_that_are_json_so_far() -> None:
    raw = not_json(40)
    assert arm_count.count_arms([raw], 10) == -1  # (before: 40, each colon at depth 2 an arm)
    assert not arm_count.bytes_have_more_arms(raw, 10)
    valid = raw.replace(b" 1 ", b" 1, ")
    assert arm_count.count_arms([valid], 10) == 40
    assert arm_count.count_arms([valid[:200]], 10) > 10  # cut short (a save half-way): counted as far as it goes


def said(tmp_path: Path, capsys: pytest.CaptureFixture[str], arms: int, command: str) -> tuple[int, str, str]:
    """What `command` says of a workspace whose own file (or, for export and import, another one) is `not_json`."""
    ws = at_the_cap(tmp_path / str(arms), capsys)
    target = ws / STATE_REL if command in ("status", "record", "lint") else tmp_path / f"other-{arms}.json"
    target.write_bytes(not_json(arms))
    os.utime(target, (1_000_000_000, 1_000_000_000))  # an old file, not a save in progress
    (ws / "j.txt").write_text("alpha", encoding="utf-8")
    argv = {
        "status": ["status", "-w", str(ws)],
        "lint": ["lint", "-w", str(ws)],
        "record": ["record", "-w", str(ws), "--session-id", "r1", "--journal", str(ws / "j.txt"), "--lessons",
                   "tools/a.md", "--reward", "1"],
        "export-gptme": ["export-gptme", "-w", str(ws), str(target)],
        "import-gptme": ["import-gptme", "-w", str(ws), str(target)],
    }[command]  # fmt: skip
    log_before = log_bytes(ws) or b""
    code, out, err = run(capsys, *argv)
    added = (log_bytes(ws) or b"")[len(log_before) :]
    assert (log_bytes(ws) or b"").startswith(log_before)
    if command in ("export-gptme", "import-gptme"):
        assert target.read_bytes() == not_json(arms) and added == b""  # refused: nothing changed
    words = (out + err).replace(str(tmp_path / str(arms)), "WS").replace(str(target), "FILE")
    return code, words, added.decode()


@pytest.mark.parametrize("command", ["status", "lint", "record", "export-gptme", "import-gptme"])
def test_every_reader_says_not_json_as_for_a_small_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    small = said(tmp_path, capsys, 2, command)  # 2 keys: within what any state file is read with
    planted = said(tmp_path, capsys, 40, command)  # 40: more than 3 + 3
    if command != "record":  # (a write replaces a file that is not JSON without a word, as before: status says it)
        assert "not valid JSON" in small[1] or "not JSON" in small[1], small
    assert "arms (counted no further)" not in planted[1] and "more than" not in planted[1], planted
    assert planted == small


def test_every_start_of_a_state_file_is_json_so_far() -> None:
    """Cut anywhere (a piece of the scan ends there: in a string, an escape, a number, a word, a UTF-8 character), a
    file's start is the start of some JSON; bytes after a whole document, or an error before the cut, are not."""
    whole = '{"arms": {"café": {"alpha": 1.5e-3, "n": -12, "ok": true, "none": null, "s": "a\\u00e9\\n\\""}}}'.encode()
    assert [cut for cut in range(len(whole) + 1) if not arm_count.json_so_far(whole[:cut])] == []
    assert not arm_count.json_so_far(whole + b" x")
    assert not arm_count.json_so_far(b'{"arms": {"a": 1 "b"')
    assert not arm_count.json_so_far(b"[" * 2000)  # (deeper than any state file: the decode says so)
