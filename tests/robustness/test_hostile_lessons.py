"""A lesson's pattern or wildcard keyword cannot make a command take
gigabytes or minutes. A pattern whose counted repeats expand past PATTERN_MAX_SIZE is refused
before it is compiled; a wildcard of more than WILDCARD_MAX_PARTS literal parts is not matched, nor a
lesson's wildcard keywords past its first WILDCARD_MAX_PER_LESSON.
Each is one lint line (`lesson-parts-ignored`), and the rest of the lesson keeps working."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.library import patterns
from lesson_credit.core.library.keyword_limits import (
    KEYWORD_MAX_CHARS,
    WILDCARD_MAX_PARTS,
    WILDCARD_MAX_PER_LESSON,
    keyword_problem,
    keywords_of_reason,
)
from lesson_credit.core.library.patterns import PATTERN_MAX_SIZE, PatternError, compile_pattern, expanded_size
from lesson_credit.core.library.salience import KeywordMatcher, counted_keys, salience, salience_breakdowns
from tests.robustness.hostile_helpers import make_ws
from tests.support.cli_run import run_process

BOMB = "(?:(?:(?:a{100}){100}){100}){100}"  # the 100-byte attack: 100^4 = 10^8 copies of `a` (21-23 GB)
STARS = "a*" * 418 + "b"  # the 837-byte wildcard: 419 literal parts


def lesson_with(keywords: list[str], patterns_: list[str]) -> str:
    quoted = ", ".join(f"'{p}'" for p in patterns_)
    return f"---\nmatch:\n  keywords: {keywords!r}\n  patterns: [{quoted}]\n---\n# L\n".replace('"', "'")


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("git (push|pull) --force", 20),  # "git " 4, the group push + pull 8, " --force" 8
        (r"\d{4}-\d{2}", 7),  # 4 + 1 + 2
        ("(?:ab{3}c){2}", 2 * (1 + 1 + 3 + 1)),  # ':' a bbb c, twice
        ("(( ){1000}){1000}", 1_000_000),  # a space is an element too
    ],
)
def test_expanded_size_by_hand(pattern: str, size: int) -> None:
    assert expanded_size(pattern, limit=10**9) == size


@pytest.mark.parametrize(
    "pattern",
    [
        BOMB,
        "(?:a{1000}){1000}",
        "a{3}{3}{3}{3}{3}{3}{3}{3}{3}",  # 3^9 = 19,683
        "(?x)(?:a # )\n{100}){100}",  # verbose: the `)` is in a comment, the repeats nest
        "[(?x)]#((a{100}){100}){100}",  # not verbose after all (the flag is in a class): the repeats nest
        "(?#{1})" + "a" * (PATTERN_MAX_SIZE + 1),
    ],
    ids=["attack", "1000x1000", "3^9", "verbose", "not-verbose", "long-literal"],
)
def test_patterns_past_the_bound_are_refused_before_compiling(pattern: str, monkeypatch: Any) -> None:
    import regex

    compiled: list[str] = []
    monkeypatch.setattr(regex, "compile", lambda p, *a, **k: compiled.append(p))
    compile_pattern.cache_clear()
    with pytest.raises(PatternError, match=r"too big to compile: its counted repeats expand to more than 10,000"):
        compile_pattern(pattern)
    assert compiled == []
    assert patterns.pattern_matches(pattern, "a" * 200) is False


def test_ordinary_patterns_still_compile_and_match() -> None:
    compile_pattern.cache_clear()
    assert patterns.pattern_matches(r"\d{4}-\d{2}-\d{2}", "on 2026-03-01 we")
    assert patterns.pattern_matches(r"git (push|pull) --force", "GIT PUSH --force")
    assert patterns.pattern_matches(r"error.{0,200}retry", "error: x, then retry")


def test_a_wildcard_of_too_many_parts_is_not_matched() -> None:
    problem = keyword_problem(STARS)
    assert problem is not None and "\n" not in problem
    assert f"has 419 literal parts between its '*'s (at most {WILDCARD_MAX_PARTS} are matched)" in problem
    assert keyword_problem("a*b*c*d") is None and keyword_problem("*x*y*") is None
    # not counted: alpha hits, so salience 1 / 1 (it would be 1 / 2 were the keyword counted)
    assert salience("alpha " + "a" * 100, ["alpha", STARS]) == 1.0


def test_the_long_wildcard_costs_no_work_over_a_long_journal() -> None:
    text = "a" * 5_000  # every position an occurrence of each part: 419 parts x 5,000 positions before
    tracemalloc.start()
    try:
        found = KeywordMatcher([STARS, "a*a*a*b"]).scan(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not found.occurs("a*a*a*b")
    assert peak < 8 << 20, peak  # the 4-part keyword's lists only: ~5,000 x 4 positions


def test_an_allowed_wildcard_over_a_dense_journal_is_array_work_not_lists_per_occurrence() -> None:
    """Every position of 200,000 `a`s is an occurrence of each part: the matcher keeps a few int64
    arrays of that length (1.6 MB each), not a Python list and dict entry per occurrence and part
    (49 MB before)."""
    tracemalloc.start()
    try:
        found = KeywordMatcher(["a*a*a*b", "*a*"]).scan("a" * 200_000 + " a")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found.get("a*a*a*b", []) == []
    assert found.get("*a*", []) == [(0, 200_000), (200_001, 200_002)]  # one match per run of word characters
    assert peak < 24 << 20, peak


def test_lint_and_select_with_the_hostile_lesson(tmp_path: Path) -> None:
    ws = make_ws(tmp_path, {"w.md": lesson_with(["alpha", STARS], [BOMB, "git push"])})
    (ws / "j.md").write_text(("a" * 50 + " ") * 2_000 + "alpha\n")
    done = run_process("lint", cwd=ws)
    assert "Traceback" not in done.stderr and "MemoryError" not in done.stderr, done.stderr[-2000:]
    findings = [line for line in done.stdout.splitlines() if "[lesson-parts-ignored]" in line]
    assert len(findings) == 1, done.stdout
    assert "2 patterns or keywords of loaded lessons are not used" in findings[0]
    assert "is too big to compile" in findings[0] and "419 literal parts" in findings[0]
    (ws / "ctx.txt").write_text("git push please")
    done = run_process("select", "--context", "ctx.txt", cwd=ws)
    assert done.returncode == 0 and done.stdout.strip().splitlines()[0] == "w.md", done.stderr[-2000:]
    done = run_process("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "w.md", "--json", cwd=ws)
    assert done.returncode == 0, done.stderr[-2000:]
    assert '"salience": 1.0' in done.stdout  # alpha, the one counted keyword


def test_a_lesson_counts_its_first_wildcard_keywords_only(tmp_path: Path) -> None:
    """One lesson of 2,000 wildcard keywords over an 8 MB journal ran `record` for minutes (each wildcard costs
    work in proportion to its parts' occurrences). A lesson counts its first WILDCARD_MAX_PER_LESSON (16) wildcard
    keywords; plain ones are not limited; lint says how many are ignored, once."""
    keywords = ["plain", *(f"w{i:04d}*z" for i in range(2_000)), "later"]
    assert len(counted_keys(keywords)) == 1 + 16 + 1  # plain, w0000*z .. w0015*z, later
    (found,) = salience_breakdowns("plain w0000xz w0035xz later", [("l.md", keywords)])
    # hits: plain, w0000*z (the first wildcard) and later, of 18 counted; w0035*z, the 36th wildcard, is not counted
    assert found.hits == 3 and found.salience == pytest.approx(3 / 18)
    assert "w0035*z" not in [hit.keyword for hit in found.keywords]
    ws = make_ws(tmp_path, {"w.md": lesson_with(keywords[:41], [])})  # plain and 40 wildcards: 24 past the first 16
    done = run_process("lint", cwd=ws)
    findings = [line for line in done.stdout.splitlines() if "[lesson-parts-ignored]" in line]
    assert len(findings) == 1 and "24 wildcard keywords past the first 16" in findings[0], done.stdout
    assert WILDCARD_MAX_PER_LESSON == 16


def test_a_keyword_too_long_is_not_matched() -> None:
    """A keyword of 30,000 `a`s over a journal of 300 KB of `a`s took 40-55 s a `record` (attack): the automaton's
    pass costs up to the keyword's length at each character. A keyword over the limit is ignored, and said."""
    long = "a" * (KEYWORD_MAX_CHARS + 1)
    problem = keyword_problem(long)
    assert problem is not None and "\n" not in problem
    assert problem.endswith(
        f"is {KEYWORD_MAX_CHARS + 1:,} characters long (at most {KEYWORD_MAX_CHARS}); keyword ignored"
    )
    assert keyword_problem("a" * KEYWORD_MAX_CHARS) is None
    assert not KeywordMatcher([long]).scan("a" * 1_000).occurs(long)
    # not counted: alpha hits, so salience 1 / 1 (1 / 2 were it counted and missed, 2 / 2 were it matched)
    assert salience("alpha " + "a" * 1_000, ["alpha", long]) == 1.0
    real = "documentation file consuming excessive context tokens"  # gptme's own lessons' longest keyword: 53
    assert KeywordMatcher([real]).scan(f"the {real} again").occurs(real)


def test_patterns_past_a_lessons_first_16_are_not_tried_and_are_said(tmp_path: Path) -> None:
    """Each pattern may take 0.05 s of a select before it counts as no match: 200 of `^(a|a)*$` in one lesson
    took 16 s (review). A lesson's patterns past its first 16 are not tried, and lint names how many."""
    from lesson_credit.core.bandit.select import candidates
    from lesson_credit.core.library.lessons import load_library
    from lesson_credit.core.library.patterns import PATTERN_MAX_PER_LESSON

    patterns = [f"never{i}" for i in range(PATTERN_MAX_PER_LESSON)] + ["late", "later"]
    listed = "".join(f"\n    - '{p}'" for p in patterns)
    path = tmp_path / "lessons" / "p.md"
    path.parent.mkdir(parents=True)
    path.write_text(f"---\nmatch:\n  keywords: [zzz]\n  patterns:{listed}\nstatus: active\n---\n# P\n")
    library = load_library(tmp_path)
    (problem,) = library.problems
    assert problem.reason == "2 patterns past the first 16 (each up to 0.05 s of a select); ignored"
    assert keywords_of_reason(problem.reason) == 2  # lint's headline counts both
    assert candidates(library.lessons, "a late note") == []  # the 17th pattern, `late`, would match: not tried
    path.write_text(path.read_text().replace("never0", "late"))
    assert [lesson.id for lesson in candidates(load_library(tmp_path).lessons, "a late note")] == [
        "p.md"
    ]  # the first pattern matches: tried


def test_record_and_explain_say_which_wildcards_the_work_budget_left_unmatched(tmp_path: Path) -> None:
    """64 wildcards of one-letter parts over a MB of `a`s took 23 s in one `record` (review). A journal's wildcards
    are matched while their parts' occurrences add up to at most 16 a character (core/library/keyword_limits.py); the
    rest are counted as missed, and record and explain say how many of each lesson's, in one line."""
    # 200,000 `a`s, then "ab\n": budget 16 x 200,004 = 3,200,064 (the floor is 1,048,576). `a` occurs 200,001 times,
    # `aa` 200,000. a*a*a*a works through 800,004 occurrences, *a*a*a*a* has its parts (nothing more), aa*a*a*a,
    # a*aa*a*a and a*a*aa*a 800,003 each (3,200,013 in all); a*a*a*aa and aa*aa*a*a would pass it: not matched.
    keywords = ["a*a*a*a", "*a*a*a*a*", "aa*a*a*a", "a*aa*a*a", "a*a*aa*a", "a*a*a*aa", "aa*aa*a*a", "alpha"]
    ws = make_ws(tmp_path, {"w.md": lesson_with(keywords, [])})
    (ws / "j.md").write_text("a" * 200_000 + "ab\n")
    done = run_process("record", "--session-id", "s1", "--journal", "j.md", "--lessons", "w.md", cwd=ws)
    assert done.returncode == 0, done.stderr[-2000:]
    note = (
        "  note: 2 wildcard keywords not matched (counted as missed): matching the wildcard keywords of the lessons "
        "read with it over this journal would go through more than 16 occurrences of their parts a character of it"
    )
    assert note in done.stdout.splitlines(), done.stdout[-2000:]
    assert "w.md: salience 0.625" in done.stdout  # 5 hit of 8 counted
    done = run_process("explain", "s1", "--json", cwd=ws)
    listed = {k["keyword"]: k for k in json.loads(done.stdout)["lessons"][0]["keywords"]}
    assert [k for k, v in listed.items() if v.get("unmatched")] == ["a*a*a*aa", "aa*aa*a*a"]
    assert listed["a*a*a*a"]["count"] == 1 and listed["a*a*aa*a"]["offsets"] == [0]
    assert not listed["aa*aa*a*a"]["hit"] and listed["aa*aa*a*a"]["count"] == 0
    done = run_process("explain", "s1", cwd=ws)
    assert note in done.stdout.splitlines() and "  miss  'aa*aa*a*a' (not matched)" in done.stdout.splitlines()


def test_a_select_tries_at_most_128_of_the_librarys_patterns_and_says_so(tmp_path: Path) -> None:
    """A lesson's 16 patterns may each take 0.05 s of a select before counting as no match: 100 such lessons could
    take 80 s. A select tries at most PATTERN_MAX_PER_SELECT (128) of the library's patterns, in its order, each counted
    whether or not it runs to its end (which ones time out depends on the load); past it, lessons are candidates by
    their keywords only, and select says how many lessons' patterns were not tried."""
    from lesson_credit.core.bandit import select as select_module
    from lesson_credit.core.library.lessons import Lesson

    # 20 lessons of 16 patterns that never match; l00 and l10 have the keyword `hit` (their patterns are not
    # tried). By hand: l01..l08 take the 128 tries (8 x 16); l09 and l11..l19 are not tried: 10 lessons.
    lessons = [
        Lesson(
            f"l{i:02d}.md",
            "L",
            "c",
            "active",
            "",
            ("hit" if i % 10 == 0 else "zzz",),
            tuple(f"nope{j}" for j in range(16)),
        )
        for i in range(20)
    ]
    tried: list[str] = []

    def counted(pattern: str, context: str, timeout: float = 0.05) -> bool:
        tried.append(pattern)
        return False

    notes: list[str] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(select_module, "pattern_matches", counted)
        kept, _ = select_module.split_candidates(lessons, "a hit", None, notes)
    assert [lesson.id for lesson in kept] == ["l00.md", "l10.md"]
    assert len(tried) == 128
    assert notes == [
        "the patterns of 10 lessons were not tried (or not all): a select tries at most 128 of the library's "
        "patterns, in its order (each up to 0.05 s)"
    ]
    # the CLI says it on stderr, in one line
    body = "".join(f"\n    - 'nope{j}'" for j in range(16))
    ws = make_ws(
        tmp_path, {f"l{i:02d}.md": f"---\nmatch:\n  keywords: [zzz]\n  patterns:{body}\n---\n# L\n" for i in range(9)}
    )
    (ws / "ctx.txt").write_text("a context")
    done = run_process("select", "--context", "ctx.txt", "--dry-run", cwd=ws)  # 9 x 16 = 144: l08 not tried
    assert done.returncode == 0, done.stderr[-2000:]
    assert "the patterns of 1 lesson were not tried (or not all)" in done.stderr
