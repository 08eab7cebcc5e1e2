"""Keywords that are not counted say so where a user looks: a category of config.toml's [categories] with more
wildcard keywords than a lesson counts (lint and every command's warnings, as for a lesson); lint's headline
counts what its items count; `explain` lists an ignored wildcard keyword the journal mentions."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import make_workspace, session

# 20 wildcard keywords: the first 16 are counted, c16*x .. c19*x are not (4)
CODE_WORDS = [f"c{i:02d}*x" for i in range(20)]
CONFIG = "[categories]\ncode = " + json.dumps(CODE_WORDS) + '\ndocs = ["readme"]\n'
LESSON_WORDS = ["plain", *(f"w{i:02d}*z" for i in range(20))]  # plain and 20 wildcards: w16*z .. w19*z ignored


def test_a_category_with_more_wildcard_keywords_than_counted_says_so_once(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, {"a.md": (["alpha"], "active")}, config=CONFIG)
    code, out, err = run_cli("lint", "--workspace", str(root))
    assert code == 0, err  # a warning: lint passes on errors only
    lines = [line for line in out.splitlines() if "[category-keywords-ignored]" in line]
    assert len(lines) == 1 and lines[0].startswith("warning:"), out
    assert "4 keywords of config.toml's [categories] are not used" in lines[0]
    assert "'code': 4 wildcard keywords past the first 16" in lines[0] and "docs" not in lines[0]
    code, out, err = run_cli("status", "--workspace", str(root))
    assert code == 0
    said = [line for line in err.splitlines() if "[categories]" in line]
    assert len(said) == 1 and "'code': 4 wildcard keywords past the first 16" in said[0], err
    # what select counts: c18*x and c19*x are past the first 16, so code has no counted hit and docs one
    (root / "ctx.txt").write_text("c18x c19x and the readme")
    code, out, err = run_cli(
        "select", "--workspace", str(root), "--context", str(root / "ctx.txt"), "--dry-run", "--json"
    )
    assert code == 0, err
    payload = json.loads(out)
    assert payload["category"] == "docs"
    assert [w for w in payload["warnings"] if "[categories] 'code'" in w], payload["warnings"]


def test_lint_headline_counts_the_keywords_and_patterns_its_items_name(tmp_path: Path) -> None:
    """A lesson with 4 wildcard keywords past the first 16 and one invalid pattern: 4 + 1 = 5 parts not used
    (the headline said 2: one per reason)."""
    root = make_workspace(tmp_path, {"w.md": (LESSON_WORDS, "active", ["(unclosed"])})
    code, out, err = run_cli("lint", "--workspace", str(root))
    assert code == 1, err
    (line,) = [line for line in out.splitlines() if "[lesson-parts-ignored]" in line]
    assert "5 patterns or keywords of loaded lessons are not used" in line, line
    assert "4 wildcard keywords past the first 16" in line


def test_explain_lists_an_ignored_wildcard_keyword_the_journal_mentions(tmp_path: Path) -> None:
    journal = "plain w00xz then w18xz"  # w18xz at offset 17: its keyword w18*z is the 19th wildcard, not counted
    root = make_workspace(
        tmp_path,
        {"w.md": (LESSON_WORDS, "active")},
        events=[session("s1", None, {"w.md": 2 / 17}, journal_path="j.md")],  # plain and w00*z of 17 counted
        journals={"j.md": journal},
    )
    code, out, err = run_cli("explain", "s1", "--workspace", str(root))
    assert code == 0, err
    assert "salience 0.118" in out  # 2 / 17: the ignored keyword does not count
    assert "note: 4 wildcard keywords past the first 16 not counted in salience" in out
    (line,) = [line for line in out.splitlines() if line.startswith("  ignored ")]
    assert line.startswith("  ignored 'w18*z' x1 at 17: "), out
    code, out, err = run_cli("explain", "s1", "--workspace", str(root), "--json")
    payload = json.loads(out)
    hits = [{"keyword": "w18*z", "count": 1, "offsets": [17]}]
    assert payload["ignored_keywords"] == {"w.md": {"beyond": 4, "unchecked": 0, "hits": hits}}
    (lesson,) = payload["lessons"]
    assert "w18*z" not in [k["keyword"] for k in lesson["keywords"]]


def test_explain_looks_for_as_many_ignored_wildcard_keywords_as_a_lesson_counts(tmp_path: Path) -> None:
    """40 wildcard keywords: w16*z .. w31*z (16, as many as are counted) are looked for, w32*z .. w39*z are not:
    the journal's w20xz is listed, its w39xz is not, and the note says so (each looked for is a pass over it)."""
    words = [f"w{i:02d}*z" for i in range(40)]
    root = make_workspace(
        tmp_path,
        {"w.md": (words, "active")},
        events=[session("s1", None, {"w.md": 0.0}, journal_path="j.md")],  # none of the 16 counted is mentioned
        journals={"j.md": "w20xz and w39xz"},
    )
    code, out, err = run_cli("explain", "s1", "--workspace", str(root))
    assert code == 0, err
    note = "note: 24 wildcard keywords past the first 16 not counted in salience (the first 16 of them looked for"
    assert note in out
    assert [line.split()[1] for line in out.splitlines() if line.startswith("  ignored ")] == ["'w20*z'"]
    # --json says as much: 24 past the first 16, the last 8 of them (w32*z .. w39*z) not looked for, w20*z mentioned
    (ignored,) = json.loads(run_cli("explain", "s1", "--workspace", str(root), "--json")[1])[
        "ignored_keywords"
    ].values()
    assert (ignored["beyond"], ignored["unchecked"], [hit["keyword"] for hit in ignored["hits"]]) == (24, 8, ["w20*z"])
