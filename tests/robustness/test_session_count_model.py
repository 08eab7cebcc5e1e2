"""bandit-state.json's `total_sessions` under any order of our records, grades, retractions, undos and regrades,
gptme's bandit loading and saving the file between our commands, the file deleted (derived: written again from
the log), and an export to a second gptme bandit's file that gptme saves sessions to and we import, as a model.
The count is docs/format.md §7's, kept here by hand: every session that was ever graded (a record with a reward,
or a grade with a number; a retraction or an undo after it takes nothing back: gptme's bandit counted it and never
counts back), plus one per save of gptme's (on the own file, or on the exported one once imported). Before, a
grade taken back dropped the log's count below the file's, whose number was kept as a floor, so the next session
recorded added nothing.

As in test_gptme_saves_model.py, one load of gptme's waits at a time and our next command sees each save before
gptme loads again (a save over another save of gptme's loses that one: gptme's own race)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from lesson_credit.core.derived_state import repair_state
from lesson_credit.core.grading import NothingToUndo
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import STATE_REL, machine_settings, make_workspace, session

GIT = "tools/git.md"
PENDING = 6  # sessions logged pending before the run: s0..s5
REWARDS = st.sampled_from([0.0, 0.5, 1.0])
GRADERS = st.sampled_from(["manual", "judge"])  # a person's source and the judge's: two scores of one session
ROWS = st.integers(0, PENDING - 1)


class SessionCount(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        events = [session(f"s{i}", None, {GIT: 1.0}) for i in range(PENDING)]
        journals = {"j.txt": "git\n"}
        self.root = make_workspace(Path(self.tmp.name), {GIT: (["git"], "active")}, events=events, journals=journals)
        Workspace(self.root).write_state()
        self.recorded = PENDING
        self.graded_once: set[str] = set()  # the sessions ever graded
        self.saves = 0  # gptme's
        self.loaded: dict[str, Any] | None = None  # what gptme loaded and has not saved yet
        self.unseen = False  # a save of gptme's that no command of ours has read yet
        self.copy = Path(self.tmp.name) / "elsewhere.json"  # a second gptme bandit's file, exported to
        self.copy_held: int | None = None  # its sessions no import logged yet (None: not exported)
        self.copy_saves = 0

    def teardown(self) -> None:
        self.tmp.cleanup()

    def _ours(self) -> None:
        self.unseen = False  # each command of ours reads the file first (gptme's save logged)

    @rule(reward=st.none() | REWARDS)
    def we_record(self, reward: float | None) -> None:
        session_id = f"n{self.recorded}"
        Workspace(self.root).record(session_id, "j.txt", [GIT], reward=reward)
        self.recorded += 1
        if reward is not None:
            self.graded_once.add(session_id)
        self._ours()

    @rule(row=ROWS, reward=REWARDS, grader=GRADERS)
    def we_grade(self, row: int, reward: float, grader: str) -> None:
        Workspace(self.root).grade(f"s{row}", reward, grader=grader)
        self.graded_once.add(f"s{row}")
        self._ours()

    @rule(row=ROWS, grader=GRADERS)
    def we_retract(self, row: int, grader: str) -> None:
        Workspace(self.root).grade(f"s{row}", None, grader=grader)  # counted as it was
        self._ours()

    @rule(row=ROWS)
    def we_undo(self, row: int) -> None:
        try:  # the dashboard's `u` and `lesson-credit undo`: of a first grade, a retraction
            Workspace(self.root).undo_grade(f"s{row}", grader="manual")
        except NothingToUndo:
            return  # nothing written, the file not read
        self._ours()

    @rule()
    def we_read(self) -> None:
        repair_state(Workspace(self.root))  # what `status` does to the file
        self._ours()

    @precondition(lambda self: not self.unseen and self.loaded is None)
    @rule()
    def file_deleted(self) -> None:
        (self.root / STATE_REL).unlink()  # derived: the next write writes it from the log
        Workspace(self.root).write_state()

    @precondition(lambda self: self.loaded is None and not self.unseen)
    @rule()
    def gptme_loads(self) -> None:
        self.loaded = json.loads((self.root / STATE_REL).read_text())

    @precondition(lambda self: self.loaded is not None)
    @rule(reward=REWARDS, moves_an_arm=st.booleans())
    def gptme_saves(self, reward: float, moves_an_arm: bool) -> None:
        assert self.loaded is not None
        if moves_an_arm:
            arm = self.loaded["arms"][GIT]
            arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward)
            arm["total_selections"] += 1
            arm["total_rewards"] += int(reward > 0.5)
        saved = {key: self.loaded[key] for key in ("arms", "total_sessions", "created", "last_updated")}
        saved["total_sessions"] += 1
        (self.root / STATE_REL).write_text(json.dumps(saved, indent=2) + "\n")
        self.loaded, self.unseen = None, True
        self.saves += 1

    @precondition(lambda self: self.copy_held is None)
    @rule()
    def exported(self) -> None:
        """`export-gptme` to a second gptme bandit's file (logged as an export event)."""
        Workspace(self.root).export_gptme(self.copy)
        self.copy_held = 0  # gptme's sessions on it no import logged yet
        self._ours()

    @precondition(lambda self: self.copy_held is not None)
    @rule(reward=REWARDS, moves_an_arm=st.booleans())
    def gptme_saves_the_copy(self, reward: float, moves_an_arm: bool) -> None:
        assert self.copy_held is not None
        state = json.loads(self.copy.read_text())
        if moves_an_arm:
            arm = state["arms"][GIT]
            arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward)
            arm["total_selections"] += 1
            arm["total_rewards"] += int(reward > 0.5)
            arm["last_updated"] = f"2026-12-07T10:00:00.{self.copy_saves:06d}+00:00"  # (gptme's clock)
        state["total_sessions"] += 1
        self.copy.write_text(json.dumps({k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}))
        self.copy_held += 1
        self.copy_saves += 1

    @precondition(lambda self: self.copy_held is not None)
    @rule()
    def copy_imported(self) -> None:
        assert self.copy_held is not None
        Workspace(self.root).import_gptme(self.copy)  # only what gptme added since the export (or the last import)
        if self.copy_held:  # logged, then the own file written (nothing new: nothing logged, the own file not read)
            self.saves += self.copy_held
            self.copy_held = 0
            self._ours()

    @invariant()
    def every_session_graded_once_counted_once(self) -> None:
        if not hasattr(self, "root") or self.unseen:
            return
        expected = len(self.graded_once) + self.saves
        assert Workspace(self.root).posterior().total_sessions == expected
        assert json.loads((self.root / STATE_REL).read_text())["total_sessions"] == expected


SessionCount.TestCase.settings = machine_settings(40, 16)
test_total_sessions_counts_every_session_graded_once_and_every_gptme_save = pytest.mark.long(SessionCount.TestCase)
