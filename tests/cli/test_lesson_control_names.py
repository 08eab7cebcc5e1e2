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


# Each spelled with a character `record --lessons-file` once mishandled: a no-break space, an em space, an ideographic
# space and a tab inside the id, a zero-width space, control codes (`select` prints them escaped: `\x01`, `\x1b`,
# `\x9b`), and a space and a `#`.
PRINTED = [
    "tools/nb\xa0sp.md",
    "tools/em\u2003sp.md",
    "tools/ideo\u3000x.md",
    "tools/tab\tx.md",
    "tools/zw\u200b.md",
    "tools/ctl\x01.md",
    "tools/esc\x1b[31m.md",
    "tools/csi\x9b.md",
    "tools/my lesson.md",
    "tools/x #y.md",
]


def test_every_id_select_prints_is_read_back_by_record(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(tmp_path, {lesson_id: ["rebase"] for lesson_id in PRINTED}, journals={"j.md": "a rebase\n"})
    (ws / "ctx.txt").write_text("a rebase went wrong\n", encoding="utf-8")
    argv = ["-w", str(ws), "--session-id", "s1"]
    code, out, err = run(capsys, "select", *argv, "--context", str(ws / "ctx.txt"), "--k", "10", "--seed", "1")
    assert code == 0 and len(out.splitlines()) == len(PRINTED), (out, err)
    assert "tools/ctl\\x01.md" in out.splitlines() and "\x1b" not in out  # shown escaped, as every command shows it
    assert [line for line in err.splitlines() if not line.startswith("# ")] == [], err  # nothing said: none to say
    (ws / "sel.txt").write_text(out + err, encoding="utf-8")  # as a hook's `2>&1` saves them
    code, out, err = run(capsys, "record", *argv, "--journal", "j.md", "--lessons-file", str(ws / "sel.txt"))
    assert code == 0, err  # before: 'not in the lesson library: tools/ctl\x01.md (did you mean ...?)' and two more
    code, out, err = run(capsys, "show", "s1", "-w", str(ws), "--json")
    assert sorted(lesson["path"] for lesson in json.loads(out)["lessons"]) == sorted(PRINTED), out


# Ids `record` (and the log's reader) reads as others: the spaces at an id's ends are not part of it, and a backslash
# is a folder's `/` (a Windows path). A hook cannot pass them back: its record is refused, nothing logged.
READ_AS = {" lead.md": "lead.md", "\xa0nbsp.md": "nbsp.md", "tools\\back.md": "tools/back.md"}
# as the messages quote them: a backslash as select prints it (repr's two sent a user looking for a file named with
# two), what does not print (the no-break space) escaped
QUOTED = {" lead.md": "' lead.md'", "\xa0nbsp.md": "'\\xa0nbsp.md'", "tools\\back.md": "'tools\\back.md'"}


def test_select_and_lint_say_which_ids_a_hook_cannot_pass_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path, {"tools/good.md": ["rebase"], **{lesson_id: ["rebase"] for lesson_id in READ_AS}})
    (ws / "ctx.txt").write_text("a rebase went wrong\n", encoding="utf-8")
    code, out, err = run(capsys, "select", "-w", str(ws), "--context", str(ws / "ctx.txt"), "--k", "4", "--seed", "1")
    assert code == 0 and len(out.splitlines()) == 4, (out, err)
    said = sorted(line for line in err.splitlines() if "cannot pass it back" in line)
    assert said == sorted(
        f"# warning: lesson {QUOTED[lesson_id]}: record reads its id as '{read}', so a hook cannot pass it back "
        "(rename its file)"
        for lesson_id, read in READ_AS.items()
    ), err  # before: nothing said, and the hook's record refused ('not in the lesson library: lead.md, ...')
    code, out, err = run(capsys, "select", "-w", str(ws), "--context", str(ws / "ctx.txt"), "--json", "--dry-run")
    assert len([w for w in json.loads(out)["warnings"] if "cannot pass it back" in w]) == 3, out
    code, out, _ = run(capsys, "lint", "-w", str(ws), "--json")
    findings = [finding for finding in json.loads(out)["findings"] if finding["code"] == "unpassable-id"]
    assert sorted(finding["message"] for finding in findings) == sorted(
        f"lesson {QUOTED[lesson_id]}: record reads this id as '{read}': when select draws it, a hook passing it "
        "back to record is refused (not in the lesson library)"
        for lesson_id, read in READ_AS.items()
    ), out  # one finding each (before: none)
    code, out, _ = run(capsys, "lint", "-w", str(ws))
    assert all(sum(QUOTED[lesson_id] in line for line in out.splitlines()) == 1 for lesson_id in READ_AS), out


def test_lint_says_an_id_read_as_another_lesson_credits_that_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`tools\\b.md` (a file named with a backslash) is read by record as `tools/b.md`, which the library also has:
    a hook's record credits that lesson instead, and is refused ('lesson given twice') when select drew both."""
    ws = make_ws(tmp_path, {"tools/b.md": ["rebase"], "tools\\b.md": ["rebase"]}, journals={"j.md": "a rebase\n"})
    code, out, _ = run(capsys, "lint", "-w", str(ws), "--json")
    findings = [finding for finding in json.loads(out)["findings"] if finding["code"] == "unpassable-id"]
    assert [finding["message"] for finding in findings] == [
        "lesson 'tools\\b.md': record reads this id as 'tools/b.md': when select draws it, a hook passing it back "
        "to record credits 'tools/b.md' instead (and is refused when select drew both)"
    ], out
    (ws / "both.txt").write_text("tools\\b.md\ntools/b.md\n", encoding="utf-8")
    argv = ["-w", str(ws), "--session-id", "s1", "--journal", "j.md", "--lessons-file", str(ws / "both.txt")]
    code, out, err = run(capsys, "record", *argv)
    assert code == 1 and "given twice" in err, (code, err)
