"""gptme's bandit pruning arms of the workspace's own bandit-state.json and making them again, between our commands,
as a model: its `prune` (arms not updated in `max_age_days`, or never selected), its sessions (an arm it lacks made
at Beta(1, 1), then alpha + r, beta + 1 - r, one selection, restamped with its clock, later than our write of the file
it loaded, the session counted), our grades, regrades, records and `status`, and `.cache` deleted before a command
or kept. Whatever the order, every session of ours and every session of gptme's is counted once, in the log and in
the file written again. The files are written as gptme-sessions' `save` writes them (its five keys, `json.dumps(...,
indent=2)`). The truth is a hand fold: each session of ours credits its one lesson with weight 1 (salience 1), adding
(r, 1 - r) and one selection; so does each of gptme's; a regrade moves its session's (r, 1 - r) to the new reward's.

With no copy of ours left, gptme's update of an arm of ours it did not prune cannot be told from the log's evidence
(docs/format.md §7 *Kept*): our command then either logs gptme's sessions since our last command, each once, or
keeps the file as gptme saved it and logs none of them (never one twice: before, after a regrade or a record such
an update was read as made again, and the lesson's earlier evidence logged a second time). The model takes either,
and a kept file is then deleted, as its warning says (its sessions since lost, knowingly), and written again from
the log. One limit the model keeps to (docs/format.md §7): an arm made again gets one session of gptme's before our
next command (two, 1.0 then 0.0 over our (2, 1) n 1, are our numbers plus one update: (2, 2) n 2 either way, the
two readings not told apart)."""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from lesson_credit.core.derived_state import repair_state
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import STATE_REL, machine_settings, make_workspace, session

A, B = "tools/a.md", "tools/b.md"
LESSONS = (A, B)
REWARDS = st.sampled_from([0.0, 0.5, 0.8, 1.0])
MICROSECOND = dt.timedelta(microseconds=1)
PENDING = 30  # sessions of ours waiting for a grade, alternately on a and b (more than the steps of a run)


class GptmePrunes(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        events = [
            session(f"s{i:02d}", None, {LESSONS[i % 2]: 1.0}, timestamp=f"2026-08-{1 + i % 28:02d}T10:00:00Z")
            for i in range(PENDING)
        ]
        lessons = {lesson: ([lesson[6]], "active") for lesson in LESSONS}
        self.root = make_workspace(Path(self.tmp.name), lessons, events=events)
        Workspace(self.root).write_state()
        self.graded = 0
        self.rewards: dict[str, tuple[str, float]] = {}  # per session of ours graded: its lesson and reward in force
        self.records = 0
        self.last_tick = dt.datetime.min.replace(tzinfo=dt.UTC)
        for lesson in LESSONS:  # (a journal naming the lesson's keyword: salience 1)
            (self.root / f"j-{lesson[6]}.md").write_text(f"{lesson[6]}\n")
        self.truth = {lesson: [1.0, 1.0, 0] for lesson in LESSONS}
        self.sessions = 0
        self.made_again: dict[str, int] = {}  # arms gptme made again since our last command: its sessions on them
        self.pruned: set[str] = set()  # arms gptme pruned since our last command
        self.updated_ours = False  # gptme updated an arm of ours it did not prune since our last command
        self.unlogged: list[tuple[str, float]] = []  # gptme's sessions since our last command
        self.saved: bytes | None = None  # the file before our command, with no copy after such an update of gptme's

    def teardown(self) -> None:
        self.tmp.cleanup()

    def _ours_done(self) -> None:
        if self.saved is not None and (self.root / STATE_REL).read_bytes() == self.saved:  # kept: none of gptme's
            for lesson, reward in self.unlogged:  # sessions since logged (the invariant checks that)
                alpha, beta, n = self.truth[lesson]
                self.truth[lesson] = [alpha - reward, beta - (1 - reward), n - 1]
                self.sessions -= 1
            (self.root / STATE_REL).unlink()  # (what the warning says to do: those sessions lost, knowingly)
            Workspace(self.root).write_state()
        self.made_again, self.pruned, self.updated_ours, self.unlogged, self.saved = {}, set(), False, [], None

    def _add(self, lesson: str, reward: float) -> None:
        alpha, beta, n = self.truth[lesson]
        self.truth[lesson] = [alpha + reward, beta + 1 - reward, n + 1]
        self.sessions += 1

    @precondition(lambda self: self.graded < PENDING)
    @rule(reward=REWARDS, cache=st.booleans())
    def we_grade(self, reward: float, cache: bool) -> None:
        self._caches(cache)
        Workspace(self.root).grade(f"s{self.graded:02d}", reward)
        self._add(LESSONS[self.graded % 2], reward)
        self.rewards[f"s{self.graded:02d}"] = (LESSONS[self.graded % 2], reward)
        self.graded += 1
        self._ours_done()

    @precondition(lambda self: self.rewards)
    @rule(data=st.data(), reward=REWARDS, cache=st.booleans())
    def we_regrade(self, data: st.DataObject, reward: float, cache: bool) -> None:
        session_id = data.draw(st.sampled_from(sorted(self.rewards)))
        self._caches(cache)
        Workspace(self.root).grade(session_id, reward)
        lesson, was = self.rewards[session_id]
        alpha, beta, n = self.truth[lesson]
        self.truth[lesson] = [alpha - was + reward, beta - (1 - was) + (1 - reward), n]
        self.rewards[session_id] = (lesson, reward)
        self._ours_done()

    @rule(lesson=st.sampled_from(LESSONS), reward=REWARDS, cache=st.booleans())
    def we_record(self, lesson: str, reward: float, cache: bool) -> None:
        self._caches(cache)
        self.records += 1
        session_id = f"r{self.records:02d}"
        Workspace(self.root).record(session_id, self.root / f"j-{lesson[6]}.md", [lesson], reward=reward)
        self._add(lesson, reward)
        self.rewards[session_id] = (lesson, reward)
        self._ours_done()

    @rule(cache=st.booleans())
    def we_read(self, cache: bool) -> None:
        self._caches(cache)
        repair_state(Workspace(self.root))  # what `status` does to the file
        self._ours_done()

    def _caches(self, kept: bool) -> None:
        if not kept:
            shutil.rmtree(self.root / STATE_REL.parent / ".cache", ignore_errors=True)
            self.saved = (self.root / STATE_REL).read_bytes() if self.updated_ours else None

    def _load(self) -> dict[str, Any]:
        """The file as gptme's bandit loads it (its keys only: it drops ours when it saves)."""
        data = json.loads((self.root / STATE_REL).read_text())
        keys = ("arm_id", "alpha", "beta", "total_selections", "total_rewards", "last_updated")
        arms = {key: {name: arm[name] for name in keys} for key, arm in data["arms"].items()}
        return {"arms": arms, "total_sessions": data["total_sessions"], "created": data["created"], "last_updated": ""}

    def _clock(self, state: dict[str, Any]) -> dt.datetime:
        """gptme's clock: this machine's, as gptme's is (so later than our write of the file it loaded, its `created`,
        and than its own stamp before; a fraction of 0 it would not write to the microsecond)."""
        created = dt.datetime.fromisoformat(state["created"]).astimezone(dt.UTC)
        moment = max(dt.datetime.now(dt.UTC), created + MICROSECOND, self.last_tick + MICROSECOND)
        self.last_tick = moment + MICROSECOND if moment.microsecond == 0 else moment
        return self.last_tick

    def _save(self, state: dict[str, Any]) -> None:
        (self.root / STATE_REL).write_text(json.dumps(state, indent=2) + "\n")

    @rule(max_age_days=st.sampled_from([0, 90]))
    def gptme_prunes(self, max_age_days: int) -> None:
        state = self._load()
        now = self._clock(state)
        for key, arm in list(state["arms"].items()):
            old = arm["last_updated"] and (now - dt.datetime.fromisoformat(arm["last_updated"])).days > max_age_days
            if old or arm["total_selections"] <= 0:
                del state["arms"][key]
                self.pruned.add(key)
        self._save(state)

    @precondition(lambda self: all(self.made_again.get(lesson, 0) < 1 for lesson in LESSONS))
    @rule(lesson=st.sampled_from(LESSONS), reward=REWARDS)
    def gptme_session(self, lesson: str, reward: float) -> None:
        state = self._load()
        if lesson not in state["arms"]:
            state["arms"][lesson] = {"arm_id": lesson, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                     "total_rewards": 0, "last_updated": ""}  # fmt: skip
            self.made_again[lesson] = 0
        if lesson in self.made_again:
            self.made_again[lesson] += 1
        else:
            self.updated_ours = True
        stamp = self._clock(state).isoformat()
        arm = state["arms"][lesson]
        arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward, last_updated=stamp)
        arm.update(total_selections=arm["total_selections"] + 1, total_rewards=arm["total_rewards"] + (reward > 0.5))
        state["total_sessions"] += 1
        state["last_updated"] = stamp
        self._save(state)
        self._add(lesson, reward)
        self.unlogged.append((lesson, reward))

    @precondition(lambda self: all(self.made_again.get(lesson, 0) < 1 for lesson in LESSONS))
    @rule(lesson=st.sampled_from(LESSONS), reward=REWARDS)
    def gptme_session_after_pruning_it(self, lesson: str, reward: float) -> None:
        """gptme's `prune` of that arm (not updated in 0 days: any of ours), then its session drawing it."""
        state = self._load()
        if (
            lesson in state["arms"]
            and lesson not in self.made_again
            and state["arms"][lesson]["last_updated"] < str(self._clock(state).date())
        ):
            del state["arms"][lesson]
            self.pruned.add(lesson)
            self._save(state)
        self.gptme_session(lesson, reward)

    @invariant()
    def every_session_counted_once(self) -> None:
        if not hasattr(self, "root") or self.made_again or self.pruned or self.updated_ours:
            return  # (gptme's changes since our last command: our next command logs them)
        post = Workspace(self.root).posterior()
        for lesson in LESSONS:
            j = post.arm_ids.index(lesson)
            got = [float(post.alpha[j]), float(post.beta[j]), int(post.n[j])]
            assert got == pytest.approx(self.truth[lesson]), lesson
        assert int(post.total_sessions) == self.sessions
        state = json.loads((self.root / STATE_REL).read_text())  # the file follows the log again
        for lesson in LESSONS:
            arm = state["arms"][lesson]
            on_file = [arm["alpha"], arm["beta"], arm["total_selections"]]
            assert on_file == pytest.approx(self.truth[lesson]), lesson
        assert state["total_sessions"] == self.sessions


GptmePrunes.TestCase.settings = machine_settings(100, 12)
test_gptme_prunes_and_makes_arms_again_between_our_commands_each_session_counted_once = pytest.mark.long(
    GptmePrunes.TestCase
)
