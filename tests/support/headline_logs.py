"""Workspaces for the one-headline tests (tests/core/test_headline.py, the `loo` table, the Analysis
screen): an agent's 60 sessions where a 2-kept-vs-2-withheld dropout trial flatters a lesson with no
effect, a log where no lesson does anything, one where every session injects as many lessons, one where every
session draws 3 of 6 beside a lesson of its own (randomized, or outside the draw); and how the `loo` table is read
back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tests.support.dropout_logs import gptme_line, write_logs
from tests.support.engine_helpers import make_workspace, session

X, Y, Z, W = "tools/x.md", "tools/y.md", "tools/z.md", "workflow/w.md"
NOTHING = "No lesson's effect is distinguishable from zero"  # the line above the list
LESSONS = {X: (["ex"], "active"), Y: (["why"], "active"), Z: (["zed"], "active"), W: (["dub"], "active")}


def agent_events(seed: int = 1, n: int = 60) -> list[dict[str, object]]:
    """n sessions: W helps (+0.3, in half of them), X (a third of them) and Y do nothing."""
    rng = np.random.default_rng(seed)
    events = []
    for i in range(n):
        lessons = {W: 0.5} if i % 2 else {}
        if i % 3 == 0:
            lessons[X] = 0.5
        if not lessons:
            lessons[Y] = 0.5
        reward = 0.45 + 0.3 * (W in lessons) + float(rng.normal(0, 0.05))
        events.append(session(f"s{i}", round(reward, 2), lessons))
    return events


def two_by_two_workspace(tmp_path: Path) -> Path:
    """X's dropout trial: kept in 2 good sessions (with W), withheld in 2 poor ones (without): +0.2 or
    more from 2 against 2, for a lesson with no effect."""
    root = make_workspace(tmp_path, lessons=LESSONS, events=agent_events(), name="agent")
    write_logs(
        root,
        {
            "s3": [gptme_line("s3", [X], [])],
            "s9": [gptme_line("s9", [X], [])],
            "s4": [gptme_line("s4", [], [X])],
            "s8": [gptme_line("s8", [], [X])],
        },
    )
    return root


def noise_workspace(tmp_path: Path, n: int = 80) -> Path:
    """n sessions whose rewards owe nothing to their lessons."""
    rng = np.random.default_rng(5)
    events = []
    for i in range(n):
        lessons = {path: 0.5 for j, path in enumerate((X, Y, Z, W)) if (i >> j) & 1} or {X: 0.5}
        events.append(session(f"s{i}", round(float(rng.uniform(0.3, 0.8)), 2), lessons))
    return make_workspace(tmp_path, lessons=LESSONS, events=events, name="noise")


def fixed_k_workspace(tmp_path: Path, fixed: bool = True) -> Path:
    """120 sessions of 6 lessons, each session 2 of them (`fixed`) or 1-4; rewards owe nothing to the lessons."""
    lessons = {f"tools/l{j}.md": ([f"kw{j}"], "active") for j in range(6)}
    names = sorted(lessons)
    rng = np.random.default_rng(3)
    events = []
    for i in range(120):
        chosen = rng.choice(6, 2 if fixed else int(rng.integers(1, 5)), replace=False)
        reward = 0.4 + 0.1 * float(rng.random())
        events.append(session(f"s{i}", round(reward, 2), {names[int(j)]: 0.5 for j in chosen}))
    return make_workspace(tmp_path, lessons=lessons, events=events, name="fixed" if fixed else "varied")


def draw_workspace(tmp_path: Path, extra: bool = False) -> Path:
    """240 sessions drawing 3 of 6; x.md matched in half of them mid-session, its coin at epsilon 0.5 (+0.1 kept),
    or (`extra`) n.md injected in 30% of them instead (+0.1)."""
    lessons = {f"tools/l{j}.md": ([f"kw{j}"], "active") for j in range(6)}
    lessons |= {"auto/x.md": (["xx"], "active"), "new/n.md": (["nn"], "active")}
    names = sorted(name for name in lessons if name.startswith("tools/"))
    rng = np.random.default_rng(4)
    events, logs = [], {}
    for i in range(240):
        sid = f"s{i:04d}"
        ev = session(sid, None, {names[int(j)]: 0.5 for j in rng.choice(6, 3, replace=False)})
        reward = 0.55 + float(rng.normal(0, 0.05))
        if extra and rng.random() < 0.3:
            ev["lessons"].append({"path": "new/n.md", "salience": 0.5})
            reward += 0.1
        elif not extra and rng.random() < 0.5:
            kept = rng.random() < 0.5
            logs[sid] = [gptme_line(sid, ["auto/x.md"] if kept else [], [] if kept else ["auto/x.md"], eps=0.5)]
            if kept:
                ev["lessons"].append({"path": "auto/x.md", "salience": 0.5, "included": "during"})
                reward += 0.1
        ev["base_reward"] = round(reward, 3)
        events.append(ev)
    root = make_workspace(tmp_path, lessons=lessons, events=events, name="extra" if extra else "randomized")
    write_logs(root, logs)
    return root


def parse_table(out: str) -> tuple[list[str], list[dict[str, str]]]:
    """The lines above the table, and its rows as {header: cell}, cut at the dash line's columns."""
    lines = out.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---"))
    spans, start = [], 0
    for part in lines[rule].split("  "):
        if part:
            spans.append((start, start + len(part)))
        start += len(part) + 2
    header = [lines[rule - 1][a:b].strip() for a, b in spans]
    rows = []
    for line in lines[rule + 1 :]:
        if not line.strip():
            break
        cells = [line[a:b].strip() for a, b in spans[:-1]] + [line[spans[-1][0] :].strip()]
        rows.append(dict(zip(header, cells, strict=True)))
    return lines[: rule - 1], rows


def shown(effect: dict[str, Any]) -> str:
    """How the table writes a headline: signed to 3 places, in parentheses when it claims no interval."""
    text = f"{effect['estimate']:+.3f}"
    return text if effect["ci_low"] is not None else f"({text})"


def documented_order(results: list[dict[str, Any]]) -> list[str]:
    """The documented order: headlines with an interval first, largest first; then lessons with a
    leave-one-out lift; then the rest; ties by id."""
    claimed = [r for r in results if r["effect"] is not None and r["effect"]["ci_low"] is not None]
    compared = [r for r in results if r not in claimed and r["sufficient"]]
    rest = [r for r in results if r not in claimed and r not in compared]
    ordered = sorted(claimed, key=lambda r: (-r["effect"]["estimate"], r["lesson"]))
    ordered += sorted(compared, key=lambda r: r["lesson"]) + sorted(rest, key=lambda r: r["lesson"])
    return [r["lesson"] for r in ordered]
