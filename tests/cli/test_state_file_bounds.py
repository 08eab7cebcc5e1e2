"""What a planted bandit-state.json may cost a command before it is refused unread (core/workspace/state_file.py).

- Arms beyond the log's: an update may bring the library's lessons and NEW_ARMS_SLACK more (set to 2 here, the library
  has 4: 6). Before, the bound was the lessons a log names (100,000): a file of 99,000 junk arms beside the demo's was
  decoded and its arms logged, 7.9 s and 456 MB that command and 3.9 s and 392 MB every command after (0.5 s, 71 MB
  without it).
- Bytes: the keys a read decodes (its arms) take at most STATE_BYTES_FLOOR and STATE_BYTES_PER_ARM an arm of the
  log's and that room, the file CONTEXT_BYTES_PER_LESSON more a lesson (gptme's contextual arms, kept as bytes), and
  it has at most MAX_TOP_KEYS top-level keys; before, a file of a few arms and millions of other keys was decoded by
  every command, up to 256 MB, and then its bytes were bounded as the keys read's (a real file's contexts refused).
- A key of the arms object given twice is counted twice, and the refusal says so (a decode keeps one: the number is
  of keys, not of the arms the file would have).
Every refusal is one line, nothing logged, the file left as it is, never decoded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from lesson_credit.core.bandit import interop, state_reading
from lesson_credit.core.bandit.arm_count import ARM_KEYS
from lesson_credit.core.log import arm_names
from lesson_credit.core.workspace import Workspace, state_file
from tests.cli.cli_fixtures import log_bytes, run
from tests.cli.test_log_lesson_cap_own_file import arm, at_the_cap, gptme_session
from tests.support.engine_helpers import STATE_REL

LEFT = (  # (before: "delete it, and the next write writes it from the log", silent on what that loses)
    "so no update of gptme's bandit; left as it is, nothing logged (deleting it has the next write write it from the "
    "log, without what the log does not hold: gptme's contextual arms and other keys)"
)


RAW = (msgspec.Raw, dict[str, msgspec.Raw])  # (a skip over Raw makes no objects: a file kept apart by its keys)


@pytest.fixture(autouse=True)
def bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arm_names, "MAX_LOG_LESSONS", 100)
    monkeypatch.setattr(state_file, "NEW_ARMS_SLACK", 2)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the state files msgspec decoded into objects (a skip over Raw makes none)."""
    seen: list[int] = []
    real = msgspec.json.decode

    def spying(data: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(data, bytes) and b'"arms"' in data and kwargs.get("type") not in RAW:
            seen.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(msgspec.json, "decode", spying)
    return seen


def refused(ws: Path, capsys: pytest.CaptureFixture[str], decoded: list[int]) -> str:
    """The one line `status` says of the own file, which it leaves as it is, logging nothing, never decoding it."""
    own = ws / STATE_REL
    file_before, log_before = own.read_bytes(), log_bytes(ws)
    decoded.clear()
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    said = [w for w in json.loads(out)["warnings"] if "bandit-state.json" in w]
    assert len(said) == 1, said
    assert (own.read_bytes(), log_bytes(ws), decoded) == (file_before, log_before, [])
    return str(said[0]).replace(str(own), "FILE")


def test_more_new_arms_than_the_library_and_the_slack_are_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int]
) -> None:
    ws = at_the_cap(tmp_path, capsys)  # the log's 3 arms, a library of 4 lessons
    gptme_session(ws / STATE_REL, {"lessons/tools/a.md": 1, **{f"x/{i}.md": 1 for i in range(7)}})  # 10 arms
    assert refused(ws, capsys, decoded) == (  # (before: 7 new arms within 100, decoded and logged)
        f"FILE has over 9 arms ({ARM_KEYS}; counted no further): over 6 more than the 3 of the log, more than the "
        f"library's 4 lessons plus 2, {LEFT}"
    )


def test_as_many_new_arms_as_the_room_are_taken_up(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ws = at_the_cap(tmp_path, capsys)
    gptme_session(ws / STATE_REL, {"lessons/tools/a.md": 1, **{f"x/{i}.md": 1 for i in range(6)}})  # 3 + 6 arms
    log_before = log_bytes(ws) or b""
    code, out, err = run(capsys, "status", "-w", str(ws))
    assert code == 0, err
    added = (log_bytes(ws) or b"")[len(log_before) :].decode()
    assert '"x/5.md"' in added and "increments" in added, added  # logged, as before


def small_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    """The keys read take at most 10,000 bytes and 1,000 an arm; the file 2,000 more a lesson; 1,000 top-level keys."""
    monkeypatch.setattr(state_file, "STATE_BYTES_FLOOR", 10_000)
    monkeypatch.setattr(state_file, "STATE_BYTES_PER_ARM", 1_000)
    monkeypatch.setattr(state_file, "CONTEXT_BYTES_PER_LESSON", 2_000)
    monkeypatch.setattr(interop, "MAX_TOP_KEYS", 1_000)
    monkeypatch.setattr(state_reading, "MAX_TOP_KEYS", 1_000)
    monkeypatch.setattr(state_reading, "SPLIT_FREE_BYTES", 0)  # (the top-level keys counted from the bytes)


def planted(ws: Path, **keys: Any) -> int:
    """The own file with `keys` beside what it holds (our stamp gone); its size."""
    own = ws / STATE_REL
    state = json.loads(own.read_text())
    state.pop("lesson_credit_written")
    own.write_text(json.dumps({**state, **keys}))
    return own.stat().st_size


def test_a_file_of_few_arms_and_many_other_keys_is_refused_by_their_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each top-level key is kept (as its bytes): 2,000,000 in 25 MB took 1.2 s and 310 MB; before, the file's
    bytes were bounded instead (its keys decoded by every command)."""
    small_bounds(monkeypatch)
    ws = at_the_cap(tmp_path, capsys)
    # 3 arms and 1,001 keys of no use: past 10,000 + 1,000 x (3 + 6) bytes, within 2,000 x (4 + 3) more of the file
    size = planted(ws, **{f"key-of-no-use-{i}": 0 for i in range(1_001)})
    assert 10_000 + 1_000 * 9 < size < 10_000 + 1_000 * 9 + 2_000 * 7
    assert refused(ws, capsys, decoded) == (
        f"FILE has over 1,000 top-level keys (counted no further; gptme's bandit writes 5), {LEFT}"
    )


def test_keys_of_no_use_are_kept_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """1,000 keys beside gptme's update are read, never decoded, and written back as the file had them (the numbers'
    and strings' text as it was) when the update is logged and the file rewritten."""
    small_bounds(monkeypatch)
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    gptme_session(own, {"lessons/tools/a.md": 1})
    others = ", ".join(f'"k{i}": 0' for i in range(995)) + ', "k995": [1.50, "caf\\u00e9", {"b": 1, "a": 2e0}]'
    own.write_bytes(own.read_bytes().rstrip()[:-1] + b", " + others.encode() + b"}\n")  # (5 keys and 996)
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    said = [w for w in json.loads(out)["warnings"] if "bandit-state.json" in w]
    assert len(said) == 1 and "its increments to 1 arm" in said[0], said
    raw = own.read_bytes()
    assert b'"k995": [\n    1.50,\n    "caf\\u00e9",\n    {\n      "b": 1,\n      "a": 2e0\n    }\n  ]' in raw
    assert json.loads(raw)["k994"] == 0 and "lesson_credit_written" in json.loads(raw)
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")  # (as we wrote it: its stamp holds)
    assert (code, own.read_bytes()) == (0, raw), err
    assert [w for w in json.loads(out)["warnings"] if "bandit-state.json" in w] == []


def test_a_file_whose_arms_take_too_many_bytes_is_refused_by_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The keys read are decoded: an arm of 10,000 values (30,000 bytes) is more than the 19,000 bytes of them."""
    small_bounds(monkeypatch)
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    state = json.loads(own.read_text())
    state["arms"]["lessons/tools/a.md"]["history"] = [0] * 10_000
    size = planted(ws, arms=state["arms"])
    written = json.loads((ws / STATE_REL).read_text())
    read = ("arms", "total_sessions", "created", "last_updated", "lesson_credit_holds", "lesson_credit_records")
    assert set(written) <= set(read)
    used = sum(len(json.dumps(value)) for value in written.values())  # (the values' bytes, as written)
    assert used > 30_000 and size < 33_000  # (within the bytes of the file: 10,000 + 1,000 x 9 + 2,000 x 7)
    assert refused(ws, capsys, decoded) == (
        f"FILE takes {used:,} bytes in its arms and the other keys "
        f"lesson-credit reads, more than the 19,000 a state file of the 3 arms of the log and the library's 4 lessons "
        f"plus 2 takes, {LEFT}"
    )


def test_a_file_past_the_room_for_gptmes_contexts_is_refused_by_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Beside the keys read, gptme's contextual arms of each of the library's 4 lessons and the log's 3 arms: 2,000
    bytes each here; past them, refused by `stat` alone."""
    small_bounds(monkeypatch)
    ws = at_the_cap(tmp_path, capsys)
    size = planted(ws, contextual_arms={"x": "y" * 40_000})
    assert size > 10_000 + 1_000 * 9 + 2_000 * 7  # 33,000
    assert refused(ws, capsys, decoded) == (
        f"FILE takes {size:,} bytes, more than the 33,000 a state file of the 3 arms of the log and the library's 4 "
        f"lessons plus 2 takes with gptme's contextual arms of the library's 4 lessons and the log's 3 arms, {LEFT}"
    )


def test_a_big_document_that_is_no_object_is_refused_by_its_size(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Decoded whole when read (to say what it is): its bytes are the keys read's."""
    small_bounds(monkeypatch)
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    own.write_text("[" + ",".join(["{}"] * 8_000) + "]")  # 24,001 bytes: within 33,000, past 19,000
    assert refused(ws, capsys, decoded) == (
        f"FILE takes 24,001 bytes, more than the 19,000 a state file of the 3 arms of the log and the library's 4 "
        f"lessons plus 2 takes, {LEFT}"
    )


def test_a_key_given_twice_is_counted_twice_and_said_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int]
) -> None:
    """Two new arms, each under its key 20 times: a decode keeps 2 (within the room), the bytes hold 40 keys."""
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    state = json.loads(own.read_text())
    members = [json.dumps(key) + ": " + json.dumps(value) for key, value in state["arms"].items()]
    members += [f'"x/{i % 2}.md": ' + json.dumps(arm(f"x/{i % 2}.md", 2.0, 1.0, 1, 1)) for i in range(40)]
    own.write_text('{"arms": {' + ", ".join(members) + '}, "total_sessions": 4}')
    assert len(json.loads(own.read_text())["arms"]) == 5  # what a decode keeps
    line = refused(ws, capsys, decoded)
    assert line.startswith(f"FILE has over 9 arms ({ARM_KEYS}; counted no further)"), line  # (before: "arms" alone)


def test_the_records_of_a_refused_file_are_not_looked_for(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int]
) -> None:
    """The dashboard asks on each refresh (tui/source.py): a refused file is not decoded for the records it names
    (before: between the room and 200 arms, decoded every time)."""
    ws = at_the_cap(tmp_path, capsys)
    gptme_session(ws / STATE_REL, {"lessons/tools/a.md": 1, **{f"x/{i}.md": 1 for i in range(40)}})
    decoded.clear()
    assert Workspace(ws).records_missing() is None
    assert decoded == []
