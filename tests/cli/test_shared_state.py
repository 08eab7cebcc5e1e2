"""Another tool's update of the shared bandit-state.json (gptme's bandit: load, add a session's update
to an arm, save its own keys, our stamp dropped). The next command logs the update's increments over
what we last wrote as an increments event, so the log holds it and the file follows the log again;
an update that is not increments (a number went down) or with no copy of what we wrote is kept, with
one warning. A missing log never empties the file. Numbers in warnings print without repr noise."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli_run import run
from tests.support.engine_helpers import (
    CONFIG_REL,
    LOG_REL,
    STATE_REL,
    session,
)
from tests.support.git_arm import GIT, events, file_git, graded_workspace, status_git

COPIES_REL = "state/lesson-thompson/.cache/bandit-state-copies"  # what we wrote, per file


@pytest.fixture
def ws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    return graded_workspace(tmp_path, capsys)  # git Beta(1.9, 1.1) n 1


def gptme_update(root: Path, d_alpha: float = 0.8, d_beta: float = 0.2, key: str = GIT) -> bytes:
    """What gptme-sessions' bandit does to the file: load, add one session's update to an arm (reward
    0.8: alpha += 0.8, beta += 0.2, one selection, one reward), save exactly its own keys."""
    path = root / STATE_REL
    state = json.loads(path.read_text())
    arm = state["arms"][key]
    arm["alpha"] += d_alpha
    arm["beta"] += d_beta
    arm["total_selections"] += 1
    arm["total_rewards"] += 1
    saved = {
        "arms": state["arms"],
        "total_sessions": state["total_sessions"] + 1,
        "created": state["created"],
        "last_updated": "2026-10-30T12:00:00+00:00",
    }
    path.write_text(json.dumps(saved, indent=2) + "\n")
    return path.read_bytes()


# ---------------------------------------------------------------- gptme's update is logged


def test_status_logs_gptmes_update_once_and_the_file_follows_the_log(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    gptme_update(ws)
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0
    lines = [line for line in err.splitlines() if "bandit-state.json" in line]
    assert len(lines) == 1 and "increments" in lines[0] and "gptme" in lines[0], err
    added = events(ws)[-1]
    assert (added["type"], added["increments"], added["source"]) == ("prior", True, "gptme-bandit")
    assert added["arms"] == {GIT: {"alpha": pytest.approx(0.8), "beta": pytest.approx(0.2), "n": 1, "rewards": 1}}
    # the log: Beta(1.9, 1.1) n 1 from s1, plus gptme's +0.8/+0.2, one selection
    assert status_git(capsys, ws) == pytest.approx((2.7, 1.3, 2))
    assert file_git(ws) == pytest.approx((2.7, 1.3, 2))
    assert "lesson_credit_written" in json.loads((ws / STATE_REL).read_text())
    # once: nothing more is logged or said, and our writes rewrite the file without a warning
    lines_before = len(events(ws))
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "bandit-state.json" not in err
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0 and "bandit-state.json" not in err
    assert len(events(ws)) == lines_before + 1
    # s1 now 0.5: Beta(1.5, 1.5) + (0.8, 0.2)
    assert status_git(capsys, ws) == pytest.approx((2.3, 1.7, 2)) == file_git(ws)


def test_the_status_that_logs_gptmes_update_prints_the_numbers_with_it(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run that logged the update printed the posteriors from before it (n 1); the next run, n 2."""
    gptme_update(ws)
    assert status_git(capsys, ws) == pytest.approx((2.7, 1.3, 2))  # Beta(1.9, 1.1) + (0.8, 0.2), one selection


def test_export_onto_the_own_file_logs_gptmes_update_first(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`export-gptme state/lesson-thompson/bandit-state.json` over gptme's update wrote the log's numbers
    onto it without a word: gptme's session was lost. It is logged first, as every write does."""
    gptme_update(ws)
    code, out, err = run(capsys, "export-gptme", str(ws / STATE_REL), "--workspace", str(ws))
    assert code == 0 and out.startswith("wrote ")
    assert "increments" in err and "gptme" in err, err
    assert events(ws)[-1]["increments"] is True
    assert status_git(capsys, ws) == pytest.approx((2.7, 1.3, 2)) == file_git(ws)


def test_a_write_logs_it_too_and_its_event_is_committed(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gptme_update(ws)
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0
    assert sum("increments" in line for line in err.splitlines()) == 1, err
    kinds = [(e.get("type"), e.get("increments")) for e in events(ws)]
    assert kinds[-2:] == [("grade", None), ("prior", True)]
    assert status_git(capsys, ws) == pytest.approx((2.3, 1.7, 2)) == file_git(ws)


def test_increments_are_not_decayed(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """gptme's bandit does not decay them: the fold adds them after decay (docs/format.md §5.5)."""
    (ws / CONFIG_REL).write_text("decay = 0.5\n")
    assert run(capsys, "status", "--workspace", str(ws))[0] == 0  # the file follows the decayed fold
    gptme_update(ws)
    with open(ws / LOG_REL, "a") as handle:
        handle.write(json.dumps(session("s2", 1.0, {GIT: 1.0})) + "\n")
    assert run(capsys, "status", "--workspace", str(ws))[0] == 0
    # two graded sessions, gamma 0.5: s1's +0.9/+0.1 halves once, s2's +1/+0 counts whole; gptme's +0.8/+0.2 whole
    # alpha 1 + 0.45 + 1 + 0.8 = 3.25, beta 1 + 0.05 + 0 + 0.2 = 1.25, n 1 + 1 + 1
    assert status_git(capsys, ws) == pytest.approx((3.25, 1.25, 3)) == file_git(ws)


# ---------------------------------------------------------------- an update that is not increments is kept


def test_status_keeps_an_update_that_is_not_increments_and_says_so_once(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = gptme_update(ws, d_alpha=1.62)  # alpha 3.5199999999999996: printed as 3.52
    theirs = gptme_update(ws, d_alpha=0.0, d_beta=-0.5)  # then beta went down: not an update on top of ours
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0
    assert (ws / STATE_REL).read_bytes() == theirs
    lines = [line for line in err.splitlines() if "bandit-state.json" in line]
    assert len(lines) == 1 and "another tool" in lines[0] and "went from" in lines[0], err
    assert "3.5199999999999996" not in err and "3.52" in lines[0]
    code, out, _ = run(capsys, "status", "--workspace", str(ws), "--json")
    assert code == 0 and (ws / STATE_REL).read_bytes() == theirs
    assert any("another tool" in w for w in json.loads(out)["warnings"])
    assert not any(e.get("increments") for e in events(ws))


def test_without_a_copy_of_what_we_wrote_the_update_is_kept(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.rmtree(ws / COPIES_REL)
    theirs = gptme_update(ws)
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0
    assert (ws / STATE_REL).read_bytes() == theirs
    assert b'"base_reward":0.5' in (ws / LOG_REL).read_bytes().replace(b" ", b"")
    assert any("another tool" in line and "no copy" in line for line in err.splitlines()), err


def test_lint_reports_a_kept_update_with_the_way_to_take_the_file_back(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    theirs = gptme_update(ws, d_beta=-0.5)
    code, out, _ = run(capsys, "lint", "--workspace", str(ws), "--json")
    (finding,) = [f for f in json.loads(out)["findings"] if "bandit-state" in f["code"]]
    # the advice says what taking it back costs, never advising it: gptme's sessions there would be lost
    assert "another tool" in finding["message"] and "an export onto it" in finding["advice"]
    assert "would lose that update" in finding["advice"] and "export-gptme" not in finding["advice"]
    assert (ws / STATE_REL).read_bytes() == theirs
    # taking it back all the same: export over it; then our writes rewrite it again
    code, _, err = run(capsys, "export-gptme", "--workspace", str(ws), str(ws / STATE_REL))
    assert code == 0, err
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0 and "another tool" not in err
    assert file_git(ws) == pytest.approx((1.5, 1.5, 1))


def test_our_own_stale_file_is_still_rewritten(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Killed between the append and the rewrite: the file is ours (as we wrote it), only behind."""
    with open(ws / LOG_REL, "ab") as handle:
        handle.write(b'{"type":"grade","session_id":"s1","base_reward":0.0,"grader":"manual"}\n')
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "rewritten from the log" in err
    arm = json.loads((ws / STATE_REL).read_text())["arms"][GIT]
    # seed, floor 0.3, salience 1 -> w 1; the latest grade 0 counts: alpha 1 + 0, beta 1 + 1
    assert (arm["alpha"], arm["beta"]) == (1.0, 2.0)


# ---------------------------------------------------------------- a missing log


def test_a_missing_log_never_empties_the_file(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = (ws / STATE_REL).read_bytes()
    moved = ws / "moved.jsonl"
    (ws / LOG_REL).rename(moved)
    for argv in (["status"], ["status", "--json"], ["lint"]):
        code, _, err = run(capsys, *argv, "--workspace", str(ws))
        assert code in (0, 1)
        assert (ws / STATE_REL).read_bytes() == before, argv
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    lines = [line for line in err.splitlines() if "bandit-state.json" in line]
    assert len(lines) == 1 and "missing" in lines[0] and "left as it is" in lines[0], err
    moved.rename(ws / LOG_REL)  # back: the file agrees with the log again, nothing said
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "bandit-state.json" not in err
    assert file_git(ws) == pytest.approx((1.9, 1.1, 1))


def test_a_file_of_ours_written_before_copies_were_kept_gets_one_at_the_next_status(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workspace from before the copy (the demo's): `status` finds the file ours (its stamp matches) and
    keeps its copy, so gptme's next update is logged, not kept."""
    shutil.rmtree(ws / COPIES_REL)
    assert run(capsys, "status", "--workspace", str(ws))[0] == 0
    gptme_update(ws)
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "increments" in err and "another tool" in err
    assert status_git(capsys, ws) == pytest.approx((2.7, 1.3, 2)) == file_git(ws)


def test_a_file_folded_from_the_database_store_is_left_by_a_status_on_the_file(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A workspace used with both stores: status repairs only a file folded from its own store, so
    it is not rewritten back and forth; a write rewrites it from the write's store (tests/pg too)."""
    from lesson_credit.core.bandit.interop import SOURCE_KEY, STAMP_KEY, state_stamp

    path = ws / STATE_REL
    state = json.loads(path.read_text())
    state["arms"][GIT]["total_selections"] = 7  # the database's fold, seven sessions of git.md
    state[SOURCE_KEY] = "database 1234"
    state[STAMP_KEY] = state_stamp(state)  # as lesson-credit wrote it on that store
    path.write_text(json.dumps(state, indent=2) + "\n")
    written = path.read_bytes()
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert (code, err) == (0, "") and path.read_bytes() == written
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert (code, err) == (0, "")
    after = json.loads(path.read_text())
    assert after["arms"][GIT]["total_selections"] == 1 and SOURCE_KEY not in after  # the file's fold


def test_two_commands_at_once_log_gptmes_update_once(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two commands that both read the log before either logged gptme's update (a hook's `record` and
    someone's `status`): the second to take the lock finds the first's increments event and logs
    nothing. Here the first stops between its append and its rewrite of the file (as a process the
    scheduler pauses there), so the file the second reads still holds gptme's update; before, the
    second, deciding on what it had read before the lock, logged the increments again (git n 3)."""
    from lesson_credit.core.bandit import interop
    from lesson_credit.core.workspace import Workspace

    gptme_update(ws)
    second = Workspace(ws)
    second.refresh()  # read the log before the first logged anything
    first = Workspace(ws)
    monkeypatch.setattr(interop, "rewrite_state", lambda *a, **k: None)  # paused before its rewrite
    first.write_state()
    monkeypatch.undo()
    assert sum(1 for e in events(ws) if e.get("increments")) == 1
    second.write_state()
    assert sum(1 for e in events(ws) if e.get("increments")) == 1  # logged once
    # by hand: Beta(1.9, 1.1) n 1 from s1, plus gptme's +0.8/+0.2 and one selection, once
    assert file_git(ws) == pytest.approx((2.7, 1.3, 2))


def _paused(call: Callable[..., Any], folded: threading.Event, go: threading.Event) -> Callable[..., Any]:
    """`call`, which the first time tells `folded` it is done and waits for `go` before returning."""

    def paused(*args: Any, **kwargs: Any) -> Any:
        found = call(*args, **kwargs)
        if not folded.is_set():
            folded.set()
            go.wait(60)
        return found

    return paused


def _record_while_paused(ws: Path, rewrite: Callable[[], Any], folded: threading.Event, go: threading.Event) -> Any:
    """Run `rewrite` (paused once it has folded) and, meanwhile, a `record` of s2 by another client
    given 2 s (its whole run in the old code; now it waits for the lock the rewrite holds); then let
    the rewrite go on. What `rewrite` returned."""
    from lesson_credit.core.workspace import Workspace

    recorder = Workspace(ws)
    said: list[Any] = []
    rewriting = threading.Thread(target=lambda: said.append(rewrite()))
    rewriting.start()
    assert folded.wait(60)
    recording = threading.Thread(target=lambda: recorder.record("s2", ws / "j.txt", [GIT], reward=1.0))
    recording.start()
    recording.join(2.0)
    go.set()
    rewriting.join(60)
    recording.join(60)
    assert [e["session_id"] for e in events(ws) if e.get("type") == "session"] == ["s1", "s2"]
    return said[0] if said else None


def test_a_status_repair_never_replaces_a_later_write_s_file(ws: Path) -> None:
    """`status` found the file behind (a grade appended by hand) and folded the log to rewrite it; a
    hook's `record` meanwhile appended s2 and rewrote the file under the writers' lock. Before, the
    repair then replaced that file with its own older fold: gptme read one selection of git where the
    log held two. The repair now holds the lock from its check to its rewrite (the record waits)."""
    from lesson_credit.core.derived_state import repair_state
    from lesson_credit.core.workspace import Workspace

    with open(ws / LOG_REL, "ab") as handle:
        handle.write(b'{"type":"grade","session_id":"s1","base_reward":0.0,"grader":"manual"}\n')
    repairer = Workspace(ws)
    folded, go = threading.Event(), threading.Event()
    repairer._own_state = _paused(repairer._own_state, folded, go)  # type: ignore[method-assign]
    said = _record_while_paused(ws, lambda: repair_state(repairer), folded, go)
    assert said is not None and said.endswith("rewritten from the log")
    assert file_git(ws)[2] == 2  # s1 and s2 each injected git


def test_a_status_repair_leaves_the_file_to_the_writer_holding_the_lock(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer holds the log's lock (its rewrite of the file comes after its append): `status` does not
    wait for it, says so, and leaves the file as it is."""
    from lesson_credit.core.workspace import Workspace

    with open(ws / LOG_REL, "ab") as handle:
        handle.write(b'{"type":"grade","session_id":"s1","base_reward":0.0,"grader":"manual"}\n')
    before = (ws / STATE_REL).read_bytes()
    with Workspace(ws).log.locked():
        code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0, err
    assert "another writer holds the log's lock, and its write rewrites the file" in err
    assert (ws / STATE_REL).read_bytes() == before
    code, _, err = run(capsys, "status", "--workspace", str(ws))  # the lock released: repaired
    assert code == 0 and "rewritten from the log" in err
    assert file_git(ws) == (1.0, 2.0, 1)  # as test_our_own_stale_file_is_still_rewritten


def test_an_export_onto_our_own_file_never_replaces_a_later_write_s_file(ws: Path) -> None:
    """`export-gptme` onto the workspace's own file (taking it back) had folded the log when a hook's
    `record` appended s2 and rewrote the file. Before, the export then replaced that file with its
    older fold. It now folds and writes under the writers' lock, from the log as it is under it."""
    from lesson_credit.core.workspace import Workspace

    exporter = Workspace(ws)
    folded, go = threading.Event(), threading.Event()
    exporter.posterior = _paused(exporter.posterior, folded, go)  # type: ignore[method-assign]
    _record_while_paused(ws, lambda: exporter.export_gptme(ws / STATE_REL), folded, go)
    assert file_git(ws)[2] == 2  # s1 and s2 each injected git


def test_a_copy_kept_by_status_is_never_older_than_the_file(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`status` read our file (no copy of it: one written before copies were kept) and was about to keep
    its copy when a hook's `record` of s2 wrote its own copy and file. Before, status's copy of the file
    it had read replaced the record's: gptme's next update then counted s2's selection of git as its
    own (git n 4 instead of 3). The copy is kept under the writers' lock, only of the file as it is."""
    from lesson_credit.core.derived_state import check_state
    from lesson_credit.core.workspace import Workspace

    shutil.rmtree(ws / COPIES_REL)
    reader, recorder = Workspace(ws), Workspace(ws)
    written = reader._kept

    def record_meanwhile(state: dict[str, Any]) -> Any:
        found = written(state)
        recorder.record("s2", ws / "j.txt", [GIT], reward=1.0)  # between status's read of the file and its copy
        return found

    reader._kept = record_meanwhile  # type: ignore[method-assign]
    check_state(reader)
    gptme_update(ws)
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "increments" in err, err
    assert file_git(ws)[2] == 3  # s1, s2 and gptme's one session
    assert status_git(capsys, ws)[2] == 3


def test_gptme_s_update_during_our_rewrite_is_logged_not_overwritten(ws: Path) -> None:
    """gptme's bandit saved its update of the file while a `grade` folded the log for its rewrite (gptme
    takes no lock of ours). Before, the rewrite replaced the file gptme had just saved: gptme's session
    was in neither the file nor the log. The rewrite now finds the file changed since it read it and
    starts over, so the update is logged as increments and the file follows the log."""
    from lesson_credit.core.workspace import Workspace

    writer = Workspace(ws)
    own_state = writer._own_state
    updated: list[bytes] = []

    def gptme_saves_meanwhile(existing: dict[str, Any]) -> dict[str, Any]:
        payload = own_state(existing)
        if not updated:
            updated.append(gptme_update(ws))  # after our read of the file, before our replacement of it
        return payload

    writer._own_state = gptme_saves_meanwhile  # type: ignore[method-assign]
    writer.grade("s1", 0.9)
    assert sum(1 for e in events(ws) if e.get("increments")) == 1
    # by hand: Beta(1.9, 1.1) n 1 from s1 (graded 0.9 again: the same), plus gptme's +0.8/+0.2 and one selection
    assert file_git(ws) == pytest.approx((2.7, 1.3, 2))


def test_gptme_saving_during_every_attempt_is_logged_once_per_save(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gptme saves an update during each of a write's three attempts at the file: the write gives up
    with one warning and leaves gptme's file; each save is logged once (the first two by the write, the
    third by the next `status`), never counted again from an older copy."""
    from lesson_credit.core.workspace import Workspace

    writer = Workspace(ws)
    own_state = writer._own_state

    def gptme_saves_meanwhile(existing: dict[str, Any]) -> dict[str, Any]:
        payload = own_state(existing)
        gptme_update(ws)
        return payload

    writer._own_state = gptme_saves_meanwhile  # type: ignore[method-assign]
    appended = writer.append_grade("s1", 0.9)
    assert any("saved again while lesson-credit rewrote it" in line for line in appended.warnings)
    assert sum(1 for e in events(ws) if e.get("increments")) == 2
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "increments" in err, err
    assert sum(1 for e in events(ws) if e.get("increments")) == 3
    # by hand: Beta(1.9, 1.1) n 1 from s1, plus three of gptme's +0.8/+0.2 and one selection each
    assert file_git(ws) == pytest.approx((4.3, 1.7, 4)) == status_git(capsys, ws)


def test_gptme_s_save_while_we_keep_the_copy_of_our_file_is_logged_not_overwritten(ws: Path) -> None:
    """gptme's bandit saved the file after the rewrite had checked it was unchanged, while it kept the copy of
    the file about to be written (an fsync'd write of its own): before, the rewrite then replaced gptme's file,
    and its session was in neither the file nor the log. The file is now checked right before it is replaced."""
    from lesson_credit.core.workspace import Workspace

    writer = Workspace(ws)
    keep_written = writer._keep_written
    updated: list[bytes] = []

    def gptme_saves_meanwhile(payload: dict[str, Any]) -> None:
        keep_written(payload)
        if not updated:
            updated.append(gptme_update(ws))

    writer._keep_written = gptme_saves_meanwhile  # type: ignore[method-assign]
    writer.grade("s1", 0.9)
    assert sum(1 for e in events(ws) if e.get("increments")) == 1
    # by hand: Beta(1.9, 1.1) n 1 from s1 (graded 0.9 again: the same), plus gptme's +0.8/+0.2 and one selection
    assert file_git(ws) == pytest.approx((2.7, 1.3, 2))


def test_gptme_s_save_while_we_log_its_earlier_one_is_logged_not_overwritten(ws: Path) -> None:
    """gptme saved an update (not logged yet); a `grade` logs it as increments and keeps a copy of that file,
    and gptme saves a second update meanwhile. Before, the rewrite took the file as it then was (with the
    second save) for the one it had read, and replaced it: the second session was in neither the file nor
    the log. The rewrite now compares with the file it logged the increments of, finds it changed, and
    starts over: both are logged."""
    from lesson_credit.core.workspace import Workspace

    gptme_update(ws)
    writer = Workspace(ws)
    keep_written = writer._keep_written
    updated: list[bytes] = []

    def gptme_saves_again(payload: dict[str, Any]) -> None:
        keep_written(payload)
        if not updated:  # the copy kept as the first update is logged: gptme saves its second
            updated.append(gptme_update(ws))

    writer._keep_written = gptme_saves_again  # type: ignore[method-assign]
    writer.grade("s1", 0.9)
    assert sum(1 for e in events(ws) if e.get("increments")) == 2
    # by hand: Beta(1.9, 1.1) n 1 from s1, plus two of gptme's +0.8/+0.2 and one selection each
    assert file_git(ws) == pytest.approx((3.5, 1.5, 3))


def test_gptme_s_save_while_an_export_logs_its_earlier_one_is_not_replaced(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As above, for `export-gptme` onto the own file: gptme's first update logged (its copy kept), its second
    saved meanwhile. Before, the export compared with the file as it was after that second save and
    replaced it; it now refuses in one line and leaves gptme's file; run again, it logs the second update."""
    from lesson_credit.core.base.errors import UserError
    from lesson_credit.core.workspace import Workspace

    gptme_update(ws)
    writer = Workspace(ws)
    keep_written = writer._keep_written
    updated: list[bytes] = []

    def gptme_saves_again(payload: dict[str, Any]) -> None:
        keep_written(payload)
        if not updated:
            updated.append(gptme_update(ws))

    writer._keep_written = gptme_saves_again  # type: ignore[method-assign]
    with pytest.raises(UserError, match="saved by another tool"):
        writer.export_gptme(ws / STATE_REL)
    assert file_git(ws) == pytest.approx((3.5, 1.5, 3))  # gptme's file: Beta(1.9, 1.1) n 1, two +0.8/+0.2
    code, _, err = run(capsys, "export-gptme", str(ws / STATE_REL), "--workspace", str(ws))
    assert code == 0 and "increments" in err, err
    assert status_git(capsys, ws) == pytest.approx((3.5, 1.5, 3)) == file_git(ws)


def test_gptme_s_save_while_we_export_onto_the_own_file_is_not_replaced(
    ws: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gptme's bandit saved the own file while `export-gptme` onto it was writing (after it had logged any
    earlier update of gptme's, while it kept the copy of the new file): the export replaced it, and gptme's
    session was lost. It now says so in one line and leaves gptme's file; run again, it logs the update."""
    from lesson_credit.core.base.errors import UserError
    from lesson_credit.core.workspace import Workspace

    writer = Workspace(ws)
    keep_written = writer._keep_written

    def gptme_saves_meanwhile(payload: dict[str, Any]) -> None:
        keep_written(payload)
        gptme_update(ws)

    writer._keep_written = gptme_saves_meanwhile  # type: ignore[method-assign]
    with pytest.raises(UserError, match="saved by another tool"):
        writer.export_gptme(ws / STATE_REL)
    assert file_git(ws) == pytest.approx((2.7, 1.3, 2))  # gptme's file: Beta(1.9, 1.1) n 1, plus +0.8/+0.2
    code, _, err = run(capsys, "export-gptme", str(ws / STATE_REL), "--workspace", str(ws))
    assert code == 0 and "increments" in err, err
    assert status_git(capsys, ws) == pytest.approx((2.7, 1.3, 2)) == file_git(ws)


def test_gptme_s_save_caught_between_emptying_the_file_and_writing_it_is_logged_not_lost(
    ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """gptme's bandit saves with `write_text`: the file is emptied when opened, then written. A rewrite of
    ours that found it empty replaced it, and gptme's text then went to the file no longer there: its session
    was in neither the file nor the log. An empty file (or half a JSON object) is read again a moment later
    before it is replaced: gptme's save, done by then, is logged."""
    from lesson_credit.core.bandit import saving as save_check
    from lesson_credit.core.workspace import Workspace

    path = ws / STATE_REL
    ours = path.read_bytes()
    theirs = gptme_update(ws)  # the text gptme's save writes (git +0.8/+0.2, one selection)
    path.write_bytes(ours)
    handle = path.open("w")  # gptme's save has opened (emptied) the file, not written it yet

    def gptme_finishes() -> None:
        if not handle.closed:
            handle.write(theirs.decode())
            handle.close()

    monkeypatch.setattr(save_check, "_wait_for_save", gptme_finishes)
    Workspace(ws).grade("s1", 0.9)
    gptme_finishes()  # (at the latest now, wherever its file is)
    # by hand: Beta(1.9, 1.1) n 1 from s1 (graded 0.9 again: the same), plus gptme's +0.8/+0.2 and one selection
    assert status_git(capsys, ws) == pytest.approx((2.7, 1.3, 2)) == file_git(ws)
    assert sum(1 for e in events(ws) if e.get("increments")) == 1


def test_an_export_onto_a_file_gptme_is_saving_leaves_gptme_s_save(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export-gptme` onto another bandit's file that its gptme bandit empties to save it (`write_text`) while
    the export writes: the export replaced it, and gptme's text went to the file no longer there. Read again a
    moment later, the save is seen: the export is refused in one line and gptme's file left as it saved it. (A
    file found being saved before the export reads it is refused for now: tests/cli/test_slow_save.py.)"""
    from lesson_credit.core.bandit import saving as save_check
    from lesson_credit.core.workspace.gptme_files import GptmeFiles

    other = tmp_path / "agent" / "bandit-state.json"
    other.parent.mkdir()
    other.write_text(json.dumps({"arms": {}, "total_sessions": 1, "created": "2026-01-01T00:00:00+00:00"}) + "\n")
    theirs = json.dumps({"arms": {}, "total_sessions": 2, "created": "2026-01-01T00:00:00+00:00"}) + "\n"
    opened: list[Any] = []
    fresh_state = GptmeFiles._fresh_state

    def gptme_starts_saving(self: GptmeFiles, style: dict[str, Any]) -> dict[str, Any]:
        opened.append(other.open("w"))  # the export has read the file; gptme's save opens (empties) it
        return fresh_state(self, style)

    def gptme_finishes() -> None:
        for handle in opened:
            if not handle.closed:
                handle.write(theirs)
                handle.close()

    monkeypatch.setattr(GptmeFiles, "_fresh_state", gptme_starts_saving)
    monkeypatch.setattr(save_check, "_wait_for_save", gptme_finishes)
    code, _, err = run(capsys, "export-gptme", "--workspace", str(ws), str(other))
    gptme_finishes()  # (at the latest now, wherever its file is)
    assert opened and code == 1 and "saved by another tool" in err and len(err.strip().splitlines()) == 1, err
    assert other.read_text() == theirs
