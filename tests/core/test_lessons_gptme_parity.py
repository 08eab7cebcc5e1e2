"""Lesson frontmatter that gptme's parser (gptme/lessons/parser.py) reads otherwise than we do: what we
read, and what `lint` says. gptme reads frontmatter only when the file's text starts with `---` and ends
it at the next `---` anywhere; it reads `match.keywords` by iterating it (a mapping gives its keys, a
number raises, so gptme skips the file) and ignores a top-level `keywords`."""

from __future__ import annotations

from pathlib import Path

import pytest

from lesson_credit.core.health import WARNING, lint
from lesson_credit.core.library.lessons import (
    GPTME,
    IGNORED,
    LessonError,
    load_library,
    parse_lesson,
    parse_lesson_checked,
)
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock

FRONT = "---\nmatch:\n  keywords: [git worktree]\nstatus: archived\n---\n# T\n"


def write(root: Path, name: str, text: str) -> Path:
    path = root / "lessons" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))
    return path


# ---------------------------------------------------------------- keywords: what gptme iterates


def test_a_keywords_mapping_gives_its_text_keys_as_gptme_does() -> None:
    # gptme: [k for k in {"a": 1, "b c": None, 3: 4} if isinstance(k, str) and k.strip()] == ["a", "b c"]
    got = parse_lesson("---\nmatch:\n  keywords: {a: 1, b c: , 3: 4}\n  patterns: {'x+': 1}\n---\n# T\n", "t.md")
    assert got.keywords == ("a", "b c")
    assert got.patterns == ("x+",)


def test_a_keywords_mapping_is_reported_and_the_lesson_loads(tmp_path: Path) -> None:
    write(tmp_path, "m.md", "---\nmatch:\n  keywords: {alpha: 1}\n---\n# M\n")
    library = load_library(tmp_path)
    assert [(x.id, x.keywords) for x in library.lessons] == [("m.md", ("alpha",))]
    (problem,) = library.problems
    assert problem.kind == IGNORED and "mapping" in problem.reason and "keys" in problem.reason


@pytest.mark.parametrize("value", ["404", "1.5", "true"])
def test_a_match_keywords_scalar_is_broken_as_gptme_cannot_load_it(value: str) -> None:
    # gptme: `for k in 404` raises TypeError; its index logs "Failed to parse lesson" and leaves it out
    with pytest.raises(LessonError, match="gptme cannot load it either"):
        parse_lesson(f"---\nmatch:\n  keywords: {value}\n---\n# T\n", "t.md")


@pytest.mark.parametrize("value", ["404", "1.5", "true", "{a: 1}"])
def test_a_top_level_keywords_gptme_ignores_leaves_the_lesson_loaded(tmp_path: Path, value: str) -> None:
    # gptme never reads a top-level `keywords` (only match.keywords): the lesson loads there, so it loads here,
    # with no keywords and the value reported
    write(tmp_path, "k.md", f"---\nkeywords: {value}\nmatch:\n  patterns: ['git push']\n---\n# K\n")
    library = load_library(tmp_path)
    assert [(x.id, x.keywords, x.patterns) for x in library.lessons] == [("k.md", (), ("git push",))]
    (problem,) = library.problems
    assert problem.kind == IGNORED and "top-level keywords" in problem.reason


def test_a_top_level_keywords_string_is_still_one_keyword() -> None:
    assert parse_lesson("---\nkeywords: foo\n---\n# T\n", "t.md").keywords == ("foo",)


# ---------------------------------------------------------------- frontmatter gptme does not see


@pytest.mark.parametrize(
    ("before", "said"),
    [
        ("\ufeff", "byte order mark"),
        ("\n\n", "2 blank lines"),
        ("  \n", "1 blank line"),
    ],
)
def test_frontmatter_after_a_bom_or_blank_lines_is_read_and_lint_says_gptme_does_not(
    tmp_path: Path, before: str, said: str
) -> None:
    # gptme: content.startswith("---") is False, so no frontmatter: no keywords, status active. We read it
    # (the author's keywords are the lesson's salience; its status stays archived) and say so.
    write(tmp_path, "b.md", before + FRONT)
    library = load_library(tmp_path, tmp_path / "cache")
    (got,) = library.lessons
    assert (got.keywords, got.status) == (("git worktree",), "archived")
    (problem,) = library.problems
    assert problem.kind == GPTME and said in problem.reason and "never matches" in problem.reason
    again = load_library(tmp_path, tmp_path / "cache")  # the lesson cache says the same
    assert again.problems == library.problems and again.lessons == library.lessons
    found = {f.code: f for f in lint(Workspace(tmp_path, clock=fixed_clock))}
    finding = found["lesson-gptme-differs"]
    assert finding.severity == WARNING and finding.items == (str(tmp_path / "lessons" / "b.md"),)
    assert "broken-lessons" not in found and "lesson-parts-ignored" not in found


def test_a_dashes_run_inside_the_frontmatter_ends_gptme_s_frontmatter(tmp_path: Path) -> None:
    # "---".split: gptme's frontmatter is "\ndescription: a " (it then fails on the rest, or reads less)
    write(tmp_path, "d.md", "---\ndescription: a --- b\nmatch:\n  keywords: [x]\n---\n# D\n")
    library = load_library(tmp_path)
    assert [x.keywords for x in library.lessons] == [("x",)]
    (problem,) = library.problems
    assert problem.kind == GPTME and "`---`" in problem.reason and "line 2" in problem.reason


@pytest.mark.parametrize(
    ("frontmatter", "said"),
    [
        ("match:\n  keywords:", "match.keywords"),  # gptme: `for k in None` raises: the file is skipped
        ("match:\n  keywords: [x]\n  patterns:", "match.patterns"),
        ("match:", "match"),  # gptme: None.get raises
        ("status:\nmatch:\n  keywords: [x]", "status"),  # gptme: None != "active": never included
        ("globs: '*.py'\nmatch:\n  keywords: [x]", "globs"),  # gptme: a Cursor rule, keywords from its globs
    ],
)
def test_frontmatter_gptme_cannot_use_is_said(tmp_path: Path, frontmatter: str, said: str) -> None:
    write(tmp_path, "n.md", f"---\n{frontmatter}\n---\n# N\n")
    library = load_library(tmp_path)
    assert [x.id for x in library.lessons] == ["n.md"]
    (problem,) = library.problems
    assert problem.kind == GPTME and said in problem.reason


def test_a_clean_lesson_has_no_note(tmp_path: Path) -> None:
    write(tmp_path, "c.md", "---\nmatch:\n  keywords: [a---b]\n---\n# C\n\nText --- more.\n")
    library = load_library(tmp_path)
    assert [x.keywords for x in library.lessons] == [("a---b",)]
    assert [p.kind for p in library.problems] == [GPTME]  # the keyword itself holds `---`
    write(tmp_path, "c.md", "---\nmatch:\n  keywords: [ab]\n---\n# C\n\nText --- more.\n")
    assert load_library(tmp_path).problems == ()


@pytest.mark.parametrize(
    ("before", "said"),
    [
        ("\n", "(1 blank line comes before the opening `---`)"),
        ("\n \n", "(2 blank lines come before the opening `---`)"),
        ("  ", "(spaces come before the opening `---`)"),  # on its own line: no blank line at all
        ("\n ", "(1 blank line and spaces come before the opening `---`)"),
        ("\t", "(whitespace comes before the opening `---`)"),
    ],
)
def test_what_comes_before_the_opening_dashes_is_said_as_it_is(before: str, said: str) -> None:
    (note,) = parse_lesson_checked(before + FRONT, "b.md")[1]
    assert said in note
