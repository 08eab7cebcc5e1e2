"""gptme's bandit saves bandit-state.json with `write_text`: the file is emptied when opened, then written. A save
paused between the two (longer than the moment lesson-credit waits for it) was replaced by our rewrite, and
gptme's text then went to the file no longer there: its session in neither the file nor the log. A file found
empty or half-written whose time is recent is a save in progress: never replaced, the rewrite left to the next
command, an export or an import refused for now (exit 75). One that old is a crashed save, replaced.

Each file being saved is made by hand (opened for writing, as `write_text` opens it) and its time set with
os.utime: a time ahead of the clock is recent by rule (clock skew on a shared disk), an hour ago is old."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

import lesson_credit.core.bandit.saving as save_rule
from tests.support.cli_run import run
from tests.support.engine_helpers import LOG_REL, STATE_REL
from tests.support.git_arm import GIT, events, file_git, graded_workspace, status_git

TEMPFAIL = 75


@pytest.fixture
def ws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    return graded_workspace(tmp_path, capsys)  # git Beta(1.9, 1.1) n 1


def gptme_text(path: Path) -> str:
    """What gptme's bandit saves after loading `path`: one session, git not rewarded (beta + 1, one selection),
    its own keys only (our stamp dropped, our `created` kept)."""
    state = json.loads(path.read_text())
    arm = state["arms"][GIT]
    arm["beta"] += 1.0
    arm["total_selections"] += 1
    saved = {key: state[key] for key in ("arms", "created")}
    saved.update(total_sessions=state["total_sessions"] + 1, last_updated="2026-10-30T12:00:00+00:00")
    return json.dumps(saved, indent=2) + "\n"


@pytest.fixture
def saving() -> Iterator[Callable[[Path, float], IO[str]]]:
    """gptme's save caught half-way: `path` opened for writing (emptied), its time set `ago` seconds back
    (negative: ahead of the clock). Whatever is left open is closed at the end."""
    opened: list[IO[str]] = []

    def start(path: Path, ago: float) -> IO[str]:
        handle = path.open("w")
        when = time.time() - ago
        os.utime(path, (when, when))
        opened.append(handle)
        return handle

    yield start
    for handle in opened:
        handle.close()


AHEAD = -60.0  # a minute ahead of this clock: recent whatever the window
OLD = 3600.0  # an hour ago: a save that crashed half-way


@pytest.fixture
def short_window(monkeypatch: pytest.MonkeyPatch) -> float:
    """An export or an import waits out a save in progress up to the window: 0.2 s here, not 5 s."""
    monkeypatch.setattr(save_rule, "SAVE_WINDOW_S", 0.2)
    return 0.2


def test_a_grade_leaves_a_file_being_saved_to_gptme_and_the_next_command_logs_its_session(
    ws: Path, capsys: pytest.CaptureFixture[str], saving: Callable[[Path, float], IO[str]]
) -> None:
    path = ws / STATE_REL
    theirs = gptme_text(path)
    handle = saving(path, AHEAD)
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    said = [line for line in err.splitlines() if line.strip()]
    assert code == 0 and len(said) == 1 and "left to" in said[0] and "next command" in said[0], err
    assert path.read_bytes() == b""  # not replaced: gptme's save still writes this file
    assert events(ws)[-1]["type"] == "grade"  # the grade is logged
    handle.write(theirs)  # gptme's save lands
    handle.close()
    # by hand: s1 regraded 0.5 -> Beta(1.5, 1.5) n 1; gptme's session (git not rewarded): beta + 1, one selection
    assert status_git(capsys, ws) == pytest.approx((1.5, 2.5, 2))
    assert file_git(ws) == pytest.approx((1.5, 2.5, 2))
    assert [e["arms"] for e in events(ws) if e.get("increments")] == [
        {GIT: {"alpha": 0.0, "beta": 1.0, "n": 1, "rewards": 0}}
    ]
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))  # once: nothing more logged or said
    assert code == 0 and "bandit-state.json" not in err, err
    assert sum(1 for e in events(ws) if e.get("increments")) == 1
    assert status_git(capsys, ws) == pytest.approx((1.5, 2.5, 2)) == file_git(ws)


def test_a_file_emptied_by_a_save_that_crashed_long_ago_is_replaced(
    ws: Path, capsys: pytest.CaptureFixture[str], saving: Callable[[Path, float], IO[str]]
) -> None:
    saving(ws / STATE_REL, OLD).close()  # emptied an hour ago, never written
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0 and "bandit-state.json" not in err, err
    assert file_git(ws) == pytest.approx((1.5, 1.5, 1))  # s1 regraded 0.5 from Beta(1, 1)


def test_status_leaves_a_file_being_saved_and_says_so(
    ws: Path, capsys: pytest.CaptureFixture[str], saving: Callable[[Path, float], IO[str]]
) -> None:
    path = ws / STATE_REL
    handle = saving(path, AHEAD)
    handle.write('{\n  "arms": {')  # half-written
    handle.flush()
    code, _, err = run(capsys, "status", "--workspace", str(ws))
    assert code == 0 and "left to" in err, err
    assert path.read_text() == '{\n  "arms": {'


@pytest.mark.parametrize("own", [True, False])
@pytest.mark.usefixtures("short_window")
def test_an_export_onto_a_file_being_saved_is_refused_for_now_and_changes_nothing(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], saving: Callable[[Path, float], IO[str]], own: bool
) -> None:
    """Its time ahead of the clock: still a save in progress once the wait is over."""
    target = ws / STATE_REL
    if not own:
        target = tmp_path / "agent" / "bandit-state.json"
        target.parent.mkdir()
        target.write_text(json.dumps({"arms": {}, "total_sessions": 0}))
    saving(target, AHEAD)
    log = (ws / LOG_REL).read_bytes()
    code, out, err = run(capsys, "export-gptme", str(target), "--workspace", str(ws))
    assert (code, out) == (TEMPFAIL, ""), err
    assert len(err.strip().splitlines()) == 1 and "may be saving it" in err and "nothing exported" in err, err
    assert "s ahead of this clock (left so until then: delete it" in err, err  # how long, and how to end it
    assert target.read_bytes() == b"" and (ws / LOG_REL).read_bytes() == log


def test_an_export_onto_a_file_emptied_long_ago_replaces_it(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], saving: Callable[[Path, float], IO[str]]
) -> None:
    target = tmp_path / "gptme.json"
    saving(target, OLD).close()
    code, _, err = run(capsys, "export-gptme", str(target), "--workspace", str(ws))
    assert code == 0, err
    assert json.loads(target.read_text())["arms"][GIT]["alpha"] == pytest.approx(1.9)  # s1 at 0.9: 1 + 0.9


@pytest.mark.usefixtures("short_window")
def test_an_import_of_a_file_being_saved_is_refused_for_now(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], saving: Callable[[Path, float], IO[str]]
) -> None:
    other = tmp_path / "agent.json"
    other.write_text(json.dumps({"arms": {GIT: {"alpha": 3.0, "beta": 1.0, "total_selections": 2}}}))
    handle = saving(other, AHEAD)
    handle.write('{"arms": {')
    handle.flush()
    os.utime(other, (time.time() - AHEAD, time.time() - AHEAD))  # (the write set it to now: ahead again)
    log = (ws / LOG_REL).read_bytes()
    code, _, err = run(capsys, "import-gptme", str(other), "--workspace", str(ws))
    assert code == TEMPFAIL and len(err.strip().splitlines()) == 1 and "nothing imported" in err, err
    assert (ws / LOG_REL).read_bytes() == log


@pytest.mark.usefixtures("short_window")
def test_an_export_onto_an_empty_file_just_made_waits_until_it_is_old_and_writes_it(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`export-gptme "$(mktemp)"`: the file is empty and new, as gptme's save caught half-way is; once no save has
    written it within the window it is written over (it was refused, exit 75, for those seconds)."""
    target = tmp_path / "tmp.k3J9xq"
    target.write_bytes(b"")  # made just now
    code, _, err = run(capsys, "export-gptme", str(target), "--workspace", str(ws))
    said = [line for line in err.splitlines() if line.strip()]
    assert code == 0 and len(said) == 1 and "waited 0." in said[0] and "then wrote it" in said[0], err
    assert json.loads(target.read_text())["arms"][GIT]["alpha"] == pytest.approx(1.9)  # s1 at 0.9: 1 + 0.9


def test_an_import_of_a_file_being_saved_imports_the_save_once_it_lands(
    ws: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    saving: Callable[[Path, float], IO[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The import waits for the save (no lock held) and logs what it saved (it was refused, exit 75)."""
    other = tmp_path / "agent.json"
    handle = saving(other, AHEAD)
    real_wait = save_rule._wait_for_save
    waits = []

    def lands() -> None:  # gptme's write_text writes its text while we wait, later than the settle's 20 ms
        waits.append(1)
        if len(waits) == 3:
            handle.write(json.dumps({"arms": {GIT: {"alpha": 3.0, "beta": 1.0, "total_selections": 2}}}))
            handle.close()
        real_wait()

    monkeypatch.setattr(save_rule, "_wait_for_save", lands)
    code, _, err = run(capsys, "import-gptme", str(other), "--workspace", str(ws))
    assert code == 0 and len(waits) >= 3 and "then read it" in err, err
    # the other bandit's file counted from Beta(1, 1): git +2 / +0 over 2 sessions, as a prior event
    (prior,) = [e for e in events(ws) if e["type"] == "prior"]
    assert prior["arms"][GIT]["alpha"] == pytest.approx(3.0) and prior["arms"][GIT]["beta"] == pytest.approx(1.0)


def test_a_save_that_opens_the_file_right_before_our_rename_is_logged_not_lost(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the last look at the file, before the rename: gptme's save opens (empties) the file we are about to
    replace, and writes it once the rename is done. Its text went to the file no longer there."""
    path = ws / STATE_REL
    theirs = gptme_text(path)
    rename = os.replace
    done: list[bool] = []

    def gptme_opens_meanwhile(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(dst) != path.resolve() or done:
            return rename(src, dst, *args, **kwargs)
        done.append(True)
        with path.open("w") as handle:  # emptied: the file is being saved
            rename(src, dst, *args, **kwargs)
            handle.write(theirs)  # its write lands on the file it opened
        return None

    monkeypatch.setattr(os, "replace", gptme_opens_meanwhile)
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0 and done, err
    # by hand: s1 regraded 0.5 -> Beta(1.5, 1.5) n 1; gptme's session (git not rewarded): beta + 1, one selection
    assert status_git(capsys, ws) == pytest.approx((1.5, 2.5, 2)) == file_git(ws)
    assert sum(1 for e in events(ws) if e.get("increments")) == 1


def test_gptme_s_first_save_made_right_before_ours_is_never_replaced(
    ws: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No file at the name when we last looked: gptme's first save makes it before our new file is put there. A
    rename replaced it (its session lost); the new file is linked there only while the name is free."""
    path = ws / STATE_REL
    path.unlink()
    theirs: dict[str, Any] = {
        "arms": {GIT: {"arm_id": GIT, "alpha": 1.0, "beta": 2.0, "total_selections": 1, "total_rewards": 0}}
    }
    theirs.update(total_sessions=1, created="2026-10-30T12:00:00+00:00", last_updated="2026-10-30T12:00:00+00:00")
    text = json.dumps(theirs, indent=2) + "\n"
    made: list[bool] = []

    def gptme_saves_first(real: Callable[..., None]) -> Callable[..., None]:
        def put(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
            if Path(dst) == path.resolve() and not made:
                made.append(True)
                path.write_text(text)
            real(src, dst, *args, **kwargs)

        return put

    monkeypatch.setattr(os, "link", gptme_saves_first(os.link))
    monkeypatch.setattr(os, "replace", gptme_saves_first(os.replace))
    code, _, err = run(capsys, "grade", "s1", "0.5", "--workspace", str(ws))
    assert code == 0 and made, err
    assert path.read_text() == text and "left as it is" in err, err  # kept, as any file the log cannot tell apart


def test_a_save_that_opens_another_bandits_file_right_before_an_export_renames_is_put_back(
    ws: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`export-gptme` onto another bandit's file: gptme's save there opens (empties) it after the export's last look
    and writes once the export's file is renamed over it. Its text is put back and the export refused in one line."""
    target = tmp_path / "agent" / "bandit-state.json"
    target.parent.mkdir()
    target.write_text(json.dumps({"arms": {}, "total_sessions": 0}) + "\n")
    theirs = json.dumps({"arms": {}, "total_sessions": 1}) + "\n"  # (a session it counted)
    rename = os.replace
    done: list[bool] = []

    def gptme_opens_meanwhile(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        if Path(dst) != target.resolve() or done:
            return rename(src, dst, *args, **kwargs)
        done.append(True)
        with target.open("w") as handle:
            rename(src, dst, *args, **kwargs)
            handle.write(theirs)
        return None

    monkeypatch.setattr(os, "replace", gptme_opens_meanwhile)
    code, _, err = run(capsys, "export-gptme", str(target), "--workspace", str(ws))
    assert done and code == 1 and len(err.strip().splitlines()) == 1 and "saved by another tool" in err, err
    assert target.read_text() == theirs


def test_lint_says_a_file_being_saved_is_being_saved_not_damaged(
    ws: Path, capsys: pytest.CaptureFixture[str], saving: Callable[[Path, float], IO[str]]
) -> None:
    saving(ws / STATE_REL, AHEAD)
    code, out, err = run(capsys, "lint", "--workspace", str(ws), "--json")
    (found,) = [f for f in json.loads(out)["findings"] if f["code"] == "stale-bandit-state"]
    assert "may be saving it" in found["message"] and "not valid JSON" not in found["message"], found
