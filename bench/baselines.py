"""The straightforward implementations the benchmarks compare against.

Written the way one would without thinking about speed: ``json.loads`` per line, a plain
per-record loop updating one small object per arm, ``kw in text`` per keyword. They
implement the same semantics as the engine (docs/format.md §3-5) for the data the benchmarks
generate, so their results are also checked against the engine's.

This module imports only the standard library: `status_main` is what the baseline
subprocess of the `status` case runs.
"""

from __future__ import annotations

import json
import re
import sys

TYPE_CHECKING = False  # `typing` is not imported at run time: the baseline's start-up stays what it was
if TYPE_CHECKING:
    from typing import Any


class Arm:
    """One lesson's posterior, updated in place."""

    __slots__ = ("alpha", "beta", "n")

    def __init__(self, alpha: float = 1.0, beta: float = 1.0) -> None:
        self.alpha = alpha
        self.beta = beta
        self.n = 0


AUTOMATIC = {"judge": 1, "heuristic": 2, "outcome": 3}  # a person's grade (any other grader) ranks 0


def read_log(path: str) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """First pass: every session record, and the grade in force of each graded session: the latest
    grade of the highest-ranking reward source (the default reward priority of docs/records.md:
    a person, then the judge; the benchmarks' grades are by `manual` or `judge`, and outrank the
    records' own heuristic rewards)."""
    records = []
    latest: dict[str, dict[int, float]] = {}
    with open(path, "rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = json.loads(line)
            if record.get("type") == "grade":
                rank = AUTOMATIC.get(record.get("grader"), 0)
                latest.setdefault(record["session_id"], {})[rank] = record["base_reward"]
            elif record.get("type", "session") == "session":
                records.append(record)
    grades = {session_id: by_rank[min(by_rank)] for session_id, by_rank in latest.items()}
    return records, grades


def fold_records(
    records: list[dict[str, Any]], grades: dict[str, float], strategy: str = "seed", floor: float = 0.3
) -> dict[str, Arm]:
    """Second pass: one update per (session, lesson), in file order."""
    arms: dict[str, Arm] = {}
    for record in records:
        session_id = record["session_id"]
        base = grades[session_id] if session_id in grades else record.get("base_reward")
        if base is None:
            continue  # pending
        for entry in record["lessons"]:
            path = entry["path"]
            arm = arms.get(path)
            if arm is None:
                arm = arms[path] = Arm()
            w = floor + (1.0 - floor) * entry["salience"]
            if strategy == "seed":
                reward = base * w
                arm.alpha += reward
                arm.beta += 1.0 - reward
            elif strategy == "evidence":
                arm.alpha += w * base
                arm.beta += w * (1.0 - base)
            else:
                arm.alpha += base
                arm.beta += 1.0 - base
            arm.n += 1
    return arms


def fold_file(path: str, strategy: str = "seed", floor: float = 0.3) -> dict[str, Arm]:
    records, grades = read_log(path)
    return fold_records(records, grades, strategy, floor)


def status_main(path: str) -> None:
    """What a hand-written `status` would do: fold the log, print a table sorted by mean."""
    records, grades = read_log(path)
    arms = fold_records(records, grades)
    rows = sorted(arms.items(), key=lambda item: (-item[1].alpha / (item[1].alpha + item[1].beta), item[0]))
    graded = sum(1 for r in records if grades.get(r["session_id"], r.get("base_reward")) is not None)
    out = [f"{len(records)} sessions ({graded} graded)"]
    out.append(f"{'lesson':<32} {'n':>6} {'alpha':>9} {'beta':>9} {'mean':>6}")
    for path, arm in rows:
        mean = arm.alpha / (arm.alpha + arm.beta)
        out.append(f"{path:<32} {arm.n:>6} {arm.alpha:>9.2f} {arm.beta:>9.2f} {mean:>6.3f}")
    sys.stdout.write("\n".join(out) + "\n")


def sessions_main(path: str, since: str, lesson: str) -> None:
    """What a hand-written `sessions --since T --pending --lesson L --json` would do."""
    records, grades = read_log(path)
    found = [
        r["session_id"]
        for r in records
        if grades.get(r["session_id"], r.get("base_reward")) is None
        and (r.get("timestamp") or "") >= since
        and any(entry["path"] == lesson for entry in r["lessons"])
    ]
    sys.stdout.write(json.dumps({"sessions": [{"session_id": sid} for sid in found]}) + "\n")


def salience_loop(text: str, lessons: list[tuple[str, list[str]]]) -> list[float]:
    """Per lesson, per keyword: ``kw in text`` on the lowered text (wildcards via re.search)."""
    lowered = text.lower()
    result = []
    for _lesson_id, keywords in lessons:
        seen = set()
        hits = 0
        for raw in keywords:
            keyword = raw.strip()
            if not keyword.strip("*").strip():
                continue
            key = keyword.lower()
            if key in seen:
                continue
            seen.add(key)
            if "*" in keyword:
                pattern = r"\w*".join(re.escape(part) for part in keyword.split("*"))
                if re.search(pattern, text, re.IGNORECASE):
                    hits += 1
            elif key in lowered:
                hits += 1
        result.append(hits / len(seen) if seen else 0.5)
    return result


# ------------------------------------------------------------------ gptme-sessions' bandit commands
# What `python3 -m gptme_sessions.thompson_sampling update --outcome R --arms A ...` and `... status`
# (gptme-contrib, packages/gptme-sessions) do to a `bandit-state.json`, written here from a reading of
# that module, not copied: the state file is read with json.loads into one small object per arm; an
# update adds the reward to alpha and 1 - reward to beta of each arm named, counts the selection, stamps
# the arm and the state, and writes the whole file again (json.dumps, indent 2); status ranks the arms by
# mean and prints one line per arm. The module's imports (json, random, dataclasses, datetime, pathlib
# and click, its command line) are imported as it imports them; the gptme_sessions package's own
# __init__ (which `python -m` also runs, importing the package's trajectory readers) is not: the
# baseline is, if anything, faster than the peer.


def _gptme_imports() -> Any:
    import dataclasses
    import datetime
    import pathlib
    import random

    import click

    return dataclasses, datetime, pathlib, random, click


class GptmeArm:
    """One arm as gptme's bandit keeps it (its fields as in the state file)."""

    __slots__ = ("alpha", "arm_id", "beta", "last_updated", "total_rewards", "total_selections")

    def __init__(
        self,
        arm_id: str,
        alpha: float = 1.0,
        beta: float = 1.0,
        total_selections: int = 0,
        total_rewards: int = 0,
        last_updated: str = "",
    ) -> None:
        self.arm_id = arm_id
        self.alpha = alpha
        self.beta = beta
        self.total_selections = total_selections
        self.total_rewards = total_rewards
        self.last_updated = last_updated

    def as_dict(self) -> dict[str, Any]:
        return {
            "arm_id": self.arm_id,
            "alpha": self.alpha,
            "beta": self.beta,
            "total_selections": self.total_selections,
            "total_rewards": self.total_rewards,
            "last_updated": self.last_updated,
        }


def gptme_load(path: str) -> tuple[dict[str, Any], dict[str, GptmeArm]]:
    """The state file: its other keys, and an object per arm (a missing file: no arms)."""
    import os

    if not os.path.exists(path):
        return {"total_sessions": 0, "created": "", "last_updated": ""}, {}
    with open(path, encoding="utf-8") as handle:
        data = json.loads(handle.read())
    arms = {}
    for arm_id, fields in data.get("arms", {}).items():
        fields = dict(fields)
        if "lesson_path" in fields and "arm_id" not in fields:
            fields["arm_id"] = fields.pop("lesson_path")
        known = {
            k: fields[k] for k in ("alpha", "beta", "total_selections", "total_rewards", "last_updated") if k in fields
        }
        arms[arm_id] = GptmeArm(fields.get("arm_id", arm_id), **known)
    return data, arms


def gptme_update_main(path: str, reward: str, *arm_ids: str) -> None:
    """gptme-sessions' `update --outcome REWARD --arms ...`: read, update each arm, write the whole file."""
    _, datetime, _, _, _ = _gptme_imports()
    value = float(reward)
    if not 0.0 <= value <= 1.0:
        raise SystemExit("Error: float outcome must be in [0, 1]")
    data, arms = gptme_load(path)
    now = datetime.datetime.now(datetime.timezone.utc).isoformat()
    for arm_id in arm_ids:
        arm = arms.get(arm_id) or arms.setdefault(arm_id, GptmeArm(arm_id))
        arm.alpha += value
        arm.beta += 1.0 - value
        arm.total_selections += 1
        arm.total_rewards += value > 0.5
        arm.last_updated = now
    out = {
        "arms": {arm_id: arm.as_dict() for arm_id, arm in arms.items()},
        "total_sessions": data.get("total_sessions", 0) + 1,
        "created": data.get("created", ""),
        "last_updated": now,
    }
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(out, indent=2) + "\n")
    lines = [f"  [{'+' if value > 0.5 else '-'}] {arm_id}" for arm_id in arm_ids]
    sys.stdout.write("\n".join(lines) + f"\n\nUpdated {len(arm_ids)} arms (outcome: {reward})\n")


def gptme_status_main(path: str) -> None:
    """gptme-sessions' `status`: read the state file, rank the arms by mean, print a line per arm."""
    _gptme_imports()
    data, arms = gptme_load(path)
    lines = [
        "# Bandit Status",
        f"Total arms: {len(arms)}",
        f"Total sessions: {data.get('total_sessions', 0)}",
        f"State file: {path}",
        f"Created: {data.get('created', '')}",
        f"Last updated: {data.get('last_updated') or 'never'}",
        "",
        "## Arms by Expected Value",
        f"{'Arm':<40} {'E[p]':>6} {'α':>6} {'β':>6} {'N':>5} {'UCB':>6}",
        "-" * 72,
    ]
    means = sorted(((a.alpha / (a.alpha + a.beta), arm_id) for arm_id, a in arms.items()), key=lambda x: -x[0])
    for mean, arm_id in means:
        a = arms[arm_id]
        ucb = mean + ((a.alpha * a.beta) / ((a.alpha + a.beta) ** 2 * (a.alpha + a.beta + 1))) ** 0.5
        lines.append(
            f"{arm_id[:38]:<40} {mean:>5.3f} {a.alpha:>6.1f} {a.beta:>6.1f} {a.total_selections:>5} {ucb:>5.3f}"
        )
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    status_main(sys.argv[1])
