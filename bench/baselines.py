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


if __name__ == "__main__":
    status_main(sys.argv[1])
