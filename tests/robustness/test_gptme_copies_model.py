"""An exported bandit-state.json copied around between gptme bandits, as a model: gptme sessions saved on any copy
(each stamped by gptme's clock, to the microsecond; some moving no arm, only counted), copies of any copy at any
time, `import-gptme` of any copy in any order. Whatever the order, no gptme session is ever counted twice: per lesson
the log's alpha, beta and n are at most the export's plus the sessions in the copies as they were when imported
(each session once), and its total_sessions at most s1 plus those sessions. An import may be refused (an arm that may
or may not hold another copy's logged update), and may count short (a copy taken before an import that grew past
what it saw, taken for one copied after: docs/format.md §7; a session that moved no arm, in two copies, taken for
one copied after it), never more.

The truth is a hand fold: each gptme session adds (r, 1 - r) and one selection to one lesson, or nothing (it moved no
arm); a copy holds the sessions of the file it was copied from; an import that succeeds brings every session its
file holds.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from tests.support.cli_run import run_cli
from tests.support.engine_helpers import (
    BASIC_JOURNAL,
    BASIC_LESSONS,
    LOG_REL,
    STATE_REL,
    machine_settings,
    make_workspace,
)

GIT, QUOTE, PLAIN = "tools/git.md", "tools/quote.md", "workflow/plain.md"
S1 = {"type": "session", "session_id": "s1", "base_reward": 0.8, "lessons": [{"path": GIT, "salience": 1.0}]}
START = {GIT: (1.8, 1.2, 1), QUOTE: (1.0, 1.0, 0), PLAIN: (1.0, 1.0, 0)}  # s1 graded 0.8 at salience 1
LESSONS = st.sampled_from(sorted(START))
REWARDS = st.sampled_from([0.0, 1.0])  # (two sessions of one reward on one lesson: the same numbers)
MAX_COPIES = 4

Session = tuple[int, str, float]  # its number (its stamp), the lesson, the reward


class GptmeCopies(RuleBasedStateMachine):
    @initialize()
    def start(self) -> None:
        self.tmp = tempfile.TemporaryDirectory()
        here = Path(self.tmp.name)
        self.root = make_workspace(here, BASIC_LESSONS, events=[S1], journals={"j.txt": BASIC_JOURNAL}, name="ws")
        assert run_cli("grade", "s1", "0.8", "--workspace", str(self.root))[0] == 0  # (the own file written)
        self.files = [here / "copy0.json"]
        assert run_cli("export-gptme", "--workspace", str(self.root), str(self.files[0]))[0] == 0
        self.held: list[list[Session]] = [[]]  # per copy, the gptme sessions it holds
        self.logged: set[Session] = set()  # the sessions of every copy as it was when its import succeeded
        self.saved = 0

    def teardown(self) -> None:
        self.tmp.cleanup()

    @rule(data=st.data(), lesson=LESSONS, reward=REWARDS)
    def gptme_saves(self, data: st.DataObject, lesson: str, reward: float) -> None:
        which = data.draw(st.integers(0, len(self.files) - 1))
        self.saved += 1
        path = self.files[which]
        state = json.loads(path.read_text())
        arm = state["arms"].setdefault(lesson, {"arm_id": lesson, "alpha": 1.0, "beta": 1.0, "total_selections": 0,
                                                "total_rewards": 0})  # fmt: skip
        arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward)
        arm["total_selections"] += 1
        arm["total_rewards"] += int(reward > 0.5)
        arm["last_updated"] = f"2026-12-06T10:00:00.{self.saved:06d}+00:00"  # (gptme's clock: one per session)
        state["total_sessions"] += 1
        path.write_text(json.dumps({k: state[k] for k in ("arms", "total_sessions", "created", "last_updated")}))
        self.held[which] = [*self.held[which], (self.saved, lesson, reward)]

    @rule(data=st.data())
    def gptme_counts(self, data: st.DataObject) -> None:
        """gptme's bandit saving a session that moved no arm: its total_sessions + 1 alone."""
        which = data.draw(st.integers(0, len(self.files) - 1))
        self.saved += 1
        path = self.files[which]
        state = json.loads(path.read_text())
        state["total_sessions"] += 1
        path.write_text(json.dumps(state))
        self.held[which] = [*self.held[which], (self.saved, "", 0.0)]

    @precondition(lambda self: len(self.files) < MAX_COPIES)
    @rule(data=st.data())
    def copied(self, data: st.DataObject) -> None:
        which = data.draw(st.integers(0, len(self.files) - 1))
        path = Path(self.tmp.name) / f"copy{len(self.files)}.json"
        shutil.copy(self.files[which], path)
        self.files.append(path)
        self.held.append(list(self.held[which]))

    @rule(data=st.data())
    def imported(self, data: st.DataObject) -> None:
        which = data.draw(st.integers(0, len(self.files) - 1))
        code, _, err = run_cli("import-gptme", "--workspace", str(self.root), str(self.files[which]))
        assert code in (0, 1), err
        if code == 0:
            self.logged |= set(self.held[which])
        else:  # (refused: one line, naming the other copy)
            assert len(err.strip().splitlines()) == 1 and "count" in err and "twice" in err, err
        self.followed()

    def followed(self) -> None:
        """(The workspace's own file, when one of the copies: see GptmeOwnCopies.)"""

    @invariant()
    def no_session_counted_twice(self) -> None:
        if not hasattr(self, "root"):
            return
        code, out, err = run_cli("status", "--workspace", str(self.root), "--json")
        assert code == 0, err
        self.followed()
        rows = {r["path"]: (r["alpha"], r["beta"], r["n"]) for r in json.loads(out)["lessons"]}
        for lesson, (alpha, beta, n) in START.items():
            mine = [reward for _, named, reward in self.logged if named == lesson]
            most = (alpha + sum(mine), beta + sum(1 - r for r in mine), n + len(mine))
            got = rows.get(lesson, (1.0, 1.0, 0))
            assert got[2] <= most[2] and got[0] <= most[0] + 1e-9 and got[1] <= most[1] + 1e-9, (lesson, got, most)
        # the log's count: s1 graded, and the sessions of its increments events (the own file, kept as gptme saved it
        # when an update there cannot be told, says gptme's count)
        events = [json.loads(line) for line in (self.root / LOG_REL).read_text().splitlines()]
        counted = 1 + sum(event.get("sessions", 0) for event in events if event.get("increments"))
        assert counted <= 1 + len(self.logged)


GptmeCopies.TestCase.settings = machine_settings(100, 16)
test_copies_of_an_exported_file_never_count_a_session_twice = pytest.mark.long(GptmeCopies.TestCase)


class GptmeOwnCopies(GptmeCopies):
    """The same with the workspace's own bandit-state.json one of the files gptme saves to and copies are taken of
    (copies of it are known by our copy of it in `.cache`). Every command that writes, and `status`, logs gptme's
    update of it and writes it again from the log (a new `created`): it then holds every session logged. So the
    check is a step (`checked`), not run after every step: a copy of the own file may be imported before the own
    file's update is logged."""

    @initialize()
    def start(self) -> None:
        super().start()
        self.files.insert(0, self.root / STATE_REL)  # (first: drawn the most often)
        self.held.insert(0, [])
        self.own_created = json.loads(self.files[0].read_text())["created"]

    def no_session_counted_twice(self) -> None:  # (not an invariant here: `status` logs the own file's update)
        pass

    @rule()
    def checked(self) -> None:
        super().no_session_counted_twice()

    def teardown(self) -> None:
        if hasattr(self, "root"):
            super().no_session_counted_twice()
        super().teardown()

    def followed(self) -> None:
        own = self.root / STATE_REL
        created = json.loads(own.read_text())["created"]
        if created != self.own_created:  # written again from the log: what it held is logged, it holds the log's
            self.own_created = created
            which = self.files.index(own)
            self.logged |= set(self.held[which])
            self.held[which] = sorted(self.logged)


GptmeOwnCopies.TestCase.settings = machine_settings(100, 16)
test_copies_of_the_workspaces_own_file_never_count_a_session_twice = pytest.mark.long(GptmeOwnCopies.TestCase)
