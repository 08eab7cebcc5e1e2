"""The library and the clean log the health-check tests build on (tests/core/test_health.py,
tests/cli/test_lint_cli.py): a workspace with these sessions has no finding at all."""

from __future__ import annotations

from typing import Any

from tests.support.engine_helpers import session

LESSONS = {
    "a.md": (["alpha"], "active"),
    "b.md": (["beta"], "active"),
    "tools/c.md": (["gamma"], "active"),
}
VARIED = [0.2, 0.4, 0.6, 0.8, 0.5, 0.7, 0.3]


def clean_events(n: int = 6) -> list[dict[str, Any]]:
    """Graded sessions with varied rewards, every lesson salient, all in the library."""
    return [session(f"s{i}", VARIED[i % len(VARIED)], {"a.md": 1.0, "b.md": 0.5, "tools/c.md": 0.25}) for i in range(n)]
