"""gptme's bandit saving bandit-state.json with `write_text` (the file emptied, then written) and stopped in between for
longer than the save window (core/bandit/saving.py SAVE_WINDOW_S: a process suspended there, a machine put to sleep):
our next write takes the file for a save that crashed half-way and replaces it, and the save, when it goes on, writes
its text to the file replaced. That file keeps another name (`.cache/bandit-state-half-saved`), so the save is found
there: put back at the file's name by the next command while the file there is as we wrote it (then logged as any
save of the file it loaded), else kept there and said, with what to do. Before, the save was lost.

The truth is a hand fold: git starts at Beta(1, 1); each session (ours: git salience 1, w = 1, seed; gptme's update)
adds r to alpha, 1 - r to beta, one selection and one session."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import IO, Any

import pytest

from lesson_credit.core.bandit.saving import SAVE_WINDOW_S
from lesson_credit.core.derived_state import repair_state
from lesson_credit.core.workspace import Workspace
from tests.robustness.test_dashboard_grade_races_gptme_save import gptme_text
from tests.support.cli_run import run
from tests.support.engine_helpers import STATE_REL, make_workspace, session

GIT = "tools/git.md"
ASIDE = STATE_REL.parent / ".cache" / "bandit-state-half-saved"


def numbers(root: Path) -> tuple[list[float], list[float]]:
    """git's alpha, beta, selections and the session count: in the log, and in the file."""
    post = Workspace(root).posterior()
    j = post.arm_ids.index(GIT)
    logged = [float(post.alpha[j]), float(post.beta[j]), int(post.n[j]), int(post.total_sessions)]
    state = json.loads((root / STATE_REL).read_text())
    arm = state["arms"][GIT]
    return logged, [arm["alpha"], arm["beta"], arm["total_selections"], state["total_sessions"]]


def paused_save(root: Path) -> tuple[dict[str, Any], IO[str]]:
    """gptme loads the file and starts saving it: emptied, the text not written yet, and stopped there past the save
    window (its time set back). What it loaded, and the open file its text goes to when it goes on."""
    path = root / STATE_REL
    loaded = json.loads(path.read_text())
    handle = path.open("w")
    then = time.time() - 2 * SAVE_WINDOW_S
    os.utime(path, (then, then))
    return loaded, handle


def test_a_save_paused_past_the_window_while_we_replace_the_file_is_put_back_and_logged(tmp_path: Path) -> None:
    """We grade s0 1.0 while gptme's save (git +0.0) is stopped past the window: the grade replaces the emptied file.
    The save then lands; the next `status` puts it back and logs it: git 1 + 1 + 0 = 2, beta 1 + 0 + 1 = 2, n 2, 2
    sessions, in the log and the file (it was lost: Beta(2, 1) n 1, 1 session)."""
    root = make_workspace(tmp_path, {GIT: (["git"], "active")}, events=[session("s0", None, {GIT: 1.0})])
    Workspace(root).write_state()
    loaded, handle = paused_save(root)
    Workspace(root).grade("s0", 1.0)
    handle.write(gptme_text(loaded, 0.0))  # (the save goes on: into the file it opened)
    handle.close()
    said = repair_state(Workspace(root))
    assert said is not None and "put back" in said and "logged as an increments event" in said, said
    logged, on_file = numbers(root)
    assert logged == pytest.approx([2.0, 2.0, 2, 2]) and on_file == pytest.approx([2.0, 2.0, 2, 2])
    assert not (root / ASIDE).exists()
    assert repair_state(Workspace(root)) is None and numbers(root)[0] == pytest.approx([2.0, 2.0, 2, 2])


def test_a_paused_save_landing_after_another_save_is_kept_aside_and_its_import_counts_it_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As above, but a second gptme process saves the file (git +1.0, from our file) before the paused save lands:
    the file is not ours to replace, so the paused save stays where it is, said with what to do. `status` logs the
    second save (git Beta(3, 1) n 2, 2 sessions) and says so; `import-gptme` of the file set aside logs the paused
    save once (git + 0 / + 1: Beta(3, 2) n 3, 3 sessions) and it is forgotten; importing it again logs nothing."""
    root = make_workspace(tmp_path, {GIT: (["git"], "active")}, events=[session("s0", None, {GIT: 1.0})])
    Workspace(root).write_state()
    loaded, handle = paused_save(root)
    Workspace(root).grade("s0", 1.0)
    path = root / STATE_REL
    path.write_text(gptme_text(json.loads(path.read_text()), 1.0))  # (the second process: its stamp as the first's)
    handle.write(gptme_text(loaded, 0.0))
    handle.close()
    code, _, err = run(capsys, "status", "--workspace", str(root))
    assert code == 0 and f"import-gptme {root / ASIDE}" in err, err
    assert numbers(root)[0] == pytest.approx([3.0, 1.0, 2, 2])
    code, _, err = run(capsys, "import-gptme", str(root / ASIDE), "--workspace", str(root))
    assert code == 0, err
    assert numbers(root)[0] == pytest.approx([3.0, 2.0, 3, 3])
    code, _, err = run(capsys, "status", "--workspace", str(root))
    assert code == 0 and "import-gptme" not in err and not (root / ASIDE).exists(), err
    logged, on_file = numbers(root)
    assert logged == pytest.approx([3.0, 2.0, 3, 3]) and on_file == pytest.approx([3.0, 2.0, 3, 3])
