"""The key gptme's bandit finds an arm by. gptme-sessions' Bandit keys an arm by the id it is given
(`lessons/tools/a.md`, say) and looks it up by it: an id it does not find starts over at Beta(1, 1). A lesson the
file names by a key of ours (`tools/a.md`, its library id) and by one gptme's bandit made (it did not find ours)
is written under gptme's key once gptme has updated it and left ours untouched, so the next session gptme draws
for it draws from the log's posterior. The numbers are worked out by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.engine_helpers import STATE_REL, make_workspace, session
from tests.support.two_arms import GPTME_TIME, LESSONS, A, B, ok, rows


def gptme_update(state: dict[str, Any], key: str, reward: float) -> None:
    """gptme-sessions' update_session of the arm `key` (made at Beta(1, 1) when the file has none by that key)."""
    arm = state["arms"].setdefault(
        key, {"arm_id": key, "alpha": 1.0, "beta": 1.0, "total_selections": 0, "total_rewards": 0, "last_updated": ""}
    )
    arm.update(alpha=arm["alpha"] + reward, beta=arm["beta"] + 1 - reward, last_updated=GPTME_TIME)
    arm.update(total_selections=arm["total_selections"] + 1, total_rewards=arm["total_rewards"] + (reward > 0.5))
    state["total_sessions"] += 1
    state.pop("lesson_credit_written", None)  # its save writes its own keys only


def test_an_arm_gptme_keys_its_own_way_is_written_under_its_key(tmp_path: Path) -> None:
    # s1 graded 0.5 names a and b (salience 1, w = 1): each Beta(1.5, 1.5) n 1
    root = make_workspace(tmp_path, LESSONS, events=[session("s1", 0.5, {A: 1.0, B: 1.0})])
    ok("export-gptme", str(root / STATE_REL), "-w", str(root))  # our file: tools/a.md, tools/b.md
    path = root / STATE_REL
    state = json.loads(path.read_text())
    gptme_update(state, "lessons/" + A, 1.0)  # gptme looks up lessons/tools/a.md: not there, made at Beta(1, 1)
    path.write_text(json.dumps(state, indent=2) + "\n")
    # by hand: a = the log's (1.5, 1.5) n 1 + gptme's +1 / +0 from Beta(1, 1), n + 1 = (2.5, 1.5) n 2
    assert rows(root)[A] == (2.5, 1.5, 2)
    arms = json.loads(path.read_text())["arms"]
    # before: written under tools/a.md only, lessons/tools/a.md dropped; gptme's next session made it again at
    # Beta(1, 1) and drew a from Beta(1, 1) every time, never from the log's (2.5, 1.5)
    assert "lessons/" + A in arms and A not in arms, sorted(arms)
    assert (arms["lessons/" + A]["alpha"], arms["lessons/" + A]["beta"]) == (2.5, 1.5)
    assert B in arms  # gptme never asked for b by another key: ours stays
    state = json.loads(path.read_text())
    gptme_update(state, "lessons/" + A, 0.0)  # it finds the log's arm now: (2.5, 2.5) n 3
    path.write_text(json.dumps(state, indent=2) + "\n")
    assert rows(root)[A] == (2.5, 2.5, 3)  # by hand: (2.5, 1.5) n 2 + 0 / + 1, n + 1
