"""The most lessons one session may name: `record` refuses more with one line and writes nothing; a
session event in the log naming more is a bad line, reported with its number and skipped by every
reader (status, lint, select, loo), as an out-of-range salience is. The cap is set to 3 here so that
each case stays small (the real cap, a thousand, keeps the joint fit's X'X at a million entries a session)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log import events
from tests.cli.cli_fixtures import LOG_REL, log_bytes, make_ws, run, session

CAP = 3
LESSONS = {"a.md": ["alpha"], "b.md": ["beta"], "c.md": ["gamma"], "d.md": ["delta"]}
CROWDED = session("s2", 1.0, {"a.md": 1.0, "b.md": 1.0, "c.md": 1.0, "d.md": 1.0})  # 4 lessons: one too many
TOO_MANY = "sessions.jsonl line 2: session event naming 4 lessons (at most 3)"


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "MAX_SESSION_LESSONS", CAP)


def _log(*crowded: dict[str, Any]) -> list[dict[str, Any]]:
    """s1 (a, reward 1), then `crowded`, then s3 (b, reward 0): every salience 1."""
    return [session("s1", 1.0, {"a.md": 1.0}), *crowded, session("s3", 0.0, {"b.md": 1.0})]


@pytest.mark.parametrize(
    ("lessons", "during"),
    [
        (["a.md", "b.md", "c.md", "d.md"], []),
        (["a.md", "b.md"], ["c.md", "d.md"]),  # those included during the session count too
    ],
)
def test_a_record_naming_more_lessons_than_the_cap_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], lessons: list[str], during: list[str]
) -> None:
    ws = make_ws(tmp_path, LESSONS, events=_log(), journals={"j.md": "alpha beta\n"})
    before = log_bytes(ws)
    argv = ["record", "-w", str(ws), "--session-id", "s9", "--journal", "j.md", "--reward", "0.5"]
    code, out, err = run(capsys, *argv, "--lessons", *lessons, *(["--during", *during] if during else []))
    assert (code, out, err) == (1, "", "lesson-credit: 4 lessons for one session: at most 3\n")
    assert log_bytes(ws) == before


def test_a_record_of_as_many_lessons_as_the_cap_is_logged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(tmp_path, LESSONS, events=_log(), journals={"j.md": "alpha beta\n"})
    argv = ["record", "-w", str(ws), "--session-id", "s9", "--journal", "j.md", "--reward", "0.5"]
    code, _, err = run(capsys, *argv, "--lessons", "a.md", "b.md", "--during", "c.md")
    assert code == 0, err
    assert json.loads((ws / LOG_REL).read_text().splitlines()[-1])["session_id"] == "s9"


def test_status_and_lint_report_the_crowded_event_and_skip_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path, LESSONS, events=_log(CROWDED))
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["warnings"] == [TOO_MANY]
    # s1: a, salience 1 (weight 1), reward 1 -> a (1+1, 1+0); s3: b, reward 0 -> b (1+0, 1+1); c and d untouched.
    # Were s2 counted, a would be (3, 1) and b, c, d (2, 1) after it.
    numbers = {row["path"]: (row["alpha"], row["beta"], row["n"]) for row in payload["lessons"]}
    assert numbers == {"a.md": (2.0, 1.0, 1), "b.md": (1.0, 2.0, 1), "c.md": (1.0, 1.0, 0), "d.md": (1.0, 1.0, 0)}
    assert payload["sessions"] == 2
    code, out, err = run(capsys, "status", "-w", str(ws))  # the table form: one warning line on stderr
    assert code == 0 and [line for line in err.splitlines() if "line 2" in line] == [f"warning: {TOO_MANY}"], err
    code, out, _ = run(capsys, "lint", "-w", str(ws))
    assert "line 2: session event naming 4 lessons (at most 3)" in out


@pytest.mark.parametrize(
    "argv",
    [
        "select --context ctx.txt --dry-run --seed 7 --session-id s --policy joint --k 2".split(),
        "loo --no-write".split(),
    ],
)
def test_the_joint_fit_reads_the_log_without_the_crowded_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    """select's joint policy and loo on the log with the crowded event give what they give on the log without it."""
    results = []
    for name, log in (("with", _log(CROWDED)), ("without", _log())):
        ws = make_ws(tmp_path, LESSONS, events=log, name=name)
        (ws / "ctx.txt").write_text("alpha beta gamma delta\n", encoding="utf-8")
        given = [str(ws / "ctx.txt") if arg == "ctx.txt" else arg for arg in argv[1:]]
        code, out, err = run(capsys, argv[0], "-w", str(ws), *given, "--json")
        assert code == 0, err
        payload = json.loads(out)
        results.append((payload.pop("warnings", []), payload))
    (warned, with_it), (quiet, without_it) = results
    assert with_it == without_it
    assert quiet == [] and warned in ([], [TOO_MANY])  # (select --json lists the log's problems only with a note)


def test_a_crowded_event_appended_after_a_read_is_skipped_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The incremental read (the log grew since the last command read it) skips it as a fresh read does."""
    ws = make_ws(tmp_path, LESSONS, events=_log()[:1])
    assert run(capsys, "status", "-w", str(ws))[0] == 0
    with (ws / LOG_REL).open("a", encoding="utf-8") as log:
        log.writelines(json.dumps(event) + "\n" for event in _log(CROWDED)[1:])
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert payload["warnings"] == [TOO_MANY] and payload["sessions"] == 2
    # as above: s1 -> a (2, 1), s3 -> b (1, 2)
    numbers = {row["path"]: (row["alpha"], row["beta"]) for row in payload["lessons"]}
    assert numbers == {"a.md": (2.0, 1.0), "b.md": (1.0, 2.0), "c.md": (1.0, 1.0), "d.md": (1.0, 1.0)}
