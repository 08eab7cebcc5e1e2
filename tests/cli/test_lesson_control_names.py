"""A lesson file whose name holds a line break (wherever str.splitlines breaks one) is no lesson: its id would be
two lines wherever ids are one line each (`select`'s output, which `record --lessons-file` reads back; lint's
lists). It is not read, and said once, the break shown as `\\x0a`. (Other control codes in a name are shown
escaped: tests/cli/test_cli_safety.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.cli_fixtures import make_ws, run


def test_a_lesson_file_named_with_a_line_break_is_not_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(tmp_path, {"tools/good.md": ["rebase"]})
    (ws / "lessons" / "tools" / "bad\nname.md").write_text(
        "---\nmatch:\n  keywords: [rebase]\n---\n# Bad\nbody\n", encoding="utf-8"
    )
    (ws / "ctx.txt").write_text("a rebase went wrong\n", encoding="utf-8")
    code, out, err = run(capsys, "select", "-w", str(ws), "--context", str(ws / "ctx.txt"), "--dry-run", "--k", "5")
    assert code == 0, err
    assert out.splitlines() == ["tools/good.md"], out  # before: "tools/bad", "name.md" among them
    code, out, _ = run(capsys, "lint", "-w", str(ws))
    assert "tools/bad\\x0aname.md" in out and "no lesson id" in out, out
    assert "name.md" not in [line.strip() for line in out.splitlines()], out


def test_select_s_output_names_lessons_with_a_space_or_a_hash_that_record_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`record --lessons-file` split each line on whitespace and cut it at any `#`: a lesson file named with a
    space (`tools/my lesson.md`) or a `#` (`tools/c#sharp.md`), as `select` prints it on a line of its own, was
    refused ('not in the lesson library: tools/my, lesson.md, tools/c'). A line that is a lesson's id is taken
    whole (`tools/x #y.md` too); else a comment starts at a `#` that begins the line or follows a space, and the
    rest is split as before."""
    lessons = {"tools/my lesson.md": ["rebase"], "tools/c#sharp.md": ["rebase"], "tools/x #y.md": ["rebase"]}
    ws = make_ws(tmp_path, lessons, journals={"j.md": "a rebase\n"})
    (ws / "ctx.txt").write_text("a rebase went wrong\n", encoding="utf-8")
    argv = ["-w", str(ws), "--session-id", "s1"]
    code, out, err = run(capsys, "select", *argv, "--context", str(ws / "ctx.txt"), "--k", "3", "--seed", "1")
    assert code == 0 and sorted(out.splitlines()) == sorted(lessons), (out, err)
    (ws / "sel.txt").write_text(out + err + "   # an indented comment\n", encoding="utf-8")
    code, out, err = run(capsys, "record", *argv, "--journal", "j.md", "--lessons-file", str(ws / "sel.txt"))
    assert code == 0, err
    code, out, err = run(capsys, "show", "s1", "-w", str(ws), "--json")
    assert sorted(lesson["path"] for lesson in json.loads(out)["lessons"]) == sorted(lessons), out
