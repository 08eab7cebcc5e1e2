"""Consistent exit codes and JSON: each of these failed on the code before it.

Workspace: git (keywords git, worktree) and quote (quote, misquote); the journal mentions git
and worktree, not quote. Seed strategy, floor 0.3: git salience 1 -> w 1; quote 0 -> w 0.3.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.cli_fixtures import log_bytes, make_ws, run_plain, session

GIT, QUOTE = "tools/git.md", "tools/quote.md"
JOURNAL = "Ran git worktree add ../wt and pushed.\n"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    return make_ws(
        tmp_path, lessons={GIT: ["git", "worktree"], QUOTE: ["quote", "misquote"]}, journals={"j.md": JOURNAL}
    )


def record(capsys: pytest.CaptureFixture[str], ws: Path, sid: str, *extra: str) -> tuple[int, str, str]:
    return run_plain(
        capsys, "record", "-w", str(ws), "--session-id", sid, "--journal", str(ws / "j.md"), *extra
    )  # fmt: skip


def json_of(result: tuple[int, str, str]) -> dict[str, Any]:
    code, out, err = result
    assert code == 0, err
    parsed: dict[str, Any] = json.loads(out)
    return parsed


@pytest.mark.parametrize("reward", ["abc", "nan", "-0.5", "1.5", "inf", ""])
def test_every_bad_reward_exits_1_with_one_line(ws: Path, capsys: pytest.CaptureFixture[str], reward: str) -> None:
    assert record(capsys, ws, "s1", "--lessons", GIT)[0] == 0
    before = log_bytes(ws)
    for argv in (
        ["grade", "-w", str(ws), "s1", reward],
        [
            "record",
            "-w",
            str(ws),
            "--session-id",
            "s2",
            "--journal",
            str(ws / "j.md"),
            "--lessons",
            GIT,
            "--reward",
            reward,
        ],
    ):
        try:
            code, out, err = run_plain(capsys, *argv)
        except SystemExit as exc:  # argparse's usage dump: exit 2
            code, out, err = int(exc.code or 0), *capsys.readouterr()
        assert (code, out) == (1, ""), (argv, code, err)
        assert len(err.splitlines()) == 1 and "reward" in err
    assert log_bytes(ws) == before


def test_pending_session_rewards_are_null_in_json(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    payload = json_of(record(capsys, ws, "s1", "--lessons", GIT, QUOTE, "--json"))
    assert payload["base_reward"] is None
    assert [lesson["reward"] for lesson in payload["lessons"]] == [None, None]
    explained = json_of(run_plain(capsys, "explain", "-w", str(ws), "s1", "--json"))
    assert [lesson["reward"] for lesson in explained["lessons"]] == [None, None]
    graded = json_of(run_plain(capsys, "grade", "-w", str(ws), "s1", "0.5", "--json"))
    # graded 0.5: git w 1 -> 0.5; quote w 0.3 -> 0.15
    assert [lesson["reward"] for lesson in graded["lessons"]] == pytest.approx([0.5, 0.15])


def test_grade_json_lists_the_real_keywords(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert record(capsys, ws, "s1", "--lessons", GIT, QUOTE)[0] == 0
    payload = json_of(run_plain(capsys, "grade", "-w", str(ws), "s1", "0.9", "--json"))
    keywords = {lesson["path"]: lesson["keywords"] for lesson in payload["lessons"]}
    # "git" at offset 4, "worktree" at 8 of the journal; quote's keywords are not in it
    assert keywords[GIT] == [
        {"keyword": "git", "hit": True, "count": 1, "offsets": [4]},
        {"keyword": "worktree", "hit": True, "count": 1, "offsets": [8]},
    ]
    assert [(k["keyword"], k["hit"]) for k in keywords[QUOTE]] == [("quote", False), ("misquote", False)]


def test_replay_json_has_the_change_column(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert record(capsys, ws, "s1", "--lessons", GIT, QUOTE, "--reward", "0.8")[0] == 0
    payload = json_of(run_plain(capsys, "replay", "-w", str(ws), "--strategy", "uniform", "--json"))
    change = {row["path"]: row["change"] for row in payload["lessons"]}
    # seed: git Beta(1.8, 1.2) mean 0.6; quote r = 0.8*0.3 = 0.24 -> Beta(1.24, 1.76) mean 0.41333
    # uniform: both Beta(1.8, 1.2), mean 0.6
    assert change[GIT] == pytest.approx(0.0)
    assert change[QUOTE] == pytest.approx(0.6 - 1.24 / 3)


def test_lint_json_items_carry_a_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_ws(
        tmp_path,
        lessons={GIT: ["git"]},
        events=[session("s1", 0.5, {GIT: 1.0, "tools/gone.md": 0.5}), "{not json\n"],
    )
    code, out, _ = run_plain(capsys, "lint", "-w", str(root), "--json")
    found = {f["code"]: f for f in json.loads(out)["findings"]}
    assert found["ghost-arms"]["items"] == [{"item": "tools/gone.md", "reason": "no lesson file"}]
    (line,) = found["log-unreadable-lines"]["items"]
    assert line["item"] == "line 2" and "JSON" in line["reason"]


def test_explain_json_flags_a_journal_changed_since_recording(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert record(capsys, ws, "s1", "--lessons", GIT, "--reward", "0.5")[0] == 0
    assert json_of(run_plain(capsys, "explain", "-w", str(ws), "s1", "--json"))["journal_changed"] is False
    (ws / "j.md").write_text(JOURNAL + "edited later\n", encoding="utf-8")
    payload = json_of(run_plain(capsys, "explain", "-w", str(ws), "s1", "--json"))
    assert payload["journal_changed"] is True
    assert "sha256" in payload["journal_note"]
    assert payload["warnings"] == [payload["journal_note"]]  # as the text says it: a warning (it was left out)
    code, out, _ = run_plain(capsys, "explain", "-w", str(ws), "s1")
    assert code == 0 and "changed since the session was recorded" in out


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--grader", ""], "grader must not be empty"),
        (["--grader", "  "], "grader must not be empty"),
        (["--category", "feat\nure"], "category must be one line"),
        (["--category", "feat\x1b[31m"], "category must be one line"),
    ],
)
def test_empty_grader_and_control_characters_are_refused(
    ws: Path, capsys: pytest.CaptureFixture[str], extra: list[str], needle: str
) -> None:
    code, out, err = record(capsys, ws, "s1", "--lessons", GIT, "--reward", "0.5", *extra)
    assert (code, out) == (1, "")
    assert len(err.splitlines()) == 1 and needle in err
    assert log_bytes(ws) is None


def test_grade_refuses_an_empty_grader(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert record(capsys, ws, "s1", "--lessons", GIT)[0] == 0
    before = log_bytes(ws)
    code, _, err = run_plain(capsys, "grade", "-w", str(ws), "s1", "0.5", "--grader", "")
    assert code == 1 and "grader" in err and len(err.splitlines()) == 1
    assert log_bytes(ws) == before
