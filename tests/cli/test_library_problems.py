"""The library's problems are reported, each with the right reason and advice:
item 5, frontmatter that fails part-way and CR-only files (lint errors); item 10, a lesson id in
two `[lessons] dirs` (the first folder wins, a warning naming it); item 11, a gptme.toml naming a
folder that does not exist, or one that cannot be read (`select` refuses, lint says what to fix)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import LOG_REL, lesson_text, make_workspace, session

ARCHIVED = "---\nmatch:\n  keywords: [deploy]\nstatus: archived\ncreated: {created}\n---\n# Old deploy notes\n"


def _lint(root: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    code, out, err = run_cli("lint", "--workspace", str(root), "--json")
    assert code in (0, 1), err
    return code, {f["code"]: f for f in json.loads(out)["findings"]}


def _status_paths(root: Path) -> dict[str, dict[str, object]]:
    code, out, err = run_cli("status", "--workspace", str(root), "--json")
    assert code == 0, err
    return {row["path"]: row for row in json.loads(out)["lessons"]}


# ---------------------------------------------------------------- item 5


@pytest.mark.parametrize(
    ("created", "said"),
    [("2026-02-30", "day is out of range"), ("9" * 5000, "digits")],
    ids=["impossible-date", "5000-digit-integer"],
)
def test_frontmatter_that_fails_part_way_is_an_error_with_its_reason(tmp_path: Path, created: str, said: str) -> None:
    """An impossible date, an integer of 5,000 digits: YAML reads the text, then building the value
    fails. The lesson lost every setting (an archived lesson showed as active, no keywords)."""
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active")})
    (root / "lessons" / "deploy.md").write_text(ARCHIVED.format(created=created))
    code, findings = _lint(root)
    assert code == 1
    broken = findings["broken-lessons"]
    assert broken["severity"] == "error"
    (item,) = broken["items"]
    assert item["item"].endswith("deploy.md") and said in item["reason"], item
    assert "frontmatter" in item["reason"]
    rows = _status_paths(root)
    assert rows.get("deploy.md", {}).get("status") != "active"  # never an active lesson with no keywords


def test_cr_only_line_endings_are_an_error_with_their_reason(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active")})
    text = ARCHIVED.format(created="2026-02-01").replace("\n", "\r")
    (root / "lessons" / "mac.md").write_bytes(text.encode())
    code, findings = _lint(root)
    assert code == 1
    (item,) = findings["broken-lessons"]["items"]
    assert item["item"].endswith("mac.md") and "CR" in item["reason"] and "line endings" in item["reason"]


def test_a_symlink_loop_in_the_library_is_a_broken_lesson_not_a_crash(tmp_path: Path) -> None:
    """`status` stamped its inputs with os.stat, which a loop of two symlinks fails (ELOOP): exit 70 and
    a traceback. The loop is a broken lesson there as in lint and the dashboard."""
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active")})
    (root / "lessons" / "loop2.md").symlink_to("loop1.md")
    (root / "lessons" / "loop1.md").symlink_to("loop2.md")
    code, out, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "ok.md" in out and "Traceback" not in err, err
    assert "loop1.md" in err and "loop2.md" in err
    code, findings = _lint(root)
    assert {item["item"].rsplit("/", 1)[-1] for item in findings["broken-lessons"]["items"]} == {"loop1.md", "loop2.md"}


def test_crlf_files_still_load(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {})
    (root / "lessons" / "win.md").write_bytes(lesson_text(["git"], "archived").replace("\n", "\r\n").encode())
    code, findings = _lint(root)
    assert "broken-lessons" not in findings
    assert _status_paths(root)["win.md"]["status"] == "archived"


# ---------------------------------------------------------------- item 10


def test_a_lesson_in_two_dirs_is_a_warning_and_the_first_dir_wins(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {})
    for folder, keyword in (("shared", "first"), ("local", "second")):
        path = root / folder / "tools" / "x.md"
        path.parent.mkdir(parents=True)
        path.write_text(lesson_text([keyword]))
    (root / "gptme.toml").write_text('[lessons]\ndirs = ["shared", "local"]\n')
    code, findings = _lint(root)
    assert code == 0  # a deliberate override is normal: not an error
    finding = findings["lesson-overridden"]
    assert finding["severity"] == "warning"
    message = str(finding["message"]) + str(finding["items"])
    assert "shared/tools/x.md" in message and "local/tools/x.md" in message and "wins" in message
    assert "frontmatter" not in str(finding["advice"])
    from lesson_credit.core.workspace import Workspace

    (lesson,) = Workspace(root).library().lessons
    assert lesson.keywords == ("first",) and lesson.path.endswith("shared/tools/x.md")


# ---------------------------------------------------------------- item 11


def _ws_with_toml(tmp_path: Path, toml: str) -> Path:
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active")}, events=[session("s1", 0.5, {"ok.md": 1.0})])
    (root / "gptme.toml").write_text(toml)
    (root / "ctx.txt").write_text("git push")
    return root


CASES = {
    "missing-folder": ('[lessons]\ndirs = ["lessons", "vendor/gptme-lessons"]\n', "vendor/gptme-lessons"),
    "broken-toml": ("[lessons\ndirs = 1\n", "gptme.toml"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_select_refuses_a_library_gptme_toml_cannot_give(tmp_path: Path, case: str) -> None:
    toml, named = CASES[case]
    root = _ws_with_toml(tmp_path, toml)
    before = (root / LOG_REL).read_bytes()
    code, out, err = run_cli("select", "--workspace", str(root), "--context", str(root / "ctx.txt"))
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], err
    assert (root / LOG_REL).read_bytes() == before  # no selection event
    assert not (root / "state" / "lesson-dropout").exists()


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("dry", [False, True])
def test_prune_refuses_a_library_gptme_toml_cannot_give(tmp_path: Path, case: str, dry: bool) -> None:
    """The log names tools/gone.md (no file): with the library whole, prune retires it; with a folder
    gptme.toml names missing (or gptme.toml broken), every lesson of that folder would look gone, and
    prune retired them where select refuses: it refuses too, with one line, writing nothing."""
    toml, named = CASES[case]
    root = _ws_with_toml(tmp_path, toml)
    log = root / LOG_REL
    log.write_bytes(log.read_bytes() + (json.dumps(session("s2", 0.4, {"tools/gone.md": 1.0})) + "\n").encode())
    before = log.read_bytes()
    flags = ["--dry-run"] if dry else []
    code, out, err = run_cli("prune", "--workspace", str(root), *flags)
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and "not pruning" in lines[0], err
    assert log.read_bytes() == before
    (root / "gptme.toml").unlink()  # the library whole again: the arm whose file is gone is retired
    code, out, err = run_cli("prune", "--workspace", str(root), *flags)
    assert code == 0 and "tools/gone.md" in out, err
    assert (log.read_bytes() == before) is dry


@pytest.mark.parametrize("case", sorted(CASES))
def test_lint_reports_gptme_toml_with_advice_about_gptme_toml(tmp_path: Path, case: str) -> None:
    toml, named = CASES[case]
    root = _ws_with_toml(tmp_path, toml)
    code, findings = _lint(root)
    assert code == 1
    finding = findings["library-config"]
    assert finding["severity"] == "error" and named in str(finding["message"]) + str(finding["items"])
    assert "gptme.toml" in str(finding["advice"]) and "frontmatter" not in str(finding["advice"])
    assert "broken-lessons" not in findings
    code, _, err = run_cli("status", "--workspace", str(root))
    assert code == 0
    assert "skipped lesson" not in err and "name their folders in gptme.toml" not in err
    assert named in err


# ---------------------------------------------------------------- paths in the library that are not lesson files


@pytest.mark.parametrize(
    ("name", "target", "finding", "exit_code"),
    [
        ("gone.md", "missing.md", "broken-lessons", 1),
        ("contrib", "../gptme-contrib/lessons", "lesson-paths-skipped", 0),
    ],
    ids=["lesson-file", "folder"],
)
def test_a_link_to_nothing_is_a_finding_that_names_where_it_points(
    tmp_path: Path, name: str, target: str, finding: str, exit_code: int
) -> None:
    """`ln -s missing.md lessons/gone.md` was reported as "cannot read: No such file or directory" for a file
    `ls` shows; a linked folder that is not there (a shared library's submodule not checked out) went without
    a word (os.walk lists it among the files, and it is no lesson's name). Both now say where they point."""
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active")})
    (root / "lessons" / name).symlink_to(target)
    (root / "lessons" / "notes.txt").write_text("not a lesson")  # a plain file that is no lesson: no finding
    code, findings = _lint(root)
    assert code == exit_code
    (item,) = findings[finding]["items"]
    assert item["item"].endswith(f"lessons/{name}"), item
    assert f"a symbolic link to {target}, which does not exist" in item["reason"], item
    code, out, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "ok.md" in out
    (line,) = [line for line in err.splitlines() if f"lessons/{name}" in line]
    assert line.startswith("warning: skipped ") and target in line


def test_a_folder_named_like_a_lesson_is_a_warning_and_its_lessons_are_read(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active"), "x.md/inner.md": (["deploy"], "active")})
    code, findings = _lint(root)
    assert code == 0  # a warning: nothing is lost, the folder's lessons load
    finding = findings["lesson-paths-skipped"]
    assert finding["severity"] == "warning"
    (item,) = finding["items"]
    assert item["item"].endswith("lessons/x.md") and "a folder" in item["reason"], item
    assert set(_status_paths(root)) == {"ok.md", "x.md/inner.md"}
    code, _, err = run_cli("status", "--workspace", str(root))
    (line,) = [line for line in err.splitlines() if "x.md" in line]
    assert line.startswith("warning: skipped ") and "a folder" in line


def test_a_linked_folder_outside_the_workspace_is_a_warning_and_is_not_read(tmp_path: Path) -> None:
    """Lesson files linked from elsewhere are read (shared libraries are linked in); a linked folder is not
    followed, as gptme's index does not follow one either. That stays so; lint now says it."""
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active")})
    shared = tmp_path / "elsewhere" / "shared"
    shared.mkdir(parents=True)
    (shared / "s.md").write_text(lesson_text(["deploy"]))
    (root / "lessons" / "shared").symlink_to(shared, target_is_directory=True)
    (root / "lessons" / "linked.md").symlink_to(shared / "s.md")  # a linked file: read, and not a finding
    code, findings = _lint(root)
    assert code == 0
    (item,) = findings["lesson-paths-skipped"]["items"]
    assert item["item"].endswith("lessons/shared"), item
    assert "symbolic link to a folder" in item["reason"] and str(shared) in item["reason"]
    assert "[lessons] dirs" in item["reason"]
    assert set(_status_paths(root)) == {"ok.md", "linked.md"}  # the folder's s.md is not read, as before
    code, _, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "symbolic link to a folder" in err


@pytest.mark.parametrize("how", ["symlink", "hardlink"])
def test_one_file_under_two_ids_is_a_warning_and_stays_two_arms(tmp_path: Path, how: str) -> None:
    """gptme reads such a file once; here each path was its own arm without a word. A log may already hold
    both ids (this one does), so both stay arms (nothing moves) and lint names the second path."""
    events = [session("s1", 1.0, {"a.md": 1.0}), session("s2", 0.0, {"b.md": 1.0}), session("s3", 1.0, {"b.md": 1.0})]
    root = make_workspace(tmp_path, {"a.md": (["git"], "active")}, events=events)
    link = root / "lessons" / "b.md"
    if how == "symlink":
        link.symlink_to("a.md")
    else:
        os.link(root / "lessons" / "a.md", link)
    code, findings = _lint(root)
    assert code == 0
    finding = findings["lesson-aliased"]
    assert finding["severity"] == "warning"
    (item,) = finding["items"]
    assert item["item"].endswith("lessons/b.md") and "a.md" in item["reason"] and "two arms" in item["reason"], item
    rows = _status_paths(root)
    # by hand: a.md is in s1 only, b.md in s2 and s3; the numbers are those of two arms, as before
    assert (rows["a.md"]["n"], rows["b.md"]["n"]) == (1, 2)
    code, _, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "b.md" in err and "two arms" in err


def test_a_linked_file_that_overrides_is_reported_once(tmp_path: Path) -> None:
    """lessons/x.md linking to a [lessons] dir's x.md: one id, so the override rule already drops the
    second; it is not also a lesson counted twice."""
    root = make_workspace(tmp_path, {})
    (root / "shared").mkdir()
    (root / "shared" / "x.md").write_text(lesson_text(["git"]))
    (root / "lessons" / "x.md").symlink_to(root / "shared" / "x.md")
    (root / "gptme.toml").write_text('[lessons]\ndirs = ["shared"]\n')
    code, findings = _lint(root)
    assert code == 0 and "lesson-overridden" in findings and "lesson-aliased" not in findings


@pytest.mark.parametrize("named", ["shared", "lessons/shared"])
def test_a_linked_folder_named_in_gptme_toml_is_read_and_not_a_finding(tmp_path: Path, named: str) -> None:
    """The finding's advice followed (the folder named in gptme.toml, by its own path or the link's):
    its lessons are read, so the link is no longer a path not read; lint said it still was."""
    root = make_workspace(tmp_path, {"ok.md": (["git"], "active")})
    (root / "shared").mkdir()
    (root / "shared" / "s.md").write_text(lesson_text(["deploy"]))
    (root / "lessons" / "shared").symlink_to(root / "shared", target_is_directory=True)
    (root / "gptme.toml").write_text(f'[lessons]\ndirs = ["{named}"]\n')
    _, findings = _lint(root)
    assert "lesson-paths-skipped" not in findings
    assert set(_status_paths(root)) == {"ok.md", "s.md"}  # s.md: its id in the [lessons] dir it is read from
    code, _, err = run_cli("status", "--workspace", str(root))
    assert code == 0 and "symbolic link to a folder" not in err


def test_a_linked_folder_into_the_library_itself_is_not_a_finding(tmp_path: Path) -> None:
    """lessons/alias -> lessons/tools: every lesson behind the link is read, under tools/."""
    root = make_workspace(tmp_path, {"tools/git.md": (["git"], "active")})
    (root / "lessons" / "alias").symlink_to(root / "lessons" / "tools", target_is_directory=True)
    _, findings = _lint(root)
    assert "lesson-paths-skipped" not in findings
    assert set(_status_paths(root)) == {"tools/git.md"}
