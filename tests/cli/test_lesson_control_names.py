"""A lesson file whose name holds a line break (wherever str.splitlines breaks one) is no lesson: its id would be
two lines wherever ids are one line each (`select`'s output, which `record --lessons-file` reads back; lint's
lists). It is not read, and said once, the break shown as `\\x0a`. (Other control codes in a name are shown
escaped: tests/cli/test_cli_safety.py.)"""

from __future__ import annotations

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
