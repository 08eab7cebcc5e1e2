"""On a terminal a command's answer stays on a 24-row screen: the detail that pushed it out of view is counted
in one line saying how to see it (`record`'s keywords, `agreement`'s tables per category). Piped, with or
without $COLUMNS, the output says all it said, as scripts read it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run_cli, run_cli_on_terminal
from tests.support.engine_helpers import BASIC_LESSONS, make_workspace, session
from tests.support.records_helpers import agreement_workspace

ROWS = 24  # a terminal's height: the answer and the shell's next prompt
# eight lessons, four keywords each (32); the journal mentions every lesson's first (8) and the second of the
# first three (3): 11 of 32 hit
LESSONS = {f"l{i}.md": ([f"k{i}a", f"k{i}b", f"k{i}c", f"k{i}d"], "active") for i in range(8)}
JOURNAL = " ".join(f"k{i}a" for i in range(8)) + " and k0b k1b k2b"


def _record(root: Path, session_id: str, terminal: bool) -> str:
    run = run_cli_on_terminal if terminal else run_cli
    argv = ["record", "-w", root.name, "--session-id", session_id, "--journal", str(root / "j.md")]
    code, out, err = run(*argv, "--lessons", *LESSONS, "--reward", "0.8")
    assert code == 0, err
    return out


def test_record_on_a_terminal_keeps_its_credit_table_in_view_and_counts_the_keywords(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """record printed its table, then a line or more per keyword of every lesson: eight lessons of four keywords
    took 61 lines, the table out of view at 80x24."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)  # -w ws: the pointer's workspace, short
    root = make_workspace(tmp_path, LESSONS, events=[], journals={"j.md": JOURNAL})
    out = _record(root, "s1", terminal=True)
    lines = out.rstrip("\n").split("\n")
    assert len(lines) < ROWS and max(len(line) for line in lines) <= 80, out
    rows = [line for line in lines if line.startswith("l") and line.split()[0] in LESSONS]
    assert len(rows) == 8, out  # the table whole
    assert lines[-2:] == [
        "the journal mentions 11 of the lessons' 32 keywords; each, and where:",
        "  lesson-credit explain -w ws s1",
    ], out
    assert "'k0a'" not in out  # no keyword's own line
    # what the pointer names lists them: 11 hits, as explain's JSON counts them a second way
    code, text, _ = run_cli("explain", "s1", "-w", str(root))
    assert code == 0 and sum(line.startswith("  hit ") for line in text.split("\n")) == 11, text
    code, payload, _ = run_cli("explain", "s1", "-w", str(root), "--json")
    hits = [k["keyword"] for lesson in json.loads(payload)["lessons"] for k in lesson["keywords"] if k["hit"]]
    assert len(hits) == 11 and {"k0b", "k1b", "k2b"} <= set(hits)


def test_record_piped_prints_every_keyword_with_columns_set_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    root = make_workspace(tmp_path, LESSONS, events=[], journals={"j.md": JOURNAL})
    monkeypatch.setenv("COLUMNS", "80")
    fitted = _record(root, "s1", terminal=False)
    monkeypatch.delenv("COLUMNS")
    full = _record(root, "s2", terminal=False)
    for out in (fitted, full):  # a line per keyword: 11 hits, 21 misses
        keyword_lines = [line.split()[0] for line in out.split("\n") if line.startswith(("  hit ", "  miss "))]
        assert (keyword_lines.count("hit"), keyword_lines.count("miss")) == (11, 21), out
        assert "lesson-credit explain" not in out


def test_agreement_on_a_terminal_counts_its_tables_per_category(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's agreement printed six tables per category under the overall one, 54 lines at 80 columns."""
    monkeypatch.setenv("COLUMNS", "80")
    root = agreement_workspace(tmp_path)  # sessions in two categories: tools and workflow
    code, out, err = run_cli_on_terminal("agreement", "-w", str(root))
    assert code == 0, err
    assert "category tools:" not in out and "category workflow:" not in out, out
    assert out.rstrip("\n").split("\n")[-2:] == [
        "by category, 2 tables (tools, workflow); they are printed by:",
        f"  lesson-credit agreement --by-category -w {root}",
    ], out
    code, shown, _ = run_cli_on_terminal("agreement", "-w", str(root), "--by-category")
    assert code == 0 and "category tools:" in shown and "category workflow:" in shown and "printed by" not in shown
    code, piped, _ = run_cli("agreement", "-w", str(root))  # piped: as before, the --by-category output
    assert code == 0 and piped == shown


def test_replay_on_a_terminal_says_under_its_table_whether_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """replay said `(what-if, nothing written)` or `(written)` in its headline only: over the demo's 34 rows the
    headline is off a 24-row screen, and a table of means with changes reads as applied."""
    monkeypatch.setenv("COLUMNS", "80")
    root = make_workspace(tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 1.0})])
    code, out, err = run_cli_on_terminal("replay", "-w", str(root), "--strategy", "evidence", "--floor", "0.5")
    assert code == 0, err
    assert (
        out.rstrip("\n").split("\n")[-1]
        == "what-if, nothing written: --write stores strategy evidence, floor 0.5, decay 1"
    )
    code, out, err = run_cli_on_terminal("replay", "-w", str(root), "--strategy", "evidence", "--write")
    assert code == 0, err
    assert " ".join(out.rstrip("\n").split("\n")[-2:]).split() == (
        "written: strategy evidence, floor 0.3, decay 1 stored in config.toml, bandit-state.json rewritten".split()
    ), out
    code, status, _ = run_cli("status", "-w", str(root))  # what it says was stored is
    assert code == 0 and "strategy evidence, floor 0.3" in status.split("\n")[0], status
    code, piped, _ = run_cli("replay", "-w", str(root), "--floor", "0.5")  # piped: the table last, as before
    assert code == 0 and "written" not in piped.split("\n\n")[-1], piped


SIMULATE = ["simulate", "--seeds", "3", "--sessions", "150", "--lessons", "20"]


def test_simulate_on_a_terminal_says_its_regret_per_policy_in_the_table_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a table whose `cumulative regret` column gives each selection policy's, simulate listed them again,
    a line each (7 lines): the demo's 28 lines pushed the table's header off a 24-row screen. On a terminal,
    what the list adds (how often each is below seed's) is one line."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli_on_terminal(*SIMULATE)
    assert code == 0, err
    code, text, _ = run_cli(*SIMULATE, "--json")
    regret = json.loads(text)["regret"]
    # the share of seeds each policy's regret is below seed's, as --json gives it, in the order it lists them
    wins = ", ".join(f"{p} {v['versus_seed']['wins']:.0%}" for p, v in regret.items() if p != "seed")
    said = f"cumulative regret: each row's selection policy against the oracle; below seed's in {wins} of seeds".split()
    lines = out.rstrip("\n").split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("cumulative regret: "))
    assert " ".join(lines[at:]).split() == said, out
    assert "per selection policy" not in out and not any(line.startswith("  joint ") for line in lines), out
    for policy, summary in regret.items():  # each policy's regret is in its row of the table
        row = next(line for line in lines if line.split()[:1] == [policy])
        assert row.endswith(f"{summary['mean']:.1f} ±{summary['std']:.1f} [{summary['p10']:.1f}, {summary['p90']:.1f}]")
    code, piped, _ = run_cli(*SIMULATE)  # piped: listed a line each, as before
    assert code == 0 and "cumulative regret against the oracle, per selection policy" in piped
    assert sum(line.startswith(tuple(f"  {p} " for p in regret)) for line in piped.split("\n")) == len(regret)


def test_the_commands_a_terminal_answer_names_run_on_what_it_ran_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command a terminal answer names for the rest repeats what decides its numbers: agreement's --source and
    --threshold (without them it printed every source cut at 0.5: other numbers than the table above it), the
    store given on the command line (`--store ''`: the file, over $LESSON_CREDIT_STORE), and a session id that
    starts with `-` after `--` (else a usage error)."""
    monkeypatch.setenv("COLUMNS", "200")
    root = agreement_workspace(tmp_path)
    code, out, err = run_cli_on_terminal("agreement", "-w", str(root), "--source", "judge", "--threshold", "0.8")
    assert code == 0, err
    assert out.rstrip("\n").split("\n")[-1] == (
        f"  lesson-credit agreement --by-category --source judge --threshold 0.8 -w {root}"
    ), out
    ws = make_workspace(tmp_path / "r", LESSONS, events=[], journals={"j.md": JOURNAL})
    argv = ["record", "-w", str(ws), "--store", "", "--session-id=-dash", "--journal", str(ws / "j.md")]
    code, out, err = run_cli_on_terminal(*argv, "--lessons", *LESSONS)
    assert code == 0, err
    named = out.rstrip("\n").split("\n")[-1]
    assert named == f"  lesson-credit explain -w {ws} --store '' -- -dash", out
    code, text, err = run_cli(*named.split()[1:-4], "-w", str(ws), "--store", "", "--", "-dash")  # it runs
    assert code == 0 and "  hit " in text, err


def test_replay_written_says_the_priority_stored_and_whether_the_state_file_was_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """replay --write's last line on a terminal left out the reward priority it stored, and said
    `bandit-state.json rewritten` when the file was left to a writer (found emptied: a save in progress)."""
    monkeypatch.setenv("COLUMNS", "200")
    root = make_workspace(tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {"tools/git.md": 1.0})])
    argv = ["replay", "-w", str(root), "--floor", "0.4", "--priority", "heuristic,human", "--write"]
    code, out, err = run_cli_on_terminal(*argv)
    assert code == 0, err
    assert out.rstrip("\n").split("\n")[-1] == (
        "written: strategy seed, floor 0.4, decay 1, reward priority heuristic, human stored in config.toml, "
        "bandit-state.json rewritten"
    ), out
    state = root / "state" / "lesson-thompson" / "bandit-state.json"
    state.write_bytes(b"")  # emptied just now: a save of gptme's in progress, left to it
    code, out, err = run_cli_on_terminal("replay", "-w", str(root), "--floor", "0.5", "--write")
    assert code == 0 and state.read_bytes() == b"", err
    assert out.rstrip("\n").split("\n")[-1] == (
        "written: strategy seed, floor 0.5, decay 1 stored in config.toml; bandit-state.json not rewritten (said above)"
    ), out


def test_a_named_command_keeps_every_digit_no_password_and_a_value_starting_with_a_dash() -> None:
    """The threshold was printed with 6 digits (0.6000004 as 0.6: judge's kappa 0.438 against 0.235), a --store
    holding a password was printed back (the store's messages never show it), and `-w -dash` is read as two
    options (exit 2)."""
    from argparse import Namespace

    from lesson_credit.cli.common import next_command

    plain = Namespace(workspace="-dash", store=None)
    assert next_command(plain, ["explain"], ["s1"]) == "lesson-credit explain --workspace=-dash s1"
    for store in ("postgresql://ana:s3cret@db/credit", "host=db password=s3cret dbname=credit"):
        line = next_command(Namespace(workspace=".", store=store), ["explain"], ["s1"])
        assert line == "lesson-credit explain --store URL s1" and "s3cret" not in line
    line = next_command(Namespace(workspace=".", store="postgresql://ana@db/credit"), ["explain"], ["s1"])
    assert line == "lesson-credit explain --store postgresql://ana@db/credit s1"


def test_agreement_names_its_threshold_with_every_digit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    root = agreement_workspace(tmp_path)
    code, out, err = run_cli_on_terminal("agreement", "-w", str(root), "--threshold", "0.6000004")
    assert code == 0, err
    assert out.rstrip("\n").split("\n")[-1].endswith(f"--by-category --threshold 0.6000004 -w {root}"), out
