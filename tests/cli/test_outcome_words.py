"""gptme's grading words where people type them, and in the tables.

`grade S productive` and `record --reward noop` take the words of the workspace's [outcomes]
mapping (gptme-sessions': productive 1, noop / failed / violated_policy 0, plus config.toml's own);
sessions imported from gptme (a string outcome, no base_reward) show their word, not 1 or 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, CONFIG_REL, LOG_REL, make_workspace, session

GIT = "tools/git.md"


def published(session_id: str, outcome: str) -> dict[str, object]:
    """A gptme-sessions record: no type, no base_reward, a string outcome."""
    return {"session_id": session_id, "outcome": outcome, "lessons": [{"path": GIT, "salience": 1.0}]}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    events = [
        session("s1", None, {GIT: 1.0}),
        published("g-noop", "noop"),
        published("g-failed", "failed"),
        published("g-violated", "violated_policy"),
        published("g-productive", "productive"),
    ]
    return make_workspace(tmp_path, BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})


def last_event(root: Path) -> dict[str, object]:
    event: dict[str, object] = json.loads((root / LOG_REL).read_text().splitlines()[-1])
    return event


@pytest.mark.parametrize(("word", "reward"), [("productive", 1.0), ("noop", 0.0), ("violated_policy", 0.0)])
def test_grade_takes_gptmes_words(ws: Path, capsys: pytest.CaptureFixture[str], word: str, reward: float) -> None:
    code, out, err = run(capsys, "grade", "s1", word, "--workspace", str(ws))
    assert code == 0, err
    event = last_event(ws)
    assert (event["type"], event["base_reward"], event["outcome"]) == ("grade", reward, word)
    assert word in out


def test_grade_follows_the_configured_mapping(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (ws / CONFIG_REL).write_text("[outcomes]\nnoop = 0.25\npartial = 0.5\n")
    for word, reward in (("noop", 0.25), ("partial", 0.5)):
        code, _, err = run(capsys, "grade", "s1", word, "--workspace", str(ws))
        assert code == 0, err
        assert last_event(ws)["base_reward"] == reward


def test_an_unknown_word_is_one_line_naming_the_words(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (ws / LOG_REL).read_bytes()
    for argv in (["grade", "s1", "meh"], ["record", "--session-id", "s9", "--journal", str(ws / "j.txt"),
                                          "--lessons", GIT, "--reward", "meh"]):  # fmt: skip
        code, _, err = run(capsys, *argv, "--workspace", str(ws))
        assert code == 1
        (line,) = err.strip().splitlines()
        assert "productive" in line and "noop" in line
    assert (ws / LOG_REL).read_bytes() == before


def test_record_takes_a_word_and_logs_it_as_gptme_does(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["record", "--session-id", "s2", "--journal", str(ws / "j.txt"), "--lessons", GIT, "--reward", "noop"]
    code, _, err = run(capsys, *argv, "--workspace", str(ws))
    assert code == 0, err
    event = last_event(ws)
    assert event["outcome"] == "noop" and "base_reward" not in event  # as a gptme record: the mapping decides
    code, out, _ = run(capsys, "sessions", "--workspace", str(ws), "--json")
    row = {s["session_id"]: s for s in json.loads(out)["sessions"]}["s2"]
    assert (row["base_reward"], row["outcome"]) == (0.0, "noop")


def test_record_unknown_leaves_the_session_pending_as_gptme_does(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["record", "--session-id", "s2", "--journal", str(ws / "j.txt"), "--lessons", GIT, "--reward", "unknown"]
    code, _, err = run(capsys, *argv, "--workspace", str(ws))
    assert code == 0, err
    code, out, _ = run(capsys, "sessions", "--workspace", str(ws), "--json", "--pending")
    assert "s2" in {s["session_id"] for s in json.loads(out)["sessions"]}


def test_tables_show_the_word_of_imported_sessions(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "sessions", "--workspace", str(ws))
    assert code == 0, err
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("g-")}
    for sid, word in (("g-noop", "noop"), ("g-failed", "failed"), ("g-violated", "violated_policy")):
        assert word in lines[sid], lines[sid]
    code, out, _ = run(capsys, "sessions", "--workspace", str(ws), "--json")
    words = {s["session_id"]: s["outcome"] for s in json.loads(out)["sessions"]}
    assert words == {"s1": None, "g-noop": "noop", "g-failed": "failed", "g-violated": "violated_policy",
                     "g-productive": "productive"}  # fmt: skip
    # regraded by hand: the number in force is no longer the word's
    run(capsys, "grade", "g-noop", "0.7", "--workspace", str(ws))
    code, out, _ = run(capsys, "sessions", "--workspace", str(ws), "--json")
    assert {s["session_id"]: s["outcome"] for s in json.loads(out)["sessions"]}["g-noop"] is None


def test_the_word_is_shown_only_when_the_reward_in_force_is_the_words(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`failed (0.8)`: a gptme-sessions record's judge score 0.8 was in force (the judge
    outranks the outcome), the word failed (0) was still shown. Under the priority human, judge, outcome,
    heuristic: a record's judge score or a judge grade is in force over the word (no word shown); a grade
    of a source the priority puts after the outcome is not (the word stays, as it was hidden before)."""
    records = ws / "state/sessions/session-records.jsonl"
    records.parent.mkdir(parents=True)
    records.write_text(json.dumps({"session_id": "g-failed", "llm_judge_score": 0.8}) + "\n")
    (ws / CONFIG_REL).write_text('[rewards]\npriority = ["human", "judge", "outcome", "heuristic"]\n')
    for argv in (["g-violated", "0.64", "--grader", "judge"], ["g-productive", "0.3", "--grader", "heuristic"]):
        code, _, err = run(capsys, "grade", *argv, "--workspace", str(ws))
        assert code == 0, err
    code, out, _ = run(capsys, "sessions", "--workspace", str(ws), "--json")
    shown = {s["session_id"]: (s["base_reward"], s["outcome"]) for s in json.loads(out)["sessions"]}
    assert shown == {
        "s1": (None, None),
        "g-noop": (0.0, "noop"),  # nothing else scores it: the word's 0
        "g-failed": (0.8, None),  # the record's judge 0.8
        "g-violated": (0.64, None),  # the judge's grade
        "g-productive": (1.0, "productive"),  # the heuristic 0.3 comes after the outcome
    }
    code, out, _ = run(capsys, "sessions", "--workspace", str(ws))
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("g-")}
    assert lines["g-failed"].split()[3:5] == ["0.800", "record:judge"]  # not `failed (0.800)`
    assert "productive (1.000)" in lines["g-productive"]
