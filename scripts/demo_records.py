"""The demo's sessions as gptme keeps them (docs/records.md): gptme-sessions records and trajectories.

Called by make_demo.py after it has simulated the sessions, with its own seeded generator, so
the files are byte for byte the same on every run. Every session gets a record in the shape
gptme-sessions writes (`state/sessions/session-records.jsonl`): harness, model, duration,
outcome, deliverables, per-dimension grades, a trajectory grade and an LLM judge's score that
mostly follows the true reward and sometimes disagrees with it (and with the people who graded
that session). Half the records carry the session's own id; the rest an 8-character id of their
own, so they join by time. The pending tail has records without scores: those sessions stay
pending for the dashboard to grade. Every third session and the pending tail also get a
trajectory: gptme's conversation.jsonl or a Claude Code session file, with its tool calls and
outputs (some long), mentioning what the journal mentions.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

RECORDS = Path("state") / "sessions" / "session-records.jsonl"
TRAJECTORIES = Path("state") / "sessions" / "trajectories"
MODELS = {"gptme": "anthropic/claude-sonnet-4-6", "claude-code": "claude-opus-4-6"}
JUDGE_MODEL = "claude-haiku-4-5"
REASONS = {
    "good": ["Delivered the change with tests and a green CI run.", "Fixed the issue and explained the cause."],
    "mid": ["Made progress but left the main question open.", "Partial fix; the follow-up is tracked."],
    "bad": ["Spent the session without a working change.", "The change was reverted; little to show."],
}
WORDS = "abcdef0123456789"


@dataclass(frozen=True)
class DemoSession:
    """What make_demo.py's simulation decided about one session."""

    session_id: str
    task: str
    reward: float  # the true reward (the heuristic's grade when graded)
    pending: bool
    timestamp: dt.datetime
    journal: list[str]  # the journal's lines


def _hex(rng: np.random.Generator, n: int) -> str:
    return "".join(WORDS[int(i)] for i in rng.integers(0, len(WORDS), n))


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds")


def _mood(score: float) -> str:
    return "good" if score >= 0.7 else "mid" if score >= 0.45 else "bad"


def _record(s: DemoSession, number: int, rng: np.random.Generator, trajectory: str | None) -> dict[str, Any]:
    harness = "gptme" if number % 2 == 0 else "claude-code"
    duration = int(rng.integers(6, 55)) * 60 + int(rng.integers(0, 60))
    start = s.timestamp - dt.timedelta(seconds=duration)
    record_id = s.session_id if number % 2 == 0 else _hex(rng, 8)
    record: dict[str, Any] = {
        "session_id": record_id,
        "timestamp": _iso(s.timestamp + dt.timedelta(seconds=int(rng.integers(5, 90)))),
        "start_time": _iso(start),
        "end_time": _iso(s.timestamp),
        "harness": harness,
        "model": MODELS[harness],
        "run_type": "autonomous",
        "trigger": "timer",
        "category": s.task,
        "outcome": "unknown",
        "exit_code": 0,
        "duration_seconds": duration,
        "token_count": int(rng.integers(40, 400)) * 1000,
        "deliverables": [],
        "trajectory_path": trajectory,
        "grades": {},
        "grade_reasons": {},
    }
    if s.pending:
        return record  # judged later: pending for the dashboard
    if s.reward >= 0.45:
        record["deliverables"] = [_hex(rng, 7)] + (
            [f"https://github.com/demo-org/app/pull/{int(rng.integers(100, 999))}"] if s.reward >= 0.7 else []
        )
    record["outcome"] = "productive" if s.reward >= 0.45 else ("noop" if rng.random() < 0.7 else "failed")
    if record["outcome"] == "failed":
        record["exit_code"] = 124
    productivity = float(np.clip(s.reward + rng.normal(0, 0.08), 0, 1))
    judge = float(np.clip(s.reward + rng.normal(0, 0.12), 0, 1))
    if rng.random() < 0.15:  # the judge misread the session
        judge = float(np.clip(1.0 - s.reward + rng.normal(0, 0.05), 0, 1))
    harm = 1.0 if rng.random() < 0.9 else 0.5
    grades = {"productivity": round(productivity, 2), "alignment": round(judge, 2), "harm": harm}
    weighted = (0.40 * grades["productivity"] + 0.35 * grades["alignment"] + 0.25 * harm) / 1.0
    record["grades"] = grades
    record["grade_reasons"] = {"alignment": REASONS[_mood(judge)][int(rng.integers(2))]}
    record["trajectory_grade"] = round(weighted, 4)
    record["llm_judge_score"] = round(judge, 2)
    record["llm_judge_reason"] = record["grade_reasons"]["alignment"]
    record["llm_judge_model"] = JUDGE_MODEL
    return record


def _pytest_output(rng: np.random.Generator, failing: bool) -> str:
    lines = ["============================= test session starts =============================="]
    names = ["test_api", "test_cli", "test_storage", "test_sync", "test_auth", "test_reporting"]
    for name in names:
        lines += [f"tests/{name}.py::test_case_{i} PASSED" for i in range(int(rng.integers(4, 9)))]
    if failing:
        lines += ["tests/test_sync.py::test_retry FAILED", "", "E   AssertionError: expected 3 retries, got 2"]
    rule = "=" * 24
    lines.append(f"{rule} {len(lines) - 1} passed in {rng.uniform(1, 9):.2f}s {rule}")
    return "\n".join(lines)


def _steps(s: DemoSession) -> list[str]:
    return [line[2:] for line in s.journal if line.startswith("- ")]


def _gptme(s: DemoSession, rng: np.random.Generator) -> list[dict[str, Any]]:
    t = s.timestamp - dt.timedelta(minutes=30)
    out: list[dict[str, Any]] = []

    def say(role: str, content: str) -> None:
        nonlocal t
        t += dt.timedelta(seconds=int(rng.integers(5, 120)))
        out.append(
            {"role": role, "content": content, "timestamp": t.replace(tzinfo=None).isoformat(timespec="seconds")}
        )

    say("system", "You are gptme, a general-purpose AI assistant powered by LLMs.")
    say("user", s.journal[2] if len(s.journal) > 2 else s.session_id)
    for step in _steps(s):
        say("assistant", f"{step}\n\n```shell\ngit status --short && git log --oneline -3\n```")
        log = f"{_hex(rng, 7)} wip\n{_hex(rng, 7)} base"
        say("system", f"Ran command: `git status --short && git log --oneline -3`\n{log}")
    say("assistant", "Running the test suite before claiming it works.\n\n```shell\npytest -q\n```")
    say("system", "Ran command: `pytest -q`\n" + _pytest_output(rng, s.reward < 0.45))
    say("assistant", s.journal[-2] if len(s.journal) > 1 else "Done.")
    return out


def _claude_code(s: DemoSession, rng: np.random.Generator) -> list[dict[str, Any]]:
    t = s.timestamp - dt.timedelta(minutes=30)
    out: list[dict[str, Any]] = []
    uid = 0

    def add(kind: str, content: Any) -> None:
        nonlocal t
        t += dt.timedelta(seconds=int(rng.integers(5, 120)))
        message = {"role": kind, "content": content}
        out.append({"type": kind, "timestamp": _iso(t), "sessionId": s.session_id, "message": message})

    def call(command: str, text: str | None = None) -> str:
        nonlocal uid
        uid += 1
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "tool_use", "id": f"toolu_{uid:02d}", "name": "Bash", "input": {"command": command}})
        add("assistant", blocks)
        return f"toolu_{uid:02d}"

    def result(tool: str, content: str, error: bool = False) -> None:
        add("user", [{"type": "tool_result", "tool_use_id": tool, "content": content, "is_error": error}])

    add("user", s.journal[2] if len(s.journal) > 2 else s.session_id)
    for step in _steps(s):
        result(call("git diff --stat", step), f" src/module.py | {int(rng.integers(2, 40))} ++--")
    failing = s.reward < 0.45
    result(call("pytest -q"), _pytest_output(rng, failing), failing)
    out.append({"type": "result", "timestamp": _iso(t), "result": s.journal[-2] if len(s.journal) > 1 else "Done."})
    return out


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_records(out: Path, sessions: list[DemoSession], seed: int) -> None:
    """Write the records file and the trajectories of the demo's sessions."""
    rng = np.random.default_rng(seed)
    folder = out / TRAJECTORIES
    folder.mkdir(parents=True, exist_ok=True)
    records = []
    for number, s in enumerate(sessions):
        trajectory = None
        if number % 3 == 0 or s.pending:
            if number % 2 == 0:
                path = TRAJECTORIES / f"{s.session_id}-demo" / "conversation.jsonl"
                (out / path).parent.mkdir(parents=True, exist_ok=True)
                (out / path).write_text(_jsonl(_gptme(s, rng)), encoding="utf-8")
            else:
                path = TRAJECTORIES / f"{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}.jsonl"
                (out / path).write_text(_jsonl(_claude_code(s, rng)), encoding="utf-8")
            trajectory = path.as_posix()
        records.append(_record(s, number, rng, trajectory))
    # a session gptme-sessions saw and lesson-credit never logged: `lint` reports it as not joined
    orphan = _record(sessions[-1], 1, rng, None)
    orphan.update({"session_id": _hex(rng, 8), "timestamp": _iso(sessions[-1].timestamp + dt.timedelta(days=2))})
    orphan.update({"start_time": None, "end_time": None, "outcome": "noop", "harness": "gptme"})
    records.append(orphan)
    (out / RECORDS).write_text(_jsonl(records), encoding="utf-8")
