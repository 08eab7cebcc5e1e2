"""A lesson's `match.session_categories` (gptme-contrib's lesson hook reads them): the kinds of work it
is for. `select` for a session of another kind leaves it out; when the kind is not known, every lesson
may be drawn (gptme's own auto-include never reads them)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_credit.core.library.lessons import IGNORED, LessonError, load_library, parse_lesson
from lesson_credit.core.offline import select_offline
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import LOG_REL, fixed_clock

CONTEXT = "fix the flaky deploy"
LESSONS = {
    "any.md": "---\nmatch:\n  keywords: [deploy]\n---\n# Any\n",
    "code.md": "---\nmatch:\n  keywords: [deploy]\n  session_categories: [Code, infrastructure]\n---\n# Code\n",
    "research.md": "---\nmatch:\n  keywords: [flaky]\n  session_categories: research\n---\n# Research\n",
}


def workspace(tmp_path: Path) -> Path:
    for name, text in LESSONS.items():
        path = tmp_path / "lessons" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_session_categories_are_read_from_a_list_or_one_string() -> None:
    assert parse_lesson(LESSONS["code.md"], "code.md").session_categories == ("Code", "infrastructure")
    assert parse_lesson(LESSONS["research.md"], "research.md").session_categories == ("research",)
    assert parse_lesson(LESSONS["any.md"], "any.md").session_categories == ()


@pytest.mark.parametrize(
    ("value", "kept", "said"),
    [
        ("404", (), "got 404: ignored"),
        # gptme-contrib's hook iterates the value: a mapping gives its text keys (`{code, research}`, a
        # list written in braces, is one), a set its items (in no order: sorted here)
        ("{code: 1, research: }", ("code", "research"), "is a mapping: its text keys are read"),
        ("!!set {b, a}", ("a", "b"), "is a set: its text items are read"),
        ("[code, 3, ' ', code, ' cleanup ']", ("code", "cleanup"), "not kinds of work are ignored: 3, ' '"),
    ],
)
def test_other_values_are_ignored_and_said_and_the_lesson_loads(
    tmp_path: Path, value: str, kept: tuple[str, ...], said: str
) -> None:
    path = tmp_path / "lessons" / "odd.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nmatch:\n  keywords: [deploy]\n  session_categories: {value}\n---\n# Odd\n")
    library = load_library(tmp_path)
    assert [(x.id, x.session_categories) for x in library.lessons] == [("odd.md", kept)]
    assert [(p.kind, said in p.reason) for p in library.problems] == [(IGNORED, True)], library.problems
    again = load_library(tmp_path)  # from the lesson cache: the same
    assert [(x.id, x.session_categories) for x in again.lessons] == [("odd.md", kept)]


@pytest.mark.parametrize(
    ("category", "candidates"),
    [
        (None, ["any.md", "code.md", "research.md"]),  # the kind of work not known: every match
        ("code", ["any.md", "code.md"]),  # "Code" in the file: compared case-insensitively
        ("INFRASTRUCTURE", ["any.md", "code.md"]),
        ("research", ["any.md", "research.md"]),
        ("triage", ["any.md"]),
    ],
)
def test_select_leaves_out_lessons_for_other_kinds_of_work(
    tmp_path: Path, category: str | None, candidates: list[str]
) -> None:
    ws = Workspace(workspace(tmp_path), clock=fixed_clock)
    selection = ws.select(CONTEXT, k=5, seed=1, session_id="s1", category=category)
    assert sorted(selection.candidates) == candidates
    assert sorted(selection.selected) == candidates  # k 5: every candidate is chosen
    assert sorted(selection.propensity) == candidates
    logged = [json.loads(line) for line in (tmp_path / LOG_REL).read_text().splitlines()]
    assert [sorted(e["candidates"]) for e in logged] == [candidates]


def test_the_category_config_finds_in_the_context_leaves_them_out_too(tmp_path: Path) -> None:
    root = workspace(tmp_path)
    config = root / "state" / "lesson-thompson" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[categories]\nresearch = ["flaky"]\n')
    ws = Workspace(root, clock=fixed_clock)
    selection = ws.select(CONTEXT, k=5, seed=1, session_id="s1")
    assert (selection.category, sorted(selection.candidates)) == ("research", ["any.md", "research.md"])
    # the offline draw (the store unreachable) takes the same candidates
    offline = select_offline(ws, CONTEXT, k=5, seed=1, session_id="s2")
    assert (offline.category, sorted(offline.candidates)) == ("research", ["any.md", "research.md"])
    assert sorted(select_offline(ws, CONTEXT, k=5, seed=1, category="code").candidates) == ["any.md", "code.md"]


def test_a_kind_named_twice_in_the_category_config_counts_its_keywords_once_as_one_kind() -> None:
    from lesson_credit.core.bandit.select import category_of

    table = {"Code": ("python",), "docs": ("readme", "guide"), "code": ("rust", "cargo")}
    # by hand: the context hits python and rust (code work, 2 keywords over its two names) and readme, guide
    # (docs, 2): a tie, to the kind first in the table, named as it is there first. Counted per name, Code
    # and code had 1 each and docs won.
    assert category_of("port the python readme guide to rust", table) == "Code"
    assert category_of("rust and cargo in the readme", table) == "Code"  # code 2 (rust, cargo), docs 1


@pytest.mark.parametrize(
    ("value", "start"),
    [
        # 5,000 spaces, then a kind: the blank entry is shown cut, as a pattern is
        (f"['{' ' * 5000}', code]", "match.session_categories entries that are not kinds of work are ignored: '     "),
        # a YAML timestamp: said cut, as it reads
        ("2026-12-05 10:00:00", "match.session_categories must be a list of kinds of work, got 2026-12-05 10:00:00"),
    ],
    ids=["long-blank-entry", "timestamp"],
)
def test_a_hostile_session_categories_value_is_said_in_one_short_line(tmp_path: Path, value: str, start: str) -> None:
    path = tmp_path / "lessons" / "odd.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nmatch:\n  keywords: [deploy]\n  session_categories: {value}\n---\n# Odd\n")
    library = load_library(tmp_path)
    assert [x.id for x in library.lessons] == ["odd.md"]
    [problem] = library.problems
    assert problem.reason.startswith(start) and len(problem.reason) < 200, problem.reason[:300]


def test_a_keywords_mapping_with_a_huge_key_is_said_in_one_short_line(tmp_path: Path) -> None:
    # an explicit key (`? ...`) may be longer than YAML's 1024-character simple keys
    path = tmp_path / "lessons" / "odd.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nmatch:\n  keywords:\n    ? '{'k' * 5000}'\n    : 1\n---\n# Odd\n")
    library = load_library(tmp_path)
    assert [(x.id, len(x.keywords[0])) for x in library.lessons] == [("odd.md", 5000)]  # read, as gptme reads it
    mapping, too_long = library.problems  # (and the keyword, over 100 characters, is not matched)
    assert mapping.reason.startswith("keywords is a mapping: ") and "'kkkk" in mapping.reason
    assert too_long.reason.endswith("is 5,000 characters long (at most 100); keyword ignored")
    assert len(mapping.reason) < 300 and len(too_long.reason) < 300, (mapping.reason[:400], too_long.reason[:400])


def test_a_huge_unknown_status_is_said_in_one_short_line() -> None:
    with pytest.raises(LessonError) as caught:
        parse_lesson(f"---\nstatus: {'z' * 5000}\n---\n# T\n", "t.md")
    assert str(caught.value).startswith("unknown status 'zzzz") and len(str(caught.value)) < 200


@pytest.mark.parametrize(
    ("category", "lesson_kind", "drawn"),
    [
        # gptme-contrib's hook: the session's kind is os.environ[...].strip().lower(), a lesson's each
        # entry .strip() then .lower(), compared with ==
        (" code ", "Code", True),  # " code ".strip().lower() == "Code".lower() == "code"
        ("STRASSE", "Straße", False),  # "strasse" != "straße" (lower() keeps ß; casefold() made it ss)
        ("ΟΔΟΣ", "οδοσ", False),  # "ΟΔΟΣ".lower() is "οδος", its last letter a final sigma (casefold: "οδοσ")
    ],
    ids=["spaces", "sharp-s", "final-sigma"],
)
def test_the_sessions_kind_is_compared_as_gptme_contribs_hook_compares_it(
    tmp_path: Path, category: str, lesson_kind: str, drawn: bool
) -> None:
    path = tmp_path / "lessons" / "k.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nmatch:\n  keywords: [deploy]\n  session_categories: ['{lesson_kind}']\n---\n# K\n")
    ws = Workspace(tmp_path, clock=fixed_clock)
    selection = ws.select(CONTEXT, k=5, seed=1, session_id="s1", category=category, log=False)
    assert sorted(selection.candidates) == (["k.md"] if drawn else [])


def test_a_list_written_in_braces_restricts_the_lesson_as_the_hook_reads_it(tmp_path: Path) -> None:
    # `session_categories: {research, triage}` is a YAML mapping (keys, null values); the hook's
    # _dedupe_strings iterates it: the lesson is for research and triage alone
    path = tmp_path / "lessons" / "r.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nmatch:\n  keywords: [deploy]\n  session_categories: {research, triage}\n---\n# R\n")
    ws = Workspace(tmp_path, clock=fixed_clock)
    assert ws.select(CONTEXT, k=5, seed=1, session_id="s1", category="code", log=False).candidates == ()
    assert list(ws.select(CONTEXT, k=5, seed=1, session_id="s2", category="Triage", log=False).candidates) == ["r.md"]


@pytest.mark.parametrize(
    ("category", "left_out"),
    [
        (None, []),  # the kind not known: nothing is left out
        ("code", ["research.md"]),  # research.md matches "flaky" but is for research alone
        ("research", ["code.md"]),
        ("triage", ["code.md", "research.md"]),  # any.md names no kind: drawn for every kind
    ],
)
def test_the_selection_names_the_matching_lessons_its_kind_of_work_left_out(
    tmp_path: Path, category: str | None, left_out: list[str]
) -> None:
    ws = Workspace(workspace(tmp_path), clock=fixed_clock)
    selection = ws.select(CONTEXT, k=5, seed=1, session_id="s1", category=category)
    assert sorted(selection.left_out) == left_out
    assert sorted(select_offline(ws, CONTEXT, k=5, seed=1, category=category).left_out) == left_out
    # not logged: the event keeps its documented fields
    logged = [json.loads(line) for line in (tmp_path / LOG_REL).read_text().splitlines()]
    assert ["left_out" in e for e in logged] == [False]
