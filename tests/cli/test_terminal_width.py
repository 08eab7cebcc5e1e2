"""The human-readable output fitted to a terminal's width (cli/render.py): at COLUMNS=80 every command's
stdout fits in 80 columns with the numbers of the full-width output, text visibly shortened or a column
left out with a note; at a pipe or a file without $COLUMNS the output is the full-width one, unchanged."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli_run import ROOT, process_env, run_cli
from tests.support.engine_helpers import make_workspace, session

SESSION = "2026-09-01-000"  # the demo's first session: a judge's grade, 8 lessons, a gptme-sessions record
READ_ONLY = [
    ["status"],
    ["status", "--sort", "n", "--all"],
    ["replay", "--strategy", "evidence", "--floor", "0.5"],
    ["sessions"],
    ["sessions", "--order", "informative", "--limit", "20"],
    ["loo", "--no-write"],
    ["show", SESSION],
    ["explain", SESSION],
    ["agreement"],
    ["lint"],
    ["prune", "--dry-run"],
]
HIDDEN = "hidden"  # "hidden to fit 80 columns: ..." or, at a narrow width, "hidden: ..."
ELLIPSIS = "…"
NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?(?:e[+-][0-9]+)?|\[[^]]*\]|[0-9]+/[0-9]+(?:/[0-9]+/[0-9]+)?")


def copy_demo(folder: Path) -> Path:
    shutil.copytree(ROOT / "lessons", folder / "lessons")
    shutil.copytree(ROOT / "state", folder / "state", ignore=shutil.ignore_patterns(".cache", "*.lock"))
    return folder


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_demo(tmp_path_factory.mktemp("demo"))


def output(monkeypatch: pytest.MonkeyPatch, root: Path, argv: list[str], columns: int | None) -> str:
    """The command's stdout, caught as a pipe would (not a terminal), with COLUMNS set or unset."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = run_cli(*argv, "-w", str(root))
    assert code == 0, err
    return out


def tables(text: str) -> tuple[list[list[tuple[str, list[str]]]], list[str], list[str]]:
    """The tables of a command's output (each a list of (header, cells of that column)), the words of the
    rest (prose: wrapping changes only the spaces between them) and the "hidden to fit" notes. A table is
    a header line over a line of dashes, its rows down to a blank line; the dashes give the columns. A
    column left out and listed under its table instead (`loo`'s flags: "flags:", then a line per row that
    has any, "  lesson: flags", wrapped) is read back into a column of the table, named as its header."""
    lines = text.split("\n")
    found: list[list[tuple[str, list[str]]]] = []
    words: list[str] = []
    notes: list[str] = []
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and re.fullmatch(r"-+(  -+)*", lines[i + 1]):
            spans = [m.span() for m in re.finditer(r"-+", lines[i + 1])]
            end = i + 2
            while end < len(lines) and lines[end] and not lines[end].startswith(HIDDEN):
                end += 1
            block = [lines[i], *lines[i + 2 : end]]
            found.append([(lines[i][a:b].strip(), [row[a:b].strip() for row in block[1:]]) for a, b in spans])
            i = end
        elif lines[i].startswith(HIDDEN):  # the note, with its continuation lines if it is wrapped
            end = i + 1
            while end < len(lines) and lines[end].startswith("  "):
                end += 1
            notes.append(" ".join(line.strip() for line in lines[i:end]))
            i = end
        elif lines[i] == "flags:" and found:
            entries: list[str] = []
            i += 1
            while i < len(lines) and lines[i].startswith("  "):
                if lines[i].startswith("    "):  # a wrapped entry's continuation
                    entries[-1] += " " + lines[i].strip()
                else:
                    entries.append(lines[i].strip())
                i += 1
            found[-1].append((LISTED, entries))
        else:
            words += lines[i].split()
            i += 1
    return found, words, notes


LISTED = "flags (listed below)"  # a column listed under its table, as `tables` reads it back


def shortened_from(cell: str, full: str) -> bool:
    """Whether `cell` is `full` with parts left out where it shows an ellipsis (its pieces in order)."""
    if cell == full:
        return True
    if ELLIPSIS not in cell:
        return False
    at = 0
    pieces = cell.split(ELLIPSIS)
    if not full.startswith(pieces[0]) or not full.endswith(pieces[-1]):
        return False
    for piece in pieces:
        found = full.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def assert_same_content(fitted: str, full: str) -> None:
    """The fitted output says what the full one says: the same prose word for word, each table's rows with
    a subsequence of its columns (in order), every number cell as it was, text cut only at an ellipsis."""
    fitted_tables, fitted_words, notes = tables(fitted)
    full_tables, full_words, _ = tables(full)
    assert fitted_words == full_words
    assert len(fitted_tables) == len(full_tables)
    for narrow, wide in zip(fitted_tables, full_tables, strict=True):
        listed = dict(narrow).get(LISTED)
        if listed is not None:  # each row's flags, under the row's lesson, word for word
            paths, flags = wide[0][1], dict(wide)["flags"]
            assert listed == [f"{path}: {flag}" for path, flag in zip(paths, flags, strict=True) if flag]
            narrow = [column for column in narrow if column[0] != LISTED]
        at, left_out = 0, []
        for header, cells in narrow:  # the full table's next column of that header (two may share one)
            headers = [name for name, _ in wide[at:]]
            assert header in headers, f"column {header!r} is not in the full table"
            left_out += headers[: headers.index(header)]
            at += headers.index(header)
            whole_cells = wide[at][1]
            at += 1
            assert len(cells) == len(whole_cells)
            for cell, whole in zip(cells, whole_cells, strict=True):
                if NUMBER.fullmatch(whole):
                    assert cell == whole, f"{header}: number {whole!r} printed as {cell!r}"
                else:
                    assert shortened_from(cell, whole), f"{header}: {cell!r} is not {whole!r} shortened"
        left_out += [name for name, _ in wide[at:]]
        if left_out:  # a column left out is named in a note under the table (loo's by the estimate it is of)
            said = [
                re.sub(r"leave-one-out's |randomized |; ", lambda m: ", " if m[0] == "; " else "", n) for n in notes
            ]
            named = ", ".join(LISTED if name == "flags" and listed is not None else name for name in left_out)
            assert any(named in note for note in said), (left_out, notes)


def widest(text: str) -> int:
    return max(len(line) for line in text.split("\n"))


@pytest.mark.long
@pytest.mark.parametrize("argv", READ_ONLY, ids=" ".join)
def test_each_command_fits_80_columns_with_the_full_outputs_numbers(
    monkeypatch: pytest.MonkeyPatch, demo: Path, argv: list[str]
) -> None:
    full = output(monkeypatch, demo, argv, None)
    fitted = output(monkeypatch, demo, argv, 80)
    assert widest(fitted) <= 80, fitted
    assert_same_content(fitted, full)
    # at a pipe without COLUMNS nothing is fitted: the output of a width nothing needs fitting to
    assert output(monkeypatch, demo, argv, 100_000) == full


def test_the_demo_outputs_are_wider_than_80_at_a_pipe(monkeypatch: pytest.MonkeyPatch, demo: Path) -> None:
    """What the fitting is for (measured before it: status 108 columns, sessions 94, replay 163, loo 270),
    still printed in full for a script. sessions: its table is 94 wide, the line under it that says what
    `record:judge` is 98."""
    widths = [widest(output(monkeypatch, demo, [name], None)) for name in ("status", "sessions", "replay")]
    assert widths == [108, 98, 163] and widest(output(monkeypatch, demo, ["loo", "--no-write"], None)) == 270


def test_status_at_80_columns_keeps_file_names_and_names_the_lessons_not_active(
    monkeypatch: pytest.MonkeyPatch, demo: Path
) -> None:
    """At 80 columns `status` cut file names (`…/resolve-merge-confli….md`) to keep a status column saying
    `active` on nearly every row. The status column goes first; the note under the table names the lessons
    that are not active."""
    full = output(monkeypatch, demo, ["status"], None).split("\n")
    fitted = output(monkeypatch, demo, ["status"], 80).split("\n")
    # full: lesson 39 + category 13 + status 10 + n 2 + alpha 5 + beta 5 + mean 5 + ci_low 6 + ci_high 7, 8 gaps
    # of 2: 108. Without the category (and its gap) 93, with the lesson at 26 (its longest file name,
    # issue-triage-before-coding.md, needs 2 + 29 = 31): the status goes too, 81: the lesson gives way by 1, to 38
    assert full[2].split() == ["lesson", "category", "status", "n", "alpha", "beta", "mean", "ci_low", "ci_high"]
    assert fitted[2].split() == ["lesson", "n", "alpha", "beta", "mean", "ci_low", "ci_high"]
    assert fitted[3].startswith("-" * 38 + "  --")
    (narrow,), _, _ = tables("\n".join(fitted))
    assert {"workflow/resolve-merge-conflicts.md", "workflow/issue-triage-before-coding.md"} <= set(narrow[0][1])
    # communication/pr-description-quality.md (40): the folder's first 11 characters, an ellipsis, the name
    assert "communicati…/pr-description-quality.md  23   9.62  15.38  0.385   0.208    0.579" in fitted
    # the demo's six lessons that are not active (lessons/), by status, where the status column said so
    note = " ".join(fitted[fitted.index(next(x for x in fitted if x.startswith("hidden"))) :]).split(" (`|")[0]
    assert " ".join(note.split()) == (
        "hidden: category, status (every lesson is active but archived communication/irc-maintainer-pings.md, "
        "patterns/python2-compat-shims.md; automated patterns/timeouts-on-long-commands.md, "
        "testing/snapshot-test-updates.md; deprecated autonomous/cron-scheduled-runs.md, "
        "workflow/manual-changelog-update.md)"
    )


@pytest.mark.parametrize("order", ["sort", "informative"])
def test_sessions_at_80_columns_keep_who_scored_each_reward(
    monkeypatch: pytest.MonkeyPatch, demo: Path, order: str
) -> None:
    """The grader column said whose score the reward is (a judge's or a person's); at 80 columns it was the
    first column hidden, so a judge's score read as a person's grade. The category and the salience go first."""
    fitted = output(monkeypatch, demo, ["sessions", "--order", order, "--limit", "5"], 80).split("\n")
    # widths: session 14, time 20, category 14, reward 6, grader 12 (record:judge), lessons 7, salience 8,
    # shift 5, with gaps of 2. sort: 81 + 6 gaps = 93 > 80; without the category 67 + 5 gaps = 77.
    # informative: 86 + 7 = 100; without the category 72 + 6 = 84; without the salience too 64 + 5 = 74
    headers = {
        "sort": ["session", "time", "reward", "grader", "lessons", "salience"],
        "informative": ["session", "time", "reward", "grader", "lessons", "shift"],
    }
    assert fitted[0].split() == headers[order], fitted
    assert max(len(line) for line in fitted) <= 80, fitted
    hidden = {"sort": "category", "informative": "category, salience"}
    assert fitted[7].startswith(f"hidden to fit 80 columns: {hidden[order]} ("), fitted


def test_grade_fits_like_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A command that writes: the same grade in two copies, one at a pipe and one at 80 columns."""
    full = output(monkeypatch, copy_demo(tmp_path / "a"), ["grade", SESSION, "0.7"], None)
    fitted = output(monkeypatch, copy_demo(tmp_path / "b"), ["grade", SESSION, "0.7"], 80)
    assert widest(full) > 80 and widest(fitted) <= 80
    assert_same_content(fitted, full)


def test_long_ids_paths_and_names_are_shortened_visibly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = "a-very-long-folder-name-for-lessons"
    lessons = {f"{folder}/{name}.md": (["git"], "active") for name in ("first-lesson-of-two", "second-lesson-of-two")}
    long_id = "2026-03-05-session-with-a-rather-long-identifier-0001"
    events = [session(long_id, 0.8, {path: 1.0 for path in lessons}, grader="a-grader-with-a-long-name")]
    root = make_workspace(tmp_path, lessons, events)
    for argv in (["status"], ["sessions"], ["show", long_id], ["explain", long_id], ["replay"]):
        full = output(monkeypatch, root, argv, None)
        fitted = output(monkeypatch, root, argv, 60)
        # a line wider than 60 is one word that no one should cut (a temporary folder's path), or a label and
        # one such word
        over = [line.split() for line in fitted.split("\n") if len(line) > 60]
        assert widest(full) > 60, argv
        assert all(len(words) == 1 or words[0] == "session" and len(words) == 2 for words in over), fitted
        assert_same_content(fitted, full)
    fitted = output(monkeypatch, root, ["status"], 60)
    # 60 columns: status 6 + n 1 + alpha 4 + beta 4 + mean 5 + ci_low 6 + ci_high 7 and 7 gaps of 2 leave 13
    # for the lesson, under the 16 a shortened column keeps: the category goes, then lesson gets 60 - 47 = 13+
    rows = [line.split("  ")[0] for line in fitted.split("\n")[4:6]]
    assert all(row.startswith("…/") and row.endswith(".md") and ELLIPSIS in row[2:] for row in rows), rows


def test_a_pipe_without_columns_gets_the_full_table(tmp_path: Path) -> None:
    """Through a real pipe (a subprocess, no COLUMNS in its environment): the table as wide as it comes,
    whatever the width of the terminal the tests run in."""
    root = copy_demo(tmp_path / "demo")
    env = process_env()
    env.pop("COLUMNS", None)
    done = subprocess.run(
        # (--no-pager: the demo's status is taller than the 24 rows; here its width is what is read)
        [sys.executable, "-m", "lesson_credit.cli.main", "status", "--no-pager", "-w", str(root)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert widest(done.stdout) == 108 and "hidden" not in done.stdout


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_terminal_without_columns_gets_its_own_width(tmp_path: Path) -> None:
    """stdout a terminal 80 columns wide, no COLUMNS: shutil.get_terminal_size reads the terminal."""
    import fcntl
    import struct
    import termios

    root = copy_demo(tmp_path / "demo")
    env = process_env()
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    with subprocess.Popen(
        # (--no-pager: the demo's status is taller than the 24 rows; here its width is what is read)
        [sys.executable, "-m", "lesson_credit.cli.main", "status", "--no-pager", "-w", str(root)],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.PIPE,
    ) as child:
        os.close(follower)
        text = b"".join(_read_all(leader)).decode().replace("\r\n", "\n")
        assert child.wait(timeout=60) == 0, child.stderr.read() if child.stderr else ""
    os.close(leader)
    assert widest(text) <= 80 and "hidden: category, status (every lesson is active but" in text, text


def _read_all(fd: int) -> Iterator[bytes]:
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return
        if not chunk:
            return
        yield chunk


def test_simulate_fits_80_columns_and_is_unchanged_where_it_fits(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """simulate's report (formatted in core.sim.report, with no rule under its header) goes through the
    tables' helper only when it does not fit: at 200 columns it is the pipe's, byte for byte."""
    argv = ["simulate", "--seeds", "2", "--sessions", "60", "--lessons", "12", "--k", "3"]  # two: cells with a spread
    full = output(monkeypatch, tmp_path, argv, None)
    assert widest(full) > 80 and output(monkeypatch, tmp_path, argv, 200) == full
    fitted = output(monkeypatch, tmp_path, argv, 80)
    assert widest(fitted) <= 80, fitted
    (narrow,), prose, notes = tables(fitted)
    lines = full.split("\n")
    header = re.split(r" {2,}", lines[1])
    assert header == ["estimator", "spearman", "precision@10", "harmful in bottom 10%", "cumulative regret"]
    rows = [re.split(r" {2,}", line) for line in lines[2 : 2 + len(narrow[0][1])]]
    for name, cells in narrow:  # each column shown, cell for cell as in the full report
        assert cells == [row[header.index(name)] for row in rows], name
    hidden = [name for name in header if name not in [n for n, _ in narrow]]
    assert hidden and any(", ".join(hidden) in note for note in notes), notes
    # the heading and the lines under the table, wrapped, word for word
    assert prose == [word for line in lines[:1] + lines[2 + len(rows) :] for word in line.split()]


def test_import_gptme_of_the_workspaces_own_file_says_why_in_80_columns(
    monkeypatch: pytest.MonkeyPatch, demo: Path
) -> None:
    """Importing the demo's own bandit-state.json, which the log wrote, imports nothing and says why: one
    line of 95 characters at COLUMNS=80, where every other command's prose is fitted."""
    monkeypatch.chdir(demo)  # the path as a user types it in the workspace (a temporary folder's could pass 80)
    own = "state/lesson-thompson/bandit-state.json"
    fitted = output(monkeypatch, demo, ["import-gptme", own], 80)
    assert widest(fitted) <= 80, fitted
    assert " ".join(fitted.split()) == f"{own} is written from this workspace's log: nothing to import"


def test_loo_at_80_columns_lists_the_flags_and_names_hidden_columns_by_estimate(
    monkeypatch: pytest.MonkeyPatch, demo: Path
) -> None:
    """At 80 columns `loo` left out the flags (what to distrust in a row: a keyword too broad, an effect
    the data cannot identify) with nothing in their place, and named the hidden columns "without, naive Δ,
    95% CI, p (BH), ..." under a table that shows a 95% CI and a p (BH) of its own: which were hidden? The
    flags are listed under the table in full, and the hidden columns named as the leave-one-out's."""
    argv = ["loo", "--no-write"]
    (full,), _, _ = tables(output(monkeypatch, demo, argv, None))
    columns = dict(full)
    expected = [f"{path}: {flag}" for path, flag in zip(columns["lesson"], columns["flags"], strict=True) if flag]
    assert "tools/reading-large-files.md: keyword 'file' matches 75% of journals: too broad" in expected
    fitted = output(monkeypatch, demo, argv, 80)
    assert widest(fitted) <= 80, fitted
    flowing = " ".join(fitted.split())  # the wrapped lines as one
    for entry in expected:
        assert entry in flowing, entry
    (narrow,), _, notes = tables(fitted)
    # the lesson column keeps every file name whole (the widest, issue-triage-before-coding.md, needs 2 + 29):
    # the sessions with the lesson go too (they went only when the lesson was cut to its 16 characters)
    assert [name for name, _ in narrow] == ["lesson", "effect", "95% CI", "p (BH)", "from", LISTED]
    assert all(
        cell.rpartition("/")[2] == path.rpartition("/")[2]
        for cell, path in zip(narrow[0][1], columns["lesson"], strict=True)
    )
    assert notes == [
        "hidden: leave-one-out's with, without, naive Δ, 95% CI, p (BH), by category, IPW; flags (listed below) "
        "(`| less -S` or --json shows all)"
    ]


def test_loo_names_the_randomized_estimates_hidden_columns_as_its_own() -> None:
    from lesson_credit.cli.commands.analysis import _loo_hidden

    header = ["lesson", "effect", "95% CI", "p (BH)", "from", "randomized", "95% CI", "kept/withheld"]
    header += ["with", "without", "naive Δ", "95% CI", "p (BH)", "by category", "IPW", "flags"]
    # left out: the randomized estimate's detail (6, 7), the leave-one-out's refinements (9-14), the flags (15)
    hidden = [6, 7, 9, 10, 11, 12, 13, 14, 15]
    assert _loo_hidden(header, False, hidden) == (
        "randomized 95% CI, kept/withheld; leave-one-out's without, naive Δ, 95% CI, p (BH), by category, IPW; flags"
    )
    assert (
        _loo_hidden(header, True, [5, 6, 7, 15]) == "randomized estimate, 95% CI, kept/withheld; flags (listed below)"
    )


def test_loo_lists_the_flags_rather_than_cut_them(monkeypatch: pytest.MonkeyPatch, demo: Path) -> None:
    """At 200 columns every column fits but the flags (the full table is 270 wide: its longest flag, 90
    characters, is what does not fit); they were cut to their start behind an ellipsis. They are listed in
    full under the table, which keeps every other column, the lesson paths whole."""
    argv = ["loo", "--no-write"]
    (full,), _, _ = tables(output(monkeypatch, demo, argv, None))
    fitted = output(monkeypatch, demo, argv, 200)
    assert widest(fitted) <= 200, fitted
    (narrow,), _, notes = tables(fitted)
    assert [name for name, _ in narrow] == [name for name, _ in full[:-1]] + [LISTED]
    assert dict(narrow)["lesson"] == dict(full)["lesson"]  # no path shortened
    listed = dict(narrow)[LISTED]
    assert listed == [
        f"{path}: {flag}" for path, flag in zip(dict(full)["lesson"], dict(full)["flags"], strict=True) if flag
    ]
    assert notes == ["hidden to fit 200 columns: flags (listed below) (`| less -S` or --json shows every column)"]


def test_show_continues_a_line_of_the_record_two_past_its_start(monkeypatch: pytest.MonkeyPatch, demo: Path) -> None:
    """The record's own lines start under the `record` label's value (10 cells in); one longer than 80 columns
    continued 10 cells past that, at 20: the demo's `grades: ... harm 1.00 ×0.25 → 0.75` (87 cells) left `→ 0.75`
    in the middle of the next line, under nothing. It continues at 12, 2 past its start, as wrapped prose does."""
    lines = output(monkeypatch, demo, ["show", SESSION], 80).split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("          grades: productivity 0.70"))
    assert lines[at + 1] == "            → 0.75", lines[at : at + 2]
    assert lines[at + 2].startswith("          trajectory grade: 0.75")


def test_show_says_the_grade_in_force_above_its_credit_table(monkeypatch: pytest.MonkeyPatch, demo: Path) -> None:
    """At 80x24 `show` of the demo's first session (a gptme record of seven lines, eight lessons: 33 lines) lost its
    `grade` line off the top; what stayed in view, the grade history, names only the heuristic's 0.620 while the
    judge's 0.640 of the record is in force and credited. The credit table's heading says the grade it credits."""
    code, text, err = run_cli("show", SESSION, "-w", str(demo), "--json")
    assert code == 0, err
    shown = json.loads(text)
    in_force = f"{shown['base_reward']:.3f} ({shown['grader']})"
    assert in_force == "0.640 (record:judge)"  # the demo's: its gptme-sessions record's judge, above the heuristic
    lines = output(monkeypatch, demo, ["show", SESSION], 80).rstrip("\n").split("\n")
    assert len(lines) > 23 and f"credit of grade {in_force} under strategy seed, floor 0.3:" in lines[-23:], lines
