"""Which of our files gptme's update grew from. gptme's bandit loads bandit-state.json, updates it and
saves it with its own keys (our stamp dropped, `created` kept). Its increments are the file less the
numbers of the file it loaded, so that file must be known exactly: each rewrite of ours gives the
file a new `created` and keeps a copy of its numbers under it. A copy of another file (a `.cache`
restored from a backup, or the file we wrote after gptme's load) is never taken for it: what gptme
added is logged once, and our own sessions are never counted a second time."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from lesson_credit.core.bandit.interop import STAMP_KEY, state_stamp
from tests.support.cli_run import run
from tests.support.engine_helpers import (
    BASIC_JOURNAL,
    BASIC_LESSONS,
    LOG_REL,
    STATE_REL,
    fixed_clock,
    make_workspace,
    session,
)

GIT = "tools/git.md"
CACHE_REL = "state/lesson-thompson/.cache"


@pytest.fixture
def ws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = make_workspace(
        tmp_path, BASIC_LESSONS, events=[session("s1", 0.8, {GIT: 1.0})], journals={"j.txt": BASIC_JOURNAL}
    )
    ok(capsys, "grade", "s1", "0.9", "--workspace", str(root))  # bandit-state.json written by us
    return root  # seed, salience 1 -> w 1: git Beta(1 + 0.9, 1 + 0.1) = (1.9, 1.1), n 1, 1 session


def ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, _, err = run(capsys, *args)
    assert code == 0, err
    return err


def our_next_write(capsys: pytest.CaptureFixture[str], root: Path, session_id: str, reward: float) -> None:
    """A session of ours credited git with weight 1 (salience 1), then a command that rewrites the file."""
    with open(root / LOG_REL, "a") as handle:
        handle.write(json.dumps(session(session_id, reward, {GIT: 1.0})) + "\n")
    ok(capsys, "status", "--workspace", str(root))


def gptme_saves(root: Path, loaded: dict[str, Any], reward: float) -> bytes:
    """gptme's bandit saving what it `loaded` with one session's update to git: alpha += reward,
    beta += 1 - reward, one selection (a reward when > 0.5), total_sessions + 1; its own keys only."""
    arms = json.loads(json.dumps(loaded["arms"]))
    arm = arms[GIT]
    arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward)
    arm["total_selections"] += 1
    arm["total_rewards"] += int(reward > 0.5)
    saved = {
        "arms": arms,
        "total_sessions": loaded["total_sessions"] + 1,
        "created": loaded["created"],
        "last_updated": "2026-10-30T12:00:00+00:00",
    }
    (root / STATE_REL).write_text(json.dumps(saved, indent=2) + "\n")
    return (root / STATE_REL).read_bytes()


def on_disk(root: Path) -> dict[str, Any]:
    state: dict[str, Any] = json.loads((root / STATE_REL).read_text())
    return state


def status_git(capsys: pytest.CaptureFixture[str], root: Path) -> tuple[float, float, int, int]:
    code, out, err = run(capsys, "status", "--workspace", str(root), "--json")
    assert code == 0, err
    (row,) = [r for r in json.loads(out)["lessons"] if r["path"] == GIT]
    return row["alpha"], row["beta"], row["n"], on_disk(root)["total_sessions"]


def file_git(root: Path) -> tuple[float, float, int, int]:
    state = on_disk(root)
    arm = state["arms"][GIT]
    return arm["alpha"], arm["beta"], arm["total_selections"], state["total_sessions"]


def increments(root: Path) -> list[dict[str, Any]]:
    lines = (root / LOG_REL).read_text().splitlines()
    return [event for event in map(json.loads, lines) if event.get("increments")]


def test_a_cache_restored_from_before_our_last_write_counts_nothing_twice(
    ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The copy of what we wrote was the only one, and a restored `.cache` held an older one: gptme's
    increments were taken over it, so our session s2 was logged again as gptme's. Log: s1 + s2 =
    (1.9 + 1, 1.1 + 0) n 2; gptme's +0.8/+0.2 cannot be told from s2 without the file it grew from."""
    shutil.copytree(ws / CACHE_REL, tmp_path / "backup")
    our_next_write(capsys, ws, "s2", 1.0)  # file (2.9, 1.1) n 2
    theirs = gptme_saves(ws, on_disk(ws), 0.8)  # file (3.7, 1.3) n 3, 3 sessions
    shutil.rmtree(ws / CACHE_REL)
    shutil.copytree(tmp_path / "backup", ws / CACHE_REL)
    err = ok(capsys, "status", "--workspace", str(ws))
    lines = [line for line in err.splitlines() if "bandit-state.json" in line]
    assert len(lines) == 1 and "another tool" in lines[0], err
    assert increments(ws) == []  # (old: +1.8/+0.2 n 2 logged, s2 counted twice: alpha 4.7, n 4)
    assert status_git(capsys, ws)[:3] == pytest.approx((2.9, 1.1, 2))
    assert (ws / STATE_REL).read_bytes() == theirs  # kept as it is, with its warning


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        # s1 + s2 = (2.8, 1.2) n 2, plus gptme's (0.9, 0.1) n 1: (3.7, 1.3) n 3; 3 sessions (s1, s2, gptme's)
        (0.9, (3.7, 1.3, 3, 3)),
        # plus gptme's (0.8, 0.2) n 1: (3.6, 1.4) n 3
        (0.8, (3.6, 1.4, 3, 3)),
    ],
)
def test_gptmes_save_over_a_file_we_wrote_after_its_load_is_logged_once(
    ws: Path, capsys: pytest.CaptureFixture[str], reward: float, expected: tuple[float, float, int, int]
) -> None:
    """gptme loaded the file, we rewrote it (s2 graded 0.9), gptme saved what it loaded plus its session.
    With its reward 0.9 the file's numbers were those of our rewrite: its session was dropped without a
    word. With 0.8 the file was kept as it was (alpha 2.7 < 2.8, "went down"), its session never logged."""
    loaded = on_disk(ws)  # (1.9, 1.1) n 1, 1 session
    our_next_write(capsys, ws, "s2", 0.9)
    assert file_git(ws) == pytest.approx((2.8, 1.2, 2, 2))
    gptme_saves(ws, loaded, reward)
    err = ok(capsys, "status", "--workspace", str(ws))
    assert sum("increments" in line for line in err.splitlines()) == 1, err
    (added,) = increments(ws)
    assert added["arms"] == {GIT: {"alpha": pytest.approx(reward), "beta": pytest.approx(1 - reward), "n": 1,
                                   "rewards": 1}}  # fmt: skip
    assert added["sessions"] == 1
    assert status_git(capsys, ws) == pytest.approx(expected) == file_git(ws)
    ok(capsys, "status", "--workspace", str(ws))  # once: nothing more logged
    assert len(increments(ws)) == 1


def test_gptmes_save_after_several_of_our_writes_is_logged_against_the_file_it_loaded(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three of our rewrites between gptme's load and its save (s2, s3, s4 each +1/+0): the log holds
    them, and gptme's +0.8/+0.2 over the file it loaded. (1.9 + 3 + 0.8, 1.1 + 0.2) n 5, 5 sessions."""
    loaded = on_disk(ws)
    for name in ("s2", "s3", "s4"):
        our_next_write(capsys, ws, name, 1.0)
    gptme_saves(ws, loaded, 0.8)
    ok(capsys, "status", "--workspace", str(ws))
    assert status_git(capsys, ws) == pytest.approx((5.7, 1.3, 5, 5)) == file_git(ws)


def test_each_rewrite_gives_the_file_a_new_created_that_gptme_reads(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gptme prints `created` as it is (status: "Created: ..."); ours is an ISO-8601 time, the rewrite's."""
    first = on_disk(ws)["created"]
    our_next_write(capsys, ws, "s2", 1.0)
    second = on_disk(ws)["created"]
    assert first != second
    for created in (first, second):
        assert dt.datetime.fromisoformat(created).tzinfo is not None


def test_copies_of_old_files_are_pruned(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Forty rewrites keep the newest 32 copies, the latest one among them."""
    for number in range(40):
        our_next_write(capsys, ws, f"p{number}", 1.0)
    assert len(list((ws / CACHE_REL / "bandit-state-copies").iterdir())) == 32
    gptme_saves(ws, on_disk(ws), 1.0)  # the latest copy is there: its update is logged
    ok(capsys, "status", "--workspace", str(ws))
    assert len(increments(ws)) == 1


@pytest.mark.parametrize(
    "created",
    ["9999-12-31T23:59:59.999999+00:00", "2026-01-01T00:00:00", "not a time", "x" * 5000],
    ids=["last-microsecond", "naive", "not-a-time", "long"],
)
def test_a_file_of_ours_whose_created_is_odd_is_written_with_one_of_ours(
    ws: Path, capsys: pytest.CaptureFixture[str], created: str
) -> None:
    """A `created` that cannot be moved past (the last microsecond there is), has no time zone, or is not
    a time (a file of ours edited by hand, stamped again): the file gets the clock's, and the write succeeds."""
    state = {key: value for key, value in on_disk(ws).items() if key != STAMP_KEY}
    state["created"] = created
    (ws / STATE_REL).write_text(json.dumps({**state, STAMP_KEY: state_stamp(state)}))
    ok(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert dt.datetime.fromisoformat(on_disk(ws)["created"]).year < 9999
    assert file_git(ws)[:3] == pytest.approx((1.5, 1.5, 1))


def test_gptmes_second_save_after_a_cache_restore_counts_its_first_session_once(
    ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """gptme's bandit saves after each session from what it holds (one load, two saves, one `created`).
    Its first save was logged; a `.cache` restored from before that held the copy of the file it loaded,
    and its second save was taken over it: the first session was logged twice. Log: s1 (1.9, 1.1) n 1,
    gptme's +0.8/+0.2 then +0.6/+0.4: (3.3, 1.7) n 3; 3 sessions (s1, gptme's two)."""
    shutil.copytree(ws / CACHE_REL, tmp_path / "backup")
    loaded = on_disk(ws)
    first = gptme_saves(ws, loaded, 0.8)  # file (2.7, 1.3) n 2, 2 sessions
    ok(capsys, "status", "--workspace", str(ws))  # logged: +0.8/+0.2 n 1
    gptme_saves(ws, json.loads(first), 0.6)  # file (3.3, 1.7) n 3, 3 sessions, `created` the loaded one's
    shutil.rmtree(ws / CACHE_REL)
    shutil.copytree(tmp_path / "backup", ws / CACHE_REL)
    ok(capsys, "status", "--workspace", str(ws))
    # (old: +1.4/+0.6 n 2 logged over the file it loaded, the +0.8 twice: alpha 4.1, n 4, 4 sessions)
    assert status_git(capsys, ws) == pytest.approx((3.3, 1.7, 3, 3)) == file_git(ws)


def test_a_file_written_at_a_created_the_log_knows_a_save_of_gets_another(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The clock stands still (or is set back to the same microsecond): a file written after the
    copies and the file were deleted would take a `created` whose save by gptme the log holds, and
    gptme's next save of it would be taken over those older numbers. Log: s1 (1.9, 1.1) n 1, gptme's
    +0.8/+0.2 (2.7, 1.3) n 2, s2 +1/+0 (3.7, 1.3) n 3, gptme's +0.6/+0.4: (4.3, 1.7) n 4, 4 sessions."""

    def at(*args: str) -> None:
        code, _, err = run(capsys, *args, "--workspace", str(ws), clock=fixed_clock)
        assert code == 0, err

    (ws / STATE_REL).unlink()
    at("grade", "s1", "0.9")  # written at the clock's microsecond: (1.9, 1.1) n 1
    gptme_saves(ws, on_disk(ws), 0.8)
    at("status")  # its +0.8/+0.2 logged, with what it saw under that `created`
    with open(ws / LOG_REL, "a") as handle:
        handle.write(json.dumps(session("s2", 1.0, {GIT: 1.0})) + "\n")
    (ws / STATE_REL).unlink()
    shutil.rmtree(ws / CACHE_REL)
    at("grade", "s2", "1.0")  # (3.7, 1.3) n 3, 3 sessions: a `created` of its own, not the first file's
    gptme_saves(ws, on_disk(ws), 0.6)
    at("status")
    assert status_git(capsys, ws) == pytest.approx((4.3, 1.7, 4, 4)) == file_git(ws)


def test_gptmes_save_logged_by_a_command_interrupted_before_its_copy_is_logged_once(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command interrupted (Ctrl-C) after it logged gptme's update but before it kept the copy of that
    file (the base of gptme's next save from what it holds): the next command logged it a second time.
    Log: s1 (1.9, 1.1) n 1, gptme's +0.8/+0.2 then +0.6/+0.4: (3.3, 1.7) n 3, 3 sessions."""
    from lesson_credit.core.workspace.state_file import StateFile

    first = gptme_saves(ws, on_disk(ws), 0.8)
    keep = StateFile._keep_written

    def killed(self: StateFile, payload: dict[str, Any]) -> None:
        if STAMP_KEY not in payload:  # (gptme's file, after its increments are logged)
            raise KeyboardInterrupt
        keep(self, payload)

    monkeypatch.setattr(StateFile, "_keep_written", killed)
    assert run(capsys, "status", "--workspace", str(ws))[0] == 130  # interrupted
    monkeypatch.setattr(StateFile, "_keep_written", keep)
    assert len(increments(ws)) == 1
    gptme_saves(ws, json.loads(first), 0.6)
    ok(capsys, "status", "--workspace", str(ws))
    # (old: +1.4/+0.6 n 2 over the file it loaded, the +0.8 twice: alpha 4.1, n 4)
    assert status_git(capsys, ws) == pytest.approx((3.3, 1.7, 3, 3)) == file_git(ws)


def test_copies_written_after_the_clock_was_set_back_are_kept(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The copies were written while the system clock was an hour ahead; it is set back. The copy of
    each later file is the oldest by its time of writing: it was the one pruned, so gptme's next update
    could not be logged (the file kept with a warning). s1 + 33 writes of +1/+0 = (34.9, 1.1) n 34, plus
    gptme's +1/+0: (35.9, 1.1) n 35, 35 sessions."""
    for number in range(32):
        our_next_write(capsys, ws, f"p{number}", 1.0)
    ahead = time.time_ns() + 3600 * 10**9
    for copy in (ws / CACHE_REL / "bandit-state-copies").iterdir():
        os.utime(copy, ns=(ahead, ahead))
    our_next_write(capsys, ws, "p32", 1.0)
    gptme_saves(ws, on_disk(ws), 1.0)
    err = ok(capsys, "status", "--workspace", str(ws))
    assert len(increments(ws)) == 1, err
    assert status_git(capsys, ws) == pytest.approx((35.9, 1.1, 35, 35)) == file_git(ws)


def test_a_copy_named_by_the_hash_of_its_created_is_still_read(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The version before named each copy by the first 32 hex digits of the SHA-256 of its `created`: the
    copy of the file written then is found, and gptme's update of that file logged. (1.9, 1.1) n 1 plus
    +0.8/+0.2: (2.7, 1.3) n 2, 2 sessions."""
    created = on_disk(ws)["created"]
    copies = ws / CACHE_REL / "bandit-state-copies"
    (copy,) = copies.iterdir()
    copy.rename(copies / hashlib.sha256(created.encode()).hexdigest()[:32])
    gptme_saves(ws, on_disk(ws), 0.8)
    ok(capsys, "status", "--workspace", str(ws))
    assert len(increments(ws)) == 1
    assert status_git(capsys, ws) == pytest.approx((2.7, 1.3, 2, 2)) == file_git(ws)


def test_a_copy_replaced_by_a_symbolic_link_is_not_read_through_it(
    ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A cache file is never read through a symbolic link (docs/trust.md): a link in a copy's place, even
    to the very bytes of that copy, is no copy. gptme's update is kept with one warning, nothing logged;
    the log's git stays (1.9, 1.1) n 1 and the link is left as it is."""
    (copy,) = (ws / CACHE_REL / "bandit-state-copies").iterdir()
    (tmp_path / "elsewhere").write_bytes(copy.read_bytes())
    copy.unlink()
    copy.symlink_to(tmp_path / "elsewhere")
    theirs = gptme_saves(ws, on_disk(ws), 0.8)
    err = ok(capsys, "status", "--workspace", str(ws))
    assert "no copy of the file lesson-credit wrote" in err, err
    assert increments(ws) == []
    assert status_git(capsys, ws)[:3] == pytest.approx((1.9, 1.1, 1))
    assert (ws / STATE_REL).read_bytes() == theirs and copy.is_symlink()


def test_a_copies_folder_linking_out_of_the_workspace_is_neither_pruned_nor_read(
    ws: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`.cache/bandit-state-copies` replaced by a symbolic link to a folder elsewhere holding 40 files named
    as copies are: pruning them deleted 8 files outside the workspace (writing follows no link out of it),
    and a file there named as the copy of the file gptme saved was taken as its base."""
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(ws / CACHE_REL / "bandit-state-copies", elsewhere)
    (copy,) = elsewhere.iterdir()
    for second in range(40):
        (elsewhere / f"2020-01-01T00-00-{second:02d}.000000Z").write_bytes(b"not ours")
    before = sorted(p.name for p in elsewhere.iterdir())
    shutil.rmtree(ws / CACHE_REL / "bandit-state-copies")
    (ws / CACHE_REL / "bandit-state-copies").symlink_to(elsewhere, target_is_directory=True)
    theirs = gptme_saves(ws, on_disk(ws), 0.8)  # over the file whose copy is `copy`, outside
    err = ok(capsys, "status", "--workspace", str(ws))
    assert (ws / STATE_REL).read_bytes() == theirs and "another tool" in err  # no copy: kept, with its warning
    assert increments(ws) == []
    our_next_write(capsys, ws, "s2", 1.0)
    assert sorted(p.name for p in elsewhere.iterdir()) == before and copy.exists()


def test_a_copy_replaced_by_a_symbolic_link_is_not_written_through_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The file is ours (its stamp proves it) and a symbolic link to the log stands in its copy's place:
    `status` keeps the copy again, and wrote it through the link, so the log became the copy's sealed
    bytes (every session gone). A cache never replaces a symbolic link (docs/trust.md): the log and
    the link stay as they are."""
    (copy,) = (ws / CACHE_REL / "bandit-state-copies").iterdir()
    log = (ws / LOG_REL).read_bytes()
    copy.unlink()
    copy.symlink_to(ws / LOG_REL)
    ok(capsys, "status", "--workspace", str(ws))
    assert (ws / LOG_REL).read_bytes() == log and copy.is_symlink()
    assert status_git(capsys, ws)[:3] == pytest.approx((1.9, 1.1, 1))


def test_a_copy_that_cannot_be_kept_is_said(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The copy of the numbers we wrote is what another tool's later update of bandit-state.json is read
    against; one that cannot be written (here its folder is a file: a full or read-only disk alike) was
    dropped without a word, and gptme's next update was then kept as it is, not logged. Now the write
    says so, once; the grade itself is logged (exit 0)."""
    copies = ws / CACHE_REL / "bandit-state-copies"
    shutil.rmtree(copies)
    copies.write_text("not a folder")
    code, _, err = run(capsys, "grade", "s1", "0.7", "--workspace", str(ws))
    assert code == 0
    lines = [line for line in err.splitlines() if "bandit-state-copies" in line]
    assert len(lines) == 1 and "not logged" in lines[0], err
    assert copies.read_text() == "not a folder"
