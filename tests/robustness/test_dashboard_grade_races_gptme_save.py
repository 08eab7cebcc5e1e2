"""The dashboard grading while gptme's bandit saves bandit-state.json: a scripted interleaving. The dashboard's writer
(`WriteQueue.apply` through `WorkspaceSource`, as the app's writer thread runs it) grades a session, and gptme's bandit
saves the file at one moment inside that write: before the k-th look the write takes at the file (each read of its
bytes, the rename's checks included) or right before its rename, every k in turn. gptme's save is `write_text` of what
it loaded (the file as it is then, or as it was before the grade: a process that loaded earlier) plus one session;
gptme-sessions takes no lock of ours. Whatever the moment, once the next `status` has run, the grade is in the log and
gptme's session is counted exactly once: in the log's numbers and the file's, and in total_sessions.

The truth is a hand fold: git starts at Beta(1, 1) with no session; the dashboard's grade r of s0 (git salience 1:
w = 1, seed: alpha + r, beta + 1 - r, one selection, one session) and gptme's update g (alpha + g, beta + 1 - g, one
selection, one session)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import lesson_credit.core.bandit.saving as save_rule
from lesson_credit.core.derived_state import repair_state
from lesson_credit.core.workspace import Workspace
from lesson_credit.tui.source import WorkspaceSource
from lesson_credit.tui.writes import WriteQueue
from tests.support.engine_helpers import STATE_REL, make_workspace, session

GIT = "tools/git.md"
GPTME_STAMP = "2026-12-07T12:00:00.000001+00:00"  # gptme's clock: its aware isoformat, to the microsecond
MOMENTS = 5  # looks at the file a grade's write takes (3: two before the rename, one in it), and past the last


def gptme_text(loaded: dict[str, Any], reward: float) -> str:
    """What gptme-sessions' `Bandit.update([git], reward)` on what it `loaded`, then `save`, writes: its own keys."""
    state = json.loads(json.dumps(loaded))
    arm = state["arms"].setdefault(GIT, {"arm_id": GIT, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                         "total_rewards": 0, "last_updated": ""})  # fmt: skip
    arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1.0 - reward, last_updated=GPTME_STAMP)
    arm["total_selections"] += 1
    arm["total_rewards"] += int(reward > 0.5)
    state["total_sessions"] += 1
    state["last_updated"] = GPTME_STAMP
    saved = {key: state[key] for key in ("arms", "total_sessions", "created", "last_updated")}
    return json.dumps(saved, indent=2) + "\n"


def dashboard_grades(root: Path, session_id: str, reward: float) -> str:
    """The dashboard's writer applying one grade typed on `session_id` (tui/writes.py)."""
    queue = WriteQueue()
    queue.commit(session_id, reward, None, shown=None)
    assert queue.start_draining()
    write = queue.take()
    assert write is not None
    return queue.apply(WorkspaceSource(Workspace(root)), write).message


def at_moment(
    monkeypatch: pytest.MonkeyPatch, path: Path, moment: int, save: Callable[[], None], rename: bool
) -> list[int]:
    """gptme's `save()` before the `moment`-th look at the file at `path` (its bytes read through a descriptor), or,
    with `rename`, before our rename onto it; returns the looks counted (the moment passed when it holds it)."""
    looks: list[int] = []
    read_fd, replace = save_rule._read_fd, os.replace

    def looking(fd: int) -> Any:
        if not rename and len(looks) == moment and os.path.samestat(os.fstat(fd), os.stat(path)):
            save()
        looks.append(1)
        return read_fd(fd)

    def renaming(src: Any, dst: Any, *args: Any, **kwargs: Any) -> Any:
        if rename and not looks[-1:] == [2] and Path(dst) == path.resolve():
            looks.append(2)
            save()
        return replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(save_rule, "_read_fd", looking)
    monkeypatch.setattr(os, "replace", renaming)
    return looks


@pytest.mark.parametrize("slow", [False, True], ids=["whole", "slow"])
@pytest.mark.parametrize("earlier", [False, True], ids=["loads-then", "loaded-before"])
@pytest.mark.parametrize("rewards", [(1.0, 1.0), (0.0, 1.0)], ids=["alike", "unlike"])
@pytest.mark.parametrize("moment", [*range(MOMENTS), -1], ids=[*map(str, range(MOMENTS)), "rename"])
def test_a_grade_racing_gptmes_save_loses_nothing_and_counts_nothing_twice(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    moment: int,
    rewards: tuple[float, float],
    earlier: bool,
    slow: bool,
) -> None:
    """`slow`: gptme's `write_text` empties the file at that moment and writes it the next time the write waits for a
    save in progress to land (core/bandit/saving.py: it waits up to SAVE_WINDOW_S), else once the grade is done
    (the grade leaves the file being saved to it, with a warning; the next `status` logs that save)."""
    root = make_workspace(tmp_path, {GIT: (["git"], "active")}, events=[session("s0", None, {GIT: 1.0})])
    Workspace(root).write_state()
    path = root / STATE_REL
    before = json.loads(path.read_text())
    ours, theirs = rewards
    saved: list[str] = []
    opened: list[Any] = []

    def save() -> None:
        if not saved:
            saved.append(gptme_text(before if earlier else json.loads(path.read_text()), theirs))
            opened.append(path.open("w"))  # emptied
            if not slow:
                opened.pop().write(saved[0])

    def lands() -> None:  # (a slow save's text lands while the write waits for it: within the save window)
        for handle in opened:
            handle.write(saved[0])
            handle.close()
        opened.clear()

    monkeypatch.setattr(save_rule, "_wait_for_save", lands)
    at_moment(monkeypatch, path, moment, save, rename=moment < 0)
    assert dashboard_grades(root, "s0", ours).startswith("Saved grade")
    monkeypatch.undo()
    if not saved:  # (the write took fewer looks: gptme saves after it)
        save()
    lands()  # (a slow save the write did not wait for lands after it)
    repair_state(Workspace(root))  # the next `status`
    truth = [1.0 + ours + theirs, 1.0 + (1.0 - ours) + (1.0 - theirs), 2, 2]
    post = Workspace(root).posterior()
    j = post.arm_ids.index(GIT)
    assert [float(post.alpha[j]), float(post.beta[j]), int(post.n[j]), int(post.total_sessions)] == pytest.approx(truth)
    state = json.loads(path.read_text())
    arm = state["arms"][GIT]
    assert [arm["alpha"], arm["beta"], arm["total_selections"], state["total_sessions"]] == pytest.approx(truth)
