"""gptme's bandit updating the workspace's own bandit-state.json with lessons past the log's cap on distinct lessons
(core/log/arm_names.py MAX_LOG_LESSONS, set to 3 here): the increments of the lessons the log has are logged, the
lessons past the cap are left out of the file rewritten from the log, with one warning naming the first (and how
many more); `lint` says so before. The own file is keyed as gptme keys it (`lessons/tools/a.md`), the log at the cap
from one prior event (the file imported), so no session is written. Numbers worked out by hand in the comments."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.arm_count import ARM_KEYS
from lesson_credit.core.log import arm_names
from tests.cli.cli_fixtures import log_bytes, make_ws, run
from tests.support.engine_helpers import STATE_REL

# café is a lesson the log holds (in NFC, é one code point) and the library does not (any more): gptme's key for it
# in NFD (e and a combining accent, as a Mac's file system spells it) is read as the log's lesson, not a new one
CAFE = unicodedata.normalize("NFC", "tools/café.md")
CAFE_NFD = unicodedata.normalize("NFD", CAFE)
assert CAFE != CAFE_NFD
LESSONS = {"tools/a.md": ["alpha"], "tools/b.md": ["beta"], "tools/d.md": ["delta"], "tools/e.md": ["epsilon"]}
OLD = "2026-12-01T08:00:00.000000+00:00"  # gptme's bandit's stamps (isoformat, +00:00)
NEW = "2026-12-06T08:19:27.925928+00:00"


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arm_names, "MAX_LOG_LESSONS", 3)


def arm(key: str, alpha: float, beta: float, n: int, rewards: int, stamp: str = OLD) -> dict[str, Any]:
    return {
        "arm_id": key,
        "alpha": alpha,
        "beta": beta,
        "total_selections": n,
        "total_rewards": rewards,
        "last_updated": stamp,
    }


def at_the_cap(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A workspace whose log names 3 lessons (the cap) from the import of its own file, keyed as gptme keys:
    a (3, 1) n 2, b (1, 2) n 1, café (2, 1) n 1, 3 sessions."""
    ws = make_ws(tmp_path, LESSONS, events=[])
    own = ws / STATE_REL
    own.parent.mkdir(parents=True, exist_ok=True)
    keys = {"a": "lessons/tools/a.md", "b": "lessons/tools/b.md", "c": "lessons/" + CAFE}
    arms = {keys["a"]: arm(keys["a"], 3.0, 1.0, 2, 2), keys["b"]: arm(keys["b"], 1.0, 2.0, 1, 0)}
    arms[keys["c"]] = arm(keys["c"], 2.0, 1.0, 1, 1)
    own.write_text(json.dumps({"arms": arms, "total_sessions": 3}), encoding="utf-8")
    code, out, err = run(capsys, "import-gptme", "-w", str(ws), str(own))
    assert (code, err) == (0, ""), err
    assert set(json.loads(own.read_text())["arms"]) == set(keys.values())  # rewritten, keyed as gptme keys
    return ws


def gptme_session(path: Path, updates: dict[str, float]) -> None:
    """One session of gptme's bandit on the file at `path`: each key's arm (made at Beta(1, 1) when the file has
    none by that key) updated at its reward, total_sessions + 1, our stamp gone (its save keeps its own keys)."""
    state = json.loads(path.read_text())
    for key, reward in updates.items():
        entry = state["arms"].setdefault(key, arm(key, 1.0, 1.0, 0, 0, ""))
        entry.update(alpha=entry["alpha"] + reward, beta=entry["beta"] + 1 - reward, last_updated=NEW)
        entry.update(total_selections=entry["total_selections"] + 1, total_rewards=entry["total_rewards"] + reward)
    state["total_sessions"] += 1
    state.pop("lesson_credit_written", None)
    path.write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")


def numbers(payload: dict[str, Any]) -> dict[str, tuple[float, float, int]]:
    return {row["path"]: (row["alpha"], row["beta"], row["n"]) for row in payload["lessons"]}


def test_gptmes_update_past_the_cap_logs_the_lessons_the_log_has_and_drops_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    # a at reward 1; café under the file system's NFD spelling (gptme does not find the NFC key: Beta(1, 1) + 1);
    # d (reward 1) and e (reward 0) are new lessons, past the log's 3
    gptme_session(
        own, {"lessons/tools/a.md": 1, "lessons/" + CAFE_NFD: 1, "lessons/tools/d.md": 1, "lessons/tools/e.md": 0}
    )
    code, out, _ = run(capsys, "lint", "-w", str(ws))
    said = [line for line in out.splitlines() if "bandit-state.json was updated by another tool" in line]
    assert len(said) == 1, out  # before: "the next write or `status` logs its increments to 4 arms", never done
    assert "logs its increments to 2 arms" in said[0], said
    assert said[0].endswith(
        "logs its increments to 2 arms as an increments event and leaves out of the file tools/d.md (and 1 more "
        "lesson) past the 3 lessons a log names"
    ), said
    before = log_bytes(ws)
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    payload = json.loads(out)
    assert [w for w in payload["warnings"] if "tools/d.md" in w] == [
        f"{own} was updated by another tool (gptme's bandit) since lesson-credit wrote it: its increments to 2 arms "
        "(up to 1 selection each) are logged as an increments event from gptme-bandit, and the file follows the log "
        "again; its update of tools/d.md (and 1 more lesson) past the 3 lessons a log names is not logged, and is "
        "left out of the file"
    ], payload["warnings"]
    assert log_bytes(ws) != before  # the increments event (before: nothing appended, the file kept for good)
    # by hand: a (3, 1) n 2 + (1, 0) n 1 = (4, 1) n 3; café (2, 1) n 1 + (1, 0) n 1 = (3, 1) n 2; b as it was;
    # d and e never counted (the library's lessons at Beta(1, 1))
    assert numbers(payload) == {
        "tools/a.md": (4.0, 1.0, 3),
        "tools/b.md": (1.0, 2.0, 1),
        CAFE: (3.0, 1.0, 2),
        "tools/d.md": (1.0, 1.0, 0),
        "tools/e.md": (1.0, 1.0, 0),
    }
    state = json.loads(own.read_text())
    assert state["total_sessions"] == 4  # 3 imported + 1 gptme counted
    arms = state["arms"]
    assert "lessons/tools/d.md" not in arms and "lessons/tools/e.md" not in arms, sorted(arms)
    assert (arms["lessons/tools/a.md"]["alpha"], arms["lessons/tools/a.md"]["beta"]) == (4.0, 1.0)
    assert run(capsys, "lint", "-w", str(ws))[1].count("bandit-state.json") == 0  # the file follows the log again
    after = log_bytes(ws)
    assert run(capsys, "status", "-w", str(ws), "--json")[0] == 0 and log_bytes(ws) == after  # nothing again


def test_an_update_of_only_lessons_past_the_cap_logs_its_session_and_drops_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    gptme_session(own, {"lessons/tools/d.md": 1})
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    payload = json.loads(out)
    assert [
        w for w in payload["warnings"] if "update of tools/d.md past the 3 lessons a log names is not logged" in w
    ], payload["warnings"]
    assert numbers(payload)["tools/a.md"] == (3.0, 1.0, 2)
    assert "lessons/tools/d.md" not in json.loads(own.read_text())["arms"]
    assert json.loads(own.read_text())["total_sessions"] == 4  # 3 imported + 1 gptme counted, logged (no arm moved)


def test_import_of_another_file_past_the_cap_names_the_file_and_the_first_lesson_past_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ws = at_the_cap(tmp_path, capsys)
    other = tmp_path / "other.json"
    keys = ["lessons/tools/a.md", "lessons/tools/e.md", "lessons/tools/d.md"]  # e first in the file, then d
    other.write_text(json.dumps({"arms": {key: arm(key, 2.0, 1.0, 1, 1) for key in keys}, "total_sessions": 1}))
    before = log_bytes(ws)
    code, out, err = run(capsys, "import-gptme", "-w", str(ws), str(other))
    assert (code, out) == (1, "") and log_bytes(ws) == before
    assert err == (
        f"lesson-credit: {other} names tools/e.md (and 1 more lesson) past the 3 lessons a log names; nothing written\n"
    ), err  # before: neither the file nor a lesson named


def logged_events(ws: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (log_bytes(ws) or b"").decode().splitlines() if line.strip()]


def test_the_seen_of_an_update_past_the_cap_holds_only_the_keys_logged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The increments event's `seen` is the base of gptme's next save of the file (docs/format.md §5.5): a key whose
    lesson is past the cap is not logged, so it has no base to keep (before, every key gptme changed was there: a
    file of 1,500,000 new arms made a 90 MB line every command reads again)."""
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    gptme_session(own, {"lessons/tools/a.md": 1, "lessons/tools/d.md": 1, "lessons/tools/e.md": 0})
    created = json.loads(own.read_text())["created"]
    code, _, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    event = logged_events(ws)[-1]
    assert event["increments"] is True
    # a: (4, 1) n 3 less (3, 1) n 2; d and e past the cap
    assert event["arms"] == {"tools/a.md": {"alpha": 1.0, "beta": 0.0, "n": 1, "rewards": 1}}
    # a as the file has it: (3, 1) n 2 rewards 2 + one full reward, with gptme's stamp of it (what a copy's import is
    # told by); d and e (past the cap) not there
    stamp = json.loads(own.read_text())["arms"]["lessons/tools/a.md"]["last_updated"]
    assert event["seen"] == {
        "path": str(own),
        "created": created,
        "arms": {"lessons/tools/a.md": {"alpha": 4.0, "beta": 1.0, "n": 3, "rewards": 3, "stamp": stamp}},
        "sessions": 4,
    }


def test_an_update_of_more_new_arms_than_a_log_names_is_left_as_it_is_and_nothing_logged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gptme's bandit never adds more arms in an update than a log can name lessons: such a file is refused before
    any work per arm (before, a file of 1,500,000 new arms took 243 s and 2.86 GB, logging 100,000 of them)."""
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    # the log's arms: a, b and café (3, all written; the library's d and e have none); 4 new keys: more than the cap's 3
    gptme_session(own, {"lessons/tools/a.md": 1, **{f"x/{i}.md": 1 for i in range(4)}})
    file_before, log_before = own.read_bytes(), log_bytes(ws)
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    said = [w for w in json.loads(out)["warnings"] if "bandit-state.json" in w]
    assert said == [  # (7 arms: counted as far as 3 + 3, from the bytes, never decoded)
        f"{own} has over 6 arms ({ARM_KEYS}; counted no further): over 3 more than the 3 of the log, more than "
        "the 3 lessons a log names, so no update of gptme's bandit; left as it is, nothing logged (deleting it has "
        "the next write write it from the log, without what the log does not hold: gptme's contextual arms and other "
        "keys)"
    ], said
    assert (own.read_bytes(), log_bytes(ws)) == (file_before, log_before)
    code, out, err = run(capsys, "lint", "-w", str(ws))
    assert out.count("over 3 more than the 3 of the log") == 1, out
    # 3 new keys (not more than the cap): taken up as before (a's increment logged, the new lessons past the cap)
    gptme_session_fresh = json.loads(file_before)
    for i in range(3, 4):
        del gptme_session_fresh["arms"][f"x/{i}.md"]
    own.write_text(json.dumps(gptme_session_fresh), encoding="utf-8")
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0 and log_bytes(ws) != log_before, err


def test_a_command_compares_each_arm_of_gptmes_update_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`status` on a file gptme's bandit updated: each arm compared with the file it grew from once (before: 5 times
    over, checked twice, then logged and its `seen` taken, about 150 µs per arm each time)."""
    from lesson_credit.core.bandit import increments as foreign

    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    gptme_session(own, {"lessons/tools/a.md": 1, "lessons/tools/d.md": 1})
    arms_in_file = len(json.loads(own.read_text())["arms"])  # a, b, café, d: 4
    compared: list[int] = []
    real = foreign.increments

    def counting(state: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        compared.append(len(state["arms"]))
        return real(state, *args, **kwargs)

    monkeypatch.setattr(foreign, "increments", counting)
    code, _, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    assert logged_events(ws)[-1]["arms"] == {"tools/a.md": {"alpha": 1.0, "beta": 0.0, "n": 1, "rewards": 1}}
    assert compared == [arms_in_file], compared


def test_a_select_logging_an_update_past_the_cap_says_the_file_is_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A select logs gptme's update but does not rewrite the file: the lesson past the cap is still there, and the
    next write or `status` leaves it out (before, the select said the file followed the log again without it)."""
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    gptme_session(own, {"lessons/tools/a.md": 1, "lessons/tools/d.md": 1})
    (ws / "context.txt").write_text("alpha beta", encoding="utf-8")
    argv = ["select", "-w", str(ws), "--context", str(ws / "context.txt"), "--k", "1", "--seed", "3", "--json"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert [w for w in json.loads(out)["warnings"] if "tools/d.md" in w] == [
        f"{own} was updated by another tool (gptme's bandit) since lesson-credit wrote it: its increments to 1 arm "
        "(up to 1 selection each) are logged as an increments event from gptme-bandit, and the file is left as it is "
        "until a write or `status` rewrites it from the log; its update of tools/d.md past the 3 lessons a log names "
        "is not logged, and a write or `status` leaves it out of the file"
    ]
    assert "lessons/tools/d.md" in json.loads(own.read_text())["arms"]  # left as it is
    assert run(capsys, "status", "-w", str(ws), "--json")[0] == 0
    assert "lessons/tools/d.md" not in json.loads(own.read_text())["arms"]
