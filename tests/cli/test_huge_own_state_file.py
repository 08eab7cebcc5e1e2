"""A planted bandit-state.json with more arms beyond the log's than a log names lessons (core/log/arm_names.py
MAX_LOG_LESSONS, 3 here): every command that reads the file says the one line that it is left as it is, changes
nothing, and never decodes it (its arms are counted from its bytes as far as 3 + 3; before, every command decoded the
whole file: 1,500,000 arms cost 10 s of CPU and 1.4 GB a command). Files gptme's bandit writes are read as before."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from lesson_credit.core.bandit import arm_count, interop
from lesson_credit.core.bandit.arm_count import ARM_KEYS
from lesson_credit.core.log import arm_names
from tests.cli.cli_fixtures import log_bytes, run
from tests.cli.test_log_lesson_cap_own_file import arm, at_the_cap, gptme_session
from tests.support.engine_helpers import STATE_REL

PLANTED = 40  # new arms: more than the log's 3 and 3 more


@pytest.fixture(autouse=True)
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arm_names, "MAX_LOG_LESSONS", 3)


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the documents msgspec decoded that hold the planted arms (any decode of the state file)."""
    seen: list[int] = []
    real = msgspec.json.decode

    def spying(data: Any, *args: Any, **kwargs: Any) -> Any:
        # (arm_count.json_so_far: skipped, no object made; state_reading.decode_state: kept apart by its keys, each
        # value's bytes skipped, then its arms decoded: counted)
        checked = kwargs.get("type") in (msgspec.Raw, dict[str, msgspec.Raw])
        if isinstance(data, bytes | bytearray | memoryview) and b'"x/0.md"' in bytes(data) and not checked:
            seen.append(len(data))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(msgspec.json, "decode", spying)
    return seen


def planted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    ws = at_the_cap(tmp_path, capsys)
    gptme_session(ws / STATE_REL, {"lessons/tools/a.md": 1, **{f"x/{i}.md": 1 for i in range(PLANTED)}})
    return ws


# 43 arms: a, b and café, and the 40 planted; counted as far as the 7th
LINE = (
    f"has over 6 arms ({ARM_KEYS}; counted no further): over 3 more than the 3 of the log, more than the 3 lessons "
    "a log names, so no update of gptme's bandit; left as it is, nothing logged (deleting it has the next write write "
    "it from the log, without what the log does not hold: gptme's contextual arms and other keys)"
)


@pytest.mark.parametrize("command", ["status", "lint", "select", "record"])
def test_a_command_says_the_one_line_and_never_decodes_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int], command: str
) -> None:
    ws = planted(tmp_path, capsys)
    own = ws / STATE_REL
    (ws / "context.txt").write_text("alpha beta", encoding="utf-8")
    file_before, log_before = own.read_bytes(), log_bytes(ws)
    argv = {
        "status": ["status", "-w", str(ws)],
        "lint": ["lint", "-w", str(ws)],
        "select": ["select", "-w", str(ws), "--context", str(ws / "context.txt"), "--k", "1", "--seed", "3"],
        "record": ["record", "-w", str(ws), "--session-id", "r1", "--journal", str(ws / "context.txt"), "--lessons",
                   "tools/a.md", "--reward", "1"],
    }[command]  # fmt: skip
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert decoded == []  # before: the whole file, by every command
    assert (out + err).count(LINE) == 1, out + err
    assert own.read_bytes() == file_before
    added = (log_bytes(ws) or b"")[len(log_before or b"") :].decode().splitlines()
    assert log_bytes(ws) == (log_before or b"") + "".join(f"{line}\n" for line in added).encode()  # (appended)
    # nothing but what the command logs of its own: a select its draw, a record its session (no increments event)
    assert [json.loads(line).get("type") for line in added] == {"select": ["selection"], "record": ["session"]}.get(
        command, []
    ), added


def test_a_file_at_the_line_is_read_and_taken_up_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int]
) -> None:
    """3 new arms beside the log's 3: not more than 3 + 3, so decoded and its update logged (the lessons past the
    cap left out), as before."""
    ws = at_the_cap(tmp_path, capsys)
    own = ws / STATE_REL
    gptme_session(own, {"lessons/tools/a.md": 1, **{f"x/{i}.md": 1 for i in range(3)}})
    log_before = log_bytes(ws)
    code, out, err = run(capsys, "status", "-w", str(ws), "--json")
    assert code == 0, err
    assert decoded and log_bytes(ws) != log_before
    assert "x/0.md" not in json.loads(own.read_text())["arms"]  # rewritten from the log


def test_export_onto_another_file_with_more_arms_than_ever_read_is_refused_unread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], decoded: list[int]
) -> None:
    """7 arms: more than 3 + 3 (interop.never_read); whether it holds evidence the log has not cannot be told
    without decoding it, so it is not replaced (before: decoded, then replaced, its arms holding nothing unlogged)."""
    ws = at_the_cap(tmp_path, capsys)
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"arms": {f"x/{i}.md": arm(f"x/{i}.md", 1.0, 1.0, 0, 0) for i in range(7)}}))
    before, log_before = other.read_bytes(), log_bytes(ws)
    code, out, err = run(capsys, "export-gptme", "-w", str(ws), str(other))
    assert (code, out) == (1, ""), err
    assert err == (
        f"lesson-credit: {other} has more than 6 arms ({ARM_KEYS}), more than lesson-credit reads in a state file; "
        "not replaced by export-gptme, nothing exported: name a new file or a folder\n"
    )
    assert (other.read_bytes(), log_bytes(ws), decoded) == (before, log_before, [])


def gptme_file(arms: int) -> bytes:
    """A state file as gptme's bandit saves it (json.dump of its dict), `arms` lessons."""
    keys = [f"lessons/tools/lesson-{i}.md" for i in range(arms)]
    entries = {key: arm(key, 1.0 + i % 7, 2.0 + i % 5, i % 9, i % 4) for i, key in enumerate(keys)}
    return json.dumps({"arms": entries, "total_sessions": 500, "last_updated": "2026-12-06T08:19:27+00:00"}).encode()


def test_a_3000_lesson_file_is_read_as_gptme_wrote_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arm_names, "MAX_LOG_LESSONS", 100_000)  # (the real cap)
    path = tmp_path / "bandit-state.json"
    path.write_bytes(raw := gptme_file(3000))
    assert not interop.arms_past(path, 3000) and interop.arms_past(path, 2999)  # 3,000 arms, counted from the bytes
    assert interop.read_state(path) == json.loads(raw)
    assert interop.read_state(tmp_path / "none.json", raw) == json.loads(raw)


def documents(seed: int, count: int) -> Iterator[tuple[bytes, int]]:
    """JSON documents (keys and strings full of quotes, backslashes, brackets and colons; "arms" spelled with an
    escape now and then, or not an object) and the number of arms json.loads finds in each (-1: none to count)."""
    rng = random.Random(seed)

    def text() -> str:
        return "".join(rng.choice(["a", '"', "\\", "{", "}", "[", "]", ":", ",", "é", "\n", "arms"]) for _ in range(4))

    def value(depth: int) -> Any:
        kind = rng.randrange(6 if depth < 3 else 3)
        if kind == 3:
            return [value(depth + 1) for _ in range(rng.randrange(3))]
        if kind in (4, 5):
            return {text(): value(depth + 1) for _ in range(rng.randrange(3))}
        return (rng.random(), text(), None)[kind]

    for _ in range(count):
        top = {text(): value(1) for _ in range(rng.randrange(3))}
        top["arms"] = {f"{text()}{i}": value(2) for i in range(rng.randrange(30))} if rng.random() < 0.9 else value(2)
        raw = json.dumps(top, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 2]))
        raw = raw.replace('"arms"', '"\\u0061rms"') if rng.random() < 0.2 else raw
        arms = json.loads(raw)["arms"]
        yield raw.encode(), len(arms) if isinstance(arms, dict) else -1


def test_arms_are_counted_as_json_loads_counts_them_in_pieces_of_any_size() -> None:
    rng = random.Random(5)
    for raw, arms in documents(7, 1500):
        size = rng.randint(1, 40)
        pieces = [raw[at : at + size] for at in range(0, len(raw), size)]
        assert arm_count.count_arms(pieces, 10**9) == arms, raw
        limit = rng.randrange(32)
        assert arm_count.more_arms_than(pieces, limit) == (arms > limit), (raw, limit)


def test_counting_stops_past_the_number_asked() -> None:
    """A file of 20,000 arms asked whether it has more than 100: read no further than the 101st arm's piece."""
    raw = gptme_file(20_000)
    pieces = [raw[at : at + 4096] for at in range(0, len(raw), 4096)]
    read: list[int] = []

    def reading() -> Iterator[bytes]:
        for piece in pieces:
            read.append(len(piece))
            yield piece

    assert 100 < arm_count.count_arms(reading(), 100) < 20_000  # (the arms of the pieces read: at least so many)
    # each arm is 190 to 198 bytes and a comma (json.dumps of one: by hand for the longest, lesson-19999's): 101 of
    # them within 101 x 200 = 20,200 bytes, 5 pieces; the file is 20,000 x 191 = 3,820,000 bytes or more, 932 pieces
    assert len(read) <= 5 < 932 <= len(pieces), (len(read), len(pieces))


def test_a_file_with_more_arms_than_any_log_and_the_cap_beside_is_never_decoded(
    tmp_path: Path, decoded: list[int]
) -> None:
    """More than 3 + 3 arms (interop.never_read): refused whatever the log, so every reader takes it for none."""
    path = tmp_path / "bandit-state.json"
    arms = {f"x/{i}.md": arm(f"x/{i}.md", 1.0, 1.0, 0, 0) for i in range(7)}
    path.write_text(json.dumps({"arms": arms, "total_sessions": 1}))
    assert interop.read_state(path) == {} and decoded == []
    del arms["x/6.md"]  # 6 arms: read as they are
    path.write_text(json.dumps({"arms": arms, "total_sessions": 1}))
    assert interop.read_state(path) == {"arms": arms, "total_sessions": 1} and len(decoded) == 1


def test_a_file_bigger_than_any_state_file_is_not_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file over the state file's size cap (256 MB; 1 MB here) is refused unread by the read that follows: its
    arms are not counted first. Counting kept every byte read to check them as JSON, so a planted 1 GB file whose
    "arms" came last held 1 GB (a review: 1,085 MB peak where the cap's refusal takes 40)."""
    from lesson_credit.core.bandit import state_reading

    monkeypatch.setattr(state_reading, "STATE_MAX_BYTES", 1 << 20)
    path = tmp_path / "bandit-state.json"
    path.write_bytes(
        b'{"x": "' + b"a" * (2 << 20) + b'", "arms": ' + json.dumps(dict.fromkeys("abcdefgh", 1)).encode() + b"}"
    )
    counted: list[int] = []

    def count_arms(pieces: Any, limit: int) -> int:
        counted.append(limit)
        return 8

    monkeypatch.setattr(state_reading, "count_arms", count_arms)
    assert not state_reading.arms_past(path, 3) and counted == []
    assert state_reading.read_state(path) == {}  # (too big: the read refuses it)
