"""A retraction (a grade with base_reward null, docs/format.md §5.3) and the two-session log the retraction
tests start from (tests/core/test_retraction.py, tests/cli/test_retraction_cli.py)."""

from __future__ import annotations

from typing import Any

from tests.support.engine_helpers import session

LESSONS = {"a.md": (["alpha"], "active"), "b.md": (["beta"], "active")}


def retraction(session_id: str, grader: str = "manual") -> dict[str, Any]:
    return {"type": "grade", "session_id": session_id, "base_reward": None, "grader": grader}


# s1: 0.4 on a (salience 1 -> w = 0.3 + 0.7 = 1). s2: pending, a at salience 0 (w 0.3), b at 1 (w 1).
BASE = [session("s1", 0.4, {"a.md": 1.0}), session("s2", None, {"a.md": 0.0, "b.md": 1.0})]
