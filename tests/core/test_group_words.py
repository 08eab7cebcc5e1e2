"""What `loo` says about lessons that ride together, word for word: a group member's reason names the others (not
itself) and how often it was with them (not "always" when it was not), and a lesson always injected with a
lesson that is in nearly every session is not called "not separable" when the joint fit separates it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lesson_credit.core.analysis.estimates import Effect, notes
from lesson_credit.core.workspace import Workspace
from tests.support.engine_helpers import fixed_clock, make_workspace, session

LESSONS = {f"t/{name}.md": ([name], "active") for name in ("a", "b", "w", "x")}
N = 200


def ride_workspace(tmp_path: Path) -> Path:
    """200 graded sessions. w is in every one but every 20th (190 of 200); a, b and x are only ever injected where
    w is. a in the sessions i % 3 == 0 among those (i < 190 by construction of the loop: 60 of them, counted below),
    b in the first 57 of a's sessions and nowhere else: b is with a in all 57 of its sessions, a with b in 57 of its
    60 (95%), so the two are one group (at least 90% of each one's). x at random in half of w's sessions, +0.10;
    nothing else has an effect; noise sd 0.05."""
    rng = np.random.default_rng(11)
    events: list[dict[str, object]] = []
    a_seen = 0
    for i in range(N):
        injected: list[str] = []
        if i % 20 != 19:
            injected.append("t/w.md")
            if i % 3 == 0 and a_seen < 60:
                injected.append("t/a.md")
                a_seen += 1
                if a_seen <= 57:
                    injected.append("t/b.md")
            if rng.random() < 0.5:
                injected.append("t/x.md")
        reward = 0.40 + 0.10 * ("t/x.md" in injected) + rng.normal(0.0, 0.05)
        events.append(session(f"s{i:03d}", round(float(reward), 4), dict.fromkeys(injected, 1.0)))
    assert a_seen == 60
    return make_workspace(tmp_path, LESSONS, events)


def test_a_group_members_reason_names_the_others_and_how_often(tmp_path: Path) -> None:
    rows = {r.path: r for r in Workspace(ride_workspace(tmp_path), clock=fixed_clock).loo(write=False)}
    a, b = rows["t/a.md"].joint, rows["t/b.md"].joint
    assert a is not None and b is not None and a.group == b.group == ("t/a.md", "t/b.md")
    # the reason said "always injected together with t/a.md, t/b.md" for both: itself named, and a was without b
    # in 3 of its sessions
    assert a.reason is not None and a.reason.startswith(
        "injected with t/b.md in 57 of its 60 graded sessions (95%): one group "
    ), a.reason
    assert b.reason is not None and b.reason.startswith(
        "injected with t/a.md in 57 of its 57 graded sessions (100%): one group "
    ), b.reason
    assert "t/a.md" not in a.reason and "t/b.md" not in b.reason and "always" not in a.reason
    assert a.reason.endswith("only the group's effect can be known"), a.reason


def test_a_lesson_the_joint_fit_separates_is_not_called_not_separable(tmp_path: Path) -> None:
    rows = {r.path: r for r in Workspace(ride_workspace(tmp_path), clock=fixed_clock).loo(write=False)}
    x = rows["t/x.md"]
    # x is never injected without w (w is in 190 of 200 sessions), but x is in about half of w's sessions and not
    # in the other half: the joint fit separates the two (identified, about +0.10)
    assert x.joint is not None and x.joint.identified and abs(x.joint.estimate - 0.10) < 0.03
    assert x.confound_reasons == (
        "lift not separable: never injected without t/w.md (the joint fit separates them, the lift does not)",
    )
    # b is never injected without a nor w: a is in its group (nothing separates them), w is not and the group's
    # effect is identified (60 sessions with it, 140 without), so the joint fit separates the group from w
    b = rows["t/b.md"]
    assert b.joint is not None and b.joint.group_effect is not None
    assert b.confound_reasons == (
        "not separable: never injected without t/a.md",
        "lift not separable: never injected without t/w.md (the joint fit separates them, the lift does not)",
    )


def test_a_groups_note_does_not_say_always() -> None:
    member = Effect(0.0, None, None, "joint", identified=False, group=("a.md", "b.md"))
    assert notes(member) == ["one group of lessons mostly injected together: a.md, b.md (not identified)"]


def test_a_big_groups_note_names_three_members_and_counts_the_rest() -> None:
    # four members: naming the fourth costs no more than counting it; five: three named, 5 - 3 = 2 counted
    four = Effect(0.0, None, None, "joint", identified=False, group=("a.md", "b.md", "c.md", "d.md"))
    said = "one group of lessons mostly injected together: "
    assert notes(four) == [said + "a.md, b.md, c.md, d.md (not identified)"]
    five = Effect(0.0, None, None, "joint", identified=False, group=("a.md", "b.md", "c.md", "d.md", "e.md"))
    assert notes(five) == [said + "a.md, b.md, c.md and 2 more (not identified)"]
