"""The crafted log the leave-one-out tests work out by hand (tests/core/test_analysis.py) and the
`loo` command tests print (tests/cli/test_loo_cli.py): four lessons, 31 graded sessions, 3 pending."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.engine_helpers import make_workspace, session

A, B, C, D = "tools/a.md", "tools/b.md", "workflow/c.md", "workflow/d.md"
LESSONS = {A: (["alpha"], "active"), B: (["beta"], "active"), C: (["gamma"], "active"), D: (["delta"], "active")}

# Lesson A: 6 graded sessions, rewards 0.9 0.8 0.7 0.9 0.8 0.7 -> mean 0.8
WITH_A = [0.9, 0.8, 0.7, 0.9, 0.8, 0.7]
# Without A: 25 graded sessions, five blocks of 0.3 0.4 0.5 0.6 0.7 -> mean 0.5
WITHOUT_A = [0.3, 0.4, 0.5, 0.6, 0.7] * 5
# C: in 3 of the sessions without A (too few); D: in 3 sessions with A and 7 without (10 in all)
C_ROWS = {0, 1, 2}  # indices into WITHOUT_A
D_WITH_ROWS = {0, 2, 4}  # indices into WITH_A
D_WITHOUT_ROWS = {3, 5, 8, 11, 14, 17, 20}  # indices into WITHOUT_A


# Each session with A follows the session without it at this index: A's sessions spread over the log (in
# the first six sessions and none after, A and B would each switch once in log order, identified only by
# time, and `loo` compares nothing for them)
W_AFTER = (0, 3, 6, 13, 16, 19)


def crafted_events() -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    with_a = []
    for i, r in enumerate(WITH_A):
        lessons = {A: 0.5}
        if i in D_WITH_ROWS:
            lessons[D] = 0.5
        with_a.append(session(f"w{i}", r, lessons))
    for i, r in enumerate(WITHOUT_A):
        lessons = {B: 0.5}
        if i in C_ROWS:
            lessons[C] = 0.5
        if i in D_WITHOUT_ROWS:
            lessons[D] = 0.5
        events.append(session(f"o{i}", r, lessons))
        events.extend(w for w, after in zip(with_a, W_AFTER, strict=True) if after == i)
    # pending sessions move nothing: two with A (one also with D), one with B
    events.append(session("p1", None, {A: 1.0}))
    events.append(session("p2", None, {A: 1.0, D: 1.0}))
    events.append(session("p3", None, {B: 0.0}))
    return events


def crafted_workspace(tmp_path: Path) -> Path:
    return make_workspace(tmp_path, lessons=LESSONS, events=crafted_events())
