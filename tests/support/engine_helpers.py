"""Helpers shared by the engine tests: tiny workspaces written into tmp_path, event builders, a fixed clock."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from hypothesis import HealthCheck, settings

from tests.support.layout import CONFIG_REL, FIXED_NOW, LOG_REL, STATE_REL, fixed_clock

if TYPE_CHECKING:
    from lesson_credit.core.views import LessonRow

__all__ = ["CONFIG_REL", "FIXED_NOW", "LOG_REL", "STATE_REL", "fixed_clock"]  # the layout, re-exported

# Property tests run the same examples every time (no random seed, no example database),
# so a failure reproduces and a pass means the same thing on every machine.
PROPERTY = settings(deadline=None, derandomize=True, database=None)


def machine_settings(max_examples: int, steps: int) -> settings:
    """A state machine's settings: as PROPERTY (the same runs everywhere), `steps` rules a run, and steps
    that touch the disk allowed to be slow."""
    return settings(
        PROPERTY,
        max_examples=max_examples,
        stateful_step_count=steps,
        suppress_health_check=[HealthCheck.too_slow],
    )


def lesson_text(
    keywords: Sequence[str] | str | None = (),
    status: str | None = "active",
    patterns: Sequence[str] = (),
    title: str = "A lesson",
) -> str:
    """A gptme-format lesson file. json.dumps of a list is valid YAML flow syntax."""
    lines = ["---", "match:"]
    lines.append(f"  keywords: {json.dumps(keywords if isinstance(keywords, str) else list(keywords or []))}")
    if patterns:
        lines.append(f"  patterns: {json.dumps(list(patterns))}")
    if status is not None:
        lines.append(f"status: {status}")
    lines += ["description: test lesson", "---", f"# {title}", "", "Body text.", ""]
    return "\n".join(lines)


def event_line(event: Mapping[str, Any] | str | bytes) -> bytes:
    """A dict becomes one JSON line; str/bytes are written as given (for corrupt lines)."""
    if isinstance(event, bytes):
        return event
    if isinstance(event, str):
        return event.encode("utf-8")
    return (json.dumps(event) + "\n").encode("utf-8")


def session(
    session_id: str,
    base: float | None,
    lessons: Mapping[str, float | None],
    **extra: Any,
) -> dict[str, Any]:
    """A session event in the product's shape; a None salience leaves the key out."""
    entries = []
    for path, sal in lessons.items():
        entry: dict[str, Any] = {"path": path}
        if sal is not None:
            entry["salience"] = sal
        entries.append(entry)
    return {"type": "session", "session_id": session_id, "base_reward": base, "lessons": entries, **extra}


def grade(session_id: str, base: float | None, grader: str = "manual") -> dict[str, Any]:
    return {"type": "grade", "session_id": session_id, "base_reward": base, "grader": grader}


LessonSpec = tuple[Any, ...]  # (keywords, status) or (keywords, status, patterns)


def crowded_events(n: int) -> list[dict[str, Any]]:
    """n graded session events of 40 lessons each (salience 0.5) from a library of 60 (l0.md ... l59.md),
    in two categories (x, y) alternately; rewards and lessons drawn with seed n."""
    import numpy as np

    rng = np.random.default_rng(n)
    paths = [f"l{i}.md" for i in range(60)]
    return [
        {
            "type": "session",
            "session_id": f"s{s}",
            "base_reward": float(rng.random()),
            "lessons": [{"path": paths[j], "salience": 0.5} for j in rng.choice(60, 40, replace=False)],
            "category": ["x", "y"][s % 2],
        }
        for s in range(n)
    ]


def make_workspace(
    tmp_path: Path,
    lessons: Mapping[str, LessonSpec] | None = None,
    events: Iterable[Mapping[str, Any] | str | bytes] | None = None,
    journals: Mapping[str, str] | None = None,
    config: str | None = None,
    name: str = "ws",
) -> Path:
    """Write a workspace under tmp_path/name and return its root.

    lessons: {id: (keywords, status[, patterns])}, written under lessons/.
    events: dicts (one JSON line each) or raw str/bytes (written verbatim) for the log.
    journals: {relative path: text}.
    """
    root = tmp_path / name
    (root / "lessons").mkdir(parents=True, exist_ok=True)
    for lesson_id, spec in (lessons or {}).items():
        keywords, status = spec[0], spec[1]
        patterns = spec[2] if len(spec) > 2 else ()
        path = root / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lesson_text(keywords, status, patterns, title=f"Lesson {lesson_id}"), encoding="utf-8")
    if events is not None:
        log = root / LOG_REL
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_bytes(b"".join(event_line(e) for e in events))
    for rel, text in (journals or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if config is not None:
        path = root / CONFIG_REL
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(config, encoding="utf-8")
    return root


def log_bytes(root: Path) -> bytes | None:
    path = root / LOG_REL
    return path.read_bytes() if path.exists() else None


# A small library most workspace and CLI tests share.
BASIC_LESSONS: dict[str, LessonSpec] = {
    "tools/git.md": (["git", "git worktree"], "active"),
    "tools/quote.md": (["quote", "never-mentioned"], "active"),
    "workflow/plain.md": ([], "active"),
    "workflow/old.md": (["git"], "archived"),
    "style.md": (["indent*"], "deprecated", ["tab(s)? vs spaces"]),
}
BASIC_JOURNAL = "Ran git worktree add ../wt; the reviewer misquoted me.\n"


class HasRows(Protocol):
    def row(self, path: str) -> LessonRow | None: ...


def row_of(table: HasRows, path: str) -> LessonRow:
    """`table.row(path)` for a lesson the test knows is there; fails with the path when it is not."""
    row = table.row(path)
    assert row is not None, f"no row for {path}"
    return row
