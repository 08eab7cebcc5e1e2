"""A folder of lessons alone (a checkout of a lesson library, no state/): reading it writes nothing into it, from
the command line or the dashboard alike. The caches made `state/lesson-thompson/.cache/` there (lessons.msgpack,
intervals/), a new folder in the user's checkout that a read had no reason to make. From the first write that
makes the state folder (a record), the caches are kept as in any workspace."""

from __future__ import annotations

from pathlib import Path

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, fixed_clock, make_workspace

LESSONS = {"tools/git.md": (["git worktree"], "active"), "tools/quote.md": (["misquoted"], "active")}


def lessons_only(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path, LESSONS)
    assert sorted(p.name for p in root.iterdir()) == ["lessons"]
    return root


def test_reading_a_folder_of_lessons_alone_makes_no_state_folder(tmp_path: Path) -> None:
    root = lessons_only(tmp_path)
    ws = Workspace(root, clock=fixed_clock)
    table = ws.lesson_table()
    assert sorted(row.path for row in table.rows) == ["tools/git.md", "tools/quote.md"]
    assert ws.sessions() == []
    ws.library(reload=True)
    assert sorted(p.name for p in root.iterdir()) == ["lessons"]


def test_the_commands_that_read_make_no_state_folder(tmp_path: Path) -> None:
    root = lessons_only(tmp_path)
    for argv in (["status"], ["sessions"], ["status", "--json"], ["lint"]):
        code, _out, err = run_cli(*argv, "--workspace", str(root))
        assert code == 0, (argv, err)
        assert sorted(p.name for p in root.iterdir()) == ["lessons"], argv


def test_from_the_first_record_the_caches_are_kept(tmp_path: Path) -> None:
    root = lessons_only(tmp_path)
    (root / "j.md").write_text(BASIC_JOURNAL, encoding="utf-8")
    ws = Workspace(root, clock=fixed_clock)
    ws.lesson_table()
    ws.record("s1", root / "j.md", ["tools/git.md"], reward=0.8)  # makes state/ (the log)
    Workspace(root, clock=fixed_clock).lesson_table()  # the next command's read
    cache = root / "state" / "lesson-thompson" / ".cache"
    assert (cache / "lessons.msgpack").is_file()
