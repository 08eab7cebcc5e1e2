"""gptme's bandit loading and saving bandit-state.json between our commands, as a model: whatever the
order (loads long before saves, several of our writes in between, rewards equal to ours), every
session of ours and every session gptme saved and our next command saw is counted exactly once.

gptme's bandit takes no lock of ours: it loads the file, and later saves what it loaded plus its
session. A save over a file that another save of gptme's replaced meanwhile loses that save (gptme's
own race, nothing we can see), so the model has our next command see each save before gptme saves again.
Besides the one load waiting at a time, a second process may hold an earlier load (gptme-sessions loads at a
session's start and saves at its end: two overlapping sessions save two files grown from one load) and save its
session from it later, after other saves of that load were logged and our writes replaced the file. Each update is
stamped as gptme's clock stamps it (to the microsecond). The truth is a hand fold: each session of ours credits the
one lesson with weight 1 (salience 1), adding (r, 1 - r) and one selection; each of gptme's adds its own.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from lesson_credit.core.derived_state import repair_state
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import STATE_REL, machine_settings, make_workspace, session

GIT = "tools/git.md"
REWARDS = st.sampled_from([0.0, 0.5, 0.8, 1.0])  # 0.8 and 1.0 both: a save of gptme's can equal ours
PENDING = 40  # sessions of ours waiting for a grade (more than the steps of a run)


class GptmeSaves(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        events = [session(f"s{i:02d}", None, {GIT: 1.0}) for i in range(PENDING)]
        self.root = make_workspace(Path(self.tmp.name), {GIT: (["git"], "active")}, events=events)
        Workspace(self.root).write_state()
        self.graded = 0
        self.truth = [1.0, 1.0, 0, 0]  # alpha, beta, selections, sessions
        self.loaded: dict[str, Any] | None = None  # what gptme loaded and has not saved yet
        self.earlier: dict[str, Any] | None = None  # a second process's load, held past other saves
        self.earlier_sessions: list[float] = []  # the rewards of its sessions not saved yet
        self.unseen = False  # a save of gptme's that no command of ours has read yet
        self.clock = 0  # gptme's stamps: one microsecond more each update

    def teardown(self) -> None:
        self.tmp.cleanup()

    def _add(self, reward: float) -> None:
        self.truth = [self.truth[0] + reward, self.truth[1] + 1 - reward, self.truth[2] + 1, self.truth[3] + 1]

    @precondition(lambda self: self.graded < PENDING)
    @rule(reward=REWARDS)
    def we_grade(self, reward: float) -> None:
        Workspace(self.root).grade(f"s{self.graded:02d}", reward)
        self.graded += 1
        self._add(reward)
        self.unseen = False

    @rule()
    def we_read(self) -> None:
        repair_state(Workspace(self.root))  # what `status` does to the file
        self.unseen = False

    @precondition(lambda self: self.loaded is None and not self.unseen)
    @rule()
    def gptme_loads(self) -> None:
        self.loaded = json.loads((self.root / STATE_REL).read_text())

    @precondition(lambda self: self.loaded is not None and not self.unseen)
    @rule(reward=REWARDS)
    def gptme_saves(self, reward: float) -> None:
        assert self.loaded is not None
        self._save(self.loaded, [reward])
        self.loaded, self.unseen = None, True

    @precondition(lambda self: self.earlier is None and not self.unseen)
    @rule()
    def second_process_loads(self) -> None:
        self.earlier = json.loads((self.root / STATE_REL).read_text())

    @precondition(lambda self: self.earlier is not None and not self.unseen)
    @rule(reward=REWARDS)
    def second_process_saves(self, reward: float) -> None:
        """The second process saves its session from the earlier load, after any saves and writes meanwhile."""
        assert self.earlier is not None
        self._save(self.earlier, [reward])
        self.earlier, self.unseen = None, True

    def _save(self, loaded: dict[str, Any], rewards: list[float]) -> None:
        """gptme's `update` of git by each reward on what it `loaded`, then `save` (the last)."""
        arms = loaded["arms"]
        arm = arms.setdefault(GIT, {"arm_id": GIT, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                    "total_rewards": 0, "last_updated": ""})  # fmt: skip
        for reward in rewards:
            self.clock += 1
            arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward)
            arm["total_selections"] += 1
            arm["total_rewards"] += int(reward > 0.5)
            arm["last_updated"] = f"2026-12-07T12:00:00.{self.clock:06d}+00:00"
            loaded["total_sessions"] += 1
            loaded["last_updated"] = arm["last_updated"]
            self._add(reward)
        saved = {key: loaded[key] for key in ("arms", "total_sessions", "created", "last_updated")}
        (self.root / STATE_REL).write_text(json.dumps(saved, indent=2) + "\n")

    @invariant()
    def every_session_counted_once(self) -> None:
        if not hasattr(self, "root") or self.unseen:
            return
        ws = Workspace(self.root)
        post = ws.posterior()
        j = post.arm_ids.index(GIT)
        got = [float(post.alpha[j]), float(post.beta[j]), int(post.n[j]), int(post.total_sessions)]
        assert got == pytest.approx(self.truth)
        state = json.loads((self.root / STATE_REL).read_text())  # the file follows the log again
        arm = state["arms"][GIT]
        on_file = [arm["alpha"], arm["beta"], arm["total_selections"], state["total_sessions"]]
        assert on_file == pytest.approx(self.truth)


GptmeSaves.TestCase.settings = machine_settings(40, 14)
test_gptme_saves_between_our_commands_count_each_session_once = pytest.mark.long(GptmeSaves.TestCase)
