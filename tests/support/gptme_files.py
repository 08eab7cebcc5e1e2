"""A gptme `bandit-state.json` with every oddity real files have, for the import/export tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

GIT, QUOTE, PLAIN, OLD, STYLE = "tools/git.md", "tools/quote.md", "workflow/plain.md", "workflow/old.md", "style.md"


def gptme_state(root: Path) -> dict[str, Any]:
    """A bandit-state.json as gptme-sessions (and hand edits) leave it, with every oddity at once."""
    return {
        "arms": {
            GIT: {
                "arm_id": GIT,
                "alpha": 3.2,
                "beta": 1.9,
                "total_selections": 4,
                "total_rewards": 3,
                "last_updated": "2026-01-01T00:00:00Z",
                "confounded": False,
                "judge_calls": 7,
                "judge_failures": 1,
            },
            "legacy-key": {"lesson_path": QUOTE, "alpha": 2.0, "beta": 5.0, "total_selections": 5, "total_rewards": 1},
            "lessons/" + PLAIN: {
                "arm_id": "lessons/" + PLAIN,
                "alpha": 1.5,
                "beta": 2.5,
                "total_selections": 2,
                "total_rewards": 0,
            },
            "absolute": {
                "arm_id": str(root / "lessons" / STYLE),
                "alpha": 4.0,
                "beta": 2.0,
                "total_selections": 4,
                "total_rewards": 2,
            },
            "tools/nowhere.md": {
                "arm_id": "tools/nowhere.md",
                "alpha": 1.1,
                "beta": 2.2,
                "total_selections": 2,
                "total_rewards": 0,
            },
        },
        "total_sessions": 9,
        "created": "2025-12-01T00:00:00Z",
        "last_updated": "2026-01-01T00:00:00Z",
        "judge": {"model": "x"},
    }


def write_json(path: Path, payload: Any) -> Path:
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path
