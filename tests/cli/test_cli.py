"""The headless CLI (docs/cli.md): --json shapes, refusals (exit 1, one stderr line, log untouched), usage errors."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.cli.main import main
from tests.support.cli_run import run, run_json, run_process
from tests.support.engine_helpers import CONFIG_REL, LOG_REL, log_bytes

GIT, QUOTE, PLAIN, STYLE = "tools/git.md", "tools/quote.md", "workflow/plain.md", "style.md"
ROW_KEYS = {"path", "category", "status", "n", "alpha", "beta", "mean", "ci_low", "ci_high"}
EXPLAIN_KEYS = {"session_id", "base_reward", "strategy", "floor", "lessons"}
EXPLAIN_LESSON_KEYS = {"path", "salience", "weight", "reward", "alpha_delta", "beta_delta", "during", "keywords"}
KEYWORD_KEYS = {"keyword", "hit", "count", "offsets"}


@pytest.fixture
def ws(basic_ws: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """basic_ws with s1 recorded through the CLI (git + quote + style, reward 0.82)."""
    code, _, err = run(
        capsys,
        "record", "--workspace", str(basic_ws), "--session-id", "s1", "--journal", str(basic_ws / "j.txt"),
        "--lessons", GIT, QUOTE, STYLE, "--reward", "0.82",
    )  # fmt: skip
    assert code == 0, err
    return basic_ws


def check_explain_shape(payload: dict[str, Any]) -> None:
    assert set(payload) >= EXPLAIN_KEYS
    for lesson in payload["lessons"]:
        assert set(lesson) == EXPLAIN_LESSON_KEYS
        for keyword in lesson["keywords"]:
            assert set(keyword) == KEYWORD_KEYS


# ---------------------------------------------------------------- --json shapes


@pytest.mark.smoke
def test_status_json_shape_and_values(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "status", "--workspace", str(ws))
    assert set(payload) == {"lessons", "sessions", "strategy", "floor", "warnings"}
    assert (payload["sessions"], payload["strategy"], payload["floor"]) == (1, "seed", 0.3)
    rows = {row["path"]: row for row in payload["lessons"]}
    assert set(rows) == {GIT, QUOTE, PLAIN, STYLE, "workflow/old.md"}
    for row in payload["lessons"]:
        assert set(row) == ROW_KEYS
    # quote: salience 0.5, w 0.65, r = 0.82*0.65 = 0.533 -> Beta(1.533, 1.467)
    quote = rows[QUOTE]
    assert (quote["alpha"], quote["beta"], quote["n"]) == pytest.approx((1.533, 1.467, 1))
    assert quote["mean"] == pytest.approx(1.533 / 3.0)
    assert (quote["category"], quote["status"]) == ("tools", "active")
    assert rows["workflow/old.md"]["status"] == "archived"


def test_status_sort_by_path(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "status", "--workspace", str(ws), "--sort", "path")
    paths = [row["path"] for row in payload["lessons"]]
    assert paths == sorted(paths)


def test_replay_json_has_status_keys_and_writes_nothing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = run_json(capsys, "status", "--workspace", str(ws))
    before = log_bytes(ws)
    state_before = (ws / "state/lesson-thompson/bandit-state.json").read_bytes()
    replay = run_json(capsys, "replay", "--workspace", str(ws), "--strategy", "uniform", "--floor", "0.5")
    assert set(replay) == set(status) | {"decay", "priority", "written"}
    assert set(replay["lessons"][0]) == set(status["lessons"][0]) | {"change"}
    assert (replay["strategy"], replay["floor"]) == ("uniform", 0.5)
    quote = next(row for row in replay["lessons"] if row["path"] == QUOTE)
    assert (quote["alpha"], quote["beta"]) == pytest.approx((1.82, 1.18))  # uniform: +0.82, +0.18
    assert log_bytes(ws) == before
    assert (ws / "state/lesson-thompson/bandit-state.json").read_bytes() == state_before
    assert not (ws / CONFIG_REL).exists()
    assert run_json(capsys, "status", "--workspace", str(ws)) == status


def test_replay_write_then_status_agrees(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "replay", "--workspace", str(ws), "--strategy", "evidence", "--floor", "0", "--write")
    assert code == 0, err
    assert "written" in out
    status = run_json(capsys, "status", "--workspace", str(ws))
    assert (status["strategy"], status["floor"]) == ("evidence", 0.0)
    # evidence, floor 0, quote w 0.5: alpha 1 + 0.41, beta 1 + 0.5*0.18 = 1.09
    quote = next(row for row in status["lessons"] if row["path"] == QUOTE)
    assert (quote["alpha"], quote["beta"]) == pytest.approx((1.41, 1.09))


def test_record_json_shape(basic_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(
        capsys,
        "record", "--workspace", str(basic_ws), "--session-id", "r1", "--journal", str(basic_ws / "j.txt"),
        "--lessons", GIT, QUOTE, "--reward", "0.5", "--category", "code",
    )  # fmt: skip
    check_explain_shape(payload)
    assert (payload["session_id"], payload["base_reward"], payload["strategy"]) == ("r1", 0.5, "seed")
    git = payload["lessons"][0]
    assert git["path"] == GIT
    assert git["keywords"] == [
        {"keyword": "git", "hit": True, "count": 1, "offsets": [4]},
        {"keyword": "git worktree", "hit": True, "count": 1, "offsets": [4]},
    ]
    # seed, w 1, base 0.5 -> +0.5 / +0.5
    assert (git["weight"], git["reward"], git["alpha_delta"], git["beta_delta"]) == pytest.approx((1, 0.5, 0.5, 0.5))
    logged = log_bytes(basic_ws)
    assert logged is not None and json.loads(logged)["category"] == "code"


def test_record_during_marks_lessons_and_refuses_a_selected_one(
    basic_ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = str(basic_ws / "j.txt")
    run_json(capsys, "record", "-w", str(basic_ws), "--session-id", "d1", "--journal", journal, "--lessons", GIT,
             "--during", QUOTE, "--reward", "0.5")  # fmt: skip
    logged = log_bytes(basic_ws)
    assert logged is not None
    entries = json.loads(logged.splitlines()[-1])["lessons"]
    assert [(e["path"], e.get("included")) for e in entries] == [(GIT, None), (QUOTE, "during")]  # no selection logged
    code, out, _ = run(
        capsys, "select", "-w", str(basic_ws), "--session-id", "d2", "--k", "1", "--seed", "1", "--context", journal
    )
    chosen = out.split()
    assert code == 0 and len(chosen) == 1
    before = log_bytes(basic_ws)
    code, out, err = run(capsys, "record", "-w", str(basic_ws), "--session-id", "d2", "--journal", journal,
                         "--lessons", "--during", chosen[0], "--reward", "0.5")  # fmt: skip
    assert (code, out) == (1, "") and len(err.strip().splitlines()) == 1
    assert "chosen before the session by its select event" in err
    assert log_bytes(basic_ws) == before  # nothing written


def test_record_pending_json(basic_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(
        capsys, "record", "-w", str(basic_ws), "--session-id", "p", "--journal", str(basic_ws / "j.txt"),
        "--lessons", GIT,
    )  # fmt: skip
    assert payload["base_reward"] is None
    assert payload["lessons"][0]["alpha_delta"] == 0.0


def test_grade_json_shape(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "grade", "--workspace", str(ws), "s1", "0.3", "--note", "on reflection")
    check_explain_shape(payload)
    assert payload["base_reward"] == 0.3
    assert payload["grader"] == "manual"
    assert [(h["base_reward"], h["grader"], h["note"]) for h in payload["history"]] == [
        (0.82, "heuristic", None),
        (0.3, "manual", "on reflection"),
    ]
    # seed, git w 1: +0.3 / +0.7 -- the regrade replaced 0.82, it did not add to it
    git = next(lesson for lesson in payload["lessons"] if lesson["path"] == GIT)
    assert (git["alpha_delta"], git["beta_delta"]) == pytest.approx((0.3, 0.7))
    status = run_json(capsys, "status", "-w", str(ws))
    row = next(r for r in status["lessons"] if r["path"] == GIT)
    assert (row["alpha"], row["beta"], row["n"]) == pytest.approx((1.3, 1.7, 1))


def test_a_grade_typed_as_minus_zero_is_logged_as_zero(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`grade s1 -0` logged "base_reward": -0.0, and `show` printed -0."""
    code, _, err = run(capsys, "grade", "--workspace", str(ws), "s1", "-0")
    assert code == 0, err
    last = (ws / LOG_REL).read_text().splitlines()[-1]
    assert '"base_reward":0.0' in last.replace(" ", ""), last


@pytest.mark.smoke
def test_explain_json_shape(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "explain", "--workspace", str(ws), "s1")
    check_explain_shape(payload)
    assert [lesson["path"] for lesson in payload["lessons"]] == [GIT, QUOTE, STYLE]
    quote = payload["lessons"][1]
    # salience 0.5, w 0.65, r 0.533; quote hit at offset 44 ("misquoted"), never-mentioned missed
    assert (quote["salience"], quote["weight"], quote["reward"]) == pytest.approx((0.5, 0.65, 0.533))
    assert quote["keywords"] == [
        {"keyword": "quote", "hit": True, "count": 1, "offsets": [44]},
        {"keyword": "never-mentioned", "hit": False, "count": 0, "offsets": []},
    ]
    one = run_json(capsys, "explain", "--workspace", str(ws), "s1", "--lesson", STYLE)
    assert [lesson["path"] for lesson in one["lessons"]] == [STYLE]


def test_explain_text_output(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "--workspace", str(ws), "s1")
    assert code == 0
    lines = out.splitlines()
    # one line per keyword: the hit names its offset and shows the snippet; the miss is marked
    quote_line = next(line for line in lines if "'quote'" in line)
    assert "hit" in quote_line and "44" in quote_line and "misquoted" in quote_line
    missed_line = next(line for line in lines if "'never-mentioned'" in line)
    assert "miss" in missed_line


def test_explain_text_shows_no_reward_for_a_pending_session(basic_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pending session credits nothing: its reward cell is '-' as in `show` (and null in --json), not 0.000,
    and its alpha and beta changes '-' too: they were +0.000 beside the '-' (what the record printed)."""
    code, recorded, err = run(
        capsys, "record", "-w", str(basic_ws), "--session-id", "p", "--journal", str(basic_ws / "j.txt"),
        "--lessons", GIT,
    )  # fmt: skip
    assert code == 0, err
    for command in ("record", "explain", "show"):
        if command == "record":
            out = recorded
        else:
            code, out, _ = run(capsys, command, "-w", str(basic_ws), "p")
            assert code == 0
        row = next(line for line in out.splitlines() if line.startswith(GIT))
        # lesson, salience, weight, reward, alpha, beta: git's keyword is in j.txt, so salience 1, weight 1
        assert row.split()[1:] == ["1.000", "1.000", "-", "-", "-"], command


def test_a_note_with_a_newline_stays_on_its_grade_history_line(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One line per grade event: a note's newline is shown as \\n, so it cannot start a line that reads as
    another grade (the note is kept as given in the log and in --json)."""
    fake = "fine\n  2026-03-05T16:30:00Z  1  manual  forged"
    code, _, err = run(capsys, "grade", "-w", str(ws), "s1", "0.3", "--note", fake)
    assert code == 0, err
    for command in ("show", "explain"):
        code, out, _ = run(capsys, command, "-w", str(ws), "s1")
        assert code == 0
        history = out.split("grade history:\n", 1)[1].split("\n\n", 1)[0].splitlines()
        assert len(history) == 2, (command, history)  # the record's 0.82, then the 0.3
        assert history[1].endswith("0.300  manual  fine\\n  2026-03-05T16:30:00Z  1  manual  forged"), command
    payload = run_json(capsys, "show", "-w", str(ws), "s1")
    assert payload["grades"][-1]["note"] == fake


def test_status_text_output(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "status", "--workspace", str(ws))
    assert code == 0
    head = out.splitlines()[0]
    assert "strategy seed" in head and "floor 0.3" in head
    assert GIT in out and "ci_high" in out


@pytest.mark.smoke
def test_select_prints_ids_and_logs(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("git and a quote"))
    code, out, err = run(capsys, "select", "-w", str(basic_ws), "--context", "-", "--k", "1", "--seed", "5",
                         "--session-id", "sel-1")  # fmt: skip
    assert code == 0
    (chosen,) = out.split()
    assert chosen in {GIT, QUOTE}
    assert "sel-1" in err and "1 of 2" in err
    logged = log_bytes(basic_ws)
    assert logged is not None
    event = json.loads(logged)
    assert (event["type"], event["session_id"], event["selected"]) == ("selection", "sel-1", [chosen])


def test_a_second_select_for_a_session_says_it_replaces_the_first(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second `select --session-id X` (a hook run twice) was logged without a word, and the record
    then took its lessons, propensities and category (the latest selection counts): it now says so."""
    argv = ["select", "-w", str(basic_ws), "--context", "-", "--k", "1", "--session-id", "sel-1"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("git and a quote"))
    code, _, err = run(capsys, *argv, "--category", "bugfix")
    assert code == 0 and "warning" not in err
    monkeypatch.setattr(sys, "stdin", io.StringIO("nothing that matches"))
    code, _, err = run(capsys, *argv)
    assert code == 0
    assert "warning: session 'sel-1' already had a selection (category bugfix); this one replaces it" in err, err
    monkeypatch.setattr(sys, "stdin", io.StringIO("git"))
    payload = run_json(capsys, *argv)
    assert any("already had a selection" in w for w in payload["warnings"]), payload
    assert [json.loads(line)["type"] for line in (basic_ws / LOG_REL).read_text().splitlines()] == ["selection"] * 3


def test_selects_wrapped_comments_stay_comments_for_record(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hook saving select's stdout and stderr to one file (`2>&1`) hands it to `record --lessons-file`. At 40
    columns the summary wrapped, its continuation lines without `#` (`  logged`), and record refused the
    file: "not in the lesson library: logged". Every line the comments wrap to starts with `#` now."""
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr(sys, "stdin", io.StringIO("git and a quote"))
    argv = ["-w", str(basic_ws), "--session-id", "sel-9"]
    code, out, err = run(capsys, "select", *argv, "--context", "-", "--k", "2", "--seed", "5")
    assert code == 0
    comments = err.splitlines()
    assert len(comments) > 1 and all(line.startswith("#") for line in comments), comments  # wrapped, all comments
    saved = basic_ws / "selected.txt"
    saved.write_text(out + err, encoding="utf-8")
    code, _, err = run(capsys, "record", *argv, "--journal", "j.txt", "--lessons-file", str(saved), "--reward", "0.5")
    assert code == 0, err
    recorded = json.loads((basic_ws / LOG_REL).read_text().splitlines()[-1])
    assert sorted(entry["path"] for entry in recorded["lessons"]) == sorted(out.split()) == sorted([GIT, QUOTE])


def test_select_json(basic_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = run_json(capsys, "select", "-w", str(basic_ws), "--context", str(basic_ws / "j.txt"), "--k", "5",
                       "--seed", "1", "--dry-run")  # fmt: skip
    keys = {
        "session_id",
        "logged",
        "selected",
        "candidates",
        "propensity",
        "k",
        "seed",
        "policy",
        "category",
        "left_out",
        "warnings",
    }
    assert set(payload) == keys and payload["logged"] is False  # --dry-run
    assert sorted(payload["candidates"]) == [GIT, QUOTE]
    assert log_bytes(basic_ws) is None


def test_status_json_ignores_corrupt_lines(
    tmp_path: Path, make_workspace: Callable[..., Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_workspace(tmp_path, lessons={"a.md": (["a"], "active")}, events=["garbage\n"])
    code, out, err = run(capsys, "status", "-w", str(root), "--json")
    assert code == 0
    assert json.loads(out)["sessions"] == 0
    code, out, err = run(capsys, "status", "-w", str(root))
    assert code == 0
    assert "line 1" in err  # reported as a warning in text mode


def test_workspace_option_before_the_command(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `lesson-credit --workspace DIR status` must not fall back to the current directory
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    payload = run_json(capsys, "--workspace", str(ws), "status")
    assert payload["sessions"] == 1


# ---------------------------------------------------------------- refusals: exit 1, one line, log untouched


def refusal_cases(root: Path) -> dict[str, list[str]]:
    w = ["--workspace", str(root)]
    journal = str(root / "j.txt")
    record = ["record", *w, "--journal", journal]
    return {
        "reward too big": [*record, "--session-id", "s2", "--lessons", GIT, "--reward", "1.5"],
        "reward negative": [*record, "--session-id", "s2", "--lessons", GIT, "--reward", "-0.1"],
        "reward nan": [*record, "--session-id", "s2", "--lessons", GIT, "--reward", "nan"],
        "reward inf": [*record, "--session-id", "s2", "--lessons", GIT, "--reward", "inf"],
        "duplicate session": [*record, "--session-id", "s1", "--lessons", GIT, "--reward", "0.5"],
        "missing journal": ["record", *w, "--journal", str(root / "nope.txt"), "--session-id", "s2", "--lessons", GIT],
        "unknown lesson": [*record, "--session-id", "s2", "--lessons", GIT, "tools/nope.md"],
        "grade unknown session": ["grade", *w, "ghost", "0.5"],
        "grade reward too big": ["grade", *w, "s1", "1.5"],
        "grade reward nan": ["grade", *w, "s1", "nan"],
        "grade reward negative json": ["grade", *w, "s1", "-0.5", "--json"],
        "grade reward with an underscore": ["grade", *w, "s1", "0_1"],  # float() reads 1.0
        "explain unknown session": ["explain", *w, "ghost"],
        "explain lesson not injected": ["explain", *w, "s1", "--lesson", PLAIN],
        "select missing context": ["select", *w, "--context", str(root / "nope.txt")],
        "select recorded session": ["select", *w, "--context", journal, "--session-id", "s1"],
        "missing workspace": ["status", "--workspace", str(root / "no-such-dir")],
    }


CASES = list(refusal_cases(Path("/x")))


@pytest.mark.parametrize("case", CASES)
def test_refusals_exit_1_with_one_line(ws: Path, capsys: pytest.CaptureFixture[str], case: str) -> None:
    argv = refusal_cases(ws)[case]
    before = log_bytes(ws)
    state_before = (ws / "state/lesson-thompson/bandit-state.json").read_bytes()
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert out == ""
    assert len(err.splitlines()) == 1, err
    # (select's stderr, not a terminal here, is # comments, its error line too: tests/cli/test_json_warnings.py)
    assert err.startswith("# lesson-credit: " if argv[0] == "select" else "lesson-credit: "), err
    assert "Traceback" not in err
    assert log_bytes(ws) == before
    assert (ws / "state/lesson-thompson/bandit-state.json").read_bytes() == state_before


def test_bad_config_exits_1(basic_ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = basic_ws / CONFIG_REL
    path.parent.mkdir(parents=True)
    path.write_text('strategy = "greedy"\n')
    code, out, err = run(capsys, "status", "-w", str(basic_ws))
    assert code == 1 and len(err.splitlines()) == 1 and "greedy" in err


# ---------------------------------------------------------------- usage errors: exit 2


@pytest.mark.parametrize(
    "argv",
    [
        ["record", "--journal", "j.txt", "--lessons", GIT],  # no --session-id
        ["grade", "s1"],
        ["replay", "--floor", "2"],
        ["replay", "--floor", "x"],
        ["replay", "--floor", "0_1"],  # float() reads 1.0
        ["replay", "--strategy", "greedy"],
        ["select", "--context", "-", "--k", "0"],
        ["status", "--sort", "nonsense"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(basic_ws: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*argv, "--workspace", str(basic_ws)] if argv[0] != "frobnicate" else argv)
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err
    assert log_bytes(basic_ws) is None


# ---------------------------------------------------------------- as a real process


def test_process_refusal_exit_1_no_traceback(ws: Path) -> None:
    before = log_bytes(ws)
    for argv in (
        ["record", "-w", str(ws), "--session-id", "s2", "--journal", str(ws / "j.txt"), "--lessons", GIT,
         "--reward", "1.5"],
        ["grade", "-w", str(ws), "ghost", "0.5"],
    ):  # fmt: skip
        proc = run_process(*argv, cwd=ws)
        assert proc.returncode == 1, proc.stderr
        assert proc.stdout == ""
        assert len(proc.stderr.splitlines()) == 1, proc.stderr
        assert "Traceback" not in proc.stderr
    assert log_bytes(ws) == before


def test_process_usage_error_exit_2(basic_ws: Path) -> None:
    proc = run_process("grade", "-w", str(basic_ws), "s1", cwd=basic_ws)  # no REWARD
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr


@pytest.mark.smoke
def test_process_status_json(ws: Path) -> None:
    proc = run_process("status", "-w", str(ws), "--json", cwd=ws.parent)
    assert proc.returncode == 0, proc.stderr
    assert {row["path"] for row in json.loads(proc.stdout)["lessons"]} >= {GIT, QUOTE}


def test_record_relative_journal_is_relative_to_cwd(
    basic_ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(basic_ws)
    code, _, err = run(capsys, "record", "-w", ".", "--session-id", "rel", "--journal", "j.txt", "--lessons", GIT)
    assert code == 0, err
    assert json.loads((basic_ws / LOG_REL).read_text())["journal_path"] == "j.txt"
