"""A lesson's name cut in its middle ends and resumes at a word break where one is near, unless that would make
it read as another name of its column."""

from __future__ import annotations

import pytest

from lesson_credit.core.base import shorten as shorten_module
from lesson_credit.core.base.shorten import shorten_lesson


def test_a_middle_cut_ends_and_resumes_at_a_word_break() -> None:
    name = "check-ci-before-claiming-done"
    # 18 cells: the plain cut keeps 9 + … + 8, "check-ci-" and "ing-done"; the end moves on to its break, "-done"
    # (3 characters left out, at most 4 are)
    assert shorten_lesson(name, 18) == "check-ci-…ing-done"
    assert shorten_lesson(name, 18, frozenset({name})) == "check-ci-…-done"
    # "pytest-ta" goes back 2 to "pytest-", "ted-runs" on 3 to "-runs"
    assert shorten_lesson("pytest-tag-flaky-repeated-runs", 18, frozenset()) == "pytest-…-runs"
    # no break within 4: "git-workt" would lose 5 ("workt"), "onflicts" has none; both stay as cut
    assert shorten_lesson("git-worktree-hygiene", 18, frozenset()) == "git-workt…-hygiene"
    assert shorten_lesson("resolve-merge-conflicts", 18, frozenset()) == "resolve-…onflicts"
    # a name that fits is whole, and so is a file name that fits without its folders (10 cells, "…/" not beside it)
    assert shorten_lesson("mock-boundaries", 18, frozenset()) == "mock-boundaries"
    assert shorten_lesson("tools/retired.md", 10, frozenset({"tools/retired.md"})) == "retired.md"


def test_names_that_would_read_alike_keep_the_plain_cut() -> None:
    """At 16 cells the two cut to "tidy-abc…g-final" and "tidy-abd…g-final"; at word breaks both would be
    "tidy-…-final". Beside each other they keep the plain cuts (which tell them apart); a third name of the
    column is still cut at its breaks."""
    a, b, c = "tidy-abcx-something-final", "tidy-abdx-something-final", "lint-the-changed-files-only"
    column = frozenset({a, b, c})
    assert shorten_lesson(a, 16, frozenset({a})) == "tidy-…-final"
    assert [shorten_lesson(n, 16, column) for n in (a, b, c)] == [
        "tidy-abc…g-final",
        "tidy-abd…g-final",
        "lint-the…-only",
    ]


def test_a_cut_is_compared_only_with_names_that_start_and_end_as_it_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """2,000 names starting "lesson-", half ending "-the-thing" and half "-the-other": at 17 cells each cuts
    to "lesson-…-thing" (8 + … + 8 cells, "lesson-0" back 1 to "lesson-", "he-thing" on 2 to "-thing") or
    "lesson-…-other", and reads as another, so each keeps its plain cut. Telling so needs no more than the
    names that start with "lesson-" AND end with "-thing" (or "-other"), and only two of them: it cut every
    name starting "lesson-" (2,000 cuts; 30,000 names took 0.4 s)."""
    names = [f"workflow/lesson-{i:04d}-check-the-{'thing' if i % 2 else 'other'}" for i in range(2000)]
    column = frozenset(names)
    made: list[str] = []
    real = shorten_module._shorten_lesson

    def counted(name: str, width: int, words: bool) -> str:
        made.append(name)
        return real(name, width, words)

    monkeypatch.setattr(shorten_module, "_shorten_lesson", counted)
    # the plain cut: "lesson-0" + … + "he-thing"
    assert shorten_lesson(names[1], 17, column) == "lesson-0…he-thing"
    assert shorten_lesson(names[2], 17, column) == "lesson-0…he-other"
    assert shorten_lesson(names[2], 17, frozenset({names[2]})) == "lesson-…-other"
    # per call: its own plain and word cuts (2), then at most two names compared with the cut
    assert len(made) <= 3 * (2 + 2)
