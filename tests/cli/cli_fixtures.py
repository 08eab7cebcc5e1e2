"""Small workspaces for the CLI tests in this folder, written into tmp_path, and a runner."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from cli.main import main

NOW = dt.datetime(2026, 3, 5, 16, 30, tzinfo=dt.UTC)
LOG_REL = Path("state") / "lesson-thompson" / "sessions.jsonl"
CONFIG_REL = Path("state") / "lesson-thompson" / "config.toml"


def clock() -> dt.datetime:
    return NOW


def lesson_file(keywords: Sequence[str], status: str = "active") -> str:
    return "\n".join(
        ["---", "match:", f"  keywords: {json.dumps(list(keywords))}", f"status: {status}", "---", "# L", "", "Body."]
    )


def make_ws(
    tmp_path: Path,
    lessons: Mapping[str, Sequence[str]] | None = None,
    events: Iterable[Mapping[str, Any] | str] = (),
    journals: Mapping[str, str] | None = None,
    config: str | None = None,
    name: str = "ws",
) -> Path:
    """lessons: {id: keywords}; events: dicts (one JSON line each) or raw lines."""
    root = tmp_path / name
    root.mkdir(parents=True)
    for lesson_id, keywords in (lessons or {}).items():
        path = root / "lessons" / lesson_id
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(lesson_file(keywords), encoding="utf-8")
    lines = [e if isinstance(e, str) else json.dumps(e) + "\n" for e in events]
    if lines:
        (root / LOG_REL).parent.mkdir(parents=True, exist_ok=True)
        (root / LOG_REL).write_text("".join(lines), encoding="utf-8")
    for rel, text in (journals or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    if config is not None:
        (root / CONFIG_REL).parent.mkdir(parents=True, exist_ok=True)
        (root / CONFIG_REL).write_text(config, encoding="utf-8")
    return root


def session(session_id: str, base: float | None, lessons: Mapping[str, float], **extra: Any) -> dict[str, Any]:
    entries = [{"path": path, "salience": sal} for path, sal in lessons.items()]
    return {"type": "session", "session_id": session_id, "base_reward": base, "lessons": entries, **extra}


def log_bytes(root: Path) -> bytes | None:
    path = root / LOG_REL
    return path.read_bytes() if path.exists() else None


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv), clock=clock)
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def run_plain(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`run` on the real clock, for behaviour that does not depend on the time."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
