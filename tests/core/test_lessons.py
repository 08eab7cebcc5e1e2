"""Lesson files (docs/format.md §2): frontmatter parsing, ids and categories, loading a library with broken files."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from lesson_credit.core.library.lessons import (
    IGNORED,
    OVERRIDDEN,
    Lesson,
    LessonError,
    category_of,
    load_library,
    normalize_id,
    parse_lesson,
)
from tests.support.engine_helpers import lesson_text

CORPUS = Path(__file__).parents[3] / "shared" / "corpus" / "gptme-contrib-lessons"


def lesson(text: str, lesson_id: str = "tools/x.md") -> Lesson:
    return parse_lesson(text, lesson_id)


# ---------------------------------------------------------------- parse_lesson


def test_match_keywords_list() -> None:
    got = lesson('---\nmatch:\n  keywords: ["git worktree", "stale branch"]\n---\n# Git\n')
    assert got.keywords == ("git worktree", "stale branch")
    assert got.title == "Git"
    assert got.id == "tools/x.md"
    assert got.category == "tools"


def test_match_keywords_single_string() -> None:
    got = lesson("---\nmatch:\n  keywords: git worktree\n---\n# Git\n")
    assert got.keywords == ("git worktree",)


def test_top_level_keywords_fallback() -> None:
    got = lesson("---\nkeywords: [alpha, beta]\n---\n# T\n")
    assert got.keywords == ("alpha", "beta")


def test_match_keywords_win_over_top_level() -> None:
    got = lesson("---\nkeywords: [top]\nmatch:\n  keywords: [inner]\n---\n# T\n")
    assert got.keywords == ("inner",)


def test_patterns() -> None:
    got = lesson('---\nmatch:\n  keywords: [x]\n  patterns: ["git (push|pull) --force"]\n---\n# T\n')
    assert got.patterns == ("git (push|pull) --force",)


def test_status_defaults_to_active() -> None:
    assert lesson("---\nmatch:\n  keywords: [x]\n---\n# T\n").status == "active"
    assert lesson("---\nstatus:\n---\n# T\n").status == "active"  # explicit null
    assert lesson("# no frontmatter at all\n").status == "active"


@pytest.mark.parametrize("status", ["active", "automated", "deprecated", "archived"])
def test_known_statuses(status: str) -> None:
    assert lesson(f"---\nstatus: {status}\n---\n# T\n").status == status


@pytest.mark.parametrize("status", ["retired", "ACTIVE", "3", "[active]"])
def test_bad_status(status: str) -> None:
    with pytest.raises(LessonError, match="status"):
        lesson(f"---\nstatus: {status}\n---\n# T\n")


def test_description_and_extra_keys_kept_ignored() -> None:
    got = lesson('---\ndescription: "  One line.  "\ntarget_grade: 0.7\nsession_categories: [code]\n---\n# T\n')
    assert got.description == "One line."


def test_frontmatter_that_is_a_list_is_refused() -> None:
    # python-frontmatter itself silently drops non-mapping frontmatter; the parser must not
    with pytest.raises(LessonError, match="mapping"):
        lesson("---\n- git\n- worktree\n---\n# T\n")


def test_frontmatter_that_is_a_number_is_refused() -> None:
    with pytest.raises(LessonError, match="mapping"):
        lesson("---\n42\n---\n# T\n")


def test_non_mapping_frontmatter_file_is_a_library_problem(tmp_path: Path) -> None:
    write(tmp_path / "lessons" / "list.md", "---\n- a\n---\n# T\n")
    write(tmp_path / "lessons" / "ok.md", lesson_text(["ok"]))
    library = load_library(tmp_path)
    assert [lesson.id for lesson in library.lessons] == ["ok.md"]
    assert len(library.problems) == 1 and "mapping" in library.problems[0].reason


@pytest.mark.smoke
def test_invalid_yaml() -> None:
    with pytest.raises(LessonError, match="YAML"):
        lesson("---\nmatch: [unclosed\n---\n# T\n")


@pytest.mark.parametrize(
    "frontmatter",
    [
        "match:\n  keywords: 5",
        "match: [a, b]",
        "match: 3",
    ],
)
def test_bad_keyword_shapes_raise_with_reason(frontmatter: str) -> None:
    with pytest.raises(LessonError) as info:
        lesson(f"---\n{frontmatter}\n---\n# T\n")
    assert str(info.value)  # a reason, not an empty message
    assert any(word in str(info.value) for word in ("keywords", "patterns", "match"))


@pytest.mark.parametrize(
    ("frontmatter", "keywords", "patterns"),
    [
        # gptme keeps a list's text entries and drops the rest (its parser keeps `isinstance(k, str)`), so it
        # never matches 404 or 1.5: neither is counted (salience counts what gptme would match)
        ("match:\n  keywords: [404, 1.5, timeout]", ("timeout",), ()),
        # an empty `-` item (null), a yes (true), a nested list or mapping: dropped, the lesson kept
        ("match:\n  keywords:\n    - git worktree\n    -\n    - yes", ("git worktree",), ()),
        ("match:\n  keywords: [[a, b], c, {d: 1}]", ("c",), ()),
        ("keywords: [[a], b]", ("b",), ()),
        ("match:\n  keywords: [k]\n  patterns: [[x], 'y+', 7]", ("k",), ("y+",)),
    ],
)
def test_keyword_entries_that_are_not_text_are_ignored_as_gptme_ignores_them(
    frontmatter: str, keywords: tuple[str, ...], patterns: tuple[str, ...]
) -> None:
    got = lesson(f"---\n{frontmatter}\n---\n# T\n")
    assert (got.keywords, got.patterns) == (keywords, patterns)


def test_ignored_keyword_entries_are_reported_and_the_lesson_loads(tmp_path: Path) -> None:
    write(
        tmp_path / "lessons" / "t" / "a.md",
        "---\nmatch:\n  keywords:\n    - git worktree\n    -\n    - 404\n---\n# A\n",
    )
    cache = tmp_path / "lessons.cache"
    library = load_library(tmp_path, cache)
    assert [x.id for x in library.lessons] == ["t/a.md"]
    assert library.lessons[0].keywords == ("git worktree",)
    (problem,) = library.problems
    assert problem.kind == IGNORED and problem.lesson_id == "t/a.md"
    assert "null" in problem.reason and "404" in problem.reason and "keyword" in problem.reason
    # the lesson cache gives the same library and the same problem
    again = load_library(tmp_path, cache)
    assert cache.exists()
    assert again.lessons == library.lessons and again.problems == library.problems


def test_title_is_first_h1() -> None:
    got = lesson("---\nstatus: active\n---\nintro\n## Sub\n# First Title\n# Second\n")
    assert got.title == "First Title"


def test_title_skips_comment_inside_code_fence() -> None:
    text = "---\nstatus: active\n---\n```bash\n# not a title, a shell comment\n```\n# Real Title\n"
    assert lesson(text).title == "Real Title"


def test_title_falls_back_to_file_stem() -> None:
    assert lesson("---\nstatus: active\n---\nno heading\n", "tools/git-work-flow.md").title == "git work flow"


def test_nul_bytes_refused() -> None:
    with pytest.raises(LessonError):
        lesson("---\nstatus: active\n---\n# T\x00\n")


# ---------------------------------------------------------------- ids


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("lessons/tools/git.md", "tools/git.md"),
        ("tools/git.md", "tools/git.md"),
        ("./lessons/tools/git.md", "tools/git.md"),
        ("tools\\git.md", "tools/git.md"),
        ("lessons/x.md", "x.md"),
        # absolute paths, as gptme names lesson files: the part after the last `lessons` folder
        ("/home/agent/lessons/tools/git.md", "tools/git.md"),
        ("/home/agent/.gptme/lessons/x.md", "x.md"),
        ("/srv/lessons/old/lessons/tools/git.md", "tools/git.md"),
        ("C:\\Users\\me\\lessons\\tools\\git.md", "tools/git.md"),
        ("c:/agent/lessons/x.md", "x.md"),
        # a relative path keeps its folders (a library may hold a folder named lessons), an absolute path
        # without a lessons folder stays as it is (nothing says where its library starts)
        ("tools/lessons/git.md", "tools/lessons/git.md"),
        ("/home/agent/skills/x.md", "/home/agent/skills/x.md"),
    ],
)
def test_normalize_id(raw: str, expected: str) -> None:
    assert normalize_id(raw) == expected


def test_category_of() -> None:
    assert category_of("tools/git.md") == "tools"
    assert category_of("tools/sub/git.md") == "tools"
    assert category_of("root.md") == ""


# ---------------------------------------------------------------- load_library


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.mark.smoke
def test_load_library_ids_categories_and_readme(tmp_path: Path) -> None:
    lessons = tmp_path / "lessons"
    write(lessons / "tools" / "git.md", lesson_text(["git"]))
    write(lessons / "tools" / "deep" / "nested.md", lesson_text(["x"], "archived"))
    write(lessons / "root.md", lesson_text(["y"]))
    write(lessons / "README.md", "# Not a lesson\n")
    write(lessons / "tools" / "readme.md", "# Not a lesson either\n")
    write(lessons / "notes.txt", "not markdown")
    library = load_library(tmp_path)
    by_id = library.by_id()
    assert set(by_id) == {"tools/git.md", "tools/deep/nested.md", "root.md"}
    assert by_id["tools/deep/nested.md"].category == "tools"
    assert by_id["tools/deep/nested.md"].status == "archived"
    assert by_id["root.md"].category == ""
    assert library.problems == ()
    assert library.get("lessons/tools/git.md") is by_id["tools/git.md"]


def test_broken_file_reported_and_skipped(tmp_path: Path) -> None:
    lessons = tmp_path / "lessons"
    write(lessons / "a" / "good.md", lesson_text(["good"]))
    write(lessons / "a" / "bad-yaml.md", "---\nmatch: [oops\n---\n# T\n")
    write(lessons / "b" / "bad-status.md", "---\nstatus: nope\n---\n# T\n")
    (lessons / "b" / "binary.md").write_bytes(b"---\nstatus: active\n---\n\xff\xfe\n")
    write(lessons / "b" / "good2.md", lesson_text(["fine"]))
    library = load_library(tmp_path)
    assert {lesson.id for lesson in library.lessons} == {"a/good.md", "b/good2.md"}
    problems = {Path(p.path).name: p.reason for p in library.problems}
    assert set(problems) == {"bad-yaml.md", "bad-status.md", "binary.md"}
    assert "YAML" in problems["bad-yaml.md"]
    assert "status" in problems["bad-status.md"]
    assert "UTF-8" in problems["binary.md"]
    for problem in library.problems:
        assert Path(problem.path).is_absolute() and Path(problem.path).exists()
        assert problem.path in str(problem) and problem.reason in str(problem)


def test_invalid_pattern_reported_but_lesson_kept(tmp_path: Path) -> None:
    write(tmp_path / "lessons" / "p.md", lesson_text(["kw"], patterns=["([unclosed"]))
    library = load_library(tmp_path)
    assert [lesson.id for lesson in library.lessons] == ["p.md"]
    assert len(library.problems) == 1
    assert "([unclosed" in library.problems[0].reason


def test_gptme_toml_dirs_come_after_the_lessons_folder(tmp_path: Path) -> None:
    """As gptme's lesson index: `lessons/` always, then `[lessons] dirs` in order; the first
    folder with an id wins. The dirs used to replace `lessons/`: a workspace naming
    gptme-contrib's folder lost its own lessons (select found nothing, lint advised pruning them)."""
    write(tmp_path / "lessons" / "own.md", lesson_text(["own"]))
    write(tmp_path / "lessons" / "both.md", lesson_text(["local"]))
    write(tmp_path / "lib1" / "tools" / "a.md", lesson_text(["a"]))
    write(tmp_path / "lib1" / "both.md", lesson_text(["lib1"]))
    write(tmp_path / "lib2" / "b.md", lesson_text(["b"]))
    write(tmp_path / "gptme.toml", '[lessons]\ndirs = ["lib1", "lib2", "lessons"]\n')
    library = load_library(tmp_path)
    assert sorted(lesson.id for lesson in library.lessons) == ["b.md", "both.md", "own.md", "tools/a.md"]
    assert library.by_id()["tools/a.md"].category == "tools"
    assert library.by_id()["both.md"].keywords == ("local",)  # lessons/ comes first
    (overridden,) = library.problems
    assert overridden.kind == OVERRIDDEN and overridden.path.endswith("lib1/both.md")
    # "lessons" named again in dirs is not searched twice
    assert [Path(root).name for root in library.roots] == ["lessons", "lib1", "lib2"]


def test_a_dir_inside_the_lessons_folder_adds_no_second_copy(tmp_path: Path) -> None:
    write(tmp_path / "lessons" / "tools" / "a.md", lesson_text(["a"]))
    write(tmp_path / "gptme.toml", '[lessons]\ndirs = ["lessons/tools"]\n')
    library = load_library(tmp_path)
    assert [lesson.id for lesson in library.lessons] == ["tools/a.md"] and library.problems == ()


def test_readmes_templates_and_todo_lists_are_not_lessons(tmp_path: Path) -> None:
    """The files gptme's index skips; a template had been selected as a lesson."""
    skipped = ["README.md", "readme.md", "TEMPLATE.md", "template.md", "todo.md", "TODO.md", "_draft.md"]
    skipped += ["lesson-template.md", "tools/_index.md", "tools/tool-template.md", ".hidden/x.md"]
    kept = ["templates.md", "template-usage.md", "tools/todo-lists.md", "tools/my_lesson.md"]
    for name in skipped + kept:
        write(tmp_path / "lessons" / name, lesson_text(["kw"]))
    library = load_library(tmp_path)
    assert sorted(lesson.id for lesson in library.lessons) == sorted(kept)
    assert library.problems == ()


def test_an_unreadable_gptme_toml_still_loads_the_lessons_folder(tmp_path: Path) -> None:
    write(tmp_path / "lessons" / "x.md", lesson_text(["x"]))
    write(tmp_path / "gptme.toml", "[lessons\n")
    library = load_library(tmp_path)
    assert [lesson.id for lesson in library.lessons] == ["x.md"]
    assert library.config_problem() is not None


def test_gptme_toml_without_lessons_section_uses_lessons_dir(tmp_path: Path) -> None:
    write(tmp_path / "lessons" / "x.md", lesson_text(["x"]))
    write(tmp_path / "gptme.toml", '[agent]\nname = "bob"\n')
    assert [lesson.id for lesson in load_library(tmp_path).lessons] == ["x.md"]


def test_bad_gptme_toml_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    write(tmp_path / "gptme.toml", "[lessons\n")
    library = load_library(tmp_path)
    assert library.lessons == ()
    assert len(library.problems) == 1
    assert library.problems[0].path.endswith("gptme.toml")


def test_missing_library_is_empty(tmp_path: Path) -> None:
    library = load_library(tmp_path)
    assert library.lessons == () and library.problems == ()


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present (optional real-data check)")
def test_real_corpus_loads_cleanly(tmp_path: Path) -> None:
    write(tmp_path / "gptme.toml", f"[lessons]\ndirs = [{str(CORPUS)!r}]\n".replace("'", '"'))
    # the corpus lies outside this workspace: a library dir there needs the explicit opt-in
    assert load_library(tmp_path).lessons == ()
    library = load_library(tmp_path, allow_outside=True)
    assert library.problems == ()
    assert len(library.lessons) == 96
    assert Counter(lesson.status for lesson in library.lessons) == {"active": 78, "archived": 12, "deprecated": 6}
    # the corpus README: 453 keywords, 1-15 per lesson
    assert sum(len(lesson.keywords) for lesson in library.lessons) == 453
    assert all(1 <= len(lesson.keywords) <= 15 for lesson in library.lessons)
    assert all("/" in lesson.id and lesson.category for lesson in library.lessons)
