"""The files gptme-contrib's lessons MCP server reads from a library folder, and the name it looks each up by first."""

from __future__ import annotations

import os
from pathlib import Path

from lesson_credit.core.library.gptme_server import server_names


def test_every_md_file_but_readme_hidden_folders_too_linked_folders_not_entered(tmp_path: Path) -> None:
    lessons, other = tmp_path / "lessons", tmp_path / "other"
    for rel in (
        "a.md",
        "README.md",
        "TEMPLATE.md",
        "_draft.md",
        "notes.txt",
        ".old/tools/a.md",
        "tools/a.md",
        "ext/lessons/a.md",
        "inner/b.md",
    ):
        (lessons / rel).parent.mkdir(parents=True, exist_ok=True)
        (lessons / rel).write_text("# x\n", encoding="utf-8")
    (other / "deep").mkdir(parents=True)
    (other / "c.md").write_text("# c\n", encoding="utf-8")
    (other / "a.md").write_text("# a again\n", encoding="utf-8")
    os.symlink(lessons / "tools", lessons / "linked")
    names = server_names([str(lessons), str(other), str(lessons / "inner")])
    # by hand: a root file under its folder's own name; README.md and other suffixes left; the link not entered;
    # other/a.md's id is lessons/a.md's (the first folder's kept); inner/ walked once, as part of lessons/
    assert names == {
        "a.md": "lessons/a",
        "TEMPLATE.md": "lessons/TEMPLATE",
        "_draft.md": "lessons/_draft",
        ".old/tools/a.md": "tools/a",
        "tools/a.md": "tools/a",
        "ext/lessons/a.md": "lessons/a",
        "inner/b.md": "inner/b",
        "c.md": "other/c",
    }
    # the server's own listing of lessons/ (pathlib's rglob, README.md skipped) is the same files
    server = {p.relative_to(lessons).as_posix() for p in lessons.rglob("*.md") if p.name != "README.md"}
    assert server == {lesson for lesson, name in names.items() if not name.startswith("other/")}


def test_a_file_the_server_cannot_read_is_none_and_a_folder_reached_twice_is_walked_once(tmp_path: Path) -> None:
    """A broken symbolic link named like a lesson (or a file it may not read) is none the server reads: it takes no
    name from a lesson (before: listed, and the live `tools/a.md` lost its name in loo-results.json). A library
    folder linked to (`lessons` a link to `shared`) with a `[lessons] dirs` folder inside it named through the link
    is walked once (before: the resolved and the linked paths twice, each file two ids competing)."""
    shared = tmp_path / "shared"
    (shared / "tools").mkdir(parents=True)
    (shared / "tools" / "a.md").write_text("# a\n", encoding="utf-8")
    (shared / "other" / "tools").mkdir(parents=True)
    os.symlink(tmp_path / "nowhere.md", shared / "other" / "tools" / "a.md")
    os.symlink(shared, tmp_path / "lessons")
    names = server_names([str((tmp_path / "lessons").resolve()), str(tmp_path / "lessons" / "tools")])
    assert names == {"tools/a.md": "tools/a"}
