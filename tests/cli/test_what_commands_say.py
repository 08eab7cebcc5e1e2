"""What a command says when something is off: a records file saved as one JSON
array, a log that cannot be read, an empty journal; and where the README says the command is."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.base.safe_read import open_regular
from tests.support.cli_run import ROOT, run_cli
from tests.support.engine_helpers import LOG_REL, make_workspace, session


def test_show_says_a_json_array_records_file_was_not_read(tmp_path: Path) -> None:
    """`json.dump(records)` writes one array: `show` said only that no record joins the session."""
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", None, {"a.md": 1.0})])
    records = root / "state" / "sessions" / "session-records.jsonl"
    records.parent.mkdir(parents=True)
    records.write_text(json.dumps([{"session_id": "s1", "outcome": "productive"}], indent=2) + "\n")
    code, out, err = run_cli("show", "s1", "-w", str(root))
    assert code == 0, err
    (line,) = [line for line in out.splitlines() if line.startswith("record")]
    assert "has 1 problem (" in line and "a JSON array, not JSON Lines" in line, line
    code, out, err = run_cli("show", "s1", "-w", str(root), "--json")
    assert "JSON array" in out


def test_a_log_that_cannot_be_read_is_not_called_unwritable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Permission denied on reading the log said "not writable" (tests run as root: chmod 000 does
    not stop root, so the open is refused here instead)."""
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 0.5, {"a.md": 1.0})])

    def refuse_the_log(path: Any, *args: Any, **kwargs: Any) -> int:
        if Path(path).name == "sessions.jsonl":
            raise PermissionError(errno.EACCES, "Permission denied")
        return open_regular(path, *args, **kwargs)

    monkeypatch.setattr("lesson_credit.core.log.store.open_regular", refuse_the_log)
    code, out, err = run_cli("status", "-w", str(root))
    assert code == 1 and out == ""
    assert err == f"lesson-credit: {root / LOG_REL}: not readable (Permission denied)\n"


def test_an_empty_journal_is_logged_with_a_warning(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, journals={"j.md": "", "k.md": "git\n"})
    code, _out, err = run_cli("record", "--session-id", "s1", "--journal", str(root / "j.md"), "--lessons", "a.md",
                              "-w", str(root))  # fmt: skip
    assert code == 0  # the event was written: a warning, not a refusal
    assert err.count("\n") == 1 and "j.md is empty" in err and "salience is 0" in err
    assert b'"s1"' in (root / LOG_REL).read_bytes()
    code, _out, err = run_cli("record", "--session-id", "s2", "--journal", str(root / "k.md"), "--lessons", "a.md",
                              "-w", str(root))  # fmt: skip
    assert code == 0 and err == ""


def test_the_readme_says_where_the_command_is() -> None:
    """`pip install -e .` into .venv puts lesson-credit in .venv/bin, which is not on PATH."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    cli = text.split("## The CLI", 1)[1].split("```", 1)[0]
    assert ".venv/bin/lesson-credit" in cli and "activate" in cli


def _header(out: str, first: str) -> list[str]:
    """The words of the table header that starts with `first`."""
    (line,) = [line for line in out.splitlines() if line.split()[:1] == [first]]
    return line.split()


def test_a_lessons_credited_share_is_not_called_the_sessions_reward(tmp_path: Path) -> None:
    """`sessions`' reward column is the session's reward; `show`, `explain` and `grade` called the
    lesson's share of it (base x weight under seed: 0.5 x (0.3 + 0.7 x 0.5) = 0.325) "reward" too."""
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, [session("s1", 0.5, {"a.md": 0.5})])
    code, out, err = run_cli("sessions", "-w", str(root))
    assert code == 0 and _header(out, "session")[3] == "reward" and "0.500" in out.splitlines()[2].split(), err
    for command in (["show", "s1"], ["explain", "s1"], ["grade", "s1", "0.5"]):
        code, out, err = run_cli(*command, "-w", str(root))
        header = _header(out, "lesson")
        row = [line for line in out.splitlines() if line.startswith("a.md")][0].split()
        assert code == 0 and "reward" not in header and row[header.index("credited")] == "0.325", (command, out)
