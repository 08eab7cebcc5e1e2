"""The most distinct lessons one log may name: an event that would make more is a bad line, reported with its
number and skipped by every reader (a fresh read, an incremental one, the two-core read's halves joined), as a
session naming too many lessons is; `record` and `import-gptme` refuse such an event with one line and write
nothing (an import names the file and the first lesson past them). The cap is set to 3 here so that each case
stays small (the real cap, 100,000, keeps `status` at seconds and hundreds of MB: a million distinct lessons in a
43 MB log took 28 s and 3 GB)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.log import arm_names
from lesson_credit.core.log.index import LogIndex
from lesson_credit.core.log.store import parse_chunk
from tests.cli.cli_fixtures import LOG_REL, log_bytes, make_ws, run, session
from tests.support.engine_helpers import STATE_REL

CAP = 3
LESSONS = {"a.md": ["alpha"], "b.md": ["beta"], "c.md": ["gamma"], "d.md": ["delta"]}
# s1 names a and b, s2 c: three lessons. s3 names a and d: d is a fourth (skipped, a's share with it); s4 a again.
S1 = session("s1", 1.0, {"a.md": 1.0, "b.md": 1.0})
S2 = session("s2", 0.0, {"c.md": 1.0})
S3 = session("s3", 0.0, {"a.md": 1.0, "d.md": 1.0})
S4 = session("s4", 1.0, {"a.md": 1.0})
BEYOND = "1 new lesson beyond the 3 the log has (a log names at most 3 lessons)"
PAST = f"sessions.jsonl line 3: session 's3' names {BEYOND}; ignored"
# every salience 1 (weight 1): a (1 + 1 + 1, 1) from s1 and s4, n 2; b (2, 1) n 1 from s1; c (1, 2) n 1 from s2;
# d never counted. Were s3 counted, a would be (3, 2) n 3 and d (1, 2) n 1.
EXPECTED = {"a.md": (3.0, 1.0, 2), "b.md": (2.0, 1.0, 1), "c.md": (1.0, 2.0, 1), "d.md": (1.0, 1.0, 0)}


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arm_names, "MAX_LOG_LESSONS", CAP)


def numbers(payload: dict[str, Any]) -> dict[str, tuple[float, float, int]]:
    return {row["path"]: (row["alpha"], row["beta"], row["n"]) for row in payload["lessons"]}


def status(capsys: pytest.CaptureFixture[str], ws: Path) -> dict[str, Any]:
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    payload: dict[str, Any] = json.loads(out)
    return payload


def test_a_session_past_the_log_s_lessons_is_reported_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path, LESSONS, events=[S1, S2, S3, S4])
    payload = status(capsys, ws)
    assert payload["warnings"] == [PAST]
    assert numbers(payload) == EXPECTED and payload["sessions"] == 3
    assert status(capsys, ws) == payload  # read again from the parsed-log cache: the same
    code, out, _ = run(capsys, "lint", "-w", str(ws))
    assert "line 3: session 's3' names 1 new lesson" in out


def test_a_session_past_them_appended_after_a_read_is_skipped_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The incremental read (the log grew since the last command read it) skips it as a fresh read does."""
    ws = make_ws(tmp_path, LESSONS, events=[S1, S2])
    status(capsys, ws)
    with (ws / LOG_REL).open("a", encoding="utf-8") as log:
        log.writelines(json.dumps(event) + "\n" for event in (S3, S4))
    payload = status(capsys, ws)
    assert payload["warnings"] == [PAST] and numbers(payload) == EXPECTED


def test_record_refuses_a_session_past_them_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path, LESSONS, events=[S1, S2], journals={"j.md": "alpha delta\n"})
    before = log_bytes(ws)
    argv = ["record", "-w", str(ws), "--session-id", "s9", "--journal", "j.md", "--reward", "0.5"]
    code, out, err = run(capsys, *argv, "--lessons", "a.md", "d.md")
    message = "1 new lesson beyond the 3 the log has (a log names at most 3 lessons); nothing written"
    assert (code, out, err) == (1, "", f"lesson-credit: {message}\n")
    assert log_bytes(ws) == before
    code, _, err = run(capsys, *argv, "--lessons", "a.md", "c.md")  # lessons the log names: logged
    assert code == 0, err


def test_import_gptme_refuses_arms_past_them_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = make_ws(tmp_path, LESSONS, events=[S1, S2])
    state = {"arms": {"d.md": {"alpha": 2.0, "beta": 1.0, "total_selections": 1}}, "total_sessions": 1}
    (tmp_path / "state.json").write_text(json.dumps(state), encoding="utf-8")
    before = log_bytes(ws)
    code, out, err = run(capsys, "import-gptme", "-w", str(ws), str(tmp_path / "state.json"))
    said = f"{tmp_path / 'state.json'} names d.md past the 3 lessons a log names; nothing written"
    assert (code, out, err) == (1, "", f"lesson-credit: {said}\n")
    assert log_bytes(ws) == before


def test_a_prior_event_past_them_is_reported_and_skipped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prior = {"type": "prior", "timestamp": "2026-11-01T00:00:00Z", "arms": {"d.md": {"alpha": 5.0, "beta": 1.0}}}
    ws = make_ws(tmp_path, LESSONS, events=[S1, S2, prior])
    payload = status(capsys, ws)
    assert payload["warnings"] == [f"sessions.jsonl line 3: prior event naming {BEYOND}"]
    assert numbers(payload)["d.md"] == (1.0, 1.0, 0)  # not Beta(5, 1)


def test_halves_read_apart_are_not_joined_past_them() -> None:
    """The two-core read indexes the log's second half apart; joined, its lessons and the first half's would be
    four: `add_part` refuses (the second half is then read on, in order, and s3 skipped)."""
    first, second = LogIndex(), LogIndex()
    for index, events in ((first, (S1, S2)), (second, (S3, S4))):
        data = "".join(json.dumps(event) + "\n" for event in events).encode()
        for line, event in parse_chunk(data, 0, 1, at_eof=True).events:
            index.add(line, event)
    assert second.problems == [] and len(second.arm_ids) == 2  # alone, the half names a and d: no problem
    part = second.part()
    assert part is not None
    assert not first.add_part(part)
    assert first.n_sessions == 2 and first.arm_ids == ["a.md", "b.md", "c.md"]


def _gptme_adds_d(path: Path) -> None:
    """gptme's bandit's session on the state file at `path`: a at reward 1 (alpha + 1, n + 1) and d, an arm it
    makes from Beta(1, 1), at reward 1: (2, 1) n 1."""
    state = json.loads(path.read_text())
    stamp = "2026-12-06T08:19:27.925928+00:00"
    arm = state["arms"]["a.md"]
    arm.update(alpha=arm["alpha"] + 1, total_selections=arm["total_selections"] + 1, last_updated=stamp)
    state["arms"]["d.md"] = {
        "arm_id": "d.md",
        "alpha": 2.0,
        "beta": 1.0,
        "total_selections": 1,
        "total_rewards": 1,
        "last_updated": stamp,
    }
    state["total_sessions"] += 1
    state.pop("lesson_credit_written", None)
    path.write_text(json.dumps(state, indent=2) + "\n")


def test_gptmes_update_of_the_own_file_past_them_logs_the_rest_and_leaves_them_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An increments event naming d would be a bad line every reader skips: a's increment is logged, d is left out
    of the file rewritten from the log, with one warning naming it."""
    ws = make_ws(tmp_path, LESSONS, events=[S1, S2])
    own = ws / STATE_REL
    assert run(capsys, "export-gptme", "-w", str(ws), str(own))[0] == 0  # the own file, ours (a, b, c)
    _gptme_adds_d(own)
    before = log_bytes(ws)
    payload = status(capsys, ws)
    assert log_bytes(ws) != before  # the increments event, of a alone (before: the file kept for good, a not logged)
    assert [w for w in payload["warnings"] if "its update of d.md past the 3 lessons a log names is not logged" in w]
    # by hand: a (2, 1) n 1 from s1 + gptme's (1, 0) n 1 = (3, 1) n 2; d never counted
    assert numbers(payload) == {"a.md": (3.0, 1.0, 2), "b.md": (2.0, 1.0, 1), "c.md": (1.0, 2.0, 1), "d.md": (1, 1, 0)}
    assert sorted(json.loads(own.read_text())["arms"]) == ["a.md", "b.md", "c.md"]
    after = log_bytes(ws)
    assert status(capsys, ws)["warnings"] == [] and log_bytes(ws) == after  # the file follows the log: nothing more


def test_import_of_an_exported_file_past_them_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = make_ws(tmp_path, LESSONS, events=[S1, S2])
    exported = tmp_path / "gptme" / "bandit-state.json"
    exported.parent.mkdir()
    assert run(capsys, "export-gptme", "-w", str(ws), str(exported))[0] == 0
    _gptme_adds_d(exported)
    before = log_bytes(ws)
    code, out, err = run(capsys, "import-gptme", "-w", str(ws), str(exported))
    said = f"{exported} names d.md past the 3 lessons a log names; nothing written"
    assert (code, out, err) == (1, "", f"lesson-credit: {said}\n")
    assert log_bytes(ws) == before  # before: exit 0, 'logged as increments', a line every reader skips
