"""A bandit-state.json kept as a save of one load that no rule can take (docs/format.md §7, *Two saves of one load*),
then any order of gptme's saves onto it (each from the file as it is, any arm, any reward), our grades, `status`, an
`export-gptme` onto it (the remedy), and `.cache` deleted: no session is ever counted twice (each arm's alpha, beta and
selections, and the log's sessions, never above the truth: with `.cache` gone, a command may take the kept save for
the other save of its load plus one session, one of its two), and while `.cache` was never deleted every session is
in the log once `status` has run, exactly (the truth then: every session but the one or two of the kept save).

The kept save (tests/cli/test_gptme_two_loads_kept.py `kept_save`): the log holds git and quote Beta(2.9, 1.1) n 2,
3 sessions; the file is P3's save, git twice by 1.0 from the first load. The truth is a hand fold from there: our
grade r of a pending session naming git (salience 1, seed: + r / + 1 - r, one selection, one session), gptme's
update r of an arm (the same, made at Beta(1, 1) when the file lacks it)."""

from __future__ import annotations

import copy
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from lesson_credit.core.workspace import Workspace
from tests.support.cli_run import run_cli
from tests.support.engine_helpers import BASIC_JOURNAL, BASIC_LESSONS, STATE_REL, machine_settings, make_workspace
from tests.support.engine_helpers import session as session_event

GIT, QUOTE, PLAIN = "tools/git.md", "tools/quote.md", "workflow/plain.md"
ARMS = st.sampled_from([GIT, QUOTE, PLAIN])
REWARDS = st.sampled_from([0.0, 1.0])  # (whole: the truth's numbers exact)
PENDING = 20  # sessions of ours waiting for a grade (more than the steps of a run)


def ok(*argv: str) -> None:
    code, _, err = run_cli(*argv)
    assert code == 0, err


def save(root: Path, held: dict[str, Any], reward: float, keys: list[str], stamp: str) -> dict[str, Any]:
    """gptme's `update(keys, reward)` on what it `held`, then `save` (its own keys)."""
    state = copy.deepcopy(held)
    for key in keys:
        arm = state["arms"].setdefault(key, {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                             "total_rewards": 0, "last_updated": ""})  # fmt: skip
        arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1.0 - reward, last_updated=stamp)
        arm["total_selections"] += 1
        arm["total_rewards"] += int(reward > 0.5)
    state["total_sessions"] += 1
    state["last_updated"] = stamp
    saved = {key: state[key] for key in ("arms", "total_sessions", "created", "last_updated")}
    (root / STATE_REL).write_text(json.dumps(saved, indent=2) + "\n")
    return saved


def load(root: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((root / STATE_REL).read_text())
    return loaded


class KeptFile(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        events = [session_event("s1", 0.8, {GIT: 1.0, QUOTE: 1.0})]
        events += [session_event(f"p{i:02d}", None, {GIT: 1.0}) for i in range(PENDING)]
        root = make_workspace(Path(self.tmp.name), BASIC_LESSONS, events=events, journals={"j.txt": BASIC_JOURNAL})
        self.root = root
        self.clock = 0
        ok("grade", "s1", "0.9", "--workspace", str(root))
        p2, p3 = load(root), load(root)
        save(root, load(root), 1.0, [GIT], self._stamp())
        ok("status", "--workspace", str(root))
        save(root, p2, 1.0, [QUOTE], self._stamp())
        ok("status", "--workspace", str(root))
        save(root, save(root, p3, 1.0, [GIT], self._stamp()), 1.0, [GIT], self._stamp())
        ok("status", "--workspace", str(root))
        self.truth = {GIT: [2.9, 1.1, 2], QUOTE: [2.9, 1.1, 2], PLAIN: [1.0, 1.0, 0]}
        self.sessions = 3
        self.kept = ([2.0, 0.0, 2], 2)  # P3's git sessions (+2 / +0, 2 selections; 2 sessions): no rule counts both
        self.graded = 0
        self.cache_lost = False
        self.unseen = False  # a save of gptme's no command of ours has read yet

    def teardown(self) -> None:
        self.tmp.cleanup()

    def _stamp(self) -> str:
        self.clock += 1
        return f"2026-12-07T14:00:00.{self.clock:06d}+00:00"

    def _add(self, key: str, reward: float) -> None:
        alpha, beta, n = self.truth[key]
        self.truth[key] = [alpha + reward, beta + 1.0 - reward, n + 1]
        self.sessions += 1

    @rule(key=ARMS, reward=REWARDS)
    def gptme_saves(self, key: str, reward: float) -> None:
        save(self.root, load(self.root), reward, [key], self._stamp())
        self._add(key, reward)
        self.unseen = True

    @precondition(lambda self: self.graded < PENDING)
    @rule(reward=REWARDS)
    def we_grade(self, reward: float) -> None:
        ok("grade", f"p{self.graded:02d}", str(reward), "--workspace", str(self.root))
        self.graded += 1
        self._add(GIT, reward)
        self.unseen = False

    @rule()
    def status(self) -> None:
        ok("status", "--workspace", str(self.root))
        self.unseen = False

    @rule()
    def export_onto_it(self) -> None:
        ok("export-gptme", str(self.root / STATE_REL), "--workspace", str(self.root))
        self.unseen = False

    @rule()
    def cache_deleted(self) -> None:
        shutil.rmtree(self.root / STATE_REL.parent / ".cache", ignore_errors=True)
        self.cache_lost = True

    @invariant()
    def never_twice_and_nothing_lost(self) -> None:
        if not hasattr(self, "root"):
            return
        post = Workspace(self.root).posterior()
        for key, want in self.truth.items():
            j = post.arm_ids.index(key) if key in post.arm_ids else None
            got = [1.0, 1.0, 0] if j is None else [float(post.alpha[j]), float(post.beta[j]), int(post.n[j])]
            if self.cache_lost or self.unseen:  # (never above the truth, P3's sessions in it: one may be logged)
                most = [w + k for w, k in zip(want, self.kept[0], strict=True)] if key == GIT else want
                assert all(g <= m + 1e-9 for g, m in zip(got, most, strict=True)), (key, got, most)
            else:
                assert got == pytest.approx(want), (key, got, want)
        assert int(post.total_sessions) <= self.sessions + self.kept[1]
        if not self.cache_lost and not self.unseen:
            assert int(post.total_sessions) == self.sessions


KeptFile.TestCase.settings = machine_settings(20, 10)
test_saves_onto_a_kept_file_count_each_session_once = pytest.mark.long(KeptFile.TestCase)
