"""The one fitting helper every table goes through (cli/render.py), on small tables worked out by hand."""

from __future__ import annotations

import pytest

from lesson_credit.cli.render import output_width, shorten, table, wrap

HEADERS = ["lesson", "category", "n", "mean"]
ROWS = [("workflow/issue-triage-before-coding.md", "workflow", 33, "0.455"), ("tools/git.md", "tools", 4, "0.500")]
# natural widths: lesson 38, category 8, n 2, mean 5; three gaps of 2: 59 columns


def test_without_a_width_the_table_is_as_wide_as_it_comes() -> None:
    text = table(HEADERS, ROWS, right=(2, 3))
    assert text.split("\n")[2] == "workflow/issue-triage-before-coding.md  workflow  33  0.455"
    assert table(HEADERS, ROWS, right=(2, 3), width=59) == text  # it fits: nothing changes


def test_a_path_loses_its_folders_before_anything_is_dropped() -> None:
    # 54 columns: 5 too many; the lesson column goes from 38 to 33, which still holds "…/" and the file
    # name, issue-triage-before-coding.md (29): its folders go (2 characters of them would be left, fewer
    # than the 3 a folder's start keeps), the category stays
    lines = table(HEADERS, ROWS, right=(2, 3), width=54, shorten_columns={0: "path"}, drop=(1,)).split("\n")
    assert lines[0] == "lesson".ljust(33) + "  category   n   mean"
    assert lines[2] == "…/issue-triage-before-coding.md".ljust(33) + "  workflow  33  0.455"
    assert max(len(line) for line in lines) == 54


def test_a_column_that_may_go_is_left_out_before_a_file_name_is_cut() -> None:
    # 50 columns: the file name whole needs 2 + 29 = 31, and 31 + category 8 + n 2 + mean 5 + 6 = 52 > 50:
    # the category goes (cutting the name to "…/issue-triage-before-cod….md" kept it before); then the
    # lesson's natural 38 + 2 + 5 + 4 = 49 fits, the path whole
    lines = table(HEADERS, ROWS, right=(2, 3), width=50, shorten_columns={0: "path"}, drop=(1,)).split("\n")
    assert lines[0] == "lesson".ljust(38) + "   n   mean"
    assert lines[2] == "workflow/issue-triage-before-coding.md  33  0.455"
    assert lines[4] == "hidden: category (`| less -S` or --json shows all)"  # (the longer wordings: over 50)


def test_without_a_column_to_leave_out_the_file_name_is_cut() -> None:
    # 50 columns and no column may go: the lesson gets 50 - 8 - 2 - 5 - 6 = 29, too few for "…/" and the
    # 29 of the name: its stem's first 29 - 2 ("…/") - 2 ("….") - 2 ("md") = 23 characters and its extension
    lines = table(HEADERS, ROWS, right=(2, 3), width=50, shorten_columns={0: "path"}).split("\n")
    assert lines[2] == "…/issue-triage-before-cod….md  workflow  33  0.455"
    assert max(len(line) for line in lines) == 50


def test_a_column_is_dropped_when_the_shortened_ones_at_their_least_do_not_fit() -> None:
    # 35 columns: lesson at its least (16) + category 8 + n 2 + mean 5 + 6 = 37 > 35: the category goes;
    # then 16 + 2 + 5 + 4 = 27 fits, and the lesson gets 35 - 2 - 5 - 4 = 24: a stem of 24 - 6 = 18
    lines = table(HEADERS, ROWS, right=(2, 3), width=35, shorten_columns={0: "path"}, drop=(1,)).split("\n")
    assert lines[0].split() == ["lesson", "n", "mean"]
    assert lines[2] == "…/issue-triage-befor….md  33  0.455"
    assert lines[3] == "tools/git.md".ljust(24) + "   4  0.500"
    assert lines[4:] == ["hidden to fit 35 columns: category", "  (`| less -S` or --json shows all)"]  # 2 lines


def test_numbers_are_never_cut() -> None:
    # 20 columns cannot hold n and mean beside the lesson at its last resort (4): the table stays wider
    lines = table(HEADERS, ROWS, right=(2, 3), width=20, shorten_columns={0: "path"}, drop=(1,)).split("\n")
    assert [line.split()[-2:] for line in lines[2:4]] == [["33", "0.455"], ["4", "0.500"]]


@pytest.mark.parametrize(
    ("how", "width", "expected"),
    [
        # workflow/issue-triage-before.md is 31: at 30 the folder keeps 30 - 22 (the name) - 2 ("…/") = 6
        ("path", 30, "workfl…/issue-triage-before.md"),
        # at 23 not even "…/" and the name fit: a stem of 23 - 2 - 2 - 2 = 17 and ".md"
        ("path", 23, "…/issue-triage-befo….md"),
        ("middle", 9, "2026…-000"),  # 4 from the start, 4 from the end
        ("end", 8, "insuffi…"),
    ],
)
def test_shorten(how: str, width: int, expected: str) -> None:
    text = {"path": "workflow/issue-triage-before.md", "middle": "2026-09-01-000", "end": "insufficient data"}[how]
    assert shorten(text, width, how) == expected  # type: ignore[arg-type]
    assert len(expected) <= width


def test_wrap_breaks_between_words_only() -> None:
    line = "effect per lesson over 153 graded sessions: min 5 with, 20 without"
    assert wrap(line, 30) == "effect per lesson over 153\n  graded sessions: min 5 with,\n  20 without"
    assert wrap(line, None) == line


def test_wrap_counts_wide_characters_as_two_columns() -> None:
    # A judge's reason in Korean (Hangul is wide, and Korean puts spaces between words): "judge 0.32:"
    # (11 columns), then 6 words of 3 characters (6 columns each). At 30 columns: "judge 0.32:" + 2 words
    # = 11 + 1 + 6 + 1 + 6 = 25 (a third word would make 32); then "  " + the 4 others = 2 + 4 x 6 + 3 =
    # 29. Counted as characters, the first line took 4 words (11 + 4 x 4 = 27 characters, 35 columns).
    line = "judge 0.32: 변경이 되돌려 졌습니 다시는 안되요 좋아요"
    assert wrap(line, 30) == "judge 0.32: 변경이 되돌려\n  졌습니 다시는 안되요 좋아요"
    assert wrap("변경이 되돌려", 12) == "변경이\n  되돌려"  # 13 columns in 7 characters: wrapped
    assert wrap("changed; 변경이", 15) == "changed; 변경이"  # 15 columns: as it was


def test_the_width_is_columns_or_a_terminals_never_a_pipes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert output_width() is None  # pytest's captured stdout is no terminal
    monkeypatch.setenv("COLUMNS", "72")
    assert output_width() == 72
    monkeypatch.setenv("COLUMNS", "wide")
    assert output_width() is None


def test_wide_characters_take_two_columns() -> None:
    # A CJK character fills two terminal columns. Lesson "工具/课程文件名称很长.md": 2 + 1 + 8 CJK + 3 = 14
    # characters, 2*2 + 1 + 8*2 + 3 = 24 columns; beside n (1) and a gap (2) the table is 27 wide.
    rows = [("工具/课程文件名称很长.md", 1)]
    lines = table(["lesson", "n"], rows, right=(1,), width=20, shorten_columns={0: "path"}).split("\n")
    # 20 - 2 - 1 = 17 columns for the lesson: "…/" (2) and the name's stem in 17 - 2 - 2 ("….") - 2 ("md")
    # = 11 columns: 5 CJK characters (10; a sixth would make 12), padded by one space to the 17
    assert lines[2] == "…/课程文件名….md" + " " + "  1"
    assert lines[0] == "lesson" + " " * 11 + "  n"
    assert shorten("课程文件名称", 7, "end") == "课程文…"  # 3 characters (6 columns) and the ellipsis
    assert shorten("工具课程文件名称", 9, "middle") == "工具…名称"  # 4 columns from each end
